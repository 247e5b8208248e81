"""`fxcourse grade` forked from the user's kept fork server (forkserver.run_command): the command runs in a child of
the server, whose imports are done, as it would run in the asking process: its folder, environment, umask,
standard streams and exit code, Ctrl-C passed on; the asker imports nothing of the grader. Where it cannot be
forked so, the asker runs it itself."""
from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import time

import pytest

from conftest import ROOT
from test_forkserver import _children_cpu, _Kept

# the asker: `fxcourse` itself (cli.run), then what it imported, on stderr
CLIENT = ("import os, sys\n"
          "os.umask(int(os.environ.get('CLIENT_UMASK', '18')))\n"
          "extra = os.environ.get('CLIENT_EXTRA_PATH')\n"
          "if extra: sys.path.insert(1, extra)\n"
          "from autograder import cli\n"
          "code = cli.run(sys.argv[1:])\n"
          "sys.stderr.write('asker imported: %s\\n' % sorted({m.split('.')[0] for m in sys.modules}\n"
          "                                                & {'nbgrader', 'sqlalchemy', 'torch'}))\n"
          "sys.exit(code)\n")
SOLUTION = ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb"


@pytest.fixture
def kept(tmp_path):
    commands = _Kept(tmp_path)
    assert commands.pid() is None
    yield commands
    assert forkserver_stopped(commands)


def forkserver_stopped(commands: _Kept) -> bool:
    from autograder.grader.jail import forkserver

    return forkserver.stop_kept_server(address=commands.address)


def _course(generated_course, tmp_path, students: list[str]):
    course = generated_course(tmp_path / "course", "ex01_tracing")
    for student in students:
        (course / "submitted" / student / "ex01_tracing").mkdir(parents=True)
        shutil.copy(SOLUTION, course / "submitted" / student / "ex01_tracing")
    return course


def _env(kept: _Kept, **extra: str) -> dict[str, str]:
    return {**kept.env, "FXCOURSE_FORKSERVER_KEEP": "120", **extra}


def _ask(kept: _Kept, args: list[str], cwd, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CLIENT, *args], capture_output=True, text=True,
                          env=_env(kept, **extra), cwd=cwd, timeout=600)


def _server_started(kept: _Kept, course) -> int:
    """Grade once (no server listens yet: the command runs itself and starts one, kept): the server's pid."""
    r = _ask(kept, ["grade", "ex01_tracing", "--course", str(course)], course)
    assert r.returncode == 0 and "10 / 10" in r.stdout, r.stdout + r.stderr
    assert "asker imported: ['nbgrader', 'sqlalchemy']" in r.stderr, r.stderr  # it graded here
    pid = kept.pid()
    assert pid, "the grade kept no server"
    return pid


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _none_left(pid: int, timeout: float = 30.0) -> bool:
    end = time.monotonic() + timeout
    while _children(pid) and time.monotonic() < end:
        time.sleep(0.1)
    return not _children(pid)


def test_a_grade_with_a_kept_server_runs_in_a_child_of_it_as_it_would_in_the_asking_process(
        kept, tmp_path, generated_course):
    course = _course(generated_course, tmp_path, ["alice"])
    pid = _server_started(kept, course)
    shutil.rmtree(course / "autograded")
    before = _children_cpu(pid)
    # a relative --course (its folder), a umask and an environment of its own: the child's, as they are here
    r = _ask(kept, ["grade", "ex01_tracing", "--regrade", "--course", "."], course, CLIENT_UMASK=str(0o077))
    assert r.returncode == 0 and "10 / 10" in r.stdout, r.stdout + r.stderr
    assert "asker imported: []" in r.stderr, r.stderr  # nothing of the grader, nbgrader or torch imported here
    assert _children_cpu(pid) > before, "the grade did not run in a child of the kept server"
    assert stat.S_IMODE(os.stat(course / "autograded" / "alice").st_mode) == 0o700, "the asker's umask was not used"
    before = _children_cpu(pid)
    bad = _ask(kept, ["grade", "ex01_tracing", "--regrade", "--course", "."], course, FXCOURSE_TIMEOUT="soon")
    assert _children_cpu(pid) > before, "the grade did not run in a child of the kept server"
    here = _ask(kept, ["grade", "ex01_tracing", "--regrade", "--course", "."], course, FXCOURSE_TIMEOUT="soon",
                FXCOURSE_FORKSERVER="0")
    assert "FXCOURSE_TIMEOUT" in bad.stderr, bad.stdout + bad.stderr  # the asker's environment, its stderr
    assert (bad.returncode, bad.stdout) == (here.returncode, here.stdout)
    assert bad.stderr.splitlines()[:-1] == here.stderr.splitlines()[:-1]


def test_an_unknown_assignment_is_refused_by_the_forked_grade_as_by_one_run_here(kept, tmp_path, generated_course):
    course = _course(generated_course, tmp_path, ["alice"])
    _server_started(kept, course)
    forked = _ask(kept, ["grade", "ex99_nothing", "--course", str(course)], course)
    here = _ask(kept, ["grade", "ex99_nothing", "--course", str(course)], course, FXCOURSE_FORKSERVER="0")
    assert "asker imported: []" in forked.stderr, forked.stderr
    assert forked.returncode == here.returncode == 2, forked.stdout + forked.stderr
    assert forked.stdout == here.stdout and forked.stderr.splitlines()[:-1] == here.stderr.splitlines()[:-1]
    usage = _ask(kept, ["grade", "--jobs", "0"], course)  # argparse's own error, and exit code
    assert usage.returncode == 2 and "expected a whole number of at least 1" in usage.stderr, usage.stderr


def _graded_one_of_six(kept: _Kept, course) -> subprocess.Popen:
    """A grade of six students, asked for in the background, once the first is graded."""
    proc = subprocess.Popen([sys.executable, "-c", CLIENT, "grade", "ex01_tracing", "--regrade", "--course",
                             str(course)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(kept), cwd=course)
    for line in proc.stdout:
        if "[1/6]" in line:
            break
    return proc


def test_ctrl_c_at_the_asker_interrupts_the_forked_grade_which_says_what_was_written(kept, tmp_path,
                                                                                      generated_course):
    students = [f"s{i}" for i in range(6)]
    course = _course(generated_course, tmp_path, students)
    pid = _server_started(kept, course)
    proc = _graded_one_of_six(kept, course)
    try:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, out + err
    assert "fxcourse: interrupted:" in err and "asker imported: []" in err, err
    assert _none_left(pid), "the forked grade (or its workers) outlived its Ctrl-C"


def test_a_forked_grade_ends_with_its_asker_when_the_asker_is_killed(kept, tmp_path, generated_course):
    students = [f"s{i}" for i in range(6)]
    course = _course(generated_course, tmp_path, students)
    pid = _server_started(kept, course)
    proc = _graded_one_of_six(kept, course)
    try:
        assert _children(pid), "the grade did not run in a child of the kept server"
        proc.kill()
        proc.wait(timeout=30)
    finally:
        proc.kill()
    assert _none_left(pid), "the forked grade (or its workers) outlived the process that asked for it"
    assert kept.pid() == pid  # the server goes on, for the next command


@pytest.mark.parametrize("how", ["a sys.path entry the server lacks", "another text encoding (PYTHONUTF8=1)"])
def test_an_asker_the_server_cannot_stand_in_for_grades_itself(kept, tmp_path, generated_course, how):
    course = _course(generated_course, tmp_path, ["alice"])
    _server_started(kept, course)
    (tmp_path / "elsewhere").mkdir()
    extra = {"CLIENT_EXTRA_PATH": str(tmp_path / "elsewhere")} if how.startswith("a sys.path") else \
        {"PYTHONUTF8": "1"}
    r = _ask(kept, ["grade", "ex01_tracing", "--regrade", "--course", str(course)], course, **extra)
    assert r.returncode == 0 and "10 / 10" in r.stdout, r.stdout + r.stderr
    assert "asker imported: ['nbgrader', 'sqlalchemy']" in r.stderr, r.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="worker slots (and their lock files) are root's jail")
def test_a_forked_grade_reads_the_jail_s_settings_from_the_asker_s_environment(kept, tmp_path, generated_course):
    """FXCOURSE_JAIL_LOCKS and FXCOURSE_JAIL_UID_BASE are the asker's, not those of the environment the server
    imported the grader in."""
    course = _course(generated_course, tmp_path, ["alice"])
    _server_started(kept, course)
    locks = tmp_path / "locks"
    r = _ask(kept, ["grade", "ex01_tracing", "--regrade", "--course", str(course)], course,
             FXCOURSE_JAIL_LOCKS=str(locks))
    assert r.returncode == 0 and "10 / 10" in r.stdout and "asker imported: []" in r.stderr, r.stdout + r.stderr
    assert (locks / "slot-0.lock").is_file(), "the forked grade claimed its worker slots elsewhere"


def test_the_server_runs_the_course_s_command_line_only_and_its_preload_brings_nothing_of_the_instructor_s():
    """What the server imports for a command is in every worker forked after it: no judge, reference, hidden case
    or key (the instructor's side), and no module but the course's command line is run."""
    code = ("import sys\n"
            "from autograder.grader.jail import forking\n"
            "try:\n"
            "    forking._entry('os')\n"
            "except ValueError as exc:\n"
            "    print('refused:', exc)\n"
            "forking._entry('autograder.cli')\n"
            "print(sorted(m for m in sys.modules if m.startswith('fxcourse_instructor')\n"
            "             or m.startswith('autograder.checks.ex') and m.rsplit('.', 1)[-1] not in\n"
            "             ('cases', 'evidence', 'models')))\n"
            "print('nbgrader.api' in sys.modules, 'autograder.grader.classroom.runner' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.splitlines() == ["refused: 'os' is not a command line of the course", "[]", "True True"], r.stdout
