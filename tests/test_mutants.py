"""The checks tell right from wrong: every mutant loses points with its intended hint; every alternative passes."""
from __future__ import annotations

import pytest

from autograder.coursedata.mutants import evaluate, load
from conftest import ROOT, assignments
from test_course import CONTRACT


@pytest.mark.parametrize("assignment", assignments())
def test_every_graded_function_has_five_mutants_and_an_alternative(assignment):
    mutants, alternatives = load(assignment)
    for fn in CONTRACT[assignment]:
        assert sum(m.function == fn for m in mutants) >= 5, f"{assignment}.{fn}: fewer than 5 mutants"
        assert sum(a.function == fn for a in alternatives) >= 1, f"{assignment}.{fn}: no alternative answer"
    for m in mutants:
        assert m.hint.strip() and m.why.strip(), f"{assignment}.{m.function}: a mutant without hint or reason"


@pytest.mark.parametrize("assignment", assignments())
def test_all_mutants_killed_with_their_hint_and_all_alternatives_pass(assignment):
    if (ROOT / "tests" / f"test_{assignment}.py").exists():
        pytest.skip(f"tests/test_{assignment}.py runs each mutant and alternative of {assignment} as its own test")
    outcomes = evaluate(assignment, ROOT / "solutions")
    failures = [f"{o.kind} {o.function} ({o.why}): {o.detail[:300]}" for o in outcomes if not o.ok]
    assert not failures, "\n".join(failures)
