"""What `fxcourse report` reads: the gradebook (in SQL of its own, SQLite or PostgreSQL, no nbgrader import) and
the autograded notebooks (autograded/<student>/<assignment>/*.ipynb: each answer cell, and each test cell's
verdict as HardenedExecute wrote it: an error output "message\\nHint: hint" when it failed).

Which cells are graded functions and quiz questions comes from the instructor source notebook
(solutions/<assignment>/<assignment>.ipynb: answer cell `fn` with test cell `test_fn`; `quiz_qN` with
`test_quiz_qN`), the quiz keys and sections from solutions/quizzes.json, and the release's own code of each
answer cell from exercises/ (left out of the similarity fingerprints).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from autograder.checks.verdict import Verdict
from autograder.grader.classroom.gradebook import read_rows
from autograder.course.root import Course

__all__ = ["ReportError", "Failure", "Submission", "Assignment", "ClassData", "read_class", "split_verdict"]


class ReportError(Exception):
    """Bad input for the report (no gradebook, an unknown assignment, an empty class): one line says which."""


Failure = Verdict   # a failed test cell's verdict, read back from its output (autograder/checks/verdict.py)


@dataclass
class Submission:
    student: str
    score: float = 0.0
    timestamp: datetime | None = None
    late: bool = False
    points: dict[str, float] = field(default_factory=dict)      # test cell -> points
    answers: dict[str, str] = field(default_factory=dict)       # answer cell -> source
    failures: dict[str, Failure] = field(default_factory=dict)  # test cell -> its verdict
    notebook: bool = False                                       # an autograded notebook was found


@dataclass
class Assignment:
    name: str
    duedate: datetime | None
    max_score: float
    tests: dict[str, float]                        # test cell -> max points, in notebook order
    functions: list[str]                           # graded functions, in notebook order
    questions: list[dict[str, Any]]                # quiz questions (solutions/quizzes.json), in order
    release: dict[str, str]                        # answer cell -> the release's own code
    submissions: dict[str, Submission]

    def chosen(self, sub: Submission, qid: str) -> str | None:
        """The option a submission chose for quiz question `qid` (its answer cell `qid = "X"`), or None."""
        found = re.findall(rf'^[ \t]*{qid}[ \t]*=[ \t]*["\']([A-Za-z])["\']', sub.answers.get(f"quiz_{qid}", ""), re.M)
        return found[-1].upper() if found else None


@dataclass
class ClassData:
    course: Course
    url: str
    students: dict[str, dict[str, str]]            # id -> first_name, last_name, email, lms_user_id
    assignments: list[Assignment]


def split_verdict(text: str, test_id: str = "") -> Verdict:
    """A failed test cell's error value, "message\\nHint: hint", as HardenedExecute writes it (Verdict.text)."""
    return Verdict.from_text(test_id, text)


_STUDENTS = "SELECT id, first_name, last_name, email, lms_user_id FROM student"
_ASSIGNMENTS = "SELECT name, duedate FROM assignment"
_CELLS = """
SELECT a.name, bc.name, c.max_score
  FROM (SELECT id, max_score FROM grade_cells UNION ALL SELECT id, max_score FROM task_cells) c
  JOIN base_cell bc ON c.id = bc.id JOIN notebook n ON bc.notebook_id = n.id JOIN assignment a ON n.assignment_id = a.id
"""
_SUBMISSIONS = """
SELECT a.name, sa.student_id, sa.timestamp, sa.extension
  FROM submitted_assignment sa JOIN assignment a ON sa.assignment_id = a.id
"""
# nbgrader's Grade.score: the manual score over the automatic one, plus extra credit
_GRADES = """
SELECT a.name, sa.student_id, bc.name,
       CASE WHEN g.manual_score IS NOT NULL THEN g.manual_score + COALESCE(g.extra_credit, 0.0)
            WHEN g.auto_score IS NOT NULL THEN g.auto_score + COALESCE(g.extra_credit, 0.0) ELSE 0.0 END
  FROM grade g JOIN submitted_notebook sn ON g.notebook_id = sn.id
  JOIN submitted_assignment sa ON sn.assignment_id = sa.id JOIN assignment a ON sa.assignment_id = a.id
  JOIN base_cell bc ON g.cell_id = bc.id
"""


def _when(value: Any) -> datetime | None:
    """A gradebook DATETIME (a datetime from PostgreSQL, text from SQLite) as a naive UTC datetime."""
    if value is None or isinstance(value, datetime):
        return value.replace(tzinfo=None) if value is not None else None
    try:
        return datetime.fromisoformat(str(value)).replace(tzinfo=None)
    except ValueError:
        return None


def _cells(path: Path) -> list[dict[str, Any]]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [c for c in nb.get("cells", []) if isinstance(c, dict) and c.get("cell_type") == "code"]


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def _gid(cell: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    meta = (cell.get("metadata") or {}).get("nbgrader") or {}
    return str(meta.get("grade_id") or ""), meta


def _layout(course: Course, name: str) -> tuple[list[str], dict[str, str]]:
    """(graded functions, {answer cell: the release's code}) of one assignment, from its source and release."""
    source, _ = course.source_notebook(name)
    if not source.is_file():
        return [], {}
    ids = [(_gid(c)[0], _gid(c)[1]) for c in _cells(source)]
    tests = {g for g, m in ids if m.get("grade")}
    functions = [g for g, m in ids if m.get("solution") and not g.startswith("quiz_") and f"test_{g}" in tests]
    release = {}
    released = course.exercises / name / f"{name}.ipynb"
    if released.is_file():
        release = {g: _text(c.get("source")) for c in _cells(released) for g, m in [_gid(c)] if m.get("solution")}
    return functions, release


def read_notebook_verdicts(path: Path) -> tuple[dict[str, str], dict[str, Failure]]:
    """(answer cells' sources, failed test cells' verdicts) of one autograded notebook."""
    answers, failures = {}, {}
    for cell in _cells(path):
        gid, meta = _gid(cell)
        if not gid:
            continue
        if meta.get("solution"):
            answers[gid] = _text(cell.get("source"))
        if meta.get("grade"):
            for out in cell.get("outputs") or []:
                if isinstance(out, dict) and out.get("output_type") == "error":
                    failures[gid] = split_verdict(str(out.get("evalue", "")), gid)
    return answers, failures


def read_class(course: Course, url: str, wanted: list[str] | None = None, progress: Any = None) -> ClassData:
    """The class as the report sees it: the gradebook's roster, assignments, submissions and grades, and each
    autograded notebook's answers and verdicts. `progress` (a report.progress.Progress) is told of the work."""
    from autograder.grader.report.progress import Progress

    progress = progress or Progress(live=False, quiet=True)
    progress.stage("reading the gradebook", 1)
    students_rows = read_rows(url, _STUDENTS)
    if students_rows is None:
        raise ReportError(f"no gradebook at {_redact(url)}: grade the class first (fxcourse grade), or name it "
                          "with --db")
    students = {str(r[0]): {"first_name": r[1] or "", "last_name": r[2] or "", "email": r[3] or "",
                            "lms_user_id": r[4] or ""} for r in students_rows}
    known = {str(n): _when(d) for n, d in read_rows(url, _ASSIGNMENTS) or []}
    names = sorted(known) if not wanted else wanted
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ReportError(f"unknown assignment {unknown[0]!r}: the gradebook has "
                          f"{', '.join(sorted(known)) or 'no assignments'}")
    if not students:
        raise ReportError(f"the class is empty: the gradebook {_redact(url)} has no students")
    cells: dict[str, dict[str, float]] = {}
    for a, cell, top in read_rows(url, _CELLS) or []:
        cells.setdefault(a, {})[cell] = float(top)
    subs: dict[str, dict[str, Submission]] = {n: {} for n in names}
    for a, student, stamp, extension in read_rows(url, _SUBMISSIONS) or []:
        if a in subs:
            sub = Submission(str(student), timestamp=_when(stamp))
            due = known[a]
            if due is not None and sub.timestamp is not None:
                sub.late = sub.timestamp > (_when(extension) or due)
            subs[a][sub.student] = sub
    for a, student, cell, score in read_rows(url, _GRADES) or []:
        sub = subs.get(a, {}).get(str(student))
        if sub is not None:
            sub.points[cell] = float(score or 0.0)
    progress.stage("reading the quiz data (with the check library)", 1)
    from autograder.coursedata import quizzes

    quiz = quizzes.load(course.root)
    out = []
    for name in names:
        functions, release = _layout(course, name)
        order = [f"test_{f}" for f in functions]
        tests = {t: cells.get(name, {})[t] for t in order if t in cells.get(name, {})}
        tests.update({t: m for t, m in sorted(cells.get(name, {}).items()) if t not in tests})
        for sub in subs[name].values():
            sub.score = sum(sub.points.values())
        out.append(Assignment(name, known[name], sum(tests.values()), tests, functions,
                              quiz.get(name, {}).get("questions", []), release, subs[name]))
    total = sum(len(a.submissions) for a in out)
    progress.stage("reading the autograded notebooks", total)
    for a in out:
        for sub in a.submissions.values():
            folder = course.root / "autograded" / sub.student / a.name
            safe = sub.student not in ("", ".", "..") and "/" not in sub.student and "\\" not in sub.student
            for path in sorted(folder.glob("*.ipynb")) if safe and folder.is_dir() else []:
                try:
                    answers, failures = read_notebook_verdicts(path)
                except (OSError, ValueError):
                    continue
                sub.answers.update(answers)
                sub.failures.update(failures)
                sub.notebook = True
            progress.advance()
    return ClassData(course, url, students, out)


def _redact(url: str) -> str:
    return re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", url)
