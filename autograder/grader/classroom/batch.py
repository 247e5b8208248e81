"""`fxcourse grade`: the command's checks, then the class through the one pipeline (autograder.grader.classroom.runner).

The arguments and the course are checked before anything runs; the run joins or starts the user's fork server first (its
imports overlap with the jail's one trial, which refuses the run where the jail is missing); the gradebook learns any
assignment it does not know yet (`ensure_assignment`); then every submission is one task of the engine, on `--jobs`
grading threads here (`runner.LocalRunner`) or on Dask (`--cluster`: `cluster.DaskRunner`). Either way a
submission already graded from the same files is skipped unless `--regrade`.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from autograder.course.console import EXIT_FAILED, EXIT_USAGE, err
from autograder.grader.ops.nbgrader import generate_into, known_assignments, why
from autograder.course.root import Course, find_course
from autograder.grader.jail.sandbox import IsolationError, LimitError, Limits, require_isolation

__all__ = ["ensure_assignment", "grade"]


def ensure_assignment(course: Course, name: str, db: str) -> str | None:
    """Make sure the gradebook knows the assignment's notebooks and cells (a new PostgreSQL gradebook does not):
    nbgrader's generate_assignment writes them, into a temporary release folder. None, or what went wrong."""
    from autograder.grader.classroom.gradebook import knows_assignment

    if knows_assignment(db, name):
        return None
    with tempfile.TemporaryDirectory(prefix="fxcourse-release-") as tmp:
        r = generate_into(course, name, tmp, db=db)
    if r.returncode != 0:
        return f"nbgrader could not add {name} to the gradebook: {why((r.stdout + r.stderr).splitlines())}"
    return None


def grade(assignment: str | None = None, student: list[str] | None = None, jobs: int = 1, cluster: str | None = None,
          regrade: bool = False, db: str | None = None, course: str | None = None) -> int:
    """`fxcourse grade`: autograde submitted/<student>/<assignment>/ into the gradebook, `jobs` at a time here
    (hardened: refused where the jail is missing) or on the Dask cluster `cluster`; what is already graded from
    the same files only with `regrade`."""
    from autograder.grader.classroom.cluster import DaskRunner, parse_cluster
    from autograder.grader.classroom.runner import LocalRunner, grade_class
    from autograder.grader.classroom.gradebook import GradebookError, gradebook_url, parse_db_url

    found = find_course(Path.cwd(), course)
    names = known_assignments(found, [assignment] if assignment else [])
    if names is None:
        return EXIT_USAGE
    for flag, value, parse in (("--cluster", cluster, parse_cluster), ("--db", db, parse_db_url)):
        try:
            if value:
                parse(value)
        except ValueError as exc:
            return err(f"{flag}: {exc}")
    try:
        Limits.from_env().submission_wall()
    except LimitError as exc:
        return err(str(exc))
    if cluster and jobs != 1:
        return err("--jobs and --cluster do not go together: --cluster local:N starts N workers, a scheduler "
                   "decides for tcp://HOST:PORT")
    submitted = found.root / "submitted"
    if not submitted.is_dir():
        return err(f"no submissions: {submitted} does not exist (expected submitted/<student>/<assignment>/)")
    if assignment and student:
        missing = [s for s in student if not (submitted / s / assignment).is_dir()]
        if missing:
            return err(f"no submission from student {missing[0]!r} for {assignment}: expected a folder "
                       f"{submitted / missing[0] / assignment}")
    if not cluster:  # hardened grading here: refuse, naming what is missing, unless opted out
        from autograder.grader.jail import forkserver

        # The user's fork server, joined or started first: its imports overlap with the jail's trial. Refused,
        # the run leaves it before it has forked anything.
        forkserver.prestart()
        try:
            require_isolation()
        except IsolationError as exc:
            forkserver.stop()
            return err(str(exc))
    work = []
    for name in names:
        everyone = sorted(p.parent.name for p in submitted.glob(f"*/{name}") if p.is_dir())
        students = [s for s in everyone if s in student] if student else everyone
        if students:
            work.append((name, students))
    url = gradebook_url(found, db)
    try:
        for name, _ in work:
            problem = ensure_assignment(found, name, url)
            if problem:
                return err(problem) and EXIT_FAILED
    except GradebookError as exc:
        return err(str(exc)) and EXIT_FAILED
    runner = DaskRunner(cluster) if cluster else LocalRunner(jobs)
    return grade_class(found, work, url, runner, regrade)
