"""The course's exercises and their graded functions, in course order: the one list everything else reads.

Checks (`autograder/checks/exNN_topic.py`), progressive hints (`hints.py`), mutants and alternatives
(`mutants/`), clauses (`clauses/`), the tests and `fxcourse validate` all take the exercises and function names
from here; `tests/test_course.py` fails when one of them lacks an entry for a function listed here, or has one
for a function that is not. Add an exercise by adding one `Exercise` (and its notebook in solutions/).
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Exercise", "EXERCISES", "exercise", "functions"]


@dataclass(frozen=True)
class Exercise:
    """One graded exercise notebook: its id (as in solutions/<id>/<id>.ipynb), its lesson, its graded functions."""

    id: str
    lesson: str          # lessons/<lesson>.ipynb
    functions: tuple[str, ...]
    part: int = 1        # Part I (fx on its own), Part II (fx in the PyTorch 2 stack), Part III (extending the stack)
    # What torch imports lazily while this exercise's answers and checks run: the fork server imports these with
    # the exercise's checks, on the first job that calls them, so that no forked worker or judge pays them again
    # (ex01's hidden models go through split_module, which imports sympy: 0.3 s of a 0.6 s worker).
    warm_imports: tuple[str, ...] = ()


SHAPES = ("torch.fx.experimental.symbolic_shapes",)  # sympy, for split_module and shape propagation
DYNAMO = ("torch._dynamo",)  # what quantize_fx's prepare and convert reach
EXPORT = (*DYNAMO, "torch.export")
COMPILE = (*EXPORT, "torch._functorch.aot_autograd", "torch._inductor.compile_fx")  # torch.compile's backend


EXERCISES: tuple[Exercise, ...] = (
    Exercise("ex01_tracing", "01_tracing", ("node_summary", "count_nodes", "outputs_match"), warm_imports=SHAPES),
    Exercise("ex02_nodes", "02_nodes", ("op_histogram", "called_modules", "consumers", "graph_depth"),
             warm_imports=SHAPES),
    Exercise("ex03_replacing", "03_replacing", ("swap_function", "relu_to_clamp", "relu_to_gelu", "linear_to_matmul")),
    Exercise("ex04_wrapping", "04_wrapping", ("trace_gated", "trace_with_leaves", "trace_specialized")),
    Exercise("ex05_inserting", "05_inserting", ("insert_after", "remove_dropout", "record_shapes", "linear_flops"),
             warm_imports=SHAPES),
    Exercise("ex06_fusing", "06_fusing",
             ("fuse_linear_pair", "fuse_consecutive_linears", "fold_bn_into_conv", "fuse_conv_bn")),
    Exercise("ex07_qat", "07_qat",
             ("prepare_for_qat", "fake_quant_count", "qat_finetune", "to_int8", "state_dict_bytes"),
             warm_imports=DYNAMO),
    Exercise("ex08_pipeline", "08_pipeline", ("run_pipeline", "optimize_for_inference"), warm_imports=SHAPES),
    Exercise("ex09_dynamo", "09_dynamo", ("capture_graphs", "graph_break_count", "compile_with_pass"), part=2,
             warm_imports=COMPILE),
    Exercise("ex10_export", "10_export", ("export_dynamic_batch", "aten_histogram", "parameter_placeholders",
                                          "node_shapes", "swap_aten_op"), part=2, warm_imports=EXPORT),
    Exercise("ex11_pt2e", "11_pt2e_qat",
             ("prepare_pt2e_qat", "pt2e_fake_quant_count", "pt2e_finetune", "to_qdq", "qdq_counts"), part=2),
    Exercise("ex12_custom_ops", "12_custom_ops", ("register_scaled_gelu", "count_op_nodes", "replace_with_op"), part=3,
             warm_imports=COMPILE),
    Exercise("ex13_inductor_passes", "13_inductor_passes",
             ("make_pattern_pass", "apply_pattern_pass", "compile_with_post_grad_pass"), part=3, warm_imports=COMPILE),
    Exercise("ex14_exported_programs", "14_exported_programs",
             ("save_and_reload", "module_of_nodes", "decompose_except", "unflatten_module"), part=3,
             warm_imports=COMPILE),
)


def exercise(assignment: str) -> Exercise:
    """The exercise with this id; KeyError naming the known ids otherwise."""
    for ex in EXERCISES:
        if ex.id == assignment:
            return ex
    raise KeyError(f"unknown exercise {assignment!r}: the course has {', '.join(e.id for e in EXERCISES)}")


def functions(assignment: str) -> tuple[str, ...]:
    """The graded functions of one exercise, in notebook order."""
    return exercise(assignment).functions
