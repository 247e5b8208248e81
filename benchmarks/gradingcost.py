"""What the fork server changes in grading, for the grading section: start-up phases before and after, memory
(RSS and PSS from /proc/PID/smaps_rollup) of a grading run's processes, and `fxcourse watch`'s re-check time.
"""
from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

UID_BASE = int(os.environ.get("FXCOURSE_JAIL_UID_BASE", "1990000000"))
MIB = 2**20


def _rollup(pid: int) -> dict[str, int] | None:
    """Rss, Pss and the private/shared split of one process, in bytes (None when it is gone)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            text = f.read()
    except OSError:
        return None
    out = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if rest.strip().endswith("kB"):
            out[key.strip()] = int(rest.split()[0]) * 1024
    return out


def _processes() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, uid, what it runs) of every process."""
    out = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"{entry.path}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"{entry.path}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            uid = os.stat(entry.path).st_uid
        except (OSError, ValueError, IndexError):
            continue
        out[int(entry.name)] = (ppid, uid, cmd)
    return out


def _kind(pid: int, procs: dict[int, tuple[int, int, str]]) -> str:
    ppid, uid, cmd = procs[pid]
    if uid >= UID_BASE or "autograder.grader.jail.worker" in cmd:
        return "worker"
    server = "autograder.grader.fork"  # the fork server's command line, which its forks keep
    if server in cmd:
        parent = procs.get(ppid, (0, 0, ""))[2]
        if server not in parent:
            return "fork server"
        grand = procs.get(procs.get(ppid, (0,))[0], (0, 0, ""))[2]
        return "manager" if server not in grand else "judge"  # a forked worker has its own uid (above)
    if "--judge" in cmd:
        return "judge"
    return "other"


class MemorySampler:
    """Samples every process below `root` (itself included) every `every` seconds while it runs."""

    def __init__(self, root: int, every: float = 0.2) -> None:
        self.root, self.every = root, every
        self.peak_total = 0
        self.peak_at: list[dict] = []
        self.peak_worker: dict[str, int] = {"Rss": 0, "Pss": 0, "private": 0}
        self.server: dict[str, int] = {}
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "MemorySampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.every)

    def sample(self) -> None:
        procs = _processes()
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in procs.items():
            children.setdefault(ppid, []).append(pid)
        tree, todo = [], [self.root]
        while todo:
            pid = todo.pop()
            if pid in procs:
                tree.append(pid)
            todo.extend(children.get(pid, []))
        rows = []
        for pid in tree:
            r = _rollup(pid)
            if r is None:
                continue
            private = r.get("Private_Clean", 0) + r.get("Private_Dirty", 0)
            rows.append({"pid": pid, "kind": _kind(pid, procs), "Rss": r.get("Rss", 0), "Pss": r.get("Pss", 0),
                         "private": private})
        self.samples += 1
        total = sum(r["Pss"] for r in rows)
        if total > self.peak_total:
            self.peak_total, self.peak_at = total, rows
        for r in rows:
            if r["kind"] == "worker" and r["Pss"] > self.peak_worker["Pss"]:
                self.peak_worker = {k: r[k] for k in ("Rss", "Pss", "private")}
            if r["kind"] == "fork server":
                workers = sum(1 for x in rows if x["kind"] == "worker")
                if workers and r["Rss"] > self.server.get("Rss", 0):  # imports done, workers sharing its pages
                    self.server = {k: r[k] for k in ("Rss", "Pss", "private")} | {"workers": workers}

    def summary(self) -> dict:
        kinds: dict[str, list[int]] = {}
        for r in self.peak_at:
            kinds.setdefault(r["kind"], []).append(r["Pss"])
        return {"peak_total_pss": self.peak_total, "peak_worker": self.peak_worker, "server": self.server,
                "at_peak": {k: {"processes": len(v), "pss": sum(v)} for k, v in sorted(kinds.items())},
                "samples": self.samples}


def mib(n: int | float) -> str:
    return f"{n / MIB:.0f}"


def worker_memory(fn) -> dict:
    """Run `fn()` (one grading step in this process) while sampling this process's tree."""
    with MemorySampler(os.getpid(), every=0.1) as s:
        fn()
    return s.summary()


def fork_phases(cells: list[dict], calls: list[dict], hide: list[str], a: str, repeats: int, median_run,
                smoke: bool = False) -> list[dict]:
    """Start-up before (a fresh process per worker) and after (forked from the fork server); --smoke: after only."""
    from autograder.grader.jail import forkserver
    from autograder.grader.jail.sandbox import run_worker

    def fresh(cells_, calls_):
        def go():
            os.environ["FXCOURSE_FORKSERVER"] = "0"
            try:
                run_worker(cells_, calls_, hide=hide)
            finally:
                os.environ.pop("FXCOURSE_FORKSERVER", None)
        return go

    def ready_server():  # a server started now, none kept from before
        forkserver.stop()
        forkserver.stop_kept_server()
        forkserver.prestart()
        forkserver._SERVER.start()
        with forkserver._SERVER.lock:
            forkserver._SERVER._wait_ready()

    before, after = "hardened, before: a fresh process per worker", "hardened, after: forked from the fork server"
    phases = [
        ("BEFORE: jailed worker as a fresh process, no cells (python, torch, IPython, checks imported)",
         "fresh worker, no cells", before, fresh([], [])),
        (f"BEFORE: jailed worker as a fresh process, {a}: all answer cells and checks", "fresh worker + cells",
         before, fresh(cells, calls)),
        ("AFTER: fork server start (imports once per grading process, until it answers ready)",
         "fork server start", after, ready_server),
        ("AFTER: jailed worker forked from the running fork server, no cells", "forked worker, no cells", after,
         lambda: run_worker([], [], hide=hide)),
        (f"AFTER: jailed worker forked from the running fork server, {a}: all answer cells and checks",
         "forked worker + cells", after, lambda: run_worker(cells, calls, hide=hide)),
    ]
    out = []
    for name, short, side, fn in phases:
        if smoke and side == before:
            continue
        try:
            wall, cpu = median_run(fn, repeats)
            out.append({"phase": name, "short": short, "side": side, "wall": wall, "cpu": cpu})
        except Exception as exc:
            out.append({"phase": name, "short": short, "side": side, "wall": float("nan"), "cpu": float("nan"),
                        "error": f"{type(exc).__name__}: {str(exc)[:120]}"})
    if smoke:
        return out
    by = {p["short"]: p for p in out}
    for short, empty, full in (("learner cells + checks (fresh)", "fresh worker, no cells", "fresh worker + cells"),
                               ("learner cells + checks (forked)", "forked worker, no cells", "forked worker + cells")):
        e, f = by.get(empty), by.get(full)
        if e and f and e["wall"] == e["wall"] and f["wall"] == f["wall"]:
            out.append({"phase": f"{a}'s answer cells and checks themselves: the difference of the two rows above "
                                 f"({short.split('(')[1][:-1]})", "short": short, "side": f["side"],
                        "wall": f["wall"] - e["wall"], "cpu": f["cpu"] - e["cpu"]})
    return out


_REPORT = re.compile(r"^\S+: [\d.]+ / [\d.]+ points")


def watch_recheck(cmd: list[str], notebook: Path, cwd: Path, env: dict[str, str], saves: int = 3,
                  timeout: float = 600) -> dict:
    """Start `fxcourse watch` (cmd), then save the notebook `saves` times: seconds from each save to its
    report's first line (includes the watch's polling: --interval and its settle time)."""
    lines: list[tuple[float, str]] = []
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            stdin=subprocess.DEVNULL)
    seen = threading.Condition()

    def read() -> None:
        for line in proc.stdout:
            with seen:
                lines.append((time.perf_counter(), line.rstrip("\n")))
                seen.notify_all()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()

    def wait_report(after: int) -> float | None:
        end = time.perf_counter() + timeout
        with seen:
            while time.perf_counter() < end:
                for t, line in lines[after:]:
                    if _REPORT.match(line):
                        return t
                if proc.poll() is not None:
                    return None
                seen.wait(0.5)
        return None

    first_start = time.perf_counter()
    first = wait_report(0)
    latencies = []
    try:
        if first is None:
            raise RuntimeError("the watch printed no report: " + " | ".join(l for _, l in lines[-3:]))
        data = notebook.read_bytes()
        for _ in range(saves):
            time.sleep(1.0)
            with seen:
                mark = len(lines)
            saved = time.perf_counter()
            tmp = notebook.with_suffix(".saving")
            tmp.write_bytes(data)
            os.replace(tmp, notebook)  # how editors save: a new file in its place (a new mtime)
            got = wait_report(mark)
            if got is None:
                raise RuntimeError("no report after a save: " + " | ".join(l for _, l in lines[-3:]))
            latencies.append(got - saved)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return {"first": first - first_start, "latencies": latencies, "median": statistics.median(latencies),
            "report_lines": [l for _, l in lines if _REPORT.match(l)]}


def python_cmd(*argv: str) -> list[str]:
    return [sys.executable, *argv]


def _proc_cpu(pid: int | None) -> tuple[float, float]:
    """(CPU seconds of process `pid` itself, of its children it has waited for), from /proc/PID/stat."""
    if pid is None:
        return 0.0, 0.0
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


def submission_cpu(root: Path, assignment: str, student: str, repeats: int) -> list[dict]:
    """CPU seconds one submission costs `fxcourse grade`'s one engine (autograder.grader.classroom.runner.grade_task, run
    here as a grading thread runs it, after a first, untimed one), by process: the grading thread itself
    (restore, the course's nbgrader preprocessors, JSON), its judge process (load the evidence, judge every
    test), and the jailed worker with its manager (the fork server's children, which it reaps). Wall: the whole
    task, the thread's waits on the judge, and run_worker (the worker's start, run and clean-up)."""
    from unittest import mock

    from autograder.grader.classroom import runner as engine
    from autograder.grader.jail import forkserver
    from autograder.grader.engine import grading
    from autograder.course.root import Course
    from autograder.grader.engine.secret import course_secret

    sources = {assignment: (root / "solutions" / assignment / f"{assignment}.ipynb").read_bytes()}
    files = {assignment: (root / "submitted" / student / assignment / f"{assignment}.ipynb").read_bytes()}
    secret = course_secret(Course(root)).decode()
    waits = {"judge": 0.0, "worker": 0.0}

    def timed(fn, key):
        def run(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                waits[key] += time.perf_counter() - t0
        return run

    def task() -> None:
        result = engine.grade_task(assignment, sources, files, student, secret=secret)
        if '"ok": true' not in result[:200]:
            raise RuntimeError(result[:200])

    old = os.getcwd()
    os.chdir(root)
    try:
        task()  # the judge started, the exercise's checks imported in the server
        server = forkserver.server_pid()
        judge = grading._judge().proc
        with mock.patch.object(grading, "run_worker", timed(grading.run_worker, "worker")), \
                mock.patch.object(grading._Judge, "load", timed(grading._Judge.load, "judge")), \
                mock.patch.object(grading._Judge, "judge", timed(grading._Judge.judge, "judge")):
            t0, w0, j0, s0 = time.thread_time(), time.perf_counter(), _proc_cpu(judge.pid)[0], _proc_cpu(server)[1]
            for _ in range(repeats):
                task()
            wall, thread = time.perf_counter() - w0, time.thread_time() - t0
        time.sleep(0.7)  # the server reaps its ended managers (and so counts their CPU) at least twice a second
        judged, forked = _proc_cpu(judge.pid)[0] - j0, _proc_cpu(server)[1] - s0
    finally:
        os.chdir(old)
    each = f"{assignment}, per submission (grade_task, mean of {repeats})"
    return [{"phase": f"{each}: the grading thread itself (restore, nbgrader preprocessors, JSON); wall: the whole "
                      "task", "short": "grading thread", "side": "hardened", "wall": wall / repeats,
             "cpu": thread / repeats},
            {"phase": f"{each}: its judge process (load the evidence, judge every test); wall: the thread's waits "
                      "on it", "short": "judge", "side": "hardened", "wall": waits["judge"] / repeats,
             "cpu": judged / repeats},
            {"phase": f"{each}: its jailed worker and the worker's manager (forked); wall: run_worker (start, run, "
                      "clean up)", "short": "worker + manager", "side": "hardened",
             "wall": waits["worker"] / repeats, "cpu": forked / repeats}]
