"""Does the ex06_fusing check library pass the solution, fail the stubs, and kill every mutant with its hint?"""
from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import torch
import torch.fx as fx
import torch.nn as nn

from autograder.checks import ex06_fusing as checks
from autograder.checks.framework import collect_evidence, get_check, judge_evidence
from autograder.coursedata.exercises import functions
from autograder.coursedata.mutants import load, run_answer
from autograder.grader.validate import judge_alternative, judge_mutant, mutant_cell
from autograder.grader.notebook import answer_cells, answer_namespace, grade_id, read_notebook, stub_solution
from autograder.grader.notebook import test_cells as notebook_test_cells

A = "ex06_fusing"
ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions" / A / f"{A}.ipynb"
FUNCTIONS = functions(A)
MUTANTS, ALTERNATIVES = load(A)


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


@pytest.fixture(scope="module")
def nb():
    return read_notebook(SOLUTION)


@pytest.fixture(scope="module")
def solution(nb):
    return answer_namespace(nb)


def test_the_notebook_follows_the_cell_contract(nb):
    """Is every graded function alone in an answer cell named after it, with a test cell test_<name>?"""
    answers = [grade_id(c) for c in answer_cells(nb)]
    tests = [grade_id(c) for c in notebook_test_cells(nb)]
    assert [a for a in answers if not a.startswith("quiz_")] == list(FUNCTIONS)
    assert [t for t in tests if not t.startswith("test_quiz_")] == [f"test_{f}" for f in FUNCTIONS]
    quizzes = [a for a in answers if a.startswith("quiz_")]
    assert len(quizzes) >= 3 and [f"test_{q}" for q in quizzes] == [t for t in tests if t.startswith("test_quiz_")]
    ids = [c.id for c in nb.cells]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("function", FUNCTIONS)
def test_solution_passes_visible_and_hidden_cases(solution, function):
    passed, text = run_answer(A, function, solution)
    assert passed, text


def test_every_test_cell_of_the_solution_passes(nb, solution):
    """The test cells as nbgrader runs them (hidden tests and quiz keys included) pass on the solution."""
    ns = dict(solution)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cell in notebook_test_cells(nb):
            exec(compile(cell.source, f"<{grade_id(cell)}>", "exec"), ns)  # noqa: S102 (course code)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_released_stub_fails_every_case(nb, function):
    """The stub raises NotImplementedError, and every case (visible and hidden) says so."""
    cell = next(c for c in answer_cells(nb) if grade_id(c) == function)
    ns = answer_namespace(nb, {function: stub_solution(cell.source)})
    check = get_check(A, function)
    for hidden in (False, True):
        for case in check.cases(hidden):
            result = judge_evidence(check, case, collect_evidence(check, ns[function], case))
            assert not result.passed, f"the stub passes {case.label}"
            assert "not implemented" in result.message


@pytest.mark.parametrize("mutant", MUTANTS, ids=[f"{m.function}: {m.why}" for m in MUTANTS])
def test_mutant_is_killed_with_its_hint(nb, mutant):
    outcome = judge_mutant(A, nb, mutant)
    assert outcome.ok, outcome.detail


@pytest.mark.parametrize("alternative", ALTERNATIVES, ids=[f"{a.function}: {a.why}" for a in ALTERNATIVES])
def test_alternative_passes(nb, alternative):
    outcome = judge_alternative(A, nb, alternative)
    assert outcome.ok, outcome.detail


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
    assert len(cases) == 2
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


def test_evidence_is_plain_data(solution):
    """Evidence crosses a process boundary in hardened grading: it must survive weights_only loading."""
    import io
    for function in FUNCTIONS:
        check = get_check(A, function)
        for case in check.cases(True)[:2]:
            ev = collect_evidence(check, solution[function], case)
            buf = io.BytesIO()
            torch.save(ev, buf)
            buf.seek(0)
            torch.load(buf, weights_only=True)


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
    passed, text = run_answer(A, user, ns)
    assert passed, f"{user} loses points for the wrong {mutant.function} ({mutant.why}):\n{text}"
    check = get_check(A, user)
    notes = [r.message for h in (False, True) for c in check.cases(h)
             for r in [judge_evidence(check, c, collect_evidence(check, ns[user], c))] if not r.message == "passed"]
    assert all(mutant.function in n and "course's" in n for n in notes), notes


def test_a_wrong_pass_with_a_wrong_helper_still_fails(nb):
    pair_only = next(m for m in MUTANTS if m.function == "fuse_consecutive_linears" and "pairs only" in m.why)
    wrong_pair = next(m for m in MUTANTS if m.function == "fuse_linear_pair" and "W1 @ W2" in m.why)
    ns = answer_namespace(nb, {m.function: mutant_cell(nb, m) for m in (pair_only, wrong_pair)})
    passed, text = run_answer(A, "fuse_consecutive_linears", ns)
    assert not passed and pair_only.hint.lower() in text.lower(), text
