"""Hardened grading from a Python, a venv and a checkout that lie under private homes (mode 0700).

pyenv puts its interpreters under the user's home (/root/.pyenv, /root being 0700): the worker's uid cannot
enter it, so the jail covers such a home with an empty file system and binds back, read-only, only what the
worker reads (the interpreter's prefix, the venv, the course's packages). The module builds, once, a venv and a
copy of the course's packages in a fresh 0700 home, from a Python whose prefix is itself under a private home
(the one running the tests, or pyenv's of the same version), then grades ex01 in the jail from it: the solution
scores full marks, the release zero, and a submission that looks around the homes sees only what was bound
back. Where a piece stays unreadable, the refusal names the path and the folder in the way.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.grader.jail import jailpaths, sandbox
from autograder.course.notebook import answer_cells, grade_id, read_notebook
from conftest import EX01_RIGHT, ROOT
from test_instructor import _fill

pytestmark = [pytest.mark.kernel,
              pytest.mark.skipif(sandbox.isolation_level() != "jail", reason="needs the jail (Linux, root, unshare)")]
A = "ex01_tracing"
SOURCE = ROOT / "solutions" / A / f"{A}.ipynb"
RELEASE = ROOT / "exercises" / A / f"{A}.ipynb"
VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"


def _private_ancestor(path: str) -> str | None:
    """The outermost folder above `path` that a worker's uid cannot pass through, or None."""
    return jailpaths.private_ancestor(os.path.realpath(path), sandbox.UID_BASE, sandbox.UID_BASE)


def private_python() -> str | None:
    """A Python of this version (the tests' packages load in it) whose prefix lies under a private home: the
    one running the tests, else pyenv's under /root. None where this machine has neither."""
    if _private_ancestor(sys.base_prefix):
        return os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    for prefix in sorted(Path("/root/.pyenv/versions").glob(f"{VERSION}.*")):
        python = prefix / "bin" / f"python{VERSION}"
        if python.is_file() and _private_ancestor(str(prefix)):
            return str(python)
    return None


@dataclass
class Home:
    home: Path           # a fresh 0700 home: the venv, the checkout and a secret file
    python: str          # the venv's python
    checkout: Path       # autograder/, fxplayground/ and instructor/, copied
    base: str            # the Python the venv was made from (under another private home)
    secret: Path

    def run(self, python: str, code: str, *args: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "PYTHONPATH": str(self.checkout)}
        env.pop("FXCOURSE_INSTRUCTOR_SIDE", None)   # the checkout's own instructor's side (autograder.checks.keyring)
        return subprocess.run([python, "-c", code, *args], capture_output=True, text=True, cwd=self.checkout,
                              env=env, timeout=900, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def private():
    base = private_python()
    if base is None:
        pytest.skip(f"no Python {VERSION} under a private home here (pyenv's under /root is one)")
    home = Path(tempfile.mkdtemp(prefix="fxcourse-home-", dir="/home" if os.path.isdir("/home") else "/srv"))
    try:
        assert _private_ancestor(str(home / "venv")) == str(home)  # mkdtemp: mode 0700, and no cover above it
        venv = home / "venv"
        subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
        # The tests' own packages (torch, IPython, ...) join the venv's site-packages (same Python version).
        site = venv / "lib" / f"python{VERSION}" / "site-packages"
        (site / "fxcourse-test.pth").write_text(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
        checkout = home / "checkout"
        for name in ("autograder", "fxplayground", "instructor"):   # a clone's packages and instructor's side
            shutil.copytree(ROOT / name, checkout / name, ignore=shutil.ignore_patterns("__pycache__"))
        secret = home / "secret.txt"
        secret.write_text("not for the worker\n")
        secret.chmod(0o644)  # the home's mode is what keeps it: the jail must not open the home
        yield Home(home, str(venv / "bin" / "python"), checkout, base, secret)
    finally:
        shutil.rmtree(home, ignore_errors=True)


GRADE = """
import json, sys
from pathlib import Path
import autograder
from autograder.grader.jail import sandbox, worker
from autograder.grader.engine.grading import check_notebook
from autograder.course.root import Course
out = {"autograder": autograder.__file__, "base_prefix": sys.base_prefix, "support": sandbox.jail_support()}
if not out["support"]:
    sandbox.require_isolation()  # what hardened grading (fxcourse grade) asks first
    reports = [check_notebook(p, Course(Path(sys.argv[1]))) for p in sys.argv[2:]]
    out["reports"] = [{"score": r.score, "isolation": r.isolation,
                       "tests": {t.id: [t.points, t.message] for t in r.tests}} for r in reports]
print(json.dumps(out))
"""


def _looking_around(q1: str, secret: Path, shown: dict[str, set[str]]) -> str:
    """Quiz q1's right answer, kept only while the secret cannot be read and each home lists no more than
    what the jail bound back (or cannot be listed at all)."""
    return q1 + f"""
import os
def _sees_more():
    try:
        open({str(secret)!r}).read()
        return True
    except OSError:
        pass
    for home, shown in {({k: sorted(v) for k, v in shown.items()})!r}.items():
        try:
            if set(os.listdir(home)) - set(shown):
                return True
        except OSError:
            pass
    return False
if _sees_more():
    q1 = None
"""


def test_a_python_venv_and_checkout_under_private_homes_grade_in_the_jail(private, tmp_path):
    homes = {str(private.home): {"venv", "checkout"}}
    outer = _private_ancestor(private.base)
    homes[outer] = {os.path.relpath(private.base, outer).split("/")[0]}  # /root: .pyenv
    modes = {h: os.stat(h).st_mode for h in homes}
    quiz = {grade_id(c): c.source for c in answer_cells(read_notebook(SOURCE)) if grade_id(c).startswith("quiz_")}
    # The course graded: ex01 alone, beside the checkout (the repository's folder would hide the venv whose
    # packages the test's venv borrows, as it hides every course folder but the packages from the worker)
    course = tmp_path / "course"
    for folder in ("solutions", "exercises"):
        shutil.copytree(ROOT / folder / A, course / folder / A)
    looking = tmp_path / "looking" / f"{A}.ipynb"
    _fill(RELEASE, {**EX01_RIGHT, **quiz, "quiz_q1": _looking_around(quiz["quiz_q1"], private.secret, homes)},
          looking)
    r = private.run(private.python, GRADE, str(course), str(SOURCE), str(RELEASE), str(looking))
    assert r.returncode == 0, r.stdout + r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["autograder"].startswith(str(private.checkout)), out
    assert _private_ancestor(out["base_prefix"]), out  # the interpreter really lies under a private home
    assert out["support"] == {}, out["support"]
    solution, release, looked = out["reports"]
    assert [solution["isolation"], release["isolation"], looked["isolation"]] == ["jail"] * 3
    assert solution["score"] == 10, solution["tests"]
    assert release["score"] == 0, release["tests"]
    assert looked["tests"]["test_quiz_q1"][0] == 1, "the worker saw more of a home: " + str(looked["tests"])
    assert looked["score"] == 10, looked["tests"]
    assert {h: os.stat(h).st_mode for h in homes} == modes  # no home was opened to do it


def test_a_piece_the_worker_cannot_read_is_named_with_the_folder_in_the_way(private):
    closed = private.home / "closed"
    subprocess.run([private.base, "-m", "venv", "--without-pip", str(closed)], check=True, timeout=120)
    try:
        (closed / "lib").chmod(0o700)
        r = private.run(str(closed / "bin" / "python"),
                        "import json; from autograder.grader.jail import sandbox; print(json.dumps(sandbox.jail_support()))")
    finally:
        shutil.rmtree(closed)
    assert r.returncode == 0, r.stdout + r.stderr
    missing = json.loads(r.stdout.strip().splitlines()[-1])
    site = closed / "lib" / f"python{VERSION}" / "site-packages"
    assert missing == {"Python and the course's packages readable by the worker":
                       f"the worker's uid cannot read {site} (under {closed / 'lib'}, mode 0700)"}, missing
