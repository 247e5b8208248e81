"""What every section shares: the run's configuration, its result records, repeated timings, the machine."""
from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["ROOT", "Config", "Table", "Target", "Section", "Skip", "Timing", "timeit", "load_solutions",
           "paired_ratio", "machine", "load_average", "fmt_s", "fmt_x", "Job", "run_cmd", "children_cpu"]


@dataclass(frozen=True)
class Config:
    """How hard to measure: `smoke` shrinks every size and runs each timing once."""

    smoke: bool = False
    repeats: int = 5            # independent benchmark() calls per comparison; ratios are their median
    min_run_time: float = 0.4   # seconds per candidate per benchmark() call
    class_size: int = 20        # simulated students for the grading throughput
    class_assignment: str = "ex01_tracing"
    assignments: tuple[str, ...] = ()   # grading: which assignments (default: every one in solutions/)
    lesson_timeout: float = 600.0

    @classmethod
    def smoke_config(cls) -> "Config":
        return cls(smoke=True, repeats=1, min_run_time=0.02, class_size=1)


@dataclass
class Table:
    """One table of a section: column names and rows of already formatted cells."""

    title: str
    columns: list[str]
    rows: list[list[str]]


@dataclass
class Target:
    """A target, what was measured, and whether it was met (None: not applicable)."""

    name: str
    goal: str
    measured: str
    met: bool | None
    why: str = ""


@dataclass
class Section:
    """The outcome of one section: status "ok", "skipped" or "error", its tables, targets and raw data."""

    key: str
    title: str
    status: str = "ok"
    reason: str = ""
    tables: list[Table] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    plot: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Skip(Exception):
    """Raised by a section that cannot run here (for example: a solution notebook is not written yet)."""


# ------------------------------------------------------------------------------------------- timing

@dataclass
class Timing:
    """Median seconds per call and speedups vs the first candidate, each the median over `repeats` runs.

    `medians`/`speedups` are wall-clock (fxplayground.benchmark). `cpu_medians`/`cpu_speedups` are the same
    measurement with the calling thread's CPU clock (1-thread timings only, where torch computes on that
    thread): on a shared machine a call longer than the scheduler's time slice is often preempted, and its
    wall time then includes other processes' work, which favours the shorter candidate; CPU time does not
    count that. The thread's clock, not the process's, so that no helper thread's spinning is counted.
    """

    medians: dict[str, float]
    speedups: dict[str, float]
    spread: dict[str, tuple[float, float]]   # min and max of the per-run speedups
    repeats: int
    threads: int
    cpu_medians: dict[str, float] | None = None
    cpu_speedups: dict[str, float] | None = None
    cpu_spread: dict[str, tuple[float, float]] | None = None
    runs: list[dict[str, float]] = field(default_factory=list)       # wall medians of each run
    cpu_runs: list[dict[str, float]] = field(default_factory=list)

    def ratio(self, a: str, b: str, cpu: bool = False) -> tuple[float, tuple[float, float]]:
        """How many times faster `a` is than `b` (t_b / t_a within each run): the median and the range."""
        values = [r[b] / r[a] for r in (self.cpu_runs if cpu else self.runs)]
        return statistics.median(values), (min(values), max(values))

    def best(self, name: str) -> float:
        """The figure to judge by: CPU time where measured (1 thread), else wall-clock."""
        return (self.cpu_speedups or self.speedups)[name]


def _cpu_benchmark(candidates: Mapping[str, Callable[..., object]], *args: object, min_run_time: float,
                   threads: int) -> dict[str, float]:
    """fxplayground.benchmark's method (warm-up, 3 interleaved rounds, median) with the thread's CPU clock."""
    import torch
    import torch.utils.benchmark as tb

    timers = {name: tb.Timer(stmt="fn(*args)", globals={"fn": fn, "args": args}, num_threads=threads,
                             timer=time.thread_time) for name, fn in candidates.items()}
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    with torch.no_grad():
        for fn in candidates.values():
            fn(*args)
        for _ in range(3):
            for name, timer in timers.items():
                samples[name].extend(timer.blocked_autorange(min_run_time=min_run_time / 3).times)
    return {name: statistics.median(v) for name, v in samples.items()}


def timeit(candidates: Mapping[str, Callable[..., object]], *args: object, cfg: Config,
           threads: int = 1, cpu: bool | None = None) -> Timing:
    """`cfg.repeats` runs of fxplayground.benchmark (and, at 1 thread, of the CPU-clock twin), ratios per run."""
    from fxplayground import benchmark

    cpu = threads == 1 if cpu is None else cpu
    runs, cpu_runs = [], []
    for _ in range(cfg.repeats):
        runs.append(dict(benchmark(candidates, *args, min_run_time=cfg.min_run_time, threads=threads).medians))
        if cpu:
            cpu_runs.append(_cpu_benchmark(candidates, *args, min_run_time=cfg.min_run_time, threads=threads))

    def summary(rs: list[dict[str, float]]):
        names = list(candidates)
        per_run = {n: [r[names[0]] / r[n] for r in rs] for n in names}
        return ({n: statistics.median(r[n] for r in rs) for n in names},
                {n: statistics.median(v) for n, v in per_run.items()},
                {n: (min(v), max(v)) for n, v in per_run.items()})

    t = Timing(*summary(runs), repeats=len(runs), threads=threads, runs=runs, cpu_runs=cpu_runs)
    if cpu:
        t.cpu_medians, t.cpu_speedups, t.cpu_spread = summary(cpu_runs)
    return t


def paired_ratio(a: Callable[..., object], b: Callable[..., object], *args: object, seconds: float,
                 clock: Callable[[], float] = time.thread_time) -> tuple[float, tuple[float, float], int]:
    """t_b / t_a measured call against call: a and b run back to back (order alternating) for about `seconds`;
    the median of the per-pair ratios and their quartiles, and the number of pairs. Slow drifts of the
    machine (frequency, neighbours) hit both calls of a pair alike, so this resolves a few percent where
    block timings cannot."""
    import torch

    with torch.no_grad():
        a(*args), b(*args)
        t0 = time.perf_counter()
        a(*args), b(*args)
        pairs = max(20, int(seconds / max(time.perf_counter() - t0, 1e-6)))
        ratios = []
        for i in range(pairs):
            first, second = (a, b) if i % 2 == 0 else (b, a)
            c0 = clock()
            first(*args)
            c1 = clock()
            second(*args)
            c2 = clock()
            ta, tb = (c1 - c0, c2 - c1) if i % 2 == 0 else (c2 - c1, c1 - c0)
            if ta > 0 and tb > 0:
                ratios.append(tb / ta)
    q = statistics.quantiles(ratios, n=4)
    return statistics.median(ratios), (q[0], q[2]), len(ratios)


# ---------------------------------------------------------------------------------------- solutions

_SOLUTIONS: dict[str, dict[str, Any]] = {}


def load_solutions(assignment: str, names: list[str]) -> dict[str, Any]:
    """The learner-facing functions of solutions/<assignment>, run in-process; Skip when not there yet."""
    path = ROOT / "solutions" / assignment / f"{assignment}.ipynb"
    if not path.is_file():
        raise Skip(f"solutions/{assignment} not present")
    if assignment not in _SOLUTIONS:
        from autograder.course.notebook import answer_namespace
        try:
            _SOLUTIONS[assignment] = answer_namespace(path)
        except Exception as exc:  # a notebook being written right now may not run yet
            raise Skip(f"solutions/{assignment} does not run yet ({type(exc).__name__}: {str(exc)[:150]})")
    ns = _SOLUTIONS[assignment]
    missing = [n for n in names if not callable(ns.get(n))]
    if missing:
        raise Skip(f"solutions/{assignment} does not define {', '.join(missing)} yet")
    return {n: ns[n] for n in names}


# ------------------------------------------------------------------------------------------ machine

def load_average() -> str:
    try:
        return " / ".join(f"{v:.1f}" for v in os.getloadavg())
    except OSError:
        return "n/a"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return f"{int(line.split()[1]) / 2**20:.0f} GiB"
    except OSError:
        pass
    return "n/a"


def _git() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True,
                               timeout=30).stdout.strip()
        return f"{head}{' + uncommitted changes' if dirty else ''}" if head else "n/a"
    except (OSError, subprocess.TimeoutExpired):
        return "n/a"


def machine(command: str) -> dict[str, str]:
    """What the numbers depend on: CPU, cores, torch, the date, the command, and how busy the machine was."""
    import torch

    try:
        cores = f"{os.cpu_count()} logical ({len(os.sched_getaffinity(0))} usable)"
    except AttributeError:
        cores = f"{os.cpu_count()} logical"
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": command,
        "cpu": _cpu_model(),
        "cores": cores,
        "memory": _memory_gib(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "quantized engine": torch.backends.quantized.engine,
        "torch threads": "1 unless a table says otherwise (torch.set_num_threads(1) for the whole run)",
        "git": _git(),
        "load average at start (1/5/15 min)": load_average(),
    }


# ------------------------------------------------------------------------------------------- format

def fmt_s(seconds: float) -> str:
    """Seconds in the unit that reads best."""
    if seconds != seconds:
        return "n/a"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.1f} s"


def fmt_x(ratio: float, spread: tuple[float, float] | None = None) -> str:
    """A ratio as `2.31x`, with the range over repeats when there was more than one."""
    text = f"{ratio:.2f}x"
    if spread and abs(spread[1] - spread[0]) > 1e-12:
        text += f" ({spread[0]:.2f}–{spread[1]:.2f})"
    return text


def children_cpu() -> float:
    """CPU seconds (user + system) used so far by this process's finished children and their descendants."""
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class Job:
    """A command started now, its output in temporary files; `result()` waits for it and returns
    (wall seconds, CPU seconds of it and its descendants, the completed process), CPU from wait4's rusage."""

    def __init__(self, cmd: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> None:
        import tempfile

        self.cmd = cmd
        self._out, self._err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=self._out, stderr=self._err,
                                     stdin=subprocess.DEVNULL)

    def result(self, timeout: float = 1800) -> tuple[float, float, subprocess.CompletedProcess]:
        while True:
            pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - self.start > timeout:
                self.proc.kill()
            time.sleep(0.005)
        wall = time.perf_counter() - self.start
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        texts = []
        for f in (self._out, self._err):
            f.seek(0)
            texts.append(f.read().decode("utf-8", "replace"))
            f.close()
        return wall, usage.ru_utime + usage.ru_stime, subprocess.CompletedProcess(
            self.cmd, self.proc.returncode, texts[0], texts[1])


def run_cmd(cmd: list[str], *, cwd: Path, env: dict[str, str] | None = None,
            timeout: float = 1800) -> tuple[float, float, subprocess.CompletedProcess]:
    """Run a command to completion; (wall seconds, CPU seconds of it and its descendants, the process)."""
    return Job(cmd, cwd=cwd, env=env).result(timeout)


def python() -> str:
    return sys.executable
