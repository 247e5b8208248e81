"""The one grading pipeline of a class: each submission restored, run in the jail, judged, and written once.

`fxcourse grade` hands every submission of the run, across its assignments, to a runner as one task,
`grade_task`, the longest assignments first:

- here (`LocalRunner`, `--jobs N`): N grading threads in this process. Each task's learner code runs in a
  jailed worker that the run's one fork server forks, and is judged in the judge process of its thread; the
  threads themselves only wait on them;
- on Dask (`--cluster`, autograder.grader.classroom.cluster): one task per submission on the cluster's workers.

Either way the task runs the course's own nbgrader preprocessors (`worker_steps` of its nbgrader configuration,
less the gradebook's steps) and returns one JSON text: the autograded notebooks and their scores. The coordinator
here is the one writer: it saves autograded/ as nbgrader does and writes each submission's grades in ONE
transaction (`Gradebook.write`, with nbgrader's late penalty as the course configures it), with a ledger row
of the digest of what was graded. A submission graded from the same files is up to date and skipped, unless
`regrade`. A submission that cannot be graded is reported for that student alone and recorded with no grades;
a Ctrl-C stops what runs and writes nothing more (every grade written is whole; a rerun does the rest).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from autograder.course.console import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, deferred_interrupt
from autograder.grader.classroom.grade_progress import AssignmentProgress, GradeProgress, print_summary
from autograder.grader.classroom.gradebook import Gradebook, GradebookError
from autograder.grader.ops.nbgrader import course_config
from autograder.course.notebook import NotebookError
from autograder.course.root import Course

__all__ = ["GRADEBOOK_STEPS", "worker_steps", "plain_settings", "grade_task", "Submission", "collect_submissions",
           "RunnerError", "LocalRunner", "Unit", "run_units", "grade_class"]


class RunnerError(Exception):
    """The runner cannot go on (a Dask scheduler unreachable or lost); the message says what to do."""


# ------------------------------------------------------------------------------------------ the task

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

    from autograder.course.notebook import parse_notebook

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
    """Run by a grading thread or a Dask worker: grade one submission, return JSON text (never raises for a bad
    submission).

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
        if secret is not None:  # the coordinator's (every task of a run has the same): it wins over a worker's own
            os.environ["FXCOURSE_SECRET"] = secret  # secret.course_secret reads it before any course's file
        for name, data in sources.items():
            (folder / f"{name}.ipynb").write_bytes(data)
        if steps is None or settings is None:
            from traitlets.config.loader import PyFileConfigLoader

            from autograder.grader.ops.nbgrader import NBGRADER_CONFIG
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

    from autograder.course.notebook import parse_notebook

    nb = parse_notebook(source, "source")
    return {c.metadata.nbgrader["grade_id"]: [0.0, float(c.metadata.nbgrader["points"])]
            for c in nb.cells if utils.is_grade(c)}


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




# ------------------------------------------------------------------------------------------ the runners

class LocalRunner:
    """`--jobs N`: N grading threads in this process, sharing the user's fork server (autograder.grader.jail.sandbox
    forks each submission's jailed worker from it); each thread judges in a judge process of its own."""

    where = ""  # the lines say "N at a time" instead

    def __init__(self, jobs: int = 1) -> None:
        self.jobs = jobs
        self._pool: ThreadPoolExecutor | None = None

    def describe(self, n: int) -> str:
        at_once = min(self.jobs, n)
        return f", {at_once} at a time" if at_once > 1 else ""

    def open(self) -> None:
        self._pool = ThreadPoolExecutor(self.jobs, thread_name_prefix="fxcourse-grader")

    def submit(self, fn: Callable, *args, key: str, **kwargs):
        return self._pool.submit(fn, *args, **kwargs)

    def as_finished(self, futures: list, check: Callable[[], None]) -> Iterator:
        pending = set(futures)
        while pending:
            check()
            done, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
            yield from done

    @staticmethod
    def status(fut) -> str:
        if fut.cancelled():
            return "cancelled"
        return "error" if fut.exception() is not None else "finished"

    @staticmethod
    def only_others_fault(exc: BaseException) -> bool:
        return False

    @staticmethod
    def why_failed(exc: BaseException) -> str:
        return f"{type(exc).__name__}: {str(exc)[:300]}"

    def lost(self, written: int, total: int) -> str:
        return f"the grading threads stopped: {written} of {total} submission(s) graded and written"

    def cancel(self, futures: list) -> None:
        """Cancel what has not started; stop the workers of what runs (their tasks end at once, unwritten)."""
        from autograder.grader.jail.sandbox import stop_workers

        for fut in futures:
            fut.cancel()
        stop_workers()

    def close(self) -> None:
        from autograder.grader.jail.sandbox import STOPPING

        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        STOPPING.clear()


# ------------------------------------------------------------------------------------ the coordinator

@dataclass
class Unit:
    """One submission's task: its assignment, the instructor sources and where its lines go."""
    assignment: str
    sub: Submission
    sources: dict[str, bytes]
    progress: GradeProgress | AssignmentProgress


def _plan(course: Course, work: list[tuple[str, list[str]]], gb: Gradebook, regrade: bool,
          ) -> tuple[list[tuple[str, dict[str, bytes], list[Submission], int]], int]:
    """Per assignment of `work`: (name, sources, submissions to grade, how many are up to date); and the total.
    Up to date: graded from the same files (the gradebook's ledger), its autograded notebooks in this course."""
    plan, total = [], 0
    for name, students in work:
        notebooks = gb.notebooks(name)
        sources = {n: (course.solutions / name / f"{n}.ipynb").read_bytes() for n in notebooks}
        subs = collect_submissions(course, name, students, notebooks, sources)
        done = gb.digests(name)
        todo = [s for s in subs if regrade or done.get(s.student, ("",))[0] != s.digest
                or not all((course.root / "autograded" / s.student / name / f"{n}.ipynb").is_file() for n in s.files)]
        plan.append((name, sources, todo, len(subs) - len(todo)))
        total += len(todo)
    return plan, total


def grade_class(course: Course, work: list[tuple[str, list[str]]], db: str, runner, regrade: bool = False) -> int:
    """Grade each (assignment, students) of `work` on `runner` (LocalRunner, or cluster.DaskRunner), one task
    per submission not graded yet from the same files (`regrade`: all of them), the later assignments first; the
    grades written here into the gradebook `db`, each submission's once. Returns the exit code."""
    status, progress = EXIT_OK, None
    try:
        with deferred_interrupt() as check:
            runner.open()
            check()
            config = course_config(course)
            with Gradebook(db, config=config) as gb:
                plan, total = _plan(course, work, gb, regrade)
                up_to_date = sum(left for *_, left in plan)
                on = f" on {runner.where}" if runner.where else ""
                fresh = "; {} up to date (graded from these same files; --regrade grades them again)"
                if len(plan) == 1:
                    print(f"grading {plan[0][0]}: {total} submission(s){on}{runner.describe(total)}"
                          + (fresh.format(up_to_date) if up_to_date else ""), flush=True)
                else:
                    print(f"grading {len(plan)} assignments: {total} submission(s){on}{runner.describe(total)}"
                          + (fresh.format(up_to_date) if up_to_date else ""), flush=True)
                progress = GradeProgress(total)
                shares = {plan[0][0]: progress} if len(plan) == 1 else {
                    name: AssignmentProgress(progress, name) for name, *_ in plan}
                units = [Unit(name, sub, sources, shares[name])
                         for name, sources, todo, _ in reversed(plan) for sub in todo]
                try:
                    run_units(course, units, runner, gb, check=check, config=config)
                finally:
                    progress.close()
                for name, *_ in plan:
                    print_summary(name, shares[name], db)
                status = EXIT_FAILED if progress.failed else EXIT_OK
    except (RunnerError, GradebookError) as exc:
        print(f"fxcourse: error: {exc}", file=sys.stderr, flush=True)
        return EXIT_FAILED
    except KeyboardInterrupt:
        done = f"{progress.done} of {progress.total} submission(s) graded; " if progress is not None else ""
        print(f"fxcourse: interrupted: {done}every grade written is whole, the others keep the grades they had "
              "(run the command again to grade what is left)", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED
    finally:
        runner.close()
    return status


def run_units(course: Course, units: list[Unit], runner, gradebook: Gradebook, *, task: Callable = None,
              check: Callable[[], None] = lambda: None, config=None) -> int:
    """Send one task per unit, write each result as it comes; returns how many were written.

    A task a Dask scheduler gives up (KilledWorker) may only have waited on a worker that another submission
    killed: each such submission is graded once more, alone, after the others, and reported NOT GRADED only when
    it stops a worker then too. So a submission that kills workers costs no one else a grade.
    Raises RunnerError when the runner is lost (what was written stays; a rerun grades the rest).
    `check` is called between results (KeyboardInterrupt from it, for a Ctrl-C: `deferred_interrupt`)."""
    task = task or grade_task
    course_steps = {} if config is None else {"steps": worker_steps(config), "settings": plain_settings(config)}
    if task is grade_task:   # the course's secret: each task's course root keeps it, the same on every worker
        from autograder.grader.engine.secret import course_secret
        course_steps["secret"] = course_secret(course).decode()
    written = 0

    def submit(unit: Unit):
        sub = unit.sub
        return runner.submit(task, unit.assignment, unit.sources, sub.files, sub.student, **course_steps,
                             key=f"grade-{unit.assignment}-{sub.student}-{sub.digest[:12]}-{os.urandom(4).hex()}")

    def finish(fut, unit: Unit, t0: float, alone: bool) -> bool:
        """Report and write one finished task; False when it must be graded again alone."""
        nonlocal written
        sub, progress = unit.sub, unit.progress
        state = runner.status(fut)
        if state == "error":
            exc = fut.exception()
            if runner.only_others_fault(exc) and not alone:
                return False
            why = runner.why_failed(exc)
            progress.report(sub.student, False, time.monotonic() - t0,
                            why.replace("(KilledWorker:", "(also when graded alone; KilledWorker:") if alone else why)
            return True
        if state != "finished":  # cancelled: the scheduler went away (or forgot the task)
            raise RunnerError(runner.lost(written, len(units)))
        try:
            result = json.loads(fut.result())
        except Exception as exc:
            progress.report(sub.student, False, time.monotonic() - t0, f"{type(exc).__name__}: {exc}")
            return True
        if not result.get("ok"):
            try:
                gradebook.record_ungraded(unit.assignment, sub.student, sub.timestamp)
            except (GradebookError, ValueError):
                pass   # reported as not graded below either way
            progress.report(sub.student, False, result.get("seconds", 0.0), result.get("error", "?"))
            return True
        try:
            _save_autograded(course, unit.assignment, sub, result["notebooks"])
            gradebook.write(unit.assignment, sub.student, result["notebooks"], sub.digest, sub.timestamp)
        except (OSError, GradebookError, ValueError) as exc:  # nothing of it was written: say so, go on
            progress.report(sub.student, False, result.get("seconds", 0.0), f"{type(exc).__name__}: {exc}")
            return True
        written += 1
        progress.report(sub.student, True, result.get("seconds", 0.0))
        return True

    started: dict[Any, tuple[Unit, float]] = {submit(unit): (unit, time.monotonic()) for unit in units}
    pending = set(started)
    again: list[Unit] = []
    try:
        for fut in runner.as_finished(list(started), check):
            pending.discard(fut)
            unit, t0 = started[fut]
            if not finish(fut, unit, t0, alone=False):
                again.append(unit)
        for unit in again:  # one at a time: nothing else is on the cluster to be hurt
            fut, t0 = submit(unit), time.monotonic()
            pending.add(fut)
            for done in runner.as_finished([fut], check):
                pending.discard(done)
                finish(done, unit, t0, alone=True)
    finally:
        if pending:
            runner.cancel(list(pending))
    return written
