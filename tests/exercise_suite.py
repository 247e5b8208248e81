"""The tests every exercise has, written once: each tests/test_exNN_*.py installs them with

    globals().update(exercise_tests("exNN_topic", ...))

(pytest collects fixtures and test_ functions from a module's globals) and adds what is special in its checks.

What they assert: the solution notebook follows the cell contract, the solution passes every visible and hidden
case and every test cell of the solution passes as nbgrader runs it (both read from the one fresh-kernel run of
the solution that tests/test_course.py checks too: conftest's solution_run), the released stub fails every case
saying it is not implemented, every mutant is killed with its hint and every alternative passes, and every
graded function has a near miss whose not_hints could fail (tests/near_miss.py).
"""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
import torch

from autograder.checks.framework import collect_evidence, get_check, judge_evidence
from autograder.coursedata.exercises import functions
from fxcourse_instructor.mutants import load
from autograder.course.notebook import answer_cells, answer_namespace, grade_id, read_notebook, stub_solution
from autograder.course.notebook import test_cells as notebook_test_cells
from autograder.grader.quality.validate import judge_alternative, judge_mutant

ROOT = Path(__file__).resolve().parents[1]


def solution_notebook(assignment: str) -> Path:
    return ROOT / "solutions" / assignment / f"{assignment}.ipynb"


def assert_cell_contract(nb, assignment: str, quizzes: int = 3, points: tuple[int, int] | None = None) -> None:
    """Every graded function alone in an answer cell named after it, in the course's order, with a test cell
    test_<name>; at least `quizzes` quiz questions, each with its test cell; no two cells share an id; with
    `points` = (low, high), every graded function's test cell is worth low to high points."""
    names = functions(assignment)
    answers = [grade_id(c) for c in answer_cells(nb)]
    tests = [grade_id(c) for c in notebook_test_cells(nb)]
    assert [a for a in answers if not a.startswith("quiz_")] == list(names)
    assert [t for t in tests if not t.startswith("test_quiz_")] == [f"test_{f}" for f in names]
    quiz = [a for a in answers if a.startswith("quiz_")]
    assert len(quiz) >= quizzes and [f"test_{q}" for q in quiz] == [t for t in tests if t.startswith("test_quiz_")]
    ids = [c.id for c in nb.cells]
    assert len(ids) == len(set(ids))
    if points is not None:
        low, high = points
        worth = {grade_id(c): c.metadata["nbgrader"]["points"] for c in notebook_test_cells(nb)}
        assert all(low <= worth[f"test_{f}"] <= high for f in names), worth


def exercise_tests(assignment: str, *, quizzes: int = 3, points: tuple[int, int] | None = None,
                   contract: bool = True, test_cells: bool = True,
                   stub_says: str = "not implemented", evidence_cases=None, evidence_unwrapped: bool = False) -> dict:
    """The fixtures `nb` (the solution notebook) and `solution` (its answer namespace) and the generic tests of
    `assignment`, by name.

    quizzes, points: what the cell-contract test asks (see assert_cell_contract); contract=False leaves that test
    out (for a file that asserts the contract within a test of its own). test_cells=False leaves out the test
    that reads every test cell of the solution as a fresh kernel ran it. stub_says: the text every case's message
    for a released stub must contain.

    evidence_cases: a function from a check to the cases whose evidence (collected from the solution) must
    survive torch.save and weights_only loading, as in hardened grading it crosses a process boundary; None
    leaves that test out. evidence_unwrapped=True asks too that the answer's evidence is wrapped with its
    snapshots exactly when the check wants its inputs unchanged, and that no key of the answer's own starts with
    "__" (those keys are the framework's).
    """
    path = solution_notebook(assignment)
    names = functions(assignment)
    mutants, alternatives = load(assignment)

    @pytest.fixture(scope="module")
    def nb():
        return read_notebook(path)

    @pytest.fixture(scope="module")
    def solution(nb):
        return answer_namespace(nb)

    def test_the_notebook_follows_the_cell_contract(nb):
        """Is every graded function alone in an answer cell named after it, with a test cell test_<name>?"""
        assert_cell_contract(nb, assignment, quizzes, points)

    def said_by_test_cells(solution_run) -> dict[str, str]:
        """What each test cell of the solution printed in the fresh kernel that ran it (conftest's solution_run,
        once per test run; tests/test_course.py checks the same run for errors and stderr); a cell that raised
        fails the test, naming its error."""
        said = {}
        for cell in notebook_test_cells(solution_run(assignment)):
            errors = [f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error"]
            assert not errors, f"{grade_id(cell)}: {errors}"
            said[grade_id(cell)] = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        return said

    @pytest.mark.parametrize("function", names)
    def test_solution_passes_visible_and_hidden_cases(solution_run, function):
        """Its test cell, run on the solution, passes every visible case, then every hidden one (run_check says
        so for each; it raises at the first failing case)."""
        said = said_by_test_cells(solution_run)[f"test_{function}"]
        for kind in ("visible", "hidden"):
            assert re.search(rf"\u2714 {function}: [1-9]\d* {kind} case\(s\) passed", said), (kind, said)

    def test_every_test_cell_of_the_solution_passes(solution_run):
        """The test cells as nbgrader runs them (hidden tests and quiz keys included) pass on the solution, in a
        fresh kernel: none raises, and each says what it passed."""
        said = said_by_test_cells(solution_run)
        assert said and all(text.startswith("\u2714 ") for text in said.values()), said

    @pytest.mark.parametrize("function", names)
    def test_released_stub_fails_every_case(nb, function):
        """The stub raises NotImplementedError, and every case (visible and hidden) says so."""
        cell = next(c for c in answer_cells(nb) if grade_id(c) == function)
        ns = answer_namespace(nb, {function: stub_solution(cell.source)})
        check = get_check(assignment, function)
        cases = check.cases(False) + check.cases(True)
        assert cases, f"{function} has no cases"
        for case in cases:
            result = judge_evidence(check, case, collect_evidence(check, ns[function], case))
            assert not result.passed, f"the stub passes {case.label}"
            assert stub_says in result.message, (case.label, result.message)

    @pytest.mark.parametrize("mutant", mutants, ids=[f"{m.function}: {m.why}" for m in mutants])
    def test_mutant_is_killed_with_its_hint(nb, mutant):
        from near_miss import ran

        outcome = judge_mutant(assignment, nb, mutant, ran=ran(assignment, nb, mutant))
        assert outcome.ok, outcome.detail

    @pytest.mark.parametrize("alternative", alternatives, ids=[f"{a.function}: {a.why}" for a in alternatives])
    def test_alternative_passes(nb, alternative):
        outcome = judge_alternative(assignment, nb, alternative)
        assert outcome.ok, outcome.detail

    def test_evidence_is_plain_data(solution):
        """Evidence crosses a process boundary in hardened grading: it must survive weights_only loading."""
        for function in names:
            check = get_check(assignment, function)
            for case in evidence_cases(check):
                ev = collect_evidence(check, solution[function], case)
                if evidence_unwrapped:
                    if check.unchanged:  # the answer's evidence, with snapshots of the inputs before and after
                        assert set(ev) == {"__value__", "__before__", "__after__"}, set(ev)
                        ev = ev["__value__"]
                    if case.again is not None:   # given again: the right answer's two values differ
                        assert set(ev) == {"__again__", "__second__"} and ev["__again__"] is False, ev
                        ev = ev["__second__"]
                    assert not (isinstance(ev, dict) and any(str(k).startswith("__") for k in ev)), ev
                buf = io.BytesIO()
                torch.save(ev, buf)
                buf.seek(0)
                torch.load(buf, weights_only=True)

    tests = {
        "nb": nb,
        "solution": solution,
        "test_the_notebook_follows_the_cell_contract": test_the_notebook_follows_the_cell_contract,
        "test_solution_passes_visible_and_hidden_cases": test_solution_passes_visible_and_hidden_cases,
        "test_every_test_cell_of_the_solution_passes": test_every_test_cell_of_the_solution_passes,
        "test_released_stub_fails_every_case": test_released_stub_fails_every_case,
        "test_mutant_is_killed_with_its_hint": test_mutant_is_killed_with_its_hint,
        "test_alternative_passes": test_alternative_passes,
    }
    if evidence_cases is not None:
        tests["test_evidence_is_plain_data"] = test_evidence_is_plain_data
    if not contract:
        del tests["test_the_notebook_follows_the_cell_contract"]
    if not test_cells:
        del tests["test_every_test_cell_of_the_solution_passes"]
    from near_miss import near_miss_tests  # every graded function has a near miss that proves its not_hints

    tests.update(near_miss_tests(assignment))
    return tests
