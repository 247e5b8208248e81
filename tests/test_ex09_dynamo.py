"""Does the ex09_dynamo check library pass the solution, fail the stubs, and kill every mutant with its hint?"""
from __future__ import annotations

import io
import warnings
from pathlib import Path

import pytest
import torch
import torch._dynamo

from autograder.checks import ex09_dynamo as checks
from autograder.checks.framework import collect_evidence, get_check, judge_evidence
from autograder.coursedata.exercises import functions
from autograder.coursedata.mutants import load, run_answer
from autograder.grader.validate import judge_alternative, judge_mutant, mutant_cell
from autograder.grader.notebook import answer_cells, answer_namespace, grade_id, read_notebook, stub_solution
from autograder.grader.notebook import test_cells as notebook_test_cells

A = "ex09_dynamo"
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
    answers = [grade_id(c) for c in answer_cells(nb)]
    tests = [grade_id(c) for c in notebook_test_cells(nb)]
    assert [a for a in answers if not a.startswith("quiz_")] == list(FUNCTIONS)
    assert [t for t in tests if not t.startswith("test_quiz_")] == [f"test_{f}" for f in FUNCTIONS]
    quizzes = [a for a in answers if a.startswith("quiz_")]
    assert len(quizzes) >= 4 and [f"test_{q}" for q in quizzes] == [t for t in tests if t.startswith("test_quiz_")]
    ids = [c.id for c in nb.cells]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("function", FUNCTIONS)
def test_solution_passes_visible_and_hidden_cases(solution, function):
    passed, text = run_answer(A, function, solution)
    assert passed, text


def test_every_test_cell_of_the_solution_passes(nb, solution):
    ns = dict(solution)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cell in notebook_test_cells(nb):
            exec(compile(cell.source, f"<{grade_id(cell)}>", "exec"), ns)  # noqa: S102 (course code)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_released_stub_fails_every_case(nb, function):
    cell = next(c for c in answer_cells(nb) if grade_id(c) == function)
    ns = answer_namespace(nb, {function: stub_solution(cell.source)})
    check = get_check(A, function)
    for hidden in (False, True):
        for case in check.cases(hidden):
            result = judge_evidence(check, case, collect_evidence(check, ns[function], case))
            assert not result.passed and "not implemented" in result.message, case.label


@pytest.mark.parametrize("mutant", MUTANTS, ids=[f"{m.function}: {m.why}" for m in MUTANTS])
def test_mutant_is_killed_with_its_hint(nb, mutant):
    outcome = judge_mutant(A, nb, mutant)
    assert outcome.ok, outcome.detail


@pytest.mark.parametrize("alternative", ALTERNATIVES, ids=[f"{a.function}: {a.why}" for a in ALTERNATIVES])
def test_alternative_passes(nb, alternative):
    outcome = judge_alternative(A, nb, alternative)
    assert outcome.ok, outcome.detail


def test_the_pitfalls_of_the_lesson_are_among_the_mutants():
    whys = " | ".join(m.why for m in MUTANTS).lower()
    for needle in ("reset", "lazy", "fullgraph", "number of graphs", "returns", "first graph only"):
        assert needle in whys, needle


def test_evidence_is_plain_data(solution):
    """Evidence crosses a process boundary in hardened grading: it must survive weights_only loading."""
    for function in FUNCTIONS:
        check = get_check(A, function)
        for case in check.cases(False):
            buf = io.BytesIO()
            torch.save(collect_evidence(check, solution[function], case), buf)
            buf.seek(0)
            torch.load(buf, weights_only=True)


def test_no_dynamo_state_leaks_out_of_a_case(solution):
    """After a case, a fresh capture of the same function reaches its backend: the check reset dynamo."""
    check = get_check(A, "compile_with_pass")
    case = check.cases(False)[0]
    assert judge_evidence(check, case, collect_evidence(check, solution["compile_with_pass"], case)).passed
    model, _ = case.make()
    seen = []
    torch.compile(model, backend=lambda gm, ex: seen.append(gm) or gm.forward)(torch.randn(2, 6))
    assert len(seen) == 1


def test_the_warm_case_defeats_an_answer_without_reset(solution):
    """The case compiled eight times before: with reset the backend sees its graph, without it nothing."""
    check = get_check(A, "capture_graphs")
    case = next(c for c in check.cases(True) if c.data.get("warm"))
    fn, x = case.make()
    seen = []
    torch.compile(fn, backend=lambda gm, ex: seen.append(gm) or gm.forward)(x)
    assert seen == []
    assert len(solution["capture_graphs"](*case.make())) == 1


def test_random_models_differ_and_each_breaks_the_graph():
    plans = {tuple(checks.BreakNet(s).plan) for s in (3, 17, 29)}
    assert len(plans) == 3
    assert all(any(step in ("item", "branch") for step in plan) for plan in plans)


def test_the_sigmoid_pass_returns_a_new_module_and_leaves_its_input():
    model = checks.PlainMLP(4)
    graphs = []
    torch.compile(model, backend=lambda gm, ex: graphs.append(gm) or gm.forward)(torch.randn(2, 4))
    before = graphs[0].code
    new = checks.SigmoidPass()(graphs[0])
    assert new is not graphs[0] and graphs[0].code == before and "sigmoid" in new.code and "relu" not in new.code


@pytest.mark.parametrize("compile_it, said", [
    (lambda f: torch.compile(f, backend="eager", fullgraph=True), "fullgraph=True every such graph break"),
    (lambda f: torch.compile(f, backend=lambda gm, ex: None), "must return a callable"),
], ids=["fullgraph", "backend returns None"])
def test_dynamo_errors_get_their_hint(compile_it, said):
    """Dynamo's usual errors, raised by torch itself, each get the hint of their signature."""
    from autograder.checks.errors import hint_for_error

    def branchy(x):
        if x.sum() > 0:
            return x * 2
        return x - 1

    torch._dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as raised:
            compile_it(branchy)(torch.ones(3))
    torch._dynamo.reset()
    hint = hint_for_error(type(raised.value).__name__, str(raised.value))
    assert hint and said in hint, (type(raised.value).__name__, str(raised.value)[:200], hint)
