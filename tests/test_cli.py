"""The fxcourse command as a learner and a script see it: output contract, messages, exit codes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SOLUTION = ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb"
RELEASE = ROOT / "exercises" / "ex01_tracing" / "ex01_tracing.ipynb"


def fxcourse(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=900)


@pytest.mark.kernel
def test_check_json_contract_on_the_solution_and_the_release():
    full = fxcourse("check", str(SOLUTION), "--json")
    assert full.returncode == 0, full.stderr
    report = json.loads(full.stdout)
    assert set(report) >= {"notebook", "score", "max_score", "tests"}
    assert report["notebook"] == "ex01_tracing" and report["score"] == report["max_score"] == 10.0
    for t in report["tests"]:
        assert set(t) >= {"id", "points", "max_points", "passed", "message"}
        assert t["id"].startswith("test_") and t["passed"] and t["points"] == t["max_points"]
    empty = fxcourse("check", str(RELEASE), "--json")
    assert empty.returncode == 1
    report = json.loads(empty.stdout)
    assert report["score"] == 0.0 and report["max_score"] == 10.0
    assert all(not t["passed"] and t["points"] == 0.0 and t["message"] for t in report["tests"])
    assert any("not implemented yet" in t["message"] for t in report["tests"])


@pytest.mark.kernel
def test_check_text_output_names_each_test_and_a_hint():
    r = fxcourse("check", str(RELEASE))
    assert r.returncode == 1
    assert "ex01_tracing: 0 / 10 points" in r.stdout
    assert "test_node_summary" in r.stdout and "Hint:" in r.stdout


@pytest.mark.parametrize("content,expected", [
    (None, "no such file"),
    (b"", "the file is empty"),
    (b"{oops", "not valid JSON"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "not UTF-8"),
    (b'{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}', "unknown assignment 'notes'"),
])
def test_check_bad_input_is_one_clear_line_and_exit_2(tmp_path, content, expected):
    path = tmp_path / "notes.ipynb"
    if content is not None:
        path.write_bytes(content)
    r = fxcourse("check", str(path))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fxcourse: error:") and expected in lines[0]
    assert r.stdout == ""


def test_generate_and_grade_refuse_unknown_assignments():
    r = fxcourse("generate", "ex99_nothing")
    assert r.returncode == 2 and "unknown assignment 'ex99_nothing'" in r.stderr
    assert "ex01_tracing" in r.stderr


@pytest.mark.parametrize("command", [["export", "--to", "grades.csv"], ["feedback"]])
def test_an_nbgrader_command_past_its_time_limit_is_stopped_with_a_clear_error(tmp_path, command):
    (tmp_path / "solutions").mkdir()
    env = {**os.environ, "FXCOURSE_NBGRADER_TIMEOUT": "0.3"}  # nbgrader alone takes longer than that to start
    r = subprocess.run([sys.executable, "-m", "autograder.cli", *command, "--course", str(tmp_path)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120, env=env)
    assert r.returncode == 1
    assert f"nbgrader {'export' if command[0] == 'export' else 'generate_feedback'} did not finish within 0.3 s" in r.stderr


def test_a_bad_nbgrader_time_limit_is_named(tmp_path):
    (tmp_path / "solutions").mkdir()
    env = {**os.environ, "FXCOURSE_NBGRADER_TIMEOUT": "soon"}
    r = subprocess.run([sys.executable, "-m", "autograder.cli", "export", "--course", str(tmp_path)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120, env=env)
    assert r.returncode == 2 and "FXCOURSE_NBGRADER_TIMEOUT must be a number of seconds above 0, got 'soon'" in r.stderr


def test_usage_errors_exit_2():
    r = fxcourse("frobnicate")
    assert r.returncode == 2


# ------------------------------------------------------------- fxcourse grade: the engine's coordinator

class _Book:
    """A gradebook that records what the coordinator writes into it."""

    def __init__(self) -> None:
        self.written, self.ungraded = [], []

    def write(self, assignment, student, notebooks, digest, timestamp):
        self.written.append(student)

    def record_ungraded(self, assignment, student, timestamp=None):
        self.ungraded.append(student)


def _units(tmp_path, students, progress):
    from autograder.grader.classroom.runner import Submission, Unit

    return [Unit("A", Submission(s, tmp_path / s, {}, f"{s}-digest"), {}, progress) for s in students]


def test_the_local_runner_writes_each_graded_student_and_reports_the_one_it_could_not_grade(tmp_path, capsys):
    from types import SimpleNamespace

    from autograder.grader.classroom.runner import LocalRunner, run_units
    from autograder.grader.classroom.grade_progress import GradeProgress

    def task(assignment, sources, files, student):
        if student == "ben":
            return json.dumps({"ok": False, "error": "NotJSONError: Notebook does not appear to be JSON",
                               "seconds": 0.1})
        return json.dumps({"ok": True, "notebooks": {}, "seconds": 0.2})

    course = SimpleNamespace(root=tmp_path, solutions=tmp_path / "solutions")
    progress, book, runner = GradeProgress(3, live=False), _Book(), LocalRunner(2)
    runner.open()
    try:
        written = run_units(course, _units(tmp_path, ["ann", "ben", "cat"], progress), runner, book, task=task)
    finally:
        runner.close()
    out = capsys.readouterr().out
    assert written == 2 and sorted(book.written) == ["ann", "cat"] and book.ungraded == ["ben"]
    assert progress.done == 3 and progress.not_graded == {"ben"}
    assert "ann: graded" in out and "cat: graded" in out
    assert "NotJSONError" in out.split("ben: NOT GRADED")[1].splitlines()[0]


def test_a_ctrl_c_during_a_local_run_stops_its_workers_and_writes_nothing_more(monkeypatch, capsys):
    """The first Ctrl-C is raised between the coordinator's own short waits, never inside a future's locked wait
    (that can leave its lock held); what runs is stopped (sandbox.stop_workers) and nothing more is written."""
    import concurrent.futures
    import signal
    import threading
    import time
    from types import SimpleNamespace

    from autograder.grader.classroom import runner as engine
    from autograder.grader.jail import sandbox
    from autograder.course.console import deferred_interrupt
    from autograder.grader.classroom.grade_progress import GradeProgress

    escaped, started = [], threading.Event()

    def guarded(fn):
        def inner(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except BaseException as exc:
                escaped.append(type(exc).__name__)
                raise
        return inner

    def task(assignment, sources, files, student):  # a worker that runs until it is stopped
        started.set()
        sandbox.STOPPING.wait(30)
        return json.dumps({"ok": True, "notebooks": {}, "seconds": 0.0})

    monkeypatch.setattr(concurrent.futures.Future, "result", guarded(concurrent.futures.Future.result))
    monkeypatch.setattr(engine, "wait", guarded(concurrent.futures.wait))
    progress, book, runner = GradeProgress(3, live=False), _Book(), engine.LocalRunner(2)
    course = SimpleNamespace(root=ROOT, solutions=ROOT / "solutions")
    runner.open()
    start = time.monotonic()
    try:
        with deferred_interrupt() as check:
            threading.Thread(target=lambda: started.wait(10) and os.kill(os.getpid(), signal.SIGINT)).start()
            with pytest.raises(KeyboardInterrupt):
                engine.run_units(course, _units(Path("."), ["ann", "ben", "cat"], progress), runner, book, task=task,
                                 check=check)
    finally:
        runner.close()
    assert escaped == [] and book.written == [] and progress.done == 0
    assert time.monotonic() - start < 20 and not sandbox.STOPPING.is_set()  # cleared for the next run


def test_the_coordinator_reads_nbgrader_s_scores_without_importing_nbgrader(tmp_path):
    """What `fxcourse grade` only reads of the gradebook (is an assignment there, each student's score) comes from
    SQL of its own: the same scores nbgrader gives, with manual scores over automatic ones, extra credit, cells
    never graded and task cells, and nbgrader itself never imported."""
    from nbgrader.api import Gradebook as NbGradebook

    from autograder.grader.classroom.gradebook import knows_assignment, submission_scores

    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with NbGradebook(url, "fxcourse") as gb:
        for name, cells in (("hw", {"p1": [2.0, 3.0], "p2": [1.5]}), ("other", {"p1": [7.0]})):
            gb.add_assignment(name)
            for nb, tops in cells.items():
                gb.add_notebook(nb, name)
                for i, top in enumerate(tops):
                    gb.add_grade_cell(f"c{i}", nb, name, max_score=top, cell_type="code")
        gb.add_task_cell("t0", "p2", "hw", max_score=4.0, cell_type="markdown")
        scores = {"ann": {("p1", "c0"): (2.0, None, None), ("p1", "c1"): (1.0, None, None)},  # p2 never graded
                  "ben": {("p1", "c0"): (0.0, 2.0, 0.5), ("p1", "c1"): (3.0, None, 1.0), ("p2", "c0"): (None, 1.0, None),
                          ("p2", "t0"): (None, 3.5, None)},
                  "cy": {}}
        for student, grades in scores.items():
            gb.add_student(student)
            gb.add_submission("hw", student)
            gb.add_submission("other", student)
            for (nb, cell), (auto, manual, extra) in grades.items():
                grade = gb.find_grade(cell, nb, "hw", student)
                grade.auto_score, grade.manual_score, grade.extra_credit = auto, manual, extra
        gb.find_grade("c0", "p1", "other", "ann").auto_score = 5.0
        gb.db.commit()
        expected = {name: sorted((sub.student_id, float(sub.score), float(sub.max_score))
                                 for sub in gb.assignment_submissions(name)) for name in ("hw", "other")}
    assert expected["hw"][0] == ("ann", 3.0, 10.5) and expected["hw"][1][1] == 2.5 + 4.0 + 1.0 + 3.5
    assert {name: submission_scores(url, name) for name in ("hw", "other")} == expected
    assert submission_scores(url, "nothere") == []
    assert knows_assignment(url, "hw") and not knows_assignment(url, "nothere")
    missing = tmp_path / "none.db"
    assert not knows_assignment(f"sqlite:///{missing}", "hw") and submission_scores(f"sqlite:///{missing}", "hw") == []
    assert not missing.exists()  # asking made no file
    (tmp_path / "empty.db").touch()
    assert not knows_assignment(f"sqlite:///{tmp_path / 'empty.db'}", "hw")
    # the course's nbgrader_config.py names the gradebook; the package's, which nbgrader reads first, never does
    from traitlets.config.loader import PyFileConfigLoader

    package = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT / "autograder")).load_config()
    assert "db_url" not in package.get("CourseDirectory", {}), "gradebook_url reads only the course's config"
    (tmp_path / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.db_url = {url!r}\n")
    r = subprocess.run([sys.executable, "-c", "import sys\nfrom pathlib import Path\nfrom autograder.grader.classroom.gradebook "
                        "import gradebook_url, knows_assignment, submission_scores\n"
                        "from autograder.course.root import Course\n"
                        f"url = gradebook_url(Course(Path({str(tmp_path)!r})))\nassert url == {url!r}, url\n"
                        "knows_assignment(url, 'hw'); submission_scores(url, 'hw')\n"
                        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('nbgrader', 'sqlalchemy')))"],
                       capture_output=True, text=True, cwd=ROOT)
    # nor SQLAlchemy, for an SQLite gradebook (Python's sqlite3 reads it)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr


def test_the_coordinator_s_sqlite_read_waits_out_a_grader_s_write_and_writes_nothing(tmp_path):
    """A grader holding the SQLite gradebook's write lock delays the coordinator's read (it retries) but does not
    fail it; the read opens the file read-only."""
    import sqlite3
    import threading

    from nbgrader.api import Gradebook as NbGradebook

    from autograder.grader.classroom.gradebook import knows_assignment

    db = tmp_path / "gradebook.db"
    url = f"sqlite:///{db}"
    with NbGradebook(url, "fxcourse") as gb:
        gb.add_assignment("hw")
        gb.add_notebook("p1", "hw")
    writer = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN EXCLUSIVE")  # what a grader's commit holds; here for 6 s, longer than one wait of 5 s
    release = threading.Timer(6.0, writer.execute, ["COMMIT"])
    release.start()
    before = db.stat().st_mtime_ns
    try:
        assert knows_assignment(url, "hw")  # one wait (5 s) alone would have failed it
    finally:
        release.join()
        writer.close()
    assert db.stat().st_mtime_ns == before and not Path(f"{db}-journal").exists()



def test_a_new_gradebook_gets_nbgrader_s_schema_revision_read_in_process(monkeypatch, tmp_path):
    """nbgrader asks an `alembic heads` process for a new gradebook's schema revision; the grader reads the same
    revision in its own process (the coordinator, and every nbgrader process it starts, for one command or
    several), and nbgrader writes it as it always did."""
    import nbgrader.api
    from sqlalchemy import create_engine, text

    from autograder.grader.classroom import gradebook
    from autograder.grader.ops.nbgrader import NBGRADER_EACH, NBGRADER_LAUNCH

    def written(db: Path) -> list[str]:
        with create_engine(f"sqlite:///{db}").connect() as conn:
            return conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()

    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    asked = nbgrader.api.get_alembic_version()  # nbgrader's own way: an alembic process
    assert len(asked) == 12 and int(asked, 16) >= 0, asked
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", nbgrader.api.get_alembic_version)  # undone after
    gradebook.schema_revision_in_process()
    monkeypatch.setattr(subprocess, "check_output", lambda *a, **k: pytest.fail(f"a process was started: {a}"))
    assert nbgrader.api.get_alembic_version() == asked
    gradebook.Gradebook(f"sqlite:///{tmp_path / 'coordinator.db'}").close()
    assert written(tmp_path / "coordinator.db") == [asked]
    monkeypatch.undo()
    # nbgrader's processes, where no alembic is on PATH (nbgrader's own way would fail there)
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    add = ["db", "student", "add", "ada"]
    for name, launch, argv in (("launch", NBGRADER_LAUNCH, add), ("each", NBGRADER_EACH, ["1", json.dumps([add])])):
        db = tmp_path / f"{name}.db"
        r = subprocess.run([sys.executable, "-c", launch, *argv, f"--CourseDirectory.db_url=sqlite:///{db}",
                            f"--CourseDirectory.root={tmp_path}"], capture_output=True,
                           text=True, env=env, cwd=tmp_path, timeout=300)
        assert r.returncode == 0 and "alembic" not in r.stderr.lower(), (name, r.stderr[-2000:])
        assert written(db) == [asked], name


def test_a_run_starts_its_fork_server_before_the_jail_trial_and_reads_the_gradebook_before_grading(
        monkeypatch, tmp_path, generated_course):
    """The fork server starts first, so its imports overlap with the jail's trial and the reading of the
    gradebook; then the one engine grades, here (LocalRunner) or on Dask (DaskRunner)."""
    from autograder.grader.classroom import batch, runner as engine
    from autograder.grader.jail import forkserver

    root = generated_course(tmp_path / "course", "ex01_tracing")
    for student in ("ann", "ben", "cy"):
        (root / "submitted" / student / "ex01_tracing").mkdir(parents=True)
    events: list = []
    monkeypatch.setattr(forkserver, "prestart", lambda: events.append("fork server started"))
    monkeypatch.setattr(batch, "require_isolation", lambda: events.append("jail tried"))
    monkeypatch.setattr(batch, "ensure_assignment", lambda course, name, url: events.append(f"gradebook read: {name}"))
    monkeypatch.setattr(engine, "grade_class", lambda course, work, url, runner, regrade: events.append(
        (type(runner).__name__, getattr(runner, "jobs", None), work, regrade)) or 0)
    assert batch.grade("ex01_tracing", jobs=2, course=str(root)) == 0
    assert events == ["fork server started", "jail tried", "gradebook read: ex01_tracing",
                      ("LocalRunner", 2, [("ex01_tracing", ["ann", "ben", "cy"])], False)]
    events.clear()  # a cluster run starts no fork server here
    assert batch.grade("ex01_tracing", cluster="local:1", regrade=True, course=str(root)) == 0
    assert events == ["gradebook read: ex01_tracing", ("DaskRunner", None, [("ex01_tracing", ["ann", "ben", "cy"])],
                                                       True)]


def test_a_second_ctrl_c_interrupts_at_once_and_check_does_nothing_outside_the_main_thread():
    import signal
    import threading
    import time

    from autograder.course.console import deferred_interrupt

    # Python's own handler, whatever an earlier test of this process left installed (the test is of what comes back)
    outer = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _second_ctrl_c_interrupts(deferred_interrupt)
    finally:
        signal.signal(signal.SIGINT, outer)


def _second_ctrl_c_interrupts(deferred_interrupt) -> None:
    import signal
    import threading
    import time

    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        with deferred_interrupt() as check:
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            time.sleep(0.05)  # the first is only noted
            check_raised = False
            try:
                check()
            except KeyboardInterrupt:
                check_raised = True
            assert check_raised
            check()  # noted once: it raises once
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            time.sleep(5)  # the second raises here
            pytest.fail("the second Ctrl-C did not interrupt")
    assert signal.getsignal(signal.SIGINT) is before
    seen = []

    def elsewhere() -> None:
        with deferred_interrupt() as check:
            check()
            seen.append(signal.getsignal(signal.SIGINT))

    t = threading.Thread(target=elsewhere)
    t.start()
    t.join()
    assert seen == [before]
