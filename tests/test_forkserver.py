"""The fork server: workers forked from one pre-imported process start from its state, not from each other's.

Each test runs workers through `autograder.grader.jail.sandbox.run_worker`, the path every grading takes; the
adversarial battery (test_adversarial.py, test_jail.py) runs through the same fork server unchanged.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from autograder.checks.evidence import load_evidence
from autograder.grader.jail import forkserver
from autograder.grader.engine.grading import check_notebook
from autograder.course.root import Course
from autograder.grader.jail.sandbox import Limits, isolation_level, run_worker
from conftest import ROOT

pytestmark = pytest.mark.kernel
LIMITS = Limits(timeout=30.0)

# The first submission changes what it can reach, checking each change took effect.
LEAVE = """
import os, sys, json, torch, torch.fx, torch.nn.functional as F
import autograder.checks.framework as framework
import fxplayground
framework.LEFT_BEHIND = 1
fxplayground.LEFT_BEHIND = 1
torch.set_num_threads(3)
torch.set_default_dtype(torch.float64)
torch.fx.wrap("len")
F.relu = lambda x: x * 0
import torch._dynamo
torch._dynamo.config.cache_size_limit = 1
@torch.compile(backend="eager")
def compiled(x):
    return x * 2 + 1
compiled(torch.ones(3))
frames = torch._dynamo.utils.counters["frames"]["total"]
with open("left.txt", "w") as f:
    f.write("from the first submission")
os.environ["LEFT_BEHIND"] = "1"
sys.modules["left_behind"] = sys
json.dumps = None
problems = []
if torch.get_num_threads() != 3: problems.append("set_num_threads did not take")
if torch.get_default_dtype() != torch.float64: problems.append("default dtype did not take")
if F.relu(torch.tensor([-1.0, 2.0])).tolist() != [0.0, 0.0]: problems.append("relu patch did not take")
if frames < 1: problems.append("dynamo compiled nothing")
if not os.path.exists("left.txt"): problems.append("no file written")
if problems:
    raise RuntimeError("; ".join(problems))
"""

# The next submission looks for every one of those changes.
LOOK = """
import os, sys, json, torch, torch.fx, torch.nn.functional as F
import autograder.checks.framework as framework
import fxplayground
from torch.fx import _symbolic_trace
seen = []
if json.dumps is None: seen.append("json.dumps patched")
if hasattr(framework, "LEFT_BEHIND"): seen.append("check library attribute")
if hasattr(fxplayground, "LEFT_BEHIND"): seen.append("fxplayground attribute")
if torch.get_num_threads() != 1: seen.append(f"torch threads {torch.get_num_threads()}")
if torch.get_default_dtype() != torch.float32: seen.append(f"default dtype {torch.get_default_dtype()}")
if any(name == "len" for _, name in _symbolic_trace._wrapped_fns_to_patch): seen.append("fx.wrap('len')")
if F.relu(torch.tensor([-1.0, 2.0])).tolist() != [0.0, 2.0] or F.relu.__module__ != "torch.nn.functional":
    seen.append("torch.nn.functional.relu patched")
if "torch._dynamo" in sys.modules:
    import torch._dynamo
    if torch._dynamo.utils.counters["frames"]["total"]: seen.append("dynamo frames counted")
    if torch._dynamo.config.cache_size_limit == 1: seen.append("dynamo config")
left = set(os.listdir(".")) - {".ipython", "progress.txt", "stdout.txt", "evidence.pt"}  # the grader's own
if left: seen.append(f"scratch holds {sorted(left)}")
if os.environ.get("LEFT_BEHIND"): seen.append("environment variable")
if "left_behind" in sys.modules: seen.append("sys.modules entry")
if seen:
    raise RuntimeError("; ".join(seen))
"""


def _cell(source: str, name: str) -> dict:
    return {"id": name, "source": source, "answer": True, "defines": []}


def _cell_errors(outcome) -> list[dict]:
    assert outcome.status == "ok", (outcome.status, outcome.detail, outcome.stdout_tail)
    evidence, _ = load_evidence(outcome.evidence_bytes, 0)
    return evidence["cell_errors"]


@pytest.fixture
def own_server(monkeypatch):
    """A fork server of the test's own (at an address of its own, ending with the test), so that a broken one costs
    no other test."""
    server = forkserver._Server(address=f"fxcourse-forkserver-test-{os.getpid()}-{os.urandom(4).hex()}")
    monkeypatch.setattr(forkserver, "_SERVER", server)
    monkeypatch.delenv("FXCOURSE_FORKSERVER", raising=False)
    monkeypatch.setenv("FXCOURSE_FORKSERVER_KEEP", "0")
    yield server
    server.stop()


@pytest.mark.parametrize("isolation", ["jail", "limits"])
def test_the_next_submission_sees_nothing_a_previous_one_left_behind(own_server, monkeypatch, capfd, isolation):
    if isolation == "jail" and isolation_level() != "jail":
        pytest.skip("needs the jail (Linux, root, unshare, tmpfs, proc)")
    if isolation == "limits":
        monkeypatch.setenv("FXCOURSE_ISOLATION", "limits")
    first = run_worker([_cell(LEAVE, "leave")], [], limits=LIMITS)
    assert _cell_errors(first) == []
    server = forkserver.server_pid()
    assert server is not None  # forked, not a fresh process
    second = run_worker([_cell(LOOK, "look")], [], limits=LIMITS)
    assert _cell_errors(second) == []
    assert forkserver.server_pid() == server  # the same server forked both
    assert "fork server" not in capfd.readouterr().err


def test_the_look_catches_what_a_shared_process_would_leave(own_server, monkeypatch):
    """The check above can fail: both parts in ONE worker, the look sees every change."""
    outcome = run_worker([_cell(LEAVE, "leave"), _cell(LOOK, "look")], [], limits=LIMITS)
    errors = _cell_errors(outcome)
    assert [e["cell"] for e in errors] == ["look"]
    for change in ("json.dumps patched", "check library attribute", "torch threads 3", "default dtype",
                   "fx.wrap('len')", "relu patched", "dynamo frames counted", "'left.txt'",
                   "environment variable"):
        assert change in errors[0]["error"]


def test_the_server_stays_as_it_was_after_a_hostile_worker(own_server):
    outcome = run_worker([_cell(LEAVE, "leave")], [], limits=LIMITS)
    assert _cell_errors(outcome) == []
    pid = forkserver.server_pid()
    assert pid is not None
    with open(f"/proc/{pid}/status") as f:
        status = dict(line.split(":", 1) for line in f)
    assert int(status["Threads"]) <= 2  # torch's one idle helper thread at most: no intra-op pool started
    with open(f"/proc/{pid}/environ", "rb") as f:
        assert b"LEFT_BEHIND" not in f.read()
    assert own_server.proc.poll() is None


def test_a_forked_worker_s_collections_leave_the_server_s_objects_alone(own_server):
    """The server freezes what it holds before it forks: a worker's garbage collections never trace the imports
    (a full collection of them cost a worker a sixth of its CPU time and copied the pages it shares)."""
    outcome = run_worker([_cell("import gc\nif gc.get_freeze_count() < 10000:\n"
                                "    raise RuntimeError(f'{gc.get_freeze_count()} objects frozen')\n", "frozen")], [],
                         limits=LIMITS)
    assert _cell_errors(outcome) == []
    assert forkserver.server_pid() is not None  # forked, not a fresh process

def _fresh_fallback_ok(capfd) -> str:
    for name in ("one", "two"):
        outcome = run_worker([_cell(f"{name} = 1\n", name)], [], limits=LIMITS)
        assert _cell_errors(outcome) == []
    return capfd.readouterr().err


def test_a_server_that_cannot_start_falls_back_to_fresh_processes_and_says_so_once(own_server, monkeypatch,
                                                                                    capfd):
    monkeypatch.setattr(own_server, "_argv", lambda fd: [sys.executable, "-c",
                                                         "import sys; sys.stderr.write('no imports\\n'); sys.exit(3)"])
    err = _fresh_fallback_ok(capfd)
    lines = [line for line in err.splitlines() if "fork server" in line]
    assert len(lines) == 1
    assert "exited with code 3 (no imports)" in lines[0] and "fresh process" in lines[0]
    assert forkserver.server_pid() is None


def test_a_server_that_dies_mid_run_is_replaced_and_else_falls_back_saying_so_once(own_server, monkeypatch, capfd):
    """Killed (by another command, say), the server is replaced by a new one for the next worker; where that one
    cannot start either, each worker starts fresh and one line says so."""
    outcome = run_worker([_cell("x = 1\n", "x")], [], limits=LIMITS)
    assert _cell_errors(outcome) == []
    pid = forkserver.server_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert forkserver.ended(pid, 30)
    assert _cell_errors(run_worker([_cell("y = 1\n", "y")], [], limits=LIMITS)) == []
    new = forkserver.server_pid()
    assert new is not None and new != pid and "fork server" not in capfd.readouterr().err
    monkeypatch.setattr(own_server, "_argv", lambda fd: [sys.executable, "-c", "import sys; sys.exit(3)"])
    os.kill(new, signal.SIGKILL)
    assert forkserver.ended(new, 30)
    err = _fresh_fallback_ok(capfd)
    lines = [line for line in err.splitlines() if "fork server" in line]
    assert len(lines) == 1 and "exited with code 3" in lines[0], err


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def test_a_worker_whose_server_is_killed_while_it_runs_runs_once_more_and_is_graded(own_server, monkeypatch):
    """The server killed (by the machine's OOM killer, say) takes the manager and the worker with it: the worker
    runs once more, from a new server, and its answers are judged as if nothing happened."""
    from autograder.grader.jail import sandbox

    runs = []
    once = sandbox._run_once
    monkeypatch.setattr(sandbox, "_run_once", lambda *a: runs.append(1) or once(*a))
    assert _cell_errors(run_worker([_cell("x = 1\n", "x")], [], limits=LIMITS)) == []  # the server, ready
    server, result = forkserver.server_pid(), []
    thread = threading.Thread(target=lambda: result.append(
        run_worker([_cell("import time\ntime.sleep(3)\ny = 2\n", "y")], [], limits=LIMITS)))
    thread.start()
    while thread.is_alive() and not any(_children(m) for m in _children(server)):  # a manager and its worker
        time.sleep(0.02)
    os.kill(server, signal.SIGKILL)
    thread.join(120)
    assert _cell_errors(result[0]) == [] and len(runs) == 3  # the first worker, the one cut short, its re-run
    assert forkserver.server_pid() not in (None, server)


def test_a_judge_whose_server_went_away_is_replaced_and_judges_the_evidence_it_held(own_server):
    """The judge as grading makes it (with the judge service behind it, grading._judge)."""
    from autograder.grader.engine.grading import _Judge
    from autograder.grader.engine.judgeclient import with_service
    from test_jail_judge import QUIZ, outcome, worker_file

    judge, honest = with_service(_Judge)(), outcome(worker_file([{"evidence": ["D"]}]))
    try:
        assert judge.load(honest, 1, LIMITS)["ok"]
        first, server = judge.proc, forkserver.server_pid()
        assert isinstance(first, forkserver.Forked) and server is not None
        os.kill(server, signal.SIGKILL)
        assert forkserver.ended(server, 30)
        verdict = judge.judge("test_quiz_q1", QUIZ, 0, honest, 1, LIMITS)
        assert verdict.passed, verdict.message
        assert judge.proc is not first and isinstance(judge.proc, forkserver.Forked)
        assert first.lost and forkserver.server_pid() not in (None, server)
    finally:
        judge.stop()


def test_a_refused_request_runs_fresh_and_the_server_serves_the_next(own_server, monkeypatch, capfd):
    """A request the server refuses (here: the checks of no exercise of the course) runs as a fresh process, said
    once; the command, here one that joined a server another command started, goes on forking from that server."""
    own_server.start()
    with own_server.lock:
        own_server._wait_ready()  # listening at its address
    joiner = forkserver._Server(address=own_server.address)
    monkeypatch.setattr(forkserver, "_SERVER", joiner)
    try:
        assert forkserver.spawn(job="/nonexistent", cwd="/", env={}, out_fd=1, jail=False, cgroup=None,
                                checks=["no_such_exercise"]) is None
        assert "'no_such_exercise' is not an exercise of the course" in capfd.readouterr().err
        assert _cell_errors(run_worker([_cell("x = 1\n", "x")], [], limits=LIMITS)) == []
        assert joiner.proc is None and forkserver.server_pid() == own_server.proc.pid  # joined, still used
    finally:
        joiner.stop()


def test_a_server_stopped_before_anything_used_it_ends_at_once(own_server):
    """A run that stops before its first worker (`fxcourse grade` refused for want of the jail, say) ends its
    server at once, still importing, instead of waiting for it."""
    own_server.start()
    proc, home = own_server.proc, own_server.home
    own_server.stop()
    assert proc.returncode == -signal.SIGKILL and own_server.proc is None
    assert not os.path.exists(home)  # its home, which it had no time to remove itself


def test_turned_off_it_starts_fresh_processes_quietly(own_server, monkeypatch, capfd):
    monkeypatch.setenv("FXCOURSE_FORKSERVER", "0")
    err = _fresh_fallback_ok(capfd)
    assert "fork server" not in err
    assert own_server.proc is None


def test_check_notebook_grades_through_the_fork_server(own_server, tmp_path):
    """What the adversarial battery runs through: check_notebook forks its workers from the server."""
    notebook = ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb"
    report = check_notebook(notebook, Course(ROOT), limits=LIMITS)
    assert report.score == report.max_score > 0
    assert forkserver.server_pid() is not None


CHILD = """
import sys
from autograder.grader.jail import forkserver
from autograder.grader.jail.sandbox import Limits, run_worker
if len(sys.argv) > 1:
    forkserver._CODE = sys.argv[1]  # another checkout or Python
cell = {"id": "x", "source": "x = 1", "answer": True, "defines": ["x"]}
outcome = run_worker([cell], [], limits=Limits(timeout=30.0))
print(outcome.status, forkserver.server_pid(), forkserver._SERVER.proc is None)
"""


def test_the_commands_of_one_user_and_code_share_one_fork_server(monkeypatch):
    """The server at the user's address for this code (this test run's) forks the workers of a command too; a
    command of another checkout or Python starts a server of its own."""
    # This process joins the user's server afresh, as a command does when it starts: what this test process's own
    # connection went through in earlier tests (a server that retired, its one replacement spent) is not what this
    # test is about. The other test processes may have started that server, or be using it.
    fresh = forkserver._Server()
    monkeypatch.setattr(forkserver, "_SERVER", fresh)
    try:
        assert _cell_errors(run_worker([_cell("x = 1\n", "x")], [], limits=LIMITS)) == []
        ours = forkserver.kept_server_pid()  # the one we joined or started
        assert fresh.broken == "" and ours is not None and forkserver.server_pid() == ours, (fresh.broken, ours)
        child = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=600)
        assert child.stdout.split() == ["ok", str(ours), "True"], child.stderr[-2000:]  # joined, not started
        child = subprocess.run([sys.executable, "-c", CHILD, "/elsewhere/python:/elsewhere"], capture_output=True,
                               text=True, timeout=600)
        status, theirs, joined = child.stdout.split()
        assert (status, joined) == ("ok", "False") and theirs != str(ours), child.stderr[-2000:]
        assert forkserver.ended(int(theirs), 30)  # without keeping, it ended with its one command
    finally:
        fresh.stop()


SEEN_CHECKS = """
import sys
loaded = sorted(m for m in sys.modules if m.startswith("autograder.checks.ex") and m.count(".") == 2
                or m in ("torch.fx.experimental.symbolic_shapes", "torch._dynamo"))
raise RuntimeError("loaded: " + ",".join(loaded))
"""


def _checks_the_server_holds() -> list[str]:
    """The exercise check modules a newly forked worker finds imported: those the server imported (and two of the
    exercises' warm_imports, which it imports with them)."""
    outcome = run_worker([_cell(SEEN_CHECKS, "seen")], [], limits=LIMITS)
    error = _cell_errors(outcome)[0]["error"]
    return [m for m in error.split("loaded: ", 1)[1].strip().split(",") if m]


def test_the_server_imports_an_exercises_checks_on_the_first_job_that_calls_them(own_server):
    assert _checks_the_server_holds() == []  # nothing up front: one check of ex01 waits for no torchao
    report = check_notebook(ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb", Course(ROOT))
    assert report.score == report.max_score
    # with what ex01's answers and checks import lazily (its warm_imports), and nothing a later exercise needs
    assert _checks_the_server_holds() == ["autograder.checks.ex01_tracing", "torch.fx.experimental.symbolic_shapes"]


def test_every_exercises_checks_and_warm_imports_import_in_the_server_and_start_no_thread():
    """The server refuses to fork once a thread appeared: what it imports for any exercise must start none."""
    code = ("from autograder.grader.jail import forking; from autograder.coursedata.exercises import EXERCISES; "
            "forking._prepare(); before = forking._threads(); forking._import_checks([e.id for e in EXERCISES]); "
            "import sys; print(before, forking._threads(), "
            "all(m in sys.modules for e in EXERCISES for m in e.warm_imports))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    before, after, imported = r.stdout.split()[-3:]
    assert (after, imported) == (before, "True"), r.stdout


def test_the_server_imports_only_the_courses_own_check_modules():
    from autograder.grader.jail.forking import _import_checks

    with pytest.raises(ValueError, match="'os' is not an exercise of the course"):
        _import_checks(["os"])


# ------------------------------------------------------------------ the server kept for the next command

def _children_cpu(pid: int) -> int:
    """Clock ticks of CPU its waited-for children used (cutime + cstime in /proc/PID/stat)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[13]) + int(fields[14])


def _home_of(pid: int) -> str:
    """The HOME in the environment of process `pid`."""
    return dict(e.split("=", 1) for e in open(f"/proc/{pid}/environ").read().split("\0") if "=" in e)["HOME"]


class _Kept:
    """The commands of one test, whose server (at an address of their own: their PYTHONPATH names the test) is
    none of the test run's; no server there before the test, and none left after it."""

    def __init__(self, tmp_path) -> None:
        self.env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path / 'own-server'}"}
        self.address = forkserver.kept_address(self.env)

    def check(self, notebook, keep: str, cwd=ROOT) -> dict:
        import json

        r = subprocess.run([sys.executable, "-m", "autograder.cli", "check", str(notebook), "--json"],
                           capture_output=True, text=True, env={**self.env, "FXCOURSE_FORKSERVER_KEEP": keep},
                           cwd=cwd, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])

    def pid(self) -> int | None:
        return forkserver.kept_server_pid(self.address)


@pytest.fixture
def kept(tmp_path):
    commands = _Kept(tmp_path)
    assert commands.pid() is None
    yield commands
    assert forkserver.stop_kept_server(address=commands.address)


def test_a_check_keeps_the_server_and_the_next_check_is_forked_from_it(kept):
    notebook = ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb"
    first = kept.check(notebook, keep="120")
    pid = kept.pid()
    assert pid, "the check kept no server for the next one"
    home = _home_of(pid)
    before = _children_cpu(pid)
    second = kept.check(notebook, keep="120")
    assert kept.pid() == pid, "the second check did not find the kept server"
    assert _children_cpu(pid) > before, "the second check's worker and judge were not forked from the kept server"
    assert second["score"] == first["score"] == first["max_score"] > 0
    os.kill(pid, signal.SIGTERM)  # ends as when idle: its home goes with it
    assert forkserver.ended(pid, 30) and not os.path.exists(home)


def test_a_grade_keeps_the_server_for_the_next_command_too(kept, tmp_path, generated_course):
    """An instructor's `fxcourse grade` and a learner's `check` are commands alike: the next one is forked from
    the server the grade kept."""
    import shutil

    course = generated_course(tmp_path / "course", "ex01_tracing")
    (course / "submitted" / "alice" / "ex01_tracing").mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb", course / "submitted" / "alice" /
                "ex01_tracing")
    r = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", "ex01_tracing", "--course", str(course)],
                       capture_output=True, text=True, env={**kept.env, "FXCOURSE_FORKSERVER_KEEP": "120"},
                       cwd=course, timeout=600)
    assert r.returncode == 0 and "10 / 10" in r.stdout, r.stdout + r.stderr
    pid = kept.pid()
    assert pid, "the grade kept no server for the next command"
    before = _children_cpu(pid)
    report = kept.check(ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb", keep="120")
    assert report["score"] == report["max_score"] > 0
    assert kept.pid() == pid and _children_cpu(pid) > before


def test_a_kept_server_ends_by_itself_once_idle_and_removes_its_home(kept):
    kept.check(ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb", keep="1")
    pid = kept.pid()
    if pid is not None:  # it may be gone already
        home = _home_of(pid)
        assert forkserver.ended(pid, 60), "the kept server did not end after its idle time"
        assert not os.path.exists(home)
    assert kept.pid() is None


def test_a_check_run_after_the_first_check_s_folder_was_removed_gets_full_marks(kept, tmp_path):
    """The learner checks in one folder, then moves or removes it: the kept server and the judges it forks must
    not be left in a working directory that is gone (dynamo and export ask for it while judging)."""
    import shutil

    solution = ROOT / "solutions" / "ex09_dynamo" / "ex09_dynamo.ipynb"
    first_dir, second_dir = tmp_path / "first", tmp_path / "second"
    for folder in (first_dir, second_dir):
        folder.mkdir()
        shutil.copy(solution, folder)
    first = kept.check(first_dir / solution.name, keep="120", cwd=first_dir)
    pid = kept.pid()
    assert pid, "the check kept no server for the next one"
    shutil.rmtree(first_dir)
    second = kept.check(second_dir / solution.name, keep="120", cwd=second_dir)
    assert [t["message"] for t in second["tests"] if not t["passed"]] == []
    assert second["score"] == first["score"] == first["max_score"] > 0
    assert kept.pid() == pid, "the kept server was not used again"


def test_a_kept_server_whose_home_was_removed_is_replaced_by_the_next_check(kept):
    """A kept server's home (where its imports and judges write) removed, say by a clean-up of /tmp: the next
    check starts a new server, and the old one ends."""
    import shutil

    notebook = ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb"
    kept.check(notebook, keep="120")
    pid = kept.pid()
    assert pid, "the check kept no server for the next one"
    shutil.rmtree(_home_of(pid))
    second = kept.check(notebook, keep="120")
    assert second["score"] == second["max_score"] > 0
    assert forkserver.ended(pid, 30), "the kept server whose home was removed did not end"
    new = kept.pid()
    assert new and new != pid, "the next check did not keep a new server"
    assert os.path.isdir(_home_of(new))


def test_without_keeping_a_check_leaves_no_server_behind(kept):
    kept.check(ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb", keep="0")
    assert kept.pid() is None


def test_a_server_of_another_user_at_the_kept_address_is_not_used():
    """An abstract socket name is anyone's to take: a client connects only to a server of its own uid."""
    import socket

    if os.getuid() != 0:
        pytest.skip("needs root to listen as another user")
    address = f"fxcourse-forkserver-test-{os.getpid()}"
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setuid(65534)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.bind("\0" + address)
            s.listen(1)
            os.write(ready_w, b"1")
            signal.pause()
        finally:
            os._exit(0)
    try:
        assert os.read(ready_r, 1) == b"1"
        assert forkserver._connect_to(address) is None
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:  # the refusal is the uid's, not the name's
            s.connect("\0" + address)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
