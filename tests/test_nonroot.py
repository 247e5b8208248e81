"""Hardened grading by an instructor who is not root: a real Unix user, and the jail of a user namespace.

The module makes one Unix user with useradd (the instructor: a home of mode 0700 holding their course folder,
with ex01 generated, two collected submissions and a secret file, a venv made from pyenv's Python under /root
where this machine has it (else from the Python running the tests: Debian's), and a copy of the course's
packages) and removes it afterwards. As that user, from that venv, one Python
process (runuser) asks for the jail, grades in it the solution (full marks), the release (zero) and a
submission that kills, signals and forks, then presses formgrader's autograde button the way the formgrader's
handler does (nbgrader's NbGraderAPI.autograde, with the hub's formgrader configuration) for an honest student
and a hostile one who tries to read the instructor's files, write outside its scratch and reach a port this
test listens on. Each attack, if it worked, would cost its notebook a quiz point; the honest grades must be
right, the grading process must live through the signals, and nothing of the instructor's may change.

The venv in the home borrows the tests' packages through a .pth file (they lie outside the home, and the
worker's root file system must hold them too). Where the tests' venv or its Python lie below a folder closed
to others (/root), the test lets the user pass through it (o+x) for its duration, as tests/test_hub.py does:
the instructor must be able to run the course's Python at all; what the worker reads is bound into its jail,
the home's own venv and packages included, whatever the modes.
"""
from __future__ import annotations

import hashlib
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import pytest

from autograder.grader.jail import userjail
from autograder.course.notebook import answer_cells, grade_id, read_notebook
from conftest import EX01_RIGHT, ROOT
from test_hub import demo
from test_instructor import _fill
from test_private_home import private_python

pytestmark = pytest.mark.kernel
A = "ex01_tracing"
QUIZ = {grade_id(c): c.source for c in answer_cells(read_notebook(ROOT / "solutions" / A / f"{A}.ipynb"))
        if grade_id(c).startswith("quiz_")}
RIGHT = {**EX01_RIGHT, **QUIZ}


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "the test makes a Unix user: it needs root"
    for tool in ("runuser", "useradd", "userdel"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    return None


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Instructor:
    """The Unix user, and `base`: the Python their venv is made from (pyenv's under /root where this machine has
    one of the tests' version, as tests/test_private_home.py picks it; else the one running the tests)."""

    def __init__(self) -> None:
        self.base = private_python() or os.path.realpath(getattr(sys, "_base_executable", sys.executable))
        self.name = f"fxn{secrets.token_hex(3)}"
        self.tmp = Path(tempfile.mkdtemp(prefix="fxcourse-nonroot-", dir="/tmp"))
        os.chmod(self.tmp, 0o755)
        self.home = self.tmp / self.name
        self.opened: list[Path] = []
        subprocess.run(["useradd", "--create-home", "--home-dir", str(self.home), "--shell", "/bin/sh",
                        "--user-group", self.name], check=True)
        os.chmod(self.home, 0o700)
        try:
            for target in [*demo.environment_paths(), Path(self.base)]:
                while (where := demo.blocked_path(self.name, target)) is not None:
                    os.chmod(where, stat.S_IMODE(where.stat().st_mode) | stat.S_IXOTH)
                    self.opened.append(where)
        except BaseException:
            self.remove()
            raise

    def own(self, path: Path) -> None:
        pw = pwd.getpwnam(self.name)
        for folder, _, files in os.walk(path):
            for entry in [folder, *(os.path.join(folder, f) for f in files)]:
                os.chown(entry, pw.pw_uid, pw.pw_gid)

    def remove(self) -> None:
        uid = pwd.getpwnam(self.name).pw_uid
        end, left = time.monotonic() + 20, True
        while left and time.monotonic() < end:  # until every process of theirs is gone, zombies reaped
            left = False
            for status in Path("/proc").glob("[0-9]*/status"):
                try:
                    if f"\nUid:\t{uid}\t" in status.read_text():
                        left = True
                        os.kill(int(status.parent.name), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
            time.sleep(0.2 if left else 0)
        for where in reversed(self.opened):
            os.chmod(where, stat.S_IMODE(where.stat().st_mode) & ~stat.S_IXOTH)
        subprocess.run(["userdel", "--remove", self.name], capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def teacher():
    reason = _missing()
    if reason:
        pytest.skip(reason)
    t = Instructor()
    yield t
    t.remove()
    with pytest.raises(KeyError):
        pwd.getpwnam(t.name)


GRADE = """
import json, os, sys
from pathlib import Path
from autograder.grader.jail import sandbox
from autograder.grader.engine.grading import check_notebook
from autograder.course.root import Course

import autograder
course = Path(sys.argv[1])
out = {"uid": os.getuid(), "support": sandbox.jail_support(), "autograder": autograder.__file__,
       "prefix": sys.prefix, "base_prefix": sys.base_prefix}
if out["support"]:
    print(json.dumps(out))
    sys.exit(0)
sandbox.require_isolation()  # what hardened grading (fxcourse grade, nbgrader autograde) asks first
out["reports"] = []
for path in sys.argv[2:]:  # the killer is told the grading process's pid (outside the jail's pid namespace)
    if "__GRADER_PID__" in Path(path).read_text():
        Path(path).write_text(Path(path).read_text().replace("__GRADER_PID__", str(os.getpid())))
    r = check_notebook(Path(path), Course(course))
    out["reports"].append({"score": r.score, "isolation": r.isolation,
                           "tests": {t.id: [t.points, t.message] for t in r.tests}})
# formgrader's autograde button: its handler calls NbGraderAPI.autograde in the instructor's server
from nbgrader.api import Gradebook
from nbgrader.apps import NbGraderAPI
from nbgrader.apps.nbgraderapp import NbGraderApp

os.chdir(course)
app = NbGraderApp()
app.load_config_file()  # the hub's formgrader configuration (JUPYTER_CONFIG_PATH), as the formgrader loads it
api = NbGraderAPI(config=app.config)
out["autograde"] = {}
for student in sorted(os.listdir(course / "submitted")):
    result = api.autograde("ex01_tracing", student)
    out["autograde"][student] = {"success": result["success"], "log": result.get("log", "")[-3000:],
                                 "error": result.get("error", "")[-3000:]}
with Gradebook(f"sqlite:///{course}/gradebook.db") as gb:
    for student in out["autograde"]:
        out["autograde"][student]["score"] = gb.find_submission("ex01_tracing", student).score
out["alive"] = os.getpid()
print(json.dumps(out))
"""


def _reader(course: Path, home: Path, port: int) -> dict[str, str]:
    """Right answers; q1 stays right only while the instructor's files stay unreadable (and the home lists no
    more than the venv and the course's packages bound into the jail), q2 only while nothing outside scratch
    can be written and the test's port cannot be reached."""
    read = [course / "solutions" / A / f"{A}.ipynb", course / "gradebook.db", home / "secret.txt",
            course / "submitted" / "ada" / A / f"{A}.ipynb"]
    listed = {str(course): [], str(home): ["checkout", "venv"]}
    write = [course / "solutions" / A / "evil.py", home / "evil.txt", Path(f"/tmp/{home.name}-evil"),
             course / "gradebook.db", home / "venv" / "evil.py", Path(os.path.dirname(os.__file__)) / "evil.py"]
    q1 = QUIZ["quiz_q1"] + (
        f"\nimport os\nfor _p in {[str(p) for p in read]!r}:\n    try:\n"
        "        open(_p, 'rb').read(1)\n        q1 = None\n    except OSError:\n        pass\n"
        f"for _p, _shown in {listed!r}.items():\n    try:\n"
        "        if set(os.listdir(_p)) - set(_shown):\n            q1 = None\n    except OSError:\n        pass\n")
    q2 = QUIZ["quiz_q2"] + (
        f"\nimport os, socket\nfor _p in {[str(p) for p in write]!r}:\n    try:\n"
        "        open(_p, 'a').write('# written by a submission\\n')\n        q2 = None\n"
        "    except OSError:\n        pass\n"
        f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\n    q2 = None\n"
        "except OSError:\n    pass\n")
    return {**RIGHT, "quiz_q1": q1, "quiz_q2": q2}


def _killer() -> dict[str, str]:
    """Right answers, after top-level code that signals every process it can name (its process group, all it
    sees, the grading process by its pid outside) and starts threads until refused (RLIMIT_NPROC counts threads
    and processes alike; threads cost less time to start than forks of a process that imported torch); q1 stays
    right while they are capped well below a thousand."""
    attack = (
        "import os, signal, threading, time\n"
        "for _pid in (0, -1, __GRADER_PID__):\n    try:\n        os.kill(_pid, signal.SIGKILL)\n"
        "    except OSError:\n        pass\n"
        "threading.stack_size(64 * 1024)  # a thousand of them fit the memory limit many times over\n"
        "kids = 0\ntry:\n    for _ in range(1000):\n"
        "        threading.Thread(target=time.sleep, args=(3,), daemon=True).start()\n        kids += 1\n"
        "except RuntimeError:\n    pass\n")
    return {**RIGHT, "node_summary": attack + EX01_RIGHT["node_summary"],
            "quiz_q1": QUIZ["quiz_q1"] + "\nif kids >= 1000:\n    q1 = None\n"}


def test_an_instructor_who_is_not_root_grades_in_the_jail_and_with_formgrader_s_button(teacher, generated_course):
    course = generated_course(teacher.home / "course", A)  # solutions/ex01, its release and gradebook
    secret = teacher.home / "secret.txt"
    secret.write_text("the course's secret\n")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    release = course / "exercises" / A / f"{A}.ipynb"
    work = teacher.home / "work"
    _fill(release, RIGHT, course / "submitted" / "ada" / A / f"{A}.ipynb")
    _fill(release, _reader(course, teacher.home, listener.getsockname()[1]),
          course / "submitted" / "mallory" / A / f"{A}.ipynb")
    _fill(release, _killer(), work / "killer.ipynb")
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    venv, checkout = teacher.home / "venv", teacher.home / "checkout"
    subprocess.run([teacher.base, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    (venv / "lib" / version / "site-packages" / "fxcourse-test.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    for name in ("autograder", "fxplayground"):
        shutil.copytree(ROOT / name, checkout / name, ignore=shutil.ignore_patterns("__pycache__"))
    # the instructor's side of the checks lives in their course folder (docs/jupyterhub.md), not beside the package
    shutil.copytree(ROOT / "instructor", course / "instructor", ignore=shutil.ignore_patterns("__pycache__"))
    teacher.own(teacher.home)
    os.chmod(course, 0o700)
    before = {p: _digest(p) for p in (course / "solutions" / A / f"{A}.ipynb", secret)}
    env = {"JUPYTER_CONFIG_PATH": str(ROOT / "deploy" / "jupyterhub" / "formgrader"),
           "FXCOURSE_COURSE_ROOT": str(course), "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(checkout),
           "FXCOURSE_FORKSERVER_KEEP": "0"}  # the instructor's fork server ends with the grading
    try:
        r = demo.as_user(teacher.name, str(venv / "bin" / "python"), "-c", GRADE, str(course),
                         str(course / "solutions" / A / f"{A}.ipynb"), str(release), str(work / "killer.ipynb"),
                         cwd=work, env=env, timeout=600)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody reached the port
    finally:
        listener.close()
    assert r.returncode == 0, r.stdout + r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["uid"] == pwd.getpwnam(teacher.name).pw_uid != 0
    if out["support"]:  # the kernel refuses the user what the jail needs: the refusal names it
        why = "; ".join(f"{k}: {v}" for k, v in out["support"].items())
        if os.environ.get("FXCOURSE_REQUIRE_JAIL"):
            pytest.fail(f"FXCOURSE_REQUIRE_JAIL is set but the jail without root lacks: {why}", pytrace=False)
        pytest.skip(f"no jail without root here: {why}")
    assert out["autograder"].startswith(str(checkout)) and out["prefix"] == str(venv), out
    assert out["base_prefix"] == os.path.dirname(os.path.dirname(teacher.base)), out
    solution, zero, killer = out["reports"]
    assert [solution["isolation"], zero["isolation"], killer["isolation"]] == ["jail"] * 3
    assert solution["score"] == 10, solution["tests"]
    assert zero["score"] == 0, zero["tests"]
    assert killer["score"] == 10, killer["tests"]  # capped threads, and nothing outside the jail killed
    ada, mallory = out["autograde"]["ada"], out["autograde"]["mallory"]
    assert ada["success"] and mallory["success"], (ada, mallory)
    assert ada["score"] == 10, ada["log"]
    assert mallory["score"] == 10, mallory["log"]  # q1 and q2 kept: nothing read, written or reached
    assert {p: _digest(p) for p in before} == before
    assert not (course / "solutions" / A / "evil.py").exists() and not (teacher.home / "evil.txt").exists()
    assert not Path(f"/tmp/{teacher.name}-evil").exists()
    assert stat.S_IMODE(teacher.home.stat().st_mode) == 0o700  # the home was never opened


@pytest.mark.parametrize("setting, value, named", [
    ("/proc/sys/kernel/unprivileged_userns_clone", "0", "kernel.unprivileged_userns_clone"),
    ("/proc/sys/user/max_user_namespaces", "0", "user.max_user_namespaces"),
    ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1", "kernel.apparmor_restrict_unprivileged_userns=1"),
])
def test_a_refused_user_namespace_names_the_kernel_setting(monkeypatch, setting, value, named):
    monkeypatch.setattr(userjail, "_read", lambda path: value if path == setting else "")
    why = userjail.refusal("unshare of a user namespace: Operation not permitted")
    assert why.startswith("unshare of a user namespace: Operation not permitted (") and named in why, why
    monkeypatch.setattr(userjail, "_read", lambda path: "")
    assert "no kernel setting" in userjail.refusal("unshare: Operation not permitted")
