"""Wrong answers a learner might really write (mutants) and right answers written differently (alternatives).

Each exercise has a module `instructor/fxcourse_instructor/mutants/exNN_topic.py` with `MUTANTS` and `ALTERNATIVES`. A mutant is
killed when the checks fail it *and* say what its author needs to hear: `hint` must appear in the failure's
message or hint. Every alternative must pass every check. `autograder.grader.quality.validate.evaluate` measures both
against the solution notebook; CI requires 100%.
"""
from __future__ import annotations

import importlib
import json
from dataclasses import KW_ONLY, dataclass
from pathlib import Path

from autograder.checks.framework import get_check

__all__ = ["Mutant", "MutantError", "apply_edits", "Alternative", "load", "run_answer", "from_task_text"]


class MutantError(ValueError):
    """A mutant no longer applies to the solution it edits (the solution changed under it)."""


def apply_edits(solution: str, edits: tuple[tuple[str, str], ...], label: str) -> str:
    """The solution's answer cell with each `(old, new)` edit applied in turn; MutantError naming `label` and the
    text when an `old` does not occur exactly once, or when there is no edit at all."""
    source = "\n".join(line for line in solution.splitlines() if line.strip() not in SOLUTION_MARKERS) + "\n"
    if not edits:
        raise MutantError(f"{label}: no edits: a mutant must change the solution")
    for old, new in edits:
        found = source.count(old)
        if found != 1:
            raise MutantError(f"{label}: the text {old!r} occurs {found} times in the solution's answer cell, "
                              "exactly once expected: the solution changed, so update this edit's old text (and "
                              "its new one) to the answer cell as it is now")
        source = source.replace(old, new)
    return source


SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


@dataclass(frozen=True)
class Mutant:
    """A plausible wrong answer, stated as what differs from the solution, and the text its failure must mention.

    `edits` are `(solution text, wrong text)` pairs applied in order to the solution's answer cell (marker lines
    removed); each solution text must occur there exactly once, so a change to the solution that orphans a
    mutant fails loudly. An answer unlike the solution is a whole answer cell of its own, `source` (the wrong
    answers written from the task text alone, without the solution at hand, are all of this kind).

    `not_hints` are hints this answer must not be shown: a wrong answer that already does right what a hint says
    (a near miss of that hint's mistake) proves that the hint fires only on its own evidence.
    """

    function: str
    why: str
    _: KW_ONLY
    hint: str
    edits: tuple[tuple[str, str], ...] = ()
    not_hints: tuple[str, ...] = ()
    source: str = ""

    def __post_init__(self) -> None:
        if bool(self.edits) == bool(self.source):
            raise MutantError(f"mutant {self.function!r} ({self.why}): give either edits of the solution or a whole "
                              f"answer cell as source, not {'both' if self.source else 'neither'}")
        if isinstance(self.not_hints, str):
            raise TypeError(f"mutant {self.function!r} ({self.why}): not_hints is a tuple of hint texts, "
                            f"got the string {self.not_hints!r} (write ({self.not_hints!r},))")
        clash = [h for h in self.not_hints if h.lower() in self.hint.lower() or self.hint.lower() in h.lower()]
        if clash:
            raise MutantError(f"mutant {self.function!r} ({self.why}): not_hints {clash!r} overlap its own hint "
                              f"{self.hint!r}")

    def cell(self, solution: str) -> str:
        """The wrong answer cell: `source`, or the solution's answer cell with the edits applied."""
        if self.source:
            return self.source
        return apply_edits(solution, self.edits, f"mutant {self.function!r} ({self.why})")


@dataclass(frozen=True)
class Alternative:
    """A correct answer written differently from the solution: a whole answer cell (`source`), or, where it
    differs from the solution in a part of a long cell only, that part as `edits` of the solution."""

    function: str
    why: str
    source: str = ""
    _: KW_ONLY
    edits: tuple[tuple[str, str], ...] = ()

    def cell(self, solution: str) -> str:
        """The right answer cell: `source`, or the solution's answer cell with the edits applied."""
        if self.source:
            return self.source
        return apply_edits(solution, self.edits, f"alternative {self.function!r} ({self.why})")


def from_task_text(assignment: str) -> tuple[list[Mutant], list[Alternative]]:
    """The wrong and right answers of one exercise written from its task text alone, by someone who had not read
    the checks: data in task_text/<assignment>.json, a list of {"kind": "wrong" or "right", "function", "why",
    "source", and for a wrong one "hint" and "not_hints"}."""
    path = Path(__file__).parent / "task_text" / f"{assignment}.json"
    items = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
    wrong = [Mutant(i["function"], i["why"], hint=i["hint"], not_hints=tuple(i.get("not_hints", ())),
                    source=i["source"]) for i in items if i["kind"] == "wrong"]
    right = [Alternative(i["function"], i["why"], i["source"]) for i in items if i["kind"] == "right"]
    return wrong, right


def load(assignment: str) -> tuple[list[Mutant], list[Alternative]]:
    """The mutants and alternatives of one exercise."""
    module = importlib.import_module(f"fxcourse_instructor.mutants.{assignment}")
    return list(module.MUTANTS), list(module.ALTERNATIVES)


def run_answer(assignment: str, function: str, namespace: dict) -> tuple[bool, str]:
    """Run all cases (visible, then hidden) of `function` on namespace[function]; (passed, failure text)."""
    from autograder.checks.framework import run_cases
    check = get_check(assignment, function)
    failed = [r for r in run_cases(check, namespace.get(function), check.all_cases(True)) if not r.passed]
    return (False, failed[0].text) if failed else (True, "")
