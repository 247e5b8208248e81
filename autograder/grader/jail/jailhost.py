"""The grader's side of the jail, as root: worker slots (a uid for each worker at once), the scratch tmpfs and the
pids cgroup of each worker (autograder.grader.jail.sandbox starts the worker; autograder.grader.jail.worker jails it)."""
from __future__ import annotations

import fcntl
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

UID_BASE = int(os.environ.get("FXCOURSE_JAIL_UID_BASE", "1990000000"))
MAX_SLOTS = 256
SLOT_DIR = Path(os.environ.get("FXCOURSE_JAIL_LOCKS", "/run/fxcourse-jail"))


def opted_out() -> bool:
    """The instructor chose resource limits only (FXCOURSE_ISOLATION=limits)."""
    return os.environ.get("FXCOURSE_ISOLATION", "").strip().lower() == "limits"


class _Slot:
    """A worker slot claimed across every grading process on this machine (a lock file held while the worker
    runs): slot k's worker runs as uid and gid UID_BASE + k, which no other running worker has."""

    def __init__(self) -> None:
        SLOT_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(SLOT_DIR, 0o700)
        for k in range(MAX_SLOTS):
            fd = os.open(SLOT_DIR / f"slot-{k}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.index, self.fd, self.uid = k, fd, UID_BASE + k
            _reap_uid(self.uid)  # anything a killed grader's worker left running with this uid
            return
        raise OSError(f"all {MAX_SLOTS} worker slots are in use")

    def release(self) -> None:
        _reap_uid(self.uid)
        os.close(self.fd)


def _reap_uid(uid: int) -> None:
    """Kill whatever still runs as `uid` (normally nothing: the worker's processes die with its pid namespace)."""
    for _ in range(100):
        left = []
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                if os.stat(entry.path).st_uid == uid:
                    left.append(int(entry.name))
            except OSError:
                pass
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.02)


def _make_scratch(uid: int, size: int) -> Path:
    """A fresh tmpfs of `size` bytes in all, owned by `uid`, mode 0700: the only place the worker can write."""
    from autograder.grader.jail.mounts import MS_NODEV, MS_NOSUID, mount

    _remove_stale_scratch()
    scratch = Path(tempfile.mkdtemp(prefix=f"fxcourse-worker-{os.getpid()}-"))
    try:
        mount("tmpfs", str(scratch), "tmpfs", MS_NOSUID | MS_NODEV,
              f"size={max(size, 2**16)},nr_inodes=16384,mode=0700,uid={uid},gid={uid}")
    except OSError:
        scratch.rmdir()
        raise
    return scratch


def _umount(path: Path) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.umount2(str(path).encode(), 2)  # MNT_DETACH


def _remove_scratch(scratch: Path) -> None:
    if os.path.ismount(scratch):
        _umount(scratch)
    shutil.rmtree(scratch, ignore_errors=True)


_STALE_DONE = False


def _remove_stale_scratch() -> None:
    """Unmount and remove the scratch folders of graders that were killed before they could."""
    global _STALE_DONE
    if _STALE_DONE:
        return
    _STALE_DONE = True
    for folder in Path(tempfile.gettempdir()).glob("fxcourse-worker-*-*"):
        try:
            os.kill(int(folder.name.split("-")[2]), 0)
        except ProcessLookupError:
            _remove_scratch(folder)
        except (ValueError, OSError):
            pass


_PIDS_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))  # cgroup v1's pids hierarchy, or v2


def _pids_cgroup(limit: int) -> Path | None:
    """A new pids cgroup that lets at most `limit` processes and threads exist at once, or None where the
    machine has none to give (no cgroup file system, no pids controller, not allowed to write it).

    In the jail the worker's own uid has RLIMIT_NPROC too; the cgroup also caps what runs as root before it."""
    if opted_out() or not sys.platform.startswith("linux") or os.geteuid() != 0:
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
    """Kill whatever is still in the group (normally only the worker's manager, ending just after it answered),
    then remove it. Tried again after 1 ms, then ever longer up to 20 ms (about 2 s in all): the manager is gone
    within a few milliseconds, which a first pause of 20 ms added to every submission's grading."""
    for attempt in range(100):
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
            time.sleep(min(0.001 * 2 ** attempt, 0.02))
