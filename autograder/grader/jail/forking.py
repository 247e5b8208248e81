"""The fork server's own process: it imports once, then forks a manager and a worker, judge or kernel per request.

Started by `autograder.grader.jail.forkserver` as `python -m autograder.grader.jail.forking FD [ADDRESS] [--keep S]
[--kernels]` (FD: its end of a SOCK_SEQPACKET socket pair). It never runs learner code itself; see
autograder.grader.jail.forkserver for the whole picture. `_prepare` is the one place where the server's process-wide
settings are made; a kernels' server (--kernels) makes none.
"""
from __future__ import annotations

import gc
import json
import os
import select
import signal
import socket
import struct
import sys
import time
from typing import Callable, NoReturn

_PR_SET_PDEATHSIG = 1
_CLONE = {"mount": 0x00020000, "uts": 0x04000000, "ipc": 0x08000000, "pid": 0x20000000, "net": 0x40000000}
_MSG = 1 << 16


def _prepare(kernels: bool = False) -> None:
    """Everything a worker imports before the jail, once; no tensor math (no thread pool may be running).
    For kernels: only what the course's notebooks import first, and no setting of any kind, so that a forked kernel
    has what a fresh one has (torch's thread count from the environment, no matplotlib backend chosen: the kernel
    picks its inline one; ipykernel and IPython are left to the child, their settings read the environment when
    their classes are defined)."""
    if kernels:
        import numpy  # noqa: F401
        import torch.fx  # noqa: F401
        import torch.nn  # noqa: F401
        return
    import warnings
    warnings.simplefilter("ignore")
    import matplotlib
    matplotlib.use("Agg")
    import torch

    torch.set_num_threads(1)
    import torch.fx  # noqa: F401
    import torch.nn.functional  # noqa: F401
    from IPython.core.interactiveshell import InteractiveShell  # noqa: F401
    # what InteractiveShell.instance() imports on first use, which every worker makes: imported here, once
    import IPython.core.application, IPython.core.completerlib, IPython.core.magics, IPython.core.oinspect  # noqa
    import IPython.utils.wildcard  # noqa: F401
    from traitlets.config import Config  # noqa: F401

    import autograder.checks  # noqa: F401  (the framework every job uses)
    import autograder.checks.evidence  # noqa: F401  (the judge's)
    import autograder.grader.engine.grading  # noqa: F401  (the judge's loop; nbformat)
    import autograder.grader.jail.worker  # noqa: F401
    import fxplayground  # noqa: F401


def _import_checks(names: list[str]) -> None:
    """The worker's parts of the exercises a job calls (their cases, evidence and models, never their judges or
    references: what is imported here is in every worker's memory), imported in the server on the first job that
    needs each (course code only: a name that is not an exercise id of the course is refused)."""
    import importlib

    from autograder.coursedata.exercises import EXERCISES

    known = {ex.id for ex in EXERCISES}
    for name in names:
        if name not in known:
            raise ValueError(f"{name!r} is not an exercise of the course")
        importlib.import_module(f"autograder.checks.{name}")


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def die_with_parent(parent: int) -> None:
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


def exit_after(body: Callable[[], int | None]) -> NoReturn:
    """In a forked child: run `body`, then leave with its exit code (SystemExit's; 1 after printing the traceback of
    anything else), the standard streams flushed and the interpreter's teardown skipped."""
    code = 1
    try:
        code = body() or 0
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
        os._exit(code)


def _worker(req: dict, out_fd: int, manager: int) -> NoReturn:
    """The forked worker: its output to the grader's file, its own environment, then the worker's main."""

    def body() -> int:
        die_with_parent(manager)
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
        from autograder.grader.jail import worker

        sys.argv = [worker.__file__, req["job"]]
        try:
            return worker.main(req["job"])
        except worker.JailError as exc:
            os.write(2, f"fxcourse-jail-error: {exc}\n".encode())
            return 97

    exit_after(body)


def _kernel(req: dict, fds: list[int], manager: int) -> NoReturn:
    """The forked kernel: `python -m ipykernel_launcher -f CONNECTION` (req["kernel"]) as its caller asked for it
    (its environment and working folder, stdout and stderr to fds), in a session of its own, with fresh random
    seeds (Python's, NumPy's, torch's) and the argv and sys.path a fresh launcher has."""

    def body() -> None:
        os.setsid()
        die_with_parent(manager)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
        os.closerange(3, 1 << 16)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.environ.clear()
        os.environ.update(req["env"])
        os.chdir(req["cwd"])
        import atexit
        import importlib.util
        import random
        import tempfile

        import numpy
        import torch

        random.seed()
        numpy.random.seed()
        torch.seed()
        tempfile.tempdir = None
        sys.argv = [importlib.util.find_spec("ipykernel_launcher").origin, *req["kernel"][3:]]  # as `python -m` has it
        del sys.path[0]  # `python -m` put the working folder first; ipykernel_launcher takes it out again
        from ipykernel import kernelapp

        try:
            kernelapp.launch_new_instance()
        except SystemExit as exc:
            if exc.code is not None:  # sys.exit() ends a kernel as it ends a fresh process: with 0
                raise
        finally:
            atexit._run_exitfuncs()  # what the interpreter's own exit would run

    exit_after(body)


def _judge(memory: int, fds: list[int], manager: int, instructor: str | None = None) -> None:
    """The forked judge: requests on stdin, answers on stdout (autograder.grader.engine.grading._judge_server), with
    the instructor's side the grading process found (`instructor`: its $FXCOURSE_INSTRUCTOR_SIDE, checks.keyring)."""
    code = 1
    try:
        die_with_parent(manager)
        import io

        os.dup2(fds[0], 0)
        os.dup2(fds[1], 1)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
        os.closerange(3, 1 << 16)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.chdir("/")
        if instructor:
            os.environ["FXCOURSE_INSTRUCTOR_SIDE"] = instructor
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "rb", closefd=False)))
        from autograder.grader.engine.grading import _judge_server

        code = _judge_server(memory)
    except BaseException:
        pass
    finally:
        os._exit(code or 0)


def _manager(req: dict, conn: int, fds: list[int], server: int) -> None:
    """Between the server and the worker: set up its session, cgroup and namespaces, then wait for it."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        os.setsid()
        die_with_parent(server)
        if req.get("cgroup"):
            with open(req["cgroup"], "w") as f:
                f.write(str(os.getpid()))
        into = None  # without root: the grader's scratch folder, where the worker's files are copied at its end
        if req.get("jail") and os.geteuid() != 0:
            from autograder.grader.jail import userjail

            userjail.enter_namespaces()
            into = os.open(req["cwd"], os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        elif req.get("jail"):
            import ctypes

            flags = 0
            for flag in _CLONE.values():
                flags |= flag
            if _libc().unshare(flags) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"unshare: {os.strerror(err)}")
            from autograder.grader.jail.mounts import MS_PRIVATE, MS_REC, mount

            mount(None, "/", None, MS_REC | MS_PRIVATE)  # what unshare(1) does: no mount leaks back
        me = os.getpid()
        pid = os.fork()
        if pid == 0:
            os.close(conn)
            if "judge" in req:
                _judge(int(req["judge"]), fds, me, req.get("instructor"))
            if "kernel" in req:
                _kernel(req, fds, me)
            _worker(req, fds[0], me)
        for fd in fds:
            os.close(fd)
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
        if into is not None:
            from autograder.grader.jail import userjail

            userjail.copy_out(req["cwd"], into)
        _send(conn, {"code": os.waitstatus_to_exitcode(status), "cpu": usage.ru_utime + usage.ru_stime})
    except BaseException as exc:
        _send(conn, {"error": f"{type(exc).__name__}: {exc}"[:300]})
        os._exit(1)
    os._exit(0)


def _listen(address: str) -> socket.socket | None:
    """The socket other grading processes of the same run connect to (an abstract name: gone with us)."""
    if not address:
        return None
    try:
        lsock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        lsock.bind("\0" + address)
        lsock.listen(64)
        return lsock
    except OSError:
        return None


def receive(sock: socket.socket, most: int) -> tuple[bytes, list[int]]:
    """One message and the file descriptors sent with it (at most `most`); nothing once the peer is gone."""
    try:
        msg, fds, _, _ = socket.recv_fds(sock, _MSG, most)
    except OSError:
        return b"", []
    return msg, fds


def _accept(lsock: socket.socket) -> socket.socket | None:
    """A connection from a process of our own uid (one the grading process started), else none."""
    try:
        conn, _ = lsock.accept()
    except OSError:
        return None
    _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    if uid != os.getuid():
        conn.close()
        return None
    return conn


def _unfit(home: str, home_id: tuple[int, int]) -> str:
    """Why a kept server must take no new command ("" while it may): its home folder (where its imports and the
    judges it forks write) or its working directory was removed or replaced since it started."""
    try:
        if os.readlink("/proc/self/cwd").endswith(" (deleted)"):
            return "its working directory was removed"
    except OSError:
        pass
    try:
        st = os.lstat(home)
    except OSError:
        return "its home folder was removed"
    return "" if (st.st_dev, st.st_ino) == home_id else "its home folder was replaced"


def _remove_home(home: str) -> None:
    """Remove a kept server's home, a folder made for it alone: only while it is still a folder of our own."""
    import shutil
    import stat

    try:
        st = os.lstat(home)
    except OSError:
        return
    if os.path.basename(home).startswith("fxcourse-forkserver-kept-") and stat.S_ISDIR(st.st_mode) \
            and st.st_uid == os.getuid():
        shutil.rmtree(home, ignore_errors=True)


def serve(fd: int, address: str = "", keep: float = 0.0, kernels: bool = False) -> int:
    """The server's loop: import once, then one fork per request, until the process that started it closes its
    socket. Processes the grading process started (fxcourse commands a test suite runs) connect at `address`;
    each is told {"ready": ...} once the imports are done.
    A kept server (`keep` > 0 seconds) goes on after that, for the same user's next commands, and ends once it has
    had no client and no child for `keep` seconds (then it removes its home, a folder made for it alone). One whose
    home or working directory was removed (`_unfit`) stops listening at once, tells a command that connected
    meanwhile {"retired": why} (the command then starts a new server), and ends as soon as it is idle.
    A kernels' server (`kernels`) imports only what kernels need (`_prepare`)."""
    sock: socket.socket | None = socket.socket(fileno=fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the grader's to handle; the socket's end stops us
    lsock = _listen(address)  # before the imports: who connects meanwhile waits in the backlog
    keep = keep if lsock is not None else 0.0  # another server holds the address: serve our starter only
    home = os.environ.get("HOME", "")
    try:
        st = os.stat(home)
        home_id = (st.st_dev, st.st_ino)
    except OSError:
        home_id = (-1, -1)
    try:
        _prepare(kernels)
        import torch
    except BaseException as exc:
        sock.send(json.dumps({"error": f"could not import what {'kernels' if kernels else 'workers'} need "
                                       f"({type(exc).__name__}: {exc})"[:400]}).encode())
        return 1
    threads = (_threads(), torch.get_num_threads())  # a kernels' server: torch's default, as a fresh process has it
    hello = {"ready": True, "pid": os.getpid(), "threads": threads[0]}
    sock.send(json.dumps(hello).encode())
    if keep:  # nobody reads our stderr once the starter has gone; SIGTERM ends us as idleness does
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    me = os.getpid()
    clients: list[socket.socket] = []
    idle_since = time.monotonic()
    try:
        while True:
            # Managers are waited for here, so that their CPU time (the workers' included) is counted as this
            # process's children's, as a fresh worker's is counted by the grading process.
            listening = [*([sock] if sock else []), *clients, *([lsock] if lsock else [])]
            ready = select.select(listening, [], [], 0.5)[0]
            children = _reap()
            unfit = _unfit(home, home_id) if keep else ""
            if sock is None and not clients and not children:
                if lsock is None or time.monotonic() - idle_since > keep:
                    return 0
            else:
                idle_since = time.monotonic()
            for src in ready:
                if src is lsock:
                    conn = _accept(lsock)
                    if conn is not None:
                        _send(conn.fileno(), {"retired": unfit} if unfit else hello)
                        if unfit:
                            conn.close()
                        else:
                            clients.append(conn)
                    continue
                msg, fds = receive(src, 3)
                if not msg:
                    if src is sock:
                        if not keep:
                            _reap()
                            return 0
                        sock.close()
                        sock = None
                    else:
                        clients.remove(src)
                        src.close()
                    continue
                _fork(msg, fds, threads, me, [s for s in (sock, *clients, lsock) if s is not None])
            if unfit and lsock is not None:  # the next command starts a new server at this address
                lsock.close()
                lsock = None
    finally:
        if keep:
            _remove_home(home)


def _reap() -> bool:
    """Wait for the managers that ended; True while a child of ours still runs."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if not pid:
            return True


def _fork(msg: bytes, fds: list[int], threads: tuple[int, int], me: int, ours: list[socket.socket]) -> None:
    """One request: fork its manager, which closes every socket of the server's."""
    if len(fds) < 2:
        for extra in fds:
            os.close(extra)
        return
    conn, rest = fds[0], fds[1:]
    try:
        req = json.loads(msg)
        import torch

        _import_checks(req.get("checks", []))
        if _threads() > threads[0] or torch.get_num_threads() != threads[1]:
            raise RuntimeError(f"the server has {_threads()} threads and torch {torch.get_num_threads()} "
                               f"intra-op threads (expected at most {threads[0]} and {threads[1]}): forking now "
                               "is unsafe")
        sys.stdout.flush()
        sys.stderr.flush()
        # Every object the server holds (its imports, the checks' included) leaves the collector's generations:
        # a child's collections never trace them, so they neither cost it a full collection of the imports
        # (in an ex01 worker, a sixth of its CPU time) nor touch, and so copy, the pages they share with us.
        gc.freeze()
        pid = os.fork()
    except Exception as exc:
        _send(conn, {"error": f"{type(exc).__name__}: {exc}"[:300]})
        for fd in fds:
            os.close(fd)
        return
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for s in ours:
            s.close()
        _manager(req, conn, rest, me)
    for fd in fds:
        os.close(fd)


if __name__ == "__main__":
    _args = sys.argv[1:]
    _keep = float(_args[_args.index("--keep") + 1]) if "--keep" in _args else 0.0
    _code = serve(int(_args[0]), _args[1] if len(_args) > 1 else "", _keep, "--kernels" in _args)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_code or 0)  # nothing is left to clean up: skip tearing torch down (most of a second)
