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
  (`write_grades`), together with a ledger row (table `fxcourse_graded`: the digest of what was graded and
  how many times grades were written). A task Dask retried after a lost worker still has one result, so it is
  written once; a rerun skips what the ledger shows graded from the same bytes, so a stopped run finishes
  with only what is left.

Faults: a worker that dies mid-task has its task run again elsewhere by the scheduler; a submission whose
grading stops workers again and again is given up by the scheduler after `distributed.scheduler.allowed-failures`
tries (KilledWorker) and reported "not graded"; a lost scheduler stops the run with a message; Ctrl-C cancels
what is left (every written submission is whole).
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
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from autograder.grader.root import Course

__all__ = ["ClusterError", "GradebookError", "Submission", "GradeProgress", "parse_cluster", "parse_db_url", "gradebook_url",
           "grade_task", "write_grades", "graded_digests", "collect_submissions", "grade_on_cluster",
           "open_cluster", "LEDGER_TABLE"]

LEDGER_TABLE = "fxcourse_graded"
LOCAL_ALLOWED_FAILURES = 2  # local:N: a submission may stop a worker twice; the third time it is given up


class ClusterError(Exception):
    """The cluster cannot be used (bad address, scheduler unreachable or lost); the message says what to do."""


class GradebookError(Exception):
    """The gradebook cannot be opened or keeps refusing a write; the message names it and what to do."""


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


def parse_db_url(text: str) -> str:
    """A gradebook database URL: sqlite:///PATH or postgresql://USER@HOST:PORT/NAME (SQLAlchemy's form), with
    postgresql:// pinned to the psycopg driver (the `postgres` extra installs it; SQLAlchemy's default driver
    for a bare postgresql:// differs between its versions)."""
    if re.fullmatch(r"sqlite:///.+", text) or re.fullmatch(r"postgresql(\+\w+)?://.+", text):
        return "postgresql+psycopg://" + text[len("postgresql://"):] if text.startswith("postgresql://") else text
    raise ValueError(f"expected sqlite:///PATH or postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE, got {text!r}")


def gradebook_url(course: Course, explicit: str | None = None) -> str:
    """The gradebook: --db, else nbgrader's CourseDirectory.db_url from the course's configuration (the
    course's own nbgrader_config.py over the package's), else sqlite:///<root>/gradebook.db."""
    if explicit:
        return parse_db_url(explicit)
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    config = Config()
    for folder in (Path(__file__).resolve().parents[1], course.root):  # later files override, as in nbgrader
        if (folder / "nbgrader_config.py").is_file():
            config.merge(PyFileConfigLoader("nbgrader_config.py", path=str(folder)).load_config())
    url = config.get("CourseDirectory", {}).get("db_url")
    return parse_db_url(url) if url else f"sqlite:///{course.root / 'gradebook.db'}"


def _redact(url: str) -> str:
    return re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", url)


# ------------------------------------------------------------------------------------- the worker side

def _grade_one_notebook(config, assignment: str, name: str, student: str, data: bytes) -> dict[str, Any]:
    """The course's autograde steps on one notebook, as nbgrader runs them, without a gradebook."""
    import nbformat
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader import utils
    from nbgrader.preprocessors import CheckCellMetadata, ClearOutput, LimitOutput

    from autograder.grader.notebook import parse_notebook
    from autograder.grader.preprocessors import HardenedExecute, RestoreFromSource

    nb = parse_notebook(data, f"submitted/{student}/{assignment}/{name}.ipynb")
    resources = {"nbgrader": {"assignment": assignment, "notebook": name, "student": student}}
    # Sanitize, then autograde: the order of autograder/nbgrader_config.py (OverwriteKernelspec and
    # OverwriteCells read the gradebook: RestoreFromSource already took everything but the answers from the
    # source); SaveAutoGrades is the coordinator's write.
    for pp in (ClearOutput(config=config), RestoreFromSource(config=config), CheckCellMetadata(config=config),
               HardenedExecute(config=config), ClearMetadataPreprocessor(config=config), LimitOutput(config=config),
               CheckCellMetadata(config=config)):
        nb, resources = pp(nb, resources)
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


def grade_task(assignment: str, sources: dict[str, bytes], files: dict[str, bytes], student: str) -> str:
    """Run on a Dask worker: grade one submission, return JSON text (never raises for a bad submission).

    `sources`: notebook name -> the instructor source's bytes; `files`: notebook name -> the submission's
    bytes (a notebook the student did not hand in is missing, and scores zero, as nbgrader does)."""
    from traitlets.config import Config

    start = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="fxcourse-task-"))
    try:
        folder = root / "solutions" / assignment
        folder.mkdir(parents=True)
        for name, data in sources.items():
            (folder / f"{name}.ipynb").write_bytes(data)
        config = Config()
        config.CourseDirectory.root = str(root)
        config.CourseDirectory.source_directory = "solutions"
        config.CourseDirectory.course_id = "fxcourse"
        notebooks = {}
        for name, data in sources.items():
            if name in files:
                notebooks[name] = _grade_one_notebook(config, assignment, name, student, files[name])
            else:
                notebooks[name] = {"notebook": None, "grades": _zeros(data), "comments": {}, "notes": [
                    f"no {name}.ipynb was handed in: it scores zero"]}
        result = {"ok": True, "notebooks": notebooks}
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

def _ledger(engine):
    from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table

    table = Table(LEDGER_TABLE, MetaData(), Column("assignment", String(128), primary_key=True),
                  Column("student", String(128), primary_key=True), Column("digest", String(64), nullable=False),
                  Column("writes", Integer, nullable=False), Column("graded_at", DateTime, nullable=False))
    try:
        table.create(engine, checkfirst=True)
    except Exception:  # another grader created it at the same moment
        if LEDGER_TABLE not in __import__("sqlalchemy").inspect(engine).get_table_names():
            raise
    return table


def _retrying(fn: Callable[[], Any], what: str, tries: int = 12) -> Any:
    """Run one transaction; again, after a pause, when another grader held a lock or won a race."""
    from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

    for attempt in range(tries):
        try:
            return fn()
        except (OperationalError, IntegrityError, DBAPIError) as exc:
            if attempt == tries - 1:
                raise GradebookError(f"{what}: the gradebook refused {tries} times: "
                                     f"{str(exc).splitlines()[0][:200]}") from exc
            time.sleep(min(0.2 * (attempt + 1), 2.0))


class Gradebook:
    """nbgrader's Gradebook for one run, with the course's ledger beside it."""

    def __init__(self, url: str, course_id: str = "fxcourse") -> None:
        from nbgrader.api import Gradebook as NbGradebook

        self.url = url
        # A new gradebook asks `alembic` (from PATH) for its schema version: this interpreter's, also where its
        # bin/ is not on PATH.
        here = str(Path(sys.executable).parent)
        if here not in os.environ.get("PATH", "").split(os.pathsep):
            os.environ["PATH"] = here + os.pathsep + os.environ.get("PATH", os.defpath)
        try:
            self.gb = _retrying(lambda: NbGradebook(url, course_id), f"opening the gradebook {_redact(url)}")
        except ModuleNotFoundError as exc:
            raise GradebookError(f"cannot open the gradebook {_redact(url)}: its database driver {exc.name!r} is not "
                                 "installed (pip install 'fxcourse[postgres]')") from None
        self.ledger = _ledger(self.gb.engine)

    def close(self) -> None:
        self.gb.close()
        self.gb.engine.dispose()

    def __enter__(self) -> "Gradebook":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def has_assignment(self, assignment: str) -> bool:
        from nbgrader.api import MissingEntry

        try:
            return bool(self.gb.find_assignment(assignment).notebooks)
        except MissingEntry:
            return False
        finally:
            self.gb.db.rollback()

    def notebooks(self, assignment: str) -> list[str]:
        try:
            return sorted(nb.name for nb in self.gb.find_assignment(assignment).notebooks)
        finally:
            self.gb.db.rollback()

    def digests(self, assignment: str) -> dict[str, tuple[str, int]]:
        """student -> (digest of what was last graded, how many times grades were written) for this assignment,
        counting only students whose submission is in the gradebook."""
        from nbgrader.api import Assignment, SubmittedAssignment
        from sqlalchemy import select

        s = self.gb.db
        try:
            have = {sub.student_id for sub in s.query(SubmittedAssignment).join(Assignment)
                    .filter(Assignment.name == assignment)}
            rows = s.execute(select(self.ledger).where(self.ledger.c.assignment == assignment)).all()
            return {r.student: (r.digest, r.writes) for r in rows if r.student in have}
        finally:
            s.rollback()

    def scores(self, assignment: str) -> list[tuple[str, float, float]]:
        try:
            return sorted((sub.student_id, float(sub.score), float(sub.max_score))
                          for sub in self.gb.assignment_submissions(assignment))
        finally:
            self.gb.db.rollback()

    def write(self, assignment: str, student: str, notebooks: dict[str, dict], digest: str,
              timestamp: str | None = None) -> None:
        """Write one submission's grades in one transaction (all of them, or none on any error): the student and
        submission are made if new, every grade and comment of every notebook set, the ledger row updated."""
        _retrying(lambda: self._write(assignment, student, notebooks, digest, timestamp),
                  f"writing the grades of {student}/{assignment}")

    def _write(self, assignment, student, notebooks, digest, timestamp) -> None:
        import datetime

        from nbgrader import utils
        from nbgrader.api import (Assignment, Comment, Grade, Student, SubmittedAssignment, SubmittedNotebook)
        from sqlalchemy import select

        s = self.gb.db
        try:
            a = s.query(Assignment).filter(Assignment.name == assignment).one()
            who = s.query(Student).filter(Student.id == student).one_or_none()
            if who is None:
                who = Student(id=student)
                s.add(who)
            sub = s.query(SubmittedAssignment).filter(SubmittedAssignment.assignment == a,
                                                      SubmittedAssignment.student == who).one_or_none()
            if sub is None:  # the structure nbgrader's add_submission makes, without its commit
                with s.no_autoflush:
                    sub = SubmittedAssignment(assignment=a, student=who)
                    s.add(sub)
                    for notebook in a.notebooks:
                        snb = SubmittedNotebook(notebook=notebook, assignment=sub)
                        s.add(snb)
                        for cell in [*notebook.grade_cells, *notebook.task_cells]:
                            s.add(Grade(cell=cell, notebook=snb))
                        for cell in [*notebook.solution_cells, *notebook.task_cells]:
                            s.add(Comment(cell=cell, notebook=snb))
            if timestamp:
                sub.timestamp = utils.parse_utc(timestamp)
            s.flush()
            if sorted(snb.notebook.name for snb in sub.notebooks) != sorted(nb.name for nb in a.notebooks):
                raise ValueError(f"the gradebook's submission of {student}/{assignment} does not have the "
                                 "assignment's notebooks")
            for snb in sub.notebooks:
                got = notebooks.get(snb.notebook.name)
                if got is None:
                    raise ValueError(f"the worker returned no grades for notebook {snb.notebook.name!r}")
                if len(snb.grades) != len(snb.notebook.grade_cells) + len(snb.notebook.task_cells):
                    raise ValueError(f"the gradebook's submission of {student}/{assignment} is missing grades")
                for grade in snb.grades:
                    name = grade.cell.name
                    if name not in got["grades"]:
                        raise ValueError(f"the worker returned no grade for cell {name!r} of {snb.notebook.name}")
                    auto, _ = got["grades"][name]
                    most = float(grade.cell.max_score)
                    grade.auto_score = None if auto is None else min(max(float(auto), 0.0), most)
                    grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None
                for comment in snb.comments:
                    comment.auto_comment = got["comments"].get(comment.cell.name)
            now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
            row = s.execute(select(self.ledger).where(self.ledger.c.assignment == assignment,
                                                      self.ledger.c.student == student)).first()
            if row is None:
                s.execute(self.ledger.insert().values(assignment=assignment, student=student, digest=digest,
                                                      writes=1, graded_at=now))
            else:
                s.execute(self.ledger.update().where(self.ledger.c.assignment == assignment,
                                                     self.ledger.c.student == student)
                          .values(digest=digest, writes=row.writes + 1, graded_at=now))
            s.commit()
        except BaseException:
            s.rollback()
            raise


def write_grades(url: str, assignment: str, student: str, notebooks: dict[str, dict], digest: str,
                 timestamp: str | None = None) -> None:
    """One submission's grades into the gradebook at `url`, in one transaction (see Gradebook.write)."""
    with Gradebook(url) as gb:
        gb.write(assignment, student, notebooks, digest, timestamp)


def graded_digests(url: str, assignment: str) -> dict[str, tuple[str, int]]:
    with Gradebook(url) as gb:
        return gb.digests(assignment)


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
    source's other files and the timestamp, as nbgrader autograde leaves them (feedback reads them)."""
    dest = course.root / "autograded" / sub.student / assignment
    dest.mkdir(parents=True, exist_ok=True)
    src = course.solutions / assignment
    for path in src.rglob("*"):
        if path.is_file() and path.suffix != ".ipynb" and ".ipynb_checkpoints" not in path.parts:
            target = dest / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    if (sub.folder / "timestamp.txt").is_file():
        shutil.copy(sub.folder / "timestamp.txt", dest / "timestamp.txt")
    for name, got in notebooks.items():
        if got.get("notebook") is None:
            continue
        tmp = dest / f".{name}.ipynb.tmp"
        tmp.write_text(got["notebook"], encoding="utf-8")
        os.replace(tmp, dest / f"{name}.ipynb")


# ------------------------------------------------------------------------------------------- progress

class GradeProgress:
    """What a batch has done. On a terminal: a live bar (rich) with graded, failed and remaining counts and an
    ETA, failures printed above it. Otherwise: one `[k/n] student: graded (s)` line per submission."""

    def __init__(self, total: int, live: bool | None = None, console=None) -> None:
        self.total, self.done, self.graded = total, 0, 0
        self.not_graded: set[str] = set()
        self.reasons: dict[str, str] = {}
        self._lock = threading.Lock()
        self._bar = None
        live = sys.stdout.isatty() if live is None else live
        if live and total:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                 TextColumn("[green]graded {task.fields[graded]}[/]  [red]failed "
                                            "{task.fields[failed]}[/]  remaining {task.fields[remaining]}"),
                                 TextColumn("ETA"), TimeRemainingColumn(), TimeElapsedColumn(),
                                 console=console or Console(), transient=False)
            self._task = self._bar.add_task("grading", total=total, graded=0, failed=0, remaining=total)
            self._bar.start()

    @property
    def failed(self) -> bool:
        return bool(self.not_graded)

    def report(self, student: str, ok: bool, took: float, why: str = "") -> None:
        with self._lock:
            self.done += 1
            if ok:
                self.graded += 1
                line = f"  [{self.done}/{self.total}] {student}: graded ({took:.1f} s)"
            else:
                self.not_graded.add(student)
                self.reasons[student] = why
                line = f"  [{self.done}/{self.total}] {student}: NOT GRADED ({took:.1f} s): {why}"
            if self._bar is None:
                print(line, flush=True)
                return
            if not ok:
                self._bar.console.print(line, markup=False, highlight=False)
            self._bar.update(self._task, advance=1, graded=self.graded, failed=len(self.not_graded),
                             remaining=self.total - self.done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


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


def grade_on_cluster(course: Course, assignment: str, subs: list[Submission], sources: dict[str, bytes], client,
                     gradebook: Gradebook, progress: GradeProgress, *, task: Callable = grade_task) -> int:
    """Send one task per submission, write each result as it comes; returns how many were written.

    Raises ClusterError when the scheduler is lost (what was written stays; a rerun grades the rest)."""
    from distributed import as_completed

    try:
        allowed = client.run_on_scheduler(
            lambda dask_scheduler: dask_scheduler.allowed_failures)
    except Exception:
        allowed = None
    started: dict[Any, tuple[Submission, float]] = {}
    for sub in subs:
        fut = client.submit(task, assignment, sources, sub.files, sub.student, pure=False,
                            key=f"grade-{assignment}-{sub.student}-{sub.digest[:12]}-{os.urandom(4).hex()}")
        started[fut] = (sub, time.monotonic())
    written = 0
    pending = set(started)
    try:
        for fut in as_completed(list(started)):
            pending.discard(fut)
            sub, t0 = started[fut]
            if fut.status == "finished":
                try:
                    result = json.loads(fut.result())
                except Exception as exc:
                    progress.report(sub.student, False, time.monotonic() - t0, f"{type(exc).__name__}: {exc}")
                    continue
                if not result.get("ok"):
                    progress.report(sub.student, False, result.get("seconds", 0.0), result.get("error", "?"))
                    continue
                try:
                    _save_autograded(course, assignment, sub, result["notebooks"])
                    gradebook.write(assignment, sub.student, result["notebooks"], sub.digest, sub.timestamp)
                except (OSError, GradebookError, ValueError) as exc:  # nothing of it was written: say so, go on
                    progress.report(sub.student, False, result.get("seconds", 0.0), f"{type(exc).__name__}: {exc}")
                    continue
                written += 1
                progress.report(sub.student, True, result.get("seconds", 0.0))
            elif fut.status == "error":
                progress.report(sub.student, False, time.monotonic() - t0, _why_failed(fut.exception(), allowed))
            else:  # cancelled: the scheduler went away (or forgot the task)
                raise ClusterError(_lost(client, written, len(subs)))
    finally:
        for fut in pending:
            fut.cancel()
    return written


def _lost(client, written: int, total: int) -> str:
    address = getattr(client.scheduler, "address", "?")
    return (f"lost the Dask scheduler at {address}: {written} of {total} submission(s) graded and written; the "
            "others keep the grades they had. Start the scheduler again (or use --cluster local:N) and rerun the "
            "same command: it grades only what is left")
