"""The hidden cases of ex13_inductor_passes: what each case function of its `cases` builds for hidden=True (the
instructor's side: reached through autograder.checks.keyring.hidden, never installed where learners work)."""
from __future__ import annotations

from autograder.checks.framework import Case
from autograder.checks.ex13_inductor_passes.models import replacement
from autograder.checks.ex13_inductor_passes.cases import (CONV_BN, MM_RELU, MM_T_RELU, MUL_ADD, RELU_RELU,
                                                          ExampleInputs, _compile_case, apply_case)


def _make_cases() -> list[Case]:
    def case(label: str, name: str, graphs: tuple[str, ...]) -> Case:
        def make():
            search, replace, inputs = replacement(name)
            inputs = ExampleInputs(inputs)
            inputs.graphs = graphs
            return search, replace, inputs
        return Case(label, make, data={"replacement": name, "graphs": graphs})
    return [
        case("relu(mm) again: a second pass of the same replacement (unseen graphs: one in float64, one whose mm "
             "multiplies a tensor by itself)", MM_RELU, ("random 3", "mixed", "mlp in float64", "self mm")),
        case("batch_norm(conv) -> folded conv, seven inputs (unseen)", CONV_BN, ("convnet", "mlp")),
        case("x * y + z on random graphs (unseen)", MUL_ADD, ("random 5", "random 9")),
        case("relu(x @ w.t()), example inputs of shapes (2, 3) and (4, 3) (unseen)", MM_T_RELU, ("linears", "mlp")),
    ]


def _apply_cases() -> list[Case]:
    case = apply_case
    return [
        case("an mm read by a relu and by an add stays, the next relu(mm) goes: one match", "shared", MM_RELU),
        case("two conv -> batch_norm, the fold (unseen)", "convnet", CONV_BN, seed=1),
        case("a random graph, seed 4 (unseen)", "random 4", MM_RELU),
        case("a random graph, seed 9, x * y + z (unseen)", "random 9", MUL_ADD),
        case("an MLP, x * y + z: nothing to replace", "mlp", MUL_ADD, seed=2),
        case("four relus after an mm, relu(relu(x)) -> relu(x): two matches in one apply (unseen)", "relus",
             RELU_RELU),
    ]


def _compile_cases() -> list[Case]:
    return [_compile_case("ConvBN with trained statistics and a graph break, the fold of batch_norm(conv), then a "
                          "weight changed in place; a post-grad hook of the caller's is set before (unseen)",
                          "ConvBN (unseen)", seed=1, update="c1.weight", caller_hook=True)]
