"""Does the ex02_nodes check library pass the solution, fail the stubs, and kill every mutant with its hint?"""
from __future__ import annotations

from pathlib import Path

import pytest

from autograder.checks.framework import Case, collect_evidence, get_check, judge_evidence
from autograder.coursedata.exercises import functions
from autograder.coursedata.mutants import load, run_answer
from autograder.grader.validate import judge_alternative, judge_mutant
from autograder.grader.notebook import answer_cells, answer_namespace, grade_id, read_notebook, stub_solution
from autograder.grader.notebook import test_cells as notebook_test_cells

A = "ex02_nodes"
ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions" / A / f"{A}.ipynb"
FUNCTIONS = functions(A)
MUTANTS, ALTERNATIVES = load(A)


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


# ------------------------------------------------------------------- what is special in these checks

def test_expected_keyerror_reaches_the_judge(solution):
    """An unknown node name must raise KeyError: the core passes the raised error to the judge.

    This needs autograder.checks.framework.judge_evidence to hand `{"__raised__": ...}` evidence to the judge when the
    case has data["raises"]; without that, every answer (the solution too) fails the unknown-name case.
    """
    check = get_check(A, "consumers")
    case = next(c for c in check.cases(False) if "raises" in c.data)
    evidence = collect_evidence(check, solution["consumers"], case)
    raised = evidence["__value__"]   # consumers must leave gm unchanged: the error comes wrapped with its snapshots
    assert raised["__raised__"] == "KeyError" and case.data["node"] in raised["message"]
    assert judge_evidence(check, case, evidence).passed

    def wrong_error(gm, node_name):
        raise ValueError(node_name)

    result = judge_evidence(check, case, collect_evidence(check, wrong_error, case))
    assert not result.passed and "expected KeyError" in result.message


def test_an_unexpected_keyerror_still_fails(solution):
    """Only cases marked data["raises"] accept an error: a KeyError on a known node is a failure."""
    check = get_check(A, "consumers")
    case = next(c for c in check.cases(False) if "raises" not in c.data)

    def always_keyerror(gm, node_name):
        raise KeyError(node_name)

    result = judge_evidence(check, case, collect_evidence(check, always_keyerror, case))
    assert not result.passed and "raised KeyError" in result.message


def test_evidence_is_plain_data(solution):
    """Evidence crosses a process boundary in hardened grading: no Node, GraphModule or Counter in it."""
    import collections

    check = get_check(A, "op_histogram")
    case = check.cases(False)[0]
    ev = collect_evidence(check, lambda gm: collections.Counter(n.op for n in gm.graph.nodes), case)["__value__"]
    assert type(ev) is dict and all(type(k) is str and type(v) is int for k, v in ev.items())
    for function in FUNCTIONS:
        check = get_check(A, function)
        for hidden in (False, True):
            for c in check.cases(hidden):
                ev = collect_evidence(check, solution[function], c)
                assert type(ev) in (dict, list, int), (function, c.label, type(ev))


def test_hidden_cases_are_not_passed_by_the_easy_answers(nb):
    """The node.name, dedupe and node.users answers pass every visible case but fail a hidden one."""
    easy = {
        "called_modules": ("def called_modules(gm):\n"
                           "    return [n.name for n in gm.graph.nodes if n.op == 'call_module']\n"),
        "consumers": ("def consumers(gm, node_name):\n"
                      "    node = {n.name: n for n in gm.graph.nodes}[node_name]\n"
                      "    return [u.name for u in node.users]\n"),
        "graph_depth": "def graph_depth(gm):\n    return len(gm.graph.nodes) - 1\n",
    }
    for function, source in easy.items():
        fn = answer_namespace(nb, {function: source})[function]
        check = get_check(A, function)
        visible = [judge_evidence(check, c, collect_evidence(check, fn, c)).passed for c in check.cases(False)]
        hidden = [judge_evidence(check, c, collect_evidence(check, fn, c)).passed for c in check.cases(True)]
        assert all(visible) and not all(hidden), function


def test_cases_are_deterministic():
    """judge() rebuilds the case with case.make(): two calls must describe the same graph."""
    for function in FUNCTIONS:
        for hidden in (False, True):
            for case in get_check(A, function).cases(hidden):
                first, second = case.make(), case.make()
                assert str(first[0].graph) == str(second[0].graph), case.label
                assert first[1:] == second[1:]
                assert isinstance(case, Case)
