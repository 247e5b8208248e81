"""Section: grading on a Dask cluster. A class of correct ex01 submissions graded by `fxcourse grade --jobs 1`,
`--jobs 2` and `--cluster local:2` (two local Dask worker processes); the cost per submission; the scheduler's
overhead per task (tasks that carry a real task's payload and do nothing); the coordinator's gradebook write
per submission; and, from the measured throughput per core, a projection for 500 students x 11 assignments on
1, 4 and 16 machines of 2 cores.

Everything runs on a temporary course root (solutions/ex01 copied, `fxcourse generate` run there).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from autograder.grader.jail import forkserver

from .common import ROOT, Config, Job, Section, Skip, Table, Target, load_average, run_cmd
from .grading import _answers, _py, _submit

TITLE = "Grading on a Dask cluster: --jobs 1, --jobs 2 and --cluster local:2, and a projection"
A = "ex01_tracing"
STUDENTS, ASSIGNMENTS, CORES = 500, 11, 2


def _echo(assignment: str, sources: dict, files: dict, student: str) -> str:
    """A task with a real task's arguments that does no grading: what the scheduler costs per task."""
    return json.dumps({"ok": True, "bytes": sum(len(v) for v in [*sources.values(), *files.values()])})


def _class(tmp: Path, size: int) -> tuple[Path, dict[str, str], list[str]]:
    root = tmp / "course"
    shutil.copytree(ROOT / "solutions" / A, root / "solutions" / A)
    env = dict(os.environ, PYTHONWARNINGS="ignore", JUPYTER_CONFIG_DIR=str(tmp / "jupyter-config"))
    env.pop("JUPYTER_CONFIG_PATH", None)
    _, _, r = run_cmd(_py("-m", "autograder.cli", "generate", A, "--course", str(root)), cwd=root, env=env,
                      timeout=600)
    if r.returncode != 0:
        raise Skip(f"solutions/{A}: `fxcourse generate` failed: {(r.stdout + r.stderr).strip()[-200:]}")
    release, answers = root / "exercises" / A / f"{A}.ipynb", _answers(root / "solutions" / A / f"{A}.ipynb")
    students = [f"k{i:03d}" for i in range(1, size + 1)]
    for s in students:
        _submit(release, answers, root / "submitted" / s / A / f"{A}.ipynb")
    return root, env, students


def _scores(root: Path, students: list[str]) -> list[str]:
    """Students not at full marks (or not in the gradebook)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "fxcourse") as gb:
        got = {s.student_id: (float(s.score), float(s.max_score)) for s in gb.assignment_submissions(A)}
    return [s for s in students if s not in got or got[s][0] != got[s][1] or got[s][1] == 0]


def _overhead(root: Path, tasks: int) -> dict[str, float]:
    """Scheduler round trips on a local:2 cluster: start-up, `tasks` no-op tasks at once, and one at a time."""
    from distributed import as_completed

    from autograder.grader.classroom.cluster import open_cluster

    source = (root / "solutions" / A / f"{A}.ipynb").read_bytes()
    sub = (root / "submitted" / "k001" / A / f"{A}.ipynb").read_bytes()
    t0 = time.perf_counter()
    client, cluster = open_cluster("local:2")
    try:
        client.wait_for_workers(2, timeout=300)
        start = time.perf_counter() - t0
        client.submit(_echo, A, {A: source}, {A: sub}, "warm", pure=False).result()
        t1 = time.perf_counter()
        futures = [client.submit(_echo, A, {A: source}, {A: sub}, f"s{i}", pure=False) for i in range(tasks)]
        for f in as_completed(futures):
            json.loads(f.result())
        batch = (time.perf_counter() - t1) / tasks
        trips = []
        for i in range(max(5, tasks // 10)):
            t2 = time.perf_counter()
            client.submit(_echo, A, {A: source}, {A: sub}, f"one{i}", pure=False).result()
            trips.append(time.perf_counter() - t2)
    finally:
        client.close()
        cluster.close()
    return {"start": start, "per_task_batch": batch, "round_trip": statistics.median(trips),
            "payload_kib": (len(source) + len(sub)) / 1024, "tasks": tasks}


def _write_cost(root: Path, writes: int) -> float:
    """Seconds per submission for the coordinator's one-transaction gradebook write (SQLite), from a real
    task's result graded here once."""
    from autograder.grader.classroom.runner import Gradebook, grade_task

    source = (root / "solutions" / A / f"{A}.ipynb").read_bytes()
    sub = (root / "submitted" / "k001" / A / f"{A}.ipynb").read_bytes()
    result = json.loads(grade_task(A, {A: source}, {A: sub}, "k001"))
    if not result.get("ok"):
        raise RuntimeError(f"grade_task failed: {result.get('error')}")
    db = root / "write-bench.db"
    shutil.copy(root / "gradebook.db", db)
    with Gradebook(f"sqlite:///{db}") as gb:
        t0 = time.perf_counter()
        for i in range(writes):
            gb.write(A, f"w{i:03d}", result["notebooks"], "0" * 64)
        return (time.perf_counter() - t0) / writes


def run(cfg: Config) -> Section:
    sec = Section("cluster", TITLE)
    if not (ROOT / "solutions" / A / f"{A}.ipynb").is_file():
        raise Skip(f"solutions/{A} not present")
    size = 2 if cfg.smoke else max(40, cfg.class_size)
    tmp = Path(tempfile.mkdtemp(prefix="fxcourse-bench-cluster-"))
    try:
        root, env, students = _class(tmp, size)
        return _measure(sec, cfg, root, env, students)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _measure(sec: Section, cfg: Config, root: Path, env: dict, students: list[str]) -> Section:
    load = load_average()
    ways = [("jobs1", "`fxcourse grade --jobs 1`", ["--jobs", "1", "--regrade"], 1),
            ("jobs2", "`fxcourse grade --jobs 2`", ["--jobs", "2", "--regrade"], 2),
            ("cluster", "`fxcourse grade --cluster local:2`", ["--cluster", "local:2", "--regrade"], 2)]
    runs, rows = {}, []
    for key, label, argv, cores in ways:  # each cold: no fork server before it, its own ends with it
        forkserver.stop_kept_server()
        wall, cpu, r = Job(_py("-m", "autograder.cli", "grade", A, *argv, "--course", str(root)), cwd=root,
                           env={**env, "FXCOURSE_FORKSERVER_KEEP": "0"}).result(timeout=7200)
        bad = _scores(root, students)
        tasks = [float(x) for x in re.findall(r": graded \(([\d.]+) s\)", r.stdout)]
        runs[key] = {"wall": wall, "cpu": cpu, "not_full": bad, "exit": r.returncode, "cores": cores,
                     "task_median": statistics.median(tasks) if tasks else float("nan")}
        print(f"      {len(students)} students, {label}: {wall:.0f} s", flush=True)
        n = len(students)
        rows.append([label, str(n), f"{wall:.1f}", f"{cpu:.1f}", f"{wall / n:.2f}", f"{cpu / n:.2f}",
                     f"{wall * cores / n:.2f}", f"{60 * n / wall:.1f}",
                     "all full marks" if not bad and r.returncode == 0 else
                     f"{len(bad)} not at full marks, exit {r.returncode}"])
    sec.tables.append(Table(
        f"a class of {len(students)} correct {A} submissions, graded three ways on this machine "
        f"({os.cpu_count()} cores, load average (1/5/15 min) {load} when it started); CPU: the command and all "
        "its child processes (the fork server, jailed workers and judges; Dask workers), each run cold (it starts "
        "the fork server); the cluster's wall time includes starting its two workers",
        ["how", "submissions", "wall s", "CPU s", "wall s per submission", "CPU s per submission",
         "core-seconds per submission (wall x cores)", "submissions per minute", "scores"], rows))

    tasks = 20 if cfg.smoke else 200
    ov = _overhead(root, tasks)
    write = _write_cost(root, 5 if cfg.smoke else 40)
    c = runs["cluster"]
    sec.tables.append(Table(
        "what the cluster adds, local:2 on this machine",
        ["what", "measured"],
        [["starting a local:2 cluster (scheduler + 2 worker processes, until both are up)", f"{ov['start']:.1f} s"],
         [f"scheduler overhead per task: {ov['tasks']} no-op tasks carrying a real task's "
          f"{ov['payload_kib']:.0f} KiB (source + submission), submitted at once, wall per task",
          f"{1000 * ov['per_task_batch']:.1f} ms"],
         ["one no-op task's round trip alone (submit, run, result), median", f"{1000 * ov['round_trip']:.1f} ms"],
         ["the coordinator's gradebook write per submission (one transaction, SQLite)", f"{1000 * write:.1f} ms"],
         ["grading one submission on a worker (median over the class, as the worker timed it)",
          f"{c['task_median']:.2f} s"]]))

    # Projection from the cluster run's throughput per core. On a dedicated core a submission costs its CPU
    # seconds (grading is CPU-bound); this machine is shared, so its wall time per core is an upper bound.
    n = len(students)
    per_core = max(c["cpu"] / n, 1e-9)
    per_core_wall = max((c["wall"] - ov["start"]) * c["cores"] / n, 1e-9)
    total = STUDENTS * ASSIGNMENTS
    proj = []
    for machines in (1, 4, 16):
        workers = machines * CORES
        hours = (total * per_core / workers + ov["start"] + total * write) / 3600
        hours_wall = (total * per_core_wall / workers + ov["start"] + total * write) / 3600
        proj.append([str(machines), str(workers), f"{total:,}", f"{hours:.1f} h", f"{hours_wall:.1f} h",
                     f"{total * write / 60:.1f} min"])
    sec.tables.append(Table(
        f"projection: {STUDENTS} students x {ASSIGNMENTS} assignments = {total:,} notebooks on machines of "
        f"{CORES} cores (one Dask worker process of one thread per core), from the cluster run above: "
        f"{per_core:.2f} CPU seconds per {A} submission (every process: coordinator, Dask workers, jails), and "
        f"{per_core_wall:.2f} core-seconds of wall time per submission on this shared machine",
        ["machines", "workers", "notebooks", "whole run, dedicated cores (CPU cost)",
         "whole run at this machine's wall cost (upper bound)", "of which gradebook writes (coordinator)"],
        proj))
    sec.notes.append(
        f"Assumptions of the projection: every notebook costs what a correct {A} cost here (the other "
        "assignments cost more to grade: section 5's table gives each one's time, scale by the ratio); a "
        f"dedicated core grades at the CPU cost measured ({per_core:.2f} s per submission, the cluster's start-up "
        "and the scheduler's overhead included), since grading is CPU-bound, while the wall-cost column keeps "
        "this shared machine's waiting in; workers scale linearly, since tasks share nothing and the scheduler "
        "spends milliseconds per task against seconds of grading; the coordinator writes one result at a time "
        "and its writes are added in full, as if they overlapped nothing; one cluster start per run.")
    if not cfg.smoke:
        j1, j2 = runs["jobs1"]["wall"], runs["jobs2"]["wall"]
        sec.notes.append(
            f"On this machine's 2 cores, `--cluster local:2` took {c['wall'] / j2:.2f}x the time of `--jobs 2` and "
            f"{c['wall'] / j1:.2f}x that of `--jobs 1` for the class. Both grade each submission with the same task "
            "(a jailed worker and a judge forked from the fork server, which the Dask workers of a machine share); "
            "the cluster adds its start (a scheduler and two worker processes) and a scheduler round trip per task.")
    sec.targets.append(Target(
        f"class of {n}: every submission graded right every way", "all full marks, exit 0",
        "; ".join(f"{k}: {len(v['not_full'])} not full, exit {v['exit']}" for k, v in runs.items()),
        not any(v["not_full"] or v["exit"] for v in runs.values())))
    sec.data = {"students": n, "runs": runs, "overhead": ov, "write": write, "per_core": per_core,
                "per_core_wall": per_core_wall,
                "projection": [{"machines": int(p[0]), "hours": float(p[3].split()[0])} for p in proj]}
    return sec


def plot(sec: Section, path: str) -> None:
    import matplotlib.pyplot as plt

    d = sec.data
    fig, (ax_t, ax_p) = plt.subplots(1, 2, figsize=(11, 4.2))
    labels = {"jobs1": "--jobs 1", "jobs2": "--jobs 2", "cluster": "--cluster local:2"}
    keys = [k for k in ("jobs1", "jobs2", "cluster") if k in d["runs"]]
    rates = [60 * d["students"] / d["runs"][k]["wall"] for k in keys]
    ax_t.bar(range(len(keys)), rates, color=["#4c72b0", "#dd8452", "#55a868"][: len(keys)])
    for i, r in enumerate(rates):
        ax_t.text(i, r, f"{r:.1f}", ha="center", va="bottom", fontsize=8)
    ax_t.set_xticks(range(len(keys)))
    ax_t.set_xticklabels([labels[k] for k in keys], fontsize=8)
    ax_t.set_ylabel("submissions graded per minute")
    ax_t.set_title(f"class of {d['students']} ({A}), this machine", fontsize=9)
    proj = d["projection"]
    ax_p.bar(range(len(proj)), [p["hours"] for p in proj], color="#8172b2")
    for i, p in enumerate(proj):
        ax_p.text(i, p["hours"], f"{p['hours']:.1f} h", ha="center", va="bottom", fontsize=8)
    ax_p.set_xticks(range(len(proj)))
    ax_p.set_xticklabels([f"{p['machines']} x {CORES} cores" for p in proj], fontsize=8)
    ax_p.set_ylabel("hours")
    ax_p.set_title(f"projected: {STUDENTS} students x {ASSIGNMENTS} assignments", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
