"""Fresh Jupyter kernels forked from a pre-imported process, for running many notebooks in a row headless.

A kernel started the usual way (`python -m ipykernel_launcher -f CONNECTION`) pays for Python, the kernel's own
machinery and torch before the notebook's first line: about 2.5 s of CPU, most of a short notebook. The kernel
server pays those imports once (`python -m autograder.grader.jail.kernels FD`, started by the process that runs the
notebooks, on first use) and then forks one child per kernel asked for. The child turns itself into exactly what
the launcher would have started: its own session, the environment, working folder, argv and sys.path[0] of
that command, fresh random seeds (Python's, NumPy's and torch's), standard output and error where the caller
asked, then `ipykernel.kernelapp.launch_new_instance()`. No notebook ran in the server: a forked kernel starts
with no state of any notebook, only modules imported (matplotlib is left out: the kernel picks its inline
backend when the notebook imports it).

`ForkedKernelProvisioner` is the jupyter_client provisioner that asks the server instead of starting a process;
`autograder.grader.jail.headless.execute(..., fork=True)` uses it. Where the server cannot be had (not Linux, it did
not start, or the kernel's environment differs from the server's in a variable read at import time, such as
PYTHONPATH) the kernel is started the usual way, and one line on stderr says why, once per process.
FXCOURSE_KERNEL_FORK=0 turns forking off quietly.

The server serves the process that started it only (a socket pair), does no work of its own, and ends with that
process: when the socket closes it kills the kernels still running and exits.
"""
from __future__ import annotations

import atexit
import functools
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading

from autograder.grader.jail.forkserver import ended

__all__ = ["ForkedKernelProvisioner", "enabled", "stop", "server_pid"]

_MSG = 1 << 16
_READY_TIMEOUT = 300.0
# Read at interpreter start or at import by what the server imports: a kernel whose environment differs in one of
# these from the server's is started the usual way.
_IMPORT_TIME = ("PYTHON", "OMP_", "MKL_", "KMP_", "GOMP_", "OPENBLAS", "TORCH", "LD_", "CUDA", "NUMPY")


def enabled() -> bool:
    """False with FXCOURSE_KERNEL_FORK=0, or where a process cannot fork and pass file descriptors."""
    return os.environ.get("FXCOURSE_KERNEL_FORK", "1").strip().lower() not in ("0", "no", "off", "false") \
        and sys.platform.startswith("linux") and hasattr(os, "fork") and hasattr(socket, "send_fds")


def _import_time_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(_IMPORT_TIME)}


# ------------------------------------------------------------------------------------------------- client

class _Server:
    """The kernel server of this process, started on first use."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.env: dict[str, str] = {}
        self.broken = ""   # why this process starts its kernels the usual way, once said

    def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.env = dict(os.environ)
            self.proc = subprocess.Popen([sys.executable, "-m", "autograder.grader.jail.kernels", str(theirs.fileno())],
                                         pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, env=self.env,
                                         start_new_session=True)
        finally:
            theirs.close()
        self.sock = ours
        atexit.register(stop)
        ready, _, _ = select.select([ours], [], [], _READY_TIMEOUT)
        answer = json.loads(ours.recv(_MSG) or b"{}") if ready else {"error": "no answer in time"}
        if not answer.get("ready"):
            self._close()
            raise OSError(answer.get("error", "it ended before it was ready"))

    def _close(self) -> None:
        if self.sock is not None:
            self.sock.close()  # the server kills the kernels still running and exits
            self.sock = None
        if self.proc is not None:
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def fork(self, argv: list[str], env: dict[str, str], cwd: str, fds: list[int]) -> int | None:
        """The pid of a kernel forked for `argv` (the launcher's command), or None: start it the usual way."""
        with self.lock:
            if self.broken:
                return None
            try:
                if self.sock is None:
                    self._start()
                if _import_time_env(env) != _import_time_env(self.env):
                    return None  # not a broken server: this kernel wants another interpreter set-up
                socket.send_fds(self.sock, [json.dumps({"argv": argv, "env": env, "cwd": cwd}).encode()], fds)
                ready, _, _ = select.select([self.sock], [], [], 60)
                answer = json.loads(self.sock.recv(_MSG) or b"{}") if ready else {"error": "no answer in 60 s"}
                if "pid" not in answer:
                    raise OSError(answer.get("error", "the server went away"))
                return int(answer["pid"])
            except (OSError, ValueError) as exc:
                self.broken = f"{type(exc).__name__}: {exc}"
                self._close()
                print(f"fxcourse: kernels start without the kernel server ({self.broken})", file=sys.stderr)
                return None

    def stop(self) -> None:
        with self.lock:
            self._close()


_SERVER = _Server()


def stop() -> None:
    """End this process's kernel server (and the kernels it still runs); a later kernel starts a new one."""
    _SERVER.stop()
    _SERVER.broken = ""


def server_pid() -> int | None:
    proc = _SERVER.proc
    return proc.pid if proc is not None and proc.poll() is None else None


class _Forked:
    """What jupyter_client's LocalProvisioner keeps of its kernel's Popen, for a kernel the server forked (a
    child of the server, in a session of its own): alive until it is gone or a zombie."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int) -> None:
        self.pid, self.returncode = pid, None

    def poll(self) -> int | None:
        if self.returncode is None and ended(self.pid, 0):
            self.returncode = 0  # the server reaps it: its exit code is not ours to read
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not ended(self.pid, float("inf") if timeout is None else timeout):
            raise subprocess.TimeoutExpired(f"kernel {self.pid}", timeout)
        return self.poll()

    def send_signal(self, signum: int) -> None:
        try:
            os.kill(self.pid, signum)
        except ProcessLookupError:
            pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


@functools.lru_cache(maxsize=None)
def _provisioner_class():
    from jupyter_client.provisioning import LocalProvisioner

    class ForkedKernelProvisioner(LocalProvisioner):
        """LocalProvisioner whose kernel the kernel server forks (the usual process where it cannot)."""

        async def launch_kernel(self, cmd: list[str], **kwargs):
            fds = []  # the kernel's stdout and stderr: as given, else this process's own (as Popen inherits them)
            for name, default in (("stdout", 1), ("stderr", 2)):
                stream = kwargs.get(name)
                fds.append(stream.fileno() if hasattr(stream, "fileno") else stream if isinstance(stream, int)
                           else default)
            cwd = str(kwargs.get("cwd") or os.getcwd())
            env = dict(kwargs.get("env") or os.environ)
            if not kwargs.get("independent"):
                env["JPY_PARENT_PID"] = str(os.getpid())  # as jupyter_client's launcher sets it
            pid = _SERVER.fork(list(cmd), env, cwd, fds) \
                if enabled() and cmd[1:3] == ["-m", "ipykernel_launcher"] else None
            if pid is None:
                return await super().launch_kernel(cmd, **kwargs)
            self.process = _Forked(pid)
            self.pid = self.pgid = pid  # the kernel leads a session of its own
            self.cwd = cwd
            return self.connection_info

    return ForkedKernelProvisioner


def __getattr__(name: str):
    if name == "ForkedKernelProvisioner":  # jupyter_client is imported when a provisioner is first asked for
        return _provisioner_class()
    raise AttributeError(name)


# ------------------------------------------------------------------------------------------------- server

def _prepare() -> None:
    """What the course's notebooks import first, once; nothing runs. The kernel's own machinery (ipykernel,
    IPython) is left to the child: its settings read the environment when their classes are defined."""
    import numpy  # noqa: F401
    import torch  # noqa: F401
    import torch.fx  # noqa: F401
    import torch.nn  # noqa: F401


def _kernel(req: dict, fds: list[int], server: int) -> None:
    """In the forked child: become `python -m ipykernel_launcher -f CONNECTION` as the caller asked for it."""
    code = 1
    try:
        os.setsid()
        from autograder.grader.jail.forking import die_with_parent

        die_with_parent(server)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
        os.closerange(3, 1 << 16)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.environ.clear()
        os.environ.update(req["env"])
        os.chdir(req["cwd"])
        import random
        import tempfile

        import numpy
        import torch

        random.seed()
        numpy.random.seed()
        torch.seed()
        tempfile.tempdir = None
        import importlib.util

        sys.argv = [importlib.util.find_spec("ipykernel_launcher").origin, *req["argv"][3:]]  # as `python -m` sets it
        del sys.path[0]  # `python -m` put the working folder first; ipykernel_launcher takes it out again
        from ipykernel import kernelapp

        kernelapp.launch_new_instance()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        import atexit

        try:
            atexit._run_exitfuncs()  # what the interpreter's own exit would run
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def serve(fd: int) -> int:
    """Import once, then fork a kernel per request until the socket closes; then kill what still runs."""
    from autograder.grader.jail.forking import receive

    sock = socket.socket(fileno=fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the caller's Ctrl-C is the caller's; the socket's end stops us
    try:
        _prepare()
    except BaseException as exc:
        sock.send(json.dumps({"error": f"could not import what kernels need ({type(exc).__name__}: {exc})"[:400]})
                  .encode())
        sock.close()
        return 1
    server = os.getpid()
    sock.send(json.dumps({"ready": True, "pid": server}).encode())
    kernels: set[int] = set()
    try:
        while True:
            ready = select.select([sock], [], [], 0.05 if kernels else 1.0)[0]
            for pid in list(kernels):
                if os.waitpid(pid, os.WNOHANG)[0]:
                    kernels.discard(pid)
            if not ready:
                continue
            msg, fds = receive(sock, 2)
            if not msg:
                return 0
            try:
                req = json.loads(msg)
                if len(fds) != 2:
                    raise ValueError(f"expected 2 file descriptors (stdout, stderr), got {len(fds)}")
                pid = os.fork()
            except Exception as exc:
                sock.send(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:300]}).encode())
                for extra in fds:
                    os.close(extra)
                continue
            if pid == 0:
                _kernel(req, fds, server)
            for extra in fds:
                os.close(extra)
            kernels.add(pid)
            sock.send(json.dumps({"pid": pid}).encode())
    finally:
        sock.close()
        for pid in kernels:
            try:
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass


if __name__ == "__main__":
    _code = serve(int(sys.argv[1]))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_code or 0)  # nothing to clean up: skip tearing torch down
