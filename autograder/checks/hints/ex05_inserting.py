"""The hints of ex05_inserting: `PROGRESSIVE`, three per graded function from a nudge to nearly the answer (`fxcourse
hint` shows the next one, in the format autograder/coursedata/hints.py describes), and `HINTS`, what its checks say
when an answer fails, by id (a template's {fields} are filled by the judge that names it)."""
from __future__ import annotations

__all__ = ["PROGRESSIVE", "HINTS"]

PROGRESSIVE: dict[str, list[str]] = {
    'insert_after': [
        'Find the node by `node.name`. Then create the new node with `gm.graph.call_function(fn, (node,))` inside '
        '`with gm.graph.inserting_after(node):`, so it lands right after `node`.',
        '`node.replace_all_uses_with(new)` rewires every user: the output node, a user that reads it twice, uses '
        'inside lists. But by then the new node is itself a user of `node`; print `new.args` after the call to see '
        'what happened to it. An unknown name raises `KeyError` with that name, not StopIteration.',
        'Pass a `delete_user_cb` that leaves out `new` itself, so the new node keeps reading `node`. Then call '
        '`gm.graph.lint()` and `gm.recompile()` and return `gm`. Look the node up with `next(..., None)` and raise '
        '`KeyError(node_name)` when nothing is found.',
    ],
    'remove_dropout': [
        'For each dropout node, make its users read the tensor it receives, then remove it with '
        '`replace_all_uses_with` and `gm.graph.erase_node`. Loop over `list(gm.graph.nodes)`, since you erase while '
        'looping.',
        'Find modules by type with `isinstance(gm.get_submodule(node.target), DROPOUT_MODULES)`: Dropout2d and '
        "AlphaDropout don't subclass nn.Dropout. Find functions with `node.target in DROPOUT_FUNCTIONS`, never by "
        "name. The input is `node.args[0]`, or `node.kwargs['input']` when it was passed by keyword.",
        'After the loop, call `gm.delete_all_unused_submodules()`; a module called from two sites goes only when '
        "both calls are gone. Then lint, recompile and return `gm`. Don't swap in `nn.Identity` or only call "
        '`eval()`: the nodes themselves must be gone.',
    ],
    'record_shapes': [
        "You need every node's real value while `gm` runs. Subclass `fx.Interpreter` and override `run_node`, or "
        'run `ShapeProp(gm).propagate(*inputs)` and read `node.meta`.',
        'Keep a node only when `isinstance(value, torch.Tensor)`. Placeholders and `get_attr` parameters are kept. '
        'The int of `x.size(0)`, a `torch.Size` and the tuple from `chunk` are not, and neither is the `output` '
        'node (with ShapeProp it has a tensor_meta too). Key by `node.name`.',
        'In `run_node(self, n)`, get `value = super().run_node(n)`, record `tuple(value.shape)` under `n.name` when '
        'it qualifies, and return `value`. Run it with `YourInterpreter(gm).run(*inputs)` under `torch.no_grad()`. '
        'A scalar tensor gives `()`.',
    ],
    'linear_flops': [
        'Rows depend on the shape each Linear call actually receives, so run the graph. '
        "`ShapeProp(gm).propagate(*inputs)` stores every node's shape in `node.meta['tensor_meta']`.",
        "Count only `call_module` nodes whose module is an `nn.Linear`, found by type; `F.linear` calls don't "
        'count, and a Linear called three times counts three times. Read the shape of `node.args[0]`, not the model '
        'input, since a view may come first. Rows is the product of all dims but the last (1 for 1-D).',
        'Add up `2 * math.prod(shape[:-1]) * lin.in_features * lin.out_features` over those nodes, where `lin = '
        'gm.get_submodule(node.target)`. Return a Python int, not a float.',
    ],
}

HINTS: dict[str, str] = {
    'ex05.run_gm_on_the_inputs_given':
        'run gm on the inputs you are given, every time (ShapeProp(gm).propagate(*inputs) or an fx.Interpreter): the '
        "tensor_meta already in node.meta is an earlier run's, on inputs of other shapes",
    'ex05.shape_when_the_node_ran':
        "take each node's shape when that node has run (in run_node, or ShapeProp's tensor_meta), not from the "
        'values once the whole graph has run: a later node may change a value in place (unsqueeze_)',
    'ex05.return_total_instead_printing':
        'return the total instead of printing it',
    'ex05.return_total_function_ended_without':
        'return the total: the function ended without a `return` of it, so it returned None',
    'ex05.flops_are_whole_number_sum':
        'FLOPs are a whole number: sum ints (math.prod of a torch.Size is an int)',
    'ex05.key_dict_node_name_str':
        'key the dict by node.name (a str), not by the node itself',
    'ex05.key_dict_node_name_call':
        "key the dict by node.name: a call_function node's target is the function itself",
    'ex05.key_dict_node_name_str_2':
        'key the dict by node.name (a str)',
    'ex05.node_named_exists_look_up':
        'a node named {name!r} exists: look it up by node.name (the names gm.graph shows), not by its target or '
        'anything else',
    'ex05.nothing_reads_new_node_make':
        "nothing reads the new node '{new}': make the users of '{name}' read it with "
        'node.replace_all_uses_with(new, ...), with a delete_user_cb that leaves out new itself',
    'ex05.rewire_every_user_node_not':
        'rewire every user of the node, not only some: node.users lists them all, and '
        'node.replace_all_uses_with(new, ...) rewires them in one call (a delete_user_cb leaves out new itself)',
    'ex05.uses_inside_lists_tuples_keyword':
        'uses inside lists and tuples and keyword arguments count too: node.replace_all_uses_with(new, ...) '
        'rewrites every use, wherever it is',
    'ex05.node_reads_twice_must_read':
        "a node that reads '{name}' twice must read the new node both times: node.replace_all_uses_with(new, ...) "
        'rewrites every use',
    'ex05.expected_every_use_rewired_node':
        'expected every use rewired, as node.replace_all_uses_with(new, ...) does (with a delete_user_cb that '
        'leaves out new itself)',
    'ex05.graph_inserting_after_node_only':
        'a `graph.inserting_after(node)` block only sets where new nodes go; create the node inside it with '
        'graph.call_function(fn, (node,))',
    'ex05.keep_original_nodes_only_add':
        'keep the original nodes: only add the new one and rewire users',
    'ex05.add_exactly_one_call_function':
        'add exactly one call_function node',
    'ex05.create_graph_call_function_fn':
        'create it with graph.call_function(fn, (node,))',
    'ex05.new_node_s_target_fn':
        "the new node's target is `fn` itself, the function you are given",
    'ex05.new_node_s_only_argument':
        "the new node's only argument is the node it follows: graph.call_function(fn, (node,))",
    'ex05.new_nodes_go_where_insertion':
        'new nodes go where the insertion point is: a `graph.inserting_after(node)` block puts them right after '
        '`node`',
    'ex05.insert_right_after_node':
        "insert the new node right after '{name}', not just before its first user: create it inside "
        '`with gm.graph.inserting_after(node):`',
    'ex05.unread_nodes_stay':
        'nodes that nothing reads stay when they are no dropout ({names}): erase each dropout node with '
        'graph.erase_node(node); graph.eliminate_dead_code() also removes the other nodes nothing reads',
    'ex05.submodules_of_called_module_stay':
        "a dropout inside '{owner}' belongs to '{owner}', which the graph still calls: delete only the dropout "
        'submodules whose nodes you erased, once no node calls them (gm.delete_all_unused_submodules() keeps the '
        'children of called modules)',
    'ex05.buffer_is_tensor_too':
        'a get_attr node may read a buffer ({targets}): a tensor, but no nn.Parameter. Record the value each node '
        'has when gm runs (an Interpreter, or ShapeProp), whatever holds it',
    'ex05.linear_subclasses_count_too':
        'a subclass of nn.Linear is an nn.Linear too ({which}): find the modules with isinstance(module, '
        'nn.Linear), not type(module) is nn.Linear',
    'ex05.linears_inside_called_module':
        "only call_module nodes of gm count: the Linears inside '{owner}' run within its one call_module node and "
        'are no nodes of the graph; walk gm.graph.nodes, not gm.modules()',
    'ex05.raise_node_name_when_no':
        'raise {expected}(node_name) when no node has that name',
    'ex05.dropout_module_instance_nn_dropout':
        'a dropout module is an instance of nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout '
        'or nn.FeatureAlphaDropout, subclasses included: isinstance(module, (nn.Dropout, nn.Dropout1d, '
        'nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout)) finds them all',
    'ex05.after_erasing_nodes_call_gm':
        'after erasing the nodes, call gm.delete_all_unused_submodules() (or gm.delete_submodule(target))',
    'ex05.delete_only_dropout_submodules_delete':
        'delete only the dropout submodules (delete_all_unused_submodules does that)',
    'ex05.run_graph_lint_print_gm':
        'run graph.lint() and print gm.code to see which line is wrong',
    'ex05.after_creating_node_make_users':
        "after creating the node, make the users of '{name}' read it (node.replace_all_uses_with, with a "
        'delete_user_cb that leaves out new itself); a node that something reads stays',
    'ex05.return_gm_graphmodule_whose_graph':
        'return gm, the GraphModule whose graph you changed',
    'ex05.after_inserting_consumer_node_node':
        'after inserting a consumer of `node`, node.replace_all_uses_with(new) also rewires the new node to read '
        'itself: pass a delete_user_cb that leaves out new, or set new.args after replacing',
    'ex05.change_nothing_but_uses_node':
        'change nothing but the uses of the node',
    'ex05.create_node_inside_graph_inserting':
        'create the node inside a `graph.inserting_after(node)` block, so it comes right after `node` and before '
        'every user (without an insertion point, new nodes go to the end of the graph)',
    'ex05.raise_node_name_so_learner':
        'raise {expected}(node_name) so the learner sees which name was not found',
    'ex05.find_dropout_modules_type_isinstance':
        'find dropout modules by type with isinstance(module, ...), not by name',
    'ex05.subclasses_count_too_isinstance_module':
        'subclasses count too: isinstance(module, DROPOUT_MODULES), not type(module) is ...',
    'ex05.every_dropout_function_counts_too':
        'every dropout function counts, {function} too: call_function nodes whose target is F.dropout, '
        'torch.dropout, F.dropout1d/2d/3d, F.alpha_dropout or F.feature_alpha_dropout',
    'ex05.expected_every_node_original_graph':
        'expected: every node of the original graph except its dropout nodes, unchanged',
    'ex05.skip_node_whose_op_output':
        "skip the node whose op is 'output'",
    'ex05.key_dict_node_name_node':
        'key the dict by node.name (node.target differs for call_module and get_attr nodes)',
    'ex05.key_dict_node_name':
        'key the dict by node.name',
    'ex05.record_only_nodes_whose_value':
        'record only nodes whose value is a torch.Tensor (isinstance(value, torch.Tensor)); ints, torch.Size and '
        'tuples are left out',
    'ex05.placeholders_are_tensor_valued_nodes':
        'placeholders are tensor-valued nodes too',
    'ex05.record_every_tensor_valued_node':
        'record every tensor-valued node, whatever its op (placeholder, get_attr, call_*)',
    'ex05.make_users_read_dropout_s':
        "make its users read the dropout's input (replace_all_uses_with), then graph.erase_node(node)",
    'ex05.dropout_call_goes_even_training':
        'a dropout call goes even with training=False: remove every dropout node, whatever its arguments',
    'ex05.functional_dropout_counts_too_call':
        'functional dropout counts too: call_function nodes whose target is F.dropout, torch.dropout, '
        'F.dropout1d/2d/3d, F.alpha_dropout or F.feature_alpha_dropout',
    'ex05.convert_tuple_tensor_shape':
        'convert with tuple(tensor.shape)',
    'ex05.each_multiply_add_counts_2':
        'each multiply-add counts as 2 FLOPs: 2 * rows * in_features * out_features',
    'ex05.use_shape_tensor_each_linear':
        'use the shape of the tensor each Linear receives (run the graph with ShapeProp or an Interpreter), not the '
        "shape of the model's input",
    'ex05.count_every_nn_linear_call':
        'count every nn.Linear call in the graph: a Linear called twice counts twice',
    'ex05.only_call_module_nodes_whose':
        'only call_module nodes whose module is an nn.Linear count; an F.linear call does not',
    'ex05.rows_product_all_leading_dimensions':
        "rows is the product of ALL leading dimensions of the Linear's input (math.prod(x.shape[:-1])), not only "
        'the first',
}
