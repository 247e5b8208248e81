"""Grading a class on a Dask cluster: one task per submission, grades written once by the coordinator.

`fxcourse grade --cluster tcp://HOST:8786` sends the tasks to a running Dask scheduler; `--cluster local:N`
starts N local worker processes for the run. Who does what:

- the coordinator (the `fxcourse grade` process) reads the instructor source and each submission, and ships
  their bytes with each task: workers need the package and torch, no shared file system;
- a worker (`grade_task`) rebuilds the submission on the source and grades it through the course's hardened
  nbgrader steps (RestoreFromSource, HardenedExecute: learner code runs only in the jailed subprocess, judged
  in the worker), and returns one JSON text: the autograded notebooks and their scores. Nothing a learner
  produced crosses as a pickle: the worker reads the jail's evidence with `weights_only=True`, and the
  coordinator only parses JSON;
- the coordinator writes each submission's grades in ONE transaction through nbgrader's Gradebook models
  (`autograder.grader.gradebook.Gradebook.write`, with nbgrader's late penalty as the course configures it),
  together with a ledger row (table `fxcourse_graded`: the
  digest of what was graded and how many times grades were written). A task Dask retried after a lost worker
  still has one result, so it is written once; a rerun skips what the ledger shows graded from the same
  bytes, so a stopped run finishes with only what is left.

Faults: a worker that dies mid-task has its task run again elsewhere by the scheduler; a task the scheduler
gives up after `distributed.scheduler.allowed-failures` tries (KilledWorker: it may only have waited on a worker
another submission killed) is graded once more, alone, after the others, and reported "not graded" only when it
stops a worker then too; a lost scheduler stops the run with a message; Ctrl-C cancels
what is left (every written submission is whole). The coordinator never lets a Ctrl-C raise inside Dask's own
code: a KeyboardInterrupt there can leave one of the client's locks held, and the next call into the client
(cancelling what is left) then waits for ever. The first Ctrl-C is noted (`deferred_interrupt`) and raised
where the coordinator next looks, between two results; a second one interrupts at once.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from autograder.grader.console import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, deferred_interrupt
from autograder.grader.grade_progress import GradeProgress, print_summary
from autograder.grader.gradebook import Gradebook, GradebookError
from autograder.grader.nbgrader import course_config
from autograder.grader.notebook import NotebookError
from autograder.grader.root import Course

__all__ = ["ClusterError", "Submission", "parse_cluster", "GRADEBOOK_STEPS", "worker_steps", "plain_settings", "grade_task", "collect_submissions", "grade_on_cluster",
           "open_cluster", "grade_class", "as_finished"]

LOCAL_ALLOWED_FAILURES = 2  # local:N: a submission may stop a worker twice; the third time it is given up


class ClusterError(Exception):
    """The cluster cannot be used (bad address, scheduler unreachable or lost); the message says what to do."""


# ------------------------------------------------------------------------------------------ arguments

_LOCAL = re.compile(r"local:(\d+)")
_ADDRESS = re.compile(r"(tcp|tls)://[^\s/:]+:\d{1,5}")


def parse_cluster(text: str) -> str:
    """`local:N` (N >= 1) or `tcp://HOST:PORT` (or tls://); a ValueError saying what was expected otherwise."""
    m = _LOCAL.fullmatch(text)
    if m and int(m.group(1)) >= 1:
        return text
    if _ADDRESS.fullmatch(text):
        return text
    raise ValueError(f"expected tcp://HOST:PORT (a running Dask scheduler) or local:N (N local worker "
                     f"processes, N >= 1), got {text!r}")


# ------------------------------------------------------------------------------------- the worker side

# nbgrader's steps that read or write the gradebook, which a worker has not: the coordinator's write
# (Gradebook.write) saves the grades and applies the late penalty; RestoreFromSource already took the kernelspec and
# every cell but the answers from the source (what OverwriteKernelspec and OverwriteCells would do).
GRADEBOOK_STEPS = ("OverwriteKernelspec", "OverwriteCells", "SaveAutoGrades", "AssignLatePenalties")


def worker_steps(config) -> list[str]:
    """The course's sanitize and autograde preprocessors (`Autograde.sanitize_preprocessors` then
    `Autograde.autograde_preprocessors` of its nbgrader configuration), in order, as `module:name`, less the
    gradebook's steps: what a worker runs on each notebook."""
    steps = []
    for step in [*config.Autograde.sanitize_preprocessors, *config.Autograde.autograde_preprocessors]:
        module, _, name = (step.rpartition(".") if isinstance(step, str)
                           else (step.__module__, ".", step.__qualname__))
        if name not in GRADEBOOK_STEPS:
            steps.append(f"{module}:{name}")
    return steps


def plain_settings(config) -> dict:
    """The configuration's plain values (numbers, strings, lists of them) by section: what a worker needs of the
    course's settings (limits, timeouts), as JSON can carry it; classes and the pipelines themselves left out."""
    def plain(value):
        if value is None or isinstance(value, (bool, int, float, str)):
            return True
        return isinstance(value, (list, tuple)) and all(plain(v) for v in value) or (
            isinstance(value, dict) and all(isinstance(k, str) and plain(v) for k, v in value.items()))
    return {section: {k: v for k, v in values.items() if plain(v)}
            for section, values in config.items() if isinstance(values, dict) and section[:1].isupper()}


def _grade_one_notebook(config, steps: list[str], assignment: str, name: str, student: str,
                        data: bytes) -> dict[str, Any]:
    """The course's autograde steps on one notebook, as nbgrader runs them, without a gradebook."""
    import importlib

    import nbformat
    from nbgrader import utils

    from autograder.grader.notebook import parse_notebook

    nb = parse_notebook(data, f"submitted/{student}/{assignment}/{name}.ipynb")
    resources = {"nbgrader": {"assignment": assignment, "notebook": name, "student": student}}
    for step in steps:
        module, _, attr = step.partition(":")
        nb, resources = getattr(importlib.import_module(module), attr)(config=config)(nb, resources)
    grades, comments = {}, {}
    for cell in nb.cells:
        if utils.is_grade(cell):
            auto, most = utils.determine_grade(cell)
            grades[cell.metadata.nbgrader["grade_id"]] = [auto, most]
        if utils.is_solution(cell) or utils.is_task(cell):
            unchanged = cell.metadata.nbgrader.get("checksum") == utils.compute_checksum(cell)
            comments[cell.metadata.nbgrader["grade_id"]] = "No response." \
                if unchanged and not utils.is_task(cell) else None
    return {"notebook": nbformat.writes(nb), "grades": grades, "comments": comments,
            "notes": list(nb.metadata.get("fxcourse", {}).get("notes", []))}


def grade_task(assignment: str, sources: dict[str, bytes], files: dict[str, bytes], student: str,
               steps: list[str] | None = None, settings: dict | None = None, secret: str | None = None) -> str:
    """Run on a Dask worker: grade one submission, return JSON text (never raises for a bad submission).

    `sources`: notebook name -> the instructor source's bytes; `files`: notebook name -> the submission's
    bytes (a notebook the student did not hand in is missing, and scores zero, as nbgrader does); `steps` and
    `settings`: the course's (worker_steps, plain_settings of its configuration; None: the package's own);
    `secret`: the course's secret, which the task's course root keeps, so that every worker draws the hidden
    cases the coordinator's course does ("": none, as the coordinator was told by FXCOURSE_SECRET; None: the
    worker's own)."""
    from traitlets.config import Config

    start = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="fxcourse-task-"))
    try:
        folder = root / "solutions" / assignment
        folder.mkdir(parents=True)
        if secret:
            from autograder.grader.secret import SECRET_FILE
            os.environ.pop("FXCOURSE_SECRET", None)
            fd = os.open(root / SECRET_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secret + "\n")
        elif secret == "":
            os.environ["FXCOURSE_SECRET"] = ""
        for name, data in sources.items():
            (folder / f"{name}.ipynb").write_bytes(data)
        if steps is None or settings is None:
            from traitlets.config.loader import PyFileConfigLoader

            from autograder.grader.nbgrader import NBGRADER_CONFIG
            package = PyFileConfigLoader(NBGRADER_CONFIG.name, str(NBGRADER_CONFIG.parent)).load_config()
            steps = worker_steps(package) if steps is None else steps
            settings = plain_settings(package) if settings is None else settings
        config = Config(settings)
        config.CourseDirectory.root = str(root)
        config.CourseDirectory.source_directory = "solutions"
        config.CourseDirectory.course_id = "fxcourse"
        notebooks = {}
        for name, data in sources.items():
            if name in files:
                notebooks[name] = _grade_one_notebook(config, steps, assignment, name, student, files[name])
            else:
                notebooks[name] = {"notebook": None, "grades": _zeros(data), "comments": {}, "notes": [
                    f"no {name}.ipynb was handed in: it scores zero"]}
        result = {"ok": True, "notebooks": notebooks}
    except NotebookError as exc:  # the course's own one-line reason (a broken notebook, a grading too long)
        result = {"ok": False, "error": str(exc)[:500]}
    except Exception as exc:  # the submission cannot be graded: say why, the batch goes on
        result = {"ok": False, "error": f"{type(exc).__name__}: {str(exc)[:400]}"}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    result.update(seconds=time.monotonic() - start, host=socket.gethostname(), pid=os.getpid())
    return json.dumps(result)


def _zeros(source: bytes) -> dict[str, list]:
    from nbgrader import utils

    from autograder.grader.notebook import parse_notebook

    nb = parse_notebook(source, "source")
    return {c.metadata.nbgrader["grade_id"]: [0.0, float(c.metadata.nbgrader["points"])]
            for c in nb.cells if utils.is_grade(c)}


# --------------------------------------------------------------------------------------- the gradebook

# ------------------------------------------------------------------------------------- the submissions

@dataclass
class Submission:
    student: str
    folder: Path
    files: dict[str, bytes]
    digest: str
    timestamp: str | None = None


def collect_submissions(course: Course, assignment: str, students: list[str], notebooks: list[str],
                        sources: dict[str, bytes]) -> list[Submission]:
    """Read every submission's notebooks (the ones the gradebook knows) and their digest: what is graded."""
    base = hashlib.sha256()
    for name in sorted(sources):
        base.update(name.encode() + b"\0" + hashlib.sha256(sources[name]).digest())
    out = []
    for student in students:
        folder = course.root / "submitted" / student / assignment
        files = {n: (folder / f"{n}.ipynb").read_bytes() for n in notebooks if (folder / f"{n}.ipynb").is_file()}
        h = base.copy()
        for name in sorted(files):
            h.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
        stamp = folder / "timestamp.txt"
        out.append(Submission(student, folder, files, h.hexdigest(),
                              stamp.read_text().strip() or None if stamp.is_file() else None))
    return out


def _save_autograded(course: Course, assignment: str, sub: Submission, notebooks: dict[str, dict]) -> None:
    """autograded/<student>/<assignment>/: the graded notebooks (written whole: temp file, then rename), the
    source's other files, the timestamp and the submission's secret, as nbgrader autograde leaves them (feedback
    and release-feedback read them)."""
    dest = course.root / "autograded" / sub.student / assignment
    dest.mkdir(parents=True, exist_ok=True)
    src = course.solutions / assignment
    for path in src.rglob("*"):
        if path.is_file() and path.suffix != ".ipynb" and ".ipynb_checkpoints" not in path.parts:
            target = dest / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    for kept in ("timestamp.txt", "submission_secret.txt"):  # the time, and the key feedback is released under
        if (sub.folder / kept).is_file():
            shutil.copy(sub.folder / kept, dest / kept)
    for name, got in notebooks.items():
        if got.get("notebook") is None:
            continue
        tmp = dest / f".{name}.ipynb.tmp"
        tmp.write_text(got["notebook"], encoding="utf-8")
        os.replace(tmp, dest / f"{name}.ipynb")


# ------------------------------------------------------------------------------------------ the cluster

def open_cluster(spec: str, *, timeout: float = 10.0):
    """(client, local cluster or None) for `local:N` or a scheduler address; ClusterError if unreachable."""
    import dask
    from distributed import Client, LocalCluster

    m = _LOCAL.fullmatch(spec)
    if m:
        with dask.config.set({"distributed.scheduler.allowed-failures": LOCAL_ALLOWED_FAILURES,
                              "distributed.worker.daemon": False}):
            cluster = LocalCluster(n_workers=int(m.group(1)), threads_per_worker=1, processes=True,
                                   host="127.0.0.1", scheduler_port=0, dashboard_address=None,
                                   silence_logs=50, memory_limit=0)
            return Client(cluster, timeout=timeout), cluster
    try:
        return Client(spec, timeout=timeout), None
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {spec} ({type(exc).__name__}: {exc}); start one "
                           "with `dask scheduler` (see docs/cluster.md) or use --cluster local:N") from None


def _why_failed(exc: BaseException, allowed: int | None) -> str:
    name = type(exc).__name__
    if name == "KilledWorker":
        tries = f"{allowed + 1} times" if allowed is not None else "repeatedly"
        return (f"its grading stopped a Dask worker {tries} (KilledWorker: the scheduler gave it up after "
                "distributed.scheduler.allowed-failures); look at this submission by hand")
    if isinstance(exc, ImportError):
        return f"{name}: {str(exc)[:200]} (every worker needs the fxcourse package and torch: docs/cluster.md)"
    return f"{name}: {str(exc)[:300]}"


def as_finished(futures: list, check: Callable[[], None], poll: float = 0.05):
    """Each of `futures` as it finishes (distributed's as_completed), with `check()` called before each one and
    between short waits; never waits inside Dask's code for more than a look at its queue.

    A finished task's result stays on its worker until it is read. When that worker dies first (another
    submission killed it), Dask computes the task again and the future is no longer finished ("lost", then
    "pending"): it is waited for again, not handed on as if it had ended."""
    from distributed import as_completed

    ac = as_completed(futures)
    while True:
        check()
        if ac.has_ready():
            for fut in ac.next_batch(block=False):
                check()
                if fut.status not in ("finished", "error", "cancelled"):
                    ac.add(fut)
                    continue
                yield fut
        elif ac.is_empty():
            return
        else:
            time.sleep(poll)


def grade_on_cluster(course: Course, assignment: str, subs: list[Submission], sources: dict[str, bytes], client,
                     gradebook: Gradebook, progress: GradeProgress, *, task: Callable = grade_task,
                     check: Callable[[], None] = lambda: None, config=None) -> int:
    """Send one task per submission, write each result as it comes; returns how many were written.

    A task the scheduler gives up (KilledWorker) may only have waited on a worker that another submission
    killed: each such submission is graded once more, alone on the cluster, after the others, and reported
    NOT GRADED only when it stops a worker then too. So a submission that kills workers costs no one else a grade.
    Raises ClusterError when the scheduler is lost (what was written stays; a rerun grades the rest).
    `check` is called between results (KeyboardInterrupt from it, for a Ctrl-C: `deferred_interrupt`)."""
    try:
        allowed = client.run_on_scheduler(
            lambda dask_scheduler: dask_scheduler.allowed_failures)
    except Exception:
        allowed = None

    course_steps = {} if config is None else {"steps": worker_steps(config), "settings": plain_settings(config)}
    if task is grade_task:   # the course's secret: each task's course root keeps it, the same on every worker
        from autograder.grader.secret import course_secret
        course_steps["secret"] = course_secret(course).decode()

    def submit(sub: Submission):
        return client.submit(task, assignment, sources, sub.files, sub.student, **course_steps, pure=False,
                             key=f"grade-{assignment}-{sub.student}-{sub.digest[:12]}-{os.urandom(4).hex()}")

    def finish(fut, sub: Submission, t0: float, alone: bool) -> bool:
        """Report and write one finished task; False when it must be graded again alone."""
        nonlocal written
        if fut.status == "error":
            exc = fut.exception()
            if type(exc).__name__ == "KilledWorker" and not alone:
                return False
            why = _why_failed(exc, allowed)
            progress.report(sub.student, False, time.monotonic() - t0,
                            why.replace("(KilledWorker:", "(also when graded alone; KilledWorker:") if alone else why)
            return True
        if fut.status != "finished":  # cancelled: the scheduler went away (or forgot the task)
            raise ClusterError(_lost(client, written, len(subs)))
        try:
            result = json.loads(fut.result())
        except Exception as exc:
            progress.report(sub.student, False, time.monotonic() - t0, f"{type(exc).__name__}: {exc}")
            return True
        if not result.get("ok"):
            try:
                gradebook.record_ungraded(assignment, sub.student, sub.timestamp)
            except (GradebookError, ValueError):
                pass   # reported as not graded below either way
            progress.report(sub.student, False, result.get("seconds", 0.0), result.get("error", "?"))
            return True
        try:
            _save_autograded(course, assignment, sub, result["notebooks"])
            gradebook.write(assignment, sub.student, result["notebooks"], sub.digest, sub.timestamp)
        except (OSError, GradebookError, ValueError) as exc:  # nothing of it was written: say so, go on
            progress.report(sub.student, False, result.get("seconds", 0.0), f"{type(exc).__name__}: {exc}")
            return True
        written += 1
        progress.report(sub.student, True, result.get("seconds", 0.0))
        return True

    written = 0
    started: dict[Any, tuple[Submission, float]] = {submit(sub): (sub, time.monotonic()) for sub in subs}
    pending = set(started)
    again: list[Submission] = []
    try:
        for fut in as_finished(list(started), check):
            pending.discard(fut)
            sub, t0 = started[fut]
            if not finish(fut, sub, t0, alone=False):
                again.append(sub)
        for sub in again:  # one at a time: nothing else is on the cluster to be hurt
            fut, t0 = submit(sub), time.monotonic()
            pending.add(fut)
            for done in as_finished([fut], check):
                pending.discard(done)
                finish(done, sub, t0, alone=True)
    finally:
        if pending:
            client.cancel(list(pending))
    return written


def _lost(client, written: int, total: int) -> str:
    address = getattr(client.scheduler, "address", "?")
    return (f"lost the Dask scheduler at {address}: {written} of {total} submission(s) graded and written; the "
            "others keep the grades they had. Start the scheduler again (or use --cluster local:N) and rerun the "
            "same command: it grades only what is left")


# ------------------------------------------------------------------------------------ the coordinator

def grade_class(course: Course, work: list[tuple[str, list[str]]], db: str, spec: str, regrade: bool = False) -> int:
    """`fxcourse grade --cluster`: each (assignment, students) of `work` on the cluster `spec`, one Dask task
    per submission not graded yet from the same files (`regrade`: all of them); the grades written here into
    the gradebook `db`, each submission's once. Returns the exit code."""
    import logging

    import distributed  # noqa: F401  (it sets up its loggers on import: quieten them after)

    for logger in [n for n in logging.root.manager.loggerDict if n.startswith("distributed")] + [
            "distributed", "tornado", "asyncio"]:
        logging.getLogger(logger).setLevel(logging.CRITICAL + 1)  # a lost scheduler is reported once, below
    local_run = spec.startswith("local:")
    where = f"{spec[6:]} local Dask worker(s)" if local_run else f"the Dask scheduler at {spec}"
    print(f"starting {where}" if local_run else f"connecting to {where}", flush=True)
    client = local = None
    status, progress, name = EXIT_OK, None, ""
    try:
        with deferred_interrupt() as check:
            client, local = open_cluster(spec)
            check()
            config = course_config(course)
            with Gradebook(db, config=config) as gb:
                for name, students in work:
                    notebooks = gb.notebooks(name)
                    sources = {n: (course.solutions / name / f"{n}.ipynb").read_bytes() for n in notebooks}
                    subs = collect_submissions(course, name, students, notebooks, sources)
                    done = gb.digests(name)
                    todo = [s for s in subs if regrade or done.get(s.student, ("",))[0] != s.digest]
                    left = len(subs) - len(todo)
                    print(f"grading {name}: {len(todo)} submission(s) on {where}" + (
                        f"; {left} up to date (graded from these same files; --regrade grades them again)"
                        if left else ""), flush=True)
                    progress = GradeProgress(len(todo))
                    try:
                        grade_on_cluster(course, name, todo, sources, client, gb, progress, check=check,
                                         config=config)
                    finally:
                        progress.close()
                    if progress.failed:
                        status = EXIT_FAILED
                    print_summary(name, progress, db)
                    progress = None
    except (ClusterError, GradebookError) as exc:
        print(f"fxcourse: error: {exc}", file=sys.stderr, flush=True)
        return EXIT_FAILED
    except KeyboardInterrupt:
        done = f"{progress.done} submission(s) of {name} graded; " if progress is not None else ""
        print(f"fxcourse: interrupted: {done}every grade written is whole, the others keep the grades they had "
              "(run the command again to grade what is left)", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED
    finally:
        for closing, seconds in ((client, 5), (local, 20)):
            if closing is not None:
                try:
                    closing.close(timeout=seconds)
                except Exception:
                    pass
    return status
