"""The exit codes and the one-line error every `fxcourse` command shares.

Exit codes: 0 success (for `check`: full marks), 1 graded or ran but something failed (for `check`: points
lost), 2 bad input or usage (missing file, not a notebook, unknown assignment), 130 interrupted (Ctrl-C).

A command that waits on other threads' work (graders, a Dask client) takes Ctrl-C through `deferred_interrupt`:
a KeyboardInterrupt raised inside a library's locked section (a future's condition, Dask's as_completed) can
leave the lock held, and the next call then waits for ever. The first Ctrl-C is noted and raised where the
command next looks; a second one interrupts at once.
"""
from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager

__all__ = ["EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INTERRUPTED", "err", "deferred_interrupt"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def err(msg: str) -> int:
    """Print `fxcourse: error: msg` on stderr; returns EXIT_USAGE."""
    print(f"fxcourse: error: {msg}", file=sys.stderr)
    return EXIT_USAGE


@contextmanager
def deferred_interrupt():
    """While inside, the first Ctrl-C (SIGINT) raises nothing where it lands; the `check()` this yields raises
    KeyboardInterrupt once one came, so the caller stops where it chooses. The Ctrl-C after it interrupts at once
    (the handler before is back). Outside the main thread signals cannot be caught: `check` then does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return
    came = threading.Event()
    before = signal.getsignal(signal.SIGINT)

    def note(signum, frame) -> None:
        came.set()
        signal.signal(signal.SIGINT, before)

    def check() -> None:
        if came.is_set():
            came.clear()
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, note)
    try:
        yield check
    finally:
        signal.signal(signal.SIGINT, before)
