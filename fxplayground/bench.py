"""A small, honest benchmark helper: medians from torch.utils.benchmark, reported as ratios."""
from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass
from types import ModuleType
from typing import Callable, Mapping

import torch

__all__ = ["BenchResult", "benchmark"]


def _import_quietly(name: str) -> ModuleType:
    """Import `name` with torch's C++-extension logger quieted: on a CUDA build of torch run on a CPU, the first
    import of torch.utils.cpp_extension (by torch.utils.benchmark, or by inductor at a lesson's first
    torch.compile) logs that no CUDA runtime was found, which says nothing about the CPU code of a lesson."""
    extension_log = logging.getLogger("torch.utils.cpp_extension")
    level = extension_log.level
    extension_log.setLevel(logging.ERROR)
    try:
        return importlib.import_module(name)
    finally:
        extension_log.setLevel(level)


# On a CUDA build, imported here and quietly, before a lesson's first compile would import it and log; the CPU
# build, which logs nothing, does not pay for the import (about a second) until it benchmarks.
if torch.version.cuda is not None:
    _import_quietly("torch.utils.cpp_extension")


@dataclass(frozen=True)
class BenchResult:
    """Median seconds per call for each candidate, and speedups relative to the baseline (the first)."""

    medians: dict[str, float]
    iqrs: dict[str, float]
    baseline: str
    threads: int

    def speedup(self, name: str) -> float:
        """How many times faster `name` is than the baseline (>1 means faster)."""
        return self.medians[self.baseline] / self.medians[name]

    def __str__(self) -> str:
        width = max(len(n) for n in self.medians)
        lines = [f"{'':{width}}  median (us)    IQR (us)   speedup vs {self.baseline}   [{self.threads} thread(s)]"]
        for name, m in self.medians.items():
            lines.append(f"{name:{width}}  {m * 1e6:11.1f}  {self.iqrs[name] * 1e6:10.1f}   {self.speedup(name):6.2f}x")
        return "\n".join(lines)

    __repr__ = __str__


def benchmark(
    candidates: Mapping[str, Callable[..., object]],
    *args: object,
    min_run_time: float = 0.2,
    threads: int = 1,
) -> BenchResult:
    """Time each callable on `args` under no_grad, interleaving rounds so machine noise hits all alike."""
    if not candidates:
        raise ValueError("benchmark needs at least one candidate")
    tb = _import_quietly("torch.utils.benchmark")  # here, not with the package: it costs a second to import

    timers = {
        name: tb.Timer(stmt="fn(*args)", globals={"fn": fn, "args": args}, num_threads=threads, label=name)
        for name, fn in candidates.items()
    }
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    rounds = 3
    before = torch.get_num_threads()
    torch.set_num_threads(threads)  # warm up at the thread count we time at (compiled code is guarded on it)
    try:
        with torch.no_grad():
            for fn in candidates.values():
                fn(*args)
            for _ in range(rounds):
                for name, timer in timers.items():
                    m = timer.blocked_autorange(min_run_time=min_run_time / rounds)
                    samples[name].extend(m.times)
    finally:
        torch.set_num_threads(before)
    medians, iqrs = {}, {}
    for name, times in samples.items():
        t = torch.tensor(times, dtype=torch.float64)
        medians[name] = float(t.median())
        iqrs[name] = float(t.quantile(0.75) - t.quantile(0.25))
    return BenchResult(medians, iqrs, next(iter(candidates)), threads)
