"""Time per test file: at the end of a run, build/test-times.txt lists every test file with its tests' time
(set-up, call and tear-down, module fixtures included), its span (first start to last end, which is what a file
costs the run when its tests share a worker) and its test count; the 15 slowest are printed in the summary.
Below the files, the 40 slowest tests, each with its set-up, call and tear-down (a module fixture's cost falls on
the test that first needed it), and the CPU seconds it cost: its test process's and those of the processes it
started and waited for (a process that is killed, or that ends after the test, is not counted). The machine's
cores are shared by both workers, so CPU, not wall time, is what a test takes from the others.

Works with pytest-xdist: the workers' reports reach the controller, which alone writes the table.
"""
from __future__ import annotations

import resource
import time
from collections import defaultdict
from pathlib import Path

import pytest


class Timing:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.busy: dict[str, float] = defaultdict(float)
        self.first: dict[str, float] = {}
        self.last: dict[str, float] = {}
        self.tests: dict[str, set[str]] = defaultdict(set)
        self.per_test: dict[str, dict[str, float]] = defaultdict(dict)
        self.cpu: dict[str, float] = defaultdict(float)
        self.started = time.time()

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        path = report.nodeid.split("::", 1)[0]
        self.busy[path] += report.duration
        self.tests[path].add(report.nodeid)
        self.per_test[report.nodeid][report.when] = report.duration
        self.cpu[report.nodeid] += dict(report.user_properties).get("cpu", 0.0)
        start = getattr(report, "start", 0) or (time.time() - report.duration)
        stop = getattr(report, "stop", 0) or time.time()
        self.first[path] = min(self.first.get(path, start), start)
        self.last[path] = max(self.last.get(path, stop), stop)

    def table(self) -> list[tuple[str, float, float, int]]:
        rows = [(p, self.busy[p], self.last[p] - self.first[p], len(self.tests[p])) for p in self.busy]
        return sorted(rows, key=lambda r: -r[1])

    def slowest_tests(self, n: int = 40) -> list[str]:
        rows = sorted(self.per_test.items(), key=lambda kv: -sum(kv[1].values()))[:n]
        lines = [f"{'s':>7} {'set-up':>7} {'CPU s':>7}  test (set-up + call + tear-down)"]
        lines += [f"{sum(t.values()):7.1f} {t.get('setup', 0.0):7.1f} {self.cpu[nodeid]:7.1f}  {nodeid}"
                  for nodeid, t in rows]
        return lines

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter) -> None:
        rows = self.table()
        if not rows:
            return
        wall = time.time() - self.started
        total = sum(r[1] for r in rows)
        workers = getattr(self.config.option, "numprocesses", None) or 1
        lines = [f"{'file':<40} {'tests s':>9} {'span s':>8} {'tests':>6}"]
        lines += [f"{p:<40} {busy:9.1f} {span:8.1f} {n:6d}" for p, busy, span, n in rows]
        lines.append(f"{'all files':<40} {total:9.1f} {wall:8.1f} {sum(r[3] for r in rows):6d}")
        out = Path(self.config.rootpath) / "build" / "test-times.txt"
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(f"# pytest run of {time.strftime('%Y-%m-%d %H:%M:%S')}, {workers} worker(s), "
                           f"{wall:.0f} s wall\n" + "\n".join(lines) + "\n\n" + "\n".join(self.slowest_tests()) + "\n",
                           encoding="utf-8")
            where = f" (all of them in {out.relative_to(self.config.rootpath)})"
        except OSError as err:
            where = f" (could not write {out}: {err})"
        terminalreporter.write_sep("=", f"slowest test files{where}")
        for line in [*lines[:16], lines[-1]] if len(rows) > 15 else lines:
            terminalreporter.write_line(line)


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class CpuPerPhase:
    """In the process that runs the tests: each phase's CPU seconds, sent with its report (user_properties
    travel from an xdist worker to the controller)."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        spent = _cpu() - item.stash.get(_STARTED, _cpu())
        outcome = yield
        outcome.get_result().user_properties.append(("cpu", round(spent, 3)))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item):
        item.stash[_STARTED] = _cpu()
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):
        item.stash[_STARTED] = _cpu()
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item):
        item.stash[_STARTED] = _cpu()
        yield


_STARTED = pytest.StashKey[float]()


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(CpuPerPhase(), "fxcourse-cpu")
    # Under xdist only the controller keeps the table: a worker (which has workerinput) reports to it.
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(Timing(config), "fxcourse-timing")
