"""A learner's progress over the course: which exercises, functions and quiz questions pass.

Each working copy (`exercises/exNN_topic/exNN_topic.ipynb`) is graded by `autograder.grader.engine.grading.check_notebook`,
the real grader: one jailed worker per notebook, about 5-10 s each, hidden tests included where solutions/ is
present (`visible_only=True`: the tests a learner can see). A working copy whose answer cells are all still
as released is reported as "not started" without running it: the course guarantees that an unanswered
notebook scores 0 (tests/test_course.py), and telling "as released" apart needs solutions/.

`fxcourse progress` prints `CourseProgress.table()` (or `.to_json()`); `autograder.inline.progress()` shows
`.figure()` and the table in a notebook. Nothing here imports fxplayground or runs learner code in-process.
"""
from __future__ import annotations

import base64
import html
import io
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from autograder.coursedata.exercises import EXERCISES
from autograder.course.console import EXIT_FAILED, EXIT_OK, err
from autograder.course.notebook import (NotebookError, answer_cells, grade_id, nbgrader_meta, read_notebook,
                                        stub_solution, test_cells)
from autograder.course.root import Course, find_course

__all__ = ["TestStatus", "ExerciseProgress", "CourseProgress", "ProgressView", "collect", "show",
           "SECONDS_PER_NOTEBOOK"]

SECONDS_PER_NOTEBOOK = "about 5-10 s per notebook"
PASS, FAIL, IDLE = "#2e7d32", "#c62828", "#bdbdbd"


@dataclass
class TestStatus:
    """One test cell of an exercise: the function (or quiz question qN) it tests, and whether it passed."""

    id: str
    name: str
    kind: str  # "function" or "quiz"
    passed: bool
    points: float
    max_points: float
    message: str = ""


@dataclass
class ExerciseProgress:
    assignment: str
    notebook: str
    status: str  # "graded", "not started", "no working copy", "error"
    score: float
    max_score: float
    tests: list[TestStatus] = field(default_factory=list)
    seconds: float = 0.0
    detail: str = ""
    hidden_tests: bool = False

    def _by(self, kind: str) -> dict[str, bool]:
        out: dict[str, bool] = {}
        for t in self.tests:
            if t.kind == kind:
                out[t.name] = out.get(t.name, True) and t.passed
        return out

    @property
    def functions(self) -> dict[str, bool]:
        """{function: all its test cells pass}, in notebook order."""
        return self._by("function")

    @property
    def quiz(self) -> dict[str, bool]:
        return self._by("quiz")

    @property
    def complete(self) -> bool:
        return self.status == "graded" and self.max_score > 0 and self.score == self.max_score

    def to_json(self) -> dict[str, Any]:
        return {"assignment": self.assignment, "notebook": self.notebook, "status": self.status,
                "score": self.score, "max_score": self.max_score, "complete": self.complete,
                "seconds": round(self.seconds, 2), "detail": self.detail, "hidden_tests_applied": self.hidden_tests,
                "functions": self.functions, "quiz": self.quiz,
                "tests": [{"id": t.id, "passed": t.passed, "points": t.points, "max_points": t.max_points,
                           "message": t.message} for t in self.tests]}


@dataclass
class CourseProgress:
    course: str
    visible_only: bool
    exercises: list[ExerciseProgress]

    @property
    def score(self) -> float:
        return sum(e.score for e in self.exercises)

    @property
    def max_score(self) -> float:
        return sum(e.max_score for e in self.exercises)

    def to_json(self) -> dict[str, Any]:
        return {"course": self.course, "visible_only": self.visible_only, "score": self.score,
                "max_score": self.max_score, "complete": sum(e.complete for e in self.exercises),
                "exercises": [e.to_json() for e in self.exercises]}

    def table(self) -> str:
        """The progress as a plain-text table for a terminal."""
        tests = "visible tests only" if self.visible_only else "hidden tests included where solutions/ is present"
        out = [f"Progress in {self.course} ({tests})", ""]
        head = ("exercise", "score", "functions", "quiz", "")
        rows = []
        for e in self.exercises:
            fns, quiz = e.functions, e.quiz
            score = f"{e.score:g} / {e.max_score:g}" if e.status in ("graded", "not started") else "-"
            count = (lambda d: f"{sum(d.values())}/{len(d)}" if d else "-")
            if e.status == "graded":
                marks = "  ".join(f"{'✔' if ok else '✘'} {name}" for name, ok in [*fns.items(), *quiz.items()])
            elif e.status == "error":
                marks = f"not graded: {e.detail}"
            else:
                marks = e.status + (f" ({e.detail})" if e.detail else "")
            rows.append((e.assignment, score, count(fns), count(quiz), marks))
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
        fmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4]  # noqa: E731
        out.append(fmt(head).rstrip())
        out.extend(fmt(r).rstrip() for r in rows)
        done = sum(e.complete for e in self.exercises)
        out += ["", f"total: {self.score:g} / {self.max_score:g} points; {done} of {len(self.exercises)} "
                    f"exercises complete"]
        return "\n".join(out)

    def figure(self):
        """The progress as a matplotlib Figure: one bar per exercise, one segment per test, green when it passes.

        Built without pyplot, so it never opens a window and never changes the notebook's backend.
        """
        from matplotlib.figure import Figure
        from matplotlib.patches import Patch

        n = max(len(self.exercises), 1)
        fig = Figure(figsize=(11, 0.55 * n + 1.3))
        ax = fig.add_subplot()
        for row, e in enumerate(self.exercises):
            y = n - 1 - row
            total = sum(t.max_points for t in e.tests) or 1.0
            if e.status == "graded" and e.tests:
                left = 0.0
                for t in e.tests:
                    width = t.max_points / total if total else 1 / len(e.tests)
                    ax.barh(y, width, left=left, height=0.7, color=PASS if t.passed else FAIL,
                            edgecolor="white", linewidth=1.5)
                    label = t.name if width * 11 * 0.72 > 0.075 * len(t.name) else ""
                    ax.text(left + width / 2, y, label, ha="center", va="center", fontsize=7, color="white")
                    left += width
                right = f"{e.score:g} / {e.max_score:g}"
            else:
                ax.barh(y, 1.0, height=0.7, color=IDLE, edgecolor="white")
                ax.text(0.5, y, e.status if e.status != "error" else f"not graded: {e.detail}"[:80],
                        ha="center", va="center", fontsize=8, color="black")
                right = f"0 / {e.max_score:g}" if e.status == "not started" else "-"
            ax.text(1.01, y, right, ha="left", va="center", fontsize=9)
        ax.set_yticks(range(n), [e.assignment for e in reversed(self.exercises)] or [""], fontsize=9)
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.6, n - 0.4)
        ax.set_xticks([])
        for side in ("top", "right", "bottom"):
            ax.spines[side].set_visible(False)
        done = sum(e.complete for e in self.exercises)
        ax.set_title(f"Course progress: {self.score:g} / {self.max_score:g} points, {done} of "
                     f"{len(self.exercises)} exercises complete", fontsize=11, loc="left")
        ax.legend(handles=[Patch(color=PASS, label="passes"), Patch(color=FAIL, label="not yet"),
                           Patch(color=IDLE, label="not started")],
                  loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=3, frameon=False, fontsize=8)
        fig.tight_layout()
        return fig


class ProgressView:
    """Shows a CourseProgress in a notebook: the picture and the table (text outside Jupyter)."""

    def __init__(self, report: CourseProgress) -> None:
        self.report = report
        self._fig = None

    @property
    def figure(self):
        if self._fig is None:
            self._fig = self.report.figure()
        return self._fig

    def png(self) -> bytes:
        buf = io.BytesIO()
        self.figure.savefig(buf, format="png", dpi=100)
        return buf.getvalue()

    def _repr_html_(self) -> str:
        data = base64.b64encode(self.png()).decode("ascii")
        return (f"<div class='fxcourse-progress'><img alt='course progress' src='data:image/png;base64,{data}'/>"
                f"<pre>{html.escape(self.report.table())}</pre></div>")

    def __repr__(self) -> str:
        return self.report.table()


# ------------------------------------------------------------------------------------------ collect

def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _test_name(test_id: str, functions: tuple[str, ...]) -> tuple[str, str]:
    """(name, kind) of a test cell id: test_quiz_q1 -> (q1, quiz); test_fuse_conv_bn_2 -> (fuse_conv_bn, function)."""
    rest = test_id[5:] if test_id.startswith("test_") else test_id
    if rest.startswith("quiz_"):
        return rest[5:], "quiz"
    match = max((f for f in functions if rest == f or rest.startswith(f + "_")), key=len, default=None)
    return match or rest, "function"


def _planned(course: Course, assignment: str) -> tuple[list[tuple[str, float]], Any, bool]:
    """(test id, points) of each test cell, the source notebook, and whether it is the instructor source."""
    try:
        path, full = course.source_notebook(assignment)
    except KeyError:
        return [], None, False
    try:
        nb = read_notebook(path)
    except NotebookError:
        return [], None, False
    tests = [(grade_id(c) or "test", float(nbgrader_meta(c).get("points", 0) or 0)) for c in test_cells(nb)]
    return tests, nb, full


def _untouched(working, source) -> bool:
    """Every answer cell of the working copy is exactly what the release made of the source's."""
    src = {grade_id(c): c for c in answer_cells(source)}
    own = {grade_id(c): c for c in answer_cells(working)}
    return bool(src) and set(src) == set(own) and all(
        _norm(own[g].source) == _norm(stub_solution(src[g].source)) for g in src)


def collect(course: Course, *, visible_only: bool = False, log: Callable[[str], Any] | None = None,
            check: Callable | None = None) -> CourseProgress:
    """Grade every exercise working copy of `course`; `log` receives one line per notebook as it goes."""
    from autograder.grader.engine.grading import check_notebook

    check = check or check_notebook
    say = log or (lambda _line: None)
    index = {e.id: e.functions for e in EXERCISES}
    assignments = course.assignments()
    say(f"Grading {len(assignments)} exercise(s) in {course.root}: each working copy runs in a jailed worker, "
        f"{SECONDS_PER_NOTEBOOK}.")
    out = []
    for assignment in assignments:
        functions = index.get(assignment, ())
        planned, source, full = _planned(course, assignment)
        max_score = sum(p for _, p in planned)
        path = course.exercises / assignment / f"{assignment}.ipynb"
        rel = str(path.relative_to(course.root)) if path.is_relative_to(course.root) else str(path)

        def idle(status: str, detail: str = "") -> ExerciseProgress:
            tests = [TestStatus(tid, *_test_name(tid, functions), False, 0.0, pts, status) for tid, pts in planned]
            return ExerciseProgress(assignment, rel, status, 0.0, max_score, tests, 0.0, detail)

        if not path.is_file():
            say(f"  {assignment}: no working copy at {rel}")
            out.append(idle("no working copy", rel))
            continue
        try:
            working = read_notebook(path)
        except NotebookError as exc:
            say(f"  {assignment}: cannot be read: {exc}")
            out.append(ExerciseProgress(assignment, rel, "error", 0.0, max_score, [], 0.0, str(exc)))
            continue
        if full and source is not None and _untouched(working, source):
            say(f"  {assignment}: not started (every answer cell is as released)")
            out.append(idle("not started"))
            continue
        start = time.monotonic()
        say(f"  {assignment}: grading ...")
        try:
            report = check(path, course, visible_only=visible_only)
        except NotebookError as exc:
            out.append(ExerciseProgress(assignment, rel, "error", 0.0, max_score, [], time.monotonic() - start,
                                        str(exc)))
            say(f"  {assignment}: not graded: {exc}")
            continue
        except Exception as exc:  # one broken exercise must not hide the others' progress
            detail = f"{type(exc).__name__}: {exc}"[:300]
            out.append(ExerciseProgress(assignment, rel, "error", 0.0, max_score, [], time.monotonic() - start,
                                        detail))
            say(f"  {assignment}: not graded: {detail}")
            continue
        seconds = time.monotonic() - start
        tests = [TestStatus(t.id, *_test_name(t.id, functions), t.passed, t.points, t.max_points, t.line)
                 for t in report.tests]
        out.append(ExerciseProgress(assignment, rel, "graded", report.score, report.max_score, tests, seconds,
                                    "", report.full_tests))
        say(f"  {assignment}: {report.score:g} / {report.max_score:g} ({seconds:.1f} s)")
    return CourseProgress(str(course.root), visible_only, out)


def show(as_json: bool = False, visible_only: bool = False, course: str | None = None) -> int:
    """`fxcourse progress`: the table (`as_json`: one JSON object); exit 1 when an exercise could not be graded."""
    found = find_course(Path.cwd(), course)
    if not found.assignments():
        return err(f"no exercises found in {found.root} (expected exercises/ or solutions/); pass --course DIR")
    report = collect(found, visible_only=visible_only, log=lambda line: print(line, file=sys.stderr, flush=True))
    print(json.dumps(report.to_json()) if as_json else report.table())
    return EXIT_FAILED if any(e.status == "error" for e in report.exercises) else EXIT_OK
