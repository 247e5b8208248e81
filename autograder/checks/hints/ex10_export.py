"""The hints of ex10_export: `PROGRESSIVE`, three per graded function from a nudge to nearly the answer (`fxcourse
hint` shows the next one, in the format autograder/coursedata/hints.py describes), and `HINTS`, what its checks say
when an answer fails, by id (a template's {fields} are filled by the judge that names it)."""
from __future__ import annotations

__all__ = ["PROGRESSIVE", "HINTS"]

PROGRESSIVE: dict[str, list[str]] = {
    'export_dynamic_batch': [
        '`torch.export.export(model, args, dynamic_shapes=...)` takes the inputs as a tuple, and `dynamic_shapes` '
        'says which dimensions of each input may vary, each marked with a `Dim`.',
        'Give `dynamic_shapes` one entry per input, in the same structure as `args`: for the one input, a dict from '
        'dimension number to `Dim("batch")`. A tuple spares you forward\'s argument name, which is not always `x`.',
        'Export with `dynamic_shapes` a tuple of one dict, `{0: Dim("batch")}`, and return the `ExportedProgram` '
        'itself (not `.module()`).',
    ],
    'aten_histogram': [
        'Walk `ep.graph.nodes` and look at the nodes whose `op` is `"call_function"`; their `target` is an operator '
        'overload such as `torch.ops.aten.linear.default`.',
        'The key is `str(node.target)` (`"aten.linear.default"`), not the node\'s name and not the overload packet. '
        '`operator.getitem` and `cond` are call_function nodes too, and count.',
        'A dict from each key to how many call_function nodes have it (`counts.get(key, 0)` helps), on `ep.graph` as it is (no '
        '`run_decompositions()`).',
    ],
    'parameter_placeholders': [
        'The placeholders carry no values and their names are only hints: `ep.graph_signature` says what each one '
        'stands for.',
        '`graph_signature.inputs_to_parameters` and `inputs_to_buffers` each map a placeholder name to a qualified '
        'name. User inputs and lifted constants (`inputs_to_lifted_tensor_constants`) stay out.',
        'Merge the two dicts into one and return it: `{**sig.inputs_to_parameters, **sig.inputs_to_buffers}`.',
    ],
    'node_shapes': [
        'Export ran the model on fake tensors and kept each node\'s result in `node.meta["val"]`: shapes and '
        'dtypes, no data. Read them; do not run anything.',
        'Keep only nodes whose `val` is a `torch.Tensor` (placeholders too; a list of tensors is not one). A size '
        'is a plain `int` when static and a `torch.SymInt` when symbolic.',
        '`tuple(s if isinstance(s, int) else str(s) for s in val.shape)` per node, keyed by `node.name`.',
    ],
    'swap_aten_op': [
        'The pass works on `ep.graph` itself (`ep.module()` makes a copy). Match `node.target == old`: the exact '
        'overload object, not a name.',
        'Set `node.target = new` on every matching `call_function` node; leave every other node, other overloads of '
        'the same operator included.',
        'After the loop: `ep.graph.lint()`, `ep.graph_module.recompile()` (otherwise the generated code still calls '
        '`old`), and `return ep`.',
    ],
}

HINTS: dict[str, str] = {
    'ex10.dead_nodes_are_nodes':
        'a node whose value nothing reads is a node of the graph too (export keeps it): count it, record it and '
        'leave it where it is; no eliminate_dead_code(), no skipping of nodes without users',
    'ex10.return_exportedprogram_itself_ep_module':
        'return the ExportedProgram itself: ep.module() is a GraphModule made from it, without its graph signature',
    'ex10.build_return_dict':
        'build and return a dict {what}',
    'ex10.use_str_target_node_s':
        "use str(...) of the target or the node's name as the key",
    'ex10.export_example_input_own_dtype':
        'export example_input as it is, in its own dtype ({dtype}), with the model as it is: cast neither (no '
        '.float() on the example or the model)',
    'ex10.export_model_example_input_args':
        'the args of export are a tuple of the inputs: (example_input,), after the model',
    'ex10.give_batch_dimension_no_upper':
        'give the batch dimension no upper bound: Dim("batch") without max=',
    'ex10.count_nodes_ep_graph_only':
        'count the nodes of ep.graph only: the branches of torch.cond are subgraphs of their own (get_attr '
        'true_graph_0, ...), and their nodes are not nodes of ep.graph',
    'ex10.keys_are_right_counts_are':
        'the keys are right, the counts are not ({k!r}: {got} for {expected} nodes): add 1 for every call_function '
        'node, one more under its key each time (counts.get(key, 0) + 1)',
    'ex10.key_str_node_target_operator':
        'key by str(node.target), the operator overload, not by node.name',
    'ex10.count_call_function_nodes_only':
        'count call_function nodes only: placeholders, get_attr and output are not operators',
    'ex10.key_overload_str_node_target':
        "key by the overload, str(node.target) such as 'aten.linear.default', not by the operator packet "
        '(overloadpacket)',
    'ex10.every_call_function_node_counts':
        'every call_function node counts, operator.getitem and torch.cond included, not only aten ones',
    'ex10.count_graph_run_decompositions_makes':
        'count the graph as it is: run_decompositions() makes another program with other operators',
    'ex10.key_names_operator_s_own':
        "key by str(node.target) itself: {k!r} is an operator of its own namespace, not {aten!r}; the string "
        'names the namespace, whatever it is',
    'ex10.same_name_another_namespace_stays':
        '{k!r} has the name of {old!r} but is another operator, in another namespace, and stays: compare '
        'node.target == old, the operator itself, not its name',
    'ex10.key_str_node_target_example':
        "key by str(node.target), for example 'aten.linear.default'",
    'ex10.value_map_each_placeholder_qualified':
        'the value of {k!r} is a {type}: map each placeholder to the qualified NAME of what it carries, a str such '
        'as {example!r}, not to the tensor',
    'ex10.carries_value_fully_qualified_name':
        "{k!r} carries {got!r}: the value is the fully qualified name, with the submodules' path, not the "
        "attribute's own name {own!r}",
    'ex10.keys_are_placeholder_names_p':
        'the keys are placeholder names (p_fc_weight), the values the qualified names (fc.weight)',
    'ex10.user_inputs_carry_no_parameter':
        'user inputs carry no parameter or buffer: leave them out (graph_signature.user_inputs)',
    'ex10.lifted_constant_plain_tensor_attribute':
        'a lifted constant (a plain tensor attribute, placeholder c_...) is neither a parameter nor a buffer: leave '
        'it out',
    'ex10.non_persistent_buffer_buffer_too':
        'a non-persistent buffer is a buffer too, though ep.state_dict leaves it out: read the names from '
        'ep.graph_signature.inputs_to_buffers',
    'ex10.buffers_too_graph_signature_inputs':
        'buffers too: graph_signature.inputs_to_buffers, next to inputs_to_parameters',
    'ex10.read_names_from_ep_graph':
        "read the names from ep.graph_signature (inputs_to_parameters, inputs_to_buffers): a placeholder's name "
        'does not say where its dots were, and the state_dict lacks non-persistent buffers',
    'ex10.name_nodes_ep_graph_read':
        'name the nodes of ep.graph and read their node.meta["val"], the tensors export recorded (symbolic sizes '
        "included): do not run the program, nor walk ep.module()'s graph, whose nodes are named otherwise",
    'ex10.lifted_constant_s_placeholder_c':
        'a lifted constant\'s placeholder (c_...) has meta["val"] but no tensor_meta: read node.meta["val"] of '
        'every node',
    'ex10.placeholders_carry_meta_val_too':
        'placeholders carry meta["val"] too: parameters, buffers and the input are nodes with shapes',
    'ex10.only_nodes_whose_meta_val':
        'only nodes whose meta["val"] is a tensor: a node that returns several tensors (a list or tuple), the '
        'output node and get_attr nodes are left out',
    'ex10.read_node_meta_val_every':
        'read node.meta["val"] of every node (a constant\'s node has no tensor_meta, but it has val)',
    'ex10.node_meta_val_shape_every':
        'node.meta["val"].shape of every node whose val is a tensor',
    'ex10.static_sizes_are_ints_keep':
        'static sizes are ints: keep an int as it is and make only a symbolic size a str',
    'ex10.symbolic_size_torch_symint_return':
        "a symbolic size is a torch.SymInt: return str(size) for it (int() would fix it to the example's value), "
        'and read node.meta["val"] instead of running the program',
    'ex10.tuple_val_shape_each_size':
        'tuple(val.shape) with each size an int, or str(size) where it is symbolic',
    'ex10.swap_nodes_ep_graph_only':
        'swap the nodes of ep.graph only: the branches of torch.cond are subgraphs of their own, with nodes that '
        "are not ep.graph's; leave them as they are",
    'ex10.change_node_target_only_do':
        'change node.target only; do not add or erase nodes',
    'ex10.call_ep_graph_module_recompile':
        'call ep.graph_module.recompile() after changing the targets',
    'ex10.change_node_target_place_keep':
        'change node.target in place; keep every node',
    'ex10.change_node_targets_only':
        'change node targets only',
    'ex10.change_node_target_matching_nodes':
        'change node.target of the matching nodes, nothing else',
    'ex10.only_dimension_0_batch_dynamic':
        'only dimension 0, the batch, is dynamic: ({0: Dim("batch")},)',
    'ex10.count_integers_counts_key_counts':
        'count with integers: one more under the key each time (counts.get(key, 0) + 1)',
    'ex10.make_each_shape_tuple_tuple':
        'make each shape a tuple: tuple(... for s in val.shape)',
    'ex10.nothing_changed_ep_graph_edit':
        'nothing changed in ep.graph: edit the nodes of ep.graph itself (ep.module() makes a copy), and return ep',
    'ex10.every_call_function_node_targeting':
        'every call_function node targeting old: do not stop at the first one',
    'ex10.operators_program_did_not_call':
        'operators the program did not call appeared: swap the targets in ep.graph as it is (run_decompositions() '
        'makes another program, with other operators)',
    'ex10.compare_node_target_old_exact':
        'compare node.target == old, the exact overload: other overloads of the operator and other operators whose '
        'names contain it stay',
    'ex10.change_node_target_only_overload':
        'change node.target only, to an overload that takes the same arguments',
    'ex10.mark_dimension_0_dynamic_dynamic':
        'mark dimension 0 dynamic: dynamic_shapes=({0: Dim("batch")},)',
    'ex10.export_model_mode_training_here':
        'export the model as it is, in the mode it is in (training here): export freezes the mode it sees, and an '
        "eval-mode export, of the model or of a copy, normalises with running statistics instead of the batch's",
    'ex10.export_model_mode':
        'export the model as it is, in the mode it is in',
    'ex10.leave_out_meta_val_not':
        'leave {k!r} out: its meta["val"] is a {kind}, not one tensor (only nodes whose val is a tensor are in the '
        'dict)',
    'ex10.symbolic_size_torch_symint_return_2':
        'a symbolic size is a torch.SymInt: return str(size) for it, and keep static sizes as int',
    'ex10.give_batch_dimension_no_upper_2':
        'give the batch dimension no upper bound: Dim("batch") without max= (a range too narrow refuses the batch '
        'sizes the caller has)',
    'ex10.n0_d_tensor_tensor_too':
        'a 0-d tensor is a tensor too: its shape is (), an empty tuple',
}
