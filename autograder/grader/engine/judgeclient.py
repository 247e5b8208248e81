"""`fxcourse check` where this install has no judge side: the test cells are judged by the course's judge service.

The grading is the same: the notebook runs in the jailed worker, its evidence is loaded and checked in the local
judge process (grading._Judge). Only when that process answers that the exercise's judge side is missing
(keyring.KeyMissing) does a test cell go to the service (autograder.grader.ops.judgeservice) with the same evidence
and the same plan; its answer has the local judge's shape. With no service named, the check stops with a message
that names what is missing (NotebookError: `fxcourse check` exits 2).
"""
from __future__ import annotations

import functools

from autograder.course.notebook import NotebookError
from autograder.grader.engine.judgeprotocol import CALL_FIELDS
from autograder.grader.jail.sandbox import Limits

__all__ = ["ServiceFallback", "with_service", "JudgeUnavailable"]



class JudgeUnavailable(NotebookError):
    """Neither this install's judge side nor the course's judge service can judge the notebook."""


def _call(call: dict) -> dict:
    return {k: call[k] for k in CALL_FIELDS if k in call}


@functools.cache
def with_service(judge_class: type) -> type:
    """`judge_class` (grading._Judge) with the judge service behind it for the tests it cannot judge here."""
    return type("ClientJudge", (ServiceFallback, judge_class), {})


class ServiceFallback:
    """The mixin of `with_service`: a test cell the judge process answers KeyMissing for goes to the service."""

    def _ask(self, header: dict, payload: bytes, limits: Limits, again: bool = True) -> tuple[dict | None, str]:
        answer, why = super()._ask(header, payload, limits, again)  # type: ignore[misc]
        if header.get("op") != "judge" or not isinstance(answer, dict) \
                or not str(answer.get("error", "")).startswith("KeyMissing:"):
            return answer, why
        from autograder.checks import remote

        calls, plan = header["calls"], header.get("plan") or header["calls"]
        assignment = next((c["assignment"] for c in calls if c.get("assignment")), "this exercise")
        if any(c.get("hidden") for c in plan):
            raise JudgeUnavailable(f"the hidden tests of {assignment} are judged only by the instructor's grader, and "
                                   "this install has no judge side: `fxcourse check --visible-only` applies the "
                                   "visible ones")
        if not remote.configured():
            raise JudgeUnavailable(remote.unreachable(assignment))
        request = {"op": "tests", "tid": header["tid"], "calls": [_call(c) for c in calls], "start": header["start"],
                   "plan": [_call(c) for c in plan], "last_step": header.get("last_step", "")}
        try:
            evidence = self.loaded[0].evidence_bytes  # type: ignore[attr-defined]  (grading._Judge's)
            return remote.post(request, evidence), ""
        except remote.ServiceError as exc:
            raise JudgeUnavailable(f"{header['tid']} could not be judged: {exc}") from None
