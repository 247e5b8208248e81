"""Measures the checks with the course's own answers: every mutant must fail with its hint, every alternative pass."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from autograder.coursedata.exercises import functions
from autograder.checks import keyring
from autograder.course.notebook import answer_cells, answer_namespace, grade_id, read_notebook

__all__ = ["Outcome", "solution_cells", "mutant_cell", "judge_mutant", "judge_alternative", "misdiagnosis",
           "evaluate"]


@dataclass(frozen=True)
class Outcome:
    function: str
    why: str
    kind: str           # "mutant" or "alternative"
    ok: bool            # mutant killed with its hint / alternative passed
    detail: str


def _mutants():
    """The instructor's mutants and alternatives (fxcourse_instructor.mutants: `Mutant`, `Alternative`, `load`,
    `run_answer`), found through keyring; KeyMissing where the instructor's side is not reachable."""
    return keyring.instructor("mutants")


def solution_cells(nb) -> dict[str, str]:
    """{grade_id: source} of the solution notebook's answer cells."""
    return {grade_id(c): c.source for c in answer_cells(nb)}


def mutant_cell(nb, answer: Mutant | Alternative) -> str:
    """The answer cell of a mutant (or alternative): the solution notebook's cell of its function with its edits
    applied (an alternative may instead be a whole cell)."""
    solution = solution_cells(nb)
    if answer.function not in solution:
        raise KeyError(f"{answer.function!r} ({answer.why}): the solution has no answer cell "
                       f"{answer.function!r}; it has {', '.join(solution)}")
    return answer.cell(solution[answer.function])


def misdiagnosis(assignment: str, function: str, text: str) -> str | None:
    """Why the failure `text` of an answer to `function` may blame what the answer does right, or None.

    A learner must see one confirmed diagnosis: not several joined ones, and not the fault of another graded
    function (that one's own test charges for it).
    """
    if "; also:" in text:
        return "several diagnoses at once: at most one of them is the answer's mistake"
    for other in functions(assignment):
        if other != function and re.search(rf"\bfix {other} first|course's {other}\b", text):
            return f"blames {other}, another graded function"
    return None


def run_mutant(assignment: str, nb, mutant: Mutant) -> tuple[bool, str]:
    """(passed, the text a learner reads) of one mutant run against every case of its function."""
    ns = answer_namespace(nb, {mutant.function: mutant_cell(nb, mutant)})
    return _mutants().run_answer(assignment, mutant.function, ns)


def judge_mutant(assignment: str, nb, mutant: Mutant, ran: tuple[bool, str] | None = None) -> Outcome:
    """Run one mutant against every case of its function (or take `ran`, what run_mutant gave): ok when it
    fails, with its hint, for its own fault."""
    passed, text = ran if ran is not None else run_mutant(assignment, nb, mutant)
    if passed:
        return Outcome(mutant.function, mutant.why, "mutant", False, "passed all checks")
    if mutant.hint.lower() not in text.lower():
        return Outcome(mutant.function, mutant.why, "mutant", False,
                       f"failed, but without the hint {mutant.hint!r}: {text}")
    undeserved = [h for h in mutant.not_hints if h.lower() in text.lower()]
    if undeserved:
        return Outcome(mutant.function, mutant.why, "mutant", False,
                       f"failed with its hint, but also with {undeserved[0]!r}, which blames what it does right: "
                       f"{text}")
    wrong = misdiagnosis(assignment, mutant.function, text)
    if wrong:
        return Outcome(mutant.function, mutant.why, "mutant", False,
                       f"failed with its hint, but the failure {wrong}: {text}")
    return Outcome(mutant.function, mutant.why, "mutant", True, "killed")


def judge_alternative(assignment: str, nb, alternative: Alternative) -> Outcome:
    """Run one alternative against every case of its function: ok when it passes them all."""
    ns = answer_namespace(nb, {alternative.function: mutant_cell(nb, alternative)})
    passed, text = _mutants().run_answer(assignment, alternative.function, ns)
    return Outcome(alternative.function, alternative.why, "alternative", passed, "passed" if passed else text)


def evaluate(assignment: str, solutions: str | Path) -> list[Outcome]:
    """Run every mutant and alternative of `assignment` against its checks, in-process."""
    nb = read_notebook(Path(solutions) / assignment / f"{assignment}.ipynb")
    mutants, alternatives = _mutants().load(assignment)
    return ([judge_mutant(assignment, nb, m) for m in mutants]
            + [judge_alternative(assignment, nb, a) for a in alternatives])
