"""Every clause of every graded function has a case, and one of its hidden cases fails an answer that ignores the
clause (tests/test_course.py checks that every graded function has its clauses)."""
from __future__ import annotations

import warnings

import pytest
import torch

from fxcourse_instructor.clauses import clause_cases, killer_source, load
from autograder.checks.framework import collect_evidence, get_check, judge_evidence
from autograder.course.notebook import answer_cells, answer_namespace, grade_id, read_notebook
from conftest import ROOT, assignments



def _clauses(assignment: str) -> list:
    """The clauses of one exercise; none when it has no clauses module yet (tests/test_course.py reports that)."""
    try:
        return load(assignment)
    except ModuleNotFoundError:
        return []


CLAUSES = [(a, c) for a in assignments() for c in _clauses(a)]
_NOTEBOOKS: dict = {}


def _nb(assignment):
    if assignment not in _NOTEBOOKS:
        _NOTEBOOKS[assignment] = read_notebook(ROOT / "solutions" / assignment / f"{assignment}.ipynb")
    return _NOTEBOOKS[assignment]


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


@pytest.mark.parametrize("assignment", assignments())
def test_every_clause_has_a_case(assignment):
    """A clause that names no existing case of its check is a clause nothing grades."""
    missing = []
    for c in _clauses(assignment):
        check = get_check(assignment, c.function)
        labels = [case.label for h in (False, True) for case in check.cases(h)]
        for prefix in c.cases:
            if not any(label.startswith(prefix) for label in labels):
                missing.append(f"{c.function}: {c.rule!r} names the case {prefix!r}, which does not exist")
        if not c.cases:
            missing.append(f"{c.function}: {c.rule!r} has no case")
    assert not missing, "\n".join(missing)


def _failure(check, fn, case) -> str | None:
    """What the check says when `fn` fails `case` (its message and hint), None when it passes."""
    result = judge_evidence(check, case, collect_evidence(check, fn, case))
    return None if result.passed else result.message + (f"\nHint: {result.hint}" if result.hint else "")


@pytest.mark.parametrize("assignment,clause", CLAUSES, ids=[f"{a}.{c.function}: {c.rule}" for a, c in CLAUSES])
def test_a_hidden_case_of_the_clause_fails_an_answer_that_ignores_it(assignment, clause):
    """The answer that ignores the clause runs on the clause's cases in the order grading runs them, visible then
    hidden (a second call may be what breaks it), up to the first hidden case that fails it with the clause's hint
    (if it has one)."""
    nb = _nb(assignment)
    cell = next(c.source for c in answer_cells(nb) if grade_id(c) == clause.function)
    fn = answer_namespace(nb, {clause.function: killer_source(assignment, clause, cell)})[clause.function]
    check = get_check(assignment, clause.function)
    hidden = clause_cases(check, clause, hidden=True)
    assert hidden, f"{clause.rule!r} names no hidden case among {clause.cases}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        visible = [t for case in clause_cases(check, clause, hidden=False) if (t := _failure(check, fn, case))]
        failures = []
        for case in hidden:
            text = _failure(check, fn, case)
            if text is not None and (not clause.hint or clause.hint.lower() in text.lower()):
                return
            failures += [text] if text is not None else []
    assert not failures, f"no hidden failure says {clause.hint!r}:\n{failures[0]}"
    assert False, (f"no hidden case of {clause.cases} fails an answer that ignores {clause.rule!r}"
                   + (f"; only a visible one does:\n{visible[0]}" if visible else ""))
