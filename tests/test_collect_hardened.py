"""`fxcourse collect` against hostile students: real Unix users on the hub's nbgrader exchange.

The module makes an instructor, two honest students (ada, bob) and a hostile one (mallory) with useradd, and
removes them afterwards (tests/test_hub.py's Class). The exchange is the hub's: a 1777 folder, ex01 released into
it with `fxcourse release` by the instructor, submissions made by `nbgrader submit` run as each student (runuser)
with the hub's course id. Ada (right answers), Bob (wrong ones) and Mallory (her own answers) submit once for the
module. In each test Mallory hands in again by copying her entry to a new one, as any student can (nbgrader
submit prints the entry's path; an entry is a folder), and changes it by hand. Each test collects into a fresh
copy of the instructor's course folder, and checks that the attack earns nothing, that the line naming Mallory
says what was left out and why, and that Ada's and Bob's notebooks are collected as they handed them in.

Each collect runs under a file-size limit (RLIMIT_FSIZE, 256 MiB) and a time limit: a collect that follows a
link to /dev/zero fails instead of filling the disk.

Two tests need no other user: the formgrader's and a plain `nbgrader collect`'s collect step is the course's, and
the limits on names, depth and size (collect_assignment on a folder of the test's own user).
"""
from __future__ import annotations

import datetime
import os
import pwd
import re
import secrets
import shutil
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from conftest import EX01_RIGHT, ROOT
from test_hub import (A, BIN, RIGHT, SECRETS, WRONG, Class, _gradebook, course_copy, demo, fill, fxcourse, grade,
                      nbgrader_as)

FSIZE = 256 * 2**20
# Mallory's own answers: right, and told apart from Ada's by a comment
MALLORY = {**RIGHT, "count_nodes": EX01_RIGHT["count_nodes"] + "# mallory's own\n"}


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "the collect tests make Unix users: they need root"
    for tool in ("runuser", "useradd", "userdel", "groupadd", "chpasswd", "prlimit", "mkfifo"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    return None


@dataclass
class Exchange:
    k: Class
    course: Path      # the instructor's course folder ex01 was released from (each test copies it)
    exchange: Path
    work: dict[str, Path]  # each student's fetched notebook
    first: Path | None = None  # Mallory's entry made by nbgrader submit

    @property
    def inbound(self) -> Path:
        return self.exchange / "fxcourse" / "inbound"

    @property
    def mallory(self) -> str:
        return self.k.more[0]

    def submit(self, user: str, *args: str) -> Path:
        """`nbgrader submit` as `user`; the inbound entry it made, from its log (what the student sees)."""
        r = nbgrader_as(user, self.work[user].parent.parent, self.exchange, "submit", A, *args)
        assert r.returncode == 0, r.stdout + r.stderr
        return Path(re.search(r"Destination: (.*)", r.stdout + r.stderr).group(1).strip())

    def resubmit(self) -> Path:
        """Mallory hands in again: her first entry copied (`cp -a`, as her) to a new one named with the time."""
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
        entry = self.inbound / f"{self.mallory}+{A}+{stamp}+{secrets.token_urlsafe(9)}"
        self.as_mallory("cp", "-a", str(self.first), str(entry))
        return entry

    def as_mallory(self, *cmd: str) -> None:
        r = demo.as_user(self.mallory, *cmd)
        assert r.returncode == 0, r.stdout + r.stderr

    def collect(self, course: Path) -> subprocess.CompletedProcess:
        """`fxcourse collect` as the instructor, under a file-size limit."""
        return demo.as_user(self.k.instructor, "prlimit", f"--fsize={FSIZE}", "--", str(BIN / "fxcourse"),
                            "collect", A, "--exchange", str(self.exchange), "--course", str(course), cwd=course,
                            timeout=300)

    def collected(self, course: Path, user: str) -> Path:
        return course / "submitted" / user / A / f"{A}.ipynb"

    def assert_honest_collected(self, course: Path, r: subprocess.CompletedProcess) -> None:
        for user in (self.k.ada, self.k.bob):
            collected = self.collected(course, user)
            assert collected.is_file(), (user, r.stdout + r.stderr)
            assert collected.read_bytes() == self.work[user].read_bytes(), (user, r.stdout + r.stderr)
            assert re.search(rf"^  {user} +submitted .* (collected|unchanged)$", r.stdout, re.M), r.stdout + r.stderr


@pytest.fixture(scope="module")
def klass():
    reason = _missing()
    if reason:
        pytest.skip(f"collect tests with Unix users skipped: {reason}")
    k = Class(more="m")
    yield k
    k.remove()
    for user in k.passwords:
        with pytest.raises(KeyError):
            pwd.getpwnam(user)


@pytest.fixture(scope="module")
def released(klass) -> Exchange:
    """ex01 released (due in 2099) into the hub's exchange; Ada and Bob have submitted, Mallory has fetched."""
    k = klass
    course = demo.make_course(k.instructor, k.tmp / "course", [A])
    exchange = demo.make_exchange(k.tmp / "exchange")
    r = fxcourse(k, course, "release", A, "--exchange", str(exchange), "--due", "2099-01-01 00:00 UTC")
    assert r.returncode == 0, r.stdout + r.stderr
    ex = Exchange(k, course, exchange, {})
    for user, answers in ((k.ada, RIGHT), (k.bob, WRONG), (ex.mallory, MALLORY)):
        folder = k.home(user) / "work"
        demo.as_user(user, "mkdir", str(folder))
        r = nbgrader_as(user, folder, exchange, "fetch_assignment", A)
        assert r.returncode == 0, r.stdout + r.stderr
        ex.work[user] = folder / A / f"{A}.ipynb"
        fill(user, ex.work[user], answers)
    ex.submit(k.ada)
    ex.submit(k.bob)
    ex.first = ex.submit(ex.mallory)
    return ex


@pytest.fixture
def ex(released):
    """The released class; what Mallory made in the inbound in the test goes after it."""
    yield released
    uid = pwd.getpwnam(released.mallory).pw_uid
    for entry in os.scandir(released.inbound):
        if entry.stat(follow_symlinks=False).st_uid == uid and entry.path != str(released.first):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)


def _warnings(r: subprocess.CompletedProcess) -> list[str]:
    return [line for line in r.stderr.splitlines() if line.startswith("fxcourse: warning: ")]


# ------------------------------------------------------------------------------------------------ links
# Each test asserts first what the attack would have earned, then the report and the exit code.

def test_a_link_to_the_instructor_s_solution_is_not_collected(ex, klass):
    course = course_copy(klass, ex.course, "course-solution-link")
    entry = ex.resubmit()
    ex.as_mallory("ln", "-sf", str(course / "solutions" / A / f"{A}.ipynb"), str(entry / f"{A}.ipynb"))
    r = ex.collect(course)
    mine = course / "submitted" / ex.mallory / A
    assert not (mine / f"{A}.ipynb").exists(), r.stdout + r.stderr
    for path in mine.rglob("*"):  # neither the hidden tests nor a quiz key
        assert not any(s in path.read_text(errors="replace") for s in SECRETS), path
    ex.assert_honest_collected(course, r)
    assert f"fxcourse: warning: {ex.mallory}: {A}.ipynb: not collected: a symbolic link" in r.stderr, r.stderr
    assert len(_warnings(r)) == 1, r.stderr
    assert re.search(rf"^  {ex.mallory} +submitted .* collected$", r.stdout, re.M), r.stdout
    assert "everything else was collected" in r.stderr.splitlines()[-1] and r.returncode == 1, r.stderr
    # collect changed nothing in the exchange: the inbound stays unlistable by students, the entry is there
    assert stat.S_IMODE(ex.inbound.stat().st_mode) & 0o777 == 0o733
    assert demo.as_user(ex.mallory, "ls", str(ex.inbound)).returncode != 0
    assert (entry / f"{A}.ipynb").is_symlink()


def test_a_link_to_a_classmate_s_collected_notebook_is_not_collected(ex, klass):
    course = course_copy(klass, ex.course, "course-classmate-link")
    r = ex.collect(course)
    assert r.returncode == 0, r.stdout + r.stderr
    ada = course / "submitted" / klass.ada / A
    entry = ex.resubmit()  # a resubmission whose notebook and feedback key point at Ada's
    for name in (f"{A}.ipynb", "submission_secret.txt"):
        ex.as_mallory("ln", "-sf", str(ada / name), str(entry / name))
    r = ex.collect(course)
    mine = course / "submitted" / ex.mallory / A
    assert not (mine / f"{A}.ipynb").exists(), r.stdout + r.stderr
    # her feedback will not be released under Ada's key (nor Ada's over hers)
    assert (mine / "submission_secret.txt").read_text() != (ada / "submission_secret.txt").read_text()
    ex.assert_honest_collected(course, r)
    for name in (f"{A}.ipynb", "submission_secret.txt"):
        assert f"fxcourse: warning: {ex.mallory}: {name}: not collected: a symbolic link" in r.stderr, r.stderr
    assert re.search(rf"^  {ex.mallory} +submitted .* replaced by a resubmission$", r.stdout, re.M), r.stdout
    assert r.returncode == 1, r.stdout + r.stderr


# --------------------------------------------------------------------------------------------- owners

def test_a_submission_made_as_a_classmate_is_not_collected(ex, klass):
    course = course_copy(klass, ex.course, "course-as-classmate")
    ex.submit(ex.mallory, f"--student={klass.ada}")  # newer than Ada's own
    r = ex.collect(course)
    ex.assert_honest_collected(course, r)  # Ada's own submission, not the newer one in her name
    assert re.search(rf"^fxcourse: warning: {klass.ada}: inbound entry {klass.ada}\+{A}\+.+\+\.\.\.: not "
                     rf"collected: owned by {ex.mallory}, not by {klass.ada}$", r.stderr, re.M), r.stderr
    assert len(_warnings(r)) == 1 and r.returncode == 1, r.stdout + r.stderr


def test_a_file_written_by_a_classmate_into_a_submission_is_not_collected(ex, klass):
    course = course_copy(klass, ex.course, "course-foreign-file")
    entry = ex.resubmit()  # the entry is writable by all (nbgrader's mode 777): Ada's notebook goes in
    ex.as_mallory("rm", str(entry / f"{A}.ipynb"))
    r = demo.as_user(klass.ada, "cp", str(ex.work[klass.ada]), str(entry / f"{A}.ipynb"))
    assert r.returncode == 0, r.stderr
    r = ex.collect(course)
    assert not ex.collected(course, ex.mallory).exists(), r.stdout + r.stderr
    ex.assert_honest_collected(course, r)
    assert (f"fxcourse: warning: {ex.mallory}: {A}.ipynb: not collected: owned by {klass.ada}, not by "
            f"{ex.mallory}") in r.stderr, r.stderr
    assert r.returncode == 1, r.stdout + r.stderr


# ----------------------------------------------------------------------------------------------- time

def test_a_rewritten_timestamp_does_not_make_a_late_submission_on_time(ex, klass):
    course = course_copy(klass, ex.course, "course-late")
    r = demo.as_user(klass.instructor, "tee", str(course / "nbgrader_config.py"),
                     input_text='c = get_config()\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    assert r.returncode == 0, r.stderr
    due = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) + datetime.timedelta(seconds=1)
    r = fxcourse(klass, course, "release", A, "--exchange", str(ex.exchange), "--force", "--due",
                 f"{due:%Y-%m-%d %H:%M:%S} UTC")
    assert r.returncode == 0, r.stdout + r.stderr
    time.sleep(max(0.0, (due - datetime.datetime.now(datetime.timezone.utc)).total_seconds()) + 1.1)
    entry = ex.resubmit()  # after the due date; then she says it was on New Year's Day 2020
    ex.as_mallory("sh", "-c", f"printf '2020-01-01 00:00:00.000000 UTC' > '{entry}/timestamp.txt'")
    r = ex.collect(course)
    assert re.search(rf"^  {ex.mallory} +submitted \d{{4}}-.* collected  LATE by \d+", r.stdout, re.M), \
        r.stdout + r.stderr
    assert "2020-01-01" not in r.stdout
    stamp = (course / "submitted" / ex.mallory / A / "timestamp.txt").read_text()
    assert stamp > f"{due:%Y-%m-%d %H:%M:%S}" and stamp.endswith(" UTC"), stamp
    ex.assert_honest_collected(course, r)
    assert r.returncode == 0, r.stdout + r.stderr  # her timestamp.txt is not read: nothing to report
    # nbgrader's late penalty ('zero') sees that time: Mallory's right answers lose every point, Ada's stay
    r = grade(klass, course, "--student", klass.ada, "--student", ex.mallory)
    assert r.returncode == 0, r.stdout + r.stderr
    with _gradebook(course) as gb:
        late = gb.find_submission(A, ex.mallory)
        assert late.total_seconds_late > 0 and late.score == 10 and late.late_submission_penalty == 10
        honest = gb.find_submission(A, klass.ada)
        assert honest.total_seconds_late == 0 and honest.score == 10 and not honest.late_submission_penalty


# --------------------------------------------------------------------------------- what is not a file

HOSTILE = {  # what Mallory puts in her entry: (name, shell command in the entry, the reason collect gives)
    "link-to-dev-zero": (f"{A}.ipynb", f"ln -sf /dev/zero {A}.ipynb", "a symbolic link"),
    "link-to-etc-shadow": ("notes.txt", "ln -s /etc/shadow notes.txt", "a symbolic link"),
    "fifo": ("pipe", "mkfifo pipe", "a named pipe (FIFO)"),
    "sparse-200-mib": ("weights.bin", "truncate -s 200M weights.bin", "200 MiB, more than the limit of 20 MiB"),
}


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_link_pipe_or_huge_file_is_skipped_alone_and_the_class_is_collected(ex, klass, kind):
    name, command, why = HOSTILE[kind]
    course = course_copy(klass, ex.course, f"course-{kind}")
    entry = ex.resubmit()
    ex.as_mallory("sh", "-c", f"cd '{entry}' && {command}")
    r = ex.collect(course)
    ex.assert_honest_collected(course, r)
    mine = course / "submitted" / ex.mallory / A
    assert not (mine / name).exists()
    if name != f"{A}.ipynb":  # the rest of her submission is collected
        assert ex.collected(course, ex.mallory).read_bytes() == ex.work[ex.mallory].read_bytes()
    assert f"fxcourse: warning: {ex.mallory}: {name}: not collected: {why}" in r.stderr, r.stderr
    assert len(_warnings(r)) == 1 and r.returncode == 1, r.stdout + r.stderr


# ------------------------------------------------------------------------------------------------ names

def test_control_characters_in_names_are_escaped(ex, klass):
    course = course_copy(klass, ex.course, "course-names")
    entry = ex.resubmit()
    # a link whose name clears the screen and starts a line, and an entry in the name of a student who
    # does not exist, which would print a line saying Ada's submission was collected
    ex.as_mallory("ln", "-s", "/etc/hostname", str(entry / "a\x1b[2J\nb"))
    fake = f"\x1b[31m\n  {klass.ada}              submitted 2020-01-01 00:00:00 UTC  collected\n"
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    ex.as_mallory("cp", "-r", str(entry), str(ex.inbound / f"{fake}+{A}+{stamp}+x"))
    r = ex.collect(course)
    assert "\x1b" not in r.stdout + r.stderr, r.stdout + r.stderr
    assert not re.search(r"submitted 2020", r.stdout), r.stdout
    assert f"fxcourse: warning: {ex.mallory}: a\\x1b[2J\\x0ab: not collected: a symbolic link" in r.stderr, r.stderr
    assert re.search(rf"^fxcourse: warning: \\x1b\[31m\\x0a  {klass.ada} +submitted 2020-01-01 00:00:00 UTC  "
                     rf"collected\\x0a: inbound entry .*: not collected: there is no Unix user ", r.stderr, re.M), \
        r.stderr
    assert sorted(p.name for p in (course / "submitted").iterdir()) == sorted([klass.ada, klass.bob, ex.mallory])
    ex.assert_honest_collected(course, r)
    assert r.returncode == 1, r.stdout + r.stderr


# ------------------------------------------------------------------------------------ every way in

def test_the_formgrader_and_nbgrader_in_the_course_folder_collect_the_hardened_way(tmp_path):
    """The formgrader's Collect button (the hub's formgrader configuration) and a plain `nbgrader collect` in the
    course folder get the same collect step as `fxcourse collect` (which names it on its command line)."""
    (tmp_path / "solutions").mkdir()
    script = ("from nbgrader.apps.nbgraderapp import NbGraderApp\n"
              "from nbgrader.exchange import ExchangeFactory\n"
              "app = NbGraderApp()\n"
              "app.load_config_file()\n"
              "step = ExchangeFactory(parent=app).collect\n"
              "print(f'{step.__module__}.{step.__name__}')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    formgrader = {**env, "JUPYTER_CONFIG_PATH": str(ROOT / "deploy" / "jupyterhub" / "formgrader"),
                  "FXCOURSE_COURSE_ROOT": str(tmp_path)}
    for cwd, environment in ((tmp_path, formgrader), (ROOT, env)):
        r = subprocess.run([str(BIN / "python"), "-c", script], cwd=cwd, env=environment, capture_output=True,
                           text=True, timeout=120)
        assert r.stdout.strip() == "autograder.grader.ops.collect.HardenedCollect", (cwd, r.stdout + r.stderr)


# ------------------------------------------------------------------------------------------- limits

def test_limits_on_names_depth_and_size_are_reported_and_the_rest_collected(tmp_path):
    """collect_assignment itself, on a folder made here as this process's own user (no other user needed)."""
    from autograder.grader.ops.collect import CollectLimits, collect_assignment

    me = pwd.getpwuid(os.getuid()).pw_name
    inbound = tmp_path / "inbound"
    entry = inbound / f"{me}+{A}+2026-12-01 10:00:00.000000 UTC+r4nd0m"
    deep = entry / "d1" / "d2" / "d3"
    deep.mkdir(parents=True)
    (deep / "too-deep.txt").write_text("x")
    (entry / f"{A}.ipynb").write_text("{}")
    (entry / "big.bin").write_bytes(b"x" * 3000)  # more than one file may hold
    (entry / "c1.bin").write_bytes(b"x" * 900)
    (entry / "c2.bin").write_bytes(b"x" * 900)    # past the submission's total with c1
    many = entry / "many"
    many.mkdir()
    for i in range(12):
        (many / f"f{i:02}").write_text("x")
    for i in range(23):  # entries in the name of someone who is no user: 20 lines, then a count
        (inbound / f"no-such-user+{A}+2026-12-01 10:00:{i:02}.000000 UTC+x").mkdir()
    limits = CollectLimits(file_bytes=1000, submission_bytes=1500, names=10, depth=2)
    result = collect_assignment(inbound, A, lambda student: tmp_path / "submitted" / student / A,
                                students="*", limits=limits)
    lines = [s.line() for s in result.skipped if s.student == me]
    assert f"{me}: big.bin: not collected: 3000 bytes, more than the limit of 1000 bytes per file" in lines, lines
    assert f"{me}: c2.bin: not collected: the submission's files would add up to more than 1500 bytes" in lines
    assert f"{me}: d1/d2/d3: not collected: folders nested more than 2 deep" in lines, lines
    assert f"{me}: many/: not collected: holds more than 10 names: only the first 10 listed were looked at" in lines
    assert any("holds more than 10 files and folders; this one and the rest are not collected" in l
               for l in lines), lines
    got = tmp_path / "submitted" / me / A
    assert (got / f"{A}.ipynb").read_text() == "{}" and (got / "c1.bin").stat().st_size == 900
    assert not (got / "big.bin").exists() and not (got / "c2.bin").exists()
    assert [c.state for c in result.collected] == ["collected"]
    others = [s.line() for s in result.skipped if s.student != me]
    assert len(others) == 21 and others[-1].endswith("and 3 more: not collected: not listed one by one"), others
    assert all(l.endswith("not collected: there is no Unix user no-such-user") for l in others[:20]), others
