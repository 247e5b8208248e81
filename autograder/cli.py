"""`fxcourse`: the course's command line for learners and instructors.

Exit codes: 0 success (for `check`: full marks), 1 graded or ran but something failed (for `check`: points
lost), 2 bad input or usage (missing file, not a notebook, unknown assignment), 130 interrupted (Ctrl-C).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from autograder.grader.cluster import GradeProgress
from autograder.grader.root import PACKAGE_ROOT, Course, find_course
from autograder.grader.notebook import NotebookError
from autograder.grader.sandbox import IsolationError, require_isolation, submission_wall

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
NBGRADER_CONFIG = Path(__file__).resolve().parent / "nbgrader_config.py"
# `python -m nbgrader`, after `import autograder` (which spares it jsonschema's slow optional import).
NBGRADER_LAUNCH = "import sys, autograder; sys.argv[0] = 'nbgrader'; from nbgrader.apps.nbgraderapp import main; main()"


def _err(msg: str) -> int:
    print(f"fxcourse: error: {msg}", file=sys.stderr)
    return EXIT_USAGE


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def _course(args: argparse.Namespace, start: str | Path | None = None) -> Course:
    return find_course(start or Path.cwd(), getattr(args, "course", None))


# ------------------------------------------------------------------------------------------- check

def _print_report(report) -> None:
    extra = "hidden tests included" if report.full_tests else "visible tests only: solutions/ not found"
    print(f"{report.notebook}: {report.score:g} / {report.max_score:g} points  ({extra})")
    width = max((len(t.id) for t in report.tests), default=10)
    for t in report.tests:
        mark = "\u2714" if t.passed else "\u2718"
        print(f"  {mark} {t.id:<{width}}  {t.points:g}/{t.max_points:g}  {t.message}")
        if t.hint and not t.passed:
            print(f"    {'':<{width}}  Hint: {t.hint}")
    for note in report.notes:
        print(f"  note: {note}")


def cmd_check(args: argparse.Namespace) -> int:
    from autograder.grader.grading import check_notebook

    path = Path(args.notebook)
    try:
        report = check_notebook(path, _course(args, path), visible_only=args.visible_only)
    except NotebookError as exc:
        return _err(str(exc))
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        _print_report(report)
    return EXIT_OK if report.score == report.max_score else EXIT_FAILED


# ---------------------------------------------------------------------------------------- nbgrader

def _nbgrader_cmd(course: Course, *argv: str, db: str | None = None) -> tuple[list[str], dict[str, str]]:
    cmd = [sys.executable, "-c", NBGRADER_LAUNCH, *argv, f"--CourseDirectory.root={course.root}"]
    if db:
        cmd.append(f"--CourseDirectory.db_url={db}")
    env = dict(os.environ)
    # nbgrader reads nbgrader_config.py from the Jupyter config path: this puts the course's first.
    env["JUPYTER_CONFIG_PATH"] = str(NBGRADER_CONFIG.parent) + (
        os.pathsep + env["JUPYTER_CONFIG_PATH"] if env.get("JUPYTER_CONFIG_PATH") else "")
    env["PYTHONPATH"] = str(PACKAGE_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    # nbgrader's gradebook runs `alembic` from PATH: this interpreter's, also where its bin/ is not on PATH
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", os.defpath)
    return cmd, env


def _nbgrader_timeout() -> float:
    """Seconds one nbgrader command (generate, feedback, export, the exchange) may take: FXCOURSE_NBGRADER_TIMEOUT."""
    text = os.environ.get("FXCOURSE_NBGRADER_TIMEOUT", "3600")
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise SystemExit(_err(f"FXCOURSE_NBGRADER_TIMEOUT must be a number of seconds above 0, got {text!r}"))
    return value


def _nbgrader(course: Course, *argv: str, db: str | None = None, quiet: bool = False) -> subprocess.CompletedProcess:
    """Run one nbgrader command with the course's configuration; stopped (exit 124) past its time limit."""
    cmd, env = _nbgrader_cmd(course, *argv, db=db)
    limit = _nbgrader_timeout()
    try:
        return subprocess.run(cmd, cwd=course.root, env=env, text=True, timeout=limit,
                              capture_output=quiet, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:  # subprocess.run has killed it
        why = (f"nbgrader {argv[0]} did not finish within {limit:g} s and was stopped "
               "(FXCOURSE_NBGRADER_TIMEOUT sets the limit)")
        print(f"fxcourse: error: {why}", file=sys.stderr)
        out = exc.stdout.decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return subprocess.CompletedProcess(cmd, 124, stdout=out, stderr=why)


def _assignments(course: Course, names: list[str]) -> list[str] | None:
    known = sorted(p.name for p in course.solutions.iterdir() if p.is_dir()) if course.solutions.is_dir() else []
    unknown = [n for n in names if n not in known]
    if unknown:
        _err(f"unknown assignment {unknown[0]!r}; expected one of {', '.join(known) or '(none: no solutions/)'}")
        return None
    return names or known


def _normalized(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def cmd_generate(args: argparse.Namespace) -> int:
    course = _course(args)
    names = _assignments(course, args.assignment)
    if names is None:
        return EXIT_USAGE
    if not args.check:
        for name in names:
            r = _nbgrader(course, "generate_assignment", name, "--force", quiet=not args.verbose)
            if r.returncode != 0:
                print((r.stdout or "") + (r.stderr or ""), file=sys.stderr)
                return _err(f"nbgrader could not generate {name}") and EXIT_FAILED
            print(f"generated exercises/{name}/{name}.ipynb")
        return EXIT_OK
    drift = []
    with tempfile.TemporaryDirectory(prefix="fxcourse-generate-") as tmp:
        for name in names:
            r = _nbgrader(course, "generate_assignment", name, "--force",
                          f"--CourseDirectory.release_directory={tmp}", db=f"sqlite:///{tmp}/gradebook.db", quiet=True)
            if r.returncode != 0:
                print(r.stdout + r.stderr, file=sys.stderr)
                return _err(f"nbgrader could not generate {name}") and EXIT_FAILED
            fresh = Path(tmp) / name / f"{name}.ipynb"
            committed = course.exercises / name / f"{name}.ipynb"
            if not committed.exists():
                drift.append(f"exercises/{name}/{name}.ipynb is missing")
            elif _normalized(fresh) != _normalized(committed):
                drift.append(f"exercises/{name}/{name}.ipynb differs from what solutions/{name} generates")
            learner_side = (".fxcourse-hints.json", ".ipynb_checkpoints")
            extra = sorted({p.name for p in (course.exercises / name).iterdir()
                            if p.name not in learner_side and ".backup-" not in p.name}
                           - {p.name for p in (Path(tmp) / name).iterdir()}) \
                if (course.exercises / name).is_dir() else []
            if extra:
                drift.append(f"exercises/{name}/ has files the generator does not make: {', '.join(extra)}")
    for line in drift:
        print(f"drift: {line}")
    if drift:
        print("run `fxcourse generate` and commit the result")
        return EXIT_FAILED
    print(f"exercises/ is in step with solutions/ ({len(names)} assignments)")
    return EXIT_OK


def _gradebook_summary(course: Course, assignment: str, db: str | None = None) -> list[tuple[str, float, float]]:
    from autograder.grader.cluster import Gradebook, gradebook_url

    with Gradebook(gradebook_url(course, db)) as gb:
        return gb.scores(assignment)


class _Graders:
    """The nbgrader processes `fxcourse grade` has running, so that an interrupt can stop them all."""

    def __init__(self, db: str | None = None) -> None:
        self.stopping = threading.Event()
        self.db = db  # --db: the gradebook every nbgrader started here writes to (None: the configured one)
        self._procs: set[subprocess.Popen] = set()
        self._lock = threading.Lock()

    def start(self, cmd: list[str], env: dict[str, str], cwd: Path, **kw) -> subprocess.Popen | None:
        with self._lock:
            if self.stopping.is_set():
                return None
            proc = subprocess.Popen(cmd, cwd=cwd, env=env, text=True, errors="replace", stdin=subprocess.DEVNULL,
                                    **kw)
            self._procs.add(proc)
            return proc

    def finished(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs.discard(proc)

    def stop(self, grace: float = 20.0) -> None:
        """SIGINT to every running nbgrader (it stops its jailed worker and removes the submission it was
        writing), SIGKILL to any still running after `grace` seconds; start no new one."""
        with self._lock:
            self.stopping.set()
            procs = list(self._procs)
        for proc in procs:
            try:
                proc.send_signal(signal.SIGINT)
            except OSError:
                pass
        deadline = time.monotonic() + grace
        for proc in procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _autograde(course: Course, name: str, student: str,
               graders: _Graders) -> tuple[subprocess.CompletedProcess | None, float]:
    """One student's submission through the hardened `nbgrader autograde` (None: stopped before it ran).
    Graders running side by side share the gradebook (SQLite): a write that meets another's lock fails as a
    whole, so it is retried."""
    start = time.monotonic()
    r = None
    for attempt in range(4):
        cmd, env = _nbgrader_cmd(course, "autograde", name, f"--student={student}", "--create", "--force",
                                 db=graders.db)
        proc = graders.start(cmd, env, course.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if proc is None:
            return None, time.monotonic() - start
        try:
            out, err = proc.communicate(timeout=submission_wall())
        except subprocess.TimeoutExpired:  # bounded: a hung grader is stopped and reported, the batch goes on
            proc.kill()
            out, err = proc.communicate()
            err += f"\nERROR: grading took longer than {submission_wall():g} s and was stopped\n"
        graders.finished(proc)
        r = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
        if r.returncode == 0 or "database is locked" not in r.stdout + r.stderr or graders.stopping.is_set():
            break
        time.sleep(0.5 + attempt)
    return r, time.monotonic() - start


def _grade_alone(course: Course, name: str, students: list[str], progress: "_Progress", graders: _Graders) -> None:
    for student in students:
        r, took = _autograde(course, name, student, graders)
        if r is None or graders.stopping.is_set():
            return
        progress.report(student, r.returncode == 0, took, _why((r.stdout + r.stderr).splitlines()))


_STARTS = re.compile(r"Creating/updating student with ID '(.*)': ")
# nbgrader's two ways of failing one submission and going on with the next (its convert_notebooks)
_FAILED_ONE = re.compile(r"There was an error processing assignment: |While processing assignment .*, the kernel")
_SUMMARY = re.compile(r"There was an error processing assignment '(.*)' for student '(.*)'$")


def _why(lines: list[str]) -> str:
    own = [l.split("NotebookError: ", 1)[1].strip() for l in lines if "NotebookError: " in l]
    if own:  # the course's own one-line reason (autograder.grader.notebook), not nbgrader's traceback around it
        return own[-1][:500]
    return " | ".join([l.strip() for l in lines if "ERROR" in l or "rror" in l][-3:])[:300]


# `[k/n] student: graded` lines (a live bar on a terminal) from the graders running side by side
_Progress = GradeProgress


def _grade_batch(course: Course, name: str, group: list[str], everyone: list[str], progress: _Progress,
                 graders: _Graders | None = None) -> None:
    """Grade `group` in ONE nbgrader process, one submission after another (its start-up and imports are paid
    once, not per student); nbgrader isolates each submission's failure. Whatever the process did not get to
    (it was killed, or the gradebook stayed locked) is graded again one student per process."""
    graders = graders or _Graders()
    safe = all(not set(s) & set(",*?[]") for s in everyone)
    if len(group) == 1 or not safe:
        _grade_alone(course, name, group, progress, graders)
        return
    others = [s for s in everyone if s not in group]
    argv = ["autograde", name, "--student=*", "--create", "--force"]
    if others:
        argv.append(f"--CourseDirectory.student_id_exclude={','.join(others)}")
    cmd, env = _nbgrader_cmd(course, *argv, db=graders.db)
    proc = graders.start(cmd, env, course.root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if proc is None:
        return
    finished: set[str] = set()
    current, failed_current, lines, start, summarized = None, False, [], time.monotonic(), False

    def close() -> None:
        nonlocal current
        if current is not None and not failed_current:
            progress.report(current, True, time.monotonic() - start)
            finished.add(current)
        elif current is not None:
            failures[current] = (time.monotonic() - start, _why(lines))
        current = None

    failures: dict[str, tuple[float, str]] = {}
    watchdog = threading.Timer(submission_wall() * len(group), proc.kill)  # bounded: see _autograde
    watchdog.start()
    try:
        for line in proc.stdout:
            m = _STARTS.search(line)
            if m and m.group(1) in group:
                close()
                current, failed_current, lines, start = m.group(1), False, [], time.monotonic()
                continue
            if _SUMMARY.search(line.rstrip()):
                close()
                summarized = True
                continue
            lines.append(line)
            if _FAILED_ONE.search(line):
                failed_current = True
        code = proc.wait()
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        graders.finished(proc)
    if graders.stopping.is_set():  # interrupted: what was graded is reported, nothing more is started
        return
    if code == 0 or summarized:  # nbgrader went through the whole group
        close()
        for student, (took, why) in failures.items():
            progress.report(student, False, took, why)
            finished.add(student)
    # The process stopped early: the student it was on, and those it never reached, are graded on their own.
    _grade_alone(course, name, [s for s in group if s not in finished], progress, graders)


def _ensure_assignment(course: Course, name: str, db: str) -> str | None:
    """Make sure the gradebook knows the assignment's notebooks and cells (a new PostgreSQL gradebook does not):
    nbgrader's generate_assignment writes them, into a temporary release folder. None, or what went wrong."""
    from autograder.grader.cluster import Gradebook

    with Gradebook(db) as gb:
        if gb.has_assignment(name):
            return None
    with tempfile.TemporaryDirectory(prefix="fxcourse-release-") as tmp:
        r = _nbgrader(course, "generate_assignment", name, "--force", f"--CourseDirectory.release_directory={tmp}",
                      db=db, quiet=True)
    if r.returncode != 0:
        return f"nbgrader could not add {name} to the gradebook: {_why((r.stdout + r.stderr).splitlines())}"
    return None


def _print_summary(course: Course, name: str, progress: "_Progress", db: str) -> None:
    print(f"summary of {name}:")
    for student, score, max_score in _gradebook_summary(course, name, db):
        if student in progress.not_graded:
            print(f"  {student:<20} NOT GRADED (see above; the gradebook holds {score:g} / {max_score:g})")
        else:
            print(f"  {student:<20} {score:g} / {max_score:g}")


def _grade_on_cluster(args: argparse.Namespace, course: Course, work: list[tuple[str, list[str]]], db: str) -> int:
    """--cluster: one Dask task per submission; the grades are written here, once each (autograder.grader.cluster)."""
    import logging

    import distributed  # noqa: F401  (it sets up its loggers on import: quieten them after)

    from autograder.grader.cluster import ClusterError, Gradebook, GradebookError, collect_submissions, grade_on_cluster, open_cluster

    for logger in [n for n in logging.root.manager.loggerDict if n.startswith("distributed")] + [
            "distributed", "tornado", "asyncio"]:
        logging.getLogger(logger).setLevel(logging.CRITICAL + 1)  # a lost scheduler is reported once, below
    where = f"{args.cluster[6:]} local Dask worker(s)" if args.cluster.startswith("local:") else \
        f"the Dask scheduler at {args.cluster}"
    print(f"starting {where}" if args.cluster.startswith("local:") else f"connecting to {where}", flush=True)
    client = local = None
    status, progress, name = EXIT_OK, None, ""
    try:
        client, local = open_cluster(args.cluster)
        with Gradebook(db) as gb:
            for name, students in work:
                notebooks = gb.notebooks(name)
                sources = {n: (course.solutions / name / f"{n}.ipynb").read_bytes() for n in notebooks}
                subs = collect_submissions(course, name, students, notebooks, sources)
                done = gb.digests(name)
                todo = [s for s in subs if args.regrade or done.get(s.student, ("",))[0] != s.digest]
                left = len(subs) - len(todo)
                print(f"grading {name}: {len(todo)} submission(s) on {where}" + (
                    f"; {left} up to date (graded from these same files; --regrade grades them again)"
                    if left else ""), flush=True)
                progress = _Progress(len(todo))
                try:
                    grade_on_cluster(course, name, todo, sources, client, gb, progress)
                finally:
                    progress.close()
                if progress.failed:
                    status = EXIT_FAILED
                _print_summary(course, name, progress, db)
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
        if client is not None:
            try:
                client.close(timeout=5)
            except Exception:
                pass
        if local is not None:
            try:
                local.close(timeout=20)
            except Exception:
                pass
    return status


def cmd_grade(args: argparse.Namespace) -> int:
    from concurrent.futures import ThreadPoolExecutor

    from autograder.grader.cluster import GradebookError, gradebook_url, parse_cluster, parse_db_url

    course = _course(args)
    names = _assignments(course, [args.assignment] if args.assignment else [])
    if names is None:
        return EXIT_USAGE
    for flag, value, parse in (("--cluster", args.cluster, parse_cluster), ("--db", args.db, parse_db_url)):
        try:
            if value:
                parse(value)
        except ValueError as exc:
            return _err(f"{flag}: {exc}")
    if not args.cluster:  # hardened grading here: refuse, naming what is missing, unless opted out
        try:
            require_isolation()
        except IsolationError as exc:
            return _err(str(exc))
    if args.cluster and args.jobs != 1:
        return _err("--jobs and --cluster do not go together: --cluster local:N starts N workers, a scheduler "
                    "decides for tcp://HOST:PORT")
    submitted = course.root / "submitted"
    if not submitted.is_dir():
        return _err(f"no submissions: {submitted} does not exist (expected submitted/<student>/<assignment>/)")
    if args.assignment and args.student:
        missing = [s for s in args.student if not (submitted / s / args.assignment).is_dir()]
        if missing:
            return _err(f"no submission from student {missing[0]!r} for {args.assignment}: expected a folder "
                        f"{submitted / missing[0] / args.assignment}")
    db = gradebook_url(course, args.db)
    work = []
    for name in names:
        everyone = sorted(p.parent.name for p in submitted.glob(f"*/{name}") if p.is_dir())
        students = [s for s in everyone if s in args.student] if args.student else everyone
        if students:
            work.append((name, students, everyone))
    try:
        for name, _, _ in work:
            problem = _ensure_assignment(course, name, db)
            if problem:
                return _err(problem) and EXIT_FAILED
    except GradebookError as exc:
        return _err(str(exc)) and EXIT_FAILED
    if args.cluster:
        return _grade_on_cluster(args, course, [(n, s) for n, s, _ in work], db)
    status = EXIT_OK
    for name, students, everyone in work:
        jobs = min(args.jobs, len(students))
        print(f"grading {name}: {len(students)} submission(s)" + (f", {jobs} at a time" if jobs > 1 else ""),
              flush=True)
        # Each grader is its own nbgrader process, each submission runs in its own jailed worker: side by side
        # they cannot affect each other's scores, and time limits count CPU seconds, so a busy machine fails
        # no one.
        progress = _Progress(len(students))
        groups = [students[k::jobs] for k in range(jobs)]
        graders = _Graders(db if args.db else None)
        pool = ThreadPoolExecutor(max_workers=jobs)
        try:
            for future in [pool.submit(_grade_batch, course, name, g, everyone, progress, graders) for g in groups]:
                future.result()
        except KeyboardInterrupt:
            graders.stop()
            pool.shutdown(wait=True, cancel_futures=True)
            progress.close()
            print(f"fxcourse: interrupted: {progress.done} of {len(students)} submission(s) of {name} graded; the "
                  "others keep the grades they had (run the command again to finish)", file=sys.stderr, flush=True)
            return EXIT_INTERRUPTED
        pool.shutdown(wait=True)
        progress.close()
        if progress.failed:
            status = EXIT_FAILED
        _print_summary(course, name, progress, db)
    return status


_DB_HELP = ("the gradebook: sqlite:///PATH or postgresql://USER@HOST:PORT/DB (default: nbgrader's "
            "CourseDirectory.db_url, else gradebook.db in the course root)")


def _db_arg(args: argparse.Namespace) -> str | None:
    from autograder.grader.cluster import parse_db_url

    if getattr(args, "db", None):
        try:
            parse_db_url(args.db)
        except ValueError as exc:
            _err(f"--db: {exc}")
            raise SystemExit(EXIT_USAGE) from None
        return parse_db_url(args.db)
    return None


def cmd_feedback(args: argparse.Namespace) -> int:
    course = _course(args)
    argv = ["generate_feedback", *([args.assignment] if args.assignment else []), "--force"]
    return EXIT_OK if _nbgrader(course, *argv, db=_db_arg(args)).returncode == 0 else EXIT_FAILED


def cmd_export(args: argparse.Namespace) -> int:
    course = _course(args)
    out = Path(args.to).resolve()
    r = _nbgrader(course, "export", f"--to={out}", db=_db_arg(args))
    if r.returncode == 0:
        print(f"grades written to {out}")
    return EXIT_OK if r.returncode == 0 else EXIT_FAILED


# ---------------------------------------------------------------------------------------- exchange
# The instructor's side of nbgrader's exchange. Each command is nbgrader's own (release_assignment, collect,
# release_feedback) run with the course's configuration: its course id and its hardened pipelines. Students
# use nbgrader's fetch_assignment, submit and fetch_feedback, or the Assignments tab, on the same exchange.

def _exchange_argv(args: argparse.Namespace) -> list[str] | None:
    """nbgrader's option for --exchange (nothing: nbgrader's configured Exchange.root), None when it is bad."""
    if not args.exchange:
        return []
    root = Path(args.exchange).resolve()
    if not root.is_dir():
        _err(f"exchange directory {root} does not exist: create it first, writable by every user of the course "
             "(mode 1777; see docs/jupyterhub.md)")
        return None
    return [f"--Exchange.root={root}"]


def _exchange_command(args: argparse.Namespace) -> tuple[Course, str, list[str]] | None:
    """The course, the assignment and nbgrader's exchange options of a release/collect/release-feedback; None
    (after saying why) when the assignment is unknown or the exchange missing."""
    course = _course(args)
    if _assignments(course, [args.assignment]) is None:
        return None
    exchange = _exchange_argv(args)
    return None if exchange is None else (course, args.assignment, exchange)


def _nbgrader_failed(r: subprocess.CompletedProcess, what: str) -> int:
    lines = [l for l in (r.stdout + r.stderr).splitlines() if "ERROR" in l or "rror:" in l] or \
        (r.stdout + r.stderr).splitlines()[-10:]
    for line in lines:
        print(f"  {line}", file=sys.stderr)
    _err(what)
    return EXIT_FAILED


def _due_date(course: Course, assignment: str):
    """The assignment's due date in nbgrader's gradebook (naive UTC), or None."""
    from nbgrader.api import Gradebook, MissingEntry

    db = course.root / "gradebook.db"
    if not db.is_file():
        return None
    with Gradebook(f"sqlite:///{db}", "fxcourse") as gb:
        try:
            return gb.find_assignment(assignment).duedate
        except MissingEntry:
            return None


def _late_by(seconds: float) -> str:
    minutes = int(seconds // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    parts = [f"{days} d"] * bool(days) + [f"{hours} h"] * bool(hours) + [f"{minutes} min"]
    return " ".join(parts) if seconds >= 60 else f"{int(seconds)} s"


def cmd_release(args: argparse.Namespace) -> int:
    from dateutil.parser import parse as parse_date

    found = _exchange_command(args)
    if found is None:
        return EXIT_USAGE
    course, name, exchange = found
    if not (course.exercises / name / f"{name}.ipynb").is_file():
        return _err(f"{course.exercises / name / (name + '.ipynb')} does not exist: run `fxcourse generate {name}` "
                    "first")
    if args.due:
        try:
            parse_date(args.due)
        except (ValueError, OverflowError):
            return _err(f"--due {args.due!r} is not a date: expected for example '2026-12-08 17:00 UTC'")
        r = _nbgrader(course, "db", "assignment", "add", name, f"--duedate={args.due}", quiet=True)
        if r.returncode != 0:
            return _nbgrader_failed(r, f"nbgrader could not set the due date of {name}")
    r = _nbgrader(course, "release_assignment", name, *exchange, *(["--force"] if args.force else []), quiet=True)
    out = r.stdout + r.stderr
    if r.returncode != 0:
        if "Destination already exists" in out:
            return _err(f"{name} is already released; --force replaces the release (students who fetched it keep "
                        "their copy)")
        return _nbgrader_failed(r, f"nbgrader could not release {name}")
    where = re.search(r"Destination: (.*)", out)
    print(f"released {name}" + (f" to {where.group(1).strip()}" if where else ""))
    due = _due_date(course, name)
    print(f"  due {due:%Y-%m-%d %H:%M} UTC" if due else "  no due date (set one with --due)")
    return EXIT_OK


def cmd_collect(args: argparse.Namespace) -> int:
    from nbgrader.utils import parse_utc

    found = _exchange_command(args)
    if found is None:
        return EXIT_USAGE
    course, name, exchange = found
    # --update: a student's newer submission replaces the one collected before
    r = _nbgrader(course, "collect", name, "--update", *exchange, quiet=True)
    out = r.stdout + r.stderr
    if r.returncode != 0:
        return _nbgrader_failed(r, f"nbgrader could not collect {name}")
    for line in out.splitlines():
        if "claims to be submitted by" in line:  # nbgrader's owner cross-check
            print(f"fxcourse: warning: {line.strip()}", file=sys.stderr)
    changed = dict((m.group(2), m.group(1)) for m in re.finditer(r"(Collecting|Updating) submission: (\S+) ", out))
    submitted = course.root / "submitted"
    students = sorted(p.parent.name for p in submitted.glob(f"*/{name}") if p.is_dir())
    if not students:
        print(f"no submissions of {name} in the exchange yet")
        return EXIT_OK
    due = _due_date(course, name)
    print(f"{name}: {len(students)} submission(s), {len(changed)} new or updated"
          + (f"; due {due:%Y-%m-%d %H:%M} UTC" if due else "; no due date"))
    for student in students:
        stamp_file = submitted / student / name / "timestamp.txt"
        stamp = parse_utc(stamp_file.read_text().strip()) if stamp_file.is_file() else None
        when = f"submitted {stamp:%Y-%m-%d %H:%M:%S} UTC" if stamp else "no timestamp"
        state = {"Collecting": "collected", "Updating": "replaced by a resubmission"}.get(changed.get(student, ""),
                                                                                       "unchanged")
        late = ""
        if stamp and due and stamp > due:
            late = f"  LATE by {_late_by((stamp - due).total_seconds())}"
        print(f"  {student:<20} {when}  {state}{late}")
    return EXIT_OK


def cmd_release_feedback(args: argparse.Namespace) -> int:
    found = _exchange_command(args)
    if found is None:
        return EXIT_USAGE
    course, name, exchange = found
    students = sorted(p.parent.name for p in (course.root / "feedback").glob(f"*/{name}") if p.is_dir())
    if not students:
        return _err(f"no feedback for {name} in {course.root / 'feedback'}: run `fxcourse feedback {name}` first")
    r = _nbgrader(course, "release_feedback", name, *exchange, quiet=True)
    if r.returncode != 0:
        return _nbgrader_failed(r, f"nbgrader could not release the feedback of {name}")
    released = sorted(set(re.findall(r"Releasing feedback for student '([^']+)'", r.stdout + r.stderr)))
    print(f"released the feedback of {name} for {len(released or students)} student(s): "
          f"{', '.join(released or students)}")
    return EXIT_OK


# ----------------------------------------------------------------------------------------- validate

def cmd_validate(args: argparse.Namespace) -> int:
    from autograder.grader.validate import evaluate

    course = _course(args)
    names = _assignments(course, args.assignment)
    if names is None:
        return EXIT_USAGE
    auto = not getattr(args, "hand_only", False)
    rows, bad = [], []
    for name in names:
        try:
            outcomes = evaluate(name, course.solutions)
        except ModuleNotFoundError:
            rows.append({"assignment": name, "mutants_killed": 0, "mutants": 0, "alternatives_passed": 0,
                         "alternatives": 0})
            bad.append(f"{name}: no mutants module autograder/coursedata/mutants/{name}.py")
            continue
        mutants = [o for o in outcomes if o.kind == "mutant"]
        alts = [o for o in outcomes if o.kind == "alternative"]
        row = {"assignment": name, "mutants_killed": sum(o.ok for o in mutants), "mutants": len(mutants),
               "alternatives_passed": sum(o.ok for o in alts), "alternatives": len(alts)}
        bad += [f"{name}: {o.kind} of {o.function} ({o.why}): {o.detail.splitlines()[0][:200]}"
                for o in outcomes if not o.ok]
        if auto:
            row.update(_validate_auto(name, course.solutions, bad))
        rows.append(row)
    if args.json:
        print(json.dumps(rows))
    else:
        head = f"{'exercise':<16} {'hand-written killed':>20} {'rate':>6}"
        if auto:
            head += f" {'automatic killed':>17} {'equivalent':>11} {'rate':>6}"
        print(head + f" {'alternatives':>14}")

        def rate(k: int, n: int) -> str:
            return f"{100 * k / n:.0f}%" if n else "-"
        total = {k: sum(r.get(k, 0) for r in rows) for k in
                 ("mutants_killed", "mutants", "alternatives_passed", "alternatives", "auto_killed", "auto",
                  "auto_equivalent")}
        for r in rows + [dict(total, assignment="all")]:
            line = (f"{r['assignment']:<16} {str(r['mutants_killed']) + '/' + str(r['mutants']):>20} "
                    f"{rate(r['mutants_killed'], r['mutants']):>6}")
            if auto:
                n = r.get("auto", 0) - r.get("auto_equivalent", 0)
                line += (f" {str(r.get('auto_killed', 0)) + '/' + str(n):>17} {r.get('auto_equivalent', 0):>11} "
                         f"{rate(r.get('auto_killed', 0), n):>6}")
            line += f" {str(r['alternatives_passed']) + '/' + str(r['alternatives']) + ' pass':>14}"
            print(line)
        for line in bad:
            print(f"  not ok: {line}")
    return EXIT_OK if not bad else EXIT_FAILED


def _validate_auto(name: str, solutions, bad: list) -> dict:
    """Automatic mutants of one exercise: killed, generated, listed as equivalent; problems appended to `bad`."""
    from autograder.grader.automutants import evaluate_auto
    from autograder.coursedata.mutants.equivalent import EQUIVALENT

    listed = EQUIVALENT.get(name, {})
    outcomes = evaluate_auto(name, solutions)
    equivalent = [o for o in outcomes if not o.killed and o.mutant.key in listed]
    bad += [f"{name}: automatic mutant of {o.mutant.function} survives: {o.mutant.key}"
            for o in outcomes if not o.killed and o.mutant.key not in listed]
    bad += [f"{name}: automatic mutant listed as equivalent is caught: {o.mutant.key}"
            for o in outcomes if o.killed and o.mutant.key in listed]
    return {"auto_killed": sum(o.killed for o in outcomes), "auto": len(outcomes),
            "auto_equivalent": len(equivalent)}


# ---------------------------------------------------------------------------------------------- lab

def cmd_lab(args: argparse.Namespace) -> int:
    course = _course(args)
    if args.headless:
        from autograder.grader.headless import run_notebooks

        lessons = sorted((course.root / "lessons").glob("*.ipynb"))
        if not lessons:
            return _err(f"no lessons in {course.root / 'lessons'}")
        failures = run_notebooks(lessons, timeout=args.timeout)
        return EXIT_FAILED if failures else EXIT_OK
    if shutil.which("jupyter") is None:
        return _err("jupyter is not installed: pip install -e .")
    cmd = ["jupyter", "lab", f"--ServerApp.root_dir={course.root}", "--LabApp.default_url=/lab/tree/lessons",
           f"--ServerApp.port={args.port}"]
    if args.no_browser:
        cmd.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    print("starting JupyterLab on lessons/ (Ctrl-C to stop):", " ".join(cmd))
    try:
        return subprocess.call(cmd)
    except KeyboardInterrupt:
        return EXIT_OK


# --------------------------------------------------------------------------------------------- main

def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fxcourse", description="The torch.fx course: lessons, exercises, grading.")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("lab", help="open the course in JupyterLab (or run every lesson headless)")
    s.add_argument("--no-browser", action="store_true", help="start the server without opening a browser")
    s.add_argument("--headless", action="store_true", help="run every lesson top to bottom, no server")
    s.add_argument("--port", type=int, default=8888)
    s.add_argument("--timeout", type=float, default=600, help="seconds per lesson with --headless")
    s.set_defaults(func=cmd_lab)

    s = sub.add_parser("check", help="grade one filled-in exercise notebook")
    s.add_argument("notebook")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--visible-only", action="store_true", help="only the tests a learner can see")
    s.set_defaults(func=cmd_check)

    s = sub.add_parser("generate", help="generate exercises/ from solutions/ with nbgrader")
    s.add_argument("assignment", nargs="*")
    s.add_argument("--check", action="store_true", help="fail if exercises/ differs from a fresh generation")
    s.add_argument("--verbose", action="store_true")
    s.set_defaults(func=cmd_generate)

    s = sub.add_parser("grade", help="autograde submitted/<student>/<assignment>/ into the gradebook (hardened)")
    s.add_argument("assignment", nargs="?")
    s.add_argument("--student", action="append", help="only this student (repeatable)")
    s.add_argument("--jobs", "-j", type=_positive_int, default=1, metavar="N",
                   help="grade N submissions at a time (default 1; each uses one core while it runs)")
    s.add_argument("--cluster", metavar="tcp://HOST:PORT|local:N",
                   help="grade on Dask: one task per submission to a running scheduler, or N local worker "
                        "processes (docs/cluster.md); a rerun grades only what is not graded yet")
    s.add_argument("--regrade", action="store_true",
                   help="with --cluster: grade again the submissions already graded from the same files")
    s.add_argument("--db", metavar="URL", help=_DB_HELP)
    s.set_defaults(func=cmd_grade)

    s = sub.add_parser("validate", help="run every mutant (hand-written and automatic) and alternative answer "
                                        "against the checks")
    s.add_argument("assignment", nargs="*")
    s.add_argument("--json", action="store_true")
    s.add_argument("--hand-only", action="store_true", help="skip the automatic mutants (they take a few minutes)")
    s.set_defaults(func=cmd_validate)

    s = sub.add_parser("feedback", help="write feedback/ for graded submissions (no hidden tests, no keys)")
    s.add_argument("assignment", nargs="?")
    s.add_argument("--db", metavar="URL", help=_DB_HELP)
    s.set_defaults(func=cmd_feedback)

    s = sub.add_parser("export", help="export the gradebook as CSV")
    s.add_argument("--to", default="grades.csv")
    s.add_argument("--db", metavar="URL", help=_DB_HELP)
    s.set_defaults(func=cmd_export)

    # the exchange (nbgrader's release_assignment, collect, release_feedback)
    exchange_help = "nbgrader exchange directory (default: nbgrader's configured Exchange.root)"
    s = sub.add_parser("release", help="release an assignment to the students through nbgrader's exchange")
    s.add_argument("assignment")
    s.add_argument("--due", metavar="DATE", help="due date recorded in the gradebook, e.g. '2026-12-08 17:00 UTC'")
    s.add_argument("--force", action="store_true", help="replace a release already in the exchange")
    s.add_argument("--exchange", metavar="PATH", help=exchange_help)
    s.set_defaults(func=cmd_release)

    s = sub.add_parser("collect", help="collect the students' latest submissions into submitted/ (flags late ones)")
    s.add_argument("assignment")
    s.add_argument("--exchange", metavar="PATH", help=exchange_help)
    s.set_defaults(func=cmd_collect)

    s = sub.add_parser("release-feedback", help="put feedback/ of an assignment in the exchange for the students")
    s.add_argument("assignment")
    s.add_argument("--exchange", metavar="PATH", help=exchange_help)
    s.set_defaults(func=cmd_release_feedback)

    from autograder.learner.commands import add_learner_commands  # progress, watch, reset, hint: the learner's loop
    add_learner_commands(sub)

    for s in sub.choices.values():
        s.add_argument("--course", help="course root (default: found from the notebook or the current folder)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
