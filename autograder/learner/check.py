"""One learner's notebook: which exercise it is, and `fxcourse check`: its grade as a report or one JSON object."""
from __future__ import annotations

import json
from pathlib import Path

from autograder.course.console import EXIT_FAILED, EXIT_OK, err
from autograder.course.notebook import NotebookError
from autograder.course.root import Course, find_course

__all__ = ["check", "print_report", "assignment_for"]


def assignment_for(path: Path, course: Course) -> str:
    """The assignment a notebook file belongs to, as the grader decides it (plan.identify_assignment), also for a
    file that cannot be read as a notebook, which `fxcourse reset` still restores (NotebookError when it cannot
    be told)."""
    from autograder.course.plan import identify_assignment
    from autograder.course.notebook import read_notebook

    try:
        nb = read_notebook(path)
    except NotebookError:
        nb = None
    return identify_assignment(nb, path, course)


def print_report(report) -> None:
    """A grader's Report as a learner reads it: the score, then one line per test (a hint under a failing one)."""
    extra = "hidden tests included" if report.full_tests else "visible tests only: solutions/ not found"
    print(f"{report.notebook}: {report.score:g} / {report.max_score:g} points  ({extra})")
    width = max((len(t.id) for t in report.tests), default=10)
    for t in report.tests:
        mark = "\u2714" if t.passed else "\u2718"
        print(f"  {mark} {t.id:<{width}}  {t.points:g}/{t.max_points:g}  {t.message}")
        if t.hint and not t.passed:
            print(f"    {'':<{width}}  Hint: {t.hint}")
    for note in report.notes:
        print(f"  note: {note}")


def check(notebook: str, as_json: bool = False, visible_only: bool = False, course: str | None = None) -> int:
    """`fxcourse check`: exit 0 on full marks, 1 when points are lost, 2 when the notebook cannot be graded."""
    from autograder.grader.engine.grading import check_notebook
    from autograder.grader.jail.sandbox import LimitError

    path = Path(notebook)
    try:
        report = check_notebook(path, find_course(path, course), visible_only=visible_only)
    except (NotebookError, LimitError) as exc:
        return err(str(exc))
    if as_json:
        print(json.dumps(report.to_json()))
    else:
        print_report(report)
    return EXIT_OK if report.score == report.max_score else EXIT_FAILED
