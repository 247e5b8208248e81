"""Judging a graded function that calls another (`Check.helpers`) without the course's reference in the jail.

Where answers run, such a function calls the learner's own helper: no reference is swapped in (SECURITY.md,
section 6). When one of its cases fails and the helper fails its own test in the same submission, the verdict
says the helper is at fault, in its message and its hint.
"""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["first_failure", "blame"]


def first_failure(judge_cell: Callable, ev: dict, plan: list, secret: bytes, assignment: str,
                  function: str) -> str | None:
    """The message of the first failing call of `function` among `plan` (every call of the evidence `ev`, in
    order), judged by `judge_cell` (grading._judge_cell) under `secret`; None when none fails."""
    from autograder.grader.jail.sandbox import WorkerOutcome

    for i, call in enumerate(plan):
        if (call.kind, call.assignment, call.function) == ("check", assignment, function) and i < len(ev["calls"]):
            rejected = {0: ev["rejected"][i]} if i in ev["rejected"] else {}
            own = {**ev, "calls": ev["calls"][i:i + 1], "rejected": rejected}
            verdict = judge_cell("", [call], WorkerOutcome(own, "ok", "", ""), secret)
            if not verdict.passed:
                return verdict.message
    return None


def blame(check: Any, call: Any, message: str, helper_failed: Callable | None) -> tuple[str, str] | None:
    """(message, hint) of a failed case of `call` whose check names helpers, when one of them fails its own test
    (`helper_failed(assignment, function)` says why); else None."""
    from autograder.checks.hints import hint_of

    for helper in check.helpers if helper_failed else ():
        why = helper_failed(call.assignment, helper)
        if why:
            return (f"{message} ({call.function} calls your {helper}, which fails its own test here: {why})",
                    hint_of("shared.fix_first_own_test_says", helpers=helper))
    return None
