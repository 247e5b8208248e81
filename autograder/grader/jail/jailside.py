"""What the jailed worker holds of the checks, and the guard that keeps the judge's side out of its reach.

The worker builds each case's inputs and turns what the learner's function returned into evidence: it needs the
exercise's `PARTS` (cases, evidence, models: `autograder.checks.framework.Part`), never its judges, references or
what the judge knows of a case. `worker_cases` loads only those and keeps of each case its inputs alone (the
`Case.data` the judge reads is dropped, so code that walks the worker's frames or objects finds no expected
value). `forbid_judge_side` (an audit hook, which Python code cannot remove) refuses every opening of a file of
the judge's side: an exercise's judging, judges and references, and the mutants' right and wrong answers and the
clauses (the instructor's package, `fxcourse_instructor`, but its hidden cases), so learner code cannot import them
in the jail either.
"""
from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["worker_cases", "judge_side", "forbid_judge_side", "WORKER_MODULES", "INSTRUCTOR_WORKER_MODULES"]

# the modules of an exercise's package that the worker imports (everything else in it is the judge's)
WORKER_MODULES = frozenset({"__init__", "cases", "evidence", "models"})
# the modules of the instructor's package (autograder.checks.keyring) that the worker imports: its hidden cases,
# and the inputs of cases that are another graded function's answer
INSTRUCTOR_WORKER_MODULES = frozenset({"__init__", "hidden", "inputs"})


def worker_cases(calls: list[dict]) -> tuple[dict, dict]:
    """({(assignment, function): Part}, {(assignment, function, hidden, salt): [Case with inputs only]}) of a job's
    calls, each case under its hidden salt (the job's "salt" of the call: 0 for visible cases)."""
    import dataclasses

    from autograder.checks.framework import get_part
    from autograder.checks.keyring import KeyMissing, load_worker_side
    from autograder.checks.secrecy import hidden_cases

    parts, cases = {}, {}
    for call in calls:
        if call.get("kind") != "check":
            continue
        key = (call["assignment"], call["function"])
        load_worker_side(call["assignment"])   # its hidden cases and inputs: the jail will hide the instructor's side
        part = parts[key] = parts.get(key) or get_part(*key)
        salt = int(call.get("salt") or 0) if call["hidden"] else 0
        try:
            built = part.cases(call["hidden"])
        except KeyMissing:   # no instructor's side here: no cases, and the judge says what is missing
            built = []
        cases[(*key, call["hidden"], salt)] = [   # every field of the case but the judge's data
            dataclasses.replace(c, data={"raises": True} if "raises" in c.data else {})
            for c in (hidden_cases(built, salt) if call["hidden"] else built)]
    return parts, cases


def _roots() -> tuple[str, str]:
    """(the check library's folder, the instructor's package folder, or "" where it is not reachable)."""
    import autograder.checks
    from autograder.checks import keyring

    checks = os.path.dirname(os.path.realpath(autograder.checks.__file__))
    try:
        instructor = os.path.realpath(keyring.location() / keyring.PACKAGE)
    except keyring.KeyMissing:
        instructor = ""
    return checks, instructor


def judge_side(path: Any, roots: tuple[str, str] | None = None) -> bool:
    """Whether `path` is a file of the judge's side (source or compiled): an exercise's module other than
    WORKER_MODULES, or any file of the instructor's package but its `__init__` and each exercise's `hidden`
    (INSTRUCTOR_WORKER_MODULES: the hidden cases, built before learner code runs)."""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        return False
    checks, instructor = roots or _roots()
    real = os.path.realpath(path)
    if instructor and real.startswith(instructor + os.sep):
        parts = real[len(instructor) + 1:].split(os.sep)
        stem = parts[-1].split(".")[0]
        if parts[0].startswith("ex") and len(parts) >= 2:
            return stem not in INSTRUCTOR_WORKER_MODULES
        return not (parts[0] in ("__init__.py", "__pycache__") and stem == "__init__")
    if not real.startswith(os.path.join(checks, "ex")):
        return False
    parts = real[len(checks) + 1:].split(os.sep)
    return len(parts) >= 2 and parts[-1].split(".")[0] not in WORKER_MODULES


def _judge_side_files() -> list[str]:
    """Every file of the judge's side, and the folders that hold them (a descriptor of one would let a relative
    opening past the check below)."""
    roots = _roots()
    found = []
    for root in filter(None, roots):
        for top, folders, files in os.walk(root):
            if top == roots[0]:
                folders[:] = [f for f in folders if f.startswith("ex")]
                continue
            hits = [os.path.join(top, f) for f in files if judge_side(os.path.join(top, f), roots)]
            found += hits + ([top] if hits else [])
    return found


def forbid_judge_side() -> None:
    """From now on, in this process, opening a file of the judge's side (or a folder holding one) raises
    PermissionError: an audit hook, which stays for the life of the process. It knows those files by device and
    inode, found now, and uses only what it took now (os.stat, the builtins), so patching os, os.path or the
    builtins later does not blind it. Relative to a descriptor of another folder (os.open's dir_fd), a file is
    checked by its name alone: hiding the files from the jail (moving the judge's side out of the install
    learners get) is the complete answer to that."""
    blocked = set()
    for path in _judge_side_files():
        try:
            info = os.stat(path)
        except OSError:
            continue
        blocked.add((info.st_dev, info.st_ino))
    names = frozenset({"judging", "judges", "references", "chains", "mutants", "clauses"})

    def hook(event: str, args: tuple, blocked=frozenset(blocked), names=names, stat=os.stat, type=type, str=str,
             bytes=bytes, error=PermissionError, Exception=Exception) -> None:
        if event != "open" or not args or type(args[0]) not in (str, bytes):
            return
        path = args[0] if type(args[0]) is str else bytes.decode(args[0], "utf-8", "surrogateescape")
        try:
            info = stat(path)
            hit = (info.st_dev, info.st_ino) in blocked
        except Exception:   # not there from here: a name relative to another folder's descriptor, or none
            hit = str.split(str.rsplit(path, "/", 1)[-1], ".")[0] in names
        if hit:
            raise error(f"{path}: the course's judging code is not readable where answers run")

    sys.addaudithook(hook)
