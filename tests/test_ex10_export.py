"""Does the ex10_export check library pass the solution, fail the stubs, and kill every mutant with its hint?"""
from __future__ import annotations

import warnings

import pytest
import torch
from torch.export import Dim, export

from autograder.checks import ex10_export as checks
from autograder.checks.framework import collect_evidence, get_check, judge_evidence
from fxcourse_instructor.mutants import load
from exercise_suite import exercise_tests

A = "ex10_export"
MUTANTS = load(A)[0]

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py

# fixtures nb, solution; the tests every exercise has (tests/exercise_suite.py), evidence of the visible cases
globals().update(exercise_tests(A, quizzes=4, evidence_cases=lambda check: check.cases(False)))


def test_the_pitfalls_of_the_lesson_are_among_the_mutants():
    whys = " | ".join(m.why for m in MUTANTS).lower()
    for needle in ("no recompile", "module()", "operator packet", "'x'", "core aten"):
        assert needle in whys, needle


def test_each_case_gets_its_own_copy_of_the_program(solution):
    """A pass that edits its program must not reach the next case: the cache hands out deep copies."""
    check = get_check(A, "swap_aten_op")
    case = check.cases(False)[0]
    ep, old, new = case.make()
    solution["swap_aten_op"](ep, old, new)
    again, _, _ = case.make()
    assert str(old) in checks._histogram(again.graph) and str(old) not in checks._histogram(ep.graph)


def test_the_models_have_what_the_cases_claim():
    tagger, _, _ = checks._program("Tagger(8)", dynamic=True)
    sig = tagger.graph_signature
    assert "b_gain" in sig.inputs_to_buffers and "gain" not in tagger.state_dict   # non-persistent
    assert sig.inputs_to_lifted_tensor_constants and list(sig.user_inputs) == ["inp"]
    assert any(isinstance(s, torch.SymInt) for n in tagger.graph.nodes
               if isinstance(n.meta.get("val"), torch.Tensor) for s in n.meta["val"].shape)
    sums = checks._histogram(checks._program("Sums(5)")[0].graph)
    assert sums["aten.sum.default"] == 1 and sums["aten.sum.dim_IntList"] == 1
    cond = checks._histogram(checks._program("CondRouter(4)")[0].graph)
    assert "cond" in cond and "<built-in function getitem>" in cond
    assert checks.RandomStack(5).plan != checks.RandomStack(12).plan
    namesakes = checks._program("Namesakes(4)")[0]
    params = namesakes.graph_signature.inputs_to_parameters
    assert params["p_a_b_weight"] == "a.b.weight" and params["p_a_b_weight_1"] == "a_b.weight"
    hist = checks._histogram(namesakes.graph)
    assert hist["aten.relu.default"] == 1 and hist["fxc10.relu.default"] == 1


def test_a_program_that_cannot_take_other_batches_is_caught():
    from torch.export import export
    check = get_check(A, "export_dynamic_batch")
    case = check.cases(False)[0]
    result = judge_evidence(check, case, collect_evidence(check, lambda m, x: export(m, (x,)), case))
    assert not result.passed and "dimension 0" in result.message


@pytest.mark.parametrize("make, said", [
    (lambda m, x: m(torch.randn(4, 5)), "must keep the example's size"),
    (lambda m, x: export(m, (x,), dynamic_shapes=({1: Dim("b")},)), "specialised a dimension"),
    (lambda m, x: export(m, (x,), dynamic_shapes={"x": {0: Dim("b")}}), "names of forward's arguments"),
    (lambda m, x: export(m, x), "takes the example inputs as a tuple"),
    (lambda m, x: torch.nn.Conv2d(3, 4, 3).double()(torch.randn(1, 3, 5, 5)), "tensors of two dtypes"),
], ids=["guard failed", "specialised", "dict keys", "args not a tuple", "float32 meets float64"])
def test_export_errors_get_their_hint(make, said):
    """Export's usual errors, raised by torch itself, each get the hint of their signature."""
    from autograder.checks.errors import hint_for_error
    model, x = torch.nn.Linear(3, 2), torch.randn(4, 3)
    if said == "must keep the example's size":
        model = export(model, (x,)).module()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as raised:
            make(model, x)
    hint = hint_for_error(type(raised.value).__name__, str(raised.value))
    assert hint and said in hint, (type(raised.value).__name__, str(raised.value)[:200], hint)


@pytest.mark.parametrize("dim, upper", [(Dim("batch"), None), (Dim("batch", max=4), 4), (Dim.AUTO, None)],
                         ids=["no bound", "max=4", "Dim.AUTO"])
def test_the_evidence_knows_the_batch_range(dim, upper):
    """A bounded batch is told apart from a static one: the evidence carries the range's upper end."""
    from autograder.checks.ex10_export.evidence import _upper_bound
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = export(torch.nn.Linear(3, 2), (torch.randn(2, 3),), dynamic_shapes=({0: dim},))
    user = next(n for n in ep.graph.nodes if n.name in ep.graph_signature.user_inputs)
    assert _upper_bound(ep, user.meta["val"].shape[0]) == upper
