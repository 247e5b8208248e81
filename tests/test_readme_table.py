"""README's table of mutants and alternatives says what the course holds: per exercise, the hand-written mutants,
the automatic ones (with those listed as equivalent) and the alternatives, each count as the course data and the
solutions give it. That every one is caught (or passes) is asserted where they run: each tests/test_exNN_*.py,
tests/test_automutants.py and `fxcourse validate`; here the table is held to the same numbers."""
from __future__ import annotations

import re

import pytest

from autograder.coursedata.exercises import EXERCISES
from fxcourse_instructor.mutants import load
from fxcourse_instructor.mutants.equivalent import EQUIVALENT
from autograder.grader.quality.automutants import generate
from conftest import ROOT

ROW = re.compile(r"^\| (ex\d\d_\w+) \| (\d+)/(\d+) \| (\d+)/(\d+) \((\d+)\) \| (\d+)/(\d+) \|$", re.M)
ALL = re.compile(r"^\| \*\*all\*\* \| \*\*(\d+)/(\d+) \(100%\)\*\* \| \*\*(\d+)/(\d+) \(100%, (\d+) equivalent\)\*\* "
                 r"\| \*\*(\d+)/(\d+)\*\* \|$", re.M)


def expected(assignment: str) -> tuple[int, ...]:
    """(hand-written, automatic that change behaviour, equivalent, alternatives) as the table states them."""
    mutants, alternatives = load(assignment)
    auto = len(generate(assignment, ROOT / "solutions"))
    equivalent = len(EQUIVALENT.get(assignment, {}))
    return len(mutants), auto - equivalent, equivalent, len(alternatives)


@pytest.fixture(scope="module")
def table() -> dict[str, tuple[int, ...]]:
    text = (ROOT / "README.md").read_text()
    rows = {}
    for m in ROW.finditer(text):
        hk, hn, ak, an, eq, pk, pn = map(int, m.groups()[1:])
        assert hk == hn and ak == an and pk == pn, f"README says not all of {m.group(1)} are caught or pass"
        rows[m.group(1)] = (hn, an, eq, pn)
    return rows


def test_the_table_has_one_row_per_exercise(table):
    assert list(table) == [e.id for e in EXERCISES]


@pytest.mark.parametrize("assignment", [e.id for e in EXERCISES])
def test_a_row_counts_what_the_exercise_holds(table, assignment):
    assert table[assignment] == expected(assignment), \
        f"README's row for {assignment} says (hand-written, automatic, equivalent, alternatives) = " \
        f"{table[assignment]}; the course holds {expected(assignment)}"


def test_the_total_row_adds_up(table):
    m = ALL.search((ROOT / "README.md").read_text())
    assert m, "README's table has no total row"
    hk, hn, ak, an, eq, pk, pn = map(int, m.groups())
    sums = [sum(row[i] for row in table.values()) for i in range(4)]
    assert (hk, ak, eq, pk) == (hn, an, sums[2], pn) and [hn, an, eq, pn] == sums
