"""Wrong answers a learner might really write (mutants) and right answers written differently (alternatives).

Each exercise has a module `autograder/coursedata/mutants/exNN_topic.py` with `MUTANTS` and `ALTERNATIVES`. A mutant is
killed when the checks fail it *and* say what its author needs to hear: `hint` must appear in the failure's
message or hint. Every alternative must pass every check. `evaluate` measures both; CI requires 100%.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from autograder.checks.framework import CheckFailed, get_check, judge_evidence, collect_evidence

__all__ = ["Mutant", "MutantError", "apply_edits", "Alternative", "Outcome", "load", "run_answer", "evaluate", "misdiagnosis"]


class MutantError(ValueError):
    """A mutant no longer applies to the solution it edits (the solution changed under it)."""


def apply_edits(solution: str, edits: tuple[tuple[str, str], ...], label: str) -> str:
    """The solution's answer cell with each `(old, new)` edit applied; `old` must occur exactly once."""
    source = "\n".join(line for line in solution.splitlines() if line.strip() not in SOLUTION_MARKERS) + "\n"
    if not edits:
        raise MutantError(f"{label}: no edits: a mutant must change the solution")
    for old, new in edits:
        found = source.count(old)
        if found != 1:
            raise MutantError(f"{label}: the text {old!r} occurs {found} times in the solution's answer cell, "
                              "exactly once expected: update the mutant to the solution as it is now")
        source = source.replace(old, new)
    return source


SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


@dataclass(frozen=True)
class Mutant:
    """A plausible wrong answer, stated as what differs from the solution, and the text its failure must mention.

    `edits` are `(solution text, wrong text)` pairs applied to the solution's answer cell (marker lines removed);
    each solution text must occur there exactly once, so a change to the solution that orphans a mutant fails
    loudly. `source`, the whole wrong cell, is for answers too different from the solution to state as edits.
    """

    function: str
    why: str
    source: str = ""
    hint: str = ""
    edits: tuple[tuple[str, str], ...] = ()

    def cell(self, solution: str) -> str:
        """The wrong answer cell: the solution with the edits applied (or `source` when given)."""
        if self.source:
            return self.source
        return apply_edits(solution, self.edits, f"mutant {self.function!r} ({self.why})")


@dataclass(frozen=True)
class Alternative:
    """A correct answer written differently from the solution."""

    function: str
    why: str
    source: str


@dataclass(frozen=True)
class Outcome:
    function: str
    why: str
    kind: str           # "mutant" or "alternative"
    ok: bool            # mutant killed with its hint / alternative passed
    detail: str


def load(assignment: str) -> tuple[list[Mutant], list[Alternative]]:
    """The mutants and alternatives of one exercise."""
    module = importlib.import_module(f"autograder.coursedata.mutants.{assignment}")
    return list(module.MUTANTS), list(module.ALTERNATIVES)


def run_answer(assignment: str, function: str, namespace: dict) -> tuple[bool, str]:
    """Run all cases (visible, then hidden) of `function` on namespace[function]; (passed, failure text)."""
    from autograder.checks.framework import run_cases
    check = get_check(assignment, function)
    failed = [r for r in run_cases(check, namespace.get(function), check.all_cases(True)) if not r.passed]
    return (False, failed[0].text) if failed else (True, "")


def misdiagnosis(assignment: str, function: str, text: str) -> str | None:
    """Why the failure `text` of an answer to `function` may blame what the answer does right, or None.

    A learner must see one confirmed diagnosis: not several joined ones, and not the fault of another graded
    function (that one's own test charges for it).
    """
    import importlib
    import re

    if "; also:" in text:
        return "several diagnoses at once: at most one of them is the answer's mistake"
    others = [f for f in importlib.import_module(f"autograder.checks.{assignment}").CHECKS if f != function]
    for other in others:
        if re.search(rf"\bfix {other} first|course's {other}\b", text):
            return f"blames {other}, another graded function"
    return None


def evaluate(assignment: str, solutions: str | Path) -> list[Outcome]:
    """Run every mutant and alternative of `assignment` against its checks, in-process."""
    from autograder.grader.notebook import answer_cells, answer_namespace, grade_id, read_notebook

    nb = read_notebook(Path(solutions) / assignment / f"{assignment}.ipynb")
    mutants, alternatives = load(assignment)
    outcomes = []
    solution = {grade_id(c): c.source for c in answer_cells(nb)}
    for m in mutants:
        ns = answer_namespace(nb, {m.function: m.cell(solution[m.function])})
        passed, text = run_answer(assignment, m.function, ns)
        wrong = None if passed else misdiagnosis(assignment, m.function, text)
        ok = not passed and m.hint.lower() in text.lower() and wrong is None
        detail = "passed all checks" if passed else (text if not ok else "killed")
        if not passed and m.hint.lower() not in text.lower():
            detail = f"failed, but without the hint {m.hint!r}: {text}"
        elif wrong:
            detail = f"failed with its hint, but the failure {wrong}: {text}"
        outcomes.append(Outcome(m.function, m.why, "mutant", ok, detail))
    for a in alternatives:
        ns = answer_namespace(nb, {a.function: a.source})
        passed, text = run_answer(assignment, a.function, ns)
        outcomes.append(Outcome(a.function, a.why, "alternative", passed, "passed" if passed else text))
    return outcomes
