"""The hints of ex03_replacing: `PROGRESSIVE`, three per graded function from a nudge to nearly the answer (`fxcourse
hint` shows the next one, in the format autograder/coursedata/hints.py describes), and `HINTS`, what its checks say
when an answer fails, by id (a template's {fields} are filled by the judge that names it)."""
from __future__ import annotations

__all__ = ["PROGRESSIVE", "HINTS"]

PROGRESSIVE: dict[str, list[str]] = {
    'swap_function': [
        'Loop over `gm.graph.nodes` and look at `node.op` and `node.target`. You want the `call_function` nodes '
        'whose target is the very object `old`.',
        "Compare with `is`, never by `__name__`: `torch.relu` and `F.relu` are both named 'relu'. Method calls such "
        'as `.sigmoid()` are `call_method` nodes and stay. Args and kwargs stay as they are. If no node targets '
        '`old`, nothing changes.',
        'Set `node.target = new` on every match, not only the first, and never wrap it in a lambda. Then call '
        '`gm.graph.lint()` and `gm.recompile()` (the grader reads `gm.code`) and return `gm`.',
    ],
    'relu_to_clamp': [
        'Use the same loop as in `swap_function`, but changing the target is not enough. `torch.clamp` needs its '
        "bounds, so you also rewrite the node's `args` and `kwargs`.",
        'Match only `call_function` nodes whose target `is torch.relu`. `F.relu`, `torch.relu_`, `nn.ReLU` modules '
        "and `.relu()` stay as they are. The input is `node.args[0]`, or `node.kwargs['input']` when it was passed "
        "by keyword. Change the relu node itself; don't add a clamp after it.",
        "For each match, set `node.target = torch.clamp`, `node.args = (x,)` and `node.kwargs = {'min': 0, 'max': "
        "max_value}`. Don't use `F.hardtanh` or a hard-coded 6. Then lint, recompile and return `gm`. An int "
        '`max_value` works as it is.',
    ],
    'relu_to_gelu': [
        'A ReLU can appear under three opcodes: `call_function`, `call_module` and `call_method`. Write a small '
        '`is_relu(node)` test that covers all three, then replace every match with a new `F.gelu` node.',
        "Functions: `torch.relu`, `torch.relu_` and `F.relu`, compared by identity. Methods: the targets 'relu' and "
        "'relu_'. Modules: `isinstance(gm.get_submodule(node.target), nn.ReLU)`, which also finds nested, in-place "
        'and twice-called ReLUs. Never edit the `nn.ReLU` modules: the original model shares them.',
        'Loop over `list(graph.nodes)`. For each ReLU, create `graph.call_function(F.gelu, (x,))` inside '
        '`graph.inserting_after(node)`, with no kwargs (no `inplace`; the default is exact GELU). Then '
        '`replace_all_uses_with` and `erase_node`, and finish with `delete_all_unused_submodules()`, lint and '
        'recompile.',
    ],
    'linear_to_matmul': [
        'Each `nn.Linear` call becomes several nodes: `get_attr` nodes for its parameters and '
        '`call_function`/`call_method` nodes for the math. Create them inside `graph.inserting_before(node)`.',
        "The get_attr targets are `node.target` plus '.weight' or '.bias' (e.g. 'layers.0.weight'), so they read "
        "the same `nn.Parameter` objects. Don't clone them, wrap them in new Parameters, transpose them in place or "
        'delete the Linear. If `bias=False`, there is no add.',
        "For each Linear node: get_attr the weight, transpose it with a `call_method` 't' node, `torch.matmul` the "
        'input with it (not `torch.mm`, which is 2-d only), then `torch.add` the get_attr bias if there is one. '
        'Rewire the uses, erase the node, lint and recompile. A Linear called twice has two nodes to replace.',
    ],
}

HINTS: dict[str, str] = {
    'ex03.keep_dead_nodes':
        'no eliminate_dead_code() and no skipping of nodes nobody reads: a dead node is a node of the graph like any '
        'other, and an in-place call whose result is unused (h.add_(1.0)) still changes what it was called on',
    'ex03.this_nn_linear_has_no':
        'this nn.Linear has no bias (bias=None): leave the add out for it',
    'ex03.node_s_target_does_not':
        "a node's target does not accept the kwargs the node carries (the error names the argument): give each node "
        'you changed the arguments its new target takes',
    'ex03.nn_linear_computes_x_w':
        'nn.Linear computes x @ W.T + b, with W of shape (out_features, in_features): transpose W',
    'ex03.torch_mm_only_multiplies_2':
        'torch.mm only multiplies 2-d matrices: use torch.matmul (or @), which handles leading dimensions',
    'ex03.node_names_submodule_attribute_no':
        'a node names a submodule or attribute that no longer exists on gm: keep every submodule that a call_module '
        'or get_attr node still uses (gm.delete_all_unused_submodules() removes only the others)',
    'ex03.call_module_node_s_target':
        "a call_module node's target must be the string name of a submodule registered on the GraphModule "
        '(gm.add_submodule(name, module)); to call a function, use a call_function node',
    'ex03.f_gelu_takes_no_inplace':
        "F.gelu takes no `inplace` argument: give the new node only the ReLU's input, not the old node's kwargs",
    'ex03.end_pass_return_gm_returned':
        'end the pass with `return gm`: it returned None',
    'ex03.return_gm_graphmodule_not_graph':
        'return gm, the GraphModule, not its graph',
    'ex03.return_gm_graphmodule_you_changed':
        'return gm, the GraphModule you changed, not a {name}',
    'ex03.nn_relu_call_module_node':
        'ReLU comes in three forms; nn.ReLU is a call_module node: find it with '
        'isinstance(gm.get_submodule(node.target), nn.ReLU)',
    'ex03.x_relu_call_method_node':
        "ReLU comes in three forms; x.relu() is a call_method node whose target is the string 'relu' (x.relu_() is "
        "'relu_')",
    'ex03.x_relu_call_method_node_2':
        "ReLU comes in three forms; x.relu_() is a call_method node whose target is the string 'relu_'",
    'ex03.torch_relu_place_relu_also':
        'ReLU comes in three forms; torch.relu_ (the in-place relu, also F.relu_) is a function of its own: match '
        'it too',
    'ex03.torch_relu_f_relu_are':
        'ReLU comes in three forms; torch.relu and F.relu are different functions: match both (F.relu may carry '
        'inplace=True in its kwargs)',
    'ex03.torch_relu_f_relu_are_2':
        'ReLU comes in three forms; torch.relu and F.relu are different functions: match both',
    'ex03.original_model_changed_gm_shares':
        'the original model changed: gm shares its submodules and parameters with the model it was traced from, so '
        'read them but do not modify them in place',
    'ex03.node_has_other_args_kwargs':
        "node '{node}' has other args or kwargs than before: swap_function changes targets only, each node keeps "
        'its args and kwargs',
    'ex03.node_clamps_min_max_0':
        "node '{name}' clamps with min={max_value!r} and max=0, the bounds swapped: {want}",
    'ex03.node_has_min_negative_values':
        "node '{name}' has min={bound!r}: negative values must become 0, so torch.clamp needs min=0 as well as "
        'max=max_value',
    'ex03.node_clamps_max':
        "node '{name}' clamps with max={bound!r}: {want}",
    'ex03.replace_relu_node_itself_clamp':
        'replace the relu node itself: a clamp after the relu still leaves torch.relu in the graph',
    'ex03.set_node_target_torch_clamp':
        'set node.target = torch.clamp on every torch.relu node, with min=0 and max=max_value, not only the first',
    'ex03.set_node_target_torch_clamp_2':
        'set node.target = torch.clamp on every torch.relu node, with min=0 and max=max_value',
    'ex03.node_was_replaced_but_computes':
        "node '{name}' ({target}) was replaced, but it computes no ReLU: only ReLU changes; match ReLU exactly (its "
        "functions by identity, isinstance(module, nn.ReLU)), not every name that contains 'relu'",
    'ex03.each_relu_must_become_exact':
        'each ReLU must become exact GELU of the same input; every other node stays as it is',
    'ex03.matmul_node_multiplies_weight_nn':
        "matmul node '{node}' multiplies by the weight as it is: nn.Linear computes x @ W.T + b, with W of shape "
        '(out_features, in_features)',
    'ex03.parameters_must_stay_shared_original':
        'parameters must stay shared with the original model: read the original nn.Parameter with a get_attr node '
        "(for example 'fc1.weight'); do not clone it or wrap its data in a new nn.Parameter",
    'ex03.node_has_none_input_take':
        "node '{node}' has None as its input: take the old node's input from node.args[0], or from "
        "node.kwargs['input'] when it was passed by keyword",
    'ex03.your_new_node_has_no':
        "your new node '{name}' has no users: call old_node.replace_all_uses_with(new_node), then "
        'graph.erase_node(old_node)',
    'ex03.compare_targets_identity_node_target':
        'compare targets by identity (node.target is old): different functions can share a __name__, such as '
        'torch.relu and F.relu',
    'ex03.only_call_function_nodes_change':
        'only call_function nodes change: a {op} node named like `old` ({short!r}) does not call the function `old`',
    'ex03.only_call_function_nodes_whose':
        'only call_function nodes whose target is `old` change; leave every other node as it is',
    'ex03.replace_every_node_targets_old':
        'replace every node that targets `old`, not only the first one',
    'ex03.replace_every_node_targets_old_2':
        'replace every node that targets `old`: {left} of them still do',
    'ex03.set_node_target_new_every':
        'set node.target = new on every call_function node whose target is old',
    'ex03.retarget_nodes_place_node_target':
        'retarget nodes in place (node.target = new); if you insert new nodes, erase the old ones',
    'ex03.retarget_nodes_place_node_target_2':
        'retarget nodes in place (node.target = new): no node is removed',
    'ex03.only_torch_relu_changes_test':
        'only torch.relu changes: test node.target is torch.relu (F.relu, torch.relu_, nn.ReLU, .relu() and '
        "functions that are only named relu are other ops and stay as they are)",
    'ex03.use_torch_clamp_itself_not':
        'use torch.clamp itself, not {target}, as the target of a call_function node',
    'ex03.exact_gelu_means_approximate_none':
        "exact GELU means approximate='none', the default of F.gelu and nn.GELU",
    'ex03.replace_each_relu_node_node':
        'replace each ReLU node by a node computing exact GELU: F.gelu or an nn.GELU() submodule',
    'ex03.each_former_linear_call_becomes':
        'each former Linear call becomes a matmul of its input with W.T (torch.matmul or @)',
    'ex03.give_node_target_real_function':
        'give node.target a real function such as torch.clamp and put its extra arguments in node.args/node.kwargs; '
        'a lambda hides what the node computes: gm.code calls it under a generated name',
    'ex03.tensors_have_no_gelu_method':
        'tensors have no .gelu() method: make the node a call_function of F.gelu',
    'ex03.getattr_gm_layers_0_does':
        "getattr(gm, 'layers.0') does not follow dotted names: use gm.get_submodule(node.target) and "
        "graph.get_attr(f'{node.target}.weight')",
    'ex03.linear_can_called_from_more':
        'a Linear can be called from more than one node: replace every call_module node, not one per module',
    'ex03.replace_every_call_module_node':
        'replace every call_module node whose module is an nn.Linear',
    'ex03.build_x_w_t_b':
        'build x @ W.T + b from a matmul and an add; F.linear and torch.addmm are what this exercise takes apart',
    'ex03.nn_linear_computes_x_w_2':
        'nn.Linear computes x @ W.T + b: read its {pname} with a get_attr node '
        "(graph.get_attr(f'{{node.target}}.{pname}')) and add it to the product",
    'ex03.nn_linear_computes_x_w_3':
        'nn.Linear computes x @ W.T + b: read its {pname} with a get_attr node '
        "(graph.get_attr(f'{{node.target}}.{pname}'))",
    'ex03.change_gm_itself_recompile_it':
        'change gm itself and end with gm.graph.lint(), gm.recompile() and return gm: fx.GraphModule(gm, gm.graph) '
        "builds a second module on gm's graph and leaves gm with code its graph no longer matches",
    'ex03.subclass_nn_linear_is_nn':
        "'{target}' is a {cls}, a subclass of nn.Linear, so it is an nn.Linear too: find the layers with "
        'isinstance(module, nn.Linear), not type(module) is nn.Linear',
    'ex03.einsum_is_no_matmul_here':
        'build x @ W.T + b from torch.matmul (or @), a transpose of the weight (w.t() or w.T) and an add; '
        'torch.einsum is not the matmul this exercise asks for',
    'ex03.node_whose_result_nobody_reads':
        "node '{name}' ({target}) is gone: nobody reads its result, but it works in place, so it changed its input; "
        'eliminate_dead_code() deletes such calls: erase only the nodes you replaced (replace_all_uses_with, then '
        'erase_node)',
    'ex03.relu_three_forms_match_every':
        'ReLU comes in three forms; match every function, method and module that computes a ReLU',
}
