"""Running nbgrader's own commands with the course's configuration and a time limit: generate, feedback, export.

Every nbgrader process the course starts is `python -c NBGRADER_LAUNCH ...` from this interpreter, with the
course root as nbgrader's CourseDirectory.root and autograder/nbgrader_config.py (the hardened pipelines) first
on the Jupyter config path.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.grader.console import EXIT_FAILED, EXIT_OK, EXIT_USAGE, err
from autograder.grader.root import PACKAGE_ROOT, Course, find_course

__all__ = ["NBGRADER_CONFIG", "NBGRADER_LAUNCH", "command", "time_limit", "run", "failed", "why",
           "known_assignments", "generate_into", "db_option", "generate", "feedback", "export"]

NBGRADER_CONFIG = Path(__file__).resolve().parents[1] / "nbgrader_config.py"
# `python -m nbgrader`, after `import autograder` (which spares it jsonschema's slow optional import).
NBGRADER_LAUNCH = "import sys, autograder; sys.argv[0] = 'nbgrader'; from nbgrader.apps.nbgraderapp import main; main()"


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
    cmd, env = command(course, *argv, db=db)
    limit = time_limit()
    try:
        return subprocess.run(cmd, cwd=course.root, env=env, text=True, timeout=limit,
                              capture_output=quiet, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:  # subprocess.run has killed it
        why = (f"nbgrader {argv[0]} did not finish within {limit:g} s and was stopped "
               "(FXCOURSE_NBGRADER_TIMEOUT sets the limit)")
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


def generate_into(course: Course, assignment: str, folder: str | Path, db: str | None = None
                  ) -> subprocess.CompletedProcess:
    """`nbgrader generate_assignment` into `folder` instead of exercises/, its gradebook `db` (default: one in
    `folder`), output captured."""
    return run(course, "generate_assignment", assignment, "--force", f"--CourseDirectory.release_directory={folder}",
               db=db or f"sqlite:///{folder}/gradebook.db", quiet=True)


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
    if not check:
        for name in names:
            r = run(found, "generate_assignment", name, "--force", quiet=not verbose)
            if r.returncode != 0:
                print((r.stdout or "") + (r.stderr or ""), file=sys.stderr)
                return err(f"nbgrader could not generate {name}") and EXIT_FAILED
            print(f"generated exercises/{name}/{name}.ipynb")
        return EXIT_OK
    drift = []
    with tempfile.TemporaryDirectory(prefix="fxcourse-generate-") as tmp:
        for name in names:
            r = generate_into(found, name, tmp)
            if r.returncode != 0:
                print(r.stdout + r.stderr, file=sys.stderr)
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
