"""Test-wide set-up: Jupyter, IPython, matplotlib and torch write into a temporary home, never the user's (one
home per process: each pytest-xdist worker has its own).

Under pytest-xdist (`make test` runs `pytest -n 3 --dist loadgroup`), the modules named in XDIST_GROUPS run
whole on one worker, one test after the other: their module fixtures (a JupyterHub with its Unix users, a
PostgreSQL server, a JupyterLab and chromium, the site build, the benchmarks' smoke run, a dask cluster, a
graded class) start once per run, never twice at a time. What several modules need from one expensive run (the
site build, which executes every lesson) is made once per test run, whichever worker asks first, in a folder
the workers share (`shared_folder`).
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

import autograder  # noqa: F401  (before nbformat: it spares each test process jsonschema's optional grammar)
import nbformat
import pytest

import _timing
import _xdist
from autograder.coursedata.exercises import EXERCISES
from autograder.checks import keyring

keyring.package()   # the instructor's side (instructor/ beside this checkout): tests import fxcourse_instructor.*

ROOT = Path(__file__).resolve().parent.parent
# ex01's graded functions answered correctly, written the way a learner would (not copied from solutions/)
EX01_RIGHT = {
    "node_summary": "def node_summary(gm):\n    return [(n.op, n.name) for n in gm.graph.nodes]\n",
    "count_nodes": "def count_nodes(gm, op=None):\n    return sum(1 for n in gm.graph.nodes if op is None or n.op == op)\n",
    "outputs_match": (
        "def outputs_match(model, gm, *inputs, atol=0.0):\n"
        "    with torch.no_grad():\n"
        "        a, b = model(*inputs), gm(*inputs)\n"
        "    if a.shape != b.shape:\n"
        "        return False\n"
        "    return torch.equal(a, b) if atol == 0 else torch.allclose(a, b, rtol=0, atol=atol)\n"),
}
_HOME = Path(tempfile.mkdtemp(prefix="fxcourse-test-home-"))


def pytest_configure(config: pytest.Config) -> None:
    for var, sub in (("HOME", ""), ("JUPYTER_CONFIG_DIR", ".jupyter"), ("JUPYTER_DATA_DIR", ".local/share/jupyter"),
                     ("JUPYTER_RUNTIME_DIR", ".local/share/jupyter/runtime"), ("IPYTHONDIR", ".ipython"),
                     ("MPLCONFIGDIR", ".mpl"), ("TORCHINDUCTOR_CACHE_DIR", ".inductor"),
                     ("TRITON_CACHE_DIR", ".triton"), ("XDG_CACHE_HOME", ".cache")):
        path = _HOME / sub
        path.mkdir(parents=True, exist_ok=True)
        os.environ[var] = str(path)
    os.environ["MPLBACKEND"] = "Agg"
    os.environ.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning")
    # The user's fork server waits for the next command once its last one has gone; in the tests it ends with its
    # last one, so that nothing started by a test outlives the run (test_forkserver.py turns keeping on where it
    # tests it, and stops what it started).
    os.environ["FXCOURSE_FORKSERVER_KEEP"] = "0"
    # Hidden cases are drawn from a course secret (autograder.grader.engine.secret): the tests pin one, so that every
    # checkout grades them alike and none writes a .fxcourse-secret into the repository (test_integrity.py sets
    # others where it needs them).
    os.environ["FXCOURSE_SECRET"] = "the course secret of fxcourse's own tests"
    # The kernel spec python3 must be the interpreter running the tests.
    from jupyter_client.kernelspec import KernelSpecManager  # noqa: F401
    if os.environ.get("FXCOURSE_REQUIRE_JAIL") and not hasattr(config, "workerinput"):
        # CI: the hardened tests skip where the jail is missing; there they must fail, naming the piece
        from autograder.grader.jail import sandbox

        missing = sandbox.jail_support()
        if missing:
            raise pytest.UsageError("FXCOURSE_REQUIRE_JAIL is set but the jail lacks: "
                                    + "; ".join(f"{piece} ({why})" for piece, why in missing.items()))
    _timing.pytest_configure(config)  # build/test-times.txt and the slowest files in the summary


# module (or module::test) -> its xdist group: the tests of one group run on one worker, one after the other. The
# site's build also gives test_course its executed lessons, so the lesson test runs where the build is.
XDIST_GROUPS = {
    "test_site.py": "site",
    "test_course.py::test_lesson_runs_top_to_bottom_in_a_fresh_kernel": "site",
    "test_hub.py": "hub",
    # Their Unix users need a way through folders closed to others (/root: o+x while they run), and the private-home
    # test checks that homes stay closed: one group, one after the other.
    "test_private_home.py": "hub",
    "test_collect_hardened.py": "hub",
    "test_nonroot.py": "hub",
    "test_browser.py": "browser",
    # The user's kept fork server is one per uid and code: its tests start, kill, squat or retire it, one after another.
    "test_forkserver.py": "forkserver",
    "test_postgres.py": "postgres",
    "test_report.py": "report",  # one known-truth class, made once, read by every test
    "test_benchmarks_smoke.py": "benchmarks",
    "test_cluster.py": "cluster",
    "test_instructor.py": "instructor",  # its tests share one graded class, which they regrade in turn
    # both read one module fixture, a class graded four ways (a local Dask cluster one of them): made once, on
    # one worker (on two, each worker grades the class four ways)
    "test_one_writer.py": "one_writer",
    # An exercise's own tests share what one process makes once: its check library's cases and the reference runs
    # its checks keep, the solution's namespace (module fixtures), each mutant's run that its near-miss test reads
    # again (tests/near_miss.py). On two workers each made all of it.
    **{f"test_{ex.id}.py": ex.id for ex in EXERCISES},
    # test_clauses' cases of an exercise go where its tests are: they call the same checks, whose reference runs
    # (dynamo's graphs, pt2e's models) that process has kept already
    **{f"test_clauses.py::{test}[{ex.id}": ex.id for ex in EXERCISES
       for test in ("test_every_clause_has_a_case", "test_a_case_of_the_clause_fails_an_answer_that_ignores_it")},
    # both read one module fixture, two fresh interpreters' imports: made once, on one worker
    "test_layers.py::test_importing_the_check_library_leaves_out": "layers",
    # Each solution notebook runs once in a fresh kernel (conftest solution_run); the tests that read that run go
    # where it is made, so that none waits for a run under way on the other worker.
    "test_course.py::test_solution_notebook_runs_in_a_fresh_kernel_with_every_test_cell_passing": "solutions",
    **{f"test_{ex.id}.py::{test}": "solutions" for ex in EXERCISES
       for test in ("test_solution_passes_visible_and_hidden_cases", "test_every_test_cell_of_the_solution_passes")},
    # One kept check server per user and code: its tests and the benchmarks' smoke run (whose grading section
    # keeps one and stops it) never run side by side, or one would stop the other's server.
    "test_forkserver.py::test_a_learner_s_check_keeps_its_server_and_the_next_check_is_forked_from_it": "benchmarks",
    "test_forkserver.py::test_a_kept_server_ends_by_itself_once_idle_and_removes_its_home": "benchmarks",
    "test_forkserver.py::test_without_keeping_a_check_leaves_no_server_behind": "benchmarks",
}


# The units sent first, longest first (about a minute or more each on two busy cores, by build/test-times.txt):
# a long one that starts last runs alone at the end while the other worker idles.
XDIST_FIRST = ("hub", "site", "cluster", "benchmarks", "solutions", "browser", "instructor", "postgres",
               "one_writer",
               "test_jail.py::test_a_hostile_submission_changes_nothing_for_the_next_or_the_one_beside_it",
               "test_jail.py::test_a_checkout_under_tmp_keeps_its_packages_and_still_covers_tmp",
               "test_automutants.py::test_every_automatic_mutant_is_caught_or_listed_as_equivalent",
               "test_course.py::test_instructor_source_scores_full_marks_and_release_scores_zero",
               "test_adversarial.py", "test_jail.py")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    return _xdist.scheduler(config, log, XDIST_GROUPS, XDIST_FIRST)  # --dist loadgroup by XDIST_GROUPS


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_HOME, ignore_errors=True)


def assignments() -> list[str]:
    """Every graded exercise of the course, in course order (autograder.coursedata.exercises; test_course checks
    that solutions/ holds exactly these)."""
    return [ex.id for ex in EXERCISES]


def lessons() -> list[Path]:
    return sorted((ROOT / "lessons").glob("*.ipynb"))


@pytest.fixture(scope="module")
def one_thread():
    """One intra-op thread for a module whose cases run hundreds of tiny ops: on a busy machine a second
    thread only adds waiting."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


def shared_folder(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A folder of this test run that every xdist worker sees (the run's temporary base; without xdist, the
    process's own), made on first use."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the workers' basetemps are popen-gwN inside the run's own folder
    folder = base / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextlib.contextmanager
def locked(path: Path):
    """Hold an exclusive lock on `path` (made if missing): one process at a time, across xdist workers."""
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _content_key(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


class SiteBuild:
    """One run of docs/site/build.py: the site in `out`, its staged sources (the lessons as executed by this
    build) in `src`, and what the build printed."""

    def __init__(self, out: Path, returncode: int, stdout: str, stderr: str) -> None:
        self.out, self.src = out, out.with_name(out.name + "-src")
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr

    def executed_lesson(self, lesson: Path) -> nbformat.NotebookNode:
        """The lesson as this build ran it top to bottom in a fresh kernel; fails naming why when it did not."""
        path = self.src / "lessons" / lesson.name
        if not path.is_file():
            said = [line for line in self.stdout.splitlines() if lesson.name in line]
            pytest.fail(f"{lesson.name} did not run to the end in a fresh kernel (docs/site/build.py): "
                        + ("\n".join(said) or self.stdout[-3000:] + self.stderr[-3000:]), pytrace=False)
        return nbformat.read(str(path), as_version=4)


@pytest.fixture(scope="session")
def site_build(tmp_path_factory) -> SiteBuild:
    """`make site` (docs/site/build.py) into a temporary folder, once per test run for all workers: it executes
    every lesson in a fresh kernel, which test_course's lesson test reads instead of running them again. Keyed by
    the content of the lessons, the releases and the build's own files; never kept from an earlier run."""
    build = ROOT / "docs" / "site" / "build.py"
    key = _content_key([build, ROOT / "docs" / "site" / "conf.py", *lessons(),
                        *sorted((ROOT / "exercises").glob("*/*.ipynb"))])
    folder = shared_folder(tmp_path_factory, f"site-{key}")
    out = folder / "html"

    # Inductor's first compile in a process (lessons 08 and 11, each with a fresh compile cache of its own) builds
    # and loads six probe programs to learn which vector instructions the compiler can target, about 10 s of CPU
    # per lesson. Here the kernels take the CPU's own flags for the answer (TORCHINDUCTOR_VEC_ISA_OK=1); the
    # lessons' compiles themselves run in full, and `make site` keeps the probe, as a learner's kernel does.
    env = {**os.environ, "TORCHINDUCTOR_VEC_ISA_OK": "1"}

    def build_site() -> dict:
        r = subprocess.run([sys.executable, str(build), "--out", str(out)], capture_output=True, text=True, env=env)
        return {"returncode": r.returncode, "stdout": r.stdout, "stderr": r.stderr}

    done = _once(folder, build_site)
    return SiteBuild(out, done["returncode"], done["stdout"], done["stderr"])


def _once(folder: Path, make: Callable[[], dict]) -> dict:
    """What `make()` returned (plain data, kept in `folder`), made by whichever process of the test run asked
    first; the others wait for it under the folder's lock."""
    record = folder / "record.json"
    with locked(folder / ".lock"):
        if not record.is_file():
            record.write_text(json.dumps(make()))
        return json.loads(record.read_text())


def _generated_course(tmp_path_factory: pytest.TempPathFactory, root: Path, assignment: str, *,
                      quiz_keys: bool = False) -> Path:
    """`root` as a course with solutions/<assignment> copied and `fxcourse generate <assignment>` run there
    (release and gradebook). The generation runs once per test run for every worker and module that asks for
    the same assignment (keyed by its solution's content, and by whether solutions/quizzes.json comes along);
    each caller gets its own copy of the result. Fails naming what `generate` printed when it fails."""
    sources = sorted((ROOT / "solutions" / assignment).rglob("*"))
    keys = ROOT / "solutions" / "quizzes.json"
    key = _content_key([p for p in [*sources, *([keys] if quiz_keys and keys.exists() else [])] if p.is_file()])
    folder = shared_folder(tmp_path_factory, f"generated-{assignment}-{key}")
    template = folder / "course"

    def generate() -> dict:
        shutil.rmtree(template, ignore_errors=True)
        shutil.copytree(ROOT / "solutions" / assignment, template / "solutions" / assignment)
        if quiz_keys and keys.exists():
            shutil.copy(keys, template / "solutions" / "quizzes.json")
        r = subprocess.run([sys.executable, "-m", "autograder.cli", "generate", assignment, "--course",
                            str(template)], capture_output=True, text=True, cwd=template, timeout=900)
        return {"returncode": r.returncode, "out": r.stdout + r.stderr}

    done = _once(folder, generate)
    assert done["returncode"] == 0, done["out"]
    shutil.copytree(template, root, dirs_exist_ok=True)
    return root


@pytest.fixture(scope="session")
def generated_course(tmp_path_factory):
    """`generated_course(root, assignment, quiz_keys=False)`: see _generated_course."""
    return lambda root, assignment, quiz_keys=False: _generated_course(tmp_path_factory, Path(root), assignment,
                                                                       quiz_keys=quiz_keys)


def _solution_run(tmp_path_factory: pytest.TempPathFactory, assignment: str) -> nbformat.NotebookNode:
    """solutions/<assignment> run top to bottom in a fresh kernel (autograder.grader.jail.headless.execute), once per
    test run for every worker and test that asks (keyed by the notebook's content); the executed notebook, or a
    failure naming what the run raised."""
    from autograder.grader.jail.headless import execute

    path = ROOT / "solutions" / assignment / f"{assignment}.ipynb"
    folder = shared_folder(tmp_path_factory, f"solution-run-{assignment}-{_content_key([path])}")
    executed = folder / "executed.ipynb"

    def run() -> dict:
        try:
            nbformat.write(execute(path, timeout=600), str(executed))
            return {"ok": True}
        except Exception as exc:  # a cell error, a timeout, a kernel that died
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[-6000:]}

    done = _once(folder, run)
    if not done["ok"]:
        pytest.fail(f"solutions/{assignment} did not run top to bottom in a fresh kernel: {done['error']}",
                    pytrace=False)
    return nbformat.read(str(executed), as_version=4)


@pytest.fixture(scope="session")
def solution_run(tmp_path_factory):
    """`solution_run(assignment)`: the solution notebook as one fresh kernel ran it (see _solution_run); the
    course's kernel test and each exercise's test-cell test read the same run."""
    return lambda assignment: _solution_run(tmp_path_factory, assignment)


@pytest.fixture(scope="session", autouse=True)
def _one_fork_server_per_test_process():
    """The test processes join (or start) the user's fork server for this code at once, and the fxcourse commands
    their tests start join it too: its imports are paid once per test run, not once per command. It ends with its
    last command (FXCOURSE_FORKSERVER_KEEP=0, above). Tests of the server itself use one of their own."""
    from autograder.grader.jail import forkserver

    forkserver.prestart()
    yield
