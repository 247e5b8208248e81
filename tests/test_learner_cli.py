"""The learner's commands: fxcourse hint, reset, watch and progress, and that none loses a learner's work."""
from __future__ import annotations

import json
import signal
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder import cli
from autograder.coursedata.hints import HINTS
from autograder.course.notebook import read_notebook
from autograder.learner.progress import _untouched
from conftest import EX01_RIGHT, ROOT

A = "ex01_tracing"
RELEASE = ROOT / "exercises" / A / f"{A}.ipynb"
SOURCE = ROOT / "solutions" / A / f"{A}.ipynb"
RIGHT = {
    **EX01_RIGHT,
    # Letters, not the keys: the tests only look at the format and at the functions' points.
    "quiz_q1": 'q1 = "A"\n', "quiz_q2": 'q2 = "A"\n', "quiz_q3": 'q3 = "A"\n',
}


def fxcourse(capsys, *args: str, stdin: str | None = None, monkeypatch=None) -> tuple[int, str, str]:
    """Run the fxcourse command in this process: (exit code, stdout, stderr)."""
    if stdin is not None:
        import io
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = cli.main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def answered(path: Path, answers: dict[str, str]) -> None:
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        gid = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell["source"] = answers[gid]
    path.write_text(json.dumps(nb, indent=1))


def course(tmp_path: Path, *, solutions: bool = True) -> Path:
    """A course with ex01's working copy as released (and its source, unless solutions=False)."""
    root = tmp_path / "course"
    (root / "exercises" / A).mkdir(parents=True)
    shutil.copy(RELEASE, root / "exercises" / A / f"{A}.ipynb")
    if solutions:
        shutil.copytree(ROOT / "solutions" / A, root / "solutions" / A)
    return root


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=learner", "-c", "user.email=l@example.org", "-c", "init.defaultBranch=main",
                    *args], cwd=root, check=True, capture_output=True)


def test_learner_commands_are_registered():
    from autograder.learner import hints, progress

    parser = cli.build_parser()
    assert parser.parse_args(["progress", "--json", "--visible-only"]).func is progress.show
    assert parser.parse_args(["hint", "nb.ipynb"]).func is hints.hint
    assert parser.parse_args(["watch", "nb.ipynb", "--once"]).once
    assert parser.parse_args(["reset", "nb.ipynb", "--yes"]).yes
    args = parser.parse_args(["hint", "nb.ipynb", "count_nodes", "--course", "/x"])
    assert (args.function, args.course) == ("count_nodes", "/x")
    assert "5-10 s" in parser._subparsers._group_actions[0].choices["progress"].description


def test_the_program_exits_with_the_commands_code_after_freezing_what_it_made(monkeypatch):
    """`fxcourse` (the console script and python -m autograder.cli) is cli.run: the command, then gc.freeze, so that
    the interpreter's collections at exit do not walk every object the imports made; then the command's exit code."""
    calls = []
    monkeypatch.setattr(cli, "main", lambda: calls.append("main") or 3)
    monkeypatch.setattr(cli.gc, "freeze", lambda: calls.append("freeze"))
    with pytest.raises(SystemExit) as exc:
        cli.run()
    assert exc.value.code == 3 and calls == ["main", "freeze"]
    from importlib.metadata import entry_points

    assert [e.value for e in entry_points(group="console_scripts", name="fxcourse")] == ["autograder.cli:run"]


# ---------------------------------------------------------------------------------------------- hint

def test_hint_gives_the_next_hint_each_time_and_remembers_beside_the_notebook(tmp_path, capsys):
    nb = course(tmp_path) / "exercises" / A / f"{A}.ipynb"
    before = nb.read_bytes()
    outs = [fxcourse(capsys, "hint", str(nb), "count_nodes") for _ in range(4)]
    assert [o[0] for o in outs] == [0, 0, 0, 1]   # 1: no new hint left
    for i, (_, out, _) in enumerate(outs[:3]):
        assert f"Hint {i + 1} of 3 for count_nodes: {HINTS[A]['count_nodes'][i]}" in out
    assert "All 3 hints for count_nodes were shown" in outs[3][1]
    state = json.loads((nb.parent / ".fxcourse-hints.json").read_text())
    assert state == {A: {"count_nodes": 3}}
    code, out, _ = fxcourse(capsys, "hint", str(nb))   # no name: the first function with hints left
    assert code == 0 and "Hint 1 of 3 for node_summary" in out and "count_nodes 3/3" in out
    assert nb.read_bytes() == before                   # the working copy is never written


def test_hint_usage_errors_and_a_broken_state_file(tmp_path, capsys):
    nb = course(tmp_path) / "exercises" / A / f"{A}.ipynb"
    code, _, err = fxcourse(capsys, "hint", str(nb), "nope")
    assert code == 2 and "no graded function 'nope'" in err and "node_summary" in err
    code, _, err = fxcourse(capsys, "hint", str(nb.parent / "missing.ipynb"))
    assert code == 2 and "no such file" in err
    (nb.parent / ".fxcourse-hints.json").write_text("{not json")
    code, out, _ = fxcourse(capsys, "hint", str(nb), "outputs_match")
    assert code == 0 and "Hint 1 of 3" in out


def test_hint_and_check_agree_on_which_exercise_a_notebook_is(tmp_path, capsys):
    """One function decides it: ex02's answers saved under ex01's name are ex02's work for hint as for check,
    and a file that is no notebook still belongs to the exercise its name says (reset restores it)."""
    root = course(tmp_path)
    shutil.copytree(ROOT / "solutions" / "ex02_nodes", root / "solutions" / "ex02_nodes")
    misnamed = root / "exercises" / A / "copy" / f"{A}.ipynb"
    misnamed.parent.mkdir()
    shutil.copy(ROOT / "solutions" / "ex02_nodes" / "ex02_nodes.ipynb", misnamed)
    said = []
    for command in ("hint", "check"):
        code, _, err = fxcourse(capsys, command, str(misnamed))
        said.append(err.strip())
        assert code == 2 and "belong to assignment 'ex02_nodes', not 'ex01_tracing'" in err, (command, err)
    assert said[0] == said[1]
    broken = root / "exercises" / A / f"{A}.ipynb"
    broken.write_text("{ not a notebook")
    from autograder.course.root import Course
    from autograder.learner.check import assignment_for
    assert assignment_for(broken, Course(root)) == A


# --------------------------------------------------------------------------------------------- reset

def test_reset_from_git_head_asks_first_and_keeps_a_backup(tmp_path, capsys, monkeypatch):
    root = course(tmp_path, solutions=False)   # a learner's copy: no solutions/, a git checkout
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "the course")
    nb = root / "exercises" / A / f"{A}.ipynb"
    answered(nb, {"node_summary": RIGHT["node_summary"]})
    mine = nb.read_bytes()

    code, out, _ = fxcourse(capsys, "reset", str(nb), stdin="n\n", monkeypatch=monkeypatch)
    assert code == 1 and "nothing changed" in out and "git HEAD" in out
    assert nb.read_bytes() == mine and not list(nb.parent.glob("*.backup-*"))

    code, out, _ = fxcourse(capsys, "reset", str(nb), stdin="y\n", monkeypatch=monkeypatch)
    assert code == 0 and "restored" in out
    assert nb.read_bytes() == RELEASE.read_bytes()
    backups = list(nb.parent.glob(f"{A}.backup-*.ipynb"))
    assert len(backups) == 1 and backups[0].read_bytes() == mine

    code, out, _ = fxcourse(capsys, "reset", str(nb), "--yes")
    assert code == 0 and "already as released" in out and len(list(nb.parent.glob("*.backup-*"))) == 1


def test_reset_without_an_answer_or_closed_stdin_changes_nothing(tmp_path, capsys, monkeypatch):
    root = course(tmp_path, solutions=False)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "the course")
    nb = root / "exercises" / A / f"{A}.ipynb"
    answered(nb, {"count_nodes": RIGHT["count_nodes"]})
    mine = nb.read_bytes()
    code, out, _ = fxcourse(capsys, "reset", str(nb), stdin="", monkeypatch=monkeypatch)   # EOF: no
    assert code == 1 and nb.read_bytes() == mine and not list(nb.parent.glob("*.backup-*"))


def test_reset_refuses_a_git_head_copy_that_has_answers_in_it(tmp_path, capsys):
    root = course(tmp_path, solutions=False)
    nb = root / "exercises" / A / f"{A}.ipynb"
    answered(nb, RIGHT)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "my answers")
    answered(nb, {"node_summary": "def node_summary(gm):\n    return []\n"})
    mine = nb.read_bytes()
    code, _, err = fxcourse(capsys, "reset", str(nb), "--yes")
    assert code == 1 and "has answers in it" in err
    assert nb.read_bytes() == mine and not list(nb.parent.glob("*.backup-*"))


def test_reset_without_solutions_or_git_says_why(tmp_path, capsys):
    nb = course(tmp_path, solutions=False) / "exercises" / A / f"{A}.ipynb"
    answered(nb, {"node_summary": RIGHT["node_summary"]})
    mine = nb.read_bytes()
    code, _, err = fxcourse(capsys, "reset", str(nb), "--yes")
    assert code == 1 and "no solutions/" in err and nb.read_bytes() == mine


@pytest.mark.kernel
def test_reset_regenerates_the_release_with_nbgrader_where_solutions_exist(tmp_path, capsys):
    nb = course(tmp_path) / "exercises" / A / f"{A}.ipynb"
    answered(nb, {"node_summary": RIGHT["node_summary"]})
    mine = nb.read_bytes()
    code, out, _ = fxcourse(capsys, "reset", str(nb), "--yes")
    assert code == 0 and "generated from solutions/ex01_tracing with nbgrader" in out
    assert _untouched(read_notebook(nb), read_notebook(SOURCE))   # every answer cell as released
    assert [b.read_bytes() for b in nb.parent.glob(f"{A}.backup-*.ipynb")] == [mine]
    assert "BEGIN SOLUTION" not in nb.read_text() and "key=" not in nb.read_text()


# --------------------------------------------------------------------------------------------- watch

class Watcher:
    """`fxcourse watch` in a child process, its output read line by line by a thread."""

    def __init__(self, *args: str) -> None:
        import queue
        import threading

        self.proc = subprocess.Popen([sys.executable, "-u", "-m", "autograder.cli", "watch", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.lines: queue.Queue = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=lambda: [self.lines.put(l) for l in self.proc.stdout], daemon=True).start()

    def until(self, needle: str, timeout: float) -> None:
        import queue

        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                continue
            self.seen.append(line)
            if needle in line:
                return
        raise AssertionError(f"{needle!r} not seen in {timeout:g} s; output so far:\n{''.join(self.seen)}")

    def rest(self, timeout: float) -> str:
        self.proc.wait(timeout)
        time.sleep(0.2)
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return "".join(self.seen)


@pytest.mark.kernel
def test_watch_checks_now_and_after_each_save_and_ctrl_c_exits_0(tmp_path):
    nb = course(tmp_path) / "exercises" / A / f"{A}.ipynb"
    watcher = Watcher(str(nb))
    try:
        watcher.until("watching", 600)
        assert any("0 / 10 points" in line for line in watcher.seen)
        answered(nb, {"node_summary": RIGHT["node_summary"]})      # the learner saves
        watcher.until("watching", 600)
        assert any("\u2714 test_node_summary" in line for line in watcher.seen)
        assert sum("checking" in line for line in watcher.seen) == 2
        watcher.proc.send_signal(signal.SIGINT)                   # Ctrl-C
        output = watcher.rest(60)
    finally:
        if watcher.proc.poll() is None:
            watcher.proc.kill()
            watcher.proc.wait()
    assert watcher.proc.returncode == 0 and "stopped watching" in output


@pytest.mark.kernel
def test_watch_once_prints_one_report_with_check_exit_codes(tmp_path):
    nb = course(tmp_path) / "exercises" / A / f"{A}.ipynb"
    r = subprocess.run([sys.executable, "-m", "autograder.cli", "watch", str(nb), "--once"], capture_output=True,
                       text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 1 and r.stdout.count("checking") == 1 and "0 / 10 points" in r.stdout
    bad = tmp_path / "gone.ipynb"
    r = subprocess.run([sys.executable, "-m", "autograder.cli", "watch", str(bad), "--once"], capture_output=True,
                       text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 2 and "no such file" in r.stderr


# ------------------------------------------------------------------------------------------ progress

@pytest.mark.kernel
def test_progress_grades_each_working_copy_with_the_real_grader(tmp_path):
    root = course(tmp_path)
    shutil.copytree(ROOT / "solutions" / "ex02_nodes", root / "solutions" / "ex02_nodes")  # not handed out yet
    nb = root / "exercises" / A / f"{A}.ipynb"
    answered(nb, RIGHT)
    before = nb.read_bytes()
    r = subprocess.run([sys.executable, "-m", "autograder.cli", "progress", "--json", "--course", str(root)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=900)
    assert r.returncode == 0, r.stderr
    assert "jailed worker" in r.stderr and "5-10 s per notebook" in r.stderr
    report = json.loads(r.stdout)
    ex01, ex02 = report["exercises"]
    assert ex01["status"] == "graded" and ex01["hidden_tests_applied"]
    assert ex01["functions"] == {"node_summary": True, "count_nodes": True, "outputs_match": True}
    assert set(ex01["quiz"]) == {"q1", "q2", "q3"} and ex01["score"] >= 7 and ex01["max_score"] == 10
    assert ex02["status"] == "no working copy" and ex02["score"] == 0
    assert nb.read_bytes() == before


def test_progress_without_exercises_is_a_usage_error(tmp_path, capsys):
    code, _, err = fxcourse(capsys, "progress", "--course", str(tmp_path))
    assert code == 2 and "no exercises found" in err
