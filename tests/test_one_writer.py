"""Every path that grades a class writes the same gradebook, late penalties included.

One class of ex01_tracing (on time and late, right, wrong, broken and hostile), with nbgrader's late-submission
rule set to "zero" in the course folder's own nbgrader_config.py, is graded four ways, each in a fresh copy of
the course: `fxcourse grade --jobs 1`, `--jobs 2`, `--cluster local:2`, and plain `nbgrader autograde` with the
course's configuration. Every gradebook row (each grade cell's score, each notebook's late penalty, the
submission's time) must be the same on all four.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.grader.ops.nbgrader import command
from autograder.course.notebook import grade_id
from autograder.course.root import Course
from conftest import EX01_RIGHT

pytestmark = pytest.mark.kernel
A = "ex01_tracing"
DUE = "2026-03-01 12:00:00 UTC"
ON_TIME, LATE = "2026-03-01 11:00:00.000000 UTC", "2026-03-02 09:30:00.000000 UTC"

# student -> (answer cells by grade id, or None for the instructor source, or bytes for a file that is no
# notebook; the time of the submission)
CLASS = {
    "ann_on_time": (dict(EX01_RIGHT), ON_TIME),
    "ben_late": (None, LATE),
    "cid_late_wrong": ({"node_summary": "def node_summary(gm):\n    return [(n.name, n.op) for n in gm.graph.nodes]",
                        "count_nodes": EX01_RIGHT["count_nodes"], "quiz_q1": 'q1 = "A"'}, LATE),
    "dee_broken": (b"{ not a notebook", ON_TIME),
    "eve_hostile_late": ({**EX01_RIGHT, "count_nodes": "class Yes(int):\n    def __eq__(self, other):\n"
                                                       "        return True\n"
                                                       "def count_nodes(gm, op=None):\n    return Yes()\n"}, LATE),
}


def _course(generated_course, root: Path) -> Path:
    generated_course(root, A)
    (root / "nbgrader_config.py").write_text('c = get_config()\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    for student, (what, when) in CLASS.items():
        dest = root / "submitted" / student / A / f"{A}.ipynb"
        dest.parent.mkdir(parents=True)
        if what is None:
            shutil.copy(root / "solutions" / A / f"{A}.ipynb", dest)
        elif isinstance(what, bytes):
            dest.write_bytes(what)
        else:
            nb = nbformat.read(str(root / "exercises" / A / f"{A}.ipynb"), as_version=4)
            for cell in nb.cells:
                if grade_id(cell) in what:
                    cell.source = what[grade_id(cell)]
            nbformat.write(nb, str(dest))
        (dest.parent / "timestamp.txt").write_text(when)
        (dest.parent / "submission_secret.txt").write_text(f"key-of-{student}")   # what collect leaves beside it
    return root


def _nbgrader(root: Path, *argv: str) -> subprocess.CompletedProcess:
    cmd, env = command(Course(root), *argv)
    return subprocess.run(cmd, env=env, cwd=root, capture_output=True, text=True, timeout=900)


def _rows(root: Path) -> dict[str, tuple]:
    """student -> (submission time, {cell: auto score}, late penalty, score) as the gradebook holds them."""
    from nbgrader.api import Gradebook

    out = {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "fxcourse") as gb:
        for sub in gb.assignment_submissions(A):
            nb, = sub.notebooks
            out[sub.student_id] = (str(sub.timestamp), {g.name: g.auto_score for g in nb.grades},
                                   nb.late_submission_penalty, float(sub.score))
    return out


@pytest.fixture(scope="module")
def graded(tmp_path_factory, generated_course) -> dict[str, dict]:
    ways = {"--jobs 1": ["--jobs", "1"], "--jobs 2": ["--jobs", "2"], "--cluster local:2": ["--cluster", "local:2"],
            "nbgrader autograde": None}
    out = {}
    for way, args in ways.items():
        root = _course(generated_course, tmp_path_factory.mktemp("class"))
        r = _nbgrader(root, "db", "assignment", "add", A, f"--duedate={DUE}")
        assert r.returncode == 0, r.stdout + r.stderr
        if args is None:
            r = _nbgrader(root, "autograde", A)
        else:
            r = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", A, *args, "--course", str(root)],
                               capture_output=True, text=True, cwd=root, timeout=900)
        assert "dee_broken" in r.stdout + r.stderr, (way, r.stdout + r.stderr)
        out[way] = _rows(root)
        out[way]["autograded files"] = sorted(  # what feedback and release-feedback read, beside the notebooks
            (p.parent.parent.name, p.name, p.read_text()) for p in (root / "autograded").glob(f"*/{A}/*.txt"))
    return out


def test_every_path_writes_the_same_gradebook_rows_late_penalties_included(graded):
    first, *others = graded
    for way in others:
        assert graded[way] == graded[first], (way, graded[way], first, graded[first])


def test_the_rows_are_right_on_time_late_and_hostile(graded):
    rows = graded["--cluster local:2"]
    assert ("ben_late", "submission_secret.txt", "key-of-ben_late") in rows["autograded files"]
    dee = rows["dee_broken"]                   # not a notebook: recorded with its time, and no grades
    assert dee[0].startswith("2026-03-01 11:00") and set(dee[1].values()) == {None} and dee[3] == 0
    ann, ben, cid, eve = (rows[s] for s in ("ann_on_time", "ben_late", "cid_late_wrong", "eve_hostile_late"))
    assert ann[3] == 7 and ann[2] is None      # on time: the functions' 7 points (no quiz answered), no penalty
    assert ben[3] == 10 and ben[2] == 10       # late: nbgrader's "zero" rule takes the whole score
    assert 0 < cid[3] < 10 and cid[2] == cid[3]
    assert eve[1]["test_count_nodes"] == 0 and eve[2] == eve[3] < 10   # the always-equal int earns nothing
    assert ben[0].startswith("2026-03-02 09:30")
