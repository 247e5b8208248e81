"""The course on JupyterHub, end to end: real Unix users, nbgrader's exchange, the hub's pages in chromium.

The module makes its own Unix users (an instructor and two students, random passwords, two groups; homes
readable by their owner only) and removes them afterwards. The instructor's course folder is theirs alone, in
a temporary folder; the exchange is a 1777 folder beside it. The hub is deploy/jupyterhub/jupyterhub_config.py
as shipped, on a free loopback port, started as root (the spawner and the formgrader service switch to each
user), with configurable-http-proxy from npm (.ci/deps-hub.sh).

- test_exchange_resubmission_and_late_penalty: the instructor's `fxcourse release/collect` and the students'
  `nbgrader fetch_assignment/submit` on the command line: a resubmission replaces the first, a submission after
  the due date is flagged LATE and scored per nbgrader's LateSubmissionPlugin setting.
- test_class_on_the_hub: the instructor releases ex01; two students log in on the hub's login page, fetch it
  from the Assignments tab, answer (one right, one wrong), Validate and submit; the instructor collects,
  grades with `fxcourse grade` and releases feedback; each student fetches and opens theirs. Refused: a
  student opening the formgrader, or reading another student's home or the instructor's course folder.
  The exercises' judge side is closed to the students for the test (judge_side_closed): their Validate and
  `fxcourse check` in a terminal of their server are judged by the hub's judge service, which logs that it
  answered them; a token the hub does not know is refused by it.

Needs root, runuser/useradd, configurable-http-proxy, /usr/bin/chromium and playwright; without them it skips
(unless FXCOURSE_REQUIRE_BROWSER is set, as in CI: then it fails).
"""
from __future__ import annotations

import grp
import importlib.util
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest

from conftest import EX01_RIGHT, ROOT
from test_browser import ARTIFACTS, browser, wait_kernel_idle  # noqa: F401  (browser: a fixture)
from test_browser import _missing as _browser_missing

pytestmark = pytest.mark.browser

A = "ex01_tracing"
BIN = Path(sys.executable).parent


def _quiz_keys() -> dict[str, str]:
    """ex01's quiz keys, read from the hidden tests of the instructor source (never from a student's copy)."""
    nb = nbformat.read(str(ROOT / "solutions" / A / f"{A}.ipynb"), as_version=4)
    return dict(re.findall(r'check_quiz\("(q\d)", q\d, key="([A-Z])"', "\n".join(c.source for c in nb.cells)))


KEYS = _quiz_keys()
# one student answers everything right; the other gets count_nodes (2 points) and q2 (1 point) wrong
RIGHT = {**EX01_RIGHT, **{f"quiz_{q}": f'{q} = "{key}"' for q, key in KEYS.items()}}
WRONG = {**RIGHT, "count_nodes": "def count_nodes(gm, op=None):\n    return len(gm.graph.nodes)\n",
         "quiz_q2": f'q2 = "{"B" if KEYS["q2"] != "B" else "A"}"'}
SECRETS = ("BEGIN HIDDEN TESTS", "hidden=True", "key=")

_spec = importlib.util.spec_from_file_location("fxcourse_hub_demo", ROOT / "deploy" / "jupyterhub" / "demo.py")
demo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(demo)


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "the hub test makes Unix users: it needs root"
    for tool in ("runuser", "useradd", "userdel", "groupadd", "chpasswd"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if shutil.which("configurable-http-proxy") is None:
        return "configurable-http-proxy is not installed (run .ci/deps-hub.sh)"
    if not (BIN / "jupyterhub").exists():
        return f"jupyterhub is not installed in {BIN} (pip install -e .[dev])"
    return _browser_missing()


@pytest.fixture(scope="module", autouse=True)
def _hub_available():
    reason = _missing()
    if reason:
        if os.environ.get("FXCOURSE_REQUIRE_BROWSER"):
            pytest.fail(f"FXCOURSE_REQUIRE_BROWSER is set but {reason}", pytrace=False)
        pytest.skip(f"hub tests skipped: {reason}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Class:
    """The Unix side of one class: groups, an instructor and two students (and `more` students, named by
    the letters given), a course folder, an exchange."""

    def __init__(self, more: str = "") -> None:
        tag = secrets.token_hex(3)
        self.tmp = Path(tempfile.mkdtemp(prefix="fxcourse-hub-", dir="/tmp"))
        os.chmod(self.tmp, 0o755)
        self.instructors, self.students = f"fxt{tag}-instr", f"fxt{tag}-stud"
        self.instructor, self.ada, self.bob = f"fxt{tag}i", f"fxt{tag}a", f"fxt{tag}b"
        self.more = [f"fxt{tag}{letter}" for letter in more]
        self.passwords: dict[str, str] = {}
        self.opened: list[Path] = []  # folders on the way to the course's code that had to be opened (o+x)
        self.groups_made: list[str] = []
        try:
            for group in (self.instructors, self.students):
                demo.create_group(group)
                self.groups_made.append(group)
            for user, group in ((self.instructor, self.instructors), (self.ada, self.students),
                                (self.bob, self.students), *((u, self.students) for u in self.more)):
                self.passwords[user] = demo.create_user(user, group, self.tmp / "home" / user)
            self._open_the_way()
            # The spawner runs the venv's jupyterhub-singleuser as each of them. What a user may reach is decided
            # by their group (the same modes and homes for all of a group): one user of each group stands for it.
            for user in (self.instructor, self.ada):
                demo.check_environment(user)
        except BaseException:
            self.remove()
            raise

    def _open_the_way(self) -> None:
        """The venv, the Python it was made from (pyenv's) and the checkout may sit below a folder closed to
        others (/root, for one): let users pass through it (o+x, not o+r: nothing can be listed), for the test's
        duration only. A real hub installs them where users can reach them (docs/jupyterhub.md)."""
        for target in demo.environment_paths():
            while (where := demo.blocked_path(self.ada, target)) is not None:
                os.chmod(where, stat.S_IMODE(where.stat().st_mode) | stat.S_IXOTH)
                self.opened.append(where)

    def home(self, user: str) -> Path:
        return Path(pwd.getpwnam(user).pw_dir)

    def lab_settings(self, user: str) -> None:
        """A quiet lab (no news pop-up) with every cell kept in the page, as tests/test_browser.py sets it."""
        base = self.home(user) / ".jupyter" / "lab" / "user-settings"
        files = {"@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                                     "checkForUpdates": False},
                 "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"}}
        for name, value in files.items():
            demo.as_user(user, "mkdir", "-p", str((base / name).parent))
            r = demo.as_user(user, "tee", str(base / name), input_text=json.dumps(value))
            assert r.returncode == 0, r.stderr

    def processes(self) -> list[int]:
        uids = {pwd.getpwnam(u).pw_uid for u in self.passwords}
        pids = []
        for status in Path("/proc").glob("[0-9]*/status"):
            try:
                uid = int(re.search(r"^Uid:\s+(\d+)", status.read_text(), re.M).group(1))
            except (OSError, AttributeError):
                continue
            if uid in uids:
                pids.append(int(status.parent.name))
        return pids

    def remove(self) -> None:
        end = time.monotonic() + 20
        while (pids := self.processes()) and time.monotonic() < end:
            for pid in pids:  # what the hub left of these users' servers and kernels
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.5)
        problems = []
        for user in self.passwords:
            try:
                demo.remove_user(user)
            except RuntimeError as exc:
                problems.append(str(exc))
        for group in self.groups_made:
            demo.remove_group(group)
        for where in reversed(self.opened):
            os.chmod(where, stat.S_IMODE(where.stat().st_mode) & ~stat.S_IXOTH)
        shutil.rmtree(self.tmp, ignore_errors=True)
        assert not problems, problems


@pytest.fixture(scope="module")
def klass():
    k = Class()
    yield k
    k.remove()
    for user in k.passwords:
        with pytest.raises(KeyError):
            pwd.getpwnam(user)


@pytest.fixture(scope="module")
def generated(klass) -> Path:
    """ex01 generated once, by the instructor, in a course folder that each test copies."""
    return demo.make_course(klass.instructor, klass.tmp / "course-generated", [A])


def course_copy(k: Class, generated: Path, name: str) -> Path:
    dest = k.tmp / name
    shutil.copytree(generated, dest, symlinks=True)
    pw = pwd.getpwnam(k.instructor)
    for dirpath, _, filenames in os.walk(dest):
        for entry in [dirpath, *(os.path.join(dirpath, f) for f in filenames)]:
            os.chown(entry, pw.pw_uid, pw.pw_gid, follow_symlinks=False)
    os.chmod(dest, 0o700)
    return dest


def grade(k: Class, course: Path, *args: str) -> subprocess.CompletedProcess:
    """`fxcourse grade` (with `args`), as root: the hardened grader's jail needs root (autograder/SECURITY.md);
    what it wrote is then given back to the instructor, who owns the course folder."""
    r = subprocess.run([str(BIN / "fxcourse"), "grade", A, "--course", str(course), *args], cwd=course,
                       capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    subprocess.run(["chown", "-R", f"{k.instructor}:{k.instructor}", str(course)], check=True)
    return r


def fxcourse(k: Class, course: Path, *args: str) -> subprocess.CompletedProcess:
    """An instructor's command, run as the instructor."""
    return demo.as_user(k.instructor, str(BIN / "fxcourse"), *args, "--course", str(course), cwd=course)


def nbgrader_as(user: str, folder: Path, exchange: Path, *args: str) -> subprocess.CompletedProcess:
    """A student's nbgrader command in `folder`, with the hub's student configuration."""
    return demo.as_user(user, str(BIN / "nbgrader"), *args, f"--Exchange.root={exchange}",
                        "--CourseDirectory.course_id=fxcourse", cwd=folder)


def fill(user: str, notebook: Path, answers: dict[str, str]) -> None:
    """Write answers into a student's notebook, as that student."""
    script = ("import autograder, json, sys, nbformat\n"  # autograder first: see tests/conftest.py
              "nb = nbformat.read(sys.argv[1], as_version=4)\n"
              "answers = json.loads(sys.argv[2])\n"
              "for cell in nb.cells:\n"
              "    gid = cell.metadata.get('nbgrader', {}).get('grade_id')\n"
              "    if gid in answers:\n"
              "        cell.source = answers[gid]\n"
              "nbformat.write(nb, sys.argv[1])\n")
    r = demo.as_user(user, str(BIN / "python"), "-c", script, str(notebook), json.dumps(answers))
    assert r.returncode == 0, r.stderr


@pytest.fixture
def judge_side_closed(klass):
    """The exercises' judge side readable by the instructors' group only, as on a hub where it lives in the
    instructor's folder: the instructor package (instructor/) where the checkout has one, else each exercise's
    judging module and its compiled copy. Put back as it was afterwards."""
    checks = ROOT / "autograder" / "checks"
    targets = [ROOT / "instructor"] if (ROOT / "instructor").is_dir() else \
        [*sorted(checks.glob("ex*/judging.py")), *sorted(checks.glob("ex*/__pycache__/judging.*.pyc"))]
    assert targets, "no judge side found to close"
    saved = [(t, t.stat().st_gid, stat.S_IMODE(t.stat().st_mode)) for t in targets]
    gid = grp.getgrnam(klass.instructors).gr_gid
    try:
        for target, _, _ in saved:
            os.chown(target, -1, gid)
            os.chmod(target, 0o750 if target.is_dir() else 0o640)
        yield
    finally:
        for target, old_gid, mode in saved:
            os.chown(target, -1, old_gid)
            os.chmod(target, mode)


def server_environment(user: str) -> dict[str, str]:
    """The environment of `user`'s JupyterLab server, as a terminal in it has it (read as root from /proc)."""
    uid = pwd.getpwnam(user).pw_uid
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if proc.stat().st_uid == uid and b"jupyterhub-singleuser" in (proc / "cmdline").read_bytes():
                pairs = (item.partition(b"=") for item in (proc / "environ").read_bytes().split(b"\0") if item)
                return {key.decode(): value.decode() for key, _, value in pairs}
        except OSError:
            continue
    raise AssertionError(f"no server of {user} is running")


def _gradebook(course: Path):
    from nbgrader.api import Gradebook
    return Gradebook(f"sqlite:///{course / 'gradebook.db'}", "fxcourse")


# ------------------------------------------------------------------------------------- command line

def test_exchange_resubmission_and_late_penalty(klass, generated):
    k = klass
    course = course_copy(k, generated, "course-cli")
    exchange = demo.make_exchange(k.tmp / "exchange-cli")
    # nbgrader's late-submission setting, in the course folder's own nbgrader_config.py
    r = demo.as_user(k.instructor, "tee", str(course / "nbgrader_config.py"),
                     input_text='c = get_config()\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    assert r.returncode == 0, r.stderr

    r = fxcourse(k, course, "release", A, "--exchange", str(exchange), "--due", "2020-01-06 17:00 UTC")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"released {A} to {exchange}/fxcourse/outbound/{A}" in r.stdout and "due 2020-01-06 17:00 UTC" in r.stdout
    r = fxcourse(k, course, "release", A, "--exchange", str(exchange))
    assert r.returncode == 2 and "already released; --force replaces" in r.stderr, r.stdout + r.stderr
    r = fxcourse(k, course, "release", A, "--exchange", str(k.tmp / "nowhere"))
    assert r.returncode == 2 and "nowhere does not exist" in r.stderr
    r = fxcourse(k, course, "release", A, "--exchange", str(exchange), "--force", "--due", "next blue moon")
    assert r.returncode == 2 and "--due 'next blue moon' is not a date" in r.stderr, r.stdout + r.stderr
    r = fxcourse(k, course, "release-feedback", A, "--exchange", str(exchange))
    assert r.returncode == 2 and f"run `fxcourse feedback {A}` first" in r.stderr, r.stdout + r.stderr
    r = fxcourse(k, course, "collect", A, "--exchange", str(exchange))
    assert r.returncode == 0 and f"no submissions of {A} in the exchange yet" in r.stdout, r.stdout + r.stderr

    work = {}
    for user in (k.ada, k.bob):
        folder = k.home(user) / "cli"
        demo.as_user(user, "mkdir", str(folder))
        r = nbgrader_as(user, folder, exchange, "fetch_assignment", A)
        assert r.returncode == 0, r.stdout + r.stderr
        work[user] = folder / A / f"{A}.ipynb"
    assert nbformat.read(str(work[k.ada]), as_version=4).cells, "the fetched notebook is empty"

    # ada hands in wrong answers, bob right ones; after a first collect ada hands in right answers
    fill(k.ada, work[k.ada], WRONG)
    fill(k.bob, work[k.bob], RIGHT)
    for user in (k.ada, k.bob):
        r = nbgrader_as(user, work[user].parent.parent, exchange, "submit", A)
        assert r.returncode == 0, r.stdout + r.stderr
    r = fxcourse(k, course, "collect", A, "--exchange", str(exchange))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 submission(s), 2 new or updated" in r.stdout, r.stdout
    assert all(re.search(rf"{u} +submitted .* collected +LATE by \d+ d", r.stdout) for u in (k.ada, k.bob)), r.stdout
    time.sleep(1.1)  # nbgrader's submission timestamps: the resubmission is the newer one
    fill(k.ada, work[k.ada], RIGHT)
    r = nbgrader_as(k.ada, work[k.ada].parent.parent, exchange, "submit", A)
    assert r.returncode == 0, r.stdout + r.stderr
    r = fxcourse(k, course, "collect", A, "--exchange", str(exchange))
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(rf"{k.ada} +submitted .* replaced by a resubmission +LATE", r.stdout), r.stdout
    assert re.search(rf"{k.bob} +submitted .* unchanged +LATE", r.stdout), r.stdout
    collected = nbformat.read(str(course / "submitted" / k.ada / A / f"{A}.ipynb"), as_version=4)
    sources = "\n".join(c.source for c in collected.cells)
    assert EX01_RIGHT["count_nodes"].strip() in sources and RIGHT["quiz_q2"] in sources, "the resubmission was not kept"

    r = grade(k, course)
    assert r.returncode == 0, r.stdout + r.stderr
    with _gradebook(course) as gb:
        for user in (k.ada, k.bob):
            sub = gb.find_submission(A, user)
            # right answers (10 points), but late: nbgrader's 'zero' method takes them all (the gradebook keeps
            # the score and the penalty side by side, as nbgrader's export and feedback show them)
            assert sub.total_seconds_late > 0 and sub.score == 10 and sub.late_submission_penalty == 10, user


# ------------------------------------------------------------------------------------------- the hub

class Hub:
    def __init__(self, k: Class, course: Path, exchange: Path) -> None:
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.state = k.tmp / "hub-state"
        self.log = k.tmp / "jupyterhub.log"
        env = demo.hub_environment(course, exchange, self.state, self.port, k.instructors, k.students)
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(demo.hub_command(), env=env, cwd=k.tmp, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        end = time.monotonic() + 120
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyterhub exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base}/hub/api", timeout=5) as r:
                    if r.status == 200 and "JupyterHub is now running" in self.log.read_text(errors="replace"):
                        return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"jupyterhub did not answer in 120 s:\n{self.log_tail()}")

    def log_tail(self, n: int = 6000) -> str:
        return self.log.read_text(errors="replace")[-n:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # the hub stops the users' servers, the service and the proxy
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def login(browser, hub: Hub, user: str, password: str):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.goto(f"{hub.base}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", password)
    page.click("#login_submit")
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for(timeout=180_000)
    return page


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name))


def assignments_tab(page):
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    page.locator(".lm-Menu-itemLabel", has_text="Assignment List").first.click()
    panel = page.locator("#released_assignments_list").first
    panel.wait_for(state="visible")
    return page


def answer_in_browser(page, answers: dict[str, str]) -> None:
    """Type each answer into its cell, as a student does: functions by their def line, the quiz cells in order."""
    cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")
    todo = [(f"def {fn}", answers[fn]) for fn in ("node_summary", "count_nodes", "outputs_match")]
    todo += [("raise NotImplementedError()", answers[q]) for q in ("quiz_q1", "quiz_q2", "quiz_q3")]
    for marker, text in todo:
        # the element itself: a locator would move on to the next stub cell once this one is answered
        editor = cells.filter(has=page.locator(".cm-content", has_text=marker)).first.locator(".cm-content") \
            .element_handle()
        editor.click()
        page.keyboard.press("Control+a")
        page.keyboard.press("Delete")
        page.keyboard.insert_text(text)
        assert text.splitlines()[0] in editor.inner_text()


def save(page, path: Path) -> None:
    before = path.stat().st_mtime_ns
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    end = time.monotonic() + 30
    while path.stat().st_mtime_ns == before and time.monotonic() < end:
        time.sleep(0.2)
    assert path.stat().st_mtime_ns != before, f"{path} was not saved"


def validate(page) -> tuple[str, str, str]:
    """Press Validate on the notebook in the Assignments tab; the dialog's text, its kind and its notice."""
    assignments_tab(page)
    downloaded = page.locator("#fetched_assignments_list .list_item").first
    if not downloaded.locator("button", has_text="Validate").first.is_visible():
        downloaded.locator("a.assignment-notebooks-link").first.click()  # unfold the assignment's notebooks
    downloaded.locator("button", has_text="Validate").first.click()
    dialog = page.locator(".jp-Dialog").first
    dialog.wait_for(state="visible", timeout=240_000)
    message = dialog.locator("#validation-message")
    text = message.inner_text()
    kind = message.get_attribute("class")
    notice = page.evaluate("""() => {
        const m = document.querySelector('#validation-message');
        const p = m.querySelector('.validation-success > div > p') || null;
        const style = p ? getComputedStyle(p, '::after') : getComputedStyle(m, '::before');
        return style.content;
    }""")
    return text, kind, notice


def close_dialog(page) -> None:
    page.locator(".jp-Dialog button", has_text="Ok").first.click()
    page.locator(".jp-Dialog").first.wait_for(state="detached")


def test_class_on_the_hub(klass, generated, browser, judge_side_closed):
    k = klass
    course = course_copy(k, generated, "course")
    exchange = demo.make_exchange(k.tmp / "exchange")
    r = fxcourse(k, course, "release", A, "--exchange", str(exchange))
    assert r.returncode == 0, r.stdout + r.stderr
    for user in (k.ada, k.bob):
        k.lab_settings(user)
    hub = Hub(k, course, exchange)
    pages = {}
    try:
        # -- each student logs in, fetches ex01 from the Assignments tab, answers, validates and submits
        for user, answers in ((k.ada, RIGHT), (k.bob, WRONG)):
            page = pages[user] = login(browser, hub, user, k.passwords[user])
            assignments_tab(page)
            released = page.locator("#released_assignments_list .list_item", has_text=A).first
            released.locator("button", has_text="Fetch").click()
            fetched = page.locator("#fetched_assignments_list .list_item", has_text=A).first
            fetched.wait_for(state="visible")
            notebook = k.home(user) / A / f"{A}.ipynb"
            assert notebook.is_file() and notebook.stat().st_uid == pwd.getpwnam(user).pw_uid
            shot(page, f"hub-{'ada' if user == k.ada else 'bob'}-fetched.png")

            page.goto(f"{hub.base}/user/{user}/lab/tree/{A}/{A}.ipynb")
            page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(state="visible")
            wait_kernel_idle(page, 120)
            answer_in_browser(page, answers)
            save(page, notebook)

            text, kind, notice = validate(page)
            shot(page, f"hub-{'ada' if user == k.ada else 'bob'}-validate.png")
            for secret in SECRETS:
                assert secret not in text, f"Validate showed {secret!r} to {user}"
            assert "visible tests only" in notice, notice
            if answers is RIGHT:
                assert "validation-success" in kind and "passes all the tests" in text, text
            else:
                assert "validation-failed" in kind and "count_nodes" in text, text
            close_dialog(page)

            fetched = page.locator("#fetched_assignments_list .list_item", has_text=A).first
            fetched.locator("button", has_text="Submit").first.click()
            end = time.monotonic() + 90  # the submission lands in the exchange's inbound folder, as this student
            while time.monotonic() < end and not list((exchange / "fxcourse" / "inbound").glob(f"{user}+{A}+*")):
                time.sleep(0.5)
            page.locator("#submitted_assignments_list .list_item", has_text=A).first.wait_for(state="visible")
        # -- the students' visible tests were judged by the judge service (the judge side is closed to them)
        log = hub.log.read_text(errors="replace")
        for user in (k.ada, k.bob):
            assert re.search(rf"\[judge service [\d:]+\] {user}: {A}\.count_nodes cases \[\d", log), log[-4000:]
        assert re.search(rf"{k.bob}: {A}\.count_nodes cases \[1\]: 0 of 1 passed", log), log[-4000:]
        assert "def count_nodes" not in log and "len(gm.graph.nodes)" not in log  # nothing of their code
        # `fxcourse check` in a terminal of bob's server: its visible tests, judged by the service
        env = server_environment(k.bob)
        assert env["FXCOURSE_JUDGE_URL"] and env["JUPYTERHUB_API_TOKEN"]
        r = demo.as_user(k.bob, str(BIN / "fxcourse"), "check", f"{A}/{A}.ipynb", "--visible-only", "--json",
                         env={key: env[key] for key in ("FXCOURSE_JUDGE_URL", "JUPYTERHUB_API_TOKEN")})
        assert r.returncode == 1 and r.stdout.startswith("{"), r.stdout + r.stderr
        report = json.loads(r.stdout)
        failed = {t["id"]: t["message"] for t in report["tests"] if not t["passed"]}
        assert list(failed) == ["test_count_nodes"] and "counted 5 nodes, expected" in failed["test_count_nodes"], \
            report
        assert f"{k.bob}: test test_count_nodes (1 calls): failed" in hub.log.read_text(errors="replace")
        # the service asks the hub about each token: one it does not know is refused
        request = urllib.request.Request(env["FXCOURSE_JUDGE_URL"] + "/judge", data=b"{}\n", method="POST",
                                         headers={"Authorization": "token not-a-hub-token"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=60)
        assert refused.value.code == 403 and "the hub does not know this token" in refused.value.read().decode()

        inbound = sorted(p.name.split("+")[0] for p in (exchange / "fxcourse" / "inbound").iterdir())
        assert inbound == sorted([k.ada, k.bob]), inbound
        assert all(p.stat().st_uid == pwd.getpwnam(p.name.split("+")[0]).pw_uid
                   for p in (exchange / "fxcourse" / "inbound").iterdir())

        # -- refused: the formgrader, other students' homes, the instructor's course folder
        page = pages[k.bob]
        page.goto(f"{hub.base}/services/formgrader/formgrader")
        assert "403" in page.inner_text("body") and "permission" in page.inner_text("body")
        shot(page, "hub-student-formgrader-refused.png")
        for target in (k.home(k.ada) / A / f"{A}.ipynb", course / "solutions" / A / f"{A}.ipynb",
                       course / "gradebook.db"):
            r = demo.as_user(k.bob, "cat", str(target))
            assert r.returncode != 0 and "Permission denied" in r.stderr, (target, r.stdout[:200], r.stderr)
        r = demo.as_user(k.bob, "ls", str(k.home(k.ada)))
        assert r.returncode != 0 and "Permission denied" in r.stderr, r.stderr
        # the instructor's group does open it
        teacher = login(browser, hub, k.instructor, k.passwords[k.instructor])
        teacher.goto(f"{hub.base}/services/formgrader/formgrader")
        teacher.get_by_text(A).first.wait_for(state="visible")
        shot(teacher, "hub-instructor-formgrader.png")
        teacher.context.close()

        # -- the instructor collects, grades, writes and releases feedback
        r = fxcourse(k, course, "collect", A, "--exchange", str(exchange))
        assert r.returncode == 0 and "2 submission(s), 2 new or updated" in r.stdout, r.stdout + r.stderr
        r = grade(k, course)
        assert r.returncode == 0, r.stdout + r.stderr
        summary = r.stdout.split(f"summary of {A}:")[1]
        scores = {line.split()[0]: line.split()[1] for line in summary.strip().splitlines()}
        assert scores == {k.ada: "10", k.bob: "7"}, r.stdout
        r = fxcourse(k, course, "feedback", A)
        assert r.returncode == 0, r.stdout + r.stderr
        r = fxcourse(k, course, "release-feedback", A, "--exchange", str(exchange))
        assert r.returncode == 0 and "for 2 student(s)" in r.stdout, r.stdout + r.stderr

        # -- each student fetches their feedback in the Assignments tab and opens it
        for user, score in ((k.ada, "10.0 / 10.0"), (k.bob, "7.0 / 10.0")):
            page = pages[user]
            page.goto(f"{hub.base}/user/{user}/lab")
            page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for()
            assignments_tab(page)
            submitted = page.locator("#submitted_assignments_list .list_item", has_text=A).first
            submitted.locator("button", has_text="Fetch Feedback").click()
            link = page.locator("#submitted_assignments_list a", has_text="view feedback").first
            link.wait_for(state="visible")
            link.click()  # the file browser goes to the feedback folder
            item = page.locator(".jp-DirListing-item", has_text=f"{A}.html").first
            item.dblclick()
            frame = page.frame_locator(".jp-HTMLViewer iframe, iframe").first
            frame.locator("body").get_by_text("Score").first.wait_for(state="visible")
            html = frame.locator("body").inner_text()
            shot(page, f"hub-{'ada' if user == k.ada else 'bob'}-feedback.png")
            assert score in html, html[:2000]
            for secret in SECRETS:
                assert secret not in html, f"{user}'s feedback shows {secret!r}"
            if user == k.bob:
                assert "counted 5 nodes, expected" in html and "is not the right answer" in html, html[:3000]
            other = k.bob if user == k.ada else k.ada
            assert other not in html
    except BaseException:
        for user, page in pages.items():
            try:
                shot(page, f"hub-{user}-last.png")
            except Exception:
                pass
        print(hub.log_tail())
        raise
    finally:
        for page in pages.values():
            page.context.close()
        hub.stop()
