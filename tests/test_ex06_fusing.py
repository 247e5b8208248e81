"""Does the ex06_fusing check library pass the solution, fail the stubs, and kill every mutant with its hint?"""
from __future__ import annotations

import pytest
import torch
import torch.fx as fx
import torch.nn as nn

from autograder.checks import ex06_fusing as checks
from autograder.checks.framework import collect_evidence, get_check, judge_evidence, run_cases
from autograder.coursedata.exercises import functions
from fxcourse_instructor.mutants import load, run_answer
from autograder.grader.quality.validate import mutant_cell
from autograder.course.notebook import answer_namespace
from exercise_suite import exercise_tests

A = "ex06_fusing"
FUNCTIONS = functions(A)
MUTANTS = load(A)[0]

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py

# fixtures nb, solution; the tests every exercise has (tests/exercise_suite.py), evidence of two hidden cases
globals().update(exercise_tests(A, evidence_cases=lambda check: check.cases(True)[:2]))


def test_brief_mutants_are_present():
    """The wrong answers the curriculum names are among the mutants."""
    whys = " | ".join(m.why for m in MUTANTS).lower()
    for needle in ("training", "two sites", "eps", "wrong order", "pairs only", "in place", "name"):
        assert needle in whys, needle


@pytest.mark.parametrize("function", FUNCTIONS)
def test_cases_are_deterministic(function):
    """The worker and the judge each call case.make(): both must build the same inputs and weights."""
    check = get_check(A, function)
    for hidden in (False, True):
        for case in check.cases(hidden):
            a, b = case.make(), case.make()
            pa, pb = checks._probe(a[0]), checks._probe(b[0])
            assert len(pa) == len(pb) == 1 and torch.equal(pa[0], pb[0]), case.label
            for ma, mb in zip(a, b):
                sa, sb = ma.state_dict(), mb.state_dict()
                assert sa.keys() == sb.keys(), case.label
                assert all(torch.equal(sa[k], sb[k]) for k in sa), case.label


def test_training_mode_cases_expect_a_value_error(solution):
    """A raised ValueError is what the training-mode cases want.

    This needs autograder.checks.framework.judge_evidence to hand a raised error to the judge when the case's
    data names one (data={"raises": "ValueError"}), the convention ex02_nodes uses too.
    """
    check = get_check(A, "fuse_conv_bn")
    cases = [c for h in (False, True) for c in check.cases(h) if c.data.get("raises")]
    # the whole model (twice: one with nothing to fold), one BatchNorm2d after a conv (twice: one with a submodule
    # nobody calls), gm alone, one BatchNorm2d after a relu, one without running statistics
    assert len(cases) == 7
    for case in cases:
        ev = collect_evidence(check, solution["fuse_conv_bn"], case)
        # wrapped twice: with the learner's fold_bn_into_conv ("own") and the course's, each with the snapshots
        # of gm before and after (a raise must leave it unchanged)
        assert set(ev) == {"__helpers__", "own", "reference"}, set(ev)
        assert ev["own"]["__value__"].get("__raised__") == "ValueError", ev
        result = judge_evidence(check, case, ev)
        assert result.passed, result.message

    def wrong_error(gm):
        raise AssertionError("Fusion only for eval!")

    result = judge_evidence(check, cases[0], collect_evidence(check, wrong_error, cases[0]))
    assert not result.passed and "expected ValueError" in result.message


def test_judge_rejects_an_identity_pass(solution):
    """A pass that returns its input unchanged keeps the outputs right: the structure checks must catch it."""
    for function in ("fuse_consecutive_linears", "fuse_conv_bn"):
        check = get_check(A, function)
        case = check.cases(False)[0]
        result = judge_evidence(check, case, collect_evidence(check, lambda gm: gm, case))
        assert not result.passed
        assert "not fused" in result.message or "still called" in result.message


# ------------------------------------------------------- torch behaviour the lesson and the statement rely on

def test_torch_reference_fuser_is_still_wrong_on_a_shared_conv():
    """Lesson 06 shows optimization.fuse breaking SharedConvNet; if torch fixes it, the lesson must change."""
    from torch.fx.experimental.optimization import fuse

    from fxplayground import SharedConvNet
    torch.manual_seed(0)
    model = checks._randomize_bn(SharedConvNet(), 0).eval()
    x = torch.randn(2, 4, 8, 8)
    with torch.no_grad():
        diff = (fuse(model)(x) - model(x)).abs().max().item()
    assert diff > 1e-2


def test_tracing_leaves_container_modules_in_training_mode():
    """Why fuse_conv_bn must not test every submodule's .training (the statement says so)."""
    from fxplayground import LinearChain
    gm = fx.symbolic_trace(LinearChain((4, 8, 4)).eval())
    assert not gm.training and not gm.get_submodule("layers.0").training
    assert isinstance(gm.layers, nn.Module) and gm.layers.training


# ------------------------------------------------ a failure caused by another graded function costs points there

HELPER_OF = {"fuse_linear_pair": "fuse_consecutive_linears", "fold_bn_into_conv": "fuse_conv_bn"}


@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m.function in HELPER_OF],
                         ids=[f"{m.function}: {m.why}" for m in MUTANTS if m.function in HELPER_OF])
def test_a_right_pass_keeps_its_points_when_the_helper_it_calls_is_wrong(nb, mutant):
    """A wrong fold_bn_into_conv loses points in its own test; the right fuse_conv_bn that calls it does not."""
    ns = answer_namespace(nb, {mutant.function: mutant_cell(nb, mutant)})
    user = HELPER_OF[mutant.function]
    check = get_check(A, user)
    results = run_cases(check, ns[user], check.all_cases(True), stop_at_first=False)  # visible, then hidden
    failed = [r for r in results if not r.passed]
    assert not failed, f"{user} loses points for the wrong {mutant.function} ({mutant.why}):\n{failed[0].text}"
    notes = [r.message for r in results if r.message != "passed"]
    assert all(mutant.function in n and "course's" in n for n in notes), notes


def test_a_wrong_pass_with_a_wrong_helper_still_fails(nb):
    pair_only = next(m for m in MUTANTS if m.function == "fuse_consecutive_linears" and "pairs only" in m.why)
    wrong_pair = next(m for m in MUTANTS if m.function == "fuse_linear_pair" and "W1 @ W2" in m.why)
    ns = answer_namespace(nb, {m.function: mutant_cell(nb, m) for m in (pair_only, wrong_pair)})
    passed, text = run_answer(A, "fuse_consecutive_linears", ns)
    assert not passed and pair_only.hint.lower() in text.lower(), text



def test_a_square_chain_fused_the_wrong_way_round_is_named_from_its_weights(nb):
    """Only square weights can be multiplied the wrong way round without an error; the fused layer's own weight
    then shows it, and the failure names that layer and its chain."""
    from autograder.checks.ex06_fusing.cases import _model_case
    from fxplayground import LinearChain
    wrong_way = next(m for m in MUTANTS if m.function == "fuse_consecutive_linears" and "wrong way round" in m.why)
    ns = answer_namespace(nb, {wrong_way.function: mutant_cell(nb, wrong_way)})
    case = _model_case("a square chain 6->6->6->6", lambda: LinearChain((6, 6, 6, 6)), 3, (4, 6))
    check = get_check(A, "fuse_consecutive_linears")
    result = judge_evidence(check, case, collect_evidence(check, ns[wrong_way.function], case))
    assert not result.passed and "other way round" in result.hint and "'layers.0' -> 'layers.1'" in result.hint, result
    right = answer_namespace(nb, {})["fuse_consecutive_linears"]
    assert judge_evidence(check, case, collect_evidence(check, right, case)).passed
