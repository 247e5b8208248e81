"""The course's secret: what hidden cases are drawn from (autograder.checks.secrecy), kept beside the gradebook.

The instructor's copy lives in `.fxcourse-secret` in the course root, beside the default gradebook (gradebook.db),
mode 0600, made on first use from os.urandom; the jail covers the course root, so no worker can read it. A
learner's clone makes one of its own the same way (in the clone, never in the installed package), so that
`fxcourse check` there draws hidden cases the instructor's grading does not: answers memorised from one secret
fail under another, while a regrade with the same secret gives the same grade. FXCOURSE_SECRET, when set, is
the secret instead (tests and CI pin it; empty means none: hidden cases as written, as pytest and validation
run them).

The secret never reaches a worker: the grader gives it each hidden call's salt (call_salt) alone. The judge
process (the grader's own, not jailed, where learner code never runs) gets the secret with each request.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from autograder.course.root import Course

__all__ = ["SECRET_FILE", "secret_path", "course_secret", "call_salt"]

SECRET_FILE = ".fxcourse-secret"
_CACHE: dict[str, bytes] = {}


def secret_path(course: Course) -> Path:
    """Where the course's secret is kept: the course root, the folder of its default gradebook (gradebook.db).
    Not the folder of a gradebook configured elsewhere: finding that means reading nbgrader's configuration,
    which imports nbgrader (seconds on every `fxcourse check`)."""
    return course.root / SECRET_FILE


def course_secret(course: Course | None) -> bytes:
    """The course's secret (made on first use), FXCOURSE_SECRET's when set; b"" without a course."""
    if "FXCOURSE_SECRET" in os.environ:
        return os.environ["FXCOURSE_SECRET"].encode()
    if course is None:
        return b""
    path = secret_path(course)
    key = str(path)
    if key not in _CACHE:
        _CACHE[key] = _read_or_make(path)
    return _CACHE[key]


def _read_or_make(path: Path) -> bytes:
    if not os.path.lexists(path):   # written whole, then linked into place: a reader never sees half of it
        tmp = path.with_name(f"{SECRET_FILE}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(os.urandom(32).hex() + "\n")
            os.link(tmp, path)
        except FileExistsError:
            pass   # another process made it first: theirs is the secret
        finally:
            os.unlink(tmp)
    info = path.lstat()
    if not path.is_file() or path.is_symlink():
        raise OSError(f"{path}: the course secret must be a regular file")
    if info.st_mode & 0o077:
        os.chmod(path, 0o600)   # readable by no one but its owner, whatever made it otherwise
    secret = path.read_text().strip().encode()
    if len(secret) < 16:
        raise OSError(f"{path}: the course secret is too short ({len(secret)} characters); remove it to make a new one")
    return secret


def call_salt(secret: bytes, assignment: str, function: str) -> int:
    """The salt of one graded function's hidden cases under a course secret (0 without one)."""
    if not secret:
        return 0
    digest = hashlib.sha256(b"fxcourse hidden cases\0" + secret + f"\0{assignment}\0{function}".encode()).digest()
    return int.from_bytes(digest[:8], "big") | 1
