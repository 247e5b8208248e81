"""What `fxcourse report` prints while it works: on a terminal a live bar per stage (rich, as `fxcourse grade`
shows its grading), otherwise one line per stage with its size and, at its end, the seconds it took (wall-clock,
then the CPU seconds of this process and of the workers it ended)."""
from __future__ import annotations

import resource
import sys
import time

__all__ = ["Progress"]


class Progress:
    """Stages of work, each with a number of steps; `timings` keeps the seconds of each finished stage."""

    def __init__(self, live: bool | None = None, quiet: bool = False, console=None) -> None:
        self.quiet = quiet
        self.live = (sys.stdout.isatty() if live is None else live) and not quiet
        self.timings: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self._name: str | None = None
        self._start = self._cpu = 0.0
        self._bar = self._task = None
        if self.live:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeElapsedColumn

            self._bar = Bar(TextColumn("{task.description:<36}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=console or Console(), transient=False)
            self._bar.start()

    def stage(self, name: str, total: int) -> None:
        """Start the next stage (the one before ends)."""
        self._finish()
        self._name, self._start, self._cpu = name, time.perf_counter(), _cpu()
        if self._bar is not None:
            self._task = self._bar.add_task(name, total=max(total, 1))
        elif not self.quiet:
            print(f"  {name} ({total} step{'s' if total != 1 else ''}) ...", flush=True)

    def advance(self, steps: int = 1) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, advance=steps)

    def _finish(self) -> None:
        if self._name is None:
            return
        took, cpu = time.perf_counter() - self._start, _cpu() - self._cpu
        self.timings[self._name] = self.timings.get(self._name, 0.0) + took
        self.cpu[self._name] = self.cpu.get(self._name, 0.0) + cpu
        if self._bar is not None and self._task is not None:
            task = self._bar.tasks[-1]
            self._bar.update(self._task, completed=task.total)
        elif not self.quiet:
            print(f"  {self._name}: done ({took:.1f} s, {cpu:.1f} s CPU)", flush=True)
        self._name = None

    def close(self) -> None:
        self._finish()
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def _cpu() -> float:
    """CPU seconds of this process and of its ended children (the fingerprinting workers)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
