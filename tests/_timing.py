"""Time per test file: at the end of a run, build/test-times.txt lists every test file with its tests' time
(set-up, call and tear-down, module fixtures included), its span (first start to last end, which is what a file
costs the run when its tests share a worker) and its test count; the 15 slowest are printed in the summary.
Below the files, the 40 slowest tests, each with its set-up, call and tear-down (a module fixture's cost falls on
the test that first needed it).

Works with pytest-xdist: the workers' reports reach the controller, which alone writes the table.
"""
from __future__ import annotations

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
        self.started = time.time()

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        path = report.nodeid.split("::", 1)[0]
        self.busy[path] += report.duration
        self.tests[path].add(report.nodeid)
        self.per_test[report.nodeid][report.when] = report.duration
        start = getattr(report, "start", 0) or (time.time() - report.duration)
        stop = getattr(report, "stop", 0) or time.time()
        self.first[path] = min(self.first.get(path, start), start)
        self.last[path] = max(self.last.get(path, stop), stop)

    def table(self) -> list[tuple[str, float, float, int]]:
        rows = [(p, self.busy[p], self.last[p] - self.first[p], len(self.tests[p])) for p in self.busy]
        return sorted(rows, key=lambda r: -r[1])

    def slowest_tests(self, n: int = 40) -> list[str]:
        rows = sorted(self.per_test.items(), key=lambda kv: -sum(kv[1].values()))[:n]
        lines = [f"{'s':>7} {'set-up':>7}  test (set-up + call + tear-down)"]
        lines += [f"{sum(t.values()):7.1f} {t.get('setup', 0.0):7.1f}  {nodeid}" for nodeid, t in rows]
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


def pytest_configure(config: pytest.Config) -> None:
    # Under xdist only the controller keeps the table: a worker (which has workerinput) reports to it.
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(Timing(config), "fxcourse-timing")
