"""The fork server: a pre-imported process that forks every worker, judge and headless kernel, never learner code.

Without it, every worker is a fresh `python -m autograder.grader.jail.worker` that pays for Python, torch, IPython and
the check library before it runs one line of the learner's code. The fork server pays for those imports once
(`python -m autograder.grader.jail.forking FD`, started by the grading process on first use) and then, for each
worker, forks a child with exactly the state it had after importing:

    grading process --request + fds (SOCK_SEQPACKET)--> fork server (root, imports done, single thread)
        fork --> manager (its own session; dies with the server; joins the worker's pids cgroup; unshare of the
                 mount, pid, network, IPC and UTS namespaces)
            fork --> worker (pid 1 of the new pid namespace; dies with the manager; stdout to the grader's file)
                     runs `autograder.grader.jail.worker.main(job)`: enter_jail, apply_limits, learner code, evidence

The manager plays `unshare --fork --kill-child`: it waits for the worker, kills it when the grader says so (or
goes away), and answers the worker's exit code and CPU seconds. The server does no tensor math and sets one
intra-op thread, so no thread pool is running when it forks; it refuses to fork if a thread appeared.

The processes a grading process starts share its server (a test suite's commands share the one its process
started): its address is in FXCOURSE_FORKSERVER_ADDRESS (an abstract Unix socket, for processes of the same uid
running the same checkout with the same Python); a process without one starts its own.

A learner's `fxcourse check` and `watch` keep their server warm (`keep_warm`): it is started in a session of its
own and, once the command that started it ends, waits FXCOURSE_FORKSERVER_KEEP seconds (default 300; 0: off) for
the next command of the same user, same Python and same code, which connects to it instead of paying the imports
again. The address names the uid and a fingerprint of the code (the autograder, fxplayground and torch files);
both ends check that the other is the same uid. A changed checkout gets a new server; the old one times out.
The server works in `/`, not in the folder of the command that started it (which the learner may move or remove);
one whose home folder was removed tells the next command it retired, and that command starts a new one.

Kernels (`spawn_kernel`, for autograder.grader.jail.headless) come from a second server of the same program, started with
the caller's environment, whose imports (numpy, torch) set nothing: a forked kernel is what `python -m
ipykernel_launcher` would be (see forking._kernel) but for Python's hash seed, its server's. One fallback, one switch:
where the server cannot start or a fork fails, `spawn`, `spawn_judge` and `spawn_kernel` return None and the caller
starts a fresh process; one line on stderr says so, once per server. FXCOURSE_FORKSERVER=0 turns forking off quietly.
"""
from __future__ import annotations

import functools
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
from typing import IO, Callable

__all__ = ["Forked", "spawn", "spawn_kernel", "prestart", "keep_warm", "stop", "server_pid", "enabled",
           "kept_address", "kept_server_pid", "stop_kept_server", "ended", "start_with_socket"]

_READY_TIMEOUT = 300.0  # seconds the server may take to import everything (a busy machine)
ADDRESS_ENV = "FXCOURSE_FORKSERVER_ADDRESS"
KEEP_ENV = "FXCOURSE_FORKSERVER_KEEP"
_KEEP_DEFAULT = 300.0
_CODE = f"{sys.executable}:{Path(__file__).resolve().parents[3]}"  # which Python and which checkout
_MSG = 1 << 16
_IMPORT_TIME = ("PYTHON", "OMP_", "MKL_", "KMP_", "GOMP_", "OPENBLAS", "TORCH", "LD_", "CUDA", "NUMPY")  # read early


def enabled() -> bool:
    """False when forking is turned off (FXCOURSE_FORKSERVER=0, for workers, judges and kernels) or off Linux."""
    return os.environ.get("FXCOURSE_FORKSERVER", "1").strip().lower() not in ("0", "no", "off", "false") \
        and sys.platform.startswith("linux") and hasattr(os, "fork") and hasattr(socket, "send_fds")


# ------------------------------------------------------------------------------------ the grader's side


def keep_seconds() -> float:
    """How long a kept server waits for the next command (FXCOURSE_FORKSERVER_KEEP; 0 turns keeping off)."""
    raw = os.environ.get(KEEP_ENV, "").strip()
    try:
        return max(0.0, float(raw)) if raw else _KEEP_DEFAULT
    except ValueError:
        return _KEEP_DEFAULT


def _fingerprint() -> str:
    """What a kept server's imports came from: the Python, the checkout, and the size and time of every file of
    the autograder, fxplayground and torch's package entry (a change to any of them means a new server)."""
    import hashlib
    import importlib.util

    h = hashlib.sha256(_CODE.encode())
    root = Path(__file__).resolve().parents[3]
    files = sorted([*(root / "autograder").rglob("*.py"), *(root / "fxplayground").rglob("*.py")])
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


def kept_address() -> str:
    """The abstract socket name of this user's kept server for this code."""
    return f"fxcourse-forkserver-u{os.getuid()}-{_fingerprint()}"


def _peer(sock: socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end of a connected Unix socket."""
    import struct

    pid, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return pid, uid


def kept_server_pid() -> int | None:
    """The pid of this user's kept server for this code, while one listens."""
    sock = _connect_to(kept_address())
    if sock is None:
        return None
    try:
        return _peer(sock)[0]
    finally:
        sock.close()


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


def stop_kept_server(timeout: float = 30.0) -> bool:
    """End this user's kept server for this code, if one runs (SIGTERM: it ends as when idle, removing its
    home); True once none runs."""
    pid = kept_server_pid()
    if pid is None:
        return True
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    return ended(pid, timeout)


def _connect_to(address: str) -> socket.socket | None:
    """A connection to the server at `address` when one listens there and runs as this user, else None."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        sock.connect("\0" + address)
        if _peer(sock)[1] != os.getuid():  # an abstract name anyone may take: only our own server will do
            raise OSError("the server at that address is another user's")
    except OSError:
        sock.close()
        return None
    return sock


def worker_env(scratch: Path) -> dict[str, str]:
    """The whole environment of a worker (fresh or forked): paths, its scratch as home, one thread, no cache writes."""
    passed = ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "VIRTUAL_ENV", "FXCOURSE_INSTRUCTOR_SIDE")  # the last:
    keep = {k: os.environ[k] for k in passed if k in os.environ}  # the course's instructor's side (keyring.use)
    pkg_parent = str(Path(__file__).resolve().parents[3])
    keep["PYTHONPATH"] = pkg_parent + (os.pathsep + keep["PYTHONPATH"] if "PYTHONPATH" in keep else "")
    keep.update({
        "HOME": str(scratch), "TMPDIR": str(scratch), "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(scratch / ".mpl"),
        "IPYTHONDIR": str(scratch / ".ipython"), "JUPYTER_CONFIG_DIR": str(scratch / ".jupyter"),
        "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
        "TORCHINDUCTOR_CACHE_DIR": str(scratch / ".inductor"), "PYTHONHASHSEED": "0",
    })
    return keep


class _Server:
    """The grading process's one fork server (or its kernels' one), started on first use, stopped when it ends."""

    def __init__(self, kernels: bool = False) -> None:
        self.kernels, self.env = kernels, {}  # env: the server's environment
        self.lock = threading.Lock()
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.ready = False
        self.shared = False  # connected to a server another process started (the run's, or the user's kept one)
        self.broken = ""   # why it cannot be used (then every worker is a fresh process)
        self.said = False
        self.address = ""
        self.home: Path | None = None
        self.keep = 0.0    # > 0: start (or join) the user's kept server, which outlives this process that long
        self.kept = False  # this process started a kept server
        self.replaced = False  # the user's kept server did not say it was ready: a new one was started

    def _argv(self, fd: int) -> list[str]:  # a kernels' server starts as a kernel's interpreter does (no -s)
        flags = ["--kernels"] if self.kernels else ["--keep", f"{self.keep:g}"] if self.kept else []
        return [sys.executable, *([] if self.kernels else ["-s"]), "-m", "autograder.grader.jail.forking", str(fd),
                self.address, *flags]

    def _connect(self) -> bool:
        """Use the fork server of the grading run this process belongs to (FXCOURSE_FORKSERVER_ADDRESS, set by
        the process that started it), when it runs the same code; else, when keeping, the user's kept server.
        Either tells us it is ready once its imports are done (`_wait_ready`)."""
        address, _, code = os.environ.get(ADDRESS_ENV, "").partition(" ")
        sock = None
        if address and code == _CODE and address != self.address and not self.kernels:
            sock = _connect_to(address)
        if sock is None and self.keep > 0:
            sock = _connect_to(kept_address())
        if sock is None:
            return False
        self.sock, self.ready, self.shared = sock, False, True
        return True

    def start(self) -> None:
        """Start the server without waiting for its imports (they overlap with the grader's own work)."""
        with self.lock:
            self._start()

    def _start(self) -> None:
        if self.sock is not None or self.broken or self._connect():
            return
        import atexit
        import shutil
        import tempfile

        self.kept = self.keep > 0
        if self.home is None and not self.kernels:  # the server's own home for what its imports may write
            prefix = "fxcourse-forkserver-kept-" if self.kept else f"fxcourse-forkserver-{os.getpid()}-"
            self.home = Path(tempfile.mkdtemp(prefix=prefix))
            if not self.kept:  # a kept server removes its home itself when it ends
                atexit.register(shutil.rmtree, self.home, True)
        atexit.register(self.stop)
        self.address = "" if self.kernels else kept_address() if self.kept else \
            f"fxcourse-forkserver-{os.getpid()}-{os.urandom(8).hex()}"
        self.env = dict(os.environ) if self.kernels else worker_env(self.home)
        try:  # in "/": its working directory (and its judges') must outlive the folder the command ran in
            self.proc, self.sock = start_with_socket(self._argv, stdin=subprocess.DEVNULL,
                                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                                     env=self.env, cwd="/", start_new_session=self.kept)
        except OSError as exc:
            self.broken = f"could not start ({exc})"
            return
        if not self.kernels:
            os.environ[ADDRESS_ENV] = f"{self.address} {_CODE}"  # the processes this one starts share it

    def _wait_ready(self) -> None:
        if self.ready or self.broken:
            return
        deadline = time.monotonic() + _READY_TIMEOUT
        msg = b""
        while time.monotonic() < deadline:
            if select.select([self.sock], [], [], 0.5)[0]:
                try:
                    msg = self.sock.recv(_MSG)
                except OSError:
                    msg = b""
                break
            if self.proc is not None and self.proc.poll() is not None:
                break
        try:
            answer = json.loads(msg) if msg else {}
        except ValueError:
            answer = {}
        if answer.get("ready"):
            self.ready = True
            return
        if self.shared and self.keep > 0 and not self.replaced:
            # The user's kept server retired (its home or working directory was removed) or went away: start one.
            self.replaced = True
            self._close()
            self._start()
            self._wait_ready()
            return
        self._fail(answer.get("error") or self._exit_reason("did not get ready"))

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
        if self.address and os.environ.get(ADDRESS_ENV, "").startswith(self.address + " "):
            del os.environ[ADDRESS_ENV]
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.proc is not None and self.kept and self.ready and self.proc.poll() is None:
            self.proc = None  # it outlives us, waiting for the user's next command (then it ends by itself)
        if self.proc is not None:
            try:  # the closed socket stops it (after it waited for its managers); one still importing has none
                self.proc.wait(timeout=2 if self.ready else 0)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.proc.stderr is not None:
                self.proc.stderr.close()
            self.proc = None
        self.ready = self.shared = False

    def say_once(self, why: str) -> None:
        if not self.said:
            self.said = True
            print(f"fxcourse: the fork server {why}; each {'kernel' if self.kernels else 'worker and judge'} starts "
                  "as a fresh process instead (slower)", file=sys.stderr, flush=True)

    def request(self, req: dict, fds: list[int]) -> "Forked | None":
        self.start()
        with self.lock:
            if not self.broken:
                self._wait_ready()
            if self.broken:
                self.say_once(self.broken)
                return None
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                socket.send_fds(self.sock, [json.dumps(req).encode()], [theirs.fileno(), *fds])
            except OSError as exc:
                ours.close()
                gone = self.proc is None or self.proc.poll() is not None
                self._fail(f"stopped ({self._exit_reason('stopped') if gone else exc})")
                self.say_once(self.broken)
                return None
            finally:
                theirs.close()
        first = _recv_json(ours, 60.0)
        if not first or "pid" not in first:
            ours.close()
            why = (first or {}).get("error") or "did not fork the worker"
            with self.lock:
                if self.shared or (self.proc is not None and self.proc.poll() is not None):
                    self._fail(f"stopped ({self._exit_reason('stopped')})")
            self.say_once(f"could not fork a worker ({why})" if not self.broken else self.broken)
            return None
        return Forked(ours, int(first["pid"]))

    def stop(self) -> None:
        with self.lock:
            self._close()


def start_with_socket(argv: Callable[[int], list[str]], **popen) -> tuple[subprocess.Popen, socket.socket]:
    """Start `argv(fd)` (subprocess.Popen's `popen` options) holding one end of a new SOCK_SEQPACKET socket pair,
    whose descriptor is fd: the process, and our end. OSError, with nothing left open, when it cannot start."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        return subprocess.Popen(argv(theirs.fileno()), pass_fds=[theirs.fileno()], **popen), ours
    except OSError:
        ours.close()
        raise
    finally:
        theirs.close()


def _recv_json(sock: socket.socket, timeout: float | None) -> dict | None:
    try:
        if timeout is not None and not select.select([sock], [], [], timeout)[0]:
            return None
        msg = sock.recv(_MSG)
        return json.loads(msg) if msg else None
    except (OSError, ValueError):
        return None


class Forked:
    """A worker forked by the server: wait for it (with a wall-clock limit), or kill it."""

    def __init__(self, conn: socket.socket, pid: int) -> None:
        self.conn, self.pid = conn, pid  # pid: the worker's, as this grading process sees it

    def wait(self, wall: float) -> tuple[int | None, float]:
        """(exit code, or None when the wall-clock limit stopped it; CPU seconds the worker used)."""
        timed_out = not select.select([self.conn], [], [], wall)[0]
        if timed_out:
            self.kill()
        answer = _recv_json(self.conn, 120.0)
        self.conn.close()
        if answer is None or "code" not in answer:
            return (None if timed_out else -signal.SIGKILL), 0.0
        return (None if timed_out else int(answer["code"])), float(answer.get("cpu", 0.0))

    def result(self) -> int:
        """The exit code, once it ended (-SIGKILL when the manager gave none)."""
        answer = _recv_json(self.conn, None)
        self.conn.close()
        return int(answer["code"]) if answer and "code" in answer else -signal.SIGKILL

    def kill(self) -> None:
        try:
            self.conn.send(b"kill")
        except OSError:
            pass

    def close(self) -> None:
        """Kill the worker (if it still runs) and forget it: the manager kills it when the connection closes."""
        self.kill()
        self.conn.close()


_SERVER = _Server()
_KERNELS = _Server(kernels=True)  # a kernels' server is of no use to workers and judges, nor theirs to kernels


def prestart() -> None:
    """Start the fork server now if it will be used, so its imports overlap with the grader's own."""
    if enabled():
        _SERVER.start()


def keep_warm() -> None:
    """For a learner's command: join the user's kept server, or start one that waits for the next command
    (FXCOURSE_FORKSERVER_KEEP seconds after the last one ends), instead of a server that ends with this process."""
    if _SERVER.sock is None and not _SERVER.broken:
        _SERVER.keep = keep_seconds()


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


class ForkedProcess:
    """A forked judge or kernel, with the part of subprocess.Popen's interface the grader and jupyter_client use."""

    def __init__(self, forked: Forked, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
        self.forked, self.pid, self.returncode = forked, forked.pid, None
        self.stdin, self.stdout, self.stderr = stdin, stdout, None

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self.forked.conn], [], [], 0)[0]:
            self.returncode = self.forked.result()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if timeout is not None and not select.select([self.forked.conn], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired("judge", timeout)
            self.returncode = self.forked.result()
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            self.forked.kill()

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    terminate = functools.partialmethod(send_signal, signal.SIGTERM)


def spawn_judge(memory: int) -> ForkedProcess | None:
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
    return ForkedProcess(forked, os.fdopen(w_in, "wb"), os.fdopen(r_out, "rb"))


def spawn_kernel(argv: list[str], env: dict[str, str], cwd: str, out_fd: int, err_fd: int) -> ForkedProcess | None:
    """Fork the kernel `argv` (`python -m ipykernel_launcher ...`) with `env` in `cwd`, writing to `out_fd` and
    `err_fd`; None where the fork server cannot serve or `env` differs from the kernels' server's in a variable read
    at start or import (the caller then starts the kernel the usual way)."""
    if not enabled() or argv[:3] != [sys.executable, "-m", "ipykernel_launcher"]:
        return None
    _KERNELS.start()
    if any(env.get(k) != _KERNELS.env.get(k) for k in {*env, *_KERNELS.env} if k.startswith(_IMPORT_TIME)):
        return None
    forked = _KERNELS.request({"kernel": argv, "env": env, "cwd": cwd, "jail": False, "cgroup": None},
                              [out_fd, err_fd])
    return ForkedProcess(forked) if forked is not None else None


def stop() -> None:
    """End this process's fork servers (and what they still run); a later use starts anew."""
    _SERVER.stop()
    _KERNELS.stop()


def server_pid(kernels: bool = False) -> int | None:
    """The fork server's pid (or the kernels' one's) while it runs."""
    proc = (server := _KERNELS if kernels else _SERVER).proc
    return proc.pid if proc is not None and proc.poll() is None and server.ready else None
