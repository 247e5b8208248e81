"""fxcourse grade on a real Dask cluster: a `dask scheduler` and two `dask worker` processes on loopback, a
class of correct, wrong, broken and hostile submissions, a worker SIGKILLed mid-batch, every score compared
with the local grader's (`fxcourse grade --jobs 2`, nbgrader autograde on SQLite)."""
from __future__ import annotations

import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import pytest

from autograder.grader.classroom.runner import grade_task
from autograder.course.notebook import grade_id
from conftest import EX01_RIGHT, ROOT

pytestmark = pytest.mark.kernel
A = "ex01_tracing"
NOTEBOOK = f"{A}.ipynb"

# What each kind of student hands in: answer cells by grade id (None: the instructor source itself; bytes: a
# file that is not a notebook at all).
KINDS: dict[str, dict[str, str] | bytes | None] = {
    "correct": None,
    "right": dict(EX01_RIGHT),
    "wrong": {"node_summary": "def node_summary(gm):\n    return [(n.op, n.name) for n in gm.graph.nodes]",
              "count_nodes": "def count_nodes(gm, op=None):\n    return len(gm.graph.nodes)",
              "quiz_q1": 'q1 = "A"', "quiz_q2": 'q2 = "B"'},
    "empty": {},
    "broken": b"{ this is not json",
    "exits": {**EX01_RIGHT, "count_nodes": "import os\nos._exit(1)\n" + EX01_RIGHT["count_nodes"]},
    "cheats": {**EX01_RIGHT, "node_summary": "class Yes(list):\n    def __eq__(self, other):\n        return True\n"
                                             "def node_summary(gm):\n    return Yes()\n"},
    "patches": {**EX01_RIGHT, "outputs_match": "import torch\ntorch.equal = lambda a, b: True\n"
                                               + EX01_RIGHT["outputs_match"]},
    "hogs": {**EX01_RIGHT, "node_summary": "block = bytearray(16 * 2**30)\n" + EX01_RIGHT["node_summary"]},
    "kills": {**EX01_RIGHT, "count_nodes": "import os, signal\nos.killpg(0, signal.SIGKILL)\n"
                                           + EX01_RIGHT["count_nodes"]},
}
CLASS = [f"s{i:02d}_{kind}" for i, kind in enumerate(list(KINDS) * 2, 1)]  # 20 students, each kind twice


def kind_of(student: str) -> str:
    return student.split("_", 1)[1]


def fxcourse(root: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args, "--course", str(root)],
                          capture_output=True, text=True, cwd=root, timeout=timeout)


def hand_in(root: Path, student: str, kind: str) -> None:
    dest = root / "submitted" / student / A / NOTEBOOK
    dest.parent.mkdir(parents=True, exist_ok=True)
    what = KINDS[kind]
    if what is None:
        shutil.copy(root / "solutions" / A / NOTEBOOK, dest)
    elif isinstance(what, bytes):
        dest.write_bytes(what)
    else:
        nb = nbformat.read(str(root / "exercises" / A / NOTEBOOK), as_version=4)
        for cell in nb.cells:
            if grade_id(cell) in what:
                cell.source = what[grade_id(cell)]
        nbformat.write(nb, str(dest))


def new_course(generated_course, root: Path, students: list[str]) -> Path:
    generated_course(root, A)  # solutions/A copied and `fxcourse generate A` run (once per test run)
    for student in students:
        hand_in(root, student, kind_of(student))
    return root


def grades(root: Path) -> dict[str, dict[str, float]]:
    """student -> {grade cell: score} from the course's SQLite gradebook."""
    from nbgrader.api import Gradebook

    out = {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "fxcourse") as gb:
        for sub in gb.assignment_submissions(A):
            nb = sub.notebooks[0]
            out[sub.student_id] = {g.name: float(g.score) for g in nb.grades}
    return out


def ledger(root: Path) -> dict[str, int]:
    import sqlite3

    with sqlite3.connect(root / "gradebook.db") as db:
        return dict(db.execute("select student, writes from fxcourse_graded where assignment = ?", (A,)))


def assert_whole(root: Path) -> None:
    """Every submission in the gradebook is whole: one per student, every grade cell scored, or none of them (one
    that could not be graded is recorded with its time and no grades, as nbgrader autograde records it)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "fxcourse") as gb:
        cells = len(gb.find_notebook(A, A).grade_cells)
        subs = gb.assignment_submissions(A)
        assert len({s.student_id for s in subs}) == len(subs)
        for sub in subs:
            scored = [g.auto_score for nb in sub.notebooks for g in nb.grades]
            assert len(scored) == cells and (None not in scored or set(scored) == {None}), (sub.student_id, scored)


@pytest.fixture(scope="module")
def reference(tmp_path_factory, generated_course) -> dict[str, dict[str, float] | None]:
    """The local grader's scores, one student of each kind: kind -> {cell: score}, None when not graded."""
    root = new_course(generated_course, tmp_path_factory.mktemp("local"), [f"x_{kind}" for kind in KINDS])
    r = fxcourse(root, "grade", A, "--jobs", "2")
    assert r.returncode == 1, r.stdout + r.stderr  # the broken one is not graded
    assert "x_broken: NOT GRADED" in r.stdout
    got = grades(root)
    most = sum(got["x_correct"].values())
    assert most == 10 and 0 < sum(got["x_wrong"].values()) < most and sum(got["x_empty"].values()) == 0
    return {kind: (got[f"x_{kind}"] if kind != "broken" else None) for kind in KINDS}


# ---------------------------------------------------------------------------------------- the cluster

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A real Dask scheduler and its workers, each `python -m distributed.cli...` in its own process group."""

    def __init__(self, tmp: Path) -> None:
        self.tmp, self.port = tmp, _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        # The workers import the package, and this module for the test's task that kills its worker.
        self.env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]),
                        DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="1", PYTHONWARNINGS="ignore")
        self.scheduler = self._start("scheduler", ["distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                                   "--port", str(self.port), "--no-dashboard"])
        self.workers: list[subprocess.Popen] = []
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and self.scheduler.poll() is None, self.log("scheduler")
                time.sleep(0.3)

    def _start(self, name: str, argv: list[str]) -> subprocess.Popen:
        log = open(self.tmp / f"{name}.log", "ab")
        return subprocess.Popen([sys.executable, "-m", *argv], stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, cwd=self.tmp, env=self.env, start_new_session=True)

    def log(self, name: str) -> str:
        return (self.tmp / f"{name}.log").read_text(errors="replace")[-3000:]

    def add_worker(self) -> None:
        i = len(self.workers)
        (self.tmp / f"w{i}").mkdir()
        self.workers.append(self._start(f"worker{i}", [
            "distributed.cli.dask_worker", self.address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard",
            "--host", "127.0.0.1", "--memory-limit", "0", "--local-directory", str(self.tmp / f"w{i}"),
            "--death-timeout", "60"]))

    def client(self):
        from distributed import Client

        return Client(self.address, timeout=60)

    def wait_for_workers(self, n: int) -> None:
        with self.client() as c:
            c.wait_for_workers(n, timeout=180)

    def kill(self, proc: subprocess.Popen) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()

    def stop(self) -> None:
        for proc in [*self.workers, self.scheduler]:
            self.kill(proc)


@pytest.fixture(scope="module")
def dask(tmp_path_factory):
    cluster = Cluster(tmp_path_factory.mktemp("dask"))
    try:
        cluster.add_worker()
        cluster.add_worker()
        cluster.wait_for_workers(2)
        yield cluster
    finally:
        cluster.stop()


def _busy_worker_group(cluster: Cluster) -> subprocess.Popen | None:
    """The `dask worker` process (group) whose worker is running a grading task now."""
    with cluster.client() as c:
        busy = {addr for addr, keys in c.processing().items() if any("grade-" in str(k) for k in keys)}
        pids = c.run(os.getpid)  # worker address -> its process id
    for proc in cluster.workers:
        if proc.poll() is None and any(os.getpgid(pids[a]) == proc.pid for a in busy if a in pids):
            return proc
    return None


# ------------------------------------------------------------------------------------------ the tests

def test_a_class_on_a_real_cluster_with_a_worker_killed_mid_batch(dask, reference, tmp_path, generated_course):
    root = new_course(generated_course, tmp_path, CLASS)
    proc = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", A, "--cluster", dask.address,
                             "--course", str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=root)
    lines, killed = [], None
    for line in proc.stdout:
        lines.append(line)
        if killed is None and "] " in line and ": graded" in line:
            killed = _busy_worker_group(dask)
            assert killed is not None, "no worker was running a task"
            dask.kill(killed)  # SIGKILL to the whole `dask worker`: its tasks must be graded by the other one
            at_kill = sum("] " in l for l in lines)
    err = proc.stderr.read()
    proc.wait(timeout=900)
    out = "".join(lines)
    assert killed is not None and at_kill < len(CLASS), out
    assert proc.returncode == 1, out + err  # the broken notebooks are not graded, and said so
    assert f"grading {A}: {len(CLASS)} submission(s) on the Dask scheduler at {dask.address}" in out
    reported = sorted(l.split("] ")[1].split(":")[0] for l in lines if "] " in l)
    assert reported == sorted(CLASS), out  # every submission reported exactly once
    for student in CLASS:
        if kind_of(student) == "broken":
            assert f"{student}: NOT GRADED" in out and "not valid JSON" in out.split(f"{student}: NOT GRADED")[1]
    got = grades(root)
    assert sorted(got) == sorted(CLASS)  # the broken ones too, recorded with no grades, as nbgrader records them
    graded = {student: cells for student, cells in got.items() if kind_of(student) != "broken"}
    for student, cells in graded.items():
        assert cells == reference[kind_of(student)], student
    assert all(sum(got[s].values()) == 0 for s in CLASS if kind_of(s) == "broken")
    assert ledger(root) == {s: 1 for s in graded}  # each written once, the retried ones too
    assert_whole(root)
    # The autograded notebooks came back: nbgrader's feedback works from them.
    r = fxcourse(root, "feedback", A)
    assert r.returncode == 0, r.stdout + r.stderr
    html = (root / "feedback" / CLASS[2] / A / f"{A}.html").read_text()
    assert "counted 5 nodes, expected 2" in html and "BEGIN HIDDEN TESTS" not in html

    # A rerun grades what changed only; a regrade replaces the grades, never duplicates them.
    dask.add_worker()
    changed = next(s for s in CLASS if kind_of(s) == "correct")
    shutil.copy(root / "exercises" / A / NOTEBOOK, root / "submitted" / changed / A / NOTEBOOK)
    r = fxcourse(root, "grade", A, "--cluster", dask.address)
    assert f"grading {A}: {1 + 2} submission(s)" in r.stdout and f"{len(CLASS) - 3} up to date" in r.stdout, r.stdout
    again = next(s for s in CLASS if kind_of(s) == "wrong")
    r = fxcourse(root, "grade", A, "--cluster", dask.address, "--regrade", "--student", again)
    assert r.returncode == 0 and f"[1/1] {again}: graded" in r.stdout, r.stdout + r.stderr
    got = grades(root)
    assert sum(got[changed].values()) == 0 and got[again] == reference["wrong"]
    writes = ledger(root)
    untouched = next(s for s in CLASS if kind_of(s) == "right")
    assert writes[changed] == 2 and writes[again] == 2 and writes[untouched] == 1
    assert_whole(root)


def killing_task(assignment, sources, files, student):
    """Grades like grade_task, except for a `poison` student, whose grading kills the worker it runs on."""
    if "poison" in student:
        os.kill(os.getpid(), signal.SIGKILL)
    return grade_task(assignment, sources, files, student)


def test_a_submission_that_keeps_killing_workers_is_given_up_and_the_batch_goes_on(dask, reference, tmp_path,
                                                                                   generated_course):
    from autograder.grader.classroom.grade_progress import GradeProgress
    from autograder.grader.classroom.gradebook import Gradebook

    root = new_course(generated_course, tmp_path, ["a_correct", "c_wrong"])
    hand_in(root, "b_poison", "correct")
    dask.wait_for_workers(2)
    url = f"sqlite:///{root / 'gradebook.db'}"
    with dask.client() as client, Gradebook(url) as gb:
        progress = GradeProgress(3, live=False)
        written = on_cluster(root, client, gb, ["a_correct", "b_poison", "c_wrong"], progress, task=killing_task)
    assert written == 2 and progress.not_graded == {"b_poison"}
    why = progress.reasons["b_poison"]
    assert "KilledWorker" in why and "2 times" in why, why  # allowed-failures 1: two tries, then given up
    got = grades(root)
    assert got == {"a_correct": reference["correct"], "c_wrong": reference["wrong"]}


def dying_twice_task(assignment, sources, files, student):
    """Grades like grade_task, except that a `bystander`'s first two tries die with their worker, as a task
    queued on a worker that another submission kills does: the scheduler gives it up (KilledWorker)."""
    if "bystander" in student:
        tries = Path(tempfile.gettempdir()) / f"fxcourse-tries-{student}"  # a restarted worker keeps no state
        count = int(tries.read_text()) if tries.exists() else 0
        tries.write_text(str(count + 1))
        if count < 2:
            os.kill(os.getpid(), signal.SIGKILL)
    return grade_task(assignment, sources, files, student)


def test_a_submission_given_up_only_for_others_faults_is_graded_again_alone(dask, reference, tmp_path,
                                                                            generated_course):
    from autograder.grader.classroom.grade_progress import GradeProgress
    from autograder.grader.classroom.gradebook import Gradebook

    bystander = f"b_bystander_{os.urandom(4).hex()}"
    tries = Path(tempfile.gettempdir()) / f"fxcourse-tries-{bystander}"
    root = new_course(generated_course, tmp_path, ["a_correct"])
    hand_in(root, bystander, "correct")
    dask.wait_for_workers(2)
    try:
        with dask.client() as client, Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
            progress = GradeProgress(2, live=False)
            written = on_cluster(root, client, gb, ["a_correct", bystander], progress, task=dying_twice_task)
        assert written == 2 and progress.not_graded == set(), progress.reasons
        assert tries.read_text() == "3"  # given up after two tries, then graded once more alone
    finally:
        tries.unlink(missing_ok=True)
    assert grades(root) == {"a_correct": reference["correct"], bystander: reference["correct"]}


def test_a_result_lost_with_its_worker_before_it_is_read_is_computed_again(dask, reference, tmp_path,
                                                                          generated_course):
    """A finished task's result stays on its worker until the coordinator reads it. The worker dies in between
    (as when another submission kills it): Dask computes the task again, and the grade is written once."""
    from autograder.grader.classroom.grade_progress import GradeProgress
    from autograder.grader.classroom.gradebook import Gradebook

    root = new_course(generated_course, tmp_path, ["a_correct"])
    dask.wait_for_workers(2)
    lost: list[str] = []
    with dask.client() as client, Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:

        def check() -> None:  # called between results: kill the worker that holds the result, before it is read
            held = {k: w for k, w in client.who_has().items() if str(k).startswith("grade-") and w}
            if lost or not held:
                return
            key, (address, *_) = next(iter(held.items()))
            pid = client.run(os.getpid, workers=[address])[address]
            os.kill(pid, signal.SIGKILL)
            lost.append(key)
            deadline = time.monotonic() + 60
            while client.futures[key].status == "finished" and time.monotonic() < deadline:
                time.sleep(0.05)
            assert client.futures[key].status != "finished", "the scheduler did not report the result lost"

        progress = GradeProgress(1, live=False)
        written = on_cluster(root, client, gb, ["a_correct"], progress, check=check)
    assert len(lost) == 1, "no result was lost: the test did not do what it says"
    assert written == 1 and progress.not_graded == set(), progress.reasons
    assert grades(root) == {"a_correct": reference["correct"]} and ledger(root) == {"a_correct": 1}


def root_course(root: Path):
    from autograder.course.root import Course

    return Course(root)


def on_cluster(root: Path, client, gb, students: list[str], progress, **options) -> int:
    """The engine's coordinator on the Dask cluster of `client` for `students` of A: how many were written."""
    from autograder.grader.classroom.cluster import DaskRunner
    from autograder.grader.classroom.runner import Unit, collect_submissions, run_units

    sources = {A: (root / "solutions" / A / NOTEBOOK).read_bytes()}
    subs = collect_submissions(root_course(root), A, students, [A], sources)
    runner = DaskRunner(client=client)
    runner.open()
    return run_units(root_course(root), [Unit(A, sub, sources, progress) for sub in subs], runner, gb, **options)


def test_a_hung_submission_stops_itself_at_its_own_limit_on_a_worker(monkeypatch):
    """Dask cannot stop a task that runs: the grading of a submission that sleeps in every function stops itself
    at FXCOURSE_SUBMISSION_TIMEOUT (not after one worker's wall-clock limit per test) and says so."""
    import json

    monkeypatch.setenv("FXCOURSE_SUBMISSION_TIMEOUT", "10")
    nb = nbformat.read(str(ROOT / "exercises" / A / NOTEBOOK), as_version=4)
    for cell in nb.cells:
        if grade_id(cell) in EX01_RIGHT:
            cell.source = f"def {grade_id(cell)}(*args, **kwargs):\n    import time\n    time.sleep(3600)\n"
    source = (ROOT / "solutions" / A / NOTEBOOK).read_bytes()
    result = json.loads(grade_task(A, {A: source}, {A: nbformat.writes(nb).encode()}, "hung"))
    assert result["ok"] is False, result
    assert result["error"] == "grading took longer than 10 s and was stopped (FXCOURSE_SUBMISSION_TIMEOUT)"


def test_bad_cluster_arguments_are_refused_before_grading(tmp_path, generated_course):
    root = new_course(generated_course, tmp_path, ["a_correct"])
    for argv, expected in ((["--cluster", "nowhere"], "expected tcp://HOST:PORT"),
                           (["--cluster", "local:0"], "N >= 1"),
                           (["--cluster", "local:1", "--jobs", "2"], "--jobs and --cluster do not go together"),
                           (["--db", "mysql://x/y"], "expected sqlite:///PATH or postgresql://")):
        r = fxcourse(root, "grade", A, *argv)
        assert r.returncode == 2 and expected in r.stderr and "grading" not in r.stdout, (argv, r.stderr)
    r = fxcourse(root, "grade", A, "--cluster", f"tcp://127.0.0.1:{_free_port()}")
    assert r.returncode == 1 and "cannot reach the Dask scheduler at tcp://127.0.0.1:" in r.stderr, r.stderr
    assert "grading" not in r.stdout


def test_ctrl_c_leaves_every_grade_whole_and_a_rerun_finishes(reference, tmp_path, generated_course):
    students = [f"c{i}_correct" for i in range(4)] + ["w_wrong"]
    root = new_course(generated_course, tmp_path, students)
    proc = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", A, "--cluster", "local:2", "--course",
                             str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root)
    for line in proc.stdout:
        if "] " in line and ": graded" in line:
            proc.send_signal(signal.SIGINT)
            break
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130 and "interrupted" in err and "summary" not in out, out + err
    assert_whole(root)
    first = ledger(root)
    assert 1 <= len(first) < len(students) and set(first.values()) == {1}
    r = fxcourse(root, "grade", A, "--cluster", "local:2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"grading {A}: {len(students) - len(first)} submission(s)" in r.stdout, r.stdout
    got = grades(root)
    assert {s: got[s] for s in students} == {s: reference[kind_of(s)] for s in students}
    assert ledger(root) == {s: 1 for s in students}


def test_a_lost_scheduler_stops_the_run_and_a_rerun_grades_only_what_is_left(dask, reference, tmp_path,
                                                                             generated_course):
    students = [f"l{i}_correct" for i in range(5)] + ["m_wrong", "n_empty"]
    root = new_course(generated_course, tmp_path, students)
    dask.wait_for_workers(2)
    proc = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", A, "--cluster", dask.address,
                             "--course", str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=root)
    for line in proc.stdout:
        if "] " in line and ": graded" in line:
            dask.kill(dask.scheduler)
            break
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, out + err
    assert f"lost the Dask scheduler at {dask.address}" in err and "grades only what is left" in err, err
    assert "Traceback" not in err, err
    assert_whole(root)
    first = ledger(root)
    assert 1 <= len(first) < len(students)
    r = fxcourse(root, "grade", A, "--cluster", "local:2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"grading {A}: {len(students) - len(first)} submission(s) on 2 local Dask worker(s); {len(first)} up " \
           "to date" in r.stdout, r.stdout
    got = grades(root)
    assert {s: got[s] for s in students} == {s: reference[kind_of(s)] for s in students}
    assert ledger(root) == {s: 1 for s in students}


# ---------------------------------------------------------------------------------------------- progress

def test_progress_is_a_live_bar_on_a_terminal_and_lines_otherwise(capsys):
    from rich.console import Console

    from autograder.grader.classroom.grade_progress import GradeProgress

    screen = io.StringIO()
    bar = GradeProgress(3, live=True, console=Console(file=screen, force_terminal=True, width=140))
    bar.report("ann", True, 1.0)
    bar.report("ben", False, 0.5, "NotebookError: not valid JSON")
    bar.close()
    text = screen.getvalue()
    assert "graded 1" in text and "failed 1" in text and "remaining 1" in text and "ETA" in text, text
    assert "ben: NOT GRADED" in text and "ann: graded" not in text  # failures above the bar, not every line
    assert capsys.readouterr().out == ""
    plain = GradeProgress(2, live=False)
    plain.report("ann", True, 1.0)
    plain.report("ben", False, 0.5, "why")
    plain.close()
    assert capsys.readouterr().out.splitlines() == ["  [1/2] ann: graded (1.0 s)",
                                                    "  [2/2] ben: NOT GRADED (0.5 s): why"]


# ---------------------------------------------------------------------------------------------- Ctrl-C

class _Waiting:
    """distributed's as_completed as the coordinator meets it: `__next__` waits under a lock of its own, as the
    real one waits under its thread condition. It records any exception that passes out of it: a KeyboardInterrupt
    raised in there is what once left the real one's lock held, and the coordinator waiting for ever."""

    escaped: list[str] = []

    def __init__(self, futures) -> None:
        self.futures, self.lock = list(futures), threading.Lock()

    def _guard(self, fn):
        try:
            return fn()
        except BaseException as exc:
            _Waiting.escaped.append(type(exc).__name__)
            raise

    def __iter__(self):
        return self

    def __next__(self):
        def wait():
            while True:  # no future ever finishes here
                with self.lock:
                    time.sleep(0.01)
        return self._guard(wait)

    def has_ready(self) -> bool:
        return self._guard(lambda: False)

    def is_empty(self) -> bool:
        return self._guard(lambda: not self.futures)

    def next_batch(self, block: bool = True) -> list:
        return self._guard(lambda: [])


def test_a_ctrl_c_while_the_coordinator_waits_on_dask_is_raised_between_results_never_inside_dask(monkeypatch):
    import distributed

    from autograder.grader.classroom import cluster, runner as engine
    from autograder.course.console import deferred_interrupt
    from autograder.grader.classroom.grade_progress import GradeProgress

    class Client:
        cancelled: list = []

        def run_on_scheduler(self, fn):
            return 1

        def submit(self, *args, key: str, **kwargs):
            return key

        def cancel(self, futures):
            Client.cancelled.extend(futures)

    monkeypatch.setattr(distributed, "as_completed", _Waiting)
    _Waiting.escaped = []
    progress = GradeProgress(3, live=False)
    units = [engine.Unit(A, engine.Submission(s, Path(s), {}, f"{s}digest"), {}, progress) for s in ("ann", "ben", "cy")]
    runner = cluster.DaskRunner(client=Client())
    runner.open()
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        with deferred_interrupt() as check:
            engine.run_units(None, units, runner, None, check=check)
    assert _Waiting.escaped == [], f"a Ctrl-C was raised inside Dask's code: {_Waiting.escaped}"
    assert sorted(k.split("-")[2] for k in Client.cancelled) == ["ann", "ben", "cy"]  # what was left is cancelled
    assert signal.getsignal(signal.SIGINT) is before
