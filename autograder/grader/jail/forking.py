"""The fork server's own process: it imports once, then forks a manager and a worker or judge per request.

Started by `autograder.grader.jail.forkserver` as `python -m autograder.grader.jail.forking FD ADDRESS KEEP` (FD: its
end of a SOCK_SEQPACKET socket pair with the command that started it; ADDRESS: the abstract socket name where the
same user's other commands join it; KEEP: seconds it waits, once its last client has gone, for the next one). It
never runs learner code itself; see autograder.grader.jail.forkserver for the whole picture. `_prepare` is the one
place where the server's process-wide settings are made.
"""
from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import signal
import socket
import sys
import time
from typing import NoReturn

from autograder.grader.jail.forkserver import HOME_PREFIX, MSG, peer
from autograder.grader.jail.userjail import (CLONE_NEWUSER, NAMESPACES, copy_out, die_with_parent, enter_namespaces,
                                             exit_after, unshare)



def _prepare() -> None:
    """Everything a worker imports before the jail, once; no tensor math (no thread pool may be running)."""
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
    references: what is imported here is in every worker's memory), and the torch modules their answers and checks
    import lazily (the exercise's `warm_imports`), imported in the server on the first job that needs each (course
    code only: a name that is not an exercise id of the course is refused)."""
    import importlib

    from autograder.coursedata.exercises import EXERCISES

    known = {ex.id: ex for ex in EXERCISES}
    for name in names:
        if name not in known:
            raise ValueError(f"{name!r} is not an exercise of the course")
        for module in (f"autograder.checks.{name}", *known[name].warm_imports):
            importlib.import_module(module)


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _send(fd: int, answer: dict) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, json.dumps(answer).encode())


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


def _judge(memory: int, fds: list[int], manager: int, instructor: str | None = None) -> NoReturn:
    """The forked judge: requests on stdin, answers on stdout (autograder.grader.engine.grading._judge_server), with
    the instructor's side the asking command found (`instructor`: its $FXCOURSE_INSTRUCTOR_SIDE, checks.keyring)."""

    def body() -> int:
        die_with_parent(manager)
        import io

        os.dup2(fds[0], 0)
        os.dup2(fds[1], 1)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
        os.closerange(3, 1 << 16)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.chdir("/")
        os.environ.pop("FXCOURSE_INSTRUCTOR_SIDE", None)  # the server is shared: the asking command's, or none
        if instructor:
            os.environ["FXCOURSE_INSTRUCTOR_SIDE"] = instructor
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "rb", closefd=False)))
        from autograder.grader.engine.grading import _judge_server

        return _judge_server(memory)

    exit_after(body)


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
            enter_namespaces()
            into = os.open(req["cwd"], os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        elif req.get("jail"):
            unshare(NAMESPACES & ~CLONE_NEWUSER)  # as root, namespaces of the machine's own user namespace
            from autograder.grader.jail.mounts import MS_PRIVATE, MS_REC, mount

            mount(None, "/", None, MS_REC | MS_PRIVATE)  # what unshare(1) does: no mount leaks back
        me = os.getpid()
        pid = os.fork()
        if pid == 0:
            os.close(conn)
            if "judge" in req:
                _judge(int(req["judge"]), fds, me, req.get("instructor"))
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
            copy_out(req["cwd"], into)
        _send(conn, {"code": os.waitstatus_to_exitcode(status), "cpu": usage.ru_utime + usage.ru_stime})
    except BaseException as exc:
        _send(conn, {"error": f"{type(exc).__name__}: {exc}"[:300]})
        os._exit(1)
    os._exit(0)


def _listen(address: str) -> socket.socket | None:
    """The socket the user's other commands connect to (an abstract name: gone with us); None where another server
    has it."""
    try:
        lsock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        lsock.bind("\0" + address)
        lsock.listen(64)
        return lsock
    except OSError:
        return None


def _accept(lsock: socket.socket) -> socket.socket | None:
    """A connection from a process of our own uid, else none."""
    with contextlib.suppress(OSError):
        conn, _ = lsock.accept()
        if peer(conn)[1] == os.getuid():
            return conn
        conn.close()
    return None


def _identity(path: str) -> tuple[int, int] | None:
    with contextlib.suppress(OSError):
        st = os.lstat(path)
        return st.st_dev, st.st_ino
    return None


def _unfit(home: str, home_id: tuple[int, int] | None) -> str:
    """Why the server must take no new command ("" while it may): its home folder (where its imports and the judges
    it forks write) was removed or replaced since it started."""
    now = _identity(home)
    return "its home folder was removed" if now is None else "" if now == home_id else "its home folder was replaced"


def _remove_home(home: str) -> None:
    """Remove the server's home, a folder made for it alone: only while it is still a folder of our own."""
    import shutil
    import stat

    with contextlib.suppress(OSError):
        st = os.lstat(home)
        if os.path.basename(home).startswith(HOME_PREFIX) and stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():
            shutil.rmtree(home, ignore_errors=True)


def serve(fd: int, address: str, keep: float) -> int:
    """The server's loop: import once, then one fork per request, for as long as it has a client. Its first client
    is the command that started it (on `fd`); the same user's other commands connect at `address` (each is told
    {"ready": ...} once the imports are done). It ends once it has had no client for `keep` seconds (at once with 0;
    what its clients left running dies with it), and then removes its home, a folder made for it alone. One whose
    home was removed (`_unfit`) stops listening at once, tells a command that connected meanwhile {"retired": why}
    (the command then starts a new server), and ends as soon as it is idle. Where another server already listens at
    `address`, it serves its starter alone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the commands' to handle; their sockets' end stops us
    clients = [socket.socket(fileno=fd)]
    lsock = _listen(address)  # before the imports: who connects meanwhile waits in the backlog
    home = os.environ.get("HOME", "")
    home_id = _identity(home)
    try:
        try:
            _prepare()
            import torch
        except BaseException as exc:
            clients[0].send(json.dumps({"error": f"could not import what workers need "
                                                 f"({type(exc).__name__}: {exc})"[:400]}).encode())
            return 1
        threads = (_threads(), torch.get_num_threads())
        hello = {"ready": True, "pid": os.getpid(), "threads": threads[0]}
        clients[0].send(json.dumps(hello).encode())
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)  # our starter may go: nobody reads our stderr then
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # ends us as idleness does
        me = os.getpid()
        idle_since = time.monotonic()
        while True:
            # Managers are waited for here, so that their CPU time (the workers' included) is counted as this
            # process's children's.
            _reap()
            if clients:
                idle_since = time.monotonic()
            elif lsock is None or time.monotonic() - idle_since >= keep:
                return 0
            wait = 0.5 if clients else min(0.5, keep)
            ready = select.select([*clients, *([lsock] if lsock else [])], [], [], wait)[0]
            unfit = _unfit(home, home_id)
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
                try:
                    msg, fds, _, _ = socket.recv_fds(src, MSG, 3)  # a request, and the descriptors sent with it
                except OSError:
                    msg, fds = b"", []
                if not msg:
                    clients.remove(src)
                    src.close()
                    continue
                _fork(msg, fds, threads, me, [*clients, *([lsock] if lsock else [])])
            if unfit and lsock is not None:  # the next command starts a new server at this address
                lsock.close()
                lsock = None
    finally:
        _remove_home(home)


def _reap() -> None:
    """Wait for the managers that ended."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


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
    _code = serve(int(sys.argv[1]), sys.argv[2], float(sys.argv[3]))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_code or 0)  # nothing is left to clean up: skip tearing torch down (most of a second)
