"""The learner's loop on the command line: progress, watch, reset, hint (registered by autograder.cli).

    fxcourse progress [--json] [--visible-only]   which exercises and quiz questions pass (real grading)
    fxcourse watch NOTEBOOK [--once]              check again each time the notebook is saved
    fxcourse reset NOTEBOOK [--yes]               put the released exercise back, after a backup
    fxcourse hint NOTEBOOK [FUNCTION]             the next hint (state in .fxcourse-hints.json beside it)

Nothing here overwrites a working copy except `reset`, which asks first (or takes --yes) and keeps a timestamped
backup beside it (`exNN_topic.backup-YYYYMMDD-HHMMSS.ipynb`; nbgrader skips notebooks it does not know).

Where the released copy comes from, for `reset`: in this repository exercises/ *is* the working copy, so the
release is rebuilt exactly as `fxcourse generate` makes it: `nbgrader generate_assignment` from solutions/ into a
temporary folder (the same call as `fxcourse generate --check`; CI proves that this equals the committed
exercises/). A learner's copy of the course without solutions/ falls back to the committed file in git HEAD,
used only if every answer cell in it is still a stub (a learner who commits their answers would otherwise get
their own work back).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from autograder.grader.notebook import NotebookError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
HINT_STATE = ".fxcourse-hints.json"


def _cli():
    from autograder import cli  # imported late: cli imports this module to register the commands

    return cli


def _assignment_for(path: Path, course) -> str:
    """The assignment a notebook belongs to: its file or folder name, else what its answer cells define."""
    known = course.assignments()
    for name in (path.stem, path.parent.name):
        if name in known:
            return name
    from autograder.grader.grading import identify_assignment
    from autograder.grader.notebook import read_notebook

    return identify_assignment(read_notebook(path), path, course)


# ------------------------------------------------------------------------------------------ progress

def cmd_progress(args: argparse.Namespace) -> int:
    from autograder.learner.progress import collect

    course = _cli()._course(args)
    if not course.assignments():
        return _cli()._err(f"no exercises found in {course.root} (expected exercises/ or solutions/); "
                           "pass --course DIR")
    report = collect(course, visible_only=args.visible_only,
                     log=lambda line: print(line, file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        print(report.table())
    return EXIT_FAILED if any(e.status == "error" for e in report.exercises) else EXIT_OK


# --------------------------------------------------------------------------------------------- watch

def _signature(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def watch_loop(path: Path, run: Callable[[], object], *, interval: float = 1.0, settle: float = 0.5,
               max_runs: int | None = None, say: Callable[[str], object] = print,
               sleep: Callable[[float], object] = time.sleep) -> int:
    """Call `run()` now and again after each save of `path`; return after `max_runs` runs (None: never).

    Polls the file's mtime and size every `interval` seconds. Debounce: after a change is seen, the file must
    stay the same for `settle` seconds before `run()` is called, so an editor writing in several steps (or
    saving twice in quick succession) causes one check. A save during a check causes one more check after it.
    """
    runs = 0
    seen = _signature(path)
    while True:
        run()
        runs += 1
        if max_runs is not None and runs >= max_runs:
            return runs
        say(f"watching {path} (checks again on each save; Ctrl-C to stop)")
        while True:
            sleep(interval)
            now = _signature(path)
            if now == seen:
                continue
            # Changed: wait until it has been stable for `settle` seconds.
            while True:
                sleep(settle)
                later = _signature(path)
                if later == now:
                    break
                now = later
            seen = now
            if now is None:
                say(f"{path} is gone; waiting for it to come back")
                continue
            break


def cmd_watch(args: argparse.Namespace) -> int:
    from autograder.grader.grading import check_notebook

    cli = _cli()
    path = Path(args.notebook)
    if not path.is_file() and args.once:
        return cli._err(f"{path}: no such file")
    course = cli._course(args, path)
    status = {"code": EXIT_OK}

    def run() -> None:
        stamp = time.strftime("%H:%M:%S")
        print(f"[{stamp}] checking {path} (a jailed worker: about 5-10 s) ...", flush=True)
        try:
            report = check_notebook(path, course, visible_only=args.visible_only)
        except NotebookError as exc:
            print(f"[{stamp}] cannot check it: {exc}", flush=True)
            status["code"] = EXIT_USAGE
            return
        cli._print_report(report)
        status["code"] = EXIT_OK if report.score == report.max_score else EXIT_FAILED
        sys.stdout.flush()

    try:
        watch_loop(path, run, interval=args.interval, settle=min(0.5, args.interval),
                   max_runs=1 if args.once else None, say=lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        print("\nstopped watching", flush=True)
        return EXIT_OK
    return status["code"]


# --------------------------------------------------------------------------------------------- reset

def _generated_release(course, assignment: str, tmp: Path) -> Path:
    """The released notebook as `fxcourse generate` makes it, generated into `tmp`."""
    cli = _cli()
    r = cli._nbgrader(course, "generate_assignment", assignment, "--force",
                      f"--CourseDirectory.release_directory={tmp}", db=f"sqlite:///{tmp}/gradebook.db", quiet=True)
    fresh = tmp / assignment / f"{assignment}.ipynb"
    if r.returncode != 0 or not fresh.is_file():
        last = [l for l in ((r.stdout or "") + (r.stderr or "")).splitlines() if l.strip()][-2:]
        raise RuntimeError(f"nbgrader could not generate {assignment}: {' | '.join(last)[:300]}")
    return fresh


def _git_release(course, path: Path, tmp: Path) -> Path:
    """The committed copy of the notebook in git HEAD, if it is still as released (every answer a stub)."""
    from autograder.grader.notebook import STUB, answer_cells, parse_notebook

    if shutil.which("git") is None:
        raise RuntimeError("there is no solutions/ to generate the release from, and git is not installed")
    top = subprocess.run(["git", "-C", str(path.parent), "rev-parse", "--show-toplevel"], capture_output=True,
                         text=True)
    if top.returncode != 0:
        raise RuntimeError("there is no solutions/ to generate the release from, and this is not a git checkout")
    try:
        rel = path.resolve().relative_to(Path(top.stdout.strip()).resolve()).as_posix()
    except ValueError:
        raise RuntimeError(f"there is no solutions/ to generate the release from, and {path} is outside the "
                           "git checkout") from None
    shown = subprocess.run(["git", "-C", top.stdout.strip(), "show", f"HEAD:{rel}"], capture_output=True)
    if shown.returncode != 0:
        raise RuntimeError(f"there is no solutions/ to generate the release from, and git HEAD has no {rel}")
    nb = parse_notebook(shown.stdout, f"HEAD:{rel}")
    stub_line = STUB.splitlines()[-1]
    if not all(stub_line in c.source for c in answer_cells(nb)):
        raise RuntimeError(f"git HEAD's {rel} has answers in it (it was committed after work began), so it is not "
                           "the release; get a fresh copy of the course")
    out = tmp / path.name
    out.write_bytes(shown.stdout)
    return out


def release_copy(course, assignment: str, path: Path, tmp: Path) -> tuple[Path, str]:
    """(a released copy of the exercise inside `tmp`, where it came from)."""
    if (course.solutions / assignment / f"{assignment}.ipynb").is_file():
        return _generated_release(course, assignment, tmp), f"generated from solutions/{assignment} with nbgrader"
    return _git_release(course, path, tmp), "the committed copy in git HEAD"


def _backup_path(path: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate = path.with_name(f"{path.stem}.backup-{stamp}{path.suffix}")
    n = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.stem}.backup-{stamp}-{n}{path.suffix}")
        n += 1
    return candidate


def _confirm(question: str) -> bool:
    try:
        answer = input(question)
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def cmd_reset(args: argparse.Namespace) -> int:
    cli = _cli()
    path = Path(args.notebook)
    course = cli._course(args, path)
    try:
        assignment = _assignment_for(path, course)
    except NotebookError as exc:
        return cli._err(f"{exc} (name the released file, exercises/exNN_topic/exNN_topic.ipynb)")
    if (course.solutions / assignment / f"{assignment}.ipynb").is_file():
        print(f"generating the released {assignment} with nbgrader (a few seconds) ...", flush=True)
    with tempfile.TemporaryDirectory(prefix="fxcourse-reset-") as tmp:
        try:
            fresh, origin = release_copy(course, assignment, path, Path(tmp))
        except RuntimeError as exc:
            print(f"fxcourse: error: cannot get the released {assignment}: {exc}", file=sys.stderr)
            return EXIT_FAILED
        if path.is_file() and path.read_bytes() == fresh.read_bytes():
            print(f"{path} is already as released: nothing to do")
            return EXIT_OK
        backup = _backup_path(path) if path.exists() else None
        if not args.yes:
            kept = f"; your current file is kept as {backup.name}" if backup else ""
            if not _confirm(f"Replace {path} with the released {assignment} ({origin}){kept}? [y/N] "):
                print("nothing changed")
                return EXIT_FAILED
        if backup is not None:
            shutil.copy2(path, backup)
            print(f"backup: {backup}")
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.fxcourse-reset")
        shutil.copyfile(fresh, partial)
        os.replace(partial, path)  # atomic: the working copy is either the old file or the new one
    print(f"restored {path} from the release ({origin})")
    return EXIT_OK


# ---------------------------------------------------------------------------------------------- hint

def _read_state(file: Path) -> dict:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_state(file: Path, state: dict) -> None:
    partial = file.with_name(file.name + ".tmp")
    partial.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(partial, file)


def cmd_hint(args: argparse.Namespace) -> int:
    from autograder.inline import function_index, hints_for, next_hint

    cli = _cli()
    path = Path(args.notebook)
    if not path.is_file():
        return cli._err(f"{path}: no such file")
    course = cli._course(args, path)
    try:
        assignment = _assignment_for(path, course)
    except NotebookError as exc:
        return cli._err(str(exc))
    functions = function_index().get(assignment, ())
    state_file = path.parent / HINT_STATE
    state = _read_state(state_file)
    shown: dict = state.get(assignment) if isinstance(state.get(assignment), dict) else {}
    count = lambda f: shown.get(f) if isinstance(shown.get(f), int) else 0  # noqa: E731
    if args.function is None:
        with_hints = [f for f in functions if hints_for(assignment, f)]
        if not with_hints:
            print(f"No hints are written for {assignment} yet; `fxcourse check {path}` gives a hint per failing test.")
            return EXIT_FAILED
        left = [f for f in with_hints if count(f) < len(hints_for(assignment, f))]
        function = left[0] if left else with_hints[-1]
        print("hints shown so far: " + ", ".join(f"{f} {count(f)}/{len(hints_for(assignment, f))}" for f in with_hints))
        print(f"(name a function for its own hints: fxcourse hint {path} FUNCTION)")
    else:
        function = args.function
        if function not in functions:
            return cli._err(f"{assignment} has no graded function {function!r}; expected one of {', '.join(functions)}")
    view = next_hint(assignment, function, count(function))
    print(view)
    if view.total == 0 or view.exhausted:
        return EXIT_FAILED
    shown[function] = view.number
    state[assignment] = shown
    _write_state(state_file, state)
    return EXIT_OK


# ------------------------------------------------------------------------------------------ register

def add_learner_commands(sub: argparse._SubParsersAction) -> None:
    """Add the learner's subcommands to the fxcourse parser (cli.py adds --course to each)."""
    s = sub.add_parser("progress", help="which exercises and quiz questions pass (grades every working copy)",
                       description="Grade each exercises/exNN_topic/exNN_topic.ipynb with the real grader (a jailed "
                                   "worker per notebook, about 5-10 s each) and show what passes.")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--visible-only", action="store_true", help="only the tests a learner can see")
    s.set_defaults(func=cmd_progress)

    s = sub.add_parser("watch", help="check a notebook again each time it is saved",
                       description="Check NOTEBOOK now and after every save (polls its modification time). "
                                   "Ctrl-C stops watching.")
    s.add_argument("notebook")
    s.add_argument("--once", action="store_true", help="check once and exit with fxcourse check's exit code")
    s.add_argument("--interval", type=float, default=1.0, help="seconds between looks at the file (default 1)")
    s.add_argument("--visible-only", action="store_true", help="only the tests a learner can see")
    s.set_defaults(func=cmd_watch)

    s = sub.add_parser("reset", help="restore an exercise as released (keeps a backup of your copy)",
                       description="Replace NOTEBOOK with the released exercise, after a timestamped backup beside it. "
                                   "Asks first unless --yes.")
    s.add_argument("notebook")
    s.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    s.set_defaults(func=cmd_reset)

    s = sub.add_parser("hint", help="the next hint for a function of an exercise",
                       description="Print the next hint not yet shown (without FUNCTION: for the first function "
                                   "with hints left); which ones were shown is kept in "
                                   f"{HINT_STATE} beside the notebook. Exit 0 when a new hint was shown, 1 when "
                                   "none is left.")
    s.add_argument("notebook")
    s.add_argument("function", nargs="?")
    s.set_defaults(func=cmd_hint)
