"""The totals as gradebook CSVs that an LMS imports, beside `fxcourse export`'s nbgrader CSV.

Canvas (Grades > Import): the columns of Canvas's own gradebook export, `Student` ("Last, First"), `ID` (the
Canvas user id: nbgrader's lms_user_id), `SIS User ID`, `SIS Login ID` (the nbgrader student id), `Section`,
then one column per assignment (a column Canvas does not know yet becomes a new assignment), and a second row
`Points Possible` with each assignment's maximum.

Moodle (Grades > Import > CSV file): a header row, one row per student; `Username` and `Email address` are
the columns its "Map from" step matches users by, `First name`, `Last name` beside them, then one column per
assignment (mapped to a grade item, or a new one, in the same step).

A missing submission is an empty cell (not a zero): both LMSs leave an empty cell alone on import.
"""
from __future__ import annotations

import csv
from pathlib import Path

from autograder.grader.report.data import ClassData

__all__ = ["CANVAS_COLUMNS", "MOODLE_COLUMNS", "write_canvas", "write_moodle"]

CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_COLUMNS = ["First name", "Last name", "Username", "Email address"]


def _score(data: ClassData, student: str) -> list[str]:
    return [f"{a.submissions[student].score:g}" if student in a.submissions else "" for a in data.assignments]


def write_canvas(data: ClassData, path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(CANVAS_COLUMNS + [a.name for a in data.assignments])
        w.writerow(["    Points Possible", "", "", "", ""] + [f"{a.max_score:g}" for a in data.assignments])
        for sid in sorted(data.students):
            info = data.students[sid]
            name = ", ".join(x for x in (info["last_name"], info["first_name"]) if x) or sid
            w.writerow([name, info["lms_user_id"], sid, sid, ""] + _score(data, sid))


def write_moodle(data: ClassData, path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(MOODLE_COLUMNS + [a.name for a in data.assignments])
        for sid in sorted(data.students):
            info = data.students[sid]
            w.writerow([info["first_name"], info["last_name"], sid, info["email"]] + _score(data, sid))
