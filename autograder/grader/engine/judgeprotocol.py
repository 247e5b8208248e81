"""What the judge service accepts, checked before anything is judged, and its per-case op in the judge process.

The service (autograder.grader.ops.judgeservice) takes a JSON header line, then the evidence archive. `parse_header`
keeps only what a student may ask (visible cases, no salt, key or secret) and says what was wrong otherwise
(`Refused`); `judge_cases` is the judge process's "cases" op (grading._judge_server).
"""
from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["Refused", "parse_header", "split_body", "judge_cases", "MAX_HEADER", "MAX_BODY", "CALL_FIELDS"]

MAX_HEADER = 64 * 2**10            # bytes of the JSON header line
# the evidence archive's own cap (checks.evidence.EvidenceLimits.bytes_on_disk: imports torch, which this side
# of the grading process does not), plus the header; tests/test_judgeservice.py holds the two equal
MAX_BODY = 32 * 2**20 + MAX_HEADER
_NAME = r"[A-Za-z_][A-Za-z0-9_]{0,99}"
_HIDDEN = {"hidden": "hidden cases are judged only by the instructor's grader (fxcourse grade); this service "
                     "judges the visible cases",
           "salt": "a salt builds a hidden case: this service judges the visible cases only",
           "secret": "the course secret never leaves the instructor's side: this service judges the visible cases only",
           "key": "quiz keys stay on the instructor's side: this service checks a quiz answer's format only",
           "explanation": "quiz explanations stay on the instructor's side: this service checks a quiz answer's "
                          "format only"}


# the fields of a test cell's call a student may send (never hidden, salt, key or explanation)
CALL_FIELDS = {"kind": str, "var": str, "assignment": str, "function": str, "choices": str,
               "section": (str, type(None))}


class Refused(ValueError):
    """A request this service does not judge; the message says what was wrong and what was expected."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


# ------------------------------------------------------------------------------------ the request's header

def _fields(obj: Any, where: str, allowed: dict[str, type | tuple], required: tuple[str, ...]) -> dict:
    """`obj` as a dict with only `allowed` fields of their types, `required` ones present; Refused otherwise."""
    if type(obj) is not dict:
        raise Refused(f"{where} must be a JSON object, got {type(obj).__name__}")
    for name in obj:
        if name in _HIDDEN and obj[name] not in (None, False, 0, "", []):
            raise Refused(f"{where}: {_HIDDEN[name]}")
        if name not in allowed and name not in _HIDDEN:
            raise Refused(f"{where} has an unknown field {str(name)[:40]!r}; expected {', '.join(allowed)}")
    for name in required:
        if name not in obj:
            raise Refused(f"{where} has no {name!r}; expected {', '.join(allowed)}")
    for name, kind in allowed.items():
        if name in obj and not isinstance(obj[name], kind) or isinstance(obj.get(name), bool) and kind is int:
            raise Refused(f"{where}: {name!r} must be {getattr(kind, '__name__', 'a string or null')}")
    return {k: v for k, v in obj.items() if k in allowed}


def _name(value: str, what: str) -> str:
    if not re.fullmatch(_NAME, value):
        raise Refused(f"{what} {value[:60]!r} is not a Python name")
    return value


def _call(obj: Any, where: str):
    """A test cell's call, as the grader's plan has it, with only what a student may ask: visible, no key."""
    from autograder.course.plan import QUIZ_CHOICES, Call

    kind = obj.get("kind") if type(obj) is dict else None
    allowed = CALL_FIELDS
    if kind == "check":
        c = _fields(obj, where, allowed, ("var", "assignment", "function"))
        return Call("check", _name(c["var"], "var"), _name(c["assignment"], "assignment"),
                    _name(c["function"], "function"))
    if kind == "quiz":
        c = _fields(obj, where, allowed, ("var",))
        if not re.fullmatch(r"[A-Z]{1,26}", c.get("choices", QUIZ_CHOICES)):
            raise Refused(f"{where}: 'choices' must be capital letters, like {QUIZ_CHOICES!r}")
        return Call("quiz", _name(c["var"], "var"), choices=c.get("choices", QUIZ_CHOICES),
                    section=(c.get("section") or None) and c["section"][:200])
    raise Refused(f"{where} must have 'kind' \"check\" or \"quiz\"")


def parse_header(header: Any) -> dict:
    """The request's header, checked: what to judge, with nothing hidden in it (Refused otherwise)."""
    op = header.get("op") if type(header) is dict else None
    if op == "cases":
        h = _fields(header, "the request", {"op": str, "assignment": str, "function": str, "cases": list},
                    ("assignment", "function", "cases"))
        if not h["cases"] or len(h["cases"]) > 1000 or any(type(i) is not int or i < 0 for i in h["cases"]):
            raise Refused("'cases' must list the indices (0, 1, ...) of visible cases, at least one")
        return {**h, "assignment": _name(h["assignment"], "assignment"), "function": _name(h["function"], "function")}
    if op == "tests":
        h = _fields(header, "the request", {"op": str, "tid": str, "calls": list, "start": int, "plan": list,
                                            "last_step": str}, ("tid", "calls", "start", "plan"))
        if len(h["plan"]) > 1000 or not h["calls"]:
            raise Refused("'plan' lists at most 1000 calls and 'calls' at least one")
        plan = [_call(c, f"plan[{i}]") for i, c in enumerate(h["plan"])]
        calls = [_call(c, f"calls[{i}]") for i, c in enumerate(h["calls"])]
        start = h["start"]
        if start < 0 or plan[start:start + len(calls)] != calls:
            raise Refused("'calls' must be the calls plan[start:start + len(calls)]")
        return {"op": op, "tid": h["tid"][:200], "calls": calls, "start": start, "plan": plan,
                "last_step": h.get("last_step", "")[:300]}
    raise Refused("the request's 'op' must be \"cases\" or \"tests\"")


def split_body(body: bytes) -> tuple[dict, bytes]:
    """(header, evidence) of a request's body: a JSON line, then the evidence archive."""
    line, newline, evidence = body.partition(b"\n")
    if not newline or len(line) > MAX_HEADER:
        raise Refused(f"the body must start with a JSON header line (at most {MAX_HEADER} bytes) ending in a newline, "
                      "then the evidence archive (torch.save of plain data)")
    try:
        return json.loads(line), evidence
    except (ValueError, RecursionError) as exc:
        raise Refused(f"the header line is not JSON ({str(exc)[:120]})") from None


# ------------------------------------------------------------------------------------- in the judge process

def judge_cases(ev: dict, req: dict) -> dict:
    """The judge process's "cases" op (grading._judge_server): the verdict on each named visible case of one
    function, from the loaded evidence `ev` (one call). {"results": [...]} or {"refused": why}."""
    from autograder.checks.framework import get_check, judge_evidence

    try:
        check = get_check(req["assignment"], req["function"])
    except KeyError as exc:
        return {"refused": str(exc.args[0]) if exc.args else str(exc)}
    visible = check.cases(False)
    bad = [i for i in req["cases"] if i >= len(visible)]
    if bad:
        return {"refused": f"case {bad[0]} of {req['function']} is not a visible case: {req['function']} has "
                           f"{len(visible)} visible cases (0 to {len(visible) - 1}); hidden cases are judged only "
                           "by the instructor's grader"}
    if len(ev["calls"]) != 1 or 0 in ev["rejected"]:
        return {"refused": ev["rejected"].get(0) or f"the evidence must hold one call, it holds {len(ev['calls'])}"}
    evidence = ev["calls"][0]["evidence"]
    if len(evidence) != len(req["cases"]):
        return {"refused": f"the evidence holds {len(evidence)} results for the {len(req['cases'])} cases named"}
    return {"results": [judge_evidence(check, visible[i], e).to_json() for i, e in zip(req["cases"], evidence)]}
