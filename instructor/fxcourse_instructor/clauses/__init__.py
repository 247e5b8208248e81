"""The contract of every graded function, clause by clause, kept as data beside its check.

Each exercise has a module `instructor/fxcourse_instructor/clauses/exNN_topic.py` with `CLAUSES`, a list of `Clause`. A clause is
one rule of a function's contract, from ../shared/CURRICULUM.md or the exercise's task text: an input it must
accept, what it must leave alone, a dtype, an option, an edge shape, a repeated call, what it does on bad
input. It names the cases of the check that exercise it, at least one of them hidden, and an answer that ignores
exactly that rule: the solution with one change (`patch`), a whole answer cell (`source`), or a hand-written mutant
(`mutant`, its `why`). tests/test_clauses.py fails when a clause names no existing case, or when its answer passes
its hidden cases: a clause without a hidden case that fails an answer ignoring it is a clause the grader does not
grade (visible cases show the learner the rule; the hidden ones are what a learner cannot fit an answer to).

Each module also has `TASK_TEXT`, the audit of the task text the learner reads, sentence by sentence: for `*` (the
notebook's introduction) and for each graded function, a dict from each sentence to the rules of the clauses that
check it (a tuple of `rule` strings of that function's clauses, or `(function, rule)` pairs for another function's)
or, for a sentence that states no rule, a string saying why (an example, a hint of method, the motivation...).
Sentences every introduction has are in `COMMON_NOTES`. tests/test_task_text_audit.py fails on a sentence with no
entry, on a rule mapped to no clause or to an unknown one, and on a mapped clause with no hidden case or no wrong
answer.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

from fxcourse_instructor.mutants import apply_edits, load as load_mutants

__all__ = ["Clause", "load", "task_text", "killer_source", "clause_cases", "COMMON_NOTES"]


@dataclass(frozen=True)
class Clause:
    function: str
    rule: str                                 # the clause, in the words of the task text
    cases: tuple[str, ...]                    # labels (or label prefixes) of the cases that exercise it
    patch: tuple | None = None                # (old, new), or several: the solution's answer cell so changed
    source: str | None = None                 # or a whole answer cell that ignores the rule
    mutant: str | None = None                 # or the `why` of a hand-written mutant that ignores it
    hint: str | None = None                   # text its failure must show


def load(assignment: str) -> list[Clause]:
    return list(importlib.import_module(f"fxcourse_instructor.clauses.{assignment}").CLAUSES)


# Sentences of every notebook's introduction that state no rule of a graded function: (pattern, why).
COMMON_NOTES: tuple[tuple[str, str], ...] = (
    (r"# Exercise \d+: .*", "the notebook's title"),
    (r"\*\*How this notebook is graded\.\*\* Write each function in the cell that defines it\b.*",
     "where to write the answer"),
    (r"The cell after it runs the visible checks; the grader runs more\b.*",
     "how grading works; what the functions must do on those models is stated in their own sections"),
    (r"Check your work at any time with", "how to check the notebook"),
    (r"fxcourse check exercises/\w+/\w+\.ipynb", "the command that checks the notebook"),
    (r"Answer the quiz questions at the end with one capital letter each\.", "the quiz's answer format, checked by "
     "the quiz cells (tests/test_quizzes.py), no rule of a graded function"),
    (r"Warnings that torch prints never cost points\.", "what grading ignores, no rule of a graded function"),
)


def task_text(assignment: str) -> dict[str, dict[str, tuple | str]]:
    """The audit of one exercise's task text (`TASK_TEXT` of its clauses module; empty when it has none, or no
    clauses module yet: then every sentence shows as unaudited)."""
    try:
        module = importlib.import_module(f"fxcourse_instructor.clauses.{assignment}")
    except ModuleNotFoundError:
        return {}
    return dict(getattr(module, "TASK_TEXT", {}))


def killer_source(assignment: str, clause: Clause, solution_cell: str) -> str:
    """The answer cell that ignores `clause`."""
    if clause.source is not None:
        return clause.source
    if clause.patch is not None:
        pairs = clause.patch if isinstance(clause.patch[0], tuple) else (clause.patch,)
        return apply_edits(solution_cell, pairs, f"{assignment}.{clause.function}: the patch of clause {clause.rule!r}")
    if clause.mutant is not None:
        mutants, _ = load_mutants(assignment)
        found = [m for m in mutants if m.function == clause.function and m.why == clause.mutant]
        if len(found) != 1:
            raise ValueError(f"{assignment}.{clause.function}: no hand-written mutant {clause.mutant!r}")
        return found[0].cell(solution_cell)
    raise ValueError(f"{assignment}.{clause.function}: clause {clause.rule!r} has no answer that ignores it")


def clause_cases(check, clause: Clause, hidden: bool | None = None) -> list:
    """The check's cases whose label starts with one of the clause's labels: visible and hidden ones (`hidden`
    None), or only the hidden (True) or only the visible ones (False)."""
    kinds = (False, True) if hidden is None else (hidden,)
    return [c for h in kinds for c in check.cases(h) if any(c.label.startswith(p) for p in clause.cases)]
