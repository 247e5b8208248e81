"""Running nbgrader's own commands with the course's configuration and a time limit: generate, feedback, export.

Every nbgrader process the course starts is `python -c NBGRADER_LAUNCH ...` from this interpreter, with the
course root as nbgrader's CourseDirectory.root and autograder/nbgrader_config.py (the hardened pipelines) first
on the Jupyter config path. `fxcourse grade` keeps its nbgrader processes for the whole run instead
(`NBGRADER_SESSION`: one command after another, read from standard input, so nbgrader starts once per grader,
not once per assignment).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from autograder.grader.console import EXIT_FAILED, EXIT_OK, EXIT_USAGE, err
from autograder.grader.root import PACKAGE_ROOT, Course, find_course

__all__ = ["NBGRADER_CONFIG", "course_config", "NBGRADER_LAUNCH", "NBGRADER_SESSION", "DONE_MARK", "TOKEN_ENV", "command",
           "session_command", "serve", "Session", "time_limit", "run", "failed", "why", "known_assignments",
           "generate_into", "db_option", "generate", "feedback", "export"]

NBGRADER_CONFIG = Path(__file__).resolve().parents[1] / "nbgrader_config.py"
# `python -m nbgrader`, after `import autograder` (which spares it jsonschema's slow optional import), reading a new
# gradebook's schema revision in its own process (gradebook.schema_revision_in_process).
NBGRADER_LAUNCH = ("import sys, autograder; sys.argv[0] = 'nbgrader'; "
                   "from autograder.grader.gradebook import schema_revision_in_process; schema_revision_in_process(); "
                   "from nbgrader.apps.nbgraderapp import main; main()")
# The same, kept: runs one nbgrader command per line of its standard input (see serve).
NBGRADER_SESSION = ("import sys, autograder; sys.argv[0] = 'nbgrader'; "
                    "from autograder.grader.gradebook import schema_revision_in_process; schema_revision_in_process(); "
                    "from autograder.grader.nbgrader import serve; serve(sys.argv[1:])")
DONE_MARK = "fxcourse-nbgrader-done:"  # serve's line after each command: the mark, the session's token, the exit code
# The session's token, in the kept process's environment only: nothing a submission can make nbgrader print
# (a traceback line, say) can pass for the end of a command without it.
TOKEN_ENV = "FXCOURSE_NBGRADER_SESSION_TOKEN"


def course_config(course: Course):
    """The nbgrader configuration of `course`, as its nbgrader commands read it: the course's hardened pipelines
    (autograder/nbgrader_config.py), then the course folder's own nbgrader_config.py (where an instructor sets,
    say, `c.LateSubmissionPlugin.penalty_method`), the later file winning."""
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    config = Config()
    for path in dict.fromkeys([NBGRADER_CONFIG, course.root / "nbgrader_config.py"]):
        if path.is_file():
            config.merge(PyFileConfigLoader(path.name, str(path.parent)).load_config())
    config.CourseDirectory.root = str(course.root)
    return config


def command(course: Course, *argv: str, db: str | None = None) -> tuple[list[str], dict[str, str]]:
    """(argv, environment) of one nbgrader command on `course` (`db`: the gradebook URL, None: the configured one)."""
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


def session_command(course: Course, db: str | None = None) -> tuple[list[str], dict[str, str]]:
    """(argv, environment) of a kept nbgrader process on `course` (see serve); its commands are sent later."""
    cmd, env = command(course, db=db)
    return [sys.executable, "-c", NBGRADER_SESSION, *cmd[3:]], env


def serve(common: list[str]) -> None:
    """Inside a kept nbgrader process: run one nbgrader command per line of standard input (a JSON list of its
    arguments; `common`, the course's own options, go after them), one after another in this process, and
    after each write `DONE_MARK <exit code>` on standard error. The end of the input ends the process; an
    interrupt ends it at once, as it ends plain nbgrader."""
    import traceback

    from jupyter_core.application import NoStart
    from nbgrader.apps.nbgraderapp import NbGraderApp

    token = os.environ.pop(TOKEN_ENV, "")
    sys.stdout.reconfigure(line_buffering=True)  # its lines stay in order with the log's (standard error)
    for line in sys.stdin:
        app = None
        try:
            argv = json.loads(line)
            if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
                raise ValueError(f"expected a JSON list of strings, got {line.strip()[:80]!r}")
            app = NbGraderApp.instance()
            app.initialize([*argv, *common])
            app.start()
            code = 0
        except NoStart:  # how a jupyter application says it has finished its subcommand
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        except Exception:
            traceback.print_exc()
            code = 1
        finally:  # the next command gets applications of its own (they are singletons)
            sub = getattr(app, "subapp", None)
            for cls in {NbGraderApp, *([type(sub)] if sub is not None else [])}:
                cls.clear_instance()
        print(f"{DONE_MARK}{token} {code}", file=sys.stderr, flush=True)
    import logging

    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # every command has ended and written what it had to: skip tearing the interpreter down


class _Starter:
    """How a Session starts its process when no one else keeps track of it (batch.Graders does for grading)."""

    db: str | None = None

    def start_kept(self, cmd: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen:
        return subprocess.Popen(cmd, cwd=cwd, env=env, text=True, errors="replace", stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def finished(self, proc: subprocess.Popen) -> None:
        pass


class Session:
    """One kept nbgrader process (`serve`) that runs command after command. It is started on the first
    command, and again after one that it did not live through. `graders` starts and stops it (batch.Graders,
    whose `db` is the gradebook and which has it forked by nbfork's process; by default a plain process on the
    configured gradebook)."""

    def __init__(self, course: Course, graders=None) -> None:
        self.course, self.graders = course, graders or _Starter()
        self.proc: subprocess.Popen | None = None
        self.token = ""  # what the process's end-of-command lines carry (TOKEN_ENV)
        self.timed_out = False  # the last command was killed at its time limit

    def start(self) -> subprocess.Popen | None:
        """Start the process now unless it is running, so that its start-up (Python, nbgrader's imports) overlaps
        with whatever the caller does before its first command: the process (None once the graders are
        stopping)."""
        if self.proc is None:
            import secrets

            cmd, env = session_command(self.course, db=self.graders.db)
            self.token = secrets.token_hex(16)
            env = {**(env if env is not None else os.environ), TOKEN_ENV: self.token}
            self.proc = self.graders.start_kept(cmd, env, self.course.root)
        return self.proc

    def _ready(self) -> subprocess.Popen | None:
        """The running process, started if need be; one that was to be forked (batch.Graders' nbfork) and could
        not be is started afresh."""
        proc = self.start()
        confirm = getattr(proc, "confirm", None)
        if confirm is not None and not confirm():
            self.proc = None
            self.graders.finished(proc)
            proc = self.start()
        return proc

    def run(self, argv: list[str], read, limit: float | Callable[[], float]) -> int | None:
        """Run one nbgrader command (`argv`, the course's options added), handing each line it logs to
        `read`: its exit code, or None when the process ended first (it crashed, was stopped, or was killed at
        its time limit: after `limit` seconds, or, where `limit` is a function, once the time.monotonic() it
        gives, asked again as the command runs, has passed)."""
        proc, self.timed_out = self._ready(), False
        if proc is None:
            return None
        end = limit if callable(limit) else (lambda at=time.monotonic() + limit: at)
        done = threading.Event()

        def watch() -> None:
            while not done.wait(min(0.5, max(0.0, end() - time.monotonic()))):
                if time.monotonic() >= end():
                    self.timed_out = True
                    proc.kill()
                    return
        watchdog = threading.Thread(target=watch, daemon=True)
        watchdog.start()
        try:
            proc.stdin.write(json.dumps(argv) + "\n")
            proc.stdin.flush()
            end_mark = f"{DONE_MARK}{self.token} "
            for line in proc.stdout:
                if line.startswith(end_mark) and line[len(end_mark):].strip().lstrip("-").isdigit():
                    return int(line[len(end_mark):])
                read(line)
        except OSError:  # it ended before it could read the command
            pass
        finally:
            done.set()
            watchdog.join()
        self._end()
        return None

    def _end(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        self.graders.finished(proc)

    def end_input(self) -> None:
        """No more commands: the process ends once it has read the end of its input."""
        if self.proc is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass

    def close(self, grace: float = 30.0) -> None:
        """No more commands, and wait for the process to end (killed after `grace` seconds)."""
        self.end_input()
        if self.proc is None:
            return
        try:
            self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
        self._end()


def time_limit() -> float:
    """Seconds one nbgrader command (generate, feedback, export, the exchange) may take: FXCOURSE_NBGRADER_TIMEOUT."""
    text = os.environ.get("FXCOURSE_NBGRADER_TIMEOUT", "3600")
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise SystemExit(err(f"FXCOURSE_NBGRADER_TIMEOUT must be a number of seconds above 0, got {text!r}"))
    return value


def run(course: Course, *argv: str, db: str | None = None, quiet: bool = False,
        session: Session | None = None) -> subprocess.CompletedProcess:
    """Run one nbgrader command with the course's configuration; stopped (exit 124) past its time limit.
    `quiet`: its output is captured (in the result) instead of shown. `session`: in that kept nbgrader process
    instead of one of its own (its output then comes as one stream, in `stdout`)."""
    limit = time_limit()
    why = (f"nbgrader {argv[0]} did not finish within {limit:g} s and was stopped "
           "(FXCOURSE_NBGRADER_TIMEOUT sets the limit)")
    if session is not None:
        lines: list[str] = []
        code = session.run([*argv, *([f"--CourseDirectory.db_url={db}"] if db else [])],
                           lines.append if quiet else (lambda line: print(line, end="", flush=True)), limit)
        if code is None and session.timed_out:
            print(f"fxcourse: error: {why}", file=sys.stderr)
        return subprocess.CompletedProcess(list(argv), 124 if code is None else code, "".join(lines),
                                           why if code is None and session.timed_out else "")
    cmd, env = command(course, *argv, db=db)
    try:
        return subprocess.run(cmd, cwd=course.root, env=env, text=True, timeout=limit,
                              capture_output=quiet, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:  # subprocess.run has killed it
        print(f"fxcourse: error: {why}", file=sys.stderr)
        out = exc.stdout.decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return subprocess.CompletedProcess(cmd, 124, stdout=out, stderr=why)


def failed(r: subprocess.CompletedProcess, what: str) -> int:
    """Show the error lines of a failed nbgrader command, then `what` went wrong; returns EXIT_FAILED."""
    lines = [l for l in (r.stdout + r.stderr).splitlines() if "ERROR" in l or "rror:" in l] or \
        (r.stdout + r.stderr).splitlines()[-10:]
    for line in lines:
        print(f"  {line}", file=sys.stderr)
    err(what)
    return EXIT_FAILED


def why(lines: list[str]) -> str:
    """One line saying why nbgrader failed, from its log lines."""
    own = [l.split("NotebookError: ", 1)[1].strip() for l in lines if "NotebookError: " in l]
    if own:  # the course's own one-line reason (autograder.grader.notebook), not nbgrader's traceback around it
        return own[-1][:500]
    return " | ".join([l.strip() for l in lines if "ERROR" in l or "rror" in l][-3:])[:300]


def known_assignments(course: Course, names: list[str]) -> list[str] | None:
    """`names` (all of solutions/ when empty), or None after saying which one is unknown."""
    known = sorted(p.name for p in course.solutions.iterdir() if p.is_dir()) if course.solutions.is_dir() else []
    unknown = [n for n in names if n not in known]
    if unknown:
        err(f"unknown assignment {unknown[0]!r}; expected one of {', '.join(known) or '(none: no solutions/)'}")
        return None
    return names or known


def generate_into(course: Course, assignment: str, folder: str | Path, db: str | None = None,
                  session: Session | None = None) -> subprocess.CompletedProcess:
    """`nbgrader generate_assignment` into `folder` instead of exercises/, its gradebook `db` (default: one in
    `folder`), output captured (`session`: see run)."""
    return run(course, "generate_assignment", assignment, "--force", f"--CourseDirectory.release_directory={folder}",
               db=db or f"sqlite:///{folder}/gradebook.db", quiet=True, session=session)


def db_option(db: str | None) -> str | None:
    """The gradebook URL of a --db option (None: nbgrader's configured one); exits 2 naming a bad one."""
    from autograder.grader.gradebook import parse_db_url

    if not db:
        return None
    try:
        return parse_db_url(db)
    except ValueError as exc:
        err(f"--db: {exc}")
        raise SystemExit(EXIT_USAGE) from None


# ------------------------------------------------------------------------------------- the commands

def generate(assignment: list[str], check: bool = False, verbose: bool = False, course: str | None = None) -> int:
    """`fxcourse generate`: exercises/ from solutions/ (`check`: only say where exercises/ differs)."""
    found = find_course(Path.cwd(), course)
    names = known_assignments(found, assignment)
    if names is None:
        return EXIT_USAGE
    session = Session(found)  # one nbgrader process generates them all
    try:
        if not check:
            for name in names:
                r = run(found, "generate_assignment", name, "--force", quiet=not verbose, session=session)
                if r.returncode != 0:
                    print((r.stdout or "") + (r.stderr or ""), file=sys.stderr)
                    return err(f"nbgrader could not generate {name}") and EXIT_FAILED
                print(f"generated exercises/{name}/{name}.ipynb")
            return EXIT_OK
        drift = []
        with tempfile.TemporaryDirectory(prefix="fxcourse-generate-") as tmp:
            for name in names:
                r = generate_into(found, name, tmp, session=session)
                if r.returncode != 0:
                    print(r.stdout + r.stderr, file=sys.stderr)
                    return err(f"nbgrader could not generate {name}") and EXIT_FAILED
                drift += _drift(found, name, Path(tmp))
    finally:
        session.close()
    for line in drift:
        print(f"drift: {line}")
    if drift:
        print("run `fxcourse generate` and commit the result")
        return EXIT_FAILED
    print(f"exercises/ is in step with solutions/ ({len(names)} assignments)")
    return EXIT_OK


def _drift(course: Course, name: str, fresh_root: Path) -> list[str]:
    """How exercises/<name>/ differs from a fresh generation in `fresh_root`."""
    fresh = fresh_root / name / f"{name}.ipynb"
    committed = course.exercises / name / f"{name}.ipynb"
    out = []
    if not committed.exists():
        out.append(f"exercises/{name}/{name}.ipynb is missing")
    elif fresh.read_text(encoding="utf-8") != committed.read_text(encoding="utf-8"):
        out.append(f"exercises/{name}/{name}.ipynb differs from what solutions/{name} generates")
    learner_side = (".fxcourse-hints.json", ".ipynb_checkpoints")
    extra = sorted({p.name for p in (course.exercises / name).iterdir()
                    if p.name not in learner_side and ".backup-" not in p.name}
                   - {p.name for p in (fresh_root / name).iterdir()}) if (course.exercises / name).is_dir() else []
    if extra:
        out.append(f"exercises/{name}/ has files the generator does not make: {', '.join(extra)}")
    return out


def feedback(assignment: str | None = None, db: str | None = None, course: str | None = None) -> int:
    """`fxcourse feedback`: nbgrader's generate_feedback for the graded submissions."""
    found = find_course(Path.cwd(), course)
    argv = ["generate_feedback", *([assignment] if assignment else []), "--force"]
    return EXIT_OK if run(found, *argv, db=db_option(db)).returncode == 0 else EXIT_FAILED


def export(to: str = "grades.csv", db: str | None = None, course: str | None = None) -> int:
    """`fxcourse export`: the gradebook as CSV."""
    found = find_course(Path.cwd(), course)
    out = Path(to).resolve()
    r = run(found, "export", f"--to={out}", db=db_option(db))
    if r.returncode == 0:
        print(f"grades written to {out}")
    return EXIT_OK if r.returncode == 0 else EXIT_FAILED
