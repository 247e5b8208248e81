"""Start the worker in a jail and read back what it left: limits, isolation, and what happened to it.

The jail (`autograder.grader.jail.worker.enter_jail`) needs, from this machine, as root: Linux namespaces
(`unshare`), a tmpfs for each worker's scratch folder, a read-only remount, a new proc mount, and a uid of its
own for each worker running at the same time (`FXCOURSE_JAIL_UID_BASE` + slot, claimed with a lock file:
autograder.grader.jail.jailhost). Without root: unprivileged user namespaces, in which the worker builds a root file
system of its own and gives up every capability (autograder.grader.jail.userjail). `jail_support()` tries every
piece once per process (autograder.grader.jail.jailprobe) and names what is missing. Hardened grading refuses to
run without them (`IsolationError`) unless the instructor sets `FXCOURSE_ISOLATION=limits`.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grader.jail import forkserver, userjail
from autograder.grader.jail.forkserver import worker_env
from autograder.grader.jail.jailhost import (SLOT_DIR, UID_BASE, _make_scratch, _pids_cgroup,  # noqa: F401
                                        _remove_cgroup, _remove_scratch, _Slot, opted_out as _opted_out,
                                        process_cap_available)

__all__ = ["Limits", "WorkerOutcome", "IsolationError", "isolation_level", "jail_support", "require_isolation",
           "process_cap_available", "run_worker", "stop_workers", "STOPPING", "read_bounded", "EVIDENCE_MAX_BYTES"]

EVIDENCE_MAX_BYTES = 32 * 2**20     # evidence.pt on disk; the judge checks what it unpacks to (autograder.checks.evidence)
JAIL_ERROR_EXIT = 97


class IsolationError(RuntimeError):
    """Hardened grading cannot run here: the message names each missing piece and the opt-out."""


@dataclass(frozen=True)
class Limits:
    """Per-worker limits: CPU seconds, address space (beyond what is mapped: address_space_limit), file bytes.

    The time limit counts CPU time, so a busy machine fails no correct answer; a worker that sleeps instead of
    computing is stopped by the wall-clock limit, `wall_factor` times longer."""

    timeout: float = 60.0
    memory: int = 4 * 2**30
    output: int = 16 * 2**20
    wall_factor: float = 4.0
    processes: int = 128        # processes and threads at once (RLIMIT_NPROC of its own uid, and a pids cgroup)
    scratch: int = 256 * 2**20  # the whole scratch tmpfs: every file the worker writes, together

    @property
    def wall(self) -> float:
        return self.timeout * self.wall_factor + 60

    @classmethod
    def from_env(cls) -> "Limits":
        """The limits of a grading run: the defaults above, with the CPU time from FXCOURSE_TIMEOUT where set
        (LimitError when it is not a number of seconds)."""
        seconds = _seconds("FXCOURSE_TIMEOUT")
        return cls() if seconds is None else cls(timeout=seconds)

    def submission_wall(self) -> float:
        """Wall-clock seconds for one submission's grading: FXCOURSE_SUBMISSION_TIMEOUT, else six workers' walls."""
        seconds = _seconds("FXCOURSE_SUBMISSION_TIMEOUT")
        return 6 * self.wall if seconds is None else seconds


class LimitError(ValueError):
    """A limit set in the environment is not a number of seconds above 0."""


def _seconds(var: str) -> float | None:
    """The seconds environment variable `var` sets, None when unset or empty."""
    text = os.environ.get(var, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise LimitError(f"{var} must be a number of seconds above 0, got {text!r}")
    return value


@dataclass
class WorkerOutcome:
    evidence: dict | None
    status: str                 # "ok", "timeout", "crashed", "bad-evidence"
    detail: str = ""
    last_step: str = ""
    seconds: float = 0.0
    stdout_tail: str = ""
    notes: list[str] = field(default_factory=list)
    evidence_bytes: bytes | None = None   # evidence.pt as read (bounded); the judge loads it (autograder.grader.engine.grading)
    evidence_error: str = ""              # why there is none: missing, too large, not a regular file
    isolation: str = ""




_SUPPORT: dict[str, str] | None = None
_SUPPORT_LOCK = threading.Lock()


def jail_support() -> dict[str, str]:
    """What this machine cannot give the jail: {piece: why}; empty when every piece works.

    Tried for real, once per process: a worker slot and its uid, a tmpfs scratch folder, fresh namespaces, and
    from inside them the read-only file system, the private /proc, read-only cgroups and the uid switch."""
    global _SUPPORT
    with _SUPPORT_LOCK:
        if _SUPPORT is None:
            _SUPPORT = _try_jail()
        return dict(_SUPPORT)


def _try_jail() -> dict[str, str]:
    if not sys.platform.startswith("linux"):
        return {"Linux namespaces": f"this is {sys.platform}"}
    root = os.geteuid() == 0  # else the jail of a user namespace (autograder.grader.jail.userjail)
    for tool in ("unshare", "setpriv") if root else ():
        if not shutil.which(tool):
            return {f"{tool} (util-linux)": "not found on PATH"}
    try:
        slot = _Slot() if root else None
    except OSError as exc:
        return {"a uid for each worker": f"cannot claim a worker slot in {SLOT_DIR}: {exc}"}
    try:
        try:
            scratch = _make_scratch(slot.uid, 2**20) if slot is not None else _folder_scratch()
        except OSError as exc:
            return {"a size-limited tmpfs scratch": str(exc)}
        try:
            spec = _jail_spec(scratch, slot, [], 2**20)
            (scratch / "probe.json").write_text(json.dumps(spec))
            os.chmod(scratch / "probe.json", 0o600)
            try:
                r = subprocess.run([*(_UNSHARE if root else _manager(scratch)), sys.executable, "-s", "-m",
                                    "autograder.grader.jail.jailprobe", str(scratch / "probe.json")],
                                   capture_output=True, timeout=60, cwd=scratch, env=worker_env(scratch),
                                   stdin=subprocess.DEVNULL)
            except (OSError, subprocess.TimeoutExpired) as exc:
                return {"Linux namespaces": f"unshare did not start the probe: {exc}"}
            if r.returncode != 0:
                err = r.stderr.decode(errors="replace").strip().splitlines()
                if not root and err and "fxcourse-jail-error:" in err[-1]:
                    return {userjail.PIECE: err[-1].split("fxcourse-jail-error:")[-1].strip()}
                return {"Linux namespaces": f"unshare failed ({err[-1] if err else f'exit code {r.returncode}'})"}
            try:
                problems = json.loads(r.stdout.decode().strip().splitlines()[-1])
            except (ValueError, IndexError):
                return {"jail": f"the probe gave no answer: {r.stdout[-300:]!r}"}
            return {str(k): str(v) for k, v in problems.items()}
        finally:
            _remove_scratch(scratch)
    finally:
        if slot is not None:
            slot.release()


def isolation_level() -> str:
    """"jail" when workers get every piece of the jail; "limits" (resource limits only) when the instructor
    opted out with FXCOURSE_ISOLATION=limits or the machine lacks a piece (see jail_support)."""
    return "limits" if _opted_out() or jail_support() else "jail"


def require_isolation() -> None:
    """Raise IsolationError naming what is missing, unless the jail is complete or the instructor opted out."""
    if _opted_out():
        return
    missing = jail_support()
    if missing:
        raise IsolationError(
            "hardened grading needs a jail this machine cannot give: "
            + "; ".join(f"missing {piece} ({why})" for piece, why in missing.items())
            + ". Set FXCOURSE_ISOLATION=limits to grade with resource limits only (no isolation).")


# setpriv --pdeathsig: unshare dies with the grader (and --kill-child takes the worker along), so a grader that
# is killed leaves no worker running with a slot's uid.
_UNSHARE = ["setpriv", "--pdeathsig", "KILL", "unshare", "--mount", "--pid", "--net", "--ipc", "--uts", "--fork",
            "--kill-child"]


def _manager(scratch: Path) -> list[str]:
    """Without root: the command that runs the rest in new namespaces of a user namespace, then copies the
    worker's files out of its scratch tmpfs into `scratch` (autograder.grader.jail.userjail)."""
    return [sys.executable, "-s", "-m", "autograder.grader.jail.userjail", str(scratch), "--"]


def _folder_scratch() -> Path:
    """Without root: the grader's scratch folder (mode 0700); the worker's own tmpfs exists in its namespaces only."""
    scratch = Path(tempfile.mkdtemp(prefix="fxcourse-worker-"))
    os.chmod(scratch, 0o700)
    return scratch


def _jail_spec(scratch: Path, slot: "_Slot | None", hide: list[str], size: int) -> dict:
    spec = {"scratch": str(scratch), "hide": hide, "host_mnt_ns": os.readlink("/proc/self/ns/mnt")}
    if slot is None:  # a grader that is not root: the worker is root of a user namespace mapping the grader's uid
        return {**spec, "userns": True, "scratch_size": size}
    return {**spec, "uid": slot.uid, "gid": slot.uid}


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of a regular file, at most `limit` of them: a symlink, pipe or device is refused (OSError) and
    never blocks; a file larger than `limit` raises ValueError."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path.name} is not a regular file")
        if info.st_size > limit:
            raise ValueError(f"{path.name} is {info.st_size} bytes, over the limit of {limit}")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(2**20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise ValueError(f"{path.name} is over the limit of {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _tail(fd: int, n: int = 1500) -> str:
    """The last `n` bytes written to the worker's output file (read through the grader's own descriptor)."""
    try:
        size = os.fstat(fd).st_size
        return os.pread(fd, n, max(0, size - n)).decode("utf-8", "replace")
    except OSError:
        return ""


def _killpg(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


def _wait(proc: subprocess.Popen, wall: float) -> tuple[int | None, float]:
    """Wait for the worker (and its namespace) to end: (exit code or None on timeout, CPU seconds it used)."""
    deadline = time.monotonic() + wall
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage.ru_utime + usage.ru_stime
        if time.monotonic() > deadline:
            pid, end = 0, time.monotonic() + 10
            if os.geteuid() != 0:  # userjail's manager kills the worker, copies its progress out, then ends
                os.kill(proc.pid, signal.SIGTERM)
                while not pid and time.monotonic() < end:
                    time.sleep(0.05)
                    pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if not pid:
                os.killpg(proc.pid, signal.SIGKILL)
                _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            return None, usage.ru_utime + usage.ru_stime
        time.sleep(0.05)


STOPPING = threading.Event()  # set by stop_workers(): no new worker starts until it is cleared
_RUNNING: set = set()         # a kill function per worker this process runs


def stop_workers() -> None:
    """Kill every worker this process runs and start none until STOPPING is cleared: the grading threads of an
    interrupted run then end at once, their submissions unwritten (autograder.grader.classroom.runner.LocalRunner)."""
    STOPPING.set()
    for kill in list(_RUNNING):
        kill()


@contextlib.contextmanager
def _running(kill):
    _RUNNING.add(kill)
    try:
        if STOPPING.is_set():
            kill()
        yield
    finally:
        _RUNNING.discard(kill)


def _start_and_wait(scratch: Path, group: Path | None, out_fd: int, wall: float, *,
                    jail: bool, checks: list[str]) -> tuple[int | None, float, bool]:
    """Run the worker of `scratch / "job.json"` to its end: forked by the fork server (autograder.grader.jail.forkserver),
    or, where that cannot be used, as a fresh process. (exit code or None on timeout, CPU seconds it used, whether
    the fork server went away while it ran)"""
    env = worker_env(scratch)
    job = str(scratch / "job.json")
    forked = forkserver.spawn(job=job, cwd=str(scratch), env=env, out_fd=out_fd, jail=jail,
                              cgroup=str(group / "cgroup.procs") if group is not None else None, checks=checks)
    if forked is not None:
        try:
            with _running(forked.kill):
                try:
                    return forked.wait(wall), forked.cpu, forked.lost and not STOPPING.is_set()
                except subprocess.TimeoutExpired:
                    forked.kill()
                    forked.wait()
                    return None, forked.cpu, False
        except BaseException:  # Ctrl-C in `fxcourse watch`, or the grader stopping: take the worker along
            forked.close()
            raise
    cmd = [sys.executable, "-s", "-m", "autograder.grader.jail.worker", job]
    if jail:
        cmd = [*(_UNSHARE if os.geteuid() == 0 else _manager(scratch)), *cmd]
    if group is not None:  # the shell joins the group, then becomes the worker: no fork escapes the cap
        cmd = ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(group / "cgroup.procs"), *cmd]
    proc = subprocess.Popen(cmd, stdout=out_fd, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            cwd=scratch, env=env, start_new_session=True)
    try:
        with _running(lambda: _killpg(proc.pid)):
            return (*_wait(proc, wall), False)
    except BaseException:
        _killpg(proc.pid)
        proc.wait()
        raise


def run_worker(cells: list[dict], calls: list[dict], *, limits: Limits = Limits(),
               hide: list[str] | None = None, require: bool = False) -> WorkerOutcome:
    """Run `cells` then `calls` in a new worker (forked from the fork server, else a fresh process); return
    what it left (the judge loads its evidence).

    The worker is jailed when the machine allows it; with `require` (hardened grading) a missing piece of the
    jail raises IsolationError instead, unless FXCOURSE_ISOLATION=limits. A worker cut short because its fork
    server went away (killed, or out of memory) runs once more: the machine's fault costs no answer a test."""
    if require:
        require_isolation()
    level = isolation_level()
    notes = [] if level == "jail" or _opted_out() else [
        "graded with resource limits only, without the jail; missing: " + ", ".join(jail_support())]
    outcome, lost = _run_once(cells, calls, limits, hide, level, notes)
    if lost:
        outcome, lost = _run_once(cells, calls, limits, hide, level, notes)
    if lost:
        outcome.detail = "the fork server it was forked from went away while it ran, twice"
    return outcome


def _run_once(cells: list[dict], calls: list[dict], limits: Limits, hide: list[str] | None, level: str,
              notes: list[str]) -> tuple[WorkerOutcome, bool]:
    """One worker of run_worker: (what it left, whether its fork server went away while it ran)."""
    jail = level == "jail"
    slot = _Slot() if jail and os.geteuid() == 0 else None  # without root: a user namespace (userjail)
    group = None
    scratch = None
    try:
        scratch = _make_scratch(slot.uid, limits.scratch) if slot is not None else _folder_scratch()
        job = {"scratch": str(scratch), "cells": cells, "calls": calls,
               "limits": {"memory": limits.memory, "output": limits.output, "cpu": int(limits.timeout),
                          "processes": limits.processes},
               "jail": _jail_spec(scratch, slot, sorted(set(hide or [])), limits.scratch) if jail else None}
        fd = os.open(scratch / "job.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(job, f)
        group = _pids_cgroup(limits.processes)
        start = time.monotonic()
        out_fd = os.open(scratch / "stdout.txt", os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            checks = sorted({c["assignment"] for c in calls if c.get("kind") == "check"})
            code, cpu, lost = _start_and_wait(scratch, group, out_fd, limits.wall, jail=jail, checks=checks)
            tail = _tail(out_fd)
        finally:
            os.close(out_fd)
        if code == JAIL_ERROR_EXIT and "fxcourse-jail-error:" in tail:
            raise IsolationError("the worker could not enter its jail: "
                                 + tail.split("fxcourse-jail-error:")[-1].strip().splitlines()[0])
        status = "timeout" if code is None else ("ok" if code == 0 else "crashed")
        seconds = time.monotonic() - start
        try:
            progress = read_bounded(scratch / "progress.txt", 4 * 2**20).decode(errors="replace")
        except (OSError, ValueError):
            progress = ""
        steps = progress.splitlines()
        last = next((s for s in reversed(steps) if s not in ("done", "cpu-limit")), "")
        # Evidence is read whatever happened: a worker that died in a later call still has the earlier ones.
        evidence_bytes, evidence_error = None, ""
        try:
            evidence_bytes = read_bounded(scratch / "evidence.pt", EVIDENCE_MAX_BYTES)
        except FileNotFoundError:
            evidence_error = "the worker left no evidence"
        except (OSError, ValueError) as exc:
            evidence_error = f"the evidence file was refused: {exc}"
        detail = ""
        if status == "ok" and not (steps and steps[-1] == "done"):
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
        elif status == "timeout":
            detail = f"timed out after {limits.wall:g} s of wall-clock time"
        return WorkerOutcome(None, status, detail, last, seconds, tail, list(notes), evidence_bytes, evidence_error,
                             level), lost
    finally:
        if group is not None:
            _remove_cgroup(group)
        if slot is not None:
            slot.release()  # after every process of its uid is gone
        if scratch is not None:
            _remove_scratch(scratch)
