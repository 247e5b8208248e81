"""Execute notebooks top to bottom in fresh kernels (lessons headless, CI)."""
from __future__ import annotations

import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

import nbformat
from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner
from jupyter_core.utils import run_sync
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from autograder.grader.jail import forkserver

__all__ = ["execute", "run_notebooks", "ForkedKernelProvisioner"]
_KERNEL_LOG_SHOWN = 20_000  # bytes of the kernel's stderr shown with a failure


class ForkedKernelProvisioner(LocalProvisioner):
    """LocalProvisioner whose kernel the fork server forks (forkserver.spawn_kernel); the usual process where it
    cannot. jupyter_client signals the kernel's process group (the kernel leads a session of its own)."""

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
        proc = forkserver.spawn_kernel(list(cmd), env, cwd, *fds)
        if proc is None:
            return await super().launch_kernel(cmd, **kwargs)
        self.process, self.pid, self.pgid, self.cwd = proc, proc.pid, proc.pid, cwd
        return self.connection_info


def execute(path: str | Path, timeout: float = 600, allow_errors: bool = False, cwd: str | Path | None = None,
            fork: bool = False):
    """Run a notebook in a fresh python3 kernel; return the executed notebook (raises on a cell error).

    The kernel talks over Unix sockets (IPC transport) in a private temporary folder, not over loopback TCP:
    nothing else on the machine can connect to it, and ipykernel has no unencrypted-TCP warning to print.
    What the kernel process itself writes to its stderr (its own log, C++ libraries such as the profiler) is
    not cell output: it is kept aside and shown only when the run fails, so a good run prints nothing of it.
    The kernel manager is the asynchronous one: with a blocking client, nbclient's wait for the next output
    holds its event loop, so neither the cell's timeout nor its watch for a dead kernel ever runs.

    With `fork`, the kernel is forked from this process's kernels' fork server, which has imported numpy and
    torch once (autograder.grader.jail.forkserver.spawn_kernel): for running many notebooks in a row. Without it (what a
    learner's JupyterLab does, and what the benchmarks time), the kernel is a new `python -m ipykernel_launcher`.
    """
    nb = nbformat.read(str(path), as_version=4)
    with tempfile.TemporaryDirectory(prefix="fxcourse-kernel-") as private, \
            open(Path(private) / "kernel-stderr.log", "w+b") as kernel_stderr:
        km = AsyncKernelManager(kernel_name="python3", transport="ipc", ip=str(Path(private) / "kernel"))
        if fork and forkserver.enabled():
            km.kernel_id = str(uuid.uuid4())
            km.provisioner = ForkedKernelProvisioner(kernel_id=km.kernel_id, kernel_spec=km.kernel_spec, parent=km)
        client = NotebookClient(nb, km=km, timeout=int(timeout), allow_errors=allow_errors,
                                resources={"metadata": {"path": str(cwd or Path(path).parent)}})
        try:
            client.execute(stderr=kernel_stderr)
        except BaseException:
            kernel_stderr.seek(0)
            logged = kernel_stderr.read()[-_KERNEL_LOG_SHOWN:].decode("utf-8", "replace")
            if logged.strip():
                sys.stderr.write(f"--- the kernel's own log ({Path(path).name}) ---\n{logged.rstrip()}\n")
            raise
        finally:  # nbclient leaves a kernel manager it was handed running, and its client's channels open
            if client.kc is not None:
                client.kc.stop_channels()
            if km.has_kernel:
                run_sync(km.shutdown_kernel)(now=False)
    return nb


def run_notebooks(paths: list[Path], timeout: float = 600) -> list[str]:
    """Run each notebook in a fresh kernel (forked: see execute), printing its time; return the failures."""
    failures = []
    for path in paths:
        start = time.monotonic()
        try:
            execute(path, timeout, fork=True)
            print(f"ok     {path.name}  {time.monotonic() - start:.1f} s")
        except CellExecutionError as exc:
            first = str(exc).strip().splitlines()[-1][:300]
            print(f"FAILED {path.name}  {time.monotonic() - start:.1f} s: {first}")
            failures.append(str(path))
    return failures
