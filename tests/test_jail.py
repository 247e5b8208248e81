"""No cross-submission effects: a hostile submission graded before, and beside, an honest one.

The hostile submission tries everything at once (write outside scratch, find the other worker, steal its
answers, lift its own limits) and reports through its quiz answers, which it keeps right only where the
attack failed. From outside, the test checks the honest score, the hostile score, and that no file changed in
the venv's site-packages, the course folder or /etc. Also: hardened grading refuses, naming the missing piece,
where the jail is incomplete, unless the instructor opts out.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from autograder.checks import keyring
from autograder.grader.jail import sandbox
from autograder.course.notebook import answer_cells, grade_id, read_notebook
from autograder.course.root import Course
from conftest import EX01_RIGHT, ROOT
from test_instructor import _fill, fxcourse

pytestmark = pytest.mark.kernel
A = "ex01_tracing"
SOURCE_NB = ROOT / "solutions" / A / f"{A}.ipynb"
QUIZ = {grade_id(c): c.source for c in answer_cells(read_notebook(SOURCE_NB)) if grade_id(c).startswith("quiz_")}
jail = pytest.mark.skipif(sandbox.isolation_level() != "jail", reason="needs the jail (Linux, root, unshare)")


# How long the stealing answer looks for another submission's answer: long enough to outlast a worker graded
# beside it (about 3 s; the test checks that it did); graded alone, there is only what earlier workers left
# behind, found by its first look.
BESIDE, ALONE = 15, 2


def _hostile(root: Path, window: int = ALONE) -> dict[str, str]:
    """Blank functions (0 points unless it steals, trying for `window` seconds), and each quiz right only while
    its attack fails."""
    site = sysconfig.get_paths()["purelib"]
    # Files in the test's own course copy are really written; shared ones (the repository's sources, kernel
    # settings) are only opened, or written back unchanged, so that even a hole would harm nothing.
    targets = [(site + "/fxcourse_hostile.pth", "w", 1), ("/etc/fxcourse-hostile", "w", 1),
               (str(root / "solutions" / A / f"{A}.ipynb"), "a", 1), (str(root / "gradebook.db"), "a", 1),
               (str(root / "submitted" / "alice" / A / f"{A}.ipynb"), "a", 1),
               (str(root / "exercises" / "evil.py"), "w", 1), (str(ROOT / "autograder" / "core.py"), "a", 0),
               ("/proc/sys/kernel/core_pattern", "r+", 2), ("/tmp/fxcourse-hostile", "w", 1)]
    attack_files = (
        f"targets = {targets!r}\n"
        "for path, mode, write in targets:\n"
        "    try:\n        with open(path, mode) as f:\n"
        "            f.write(f.read() if write == 2 else '# changed by a submission\\n' if write else '')\n"
        "        broke = True\n    except OSError:\n        pass\n")
    attack_see = (
        "import glob\nfor pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n    try:\n"
        "        cmd = open(f'/proc/{pid}/cmdline', 'rb').read()\n    except OSError:\n        continue\n"
        "    if int(pid) != os.getpid() and b'autograder.grader.jail.worker' in cmd or b'nbgrader' in cmd or b'pytest' in cmd:\n"
        "        broke = True\n"
        "others = glob.glob('/tmp/fxcourse-worker-*') + glob.glob('/run/fxcourse-jail/*')  # all but its own\n"
        "if [p for p in others if os.path.exists(p) and os.path.realpath(p) != os.path.realpath(os.getcwd())]:\n"
        "    broke = True\n")
    attack_limits = (
        "for line in open('/proc/self/cgroup'):\n    path = line.strip().split(':', 2)[2]\n"
        "    for base in ('/sys/fs/cgroup/pids', '/sys/fs/cgroup'):\n        try:\n"
        "            open(base + path + '/pids.max', 'w').write('max')\n            broke = True\n"
        "        except OSError:\n            pass\n"
        "import resource\ntry:\n    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY,) * 2)\n"
        "    broke = True\n"
        "except (OSError, ValueError):\n    pass\n")
    steal = (
        f"import os, glob, time, json\nstolen = None\nend = time.time() + {window}\n"
        "while stolen is None and time.time() < end:\n"
        "    paths = glob.glob('/proc/[0-9]*/cwd/job.json') + glob.glob('/tmp/fxcourse-worker-*/job.json')\n"
        "    paths += glob.glob('/proc/[0-9]*/root/tmp/fxcourse-worker-*/job.json') + glob.glob('/proc/[0-9]*/fd/*')\n"
        f"    paths += glob.glob({str(root / 'submitted' / '*' / A / '*.ipynb')!r})\n"
        "    for path in paths:\n        try:\n            text = open(path).read()\n"
        "        except (OSError, UnicodeDecodeError):\n            continue\n"
        "        if 'return [(n.op, n.name)' in text:\n            stolen = text\n            break\n"
        "    time.sleep(0.2)\n"
        "if stolen:\n    data = json.loads(stolen)\n    for cell in data['cells']:\n"
        "        src = cell['source'] if isinstance(cell['source'], str) else ''.join(cell['source'])\n"
        "        try:\n            exec(src)\n        except Exception:\n            pass\n")

    def flagged(quiz: str, attack: str) -> str:
        var = quiz[len("quiz_"):]
        return "import os\n" + QUIZ[quiz] + "\nbroke = False\n" + attack + f"if broke:\n    {var} = 'broke'\n"

    return {"node_summary": "import torch\n" + steal, "quiz_q1": flagged("quiz_q1", attack_files),
            "quiz_q2": flagged("quiz_q2", attack_see), "quiz_q3": flagged("quiz_q3", attack_limits)}


def _tree(root: str, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """Every file and folder under `root`: its mode, owner, size, mtime and ctime (a write, chmod or utime
    changes ctime, which no one can set back) and, for files under 1 MiB, a hash of its content."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if os.path.join(folder, d) not in skip)
        for name in sorted(files) + dirs:
            path = os.path.join(folder, name)
            if path in skip:
                continue
            try:
                st = os.lstat(path)
                digest = hashlib.sha256(Path(path).read_bytes()).hexdigest() \
                    if os.path.isfile(path) and not os.path.islink(path) and st.st_size < 2**20 else ""
            except OSError:
                continue
            out[path] = f"{st.st_mode}|{st.st_uid}|{st.st_size}|{st.st_mtime_ns}|{st.st_ctime_ns}|{digest}"
    return out


# The user database is rewritten by whatever adds or removes a user on this machine (other test suites do);
# the hostile submission's attempt on it is checked from inside, by its quiz flag.
USER_DB = tuple(f"/etc/{n}{s}" for n in ("passwd", "group", "shadow", "gshadow", "subuid", "subgid")
                for s in ("", "-")) + ("/etc/.pwd.lock",)


def _grader_writes(root: Path) -> tuple[str, ...]:
    return tuple(str(root / n) for n in ("gradebook.db", "gradebook.db-journal", "autograded", "feedback",
                                         ".nbgrader.log"))


def _state(root: Path) -> dict[str, dict[str, str]]:
    return {"site-packages": _tree(sysconfig.get_paths()["purelib"]),
            "course": _tree(str(root), _grader_writes(root)), "/etc": _tree("/etc", USER_DB)}


def _changes(before: dict[str, dict[str, str]], after: dict[str, dict[str, str]]) -> list[str]:
    return [path for area in before for path in sorted(set(before[area]) | set(after[area]))
            if before[area].get(path) != after[area].get(path)]


def _scores(stdout: str) -> dict[str, str]:
    return dict(re.findall(r"^\s+(\w+)\s+(\d+(?:\.\d+)? / \d+)\s*$", stdout, re.M))


@pytest.fixture(scope="module")
def course(tmp_path_factory, generated_course) -> Path:
    # solutions/A with the quiz keys, and `fxcourse generate A` (once per test run)
    root = generated_course(tmp_path_factory.mktemp("course"), A, quiz_keys=True)
    release = root / "exercises" / A / f"{A}.ipynb"
    _fill(release, {**EX01_RIGHT, **QUIZ}, root / "submitted" / "alice" / A / f"{A}.ipynb")
    _fill(release, _hostile(root), root / "submitted" / "mallory" / A / f"{A}.ipynb")
    return root


@jail
def test_a_hostile_submission_changes_nothing_for_the_next_or_the_one_beside_it(course):
    alone = fxcourse(course, "grade", A, "--student", "alice")
    assert alone.returncode == 0, alone.stdout + alone.stderr
    assert _scores(alone.stdout)["alice"] == "10 / 10"
    before = _state(course)  # after one grading: every cache the grader itself writes is written

    # one after the other: the hostile one first
    hostile = fxcourse(course, "grade", A, "--student", "mallory")
    honest = fxcourse(course, "grade", A, "--student", "alice", "--regrade")
    assert "alice: graded" in honest.stdout and _scores(honest.stdout)["alice"] == "10 / 10", \
        honest.stdout + honest.stderr
    # 3 = the three quiz points, each kept only because its attack failed; 0 for the blank functions, which
    # would have scored had the answers of the other submission been found and copied
    assert _scores(hostile.stdout)["mallory"] == "3 / 10", hostile.stdout + hostile.stderr

    assert _changes({"course": before["course"]}, {"course": _tree(str(course), _grader_writes(course))}) == []

    # side by side, one worker each at the same time (the stealer looking for as long as the other one runs);
    # what was outside the course is compared at the end with the state before the first hostile run
    _fill(course / "exercises" / A / f"{A}.ipynb", _hostile(course, BESIDE),
          course / "submitted" / "mallory" / A / f"{A}.ipynb")
    before = {**before, "course": _tree(str(course), _grader_writes(course))}  # its new submission is the test's
    both = fxcourse(course, "grade", A, "-j", "2", "--regrade")
    assert both.returncode == 0, both.stdout + both.stderr
    assert "2 at a time" in both.stdout
    assert _scores(both.stdout) == {"alice": "10 / 10", "mallory": "3 / 10"}, both.stdout
    # the stealer was still looking when the honest worker ended (each line is printed as its grading ends)
    assert both.stdout.index("alice: graded") < both.stdout.index("mallory: graded"), both.stdout

    assert _changes(before, _state(course)) == []
    assert not os.path.exists("/etc/fxcourse-hostile")
    assert not os.path.exists(os.path.join(sysconfig.get_paths()["purelib"], "fxcourse_hostile.pth"))


@jail
def test_a_checkout_under_tmp_keeps_its_packages_and_still_covers_tmp(course, tmp_path):
    """A course cloned into /tmp (where CI or an instructor may put it) must stay importable in the jail
    without uncovering /tmp, where other graders' scratch folders are: the worker sees its packages bound back
    and nothing else of /tmp."""
    checkout = tmp_path / "checkout"  # pytest's tmp_path lies under /tmp
    assert str(checkout.resolve()).startswith("/tmp/")
    for name in ("autograder", "fxplayground", "instructor"):   # a clone's packages and its instructor's side
        shutil.copytree(ROOT / name, checkout / name, ignore=shutil.ignore_patterns("__pycache__"))
    # mallory's attacks as the course fixture wrote them (the side-by-side test gives hers a longer search)
    _fill(course / "exercises" / A / f"{A}.ipynb", _hostile(course),
          course / "submitted" / "mallory" / A / f"{A}.ipynb")
    decoy = tempfile.mkdtemp(prefix="fxcourse-worker-decoy-", dir="/tmp")  # like another grader's scratch
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    env.pop(keyring.ENV, None)   # the checkout's own instructor's side, found beside its autograder
    try:
        where = subprocess.run([sys.executable, "-c", "import autograder; print(autograder.__file__)"],
                               capture_output=True, text=True, cwd=checkout, env=env, timeout=60)
        assert where.stdout.strip().startswith(str(checkout)), where.stdout + where.stderr
        r = subprocess.run([sys.executable, "-m", "autograder.cli", "check", "--json", "--course", str(course),
                            str(course / "submitted" / "mallory" / A / f"{A}.ipynb")],
                           capture_output=True, text=True, cwd=checkout, env=env, timeout=900)
    finally:
        os.rmdir(decoy)
    report = json.loads(r.stdout)
    tests = {t["id"]: t for t in report["tests"]}
    assert tests["test_quiz_q2"]["passed"], "the worker saw /tmp: " + tests["test_quiz_q2"]["message"]
    assert report["score"] == 3, tests  # every attack failed, and the packages imported in the jail


# ----------------------------------------------------------------------- refusing an incomplete jail

@pytest.fixture
def missing_proc(monkeypatch):
    """The machine as one where a new proc cannot be mounted."""
    monkeypatch.delenv("FXCOURSE_ISOLATION", raising=False)
    monkeypatch.setattr(sandbox, "_SUPPORT", {"a private /proc": "mount proc on /proc: Operation not permitted"})


def test_hardened_grading_refuses_and_names_the_missing_piece(missing_proc, course, capsys):
    from autograder.cli import main
    from autograder.grader.engine.grading import grade_restored

    with pytest.raises(sandbox.IsolationError, match=r"missing a private /proc \(mount proc"):
        grade_restored(read_notebook(SOURCE_NB), hardened=True)
    assert main(["grade", A, "--course", str(course)]) == 2
    err = capsys.readouterr().err
    assert "missing a private /proc" in err and "FXCOURSE_ISOLATION=limits" in err
    assert len(err.strip().splitlines()) == 1
    from autograder.grader.jail import forkserver

    assert forkserver._SERVER.sock is None  # the fork server, joined before the refusal, is left at once


def test_the_instructor_can_opt_out_explicitly(missing_proc, monkeypatch):
    monkeypatch.setenv("FXCOURSE_ISOLATION", "limits")
    sandbox.require_isolation()  # no error
    assert sandbox.isolation_level() == "limits"


def test_a_learners_check_uses_what_there_is_and_says_what_is_missing(missing_proc, tmp_path):
    from autograder.course.root import Course
    from autograder.grader.engine.grading import check_notebook

    nb = tmp_path / f"{A}.ipynb"
    _fill(ROOT / "exercises" / A / f"{A}.ipynb", {**EX01_RIGHT, **QUIZ}, nb)
    report = check_notebook(nb, Course(ROOT))
    assert report.score == report.max_score and report.isolation == "limits"
    assert any("missing: a private /proc" in n for n in report.notes)


@jail
def test_the_jail_probe_finds_every_piece_here():
    assert sandbox.jail_support() == {}


# ------------------------------------------------------------------------- inputs, on every path

def _deep_json(path: Path) -> None:
    path.write_text('{"cells": ' + "[" * 100_000 + "]" * 100_000 + ', "nbformat": 4}')


def _deep_code(path: Path) -> None:
    _fill(ROOT / "exercises" / A / f"{A}.ipynb", {"count_nodes": "x = " + "+".join(["1"] * 100_000)}, path)


@pytest.mark.parametrize("make, expected", [
    (lambda p: os.mkfifo(p), "is a named pipe, not a regular file"),
    (lambda p: os.symlink("/dev/zero", p), "is a device, not a regular file"),
    (_deep_json, "cannot be graded: its JSON is nested"),
    (_deep_code, "cannot be graded: its code is nested too deeply"),
], ids=["fifo", "symlink-to-dev-zero", "json-100000-deep", "expression-100000-terms"])
def test_fxcourse_check_gives_one_line_errors_for_inputs_that_are_too_much(tmp_path, make, expected):
    path = tmp_path / f"{A}.ipynb"
    make(path)
    r = subprocess.run([sys.executable, "-m", "autograder.cli", "check", str(path), "--course", str(ROOT)],
                       capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert r.returncode == 2, r.stdout + r.stderr
    assert expected in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_an_ungradable_submission_is_named_with_the_one_line_reason_and_the_batch_goes_on(course):
    folder = course / "submitted" / "deep" / A
    folder.mkdir(parents=True)
    _deep_json(folder / f"{A}.ipynb")
    try:
        r = fxcourse(course, "grade", A, "--student", "deep", "--student", "alice")
    finally:
        shutil.rmtree(course / "submitted" / "deep")
    assert r.returncode == 1, r.stdout + r.stderr
    line = next(l for l in r.stdout.splitlines() if "deep: NOT GRADED" in l)
    assert "cannot be graded: its JSON is nested" in line and "RecursionError" not in r.stdout
    assert _scores(r.stdout)["alice"] == "10 / 10"


def test_a_grading_that_takes_too_long_is_stopped_and_reported(course):
    env_before = os.environ.get("FXCOURSE_SUBMISSION_TIMEOUT")
    os.environ["FXCOURSE_SUBMISSION_TIMEOUT"] = "0.2"  # far less than any grading takes: it must be stopped
    try:
        r = fxcourse(course, "grade", A, "--student", "alice", "--regrade")
    finally:
        if env_before is None:
            del os.environ["FXCOURSE_SUBMISSION_TIMEOUT"]
        else:
            os.environ["FXCOURSE_SUBMISSION_TIMEOUT"] = env_before
    assert r.returncode == 1, r.stdout + r.stderr
    assert "alice: NOT GRADED" in r.stdout and "took longer than 0.2 s" in r.stdout, r.stdout


def test_a_hung_submission_costs_its_own_limit_once_whatever_else_runs(tmp_path, generated_course, monkeypatch,
                                                                       capsys):
    """One submission sleeps in every function, graded with two others on one grading thread (--jobs 1): it is
    stopped at its own limit, reported NOT GRADED naming the limit and graded once; the two others are graded."""
    from autograder.grader.classroom import runner as engine
    from autograder.grader.classroom.batch import ensure_assignment

    root = generated_course(tmp_path / "course", A, quiz_keys=True)
    release = root / "exercises" / A / f"{A}.ipynb"
    hung = {fn: f"def {fn}(*args, **kwargs):\n    import time\n    time.sleep(3600)\n" for fn in EX01_RIGHT}
    for student, answers in (("alice", {**EX01_RIGHT, **QUIZ}), ("hung", {**hung, **QUIZ}), ("zoe", EX01_RIGHT)):
        _fill(release, answers, root / "submitted" / student / A / f"{A}.ipynb")
    # Far less than the worker's own wall-clock limit (which alone stops a sleeping worker), far more than
    # grading ex01 takes.
    monkeypatch.setenv("FXCOURSE_SUBMISSION_TIMEOUT", "20")
    attempts: list[str] = []  # the student of each task the engine ran
    task = engine.grade_task
    monkeypatch.setattr(engine, "grade_task", lambda *a, **k: attempts.append(a[3]) or task(*a, **k))
    db = f"sqlite:///{root / 'gradebook.db'}"
    assert ensure_assignment(Course(root), A, db) is None
    code = engine.grade_class(Course(root), [(A, ["alice", "hung", "zoe"])], db, engine.LocalRunner(1))
    out = capsys.readouterr().out
    assert code == 1 and sorted(attempts) == ["alice", "hung", "zoe"], (attempts, out)
    assert "alice: graded" in out and "zoe: graded" in out, out
    why = next(l for l in out.splitlines() if "hung: NOT GRADED" in l)
    assert "took longer than 20 s" in why and "FXCOURSE_SUBMISSION_TIMEOUT" in why, why
