"""The instructor's side of nbgrader's exchange: `fxcourse release`, `collect` and `release-feedback`.

Each command is nbgrader's own (release_assignment, collect, release_feedback) run with the course's
configuration: its course id and its hardened pipelines; collect's copying out of the exchange is the course's
own (autograder/grader/ops/collect.py: the students write the exchange, so nothing in it is trusted). Students use
nbgrader's fetch_assignment, submit and fetch_feedback, or the Assignments tab, on the same exchange.
"""
from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from autograder.grader.ops import nbgrader
from autograder.course.console import EXIT_FAILED, EXIT_OK, EXIT_USAGE, err
from autograder.course.root import Course, find_course

__all__ = ["release", "collect", "release_feedback"]


def _exchange_argv(exchange: str | None) -> list[str] | None:
    """nbgrader's option for --exchange (nothing: nbgrader's configured Exchange.root), None when it is bad."""
    if not exchange:
        return []
    root = Path(exchange).resolve()
    if not root.is_dir():
        err(f"exchange directory {root} does not exist: create it first, writable by every user of the course "
            "(mode 1777; see docs/jupyterhub.md)")
        return None
    return [f"--Exchange.root={root}"]


def _exchange_command(assignment: str, exchange: str | None, course: str | None) -> tuple[Course, list[str]] | None:
    """The course and nbgrader's exchange options of a release/collect/release-feedback; None (after saying
    why) when the assignment is unknown or the exchange missing."""
    found = find_course(Path.cwd(), course)
    if nbgrader.known_assignments(found, [assignment]) is None:
        return None
    argv = _exchange_argv(exchange)
    return None if argv is None else (found, argv)


def _due_date(course: Course, assignment: str):
    """The assignment's due date in nbgrader's gradebook (naive UTC), or None."""
    from nbgrader.api import Gradebook, MissingEntry

    db = course.root / "gradebook.db"
    if not db.is_file():
        return None
    with Gradebook(f"sqlite:///{db}", "fxcourse") as gb:
        try:
            return gb.find_assignment(assignment).duedate
        except MissingEntry:
            return None


def _late_by(seconds: float) -> str:
    minutes = int(seconds // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    parts = [f"{days} d"] * bool(days) + [f"{hours} h"] * bool(hours) + [f"{minutes} min"]
    return " ".join(parts) if seconds >= 60 else f"{int(seconds)} s"


def release(assignment: str, due: str | None = None, force: bool = False, exchange: str | None = None,
            course: str | None = None) -> int:
    """`fxcourse release`: the generated exercise into the exchange, its due date (`due`) into the gradebook."""
    from dateutil.parser import parse as parse_date

    found = _exchange_command(assignment, exchange, course)
    if found is None:
        return EXIT_USAGE
    root, argv = found
    name = assignment
    if not (root.exercises / name / f"{name}.ipynb").is_file():
        return err(f"{root.exercises / name / (name + '.ipynb')} does not exist: run `fxcourse generate {name}` "
                   "first")
    if due:
        try:
            parse_date(due)
        except (ValueError, OverflowError):
            return err(f"--due {due!r} is not a date: expected for example '2026-12-08 17:00 UTC'")
        r = nbgrader.run(root, "db", "assignment", "add", name, f"--duedate={due}", quiet=True)
        if r.returncode != 0:
            return nbgrader.failed(r, f"nbgrader could not set the due date of {name}")
    r = nbgrader.run(root, "release_assignment", name, *argv, *(["--force"] if force else []), quiet=True)
    out = r.stdout + r.stderr
    if r.returncode != 0:
        if "Destination already exists" in out:
            return err(f"{name} is already released; --force replaces the release (students who fetched it keep "
                       "their copy)")
        return nbgrader.failed(r, f"nbgrader could not release {name}")
    where = re.search(r"Destination: (.*)", out)
    print(f"released {name}" + (f" to {where.group(1).strip()}" if where else ""))
    when = _due_date(root, name)
    print(f"  due {when:%Y-%m-%d %H:%M} UTC" if when else "  no due date (set one with --due)")
    return EXIT_OK


def collect(assignment: str, exchange: str | None = None, course: str | None = None) -> int:
    """`fxcourse collect`: each student's latest submission into submitted/ by the hardened collect
    (autograder/grader/ops/collect.py), late ones flagged, every file or entry left out named with the reason.
    Exit code 0, or 1 when something was left out (everything else is collected all the same)."""
    from autograder.grader.ops.collect import CollectResult, HardenedCollect, collected_time
    from autograder.grader.engine.grading import clean_text

    found = _exchange_command(assignment, exchange, course)
    if found is None:
        return EXIT_USAGE
    root, argv = found
    name = assignment
    with tempfile.TemporaryDirectory(prefix="fxcourse-collect-") as tmp:
        report = Path(tmp) / "collect.json"
        # --update: a student's newer submission replaces the one collected before
        r = nbgrader.run(root, "collect", name, "--update", *argv,
                         f"--ExchangeFactory.collect={HardenedCollect.__module__}.{HardenedCollect.__name__}",
                         f"--HardenedCollect.report={report}", quiet=True)
        if r.returncode != 0:
            return nbgrader.failed(r, f"nbgrader could not collect {name}")
        if not report.is_file():
            return nbgrader.failed(r, f"nbgrader's collect of {name} wrote no report: is ExchangeFactory.collect "
                                      "set to something else than the course's HardenedCollect?")
        result = CollectResult.from_json(report.read_text())
    for skipped in result.skipped:
        print(f"fxcourse: warning: {skipped.line()}", file=sys.stderr)
    state = {c.student: c.state for c in result.collected}
    submitted = root.root / "submitted"
    students = sorted(p.parent.name for p in submitted.glob(f"*/{name}") if p.is_dir())
    if not students:
        print(f"no submissions of {name} in the exchange yet")
    else:
        due = _due_date(root, name)
        print(f"{name}: {len(students)} submission(s), "
              f"{sum(s != 'unchanged' for s in state.values())} new or updated"
              + (f"; due {due:%Y-%m-%d %H:%M} UTC" if due else "; no due date"))
        for student in students:
            stamp = collected_time(submitted / student / name)
            when = f"submitted {stamp:%Y-%m-%d %H:%M:%S} UTC" if stamp else "no timestamp"
            shown = {"collected": "collected", "replaced": "replaced by a resubmission"}.get(state.get(student, ""),
                                                                                           "unchanged")
            late = ""
            if stamp and due and stamp > due:
                late = f"  LATE by {_late_by((stamp - due).total_seconds())}"
            print(f"  {clean_text(student, 200):<20} {when}  {shown}{late}")
    if result.skipped:
        err(f"{len(result.skipped)} file(s) or submission(s) not collected (the warnings above say whose and why); "
            "everything else was collected")
        return EXIT_FAILED
    return EXIT_OK


def release_feedback(assignment: str, exchange: str | None = None, course: str | None = None) -> int:
    """`fxcourse release-feedback`: feedback/ of an assignment into the exchange for the students."""
    found = _exchange_command(assignment, exchange, course)
    if found is None:
        return EXIT_USAGE
    root, argv = found
    name = assignment
    students = sorted(p.parent.name for p in (root.root / "feedback").glob(f"*/{name}") if p.is_dir())
    if not students:
        return err(f"no feedback for {name} in {root.root / 'feedback'}: run `fxcourse feedback {name}` first")
    r = nbgrader.run(root, "release_feedback", name, *argv, quiet=True)
    if r.returncode != 0:
        return nbgrader.failed(r, f"nbgrader could not release the feedback of {name}")
    released = sorted(set(re.findall(r"Releasing feedback for student '([^']+)'", r.stdout + r.stderr)))
    print(f"released the feedback of {name} for {len(released or students)} student(s): "
          f"{', '.join(released or students)}")
    return EXIT_OK
