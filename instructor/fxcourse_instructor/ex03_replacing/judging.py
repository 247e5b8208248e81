"""Checks of ex03_replacing: swap_function, relu_to_clamp, relu_to_gelu, linear_to_matmul.

Each case traces a seeded model and hands the learner the GraphModule, with the model and its seeded inputs
stashed on it (attribute `_fxcourse_case`, a plain dict, so it is not a submodule). `evidence` reads that
stash where the learner's function ran: it describes the returned graph (what every node computes, what every
get_attr reads), runs the result, runs the *original* model again (a pass must not change it) and, for
linear_to_matmul, runs the result once more after an SGD step on the original model's parameters (they must
stay shared). `judge` rebuilds the same model from `case.make()` and computes every reference eagerly; where
the pass changes what is computed, the eager model runs under `_EagerSwap`, a TorchFunctionMode that replaces
the old function by the new one whenever eager code calls it.

Judging order: lambda targets, lint, stale code (forgot recompile), structure, run errors, numbers,
the original model, shared parameters: the first message a learner sees is the root cause.
"""
from __future__ import annotations

from autograder.checks.framework import Check
from autograder.checks.ex03_replacing.models import _EagerSwap
from autograder.checks.ex03_replacing.cases import _clamp_cases, _gelu_cases, _matmul_cases, _swap_cases, STASH
from autograder.checks.ex03_replacing.evidence import (
    _clamp_evidence, _gelu_evidence, _matmul_evidence, _swap_evidence,
)
from fxcourse_instructor.ex03_replacing.judges import (
    _clamp_judge, _eager, _gelu_judge, _gelu_raise, _matmul_judge, _swap_judge, RELU_TO_GELU,
)

__all__ = ["CHECKS", "RELU_TO_GELU", "STASH", "_eager", "_EagerSwap"]


CHECKS = {
    "swap_function": Check("swap_function", _swap_cases, _swap_evidence, _swap_judge),
    "relu_to_clamp": Check("relu_to_clamp", _clamp_cases, _clamp_evidence, _clamp_judge),
    "relu_to_gelu": Check("relu_to_gelu", _gelu_cases, _gelu_evidence, _gelu_judge, explain_raise=_gelu_raise),
    "linear_to_matmul": Check("linear_to_matmul", _matmul_cases, _matmul_evidence, _matmul_judge),
}
