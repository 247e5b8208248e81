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

from autograder.grader.notebook import grade_id
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


def test_regrading_is_idempotent(course):
    r = fxcourse(course, "grade", A, "--student", "bob")
    assert r.returncode == 0
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
    # The rerun grades everyone; the broken notebook is reported, the others keep their scores.
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


def test_one_kept_nbgrader_process_grades_every_assignment_of_a_run(tmp_path, generated_course, monkeypatch,
                                                                   capsys):
    """`fxcourse grade` of a course, one grader: ONE nbgrader process runs the autograde of each assignment."""
    from autograder.grader import batch
    from autograder.grader.nbgrader import NBGRADER_SESSION

    b = "ex04_wrapping"
    root = generated_course(generated_course(tmp_path / "course", A), b)
    for assignment in (A, b):
        (root / "submitted" / "alice" / assignment).mkdir(parents=True)
        shutil.copy(ROOT / "solutions" / assignment / f"{assignment}.ipynb", root / "submitted" / "alice" / assignment)
    started, start, kept = [], batch.Graders.start, batch.Graders.start_kept
    monkeypatch.setattr(batch.Graders, "start", lambda self, cmd, *a, **k: started.append(cmd) or start(self, cmd, *a, **k))
    monkeypatch.setattr(batch.Graders, "start_kept", lambda self, cmd, *a: started.append(cmd) or kept(self, cmd, *a))
    assert batch.grade(course=str(root)) == 0
    out = capsys.readouterr().out
    assert len(started) == 1 and NBGRADER_SESSION in started[0], started
    assert "alice                10 / 10" in out.split(f"summary of {A}:")[1].split("grading")[0]
    assert "alice                13 / 13" in out.split(f"summary of {b}:")[1]


def test_a_kept_nbgrader_process_forgets_each_commands_options(course):
    """A command's options must not leak into the next one's in the same nbgrader process (nbgrader's
    applications are singletons that keep their configuration): here an exclude list would skip bob."""
    from autograder.grader.batch import Graders
    from autograder.grader.nbgrader import Session
    from autograder.grader.root import find_course

    session = Session(find_course(course, None), Graders())
    first, second = [], []
    others = sorted(p.name for p in (course / "submitted").iterdir() if p.name != "alice")  # bob among them
    try:
        assert session.run(["autograde", A, "--student=*", "--create", "--force",
                            f"--CourseDirectory.student_id_exclude={','.join(others)}"], first.append, 600) == 0
        assert session.run(["autograde", A, "--student=bob", "--create", "--force"], second.append, 600) == 0
        assert session.run(["autograde", A, "--student=bob", "--no-such-option"], [].append, 600) != 0
    finally:
        session.close()
    students = lambda lines: [l.split("'")[1] for l in lines if "Creating/updating student with ID" in l]
    assert (students(first), students(second)) == (["alice"], ["bob"])
    assert session.proc is None


def test_a_prestarted_nbgrader_process_is_running_before_its_first_command(course):
    """Sessions.prestart starts the process itself (not only its bookkeeping), and the command a grader then
    gives it runs in that same process."""
    from autograder.grader.batch import Graders, Sessions
    from autograder.grader.root import find_course

    sessions = Sessions(find_course(course, None), Graders())
    lines: list[str] = []
    try:
        sessions.prestart(1)
        session = sessions.take()
        proc = session.proc
        assert proc is not None and proc.poll() is None, "prestart left no nbgrader process running"
        assert session.run(["autograde", A, "--student=alice", "--create", "--force"], lines.append, 600) == 0
        assert session.proc is proc, "the first command started a second process"
    finally:
        sessions.close()
    assert any("Creating/updating student with ID 'alice'" in line for line in lines), lines[-20:]
    assert proc.returncode == 0


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_kept_nbgrader_processes_are_forked_from_one_that_imported_nbgrader_once(course):
    """`fxcourse grade`'s kept nbgrader processes are forked by the run's nbgrader fork process: each runs its
    commands as a fresh one would; one killed at its time limit is replaced by a new fork; all of them, and the
    fork process, are gone once the run has closed them."""
    from autograder.grader.batch import Graders, Sessions
    from autograder.grader.nbfork import Child
    from autograder.grader.root import find_course

    graders = Graders()
    sessions = Sessions(find_course(course, None), graders)
    logs: dict[str, list[str]] = {"alice": [], "bob": []}
    try:
        sessions.prestart(2)
        first, second = sessions.take(), sessions.take()
        for session, student in ((first, "alice"), (second, "bob")):
            assert session.run(["autograde", A, f"--student={student}", "--create", "--force"],
                               logs[student].append, 600) == 0, logs[student][-20:]
        forker = graders.forker.proc
        assert forker is not None and not graders.forker.broken
        killed = first.proc
        assert isinstance(killed, Child) and isinstance(second.proc, Child) and killed.pid != second.proc.pid
        assert _parent(killed.pid) == _parent(second.proc.pid) == forker.pid
        assert first.run(["autograde", A, "--student=alice", "--create", "--force"], [].append, 0.01) is None
        assert first.timed_out and first.proc is None and killed.returncode == -signal.SIGKILL
        again: list[str] = []
        assert first.run(["autograde", A, "--student=alice", "--create", "--force"], again.append, 600) == 0, again
        assert first.proc.pid != killed.pid and _parent(first.proc.pid) == forker.pid
        pids = [first.proc.pid, second.proc.pid]
    finally:
        sessions.close()
        graders.close()
    for student, lines in logs.items():
        assert any(f"Creating/updating student with ID '{student}'" in line for line in lines), lines[-20:]
    assert forker.returncode == 0 and all(_gone(pid) for pid in pids)
    assert fxcourse(course, "export").returncode == 0  # the gradebook as the kept processes left it


def test_a_forked_nbgrader_process_ends_when_let_go_of_and_with_its_fork_process(course, capsys):
    """A kept process the grading process lets go of while it runs (its connection closes: the grading process
    went away) is killed; one whose fork process dies dies with it, its command fails as a crashed one does, and
    the next command gets a fresh process, said once."""
    from autograder.grader.batch import Graders, Sessions
    from autograder.grader.forkserver import ended
    from autograder.grader.root import find_course

    graders = Graders()
    sessions = Sessions(find_course(course, None), graders)
    try:
        sessions.prestart(2)
        let_go, orphan = sessions.take(), sessions.take()
        assert let_go.proc.confirm() and orphan.proc.confirm()
        let_go.proc.conn.shutdown(socket.SHUT_RDWR)  # as the grading process's end closes when it goes away
        assert ended(let_go.proc.pid, 60) and let_go.proc.wait(60) == -signal.SIGKILL
        os.kill(graders.forker.proc.pid, signal.SIGKILL)
        assert ended(orphan.proc.pid, 60)
        argv = ["autograde", A, "--student=alice", "--create", "--force"]
        assert orphan.run(argv, [].append, 600) is None and orphan.proc is None
        lines: list[str] = []
        assert orphan.run(argv, lines.append, 600) == 0, lines[-20:]
        assert isinstance(orphan.proc, subprocess.Popen)
    finally:
        sessions.close()
        graders.close()
    err = capsys.readouterr().err
    assert err.count("nbgrader's fork process could not be reached") == 1, err


def test_an_interrupt_sent_as_a_kept_process_is_forked_still_stops_it(course):
    """Ctrl-C in the first moment of a run: the interrupt reaches a kept process the fork process has only just
    forked (before the process has set its own handler), and stops it, as it stops one that runs."""
    from autograder.grader.batch import Graders, Sessions
    from autograder.grader.root import find_course

    graders = Graders()
    sessions = Sessions(find_course(course, None), graders)
    try:
        sessions.prestart(1)
        proc = sessions.take().proc
        proc.send_signal(signal.SIGINT)  # queued until the fork process has forked it, then sent at once
        assert proc.wait(timeout=120) != 0 and proc.pid is not None
    finally:
        sessions.close()
        graders.close()


def test_a_fork_process_that_cannot_be_had_leaves_fresh_nbgrader_processes(course, monkeypatch, capsys):
    """Where the nbgrader fork process cannot import (or fork), each kept process starts afresh, and one line
    says so; turned off with the fork server (FXCOURSE_FORKSERVER=0), they start afresh without a word."""
    from autograder.grader import nbfork
    from autograder.grader.batch import Graders, Sessions
    from autograder.grader.root import find_course

    for broken, said in ((True, 1), (False, 0)):
        if broken:
            monkeypatch.setattr(nbfork, "NBFORK_LAUNCH", "import sys; sys.exit(3)")
        else:
            monkeypatch.setenv("FXCOURSE_FORKSERVER", "0")
        graders = Graders()
        sessions = Sessions(find_course(course, None), graders)
        try:
            sessions.prestart(2 if broken else 1)  # two, to be told once; one, to be told nothing
            taken = [sessions.take() for _ in range(2 if broken else 1)]
            for session in taken:
                lines: list[str] = []
                assert session.run(["autograde", A, "--student=alice", "--create", "--force"], lines.append,
                                   600) == 0, lines[-20:]
                assert isinstance(session.proc, subprocess.Popen)
        finally:
            sessions.close()
            graders.close()
        err = capsys.readouterr().err
        assert err.count("nbgrader's fork process") == said, err
        if said:
            assert "exited with code 3" in err and "as a fresh process instead" in err, err


def test_the_kept_processes_take_the_grading_process_s_finding_about_the_jail(tmp_path, generated_course,
                                                                               monkeypatch):
    """The grading process tries the jail once; the nbgrader processes forked for it take its finding instead of
    trying again. Shown with a finding the test makes up: a piece missing, which the grader then refuses over."""
    from autograder.grader import sandbox
    from autograder.grader.batch import Graders, Sessions
    from autograder.grader.root import find_course

    root = generated_course(tmp_path, A)
    (root / "submitted" / "alice" / A).mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / A / f"{A}.ipynb", root / "submitted" / "alice" / A)
    monkeypatch.delenv("FXCOURSE_ISOLATION", raising=False)
    monkeypatch.setattr(sandbox, "_SUPPORT", {"a piece made up by the test": "to see it handed down"})
    graders = Graders()
    sessions = Sessions(find_course(root, None), graders)
    lines: list[str] = []
    try:
        session = sessions.take()
        session.run(["autograde", A, "--student=alice", "--create", "--force"], lines.append, 600)
    finally:
        sessions.close()
        graders.close()
    assert any("missing a piece made up by the test (to see it handed down)" in line for line in lines), lines[-30:]


def _graders_running(course: Path) -> list[str]:
    """Command lines of processes still grading this course."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"--CourseDirectory.root={course}" in text:
            found.append(text)
    return found


def test_ctrl_c_stops_every_grader_and_a_rerun_finishes(course):
    proc = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", A, "--jobs", "2", "--course",
                             str(course)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=course,
                            start_new_session=True)
    assert proc.stdout.readline().startswith(f"grading {A}")
    first = proc.stdout.readline()  # one submission done, the others in a grader or waiting for one
    assert first.strip().startswith("[1/"), first
    proc.send_signal(signal.SIGINT)  # the command alone, not its process group: it must stop its graders itself
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "interrupted" in err and "summary" not in out, out + err
    deadline = time.monotonic() + 10
    while _graders_running(course) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _graders_running(course) == []
    r = fxcourse(course, "grade", A)
    summary = r.stdout.split(f"summary of {A}:")[1]
    scores = {line.split()[0]: line.split()[1] for line in summary.strip().splitlines()}
    expected = {"alice": "10", "bob": "3", "carol": "0"}
    if (course / "submitted" / "erin").is_dir():  # added by the broken-submission test when it ran first
        expected["erin"] = "10"
    assert {k: v for k, v in scores.items() if k != "dave"} == expected
