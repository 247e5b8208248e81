"""`fxcourse grade`'s kept nbgrader processes, forked from one process that imported nbgrader once.

Without it, each grader of `fxcourse grade --jobs N` is a fresh `python -c NBGRADER_SESSION` that pays for
Python and nbgrader's imports (most of a CPU second) at the start of the run, all of them at once and beside the
fork server's torch import, and a session killed at its time limit pays them again. Here one process per run pays
them once and forks each session:

    fxcourse grade --request {"token"} + [conn, stdin, stdout] (SOCK_SEQPACKET)--> nbgrader's fork process
        (`python -c NBFORK_LAUNCH FD JAIL COMMON...`: imports done, what the grading process found the jail to
         be, one thread, SIGINT blocked, runs no command itself)
        fork --> a session: the request's pipes as its stdin, stdout and stderr, the token in its environment,
                 SIGINT as Python's default (one sent before that is delivered then), dies with its parent; runs
                 `nbgrader.serve(COMMON)` as a fresh one does

The fork process is each session's parent: on the session's conn it answers the session's pid, and its exit code
once it has ended; it takes "int" (SIGINT) and "kill" (SIGKILL) there, and kills the session when the conn closes
while it runs (the grading process has gone). It ends once its own socket is closed and its sessions have ended.
The grading process sees each session through `Child`, the part of subprocess.Popen's interface a Session uses.

It runs no learner code and opens no gradebook (a forked connection would be shared). Where it cannot start,
import or fork, a session starts as a fresh process, and one line on stderr says so; FXCOURSE_FORKSERVER=0 turns
it off with the fork server.
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
from typing import NoReturn

from autograder.grader.forking import _MSG, _send, _threads
from autograder.grader.forkserver import _READY_TIMEOUT, _recv_json, start_with_socket
from autograder.grader.nbgrader import NBGRADER_SESSION, TOKEN_ENV

__all__ = ["NBFORK_LAUNCH", "Forker", "Child", "serve", "main", "enabled"]

# `python -c NBFORK_LAUNCH FD JAIL COMMON...`: what NBGRADER_SESSION does before it serves, then serve below (JAIL:
# sandbox.known_jail_support() as JSON).
NBFORK_LAUNCH = ("import sys, autograder; sys.argv[0] = 'nbgrader'; "
                 "from autograder.grader.gradebook import schema_revision_in_process; schema_revision_in_process(); "
                 "from autograder.grader.nbfork import main; main()")
_SIGNALS = {b"int": signal.SIGINT, b"kill": signal.SIGKILL}


# ------------------------------------------------------------------------------------ the fork process


def _prepare(common: list[str], jail: dict[str, str] | None) -> None:
    """What a session imports, once: nbgrader's application, and what its first `autograde` would import (the
    course's preprocessors, the gradebook's database driver); and what the grading process found the jail to be
    (`jail`, None when it did not try), so that no session tries again. No gradebook is opened."""
    from jupyter_core.application import NoStart  # noqa: F401
    from nbgrader.apps.nbgraderapp import NbGraderApp  # noqa: F401

    import autograder.grader.grading  # noqa: F401
    import autograder.grader.nbgrader  # noqa: F401  (serve)
    import autograder.grader.preprocessors  # noqa: F401  (nbgrader_config.py's pipelines)
    import sqlalchemy.dialects.sqlite  # noqa: F401

    if jail is not None:
        from autograder.grader.sandbox import adopt_jail_support

        adopt_jail_support(jail)
    db = next((a.split("=", 1)[1] for a in common if a.startswith("--CourseDirectory.db_url=")), "")
    if db.startswith("postgresql"):
        import sqlalchemy.dialects.postgresql  # noqa: F401


class _Kid:
    def __init__(self, pid: int, conn: socket.socket) -> None:
        self.pid, self.conn, self.listening = pid, conn, True
        try:
            self.pidfd: int | None = os.pidfd_open(pid)
        except (AttributeError, OSError):
            self.pidfd = None


def _session(token: str, fds: list[int], parent: int, common: list[str]) -> NoReturn:
    """The forked session: the request's pipes as its standard streams, then nbgrader.serve (which exits)."""
    from autograder.grader.forking import die_with_parent, exit_after

    def body() -> None:
        die_with_parent(parent)
        os.dup2(fds[0], 0)
        os.dup2(fds[1], 1)
        os.dup2(fds[1], 2)
        os.closerange(3, 1 << 16)  # nothing of the fork process's (its sockets above all) stays open
        encoding = sys.stdout.encoding
        sys.stdin = open(0, encoding=encoding, closefd=False)
        sys.stdout = open(1, "w", encoding=encoding, closefd=False)
        sys.stderr = open(2, "w", encoding=encoding, errors="backslashreplace", buffering=1, closefd=False)
        for sig in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # one sent since the fork arrives now
        import random

        random.seed()  # a fresh process's random state, not the fork process's
        from autograder.grader.nbgrader import serve as serve_commands

        os.environ[TOKEN_ENV] = token
        sys.argv = ["nbgrader", *common]  # a fresh session's
        serve_commands(common)

    exit_after(body)


def _fork(ctl: socket.socket, kids: dict[socket.socket, _Kid], msg: bytes, fds: list[int], threads: int,
          common: list[str]) -> None:
    """One request: fork a session with its pipes, or answer why not."""
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return
    conn = socket.socket(fileno=fds[0])
    try:
        token = json.loads(msg)["token"]
        if not isinstance(token, str):
            raise ValueError("the token is not a string")
        if _threads() > threads:
            raise RuntimeError(f"the fork process has {_threads()} threads (expected {threads}): forking now is "
                               "unsafe")
        sys.stdout.flush()
        sys.stderr.flush()
        me = os.getpid()
        pid = os.fork()
    except Exception as exc:
        _send(conn.fileno(), {"error": f"{type(exc).__name__}: {exc}"[:300]})
        conn.close()
        for fd in fds[1:]:
            os.close(fd)
        return
    if pid == 0:
        for s in (ctl, conn, *kids):  # closed below with every other descriptor; never by a collected object
            s.detach()
        _session(token, fds[1:], me, common)
    for fd in fds[1:]:
        os.close(fd)
    kids[conn] = _Kid(pid, conn)
    _send(conn.fileno(), {"pid": pid})


def serve(fd: int, common: list[str], jail: dict[str, str] | None = None) -> int:
    """The fork process's loop: import once, then fork one session per request until the grading process closes
    its socket (`fd`) and every session has ended. `common`: the course's nbgrader options, for each session;
    `jail`: what the grading process's sandbox.jail_support found (None: it did not try)."""
    ctl: socket.socket | None = socket.socket(fileno=fd)
    # Ctrl-C is the grading process's, and each session's: blocked, not ignored, so that an interrupt sent to a
    # session before it has set its handler waits for it instead of being lost.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        _prepare(common, jail)
    except BaseException as exc:
        _send(ctl.fileno(), {"error": f"could not import nbgrader ({type(exc).__name__}: {exc})"[:400]})
        return 1
    threads = _threads()
    _send(ctl.fileno(), {"ready": True, "pid": os.getpid()})
    kids: dict[socket.socket, _Kid] = {}
    while ctl is not None or kids:
        waiting = [*([ctl] if ctl is not None else []), *(k.conn for k in kids.values() if k.listening),
                   *(k.pidfd for k in kids.values() if k.pidfd is not None)]
        polled = any(k.pidfd is None for k in kids.values())
        ready = select.select(waiting, [], [], 0.05 if polled else None)[0]
        if ctl is not None and ctl in ready:
            try:
                msg, fds, _, _ = socket.recv_fds(ctl, _MSG, 3)
            except OSError:
                msg, fds = b"", []
            if msg:
                _fork(ctl, kids, msg, fds, threads, common)
            else:
                for extra in fds:
                    os.close(extra)
                ctl.close()
                ctl = None
        for kid in list(kids.values()):
            if kid.listening and kid.conn in ready:
                try:
                    said = kid.conn.recv(64)
                except OSError:
                    said = b""
                if not said:  # the grading process let go of it, or went away: it may not run on unseen
                    kid.listening = False
                os.kill(kid.pid, _SIGNALS.get(said, signal.SIGKILL))  # not yet waited for: it is ours
            done, status = os.waitpid(kid.pid, os.WNOHANG)
            if done:
                _send(kid.conn.fileno(), {"code": os.waitstatus_to_exitcode(status)})
                kid.conn.close()
                if kid.pidfd is not None:
                    os.close(kid.pidfd)
                del kids[kid.conn]
    return 0


def main() -> None:
    """NBFORK_LAUNCH's entry: serve, then exit without tearing nbgrader's imports down (a third of a second)."""
    code = serve(int(sys.argv[1]), sys.argv[3:], json.loads(sys.argv[2]))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


# ------------------------------------------------------------------------------------ the grading process's side


def enabled() -> bool:
    from autograder.grader import forkserver

    return forkserver.enabled() and hasattr(os, "pidfd_open")


class Forker:
    """The grading run's fork process: started on the first session, ended by close()."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc: subprocess.Popen | None = None
        self.ctl: socket.socket | None = None
        self.common: list[str] | None = None
        self.broken = "" if enabled() else "is off"
        self.said = False

    def _start(self, cmd: list[str], env: dict[str, str], cwd) -> None:
        from autograder.grader.sandbox import known_jail_support

        jail = json.dumps(known_jail_support())
        try:
            self.proc, self.ctl = start_with_socket(
                lambda fd: [cmd[0], "-c", NBFORK_LAUNCH, str(fd), jail, *self.common], cwd=cwd, env=env,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError as exc:
            self.broken = f"could not start ({exc})"

    def fork(self, cmd: list[str], env: dict[str, str], cwd) -> "Child | None":
        """A session of `cmd` (nbgrader.session_command's, whose options every session of the run shares) with
        `env` (its token, TOKEN_ENV, its own), started without waiting for the fork process's imports; None where
        this process cannot be used (the caller starts a fresh one)."""
        if cmd[1:3] != ["-c", NBGRADER_SESSION]:  # not a kept nbgrader process: nothing this one can fork
            return None
        token = env[TOKEN_ENV]
        with self.lock:
            if self.common is None:
                self.common = list(cmd[3:])
                if not self.broken:
                    self._start(cmd, {k: v for k, v in env.items() if k != TOKEN_ENV}, cwd)
            if self.broken or self.common != list(cmd[3:]):
                return None
            (r_in, w_in), (r_out, w_out) = os.pipe(), os.pipe()
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                socket.send_fds(self.ctl, [json.dumps({"token": token}).encode()], [theirs.fileno(), r_in, w_out])
                unreached = None
            except OSError as exc:
                unreached = exc
                for fd in (w_in, r_out):
                    os.close(fd)
                ours.close()
            finally:
                theirs.close()
                os.close(r_in)
                os.close(w_out)
        if unreached is not None:
            self.failed(f"could not be reached ({unreached})")
            return None
        return Child(self, ours, w_in, r_out)

    def failed(self, why: str) -> None:
        """A session could not be had from it: use fresh processes from now on, and say so once."""
        with self.lock:
            if not self.broken:
                error, gone = "", False
                while self.ctl is not None and not gone and select.select([self.ctl], [], [], 0)[0]:
                    answer = _recv_json(self.ctl, 0)  # "ready", then its error if it had one; nothing once it has ended
                    gone = answer is None
                    error = (answer or {}).get("error") or error
                self.broken = error or why
                if gone and self.proc is not None:
                    try:  # its socket closes just before it can be waited for
                        self.broken += f" (it exited with code {self.proc.wait(timeout=5)})"
                    except subprocess.TimeoutExpired:
                        pass
            if not self.said:
                self.said = True
                print(f"fxcourse: nbgrader's fork process {self.broken}; each grader starts nbgrader as a fresh "
                      "process instead (slower)", file=sys.stderr, flush=True)

    def close(self, grace: float = 30.0) -> None:
        """No more sessions: the process ends once the sessions it forked have (killed after `grace` seconds)."""
        with self.lock:
            if self.ctl is not None:
                self.ctl.close()
                self.ctl = None
            proc, self.proc = self.proc, None
        if proc is not None:
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class Child:
    """A session forked by the fork process, with the part of subprocess.Popen's interface a Session uses."""

    def __init__(self, forker: Forker, conn: socket.socket, stdin: int, stdout: int) -> None:
        self.forker, self.conn = forker, conn
        self._lock = threading.Lock()  # one reader of `conn` at a time (a grader's wait, an interrupt's stop)
        self.pid: int | None = None
        self.returncode: int | None = None
        self.stdin = open(stdin, "w", errors="replace")
        self.stdout = open(stdout, errors="replace")

    def confirm(self, timeout: float = _READY_TIMEOUT) -> bool:
        """Wait until the fork process has forked it (its imports may still be under way): False when it could
        not, and the session is to start as a fresh process."""
        with self._lock:
            if self.pid is not None or self.returncode is not None:
                return self.pid is not None
            answer = _recv_json(self.conn, timeout)
            if answer and "pid" in answer:
                self.pid = int(answer["pid"])
                return True
            self.returncode = -signal.SIGKILL
        self.forker.failed((answer or {}).get("error") or "did not fork an nbgrader process")
        self._close()
        return False

    def _close(self) -> None:
        self.conn.close()
        for f in (self.stdin, self.stdout):
            try:
                f.close()
            except OSError:
                pass

    def _ended(self, timeout: float | None) -> bool:
        """True once the session has ended (its exit code in returncode), waiting up to `timeout` seconds."""
        if self.returncode is not None:
            return True
        end = None if timeout is None else time.monotonic() + timeout
        if not self._lock.acquire(timeout=-1 if end is None else timeout):
            return False
        try:
            while self.returncode is None:
                left = None if end is None else max(0.0, end - time.monotonic())
                if self.conn.fileno() >= 0 and not select.select([self.conn], [], [], left)[0]:
                    return False
                answer = _recv_json(self.conn, None)  # (nothing from a closed one)
                if answer and "pid" in answer:
                    self.pid = int(answer["pid"])
                    continue
                self.returncode = int(answer["code"]) if answer and "code" in answer else -signal.SIGKILL
                self.conn.close()
            return True
        finally:
            self._lock.release()

    def poll(self) -> int | None:
        self._ended(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended(timeout):
            raise subprocess.TimeoutExpired("nbgrader", timeout)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            try:
                self.conn.send(b"int" if sig == signal.SIGINT else b"kill")
            except OSError:
                pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)
