"""Start the worker in a jail and read back its evidence: limits, isolation, and what happened to it."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

__all__ = ["Limits", "WorkerOutcome", "isolation_level", "process_cap_available", "run_worker"]


@dataclass(frozen=True)
class Limits:
    """Per-worker limits: CPU seconds, address space and file-size bytes.

    The time limit counts CPU time, not wall-clock time, so a busy machine does not fail a correct answer;
    a worker that sleeps instead of computing is stopped by the wall-clock limit, `wall_factor` times longer.
    """

    timeout: float = 60.0
    memory: int = 4 * 2**30
    output: int = 16 * 2**20
    wall_factor: float = 4.0
    processes: int = 128        # processes and threads at once, where a pids cgroup can be made

    @property
    def wall(self) -> float:
        return self.timeout * self.wall_factor + 60


@dataclass
class WorkerOutcome:
    evidence: dict | None
    status: str                 # "ok", "timeout", "crashed", "bad-evidence"
    detail: str = ""
    last_step: str = ""
    seconds: float = 0.0
    stdout_tail: str = ""
    notes: list[str] = field(default_factory=list)


_LEVEL: str | None = None


def isolation_level() -> str:
    """"namespaces" when the worker can get its own network, mount and pid namespaces; else "limits"."""
    global _LEVEL
    if _LEVEL is None:
        _LEVEL = "limits"
        if os.environ.get("FXCOURSE_ISOLATION") == "limits":
            return _LEVEL
        if sys.platform.startswith("linux") and os.geteuid() == 0 and shutil.which("unshare"):
            try:
                r = subprocess.run(["unshare", "--net", "--mount", "--pid", "--fork", "--kill-child", "true"],
                                   capture_output=True, timeout=20)
                if r.returncode == 0:
                    _LEVEL = "namespaces"
            except (OSError, subprocess.TimeoutExpired):
                pass
    return _LEVEL


_PIDS_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))  # cgroup v1's pids hierarchy, or v2


def _pids_cgroup(limit: int) -> Path | None:
    """A new pids cgroup that lets at most `limit` processes and threads exist at once, or None where the
    machine has none to give (no cgroup file system, no pids controller, not allowed to write it).

    uid 0 is exempt from RLIMIT_NPROC; a cgroup is not, so this is what stops a fork bomb."""
    if os.environ.get("FXCOURSE_ISOLATION") == "limits" or not sys.platform.startswith("linux"):
        return None
    for root in _PIDS_ROOTS:
        if not (root / "cgroup.procs").is_file():
            continue
        _remove_stale(root)
        group = root / f"fxcourse-worker-{os.getpid()}-{os.urandom(4).hex()}"
        try:
            group.mkdir()
        except OSError:
            continue
        try:
            (group / "pids.max").write_text(str(limit))
            return group
        except OSError:
            _remove_cgroup(group)
    return None


def _remove_stale(root: Path) -> None:
    """Remove the empty groups of graders that were killed before they could clean up."""
    for group in root.glob("fxcourse-worker-*-*"):
        try:
            os.kill(int(group.name.split("-")[2]), 0)
        except ProcessLookupError:  # its grader is gone
            try:
                group.rmdir()  # fails while a process is still in it: left for a later run
            except OSError:
                pass
        except (ValueError, OSError):
            pass


_CAP: bool | None = None


def process_cap_available() -> bool:
    """Can workers get a pids cgroup here (see Limits.processes)?"""
    global _CAP
    if _CAP is None:
        group = _pids_cgroup(1)
        _CAP = group is not None
        if group is not None:
            _remove_cgroup(group)
    return _CAP


def _remove_cgroup(group: Path) -> None:
    """Kill whatever is still in the group (nothing, normally: the namespace's processes die with it), then
    remove it."""
    for _ in range(100):
        try:
            pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        except OSError:
            pids = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)


def _worker_env(scratch: Path) -> dict[str, str]:
    keep = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "VIRTUAL_ENV") if k in os.environ}
    pkg_parent = str(Path(__file__).resolve().parent.parent)
    keep["PYTHONPATH"] = pkg_parent + (os.pathsep + keep["PYTHONPATH"] if "PYTHONPATH" in keep else "")
    keep.update({
        "HOME": str(scratch), "TMPDIR": str(scratch), "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(scratch / ".mpl"),
        "IPYTHONDIR": str(scratch / ".ipython"), "JUPYTER_CONFIG_DIR": str(scratch / ".jupyter"),
        "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
        "TORCHINDUCTOR_CACHE_DIR": str(scratch / ".inductor"), "PYTHONHASHSEED": "0",
    })
    return keep


def _tail(path: Path, n: int = 1500) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - n))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _wait(proc: subprocess.Popen, wall: float) -> tuple[int | None, float]:
    """Wait for the worker (and its namespace) to end: (exit code or None on timeout, CPU seconds it used)."""
    deadline = time.monotonic() + wall
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage.ru_utime + usage.ru_stime
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            return None, usage.ru_utime + usage.ru_stime
        time.sleep(0.05)


def run_worker(cells: list[dict], calls: list[dict], *, limits: Limits = Limits(),
               hide: list[str] | None = None) -> WorkerOutcome:
    """Run `cells` then `calls` in a fresh jailed worker; return its evidence or what went wrong."""
    level = isolation_level()
    scratch = Path(tempfile.mkdtemp(prefix="fxcourse-worker-"))
    os.chmod(scratch, 0o700)
    group = None
    try:
        job = {"scratch": str(scratch), "cells": cells, "calls": calls,
               "limits": {"memory": limits.memory, "output": limits.output, "cpu": int(limits.timeout)},
               "hide": [], "namespaces": False,
               "host_mnt_ns": os.readlink("/proc/self/ns/mnt") if os.path.exists("/proc/self/ns/mnt") else None}
        cmd = [sys.executable, "-s", "-m", "autograder.worker", str(scratch / "job.json")]
        if level == "namespaces":
            job.update(hide=sorted(set(hide or [])), namespaces=True)
            cmd = ["unshare", "--net", "--mount", "--pid", "--fork", "--kill-child", *cmd]
        (scratch / "job.json").write_text(json.dumps(job))
        group = _pids_cgroup(limits.processes)
        if group is not None:  # the shell joins the group, then becomes the worker: no fork escapes the cap
            cmd = ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(group / "cgroup.procs"), *cmd]
        start = time.monotonic()
        with open(scratch / "stdout.txt", "wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    cwd=scratch, env=_worker_env(scratch), start_new_session=True)
            try:
                code, cpu = _wait(proc, limits.wall)
            except BaseException:  # Ctrl-C in `fxcourse watch`, or the grader stopping: take the worker along
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                raise
            status = "timeout" if code is None else ("ok" if code == 0 else "crashed")
        seconds = time.monotonic() - start
        steps = [l for l in (scratch / "progress.txt").read_text(errors="replace").splitlines()] \
            if (scratch / "progress.txt").exists() else []
        last = next((s for s in reversed(steps) if s not in ("done", "cpu-limit")), "")
        tail = _tail(scratch / "stdout.txt")
        evidence = None
        detail = ""
        # Evidence is read whatever happened: a worker that died in a later call still has the earlier ones.
        if (scratch / "evidence.pt").exists():
            try:
                evidence = torch.load(scratch / "evidence.pt", weights_only=True)
                if not (isinstance(evidence, dict) and isinstance(evidence.get("calls"), list)
                        and len(evidence["calls"]) <= len(calls) and isinstance(evidence.get("tampered"), list)
                        and isinstance(evidence.get("cell_errors"), list)):
                    raise ValueError("evidence has the wrong shape")
            except Exception:
                evidence = None
        if status == "ok":
            complete = evidence is not None and evidence.get("complete") is True \
                and len(evidence["calls"]) == len(calls) and steps and steps[-1] == "done"
            if not complete:
                status = "bad-evidence"
                detail = "the worker stopped before it finished (did the answers exit the interpreter?)"
        elif status == "crashed" and (code in (124, -signal.SIGXCPU, 128 + signal.SIGXCPU)
                                      or "cpu-limit" in steps or cpu >= limits.timeout):
            status, detail = "timeout", f"used more than {limits.timeout:g} s of CPU time"
        elif status == "crashed":
            if code is not None and code < 0:
                detail = f"the process was killed by signal {signal.Signals(-code).name}"
            elif code is not None and code > 128 and code - 128 in {s.value for s in signal.Signals}:
                detail = f"the process was killed by signal {signal.Signals(code - 128).name}"
            else:
                detail = f"the process exited with code {code}"
            if "MemoryError" in tail or (code is not None and code == -signal.SIGKILL):
                detail += " (out of memory?)" if "MemoryError" not in tail else " (MemoryError: over the memory limit)"
        else:
            detail = f"timed out after {limits.wall:g} s of wall-clock time"
        return WorkerOutcome(evidence, status, detail, last, seconds, tail)
    finally:
        if group is not None:
            _remove_cgroup(group)
        shutil.rmtree(scratch, ignore_errors=True)
