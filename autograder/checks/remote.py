"""Judging through the course's judge service, where this install has no judge side (keyring.KeyMissing).

On a student's install the judges and references are not here. The visible cases still run in the student's
process (collect_evidence, with the worker's side of the check: `get_part`); their evidence goes to the judge
service the hub runs as the instructor (autograder.grader.ops.judgeservice), named by FXCOURSE_JUDGE_URL, with the
hub token of the student's server (JUPYTERHUB_API_TOKEN); its verdicts are shown as local ones are (CaseResult).
"""
from __future__ import annotations

import io
import json
import os
from typing import Any

import torch

import autograder.checks.framework as framework
from autograder.checks.evidence import EvidenceLimits
from autograder.checks.framework import CaseResult, CheckFailed, CheckResults, _is_todo, collect_evidence, get_part
from autograder.checks.verdict import Verdict
from autograder.checks.keyring import KeyMissing

__all__ = ["URL_ENV", "TOKEN_ENV", "ServiceError", "configured", "unreachable", "post", "evidence_archive",
           "run_cases", "run_check"]

URL_ENV, TOKEN_ENV = "FXCOURSE_JUDGE_URL", "JUPYTERHUB_API_TOKEN"
TIMEOUT = 300  # seconds for one answer: the service may first start its judge process
MAX_BODY = EvidenceLimits.bytes_on_disk  # what the service accepts (judgeprotocol.MAX_BODY, less its header)
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


class ServiceError(RuntimeError):
    """The judge service could not be asked, or refused the request; the message says which and why."""


def configured() -> bool:
    """Does the environment name a judge service and a hub token to ask it with?"""
    return bool(os.environ.get(URL_ENV)) and bool(os.environ.get(TOKEN_ENV))


def unreachable(assignment: str) -> str:
    """Why nothing can judge `assignment` here: neither the instructor's side nor a judge service."""
    lacking = " and ".join(v for v in (URL_ENV, TOKEN_ENV) if not os.environ.get(v))
    return (f"the instructor's side of {assignment} (its judges and references) cannot be reached here, and no "
            f"judge service is named ({lacking} not set): on the course's hub both are set for every server; "
            "elsewhere use the instructor's install")


def post(header: dict, evidence: bytes) -> dict:
    """Send one request (a JSON header line, then the evidence archive) and return the service's answer."""
    import urllib.error
    import urllib.request
    from urllib.parse import urlparse

    url = os.environ[URL_ENV].rstrip("/") + "/judge"
    if len(evidence) > MAX_BODY:
        raise ServiceError(f"the evidence is {len(evidence)} bytes, over the judge service's limit of {MAX_BODY}")
    request = urllib.request.Request(url, data=json.dumps(header).encode() + b"\n" + evidence, method="POST",
                                     headers={"Authorization": f"token {os.environ.get(TOKEN_ENV, '')}",
                                              "Content-Type": "application/octet-stream"})
    host = urlparse(url).hostname or ""
    # the hub's address for the service is a loopback one: never through a web proxy the environment names
    opener = urllib.request.build_opener(*([urllib.request.ProxyHandler({})] if host in _LOOPBACK else []))
    try:
        with opener.open(request, timeout=TIMEOUT) as response:
            return json.loads(response.read(16 * 2**20))
    except urllib.error.HTTPError as exc:
        try:
            why = str(json.loads(exc.read(2**20))["error"])
        except Exception:
            why = exc.reason
        raise ServiceError(f"the judge service at {url} refused the request ({exc.code}): {why}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ServiceError(f"the judge service at {url} could not be asked ({reason})") from None


def evidence_archive(calls: list[list]) -> bytes:
    """The evidence of `calls` (each a list of case evidence) as the jailed worker writes it (torch.save of plain
    data, what autograder.checks.evidence.load_evidence reads)."""
    buf = io.BytesIO()
    torch.save({"calls": [{"evidence": ev} for ev in calls], "cell_errors": [], "tampered": [], "complete": True}, buf)
    return buf.getvalue()


def _judged(assignment: str, function: str, indices: list[int], evidence: list) -> list[CaseResult]:
    answer = post({"op": "cases", "assignment": assignment, "function": function, "cases": indices},
                  evidence_archive([evidence]))
    try:
        return [Verdict.from_json(r) for r in answer["results"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ServiceError(f"the judge service answered in a shape this client does not know ({exc})") from None


def run_cases(assignment: str, function: str, fn: Any, *, stop_at_first: bool = True) -> list[CaseResult]:
    """framework.run_cases on the visible cases, judged by the service: each case runs here, as locally; with
    `stop_at_first` each case is judged before the next runs (a test cell stops at its first failure), else all
    are judged at once (check()). ServiceError when the service cannot judge them."""
    part = get_part(assignment, function)
    results: list[CaseResult | None] = []
    indices, evidence = [], []
    for index, case in enumerate(part.cases(False)):
        ev: Any = None
        try:
            ev = collect_evidence(part, fn, case)
        except Exception as exc:  # a fault of the check itself: said as framework.run_cases says it
            results.append(CaseResult(case.label, False, f"the check itself failed on {case.label}: "
                                                         f"{type(exc).__name__}: {exc}", None))
        else:
            if stop_at_first:
                results += _judged(assignment, function, [index], [ev])
            else:
                results.append(None)  # judged below, with the others
                indices.append(index)
                evidence.append(ev)
        if (stop_at_first and not results[-1].passed) or _is_todo(ev):
            break
    if indices:
        judged = iter(_judged(assignment, function, indices, evidence))
        results = [next(judged) if r is None else r for r in results]
    return results


def run_check(assignment: str, function: str, fn: Any, hidden: bool = False) -> CheckResults:
    """What test cells call (autograder.checks.run_check): framework.run_check, in this process with the judge
    side; where this install has none (keyring.KeyMissing), the visible cases judged by the service and shown as
    a local check shows them, or a CheckFailed that says why nothing can judge them."""
    __tracebackhide__ = True
    try:
        return framework.run_check(assignment, function, fn, hidden)
    except KeyMissing:
        pass
    if hidden:
        raise CheckFailed(f"{function}: hidden cases are judged only by the instructor's grader, and this install "
                          "has no judge side", "run the visible test cells; the hidden ones count at grading")
    if not configured():
        raise CheckFailed(f"{function} cannot be checked here: {unreachable(assignment)}",
                          f"ask the course's staff: set {URL_ENV} to the course's judge service")
    try:
        results = CheckResults(run_cases(assignment, function, fn, stop_at_first=True))
    except ServiceError as exc:
        raise CheckFailed(f"{function} could not be checked: {exc}", "try again; if it persists, tell the "
                          "course's staff") from None
    failed = next((r for r in results if not r.passed), None)
    if failed is not None:
        raise CheckFailed(failed.message, failed.hint)
    print(f"\u2714 {function}: {len(results)} visible case(s) passed")
    return results
