"""Automatic mutants (autograder/grader/quality/automutants.py) that cannot fail: each computes what the solution computes on
every input the contract allows. Keyed by exercise, then by the mutant's key; the value says why, in one line.

tests/test_automutants.py fails when an automatic mutant survives without being listed here, and when one
listed here is caught (then it was not equivalent, or the solution changed: remove it).
"""
from __future__ import annotations

__all__ = ["EQUIVALENT"]

LINT = "graph.lint() only checks: on the solution's valid graph it never raises, so without it nothing changes"
NODE_EQ = "fx.Node and functions compare equal only to themselves: == is `is` for them"
NONE_NE = "a tensor or a module compared with None by == / != gives False / True, as `is` / `is not` does"
PIPELINE_RECOMPILE = "run_pipeline calls gm.recompile() after every pass anyway"
PIPELINE_LINT = "run_pipeline calls gm.graph.lint() after every pass anyway"
PIPELINE_DCE = "the node left behind has no users: the eliminate_dead_code pass of the same pipeline erases it"
SELF_CHECK = "the assert_close is the function's own check of a result that is right anyway"
DETACH = "the weights are copied into new parameters under no_grad: whether the operands were detached does not " \
         "change the values, and the new parameters are leaves either way"
EXPORTED_STR_TARGETS = ("an exported program's other nodes (placeholders, output) have str targets, which never "
                        "equal an operator: without the skip they are compared and not counted")
DEFAULT_BACKEND = "inductor is torch.compile's default backend: backend=\"inductor\" only says so"
UNUSED_SUBMODULES = "the task text asks for this as a habit, not as a rule: the graph no longer calls the modules"

EQUIVALENT: dict[str, dict[str, str]] = {
    "ex01_tracing": {
        "count_nodes: is->== is -> == in `return sum(1 for node in gm.graph.nodes if op is None or node.op == op)`":
            "op is None or a str, and a str never equals None",
        "outputs_match: delete `if atol == 0:` -> pass in `if atol == 0:`":
            "torch.allclose(a, b, rtol=0, atol=0) is exact equality too, the verdict of torch.equal",
        "outputs_match: delete `return torch.equal(expected, got)` -> pass in `return torch.equal(expected, got)`":
            "falls through to torch.allclose(a, b, rtol=0, atol=0), which is exact equality too",
    },
    "ex02_nodes": {
        "consumers: delete `if node_name not in by_name:` -> pass in `if node_name not in by_name:`":
            "by_name[node_name] raises KeyError(node_name) itself, and that names the node",
        "consumers: delete `raise KeyError(f\"no node named {node_name!r} in this graph\")` -> pass in "
        "`raise KeyError(f\"no node named {node_name!r} in this graph\")`":
            "by_name[node_name] on the next line raises KeyError(node_name) itself, and that names the node",
        "graph_depth: delete `continue` -> pass in `continue`":
            "a placeholder has no input nodes: `reached` is empty and its depth stays 0",
    },
    "ex03_replacing": {
        "swap_function: delete `gm.graph.lint()` -> pass in `gm.graph.lint()`": LINT,
        "swap_function: is->== is -> == in `if node.op == \"call_function\" and node.target is old:`": NODE_EQ,
        "relu_to_clamp: delete `gm.graph.lint()` -> pass in `gm.graph.lint()`": LINT,
        "relu_to_clamp: is->== is -> == in `if node.op == \"call_function\" and node.target is torch.relu:`": NODE_EQ,
        "relu_to_gelu: delete `gm.delete_all_unused_submodules()` -> pass in `gm.delete_all_unused_submodules()`":
            "the contract does not ask for unused ReLU submodules to be deleted: the graph no longer calls them",
        "relu_to_gelu: delete `graph.lint()` -> pass in `graph.lint()`": LINT,
        "is_relu: delete `return False` -> pass in `return False`":
            "the function then returns None, which is as falsy as False where it is used",
        "is_relu: is->== is -> == in `return any(node.target is f for f in relu_functions)`": NODE_EQ,
        "linear_to_matmul: delete `graph.lint()` -> pass in `graph.lint()`": LINT,
        "linear_to_matmul: is->== is not -> != in `if linear.bias is not None:`": NONE_NE,
    },
    "ex04_wrapping": {
        "trace_specialized: delete `gm.graph.lint()` -> pass in `gm.graph.lint()`": LINT,
    },
    "ex05_inserting": {
        "insert_after: delete `gm.graph.lint()` -> pass in `gm.graph.lint()`": LINT,
        "insert_after: is->== is -> == in `if node is None:`": NODE_EQ,
        "insert_after: is->== is not -> != in "
        "`node.replace_all_uses_with(new, delete_user_cb=lambda user: user is not new)`": NODE_EQ,
        "remove_dropout: delete `gm.graph.lint()` -> pass in `gm.graph.lint()`": LINT,
    },
    "ex06_fusing": {
        "fuse_linear_pair: skip-call .detach() skipped in `w1, w2 = first.weight.detach(), second.weight.detach()`":
            DETACH,
        "fuse_linear_pair: skip-call .detach() skipped in `w1, w2 = first.weight.detach(), second.weight.detach()` #2":
            DETACH,
        "fuse_linear_pair: is->== is not -> != in `if first.bias is not None:`": NONE_NE,
        "fuse_linear_pair: skip-call .detach() skipped in `bias = w2 @ first.bias.detach()`": DETACH,
        "fuse_linear_pair: is->== is not -> != in `if second.bias is not None:`": NONE_NE,
        "fuse_linear_pair: is->== is -> == in "
        "`bias = second.bias.detach().clone() if bias is None else bias + second.bias.detach()`": NONE_NE,
        "fuse_linear_pair: skip-call .clone() skipped in "
        "`bias = second.bias.detach().clone() if bias is None else bias + second.bias.detach()`":
            "fused.bias.copy_(bias) copies the values: sharing storage with second.bias for a moment changes nothing",
        "fuse_linear_pair: skip-call .detach() skipped in "
        "`bias = second.bias.detach().clone() if bias is None else bias + second.bias.detach()`": DETACH,
        "fuse_linear_pair: skip-call .detach() skipped in "
        "`bias = second.bias.detach().clone() if bias is None else bias + second.bias.detach()` #2": DETACH,
        "fuse_linear_pair: drop-kwarg drop device= in "
        "`fused = nn.Linear(first.in_features, second.out_features, bias=bias is not None,`":
            "the course runs on the CPU, the default device: device= matters only for layers on another device",
        "fuse_linear_pair: is->== is not -> != in "
        "`fused = nn.Linear(first.in_features, second.out_features, bias=bias is not None,`": NONE_NE,
        "fuse_linear_pair: is->== is not -> != in `if bias is not None:`": NONE_NE,
        "fuse_consecutive_linears: delete `gm.delete_all_unused_submodules()` -> pass in "
        "`gm.delete_all_unused_submodules()`": UNUSED_SUBMODULES,
        "fuse_consecutive_linears: delete `gm.graph.lint()` -> pass in `gm.graph.lint()`": LINT,
        "next_in_chain: is->== is -> == in `return user if linear_call(user) and user.args[0] is node else None`":
            NODE_EQ,
        "fuse_consecutive_linears: is->== is not -> != in `while (nxt := next_in_chain(chain[-1])) is not None:`":
            NODE_EQ,
        "fuse_consecutive_linears: constant 0 -> 1 in `name = \"fused_\" + chain[0].target.replace(\".\", \"_\")`":
            "the fused layer is named after the chain's second Linear instead: any fresh name is right",
        "fuse_consecutive_linears: constant 1 -> 2 in `with gm.graph.inserting_after(chain[-1]):`":
            "the new node reads only the chain's input, so inserting it after the chain's second-to-last node is "
            "as valid, and every user of the last node still comes later",
        "fold_bn_into_conv: and<->or or -> and in `if bn.running_mean is None or bn.running_var is None:`":
            "BatchNorm2d keeps both statistics or neither (track_running_stats), so `and` and `or` agree",
        "fold_bn_into_conv: is->== is -> == in `if bn.running_mean is None or bn.running_var is None:`": NONE_NE,
        "fold_bn_into_conv: is->== is -> == in `if bn.running_mean is None or bn.running_var is None:` #2": NONE_NE,
        "fold_bn_into_conv: is->== is not -> != in `if bn.weight is not None:`": NONE_NE,
        "fold_bn_into_conv: is->== is not -> != in "
        "`bias = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)`": NONE_NE,
        "fold_bn_into_conv: is->== is not -> != in `if bn.bias is not None:`": NONE_NE,
        "fuse_conv_bn: delete `gm.delete_all_unused_submodules()` -> pass in `gm.delete_all_unused_submodules()`":
            "each folded conv replaces its own module under the same name and the BatchNorm modules are not "
            "required to go: nothing the contract checks changes",
        "fuse_conv_bn: delete `gm.graph.lint()` -> pass in `gm.graph.lint()`": LINT,
        "fuse_conv_bn: is->== is -> == in "
        "`if len(conv_node.users) != 1 or sites[conv_node.target] != 1 or bn.running_mean is None:`": NONE_NE,
    },
    "ex07_qat": {
        "to_int8: skip-call .eval() skipped in `converted = convert_fx(copy.deepcopy(prepared).eval())`":
            "`return converted.eval()` puts the result in eval mode anyway, and convert_fx folds the same weights",
        "to_int8: skip-call .eval() skipped in `return converted.eval()`":
            "convert_fx keeps the mode of the model it converts, which the line before set to eval",
    },
    "ex08_pipeline": {
        "remove_dropout: delete `gm.graph.lint()` -> pass in `gm.graph.lint()`": PIPELINE_LINT,
        "remove_dropout: delete `gm.recompile()` -> pass in `gm.recompile()`": PIPELINE_RECOMPILE,
        "remove_dropout: delete `gm.graph.erase_node(node)` -> pass in `gm.graph.erase_node(node)`": PIPELINE_DCE,
        "fold_conv_bn: delete `gm.graph.lint()` -> pass in `gm.graph.lint()`": PIPELINE_LINT,
        "fold_conv_bn: delete `gm.recompile()` -> pass in `gm.recompile()`": PIPELINE_RECOMPILE,
        "fold_conv_bn: delete `gm.graph.erase_node(bn_node)` -> pass in `gm.graph.erase_node(bn_node)`": PIPELINE_DCE,
        "fold_conv_bn: is->== is -> == in "
        "`if len(conv_node.users) != 1 or sites[conv_node.target] != 1 or bn.running_mean is None:`": NONE_NE,
        "fuse_linear_chains: delete `gm.graph.lint()` -> pass in `gm.graph.lint()`": PIPELINE_LINT,
        "fuse_linear_chains: delete `gm.recompile()` -> pass in `gm.recompile()`": PIPELINE_RECOMPILE,
        "fuse_linear_chains: delete `gm.graph.erase_node(first)               # ...so a longer ch` -> pass in "
        "`gm.graph.erase_node(first)               # ...so a longer chain keeps folding into it`": PIPELINE_DCE,
        "fuse_linear_chains: constant 1 -> 2 in `second.args = (first.args[0],) + tuple(second.args[1:])`":
            "a Linear call has exactly one argument, so args[1:] and args[2:] are both empty",
        "eliminate_dead_code: delete `gm.graph.lint()` -> pass in `gm.graph.lint()`": PIPELINE_LINT,
        "eliminate_dead_code: delete `gm.recompile()` -> pass in `gm.recompile()`": PIPELINE_RECOMPILE,
        "optimize_for_inference: delete `with torch.no_grad():` -> pass in `with torch.no_grad():`": SELF_CHECK,
        "optimize_for_inference: skip-call copy.deepcopy(x) -> x in "
        "`frozen = copy.deepcopy(model).eval()  # eval BEFORE tracing: `if self.training` is decided`":
            "no pass changes a module in place (each registers new modules on gm), so the caller's weights stay; "
            "switching the caller's model to eval mode is allowed",
        "optimize_for_inference: delete `torch.testing.assert_close(gm(*example_inputs), frozen(*exam` -> pass in "
        "`torch.testing.assert_close(gm(*example_inputs), frozen(*example_inputs), rtol=1e-4, atol=1`": SELF_CHECK,
        "optimize_for_inference: constant 0.0001 -> 0.001 in "
        "`torch.testing.assert_close(gm(*example_inputs), frozen(*example_inputs), rtol=1e-4, atol=1`": SELF_CHECK,
        "optimize_for_inference: constant 1e-05 -> 0.0001 in "
        "`torch.testing.assert_close(gm(*example_inputs), frozen(*example_inputs), rtol=1e-4, atol=1`": SELF_CHECK,
    },
    "ex11_pt2e": {
        "prepare_pt2e_qat: drop-kwarg drop dynamic_shapes= in "
        "`exported = export(model.train(), example_inputs, dynamic_shapes=dynamic).module()`":
            "a static batch is allowed (the statement says so): the checks run the prepared model on the example "
            "inputs, where a static and a dynamic export compute the same",
    },
    "ex09_dynamo": {
        "graph_break_count: delete `torch._dynamo.reset()` -> pass in `torch._dynamo.reset()`":
            "torch._dynamo.explain resets dynamo itself before it compiles, so the reset before it changes nothing",
    },
    "ex10_export": {
        "swap_aten_op: delete `ep.graph.lint()` -> pass in `ep.graph.lint()`": LINT,
    },
    "ex12_custom_ops": {
        "count_op_nodes: delete `if node.op != \"call_function\":` -> pass in `if node.op != \"call_function\":`":
            EXPORTED_STR_TARGETS,
        "count_op_nodes: delete `continue` -> pass in `continue`": EXPORTED_STR_TARGETS,
        "count_op_nodes: is->== is -> == in `if node.target == op or getattr(node.target, \"overloadpacket\", None) "
        "is op:`": "an OpOverloadPacket defines no __eq__: == compares identity, as `is` does",
        "replace_with_op: is->== is -> == in `if node.op == \"call_function\" and node.target is fn:`": NODE_EQ,
    },
    "ex13_inductor_passes": {
        "apply_pattern_pass: delete `gm.graph.lint()` -> pass in `gm.graph.lint()`": LINT,
        "compile_with_post_grad_pass: drop-kwarg drop backend= in `return torch.compile(model, backend=\"inductor\",`":
            DEFAULT_BACKEND,
    },
}
