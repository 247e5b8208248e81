"""The fork server: one pre-imported process per grading process that forks every worker, never running learner code.

Without it, every worker is a fresh `python -m autograder.grader.worker` that pays for Python, torch, IPython and
the check library before it runs one line of the learner's code. The fork server pays for those imports once
(`python -m autograder.grader.forkserver FD`, started by the grading process on first use) and then, for each
worker, forks a child with exactly the state it had after importing:

    grading process --request + fds (SOCK_SEQPACKET)--> fork server (root, imports done, single thread)
        fork --> manager (its own session; dies with the server; joins the worker's pids cgroup; unshare of the
                 mount, pid, network, IPC and UTS namespaces)
            fork --> worker (pid 1 of the new pid namespace; dies with the manager; stdout to the grader's file)
                     runs `autograder.grader.worker.main(job)`: enter_jail, apply_limits, learner code, evidence

The manager plays `unshare --fork --kill-child`: it waits for the worker, kills it when the grader says so (or
goes away), and answers the worker's exit code and CPU seconds. The server does no tensor math and sets one
intra-op thread, so no thread pool is running when it forks; it refuses to fork if a thread appeared.

Where the server cannot start or a fork fails, `spawn` returns None and the grader starts a fresh process as
before; one line on stderr says so, once per grading process. FXCOURSE_FORKSERVER=0 turns it off quietly.
"""
from __future__ import annotations

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

__all__ = ["Forked", "spawn", "prestart", "stop", "server_pid", "enabled"]

_PR_SET_PDEATHSIG = 1
_CLONE = {"mount": 0x00020000, "uts": 0x04000000, "ipc": 0x08000000, "pid": 0x20000000, "net": 0x40000000}
_READY_TIMEOUT = 300.0  # seconds the server may take to import everything (a busy machine)
_MSG = 1 << 16


def enabled() -> bool:
    """False when the instructor turned the fork server off (FXCOURSE_FORKSERVER=0) or this is not Linux."""
    return os.environ.get("FXCOURSE_FORKSERVER", "1").strip().lower() not in ("0", "no", "off", "false") \
        and sys.platform.startswith("linux") and hasattr(os, "fork") and hasattr(socket, "send_fds")


# ------------------------------------------------------------------------------------ the grader's side

class _Server:
    """The grading process's one fork server (started on first use, stopped when the process ends)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.ready = False
        self.broken = ""   # why it cannot be used (then every worker is a fresh process)
        self.said = False

    def _argv(self, fd: int) -> list[str]:
        return [sys.executable, "-s", "-m", "autograder.grader.forkserver", str(fd)]

    def start(self) -> None:
        """Start the server without waiting for its imports (they overlap with the grader's own work)."""
        with self.lock:
            if self.proc is not None or self.broken:
                return
            from autograder.grader.sandbox import _worker_env

            import atexit
            import shutil
            import tempfile

            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            # The server's own home for what its imports may write; each worker gets its scratch folder's.
            self.home = Path(tempfile.mkdtemp(prefix=f"fxcourse-forkserver-{os.getpid()}-"))
            atexit.register(shutil.rmtree, self.home, True)
            atexit.register(self.stop)
            env = _worker_env(self.home)
            try:
                self.proc = subprocess.Popen(self._argv(theirs.fileno()), pass_fds=[theirs.fileno()],
                                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.PIPE, env=env)
            except OSError as exc:
                self.broken = f"could not start ({exc})"
                ours.close()
                return
            finally:
                theirs.close()
            self.sock = ours

    def _wait_ready(self) -> None:
        if self.ready or self.broken:
            return
        deadline = time.monotonic() + _READY_TIMEOUT
        msg = b""
        while time.monotonic() < deadline:
            if select.select([self.sock], [], [], 0.5)[0]:
                msg = self.sock.recv(_MSG)
                break
            if self.proc.poll() is not None:
                break
        try:
            answer = json.loads(msg) if msg else {}
        except ValueError:
            answer = {}
        if answer.get("ready"):
            self.ready = True
            return
        self._fail(answer.get("error") or self._exit_reason("did not get ready"))

    def _exit_reason(self, what: str) -> str:
        if self.proc.poll() is None:
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
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            if self.proc.stderr is not None:
                self.proc.stderr.close()
            self.proc = None
        self.ready = False

    def say_once(self, why: str) -> None:
        if not self.said:
            self.said = True
            print(f"fxcourse: the fork server {why}; each worker starts as a fresh process instead (slower)",
                  file=sys.stderr, flush=True)

    def request(self, req: dict, out_fd: int) -> "Forked | None":
        self.start()
        with self.lock:
            if not self.broken:
                self._wait_ready()
            if self.broken:
                self.say_once(self.broken)
                return None
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                socket.send_fds(self.sock, [json.dumps(req).encode()], [theirs.fileno(), out_fd])
            except OSError as exc:
                ours.close()
                self._fail(f"stopped ({self._exit_reason('stopped') if self.proc.poll() is not None else exc})")
                self.say_once(self.broken)
                return None
            finally:
                theirs.close()
        first = _recv_json(ours, 60.0)
        if not first or "pid" not in first:
            ours.close()
            why = (first or {}).get("error") or "did not fork the worker"
            with self.lock:
                if self.proc is not None and self.proc.poll() is not None:
                    self._fail(f"stopped ({self._exit_reason('stopped')})")
            self.say_once(f"could not fork a worker ({why})" if not self.broken else self.broken)
            return None
        return Forked(ours, int(first["pid"]))

    def stop(self) -> None:
        with self.lock:
            self._close()


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


def prestart() -> None:
    """Start the fork server now if it will be used, so its imports overlap with the grader's own."""
    if enabled():
        _SERVER.start()


def spawn(*, job: str, cwd: str, env: dict[str, str], out_fd: int, jail: bool,
          cgroup: str | None) -> Forked | None:
    """Fork a worker that runs `job` (the path of its job file) with `env` in `cwd`, writing its output to
    `out_fd`; in fresh namespaces when `jail`, in the pids cgroup whose cgroup.procs file is `cgroup`.
    None when the fork server is off or cannot be used (the caller then starts a fresh process)."""
    if not enabled():
        return None
    return _SERVER.request({"job": job, "cwd": cwd, "env": env, "jail": jail, "cgroup": cgroup}, out_fd)


def stop() -> None:
    _SERVER.stop()


def server_pid() -> int | None:
    """The fork server's pid while it runs (for measuring its memory)."""
    proc = _SERVER.proc
    return proc.pid if proc is not None and proc.poll() is None and _SERVER.ready else None


# ------------------------------------------------------------------------------------ the server's side

def _prepare() -> None:
    """Everything a worker imports before the jail, once; no tensor math (no thread pool may be running)."""
    import warnings
    warnings.simplefilter("ignore")
    import matplotlib
    matplotlib.use("Agg")
    import torch

    torch.set_num_threads(1)
    import importlib
    import pkgutil

    import torch.fx  # noqa: F401
    import torch.nn.functional  # noqa: F401
    from IPython.core.interactiveshell import InteractiveShell  # noqa: F401
    from traitlets.config import Config  # noqa: F401

    import autograder.checks
    import autograder.grader.worker  # noqa: F401
    import fxplayground  # noqa: F401
    for mod in pkgutil.iter_modules(autograder.checks.__path__):
        importlib.import_module(f"autograder.checks.{mod.name}")


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _die_with_parent(parent: int) -> None:
    """SIGKILL when the parent goes; exit now if it already went (in a new pid namespace the parent is
    outside it: its pid reads 0)."""
    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() not in (parent, 0):
        os._exit(1)


def _send(fd: int, answer: dict) -> None:
    try:
        os.write(fd, json.dumps(answer).encode())
    except OSError:
        pass


def _worker(req: dict, out_fd: int, manager: int) -> None:
    """The forked worker: its output to the grader's file, its own environment, then the worker's main."""
    code = 1
    try:
        _die_with_parent(manager)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        os.closerange(3, 1 << 16)  # nothing of the server's (its socket above all) stays open
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL if sig != signal.SIGPIPE else signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.environ.clear()
        os.environ.update(req["env"])
        import random
        import tempfile

        tempfile.tempdir = None  # the scratch folder's TMPDIR, not one found before
        random.seed()            # a fresh process's random state, not the server's
        os.chdir(req["cwd"])
        from autograder.grader import worker

        sys.argv = [worker.__file__, req["job"]]
        try:
            code = worker.main(req["job"])
        except worker.JailError as exc:
            os.write(2, f"fxcourse-jail-error: {exc}\n".encode())
            code = 97
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        try:
            traceback.print_exc()
        except BaseException:
            pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        os._exit(code or 0)


def _manager(req: dict, conn: int, out_fd: int, server: int) -> None:
    """Between the server and the worker: set up its session, cgroup and namespaces, then wait for it."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        os.setsid()
        _die_with_parent(server)
        if req.get("cgroup"):
            with open(req["cgroup"], "w") as f:
                f.write(str(os.getpid()))
        if req.get("jail"):
            import ctypes

            flags = 0
            for flag in _CLONE.values():
                flags |= flag
            if _libc().unshare(flags) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"unshare: {os.strerror(err)}")
            from autograder.grader.worker import MS_PRIVATE, MS_REC, mount

            mount(None, "/", None, MS_REC | MS_PRIVATE)  # what unshare(1) does: no mount leaks back
        me = os.getpid()
        pid = os.fork()
        if pid == 0:
            os.close(conn)
            _worker(req, out_fd, me)
        os.close(out_fd)
        _send(conn, {"pid": pid})
        try:
            waiters = [conn, os.pidfd_open(pid)]
        except (AttributeError, OSError):
            waiters = [conn]
        pidfd = waiters[1] if len(waiters) == 2 else None
        while True:
            ready = select.select(waiters, [], [], None if pidfd is not None else 0.05)[0]
            if conn in ready:
                os.kill(pid, signal.SIGKILL)  # the grader said so, or went away: the namespace goes with it
                waiters.remove(conn)
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
        _send(conn, {"code": os.waitstatus_to_exitcode(status), "cpu": usage.ru_utime + usage.ru_stime})
    except BaseException as exc:
        _send(conn, {"error": f"{type(exc).__name__}: {exc}"[:300]})
        os._exit(1)
    os._exit(0)


def serve(fd: int) -> int:
    """The server's loop: import once, then one fork per request, until the grading process closes the socket."""
    sock = socket.socket(fileno=fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the grader's to handle; the socket's end stops us
    try:
        _prepare()
    except BaseException as exc:
        sock.send(json.dumps({"error": f"could not import what workers need ({type(exc).__name__}: {exc})"[:400]})
                  .encode())
        return 1
    threads = _threads()
    sock.send(json.dumps({"ready": True, "pid": os.getpid(), "threads": threads}).encode())
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # managers are reaped by the kernel
    me = os.getpid()
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(sock, _MSG, 2)
        except OSError:
            return 1
        if not msg:
            return 0
        if len(fds) != 2:
            for extra in fds:
                os.close(extra)
            continue
        conn, out_fd = fds
        try:
            req = json.loads(msg)
            import torch

            if _threads() > threads or torch.get_num_threads() != 1:
                raise RuntimeError(f"the server has {_threads()} threads and torch {torch.get_num_threads()} "
                                   f"intra-op threads (expected at most {threads} and 1): forking now is unsafe")
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
        except Exception as exc:
            _send(conn, {"error": f"{type(exc).__name__}: {exc}"[:300]})
            os.close(conn)
            os.close(out_fd)
            continue
        if pid == 0:
            sock.close()
            _manager(req, conn, out_fd, me)
        os.close(conn)
        os.close(out_fd)


if __name__ == "__main__":
    sys.exit(serve(int(sys.argv[1])))
