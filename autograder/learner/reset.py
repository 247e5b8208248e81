"""`fxcourse reset`: put the released exercise back, after a timestamped backup of the learner's copy.

It asks first (or takes --yes) and keeps the backup beside the notebook (`exNN_topic.backup-YYYYMMDD-HHMMSS.ipynb`;
nbgrader skips notebooks it does not know).

Where the released copy comes from: in this repository exercises/ *is* the working copy, so the release is
rebuilt exactly as `fxcourse generate` makes it: `nbgrader generate_assignment` from solutions/ into a
temporary folder (the same call as `fxcourse generate --check`; CI proves that this equals the committed
exercises/). A learner's copy of the course without solutions/ falls back to the committed file in git HEAD,
used only if every answer cell in it is still a stub (a learner who commits their answers would otherwise get
their own work back).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.course.console import EXIT_FAILED, EXIT_OK, err
from autograder.grader.ops.nbgrader import generate_into
from autograder.course.notebook import NotebookError
from autograder.course.root import Course, find_course
from autograder.learner.check import assignment_for

__all__ = ["release_copy", "reset"]


def _generated_release(course: Course, assignment: str, tmp: Path) -> Path:
    """The released notebook as `fxcourse generate` makes it, generated into `tmp`."""
    r = generate_into(course, assignment, tmp)
    fresh = tmp / assignment / f"{assignment}.ipynb"
    if r.returncode != 0 or not fresh.is_file():
        last = [l for l in ((r.stdout or "") + (r.stderr or "")).splitlines() if l.strip()][-2:]
        raise RuntimeError(f"nbgrader could not generate {assignment}: {' | '.join(last)[:300]}")
    return fresh


def _git_release(path: Path, tmp: Path) -> Path:
    """The committed copy of the notebook in git HEAD, if it is still as released (every answer a stub)."""
    from autograder.course.notebook import STUB, answer_cells, parse_notebook

    if shutil.which("git") is None:
        raise RuntimeError("there is no solutions/ to generate the release from, and git is not installed")
    top = subprocess.run(["git", "-C", str(path.parent), "rev-parse", "--show-toplevel"], capture_output=True,
                         text=True)
    if top.returncode != 0:
        raise RuntimeError("there is no solutions/ to generate the release from, and this is not a git checkout")
    try:
        rel = path.resolve().relative_to(Path(top.stdout.strip()).resolve()).as_posix()
    except ValueError:
        raise RuntimeError(f"there is no solutions/ to generate the release from, and {path} is outside the "
                           "git checkout") from None
    shown = subprocess.run(["git", "-C", top.stdout.strip(), "show", f"HEAD:{rel}"], capture_output=True)
    if shown.returncode != 0:
        raise RuntimeError(f"there is no solutions/ to generate the release from, and git HEAD has no {rel}")
    nb = parse_notebook(shown.stdout, f"HEAD:{rel}")
    stub_line = STUB.splitlines()[-1]
    if not all(stub_line in c.source for c in answer_cells(nb)):
        raise RuntimeError(f"git HEAD's {rel} has answers in it (it was committed after work began), so it is not "
                           "the release; get a fresh copy of the course")
    out = tmp / path.name
    out.write_bytes(shown.stdout)
    return out


def release_copy(course: Course, assignment: str, path: Path, tmp: Path) -> tuple[Path, str]:
    """(a released copy of the exercise inside `tmp`, where it came from)."""
    if (course.solutions / assignment / f"{assignment}.ipynb").is_file():
        return _generated_release(course, assignment, tmp), f"generated from solutions/{assignment} with nbgrader"
    return _git_release(path, tmp), "the committed copy in git HEAD"


def _backup_path(path: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate = path.with_name(f"{path.stem}.backup-{stamp}{path.suffix}")
    n = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.stem}.backup-{stamp}-{n}{path.suffix}")
        n += 1
    return candidate


def _confirm(question: str) -> bool:
    try:
        answer = input(question)
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def reset(notebook: str, yes: bool = False, course: str | None = None) -> int:
    """`fxcourse reset`: exit 0 when the notebook is as released (restored or already), 1 when not changed."""
    path = Path(notebook)
    found = find_course(path, course)
    try:
        assignment = assignment_for(path, found)
    except NotebookError as exc:
        return err(f"{exc} (name the released file, exercises/exNN_topic/exNN_topic.ipynb)")
    if (found.solutions / assignment / f"{assignment}.ipynb").is_file():
        print(f"generating the released {assignment} with nbgrader (a few seconds) ...", flush=True)
    with tempfile.TemporaryDirectory(prefix="fxcourse-reset-") as tmp:
        try:
            fresh, origin = release_copy(found, assignment, path, Path(tmp))
        except RuntimeError as exc:
            print(f"fxcourse: error: cannot get the released {assignment}: {exc}", file=sys.stderr)
            return EXIT_FAILED
        if path.is_file() and path.read_bytes() == fresh.read_bytes():
            print(f"{path} is already as released: nothing to do")
            return EXIT_OK
        backup = _backup_path(path) if path.exists() else None
        if not yes:
            kept = f"; your current file is kept as {backup.name}" if backup else ""
            if not _confirm(f"Replace {path} with the released {assignment} ({origin}){kept}? [y/N] "):
                print("nothing changed")
                return EXIT_FAILED
        if backup is not None:
            shutil.copy2(path, backup)
            print(f"backup: {backup}")
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.fxcourse-reset")
        shutil.copyfile(fresh, partial)
        os.replace(partial, path)  # atomic: the working copy is either the old file or the new one
    print(f"restored {path} from the release ({origin})")
    return EXIT_OK
