"""Every clause of every graded function has a case, and that case fails an answer that ignores the clause
(tests/test_course.py checks that every graded function has its clauses)."""
from __future__ import annotations

import warnings

import pytest
import torch

from autograder.coursedata.clauses import clause_cases, killer_source, load
from autograder.checks.framework import collect_evidence, get_check, judge_evidence
from autograder.grader.notebook import answer_cells, answer_namespace, grade_id, read_notebook
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


@pytest.mark.parametrize("assignment,clause", CLAUSES, ids=[f"{a}.{c.function}: {c.rule}" for a, c in CLAUSES])
def test_a_case_of_the_clause_fails_an_answer_that_ignores_it(assignment, clause):
    nb = _nb(assignment)
    cell = next(c.source for c in answer_cells(nb) if grade_id(c) == clause.function)
    ns = answer_namespace(nb, {clause.function: killer_source(assignment, clause, cell)})
    check = get_check(assignment, clause.function)
    failures = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in clause_cases(check, clause):
            result = judge_evidence(check, case, collect_evidence(check, ns[clause.function], case))
            if not result.passed:
                failures.append(result.message + (f"\nHint: {result.hint}" if result.hint else ""))
    assert failures, f"no case of {clause.cases} fails an answer that ignores {clause.rule!r}"
    if clause.hint:
        assert any(clause.hint.lower() in f.lower() for f in failures), \
            f"the failure does not say {clause.hint!r}:\n{failures[0]}"
