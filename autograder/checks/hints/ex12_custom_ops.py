"""The hints of ex12_custom_ops: `PROGRESSIVE`, three per graded function from a nudge to nearly the answer (`fxcourse
hint` shows the next one, in the format autograder/coursedata/hints.py describes), and `HINTS`, what its checks say
when an answer fails, by id (a template's {fields} are filled by the judge that names it)."""
from __future__ import annotations

__all__ = ["PROGRESSIVE", "HINTS"]

PROGRESSIVE: dict[str, list[str]] = {
    'register_scaled_gelu': [
        'Decorate a function `(x: Tensor, scale: float) -> Tensor` with '
        '`torch.library.custom_op(f"{namespace}::scaled_gelu", mutates_args=())`: the annotations become the '
        'schema, so they must say `Tensor` and `float`.',
        'The decorated object has `.register_fake` (a function that returns an empty tensor like `x`, for compile '
        'and export) and `.register_autograd(backward, setup_context=...)`; backward returns one gradient per '
        'input, `None` for the float.',
        '`setup_context` saves `x` and `scale` on `ctx`; `backward` returns `(grad * scale * (Phi(x) + x * phi(x)), '
        'None)` with Phi and phi the normal CDF and density; return the decorated op.',
    ],
    'count_op_nodes': [
        'Look at the `call_function` nodes of `ep.graph`: each target is an `OpOverload` such as '
        '`torch.ops.aten.gelu.default`, or a plain function such as `operator.getitem`.',
        'An overload matches when `node.target == op`; a packet (`torch.ops.aten.gelu`) matches the nodes whose '
        '`target.overloadpacket` is it. Not every target has an `overloadpacket`: use `getattr(..., None)`.',
        '`sum(1 for n in ep.graph.nodes if n.op == "call_function" and (n.target == op or getattr(n.target, '
        '"overloadpacket", None) is op))`.',
    ],
    'replace_with_op': [
        'A wrapped function is a `call_function` node whose `target` is the function object itself: compare with '
        '`is fn`, not by name.',
        'Set `node.target = op` and keep `args` and `kwargs`; the node still says `meta["is_wrapped"]`, which makes '
        '`gm.code` wrap the op\'s name: drop it with `node.meta.pop("is_wrapped", None)`.',
        'After the loop: `gm.graph.lint()`, `gm.recompile()` (otherwise `gm.code` still calls `fn`), and `return '
        'gm`.',
    ],
}

HINTS: dict[str, str] = {
    'ex12.fake_kernel_keeps_x_s_layout':
        "the fake kernel describes the real kernel's result, its strides too: torch.empty_like(x) keeps x's layout "
        '(a transposed x gives a transposed result, as scale * F.gelu(x) does), torch.empty(x.shape) is always '
        'contiguous',
    'ex12.count_program_as_given':
        'count the nodes of ep.graph as it is given: ep.run_decompositions() makes another program, in which '
        "aten's linear, for one, is taken apart into smaller operators",
    'ex12.count_nodes_ep_graph_only':
        'count the nodes of ep.graph only: the branches of torch.cond are subgraphs of their own (get_attr '
        'true_graph_0, ...), and their nodes are not nodes of ep.graph',
    'ex12.return_what_torch_library_custom':
        'return what torch.library.custom_op returns (or torch.ops.<namespace>.scaled_gelu)',
    'ex12.return_number_matching_nodes_int':
        'return the number of matching nodes, an int',
    'ex12.return_graphmodule_gm_itself_changed':
        'return the GraphModule (gm itself, changed, is fine)',
    'ex12.op_returns_one_new_tensor':
        'the op returns one new tensor: -> torch.Tensor',
    'ex12.operator_called_scaled_gelu_define':
        'the operator is called scaled_gelu: define f"{namespace}::scaled_gelu"',
    'ex12.op_changes_none_arguments_mutates':
        'the op changes none of its arguments: mutates_args=() (a mutated argument shows as Tensor(a!))',
    'ex12.annotate_scale_float_schema_says':
        'annotate scale as float: the schema says float scale (an int annotation makes it SymInt)',
    'ex12.parameters_are_x_torch_tensor':
        'the parameters are (x: torch.Tensor, scale: float), with these names: the schema reads them',
    'ex12.operator_returned_lives_namespace_earlier':
        'the operator returned lives in {other!r}, the namespace of an earlier call: every call defines the '
        'operator anew in the namespace it is given ({namespace!r} here), it does not return one defined before',
    'ex12.operator_s_namespace_argument_namespace':
        "the operator's namespace is the argument `namespace` ({namespace!r} here): define "
        'f"{{namespace}}::scaled_gelu", not a namespace of your own',
    'ex12.graph_without_call_fn_no':
        'a graph without a call of fn is no error: there is nothing to replace, so lint, recompile and return gm as '
        'it is',
    'ex12.fake_kernel_returns_new_empty':
        'the fake kernel returns a new empty tensor like x (torch.empty_like(x)), not x itself: the real kernel '
        'returns a new tensor, and the fake one must say the same',
    'ex12.register_fake_without_fake_kernel':
        "register_fake: without a fake kernel torch.compile and torch.export cannot know the output's shape",
    'ex12.backward_multiplies_grad_flowing_in':
        "backward's grad is the gradient flowing in from what follows the op: multiply it in, grad * scale * "
        "gelu'(x) (after .sum() it is all ones, after anything else it is not)",
    'ex12.each_call_s_backward_uses':
        "each call's backward uses that call's scale: save it on ctx in setup_context (ctx.scale = scale), not in a "
        'variable that the next call of the op overwrites',
    'ex12.compute_in_x_s_own_dtype':
        "compute in x's own dtype: a float64 x gets float64 math, not float32 math cast back to float64",
    'ex12.fake_kernel_follows_x_s_sizes':
        "the fake kernel's result takes x's sizes as they come (symbolic under torch.export with a dynamic batch): "
        'torch.empty_like(x), not int() of each size, which pins the batch to the example\'s',
    'ex12.gradient_scale_times_gelu_s':
        "the gradient is scale times gelu's: multiply by scale (save it on ctx in setup_context)",
    'ex12.gradient_scale_times_derivative_gelu':
        'the gradient is scale times the derivative of gelu at x, not scale alone',
    'ex12.gelu_x_x_phi_x':
        "gelu(x) = x * Phi(x), so gelu'(x) = Phi(x) + x * phi(x): the backward leaves out the x * phi(x) term",
    'ex12.backward_returns_grad_scale_gelu':
        "backward returns grad * scale * gelu'(x), with gelu'(x) = Phi(x) + x * phi(x) (save x in setup_context)",
    'ex12.change_node_target_only_insert':
        'change node.target only (or insert the new node before erasing the old one)',
    'ex12.node_no_longer_calls_wrapped':
        'the node no longer calls a wrapped Python function: node.meta.pop("is_wrapped", None)',
    'ex12.op_computes_what_fn_computed':
        'the op computes what fn computed: only the targets change',
    'ex12.after_changing_graph_call_gm':
        'after changing the graph call gm.graph.lint(), then gm.recompile(), as the task asks: lint checks that '
        "every node's inputs are defined before it and belong to the graph",
    'ex12.compute_new_tensor_op_promises':
        'compute a new tensor: the op promises (mutates_args=()) to leave x alone',
    'ex12.fake_kernel_makes_empty_tensor':
        'the fake kernel makes an empty tensor like x (torch.empty_like(x)) and reads no data',
    'ex12.f_gelu_x_exact_gelu':
        'F.gelu(x) is the exact gelu; approximate="tanh" computes something else',
    'ex12.scale_multiplies_gelu_s_result':
        "scale multiplies gelu's result: scale * F.gelu(x), not F.gelu(scale * x)",
    'ex12.scale_torch_nn_functional_gelu':
        'scale * torch.nn.functional.gelu(x)',
    'ex12.fake_kernel_s_result_has':
        "the fake kernel's result has x's shape and dtype: torch.empty_like(x)",
    'ex12.register_autograd_backward_setup_context':
        'register_autograd(backward, setup_context=...): without it the op cannot be differentiated',
    'ex12.run_torch_library_opcheck_op':
        'run torch.library.opcheck(op, (x, scale)) yourself: it names what is wrong',
    'ex12.op_must_reach_export_one':
        'the op must reach export as one call_function node: a custom_op with a fake kernel',
    'ex12.backward_ctx_grad_returns_grad':
        "backward(ctx, grad) returns (grad * scale * gelu'(x), None): one gradient per input, None for the float",
    'ex12.op_takes_same_arguments_fn':
        'the op takes the same arguments as fn',
    'ex12.set_node_target_op_every':
        'set node.target = op on every call_function node whose target is fn, in gm.graph',
    'ex12.erase_each_old_node_gm':
        'erase each old node (gm.graph.erase_node(node)) once its users call the new one '
        '(node.replace_all_uses_with(new)): only op is called',
    'ex12.replace_each_call_fn_one':
        'replace each call of fn by one call of op: keep every other node',
    'ex12.every_call_function_node_calls':
        'every call_function node that calls fn: do not stop at the first one',
    'ex12.new_target_op_itself_object':
        'the new target is op itself, the object you were given',
    'ex12.only_nodes_whose_target_fn':
        'only nodes whose target is fn itself (node.target is fn): another function, even one of the same name, '
        'stays',
    'ex12.keep_node_s_args_kwargs':
        "keep the node's args and kwargs as they were (scale may be a keyword argument)",
    'ex12.change_node_target_calls_fn':
        'change node.target of the calls of fn only',
    'ex12.real_kernel_computes_scale_torch':
        'the real kernel computes scale * torch.nn.functional.gelu(x) and returns a new tensor',
    'ex12.keep_x_s_shape_dtype':
        "keep x's shape and dtype: scale * F.gelu(x)",
    'ex12.op_overload_packet_here_nodes':
        'op is an overload packet here, and nodes target its overloads: compare node.target.overloadpacket with op',
    'ex12.op_one_overload_here_count':
        'op is one overload here: count only nodes whose target is that exact overload, not its other overloads',
    'ex12.op_one_overload_here_not':
        "op is one overload here, not a packet: count the nodes whose target == op (no node's target has an "
        'overload as its overloadpacket)',
    'ex12.packet_s_nodes_may_target':
        "a packet's nodes may target any of its overloads (op.overloads() names them), not only op.default: compare "
        'node.target.overloadpacket with op',
    'ex12.compare_node_target_op_not':
        "compare node.target with op, not node names: a node's name says nothing of its target",
    'ex12.only_call_function_nodes_whose':
        'only call_function nodes whose target is op (or, for a packet, one of its overloads)',
    'ex12.every_call_function_node_ep':
        'every call_function node of ep.graph whose target is op, or an overload of op when op is a packet',
    'ex12.compare_target_objects_not_names':
        'compare the target objects, not their names: an operator of the same name in another namespace, or one '
        "whose name contains op's, is another operator",
}
