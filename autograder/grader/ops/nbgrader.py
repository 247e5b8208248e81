"""Running nbgrader's own commands with the course's configuration and a time limit: generate, feedback, export.

Every nbgrader process the course starts is `python -c NBGRADER_LAUNCH ...` from this interpreter, with the
course root as nbgrader's CourseDirectory.root and autograder/nbgrader_config.py (the hardened pipelines) first
on the Jupyter config path. Several commands of one `fxcourse` command (generating every assignment) run one after
another in one such process (`run_all`), so nbgrader starts once for them. Grading does not go through nbgrader's
commands at all: autograder.grader.classroom.runner runs the course's nbgrader preprocessors itself.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.course.console import EXIT_FAILED, EXIT_OK, EXIT_USAGE, err
from autograder.course.root import Course, find_course, package_first

__all__ = ["NBGRADER_CONFIG", "course_config", "NBGRADER_LAUNCH", "NBGRADER_EACH", "command", "run_each", "run_all",
           "time_limit", "run", "failed", "why", "known_assignments",
           "generate_into", "db_option", "generate", "feedback", "export"]

NBGRADER_CONFIG = Path(__file__).resolve().parents[2] / "nbgrader_config.py"
# `python -m nbgrader`, after `import autograder` (which spares it jsonschema's slow optional import), reading a new
# gradebook's schema revision in its own process (gradebook.schema_revision_in_process).
NBGRADER_LAUNCH = ("import sys, autograder; sys.argv[0] = 'nbgrader'; "
                   "from autograder.grader.classroom.gradebook import schema_revision_in_process; schema_revision_in_process(); "
                   "from nbgrader.apps.nbgraderapp import main; main()")
# The same for several commands, one after another in one process (see run_each).
NBGRADER_EACH = ("import sys, autograder; sys.argv[0] = 'nbgrader'; "
                 "from autograder.grader.classroom.gradebook import schema_revision_in_process; schema_revision_in_process(); "
                 "from autograder.grader.ops.nbgrader import run_each; run_each(sys.argv[1:])")


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
    env["PYTHONPATH"] = package_first(env.get("PYTHONPATH"))
    # nbgrader's gradebook runs `alembic` from PATH: this interpreter's, also where its bin/ is not on PATH
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", os.defpath)
    return cmd, env


def run_each(argv: list[str]) -> None:
    """Inside one nbgrader process (NBGRADER_EACH): argv is the descriptor to report on, a JSON list of commands
    (each a list of nbgrader's arguments), then the course's own options, which go after each command's. Runs the
    commands one after another and writes their exit codes, as a JSON list, to the descriptor at the end."""
    import traceback

    from jupyter_core.application import NoStart
    from nbgrader.apps.nbgraderapp import NbGraderApp

    fd, commands, common = int(argv[0]), json.loads(argv[1]), argv[2:]
    codes = []
    for each in commands:
        app = None
        try:
            app = NbGraderApp.instance()
            app.initialize([*each, *common])
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
        codes.append(code)
        if code:
            break
    sys.stdout.flush()
    sys.stderr.flush()
    os.write(fd, json.dumps(codes).encode())
    os._exit(0)  # every command has ended and written what it had to: skip tearing the interpreter down


def run_all(course: Course, commands: list[list[str]], quiet: bool = False) -> tuple[list[int], str]:
    """Run nbgrader `commands` one after another in one process, stopping at the first that fails:
    (their exit codes, as far as they ran; the output when `quiet`). A process that dies or goes past the
    time limit (FXCOURSE_NBGRADER_TIMEOUT, for them all) gives 124 for the command it was on."""
    cmd, env = command(course)
    r, w = os.pipe()
    try:
        proc = subprocess.run([sys.executable, "-c", NBGRADER_EACH, str(w), json.dumps(commands), *cmd[3:]],
                              cwd=course.root, env=env, text=True, timeout=time_limit() * max(1, len(commands)),
                              capture_output=quiet, stdin=subprocess.DEVNULL, pass_fds=(w,))
        out = (proc.stdout or "") + (proc.stderr or "")
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
    finally:
        os.close(w)
    with os.fdopen(r, "rb") as f:
        reported = f.read()
    try:
        codes = [int(c) for c in json.loads(reported)]
    except (ValueError, TypeError):
        codes = []
    if len(codes) < len(commands) and (not codes or codes[-1] == 0):
        codes.append(124)  # the process ended before it could report this one
    return codes, out


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


def run(course: Course, *argv: str, db: str | None = None, quiet: bool = False) -> subprocess.CompletedProcess:
    """Run one nbgrader command with the course's configuration; stopped (exit 124) past its time limit.
    `quiet`: its output is captured (in the result) instead of shown."""
    limit = time_limit()
    why = (f"nbgrader {argv[0]} did not finish within {limit:g} s and was stopped "
           "(FXCOURSE_NBGRADER_TIMEOUT sets the limit)")
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
    if own:  # the course's own one-line reason (autograder.course.notebook), not nbgrader's traceback around it
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


def _generate_argv(assignment: str, folder: str | Path, db: str | None = None) -> list[str]:
    return ["generate_assignment", assignment, "--force", f"--CourseDirectory.release_directory={folder}",
            f"--CourseDirectory.db_url={db or f'sqlite:///{folder}/gradebook.db'}"]


def generate_into(course: Course, assignment: str, folder: str | Path, db: str | None = None,
                  ) -> subprocess.CompletedProcess:
    """`nbgrader generate_assignment` into `folder` instead of exercises/, its gradebook `db` (default: one in
    `folder`), output captured."""
    return run(course, *_generate_argv(assignment, folder, db), quiet=True)


def db_option(db: str | None) -> str | None:
    """The gradebook URL of a --db option (None: nbgrader's configured one); exits 2 naming a bad one."""
    from autograder.grader.classroom.gradebook import parse_db_url

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
    if not check:  # one nbgrader process generates them all
        codes, out = run_all(found, [["generate_assignment", name, "--force"] for name in names], quiet=not verbose)
        for name, code in zip(names, codes):
            if code != 0:
                print(out, file=sys.stderr)
                return err(f"nbgrader could not generate {name}") and EXIT_FAILED
            print(f"generated exercises/{name}/{name}.ipynb")
        return EXIT_OK
    drift = []
    with tempfile.TemporaryDirectory(prefix="fxcourse-generate-") as tmp:
        codes, out = run_all(found, [_generate_argv(name, tmp) for name in names], quiet=True)
        for name, code in zip(names, codes):
            if code != 0:
                print(out, file=sys.stderr)
                return err(f"nbgrader could not generate {name}") and EXIT_FAILED
            drift += _drift(found, name, Path(tmp))
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
