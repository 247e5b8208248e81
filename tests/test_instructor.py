"""The instructor's loop, headless, on a temporary course root: generate, submit, grade, feedback, export."""
from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from autograder.course.notebook import grade_id
from conftest import ROOT

pytestmark = pytest.mark.kernel
A = "ex01_tracing"


def fxcourse(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args, "--course", str(root)],
                          capture_output=True, text=True, cwd=root, timeout=1200)


def _fill(release: Path, answers: dict[str, str], dest: Path) -> None:
    nb = nbformat.read(str(release), as_version=4)
    for cell in nb.cells:
        if grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
    dest.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(dest))


@pytest.fixture(scope="module")
def course(tmp_path_factory, generated_course) -> Path:
    root = generated_course(tmp_path_factory.mktemp("course"), A)  # solutions/A and `fxcourse generate A`
    release = root / "exercises" / A / f"{A}.ipynb"
    assert release.read_text() == (ROOT / "exercises" / A / f"{A}.ipynb").read_text()
    sub = root / "submitted"
    shutil.copy(ROOT / "solutions" / A / f"{A}.ipynb", (sub / "alice" / A).mkdir(parents=True) or sub / "alice" / A)
    _fill(release, {
        "node_summary": "def node_summary(gm):\n    return [(n.op, n.name) for n in gm.graph.nodes]",
        "count_nodes": "def count_nodes(gm, op=None):\n    return len(gm.graph.nodes)",
        "quiz_q1": 'q1 = "D"', "quiz_q2": 'q2 = "B"',  # q1 right, q2 wrong (keys: solutions/quizzes.json)
    }, sub / "bob" / A / f"{A}.ipynb")
    (sub / "carol" / A).mkdir(parents=True)
    shutil.copy(release, sub / "carol" / A / f"{A}.ipynb")
    r = fxcourse(root, "grade", A, "--jobs", "2")  # side by side: the batch below regrades one at a time
    assert r.returncode == 0, r.stdout + r.stderr
    (root / "grade.log").write_text(r.stdout)
    return root


def test_grade_scores_correct_wrong_and_empty(course):
    log = (course / "grade.log").read_text()
    assert "3 submission(s), 2 at a time" in log and "[3/3]" in log
    assert sorted(l.split("] ")[1].split(":")[0] for l in log.splitlines() if "] " in l) == ["alice", "bob", "carol"]
    summary = log.split(f"summary of {A}:")[1]
    scores = {line.split()[0]: line.split()[1] for line in summary.strip().splitlines()}
    assert scores == {"alice": "10", "bob": "3", "carol": "0"}


def test_feedback_shows_messages_but_no_hidden_tests_or_keys(course):
    r = fxcourse(course, "feedback", A)
    assert r.returncode == 0, r.stdout + r.stderr
    for student in ("alice", "bob", "carol"):
        html = (course / "feedback" / student / A / f"{A}.html").read_text()
        for secret in ("BEGIN HIDDEN TESTS", "hidden=True", "key="):
            assert secret not in html, f"{student}'s feedback shows {secret!r}"
        if student != "alice":  # alice handed in the instructor source itself: her answers are her own
            assert "BEGIN SOLUTION" not in html
    bob = (course / "feedback" / "bob" / A / f"{A}.html").read_text()
    assert "counted 5 nodes, expected 2" in bob and "is not the right answer" in bob


def test_export_writes_the_three_scores(course):
    out = course / "grades.csv"
    r = fxcourse(course, "export", "--to", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {row["student_id"]: float(row["score"]) for row in csv.DictReader(out.open())}
    assert rows == {"alice": 10.0, "bob": 3.0, "carol": 0.0}


def test_report_reads_what_grading_wrote(course):
    """`fxcourse report` on a class graded for real: the gradebook's scores, the verdicts HardenedExecute wrote,
    and (with the course's quiz data beside the source for this command only) the quiz items."""
    quiz = course / "solutions" / "quizzes.json"
    shutil.copy(ROOT / "solutions" / "quizzes.json", quiz)
    try:
        r = fxcourse(course, "report", A, "--out", str(course / "report"))
    finally:
        quiz.unlink()
    assert r.returncode == 0 and "3 students, 1 assignments" in r.stdout, r.stdout + r.stderr
    rep = json.loads((course / "report" / "report.json").read_text(encoding="utf-8"))
    (summary,) = rep["assignments"]
    assert summary["scores"] == [0.0, 3.0, 10.0] and summary["submitted"] == 3 and not summary["missing"]
    count = next(m for m in rep["mistakes"] if m["function"] == "count_nodes")
    assert count["failed"] == 2 and any("counted 5 nodes, expected 2" in x["message"] for x in count["mistakes"])
    assert all(x["hint"] for x in count["mistakes"]), count  # each failure carries its one diagnosis
    items = {row["question"]: row for row in rep["items"]}
    assert items["q1"]["difficulty"] == pytest.approx(2 / 3) and items["q2"]["options"]["B"] == 1
    assert items["q1"]["no_answer"] == 1  # carol handed in the release: no option chosen
    canvas = list(csv.reader((course / "report" / "canvas.csv").open()))
    assert {row[3]: row[5] for row in canvas[2:]} == {"alice": "10", "bob": "3", "carol": "0"}


@pytest.mark.parametrize("argv, expected", [
    (["--jobs", "0"], "expected a whole number of at least 1, got '0'"),
    (["--jobs", "two"], "expected a whole number of at least 1, got 'two'"),
    (["--student", "zed"], "no submission from student 'zed' for ex01_tracing"),
])
def test_grade_refuses_bad_arguments_before_grading(course, argv, expected):
    before = (course / "gradebook.db").stat().st_mtime
    r = fxcourse(course, "grade", A, *argv)
    assert r.returncode == 2 and expected in r.stderr, r.stdout + r.stderr
    assert "grading" not in r.stdout and (course / "gradebook.db").stat().st_mtime == before


def test_a_rerun_skips_what_is_graded_from_the_same_files_and_regrade_grades_it_again_the_same(course):
    """`--regrade` means what it means with --cluster: without it, a submission graded from the same files is up
    to date; with it, it is graded again, to the same score."""
    r = fxcourse(course, "grade", A, "--student", "bob")
    assert r.returncode == 0 and f"grading {A}: 0 submission(s); 1 up to date" in r.stdout, r.stdout + r.stderr
    assert "bob: graded" not in r.stdout
    r = fxcourse(course, "grade", A, "--student", "bob", "--regrade")
    assert r.returncode == 0 and f"grading {A}: 1 submission(s)\n" in r.stdout and "bob: graded" in r.stdout, r.stdout
    summary = r.stdout.split(f"summary of {A}:")[1]
    assert sorted(l.split()[0] for l in summary.strip().splitlines()) == ["alice", "bob", "carol"]
    assert "bob                  3 / 10" in summary


def test_a_broken_submission_does_not_stop_the_batch_and_a_killed_run_loses_nothing(course):
    sub = course / "submitted"
    (sub / "dave" / A).mkdir(parents=True)
    (sub / "dave" / A / f"{A}.ipynb").write_text("{ this is not json")
    (sub / "erin" / A).mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / A / f"{A}.ipynb", sub / "erin" / A / f"{A}.ipynb")
    # A first run is killed as soon as one student is graded.
    proc = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", A, "--course", str(course)],
                            stdout=subprocess.PIPE, text=True, cwd=course, start_new_session=True)
    for line in proc.stdout:
        if "] " in line and ("graded" in line or "NOT GRADED" in line):
            os.killpg(proc.pid, signal.SIGKILL)
            break
    proc.wait()
    # The rerun grades what is not graded from these files yet; the broken notebook is reported, the others keep
    # their scores.
    r = fxcourse(course, "grade", A)
    assert r.returncode == 1, r.stdout
    assert "dave: NOT GRADED" in r.stdout and "not valid JSON" in r.stdout.split("dave: NOT GRADED")[1].splitlines()[0]
    summary = r.stdout.split(f"summary of {A}:")[1]
    assert any(l.split()[:3] == ["dave", "NOT", "GRADED"] for l in summary.splitlines()), summary
    scores = {line.split()[0]: line.split()[1] for line in summary.strip().splitlines()}
    assert {k: v for k, v in scores.items() if k != "dave"} == {"alice": "10", "bob": "3", "carol": "0",
                                                                  "erin": "10"}
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "fxcourse") as gb:
        subs = [s.student_id for s in gb.assignment_submissions(A)]
    assert len(subs) == len(set(subs)), f"duplicate submissions: {subs}"


def test_jobs_grade_several_assignments_side_by_side_each_line_naming_its_assignment(tmp_path, generated_course):
    """`fxcourse grade --jobs 2` of a whole course: the graders are shared across assignments (one student each
    here, so grading one assignment at a time would leave one of them idle), every line says which assignment
    it is, each assignment gets its own summary, and a broken submission of one costs nothing in the other."""
    b = "ex04_wrapping"
    root = generated_course(generated_course(tmp_path / "course", A), b)  # the second generate's gradebook only
    sub = root / "submitted"
    for student, assignment in (("alice", A), ("alice", b), ("bob", b)):
        (sub / student / assignment).mkdir(parents=True)
        shutil.copy(ROOT / "solutions" / assignment / f"{assignment}.ipynb", sub / student / assignment)
    (sub / "bob" / A).mkdir(parents=True)
    (sub / "bob" / A / f"{A}.ipynb").write_text("{ this is not json")
    r = fxcourse(root, "grade", "--jobs", "2")
    assert r.returncode == 1, r.stdout + r.stderr  # bob's ex01 is not graded
    assert "grading 2 assignments: 4 submission(s), 2 at a time" in r.stdout, r.stdout
    lines = sorted(l.split("] ", 1)[1].split(" (")[0] for l in r.stdout.splitlines() if l.startswith("  ["))
    assert lines == [f"{A}, alice: graded", f"{A}, bob: NOT GRADED", f"{b}, alice: graded", f"{b}, bob: graded"]
    assert r.stdout.index(f"summary of {A}:") < r.stdout.index(f"summary of {b}:")
    first, second = r.stdout.split(f"summary of {A}:")[1].split(f"summary of {b}:")
    assert [l.split()[:3] for l in first.strip().splitlines()] == [["alice", "10", "/"], ["bob", "NOT", "GRADED"]]
    assert {l.split()[0]: l.split()[1] for l in second.strip().splitlines()} == {"alice": "13", "bob": "13"}


def _workers_running(pid: int) -> list[str]:
    """The processes still working in a scratch folder of the grading process `pid` (its jailed workers)."""
    found = []
    for cwd in Path("/proc").glob("[0-9]*/cwd"):
        try:
            where = os.readlink(cwd)
        except OSError:
            continue
        if f"fxcourse-worker-{pid}-" in where:
            found.append(f"{cwd.parent.name}: {where}")
    return found


def test_ctrl_c_stops_every_grader_and_a_rerun_finishes(course):
    proc = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", A, "--jobs", "2", "--regrade",
                             "--course", str(course)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=course, start_new_session=True)
    assert proc.stdout.readline().startswith(f"grading {A}")
    first = proc.stdout.readline()  # one submission done, the others in a grader or waiting for one
    assert first.strip().startswith("[1/"), first
    proc.send_signal(signal.SIGINT)  # the command alone, not its process group: it must stop its graders itself
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "interrupted" in err and "summary" not in out, out + err
    deadline = time.monotonic() + 10
    while _workers_running(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _workers_running(proc.pid) == []
    r = fxcourse(course, "grade", A)
    summary = r.stdout.split(f"summary of {A}:")[1]
    scores = {line.split()[0]: line.split()[1] for line in summary.strip().splitlines()}
    expected = {"alice": "10", "bob": "3", "carol": "0"}
    if (course / "submitted" / "erin").is_dir():  # added by the broken-submission test when it ran first
        expected["erin"] = "10"
    assert {k: v for k, v in scores.items() if k != "dave"} == expected
