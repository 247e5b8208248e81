"""The lesson section each graded function practises: where `fxcourse report` sends an instructor to reteach a
common mistake (the quiz questions carry their own section in solutions/quizzes.json).

Each entry names a `## ` heading of the exercise's lesson, in the quizzes' form ("Lesson 01, section “3. Reading
the graph”"); tests/test_report.py checks that every graded function has one and that the heading exists.
"""
from __future__ import annotations

__all__ = ["SECTIONS", "section"]


def _s(lesson: str, heading: str) -> str:
    return f"Lesson {lesson}, section “{heading}”"


SECTIONS: dict[str, dict[str, str]] = {
    "ex01_tracing": {
        "node_summary": _s("01", "3. Reading the graph"),
        "count_nodes": _s("01", "3. Reading the graph"),
        "outputs_match": _s("01", "5. Running it, and checking it computes the same thing"),
    },
    "ex02_nodes": {
        "op_histogram": _s("02", "The six opcodes"),
        "called_modules": _s("02", "`name` is not `target`"),
        "consumers": _s("02", "Edges both ways: `users` and `all_input_nodes`"),
        "graph_depth": _s("02", "Edges both ways: `users` and `all_input_nodes`"),
    },
    "ex03_replacing": {
        "swap_function": _s("03", "2. Changing what a node calls: `node.target`"),
        "relu_to_clamp": _s("03", "5. Replacing a node by another: `replace_all_uses_with` and `erase_node`"),
        "relu_to_gelu": _s("03", "4. Swapping a module: `add_submodule`"),
        "linear_to_matmul": _s("03", "6. Reading parameters in the graph: `get_attr`"),
    },
    "ex04_wrapping": {
        "trace_gated": _s("04", "3. Pitfall 1: a data-dependent `if`. Fix: a leaf function"),
        "trace_with_leaves": _s("04", "4. Pitfall 2: `len()` and iteration on a proxy. Fix: a leaf module"),
        "trace_specialized": _s("04", "5. Pitfall 3: a Python flag in `forward`. Fix: `concrete_args`"),
    },
    "ex05_inserting": {
        "insert_after": _s("05", "4. Wiring a node in, and the self-use trap"),
        "remove_dropout": _s("05", "5. Removing nodes: `erase_node` and `eliminate_dead_code`"),
        "record_shapes": _s("05", "7. `Interpreter`: running a graph one node at a time"),
        "linear_flops": _s("05", "8. `ShapeProp` and `node.meta['tensor_meta']`"),
    },
    "ex06_fusing": {
        "fuse_linear_pair": _s("06", "1. Two Linears with nothing in between are one Linear"),
        "fuse_consecutive_linears": _s("06", "3. Find the bug: a \"fuse consecutive linears\" pass that fuses nothing"),
        "fold_bn_into_conv": _s("06", "4. Folding BatchNorm into the conv before it"),
        "fuse_conv_bn": _s("06", "5. A folding pass with its patterns kept as data"),
    },
    "ex07_qat": {
        "prepare_for_qat": _s("07", "2. The QConfigMapping, and the warnings torch prints"),
        "fake_quant_count": _s("07", "3. Reading the fake-quant nodes"),
        "qat_finetune": _s("07", "4. A short QAT fine-tune"),
        "to_int8": _s("07", "5. `convert_fx`: the pass that makes it int8"),
        "state_dict_bytes": _s("07", "6. What did we gain?"),
    },
    "ex08_pipeline": {
        "run_pipeline": _s("08", "3. Running passes in order, checking after each one"),
        "optimize_for_inference": _s("08", "2. Passes are functions from GraphModule to GraphModule"),
    },
    "ex09_dynamo": {
        "capture_graphs": _s("09", "2. A backend that only looks"),
        "graph_break_count": _s("09", "3. Graph breaks"),
        "compile_with_pass": _s("09", "6. A Part I pass as a backend"),
    },
    "ex10_export": {
        "export_dynamic_batch": _s("10", "4. Shapes without running: `node.meta[\"val\"]`"),
        "aten_histogram": _s("10", "3. ATen targets"),
        "parameter_placeholders": _s("10", "2. The graph signature"),
        "node_shapes": _s("10", "4. Shapes without running: `node.meta[\"val\"]`"),
        "swap_aten_op": _s("10", "7. A pass on an exported graph"),
    },
    "ex11_pt2e": {
        "prepare_pt2e_qat": _s("11", "2. Export for training, then prepare"),
        "pt2e_fake_quant_count": _s("11", "2. Export for training, then prepare"),
        "pt2e_finetune": _s("11", "3. Fine-tune, switch to eval, convert"),
        "to_qdq": _s("11", "3. Fine-tune, switch to eval, convert"),
        "qdq_counts": _s("11", "5. Measure: accuracy, size, latency"),
    },
    "ex12_custom_ops": {
        "register_scaled_gelu": _s("12", "6. `register_autograd`: a gradient through the kernel"),
        "count_op_nodes": _s("12", "5. `register_fake`: one node everywhere"),
        "replace_with_op": _s("12", "10. `fx.wrap` versus a custom operator"),
    },
    "ex13_inductor_passes": {
        "make_pattern_pass": _s("13", "3. A replacement as two functions"),
        "apply_pattern_pass": _s("13", "4. Conv+BN as an inductor pattern"),
        "compile_with_post_grad_pass": _s("13", "5. The pass inside torch.compile"),
    },
    "ex14_exported_programs": {
        "save_and_reload": _s("14", "4. Saving and loading: `torch.export.save` and `load`"),
        "module_of_nodes": _s("14", "5. Where each node came from: `nn_module_stack`"),
        "decompose_except": _s("14", "7. Decomposition tables of your own"),
        "unflatten_module": _s("14", "6. `unflatten`: the module hierarchy back"),
    },
}


def section(assignment: str, function: str) -> str | None:
    """The lesson section of one graded function, or None for a function the course does not list."""
    return SECTIONS.get(assignment, {}).get(function)
