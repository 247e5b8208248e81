"""The hints of ex01_tracing: `PROGRESSIVE`, three per graded function from a nudge to nearly the answer (`fxcourse
hint` shows the next one, in the format autograder/coursedata/hints.py describes), and `HINTS`, what its checks say
when an answer fails, by id (a template's {fields} are filled by the judge that names it)."""
from __future__ import annotations

__all__ = ["PROGRESSIVE", "HINTS"]

PROGRESSIVE: dict[str, list[str]] = {
    'node_summary': [
        'A GraphModule keeps its graph in `gm.graph`, and `gm.graph.nodes` yields every node in graph order, '
        'placeholder and output included.',
        "Each node carries two strings you need: `node.op` (for example 'call_module') and `node.name` (for example "
        "'fc1').",
        'Build one tuple per node, op first: a list comprehension over `gm.graph.nodes` that makes `(node.op, '
        'node.name)`.',
    ],
    'count_nodes': [
        'Start from the same node list: `gm.graph.nodes`. Counting every node is one call of `len(...)`.',
        '`op=None` means every node; with `op` given, count only the nodes whose `node.op == op`.',
        'One expression covers both cases: `sum(1 for node in gm.graph.nodes if <condition>)`, where the condition '
        'is always true when `op is None`.',
    ],
    'outputs_match': [
        'Run both modules on the same `*inputs` inside `with torch.no_grad():` and keep the two outputs.',
        'Outputs of different shapes never match, even when they broadcast: compare `a.shape == b.shape` first. '
        'With `atol == 0` the outputs must be exactly equal.',
        'Exact: `torch.equal(a, b)`. Within a tolerance: `torch.allclose(a, b, rtol=0, atol=atol)`. Both return a '
        'Python bool.',
    ],
}

HINTS: dict[str, str] = {
    'ex01.return_len_sum_int':
        'return len(...) or a sum, an int',
    'ex01.torch_equal_returns_bool_tensor':
        'torch.equal returns a bool; for a tensor of booleans use .all().item()',
    'ex01.node_op_node_name_are':
        'node.op and node.name are strings; build (node.op, node.name) for each node',
    'ex01.node_nobody_uses_node_too':
        'a node nobody uses is a node too: list {unused} (dead nodes are nodes of gm.graph like any other)',
    'ex01.second_item_node_name_not':
        'the second item is node.name, not node.target (a target is a module path or a function)',
    'ex01.placeholder_output_nodes_count_too':
        'placeholder and output nodes count too',
    'ex01.every_node_counts_nodes_too':
        'every node counts, {ops} nodes too',
    'ex01.return_node_op_node_name':
        'return (node.op, node.name) with parentheses',
    'ex01.ran_autograd_run_both_modules':
        '{which} ran with autograd on: run both modules inside `with torch.no_grad():`',
    'ex01.outputs_different_shapes_do_not':
        'outputs of different shapes do not match, even when they broadcast: compare shapes first, also when atol > '
        '0 (torch.allclose broadcasts)',
    'ex01.outputs_different_shapes_do_not_2':
        'outputs of different shapes do not match, even when they broadcast: compare shapes too',
    'ex01.atol_defaults_0_0_but':
        "atol defaults to 0.0, but with no atol given your answer compared with atol={atol!r}: keep the signature's "
        'default, atol=0.0',
    'ex01.atol_0_outputs_must_exactly':
        'with atol == 0 the outputs must be exactly equal: use torch.equal (allclose has tolerances of its own)',
    'ex01.tolerance_atol_alone_torch_allclose':
        'the tolerance is atol alone: torch.allclose(a, b, rtol=0, atol=atol) (its default rtol=1e-5 adds 1e-5 * '
        '|b|, which is 0.1 for outputs near 1e4)',
    'ex01.atol_tolerance_compare_torch_allclose':
        'atol={atol!r} is a tolerance: compare with torch.allclose(a, b, rtol=0, atol=atol), not torch.equal',
    'ex01.put_node_op_first_then':
        'put node.op first, then node.name',
    'ex01.walk_gm_graph_nodes_already':
        'walk gm.graph.nodes: it is already in graph order',
    'ex01.count_nodes_gm_graph_not':
        'count the nodes of gm.graph, not the modules of gm (your answer called gm.{method}())',
    'ex01.placeholder_output_are_nodes_too':
        'placeholder and output are nodes too',
    'ex01.op_none_means_count_every':
        'op=None means: count every node',
    'ex01.node_s_name_not_opcode':
        "a node's name is not its opcode: the node named {op!r} is a {next} node; count only nodes whose node.op "
        'equals op',
    'ex01.only_op_none_means_every':
        'only op=None means every node: test `op is None`, not `not op` (an empty string is an op no node has)',
    'ex01.when_op_given_count_only':
        'when op is given, count only nodes whose node.op equals it',
    'ex01.name_is_not_target':
        "the second item is node.name: the {op} node here is named {node!r}, and {target!r} is its target",
    'ex01.names_are_the_graphs_own':
        "list the names gm.graph has: its node {node!r} is named by the pass that made it, and {got!r} is the name "
        'a new trace gives it; read gm.graph.nodes as they are, without tracing gm again',
    'ex01.op_equals_not_contains':
        'count the nodes whose node.op equals op: no opcode is {op!r}, so it counts 0 (an opcode that contains it '
        'is another op)',
    'ex01.op_compared_as_it_is':
        'compare op with node.op as it is: no opcode is {op!r} (opcodes are lower case, without spaces), so it '
        'counts 0',
    'ex01.within_atol_includes_atol':
        'a difference of exactly atol={atol!r} is within atol: test |a - b| <= atol (what torch.allclose(a, b, '
        'rtol=0, atol=atol) does), not <',
    'ex01.every_element_within_atol':
        'every element must be within atol={atol!r}: a mean (or a sum) of the differences hides one far off; '
        'compare with torch.allclose(a, b, rtol=0, atol=atol)',
    'ex01.atol_0_no_tolerance_at_all':
        'atol == 0 means no tolerance at all, and your answer compared with atol={atol!r}: with atol == 0 use '
        'torch.equal',
    'ex01.inf_minus_inf_is_nan':
        'these outputs are exactly equal, -inf included, but -inf - (-inf) is nan, so their difference is never '
        '<= atol: with atol == 0 compare with torch.equal(a, b)',
    'ex01.nan_matches_nothing':
        'nan matches nothing, not even nan: leave equal_nan at its default (False), as torch.equal and '
        'torch.allclose do',
    'ex01.read_graph_not_code':
        'walk gm.graph.nodes, not gm.code: a graph edited since its last recompile() has nodes its code does not '
        'show yet',
    'ex01.run_both_in_their_mode':
        'run model and gm in the mode they come in, without .eval() (even one put back afterwards) and without '
        'torch.manual_seed: in training mode a Dropout drops other values at each run, and so they differ',
    'ex01.compare_outputs_as_they_are':
        'compare the outputs as they are: these are complex, and a cast to a real dtype (.double(), .float()) '
        'drops their imaginary parts, which differ',
}
