"""`fxcourse watch`: check a notebook now and again each time it is saved."""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable

from autograder.course.console import EXIT_FAILED, EXIT_OK, EXIT_USAGE, err
from autograder.course.notebook import NotebookError
from autograder.course.root import find_course
from autograder.learner.check import print_report

__all__ = ["watch_loop", "watch"]


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


def watch(notebook: str, once: bool = False, interval: float = 1.0, visible_only: bool = False,
          course: str | None = None) -> int:
    """`fxcourse watch`: until Ctrl-C (exit 0), or `once` with `fxcourse check`'s exit code."""
    from autograder.grader.engine.grading import check_notebook

    path = Path(notebook)
    if not path.is_file() and once:
        return err(f"{path}: no such file")
    found = find_course(path, course)
    status = {"code": EXIT_OK}

    def run() -> None:
        stamp = time.strftime("%H:%M:%S")
        print(f"[{stamp}] checking {path} (a jailed worker: about 5-10 s) ...", flush=True)
        try:
            report = check_notebook(path, found, visible_only=visible_only)
        except NotebookError as exc:
            print(f"[{stamp}] cannot check it: {exc}", flush=True)
            status["code"] = EXIT_USAGE
            return
        print_report(report)
        status["code"] = EXIT_OK if report.score == report.max_score else EXIT_FAILED
        sys.stdout.flush()

    try:
        watch_loop(path, run, interval=interval, settle=min(0.5, interval), max_runs=1 if once else None,
                   say=lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        print("\nstopped watching", flush=True)
        return EXIT_OK
    return status["code"]
