"""The fork server: a pre-imported process that forks every worker and judge, never learner code.

It pays for Python, torch, IPython and the check library's imports once (`python -m autograder.grader.jail.forking
FD ADDRESS KEEP`), then forks, per request, a manager (its own session, the worker's pids cgroup, new mount, pid,
network, IPC and UTS namespaces; it plays `unshare --fork --kill-child`: waits for its child, kills it when told
or when the requester goes, answers its exit code and CPU seconds) and the child: a jailed worker
(`autograder.grader.jail.worker.main`) or a judge. The server does no tensor math and keeps one intra-op thread,
so no thread pool runs when it forks; it refuses to fork if a thread appeared.

One server per user and code (Python, checkout and its files, PYTHONPATH), at `kept_address()`: every command
joins it where it listens (both ends check that the other is the same uid) or starts it, and it waits
FXCOURSE_FORKSERVER_KEEP seconds (default 300; 0: none) after its last command for the next one. It works in `/`
with a home folder of its own; one whose home was removed tells the next command it retired, and that command
starts a new one. One fallback, one switch: where the server cannot start or fork, `spawn` and `spawn_judge`
return None, the caller starts a fresh process and one line on stderr says so; FXCOURSE_FORKSERVER=0 turns
forking off quietly. autograder/ARCHITECTURE.md ("Processes") draws the whole picture.
"""
from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from autograder.course.root import PACKAGE_ROOT, package_first

__all__ = ["Forked", "spawn", "spawn_judge", "prestart", "stop", "server_pid", "enabled", "kept_address",
           "kept_server_pid", "stop_kept_server", "ended", "worker_env"]

_READY_TIMEOUT = 300.0  # seconds the server may take to import everything (a busy machine)
KEEP_ENV = "FXCOURSE_FORKSERVER_KEEP"
_KEEP_DEFAULT = 300.0
_CODE = f"{sys.executable}:{PACKAGE_ROOT}"  # which Python and which checkout
MSG = 1 << 16  # the longest message on the server's sockets
HOME_PREFIX = "fxcourse-forkserver-"  # the server's home folder, made for it alone


def enabled() -> bool:
    """False when forking is turned off (FXCOURSE_FORKSERVER=0) or off Linux."""
    return os.environ.get("FXCOURSE_FORKSERVER", "1").strip().lower() not in ("0", "no", "off", "false") \
        and sys.platform.startswith("linux") and hasattr(os, "fork") and hasattr(socket, "send_fds")


# ------------------------------------------------------------------------------------ the grader's side


def keep_seconds() -> float:
    """How long the server waits, after its last command, for the next (FXCOURSE_FORKSERVER_KEEP; 0: not at all)."""
    raw = os.environ.get(KEEP_ENV, "").strip()
    try:
        return max(0.0, float(raw)) if raw else _KEEP_DEFAULT
    except ValueError:
        return _KEEP_DEFAULT


def _fingerprint(pythonpath: str) -> str:
    """What the server's imports came from: the Python, the checkout, PYTHONPATH, and the size and time of every
    file of the autograder, fxplayground and torch's package entry (a change to any of them means a new server)."""
    import hashlib
    import importlib.util

    h = hashlib.sha256(f"{_CODE}\n{pythonpath}\n".encode())
    files = sorted([*(PACKAGE_ROOT / "autograder").rglob("*.py"), *(PACKAGE_ROOT / "fxplayground").rglob("*.py")])
    spec = importlib.util.find_spec("torch")
    if spec is not None and spec.origin:
        files.append(Path(spec.origin))
    for f in files:
        try:
            st = f.stat()
        except OSError:
            continue
        h.update(f"{f}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:20]


def kept_address(environ: dict[str, str] | None = None) -> str:
    """The abstract socket name of this user's server for this code (and the PYTHONPATH of `environ`: a command's,
    by default this process's)."""
    pythonpath = (os.environ if environ is None else environ).get("PYTHONPATH", "")
    return f"fxcourse-forkserver-u{os.getuid()}-{_fingerprint(pythonpath)}"


def peer(sock: socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end of a connected Unix socket."""
    import struct

    pid, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return pid, uid


def kept_server_pid(address: str | None = None) -> int | None:
    """The pid of the server at `address` (by default this user's for this code), while one listens."""
    sock = _connect_to(address or kept_address())
    if sock is None:
        return None
    with sock:
        return peer(sock)[0]


def ended(pid: int, timeout: float) -> bool:
    """True once process `pid` has ended (gone, or a zombie) within `timeout` seconds."""
    end = time.monotonic() + timeout
    while True:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(0.1)


def stop_kept_server(timeout: float = 30.0, address: str | None = None) -> bool:
    """End the server at `address` (by default this user's for this code), if one runs (SIGTERM: it ends as when
    idle, removing its home); True once none runs."""
    pid = kept_server_pid(address)
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    return pid is None or ended(pid, timeout)


def _connect_to(address: str) -> socket.socket | None:
    """A connection to the server at `address` when one listens there and runs as this user, else None."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        sock.connect("\0" + address)
        if peer(sock)[1] != os.getuid():  # an abstract name anyone may take: only our own server will do
            raise OSError("the server at that address is another user's")
    except OSError:
        sock.close()
        return None
    return sock


def worker_env(scratch: Path) -> dict[str, str]:
    """The whole environment of a worker (fresh or forked): paths, its scratch as home, one thread, no cache writes."""
    passed = ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "VIRTUAL_ENV", "FXCOURSE_INSTRUCTOR_SIDE")  # the last:
    keep = {k: os.environ[k] for k in passed if k in os.environ}  # the course's instructor's side (keyring.use)
    keep["PYTHONPATH"] = package_first(keep.get("PYTHONPATH"))
    keep.update({
        "HOME": str(scratch), "TMPDIR": str(scratch), "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(scratch / ".mpl"),
        "IPYTHONDIR": str(scratch / ".ipython"), "JUPYTER_CONFIG_DIR": str(scratch / ".jupyter"),
        "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
        "TORCHINDUCTOR_CACHE_DIR": str(scratch / ".inductor"), "PYTHONHASHSEED": "0",
    })
    return keep


class _Server:
    """This process's connection to the user's fork server (`address`; tests give one of their own), made on
    first use: joined where it listens, else started by us."""

    def __init__(self, address: str | None = None) -> None:
        self.address = address  # None: kept_address(), computed on first use
        self.lock = threading.Lock()
        self.proc: subprocess.Popen | None = None  # the server, where we started it
        self.home = ""     # its home, where we started it
        self.sock: socket.socket | None = None
        self.ready = False
        self.server = 0    # its pid, as it said once ready
        self.broken = ""   # why it cannot be used (then every worker is a fresh process)
        self.said = False
        self.replaced = False  # the server we joined retired before it said it was ready: a new one was started

    def _argv(self, fd: int) -> list[str]:
        return [sys.executable, "-s", "-m", "autograder.grader.jail.forking", str(fd), self.address,
                f"{keep_seconds():g}"]

    def start(self) -> None:
        """Join or start the server without waiting for its imports (they overlap with the command's own work)."""
        with self.lock:
            self._start()

    def _start(self) -> None:
        if self.sock is not None or self.broken:
            return
        import tempfile

        self.address = self.address or kept_address()
        self.sock, self.ready = _connect_to(self.address), False
        if self.sock is not None:
            return
        import atexit

        self.home = tempfile.mkdtemp(prefix=HOME_PREFIX)  # for what its imports and judges write; it removes it
        atexit.register(self.stop)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:  # in "/" and a session of its own: it may outlive this command and its folder
            self.proc = subprocess.Popen(self._argv(theirs.fileno()), pass_fds=[theirs.fileno()], cwd="/",
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                         env=worker_env(Path(self.home)), start_new_session=True)
            self.sock = ours
        except OSError as exc:
            ours.close()
            os.rmdir(self.home)
            self.broken = f"could not start ({exc})"
        finally:
            theirs.close()

    def _wait_ready(self) -> None:
        if self.ready or self.broken:
            return
        deadline, answer = time.monotonic() + _READY_TIMEOUT, None
        while answer is None and time.monotonic() < deadline:
            if select.select([self.sock], [], [], 0.5)[0] or (self.proc is not None and self.proc.poll() is not None):
                answer = _recv_json(self.sock, 0) or {}  # {"ready"}, {"retired"} or {"error"}; {}: it went away
        if (answer or {}).get("ready"):
            self.ready, self.server = True, int(answer["pid"])
        elif self.proc is None and not self.replaced:  # the server we joined retired or went away: start one
            self.replaced = True
            self._close()
            self._start()
            self._wait_ready()
        else:
            self._fail((answer or {}).get("error") or self._exit_reason("did not get ready"))

    def _exit_reason(self, what: str) -> str:
        if self.proc is None:
            return "went away"
        try:
            self.proc.wait(timeout=5)  # its socket closes just before it can be waited for
        except subprocess.TimeoutExpired:
            return f"{what} within {_READY_TIMEOUT:g} s"
        err = b""
        try:
            err = self.proc.stderr.read(4096) or b""
        except (OSError, ValueError):
            pass
        lines = [line for line in err.decode(errors="replace").splitlines() if line.strip()]
        return f"exited with code {self.proc.returncode}" + (f" ({lines[-1][:200]})" if lines else "")

    def _fail(self, why: str) -> None:
        self.broken = why
        self._close()

    def _close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.proc is not None:
            if not self.ready and self.proc.poll() is None:  # still importing: nothing of it is used yet
                self.proc.kill()
            try:  # without keeping, it ends once we were its last command (its CPU then counts as ours)
                self.proc.wait(timeout=0 if keep_seconds() else 2)
            except subprocess.TimeoutExpired:
                pass  # another command uses it, or it waits for the next
            if self.proc.returncode is not None:
                import shutil

                shutil.rmtree(self.home, ignore_errors=True)  # it ended before it could remove it
            self.proc.stderr.close()
            self.proc = None
        self.ready = False

    def say_once(self, why: str) -> None:
        if not self.said:
            self.said = True
            print(f"fxcourse: the fork server {why}; each worker and judge starts as a fresh process instead "
                  "(slower)", file=sys.stderr, flush=True)

    def request(self, req: dict, fds: list[int], again: bool = True) -> "Forked | None":
        """Have the server fork `req`'s manager and child, handing it `fds`: the child, or None (the caller then
        starts a fresh process). A server that went away (stopped, or killed, by another command) is replaced once."""
        self.start()
        with self.lock:
            if not self.broken:
                self._wait_ready()
            if self.broken:
                self.say_once(self.broken)
                return None
            sock, (ours, theirs) = self.sock, socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                socket.send_fds(sock, [json.dumps(req).encode()], [theirs.fileno(), *fds])
                sent = True
            except OSError:
                sent = False
            finally:
                theirs.close()
        first = _recv_json(ours, 60.0) if sent else None
        if first and "pid" in first:
            return Forked(ours, int(first["pid"]))
        ours.close()
        if first:  # the server refused this one request (a thread appeared in it, say): it runs fresh
            self.say_once(f"could not fork a worker ({first.get('error', 'no reason given')})")
            return None
        with self.lock:
            if not again:
                self._fail(f"stopped ({self._exit_reason('stopped')})")
                self.say_once(self.broken)
                return None
            if self.sock is sock:  # not yet replaced by another thread of ours
                self._close()
        return self.request(req, fds, again=False)

    def stop(self) -> None:
        with self.lock:
            self._close()


def _recv_json(sock: socket.socket, timeout: float | None) -> dict | None:
    try:
        if timeout is not None and not select.select([sock], [], [], timeout)[0]:
            return None
        msg = sock.recv(MSG)
        return json.loads(msg) if msg else None
    except (OSError, ValueError):
        return None


class Forked:
    """A forked worker or judge, with the part of subprocess.Popen's interface the grader uses (`pid`: as this
    process sees it); `cpu`: the CPU seconds it used, once it has ended. Its manager kills it when told to, or when
    the connection closes. `lost`: it ended without a word from its manager, which went away with the server
    (killed, say, or out of memory): what it was doing was cut short by the machine, not by what it ran."""

    def __init__(self, conn: socket.socket, pid: int, stdin: IO[bytes] | None = None,
                 stdout: IO[bytes] | None = None) -> None:
        self.conn, self.pid, self.stdin, self.stdout = conn, pid, stdin, stdout
        self.returncode: int | None = None
        self.cpu, self.lost = 0.0, False

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self.conn], [], [], 0)[0]:
            self.wait()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if timeout is not None and not select.select([self.conn], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired("a forked process", timeout)
            answer = _recv_json(self.conn, 120.0) or {}  # the manager's last word: -SIGKILL without one
            self.conn.close()
            self.lost = "code" not in answer
            self.returncode, self.cpu = int(answer.get("code", -signal.SIGKILL)), float(answer.get("cpu", 0.0))
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            try:
                self.conn.send(b"kill")
            except OSError:
                pass

    def close(self) -> None:
        """Kill it (if it still runs) and forget it."""
        self.kill()
        self.conn.close()


_SERVER = _Server()


def prestart() -> None:
    """Join or start the fork server now if it will be used, so its imports overlap with the command's own."""
    if enabled():
        _SERVER.start()


def spawn(*, job: str, cwd: str, env: dict[str, str], out_fd: int, jail: bool,
          cgroup: str | None, checks: list[str] = ()) -> Forked | None:
    """Fork a worker that runs `job` (the path of its job file) with `env` in `cwd`, writing its output to
    `out_fd`; in fresh namespaces when `jail`, in the pids cgroup whose cgroup.procs file is `cgroup`.
    `checks`: the exercises whose check modules the job calls; the server imports each once, on the first job
    that needs it, so one check of ex01 does not wait for ex11's torchao. None when the fork server is off or
    cannot be used (the caller then starts a fresh process)."""
    if not enabled():
        return None
    return _SERVER.request({"job": job, "cwd": cwd, "env": env, "jail": jail, "cgroup": cgroup,
                            "checks": list(checks)}, [out_fd])


def spawn_judge(memory: int) -> Forked | None:
    """Fork the judge (`engine.grading._judge_server(memory)`: requests on stdin, answers on stdout), or None."""
    if not enabled():
        return None
    (r_in, w_in), (r_out, w_out) = os.pipe(), os.pipe()
    try:
        forked = _SERVER.request({"judge": int(memory), "jail": False, "cgroup": None,   # the run's instructor's side
                                  "instructor": os.environ.get("FXCOURSE_INSTRUCTOR_SIDE")}, [r_in, w_out])
    finally:
        os.close(r_in)
        os.close(w_out)
    if forked is None:
        os.close(w_in)
        os.close(r_out)
        return None
    forked.stdin, forked.stdout = os.fdopen(w_in, "wb"), os.fdopen(r_out, "rb")
    return forked


def stop() -> None:
    """Leave the fork server (what this process still runs there is killed); a later use joins or starts anew."""
    _SERVER.stop()


def server_pid() -> int | None:
    """The fork server's pid while this process is connected to it and it is ready."""
    return _SERVER.server if _SERVER.sock is not None and _SERVER.ready else None
