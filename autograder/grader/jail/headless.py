"""Execute notebooks top to bottom in fresh kernels (lessons headless, CI)."""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import nbformat
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

__all__ = ["execute", "run_notebooks"]
_KERNEL_LOG_SHOWN = 20_000  # bytes of the kernel's stderr shown with a failure


def execute(path: str | Path, timeout: float = 600, allow_errors: bool = False, cwd: str | Path | None = None):
    """Run a notebook in a fresh python3 kernel; return the executed notebook (raises on a cell error).

    The kernel talks over Unix sockets (IPC transport) in a private temporary folder, not over loopback TCP:
    nothing else on the machine can connect to it, and ipykernel has no unencrypted-TCP warning to print.
    What the kernel process itself writes to its stderr (its own log, C++ libraries such as the profiler) is
    not cell output: it is kept aside and shown only when the run fails, so a good run prints nothing of it.
    The kernel manager is the asynchronous one: with a blocking client, nbclient's wait for the next output
    holds its event loop, so neither the cell's timeout nor its watch for a dead kernel ever runs.
    The kernel is a new `python -m ipykernel_launcher`, as a learner's JupyterLab starts it.
    """
    nb = nbformat.read(str(path), as_version=4)
    with tempfile.TemporaryDirectory(prefix="fxcourse-kernel-") as private, \
            open(Path(private) / "kernel-stderr.log", "w+b") as kernel_stderr:
        km = AsyncKernelManager(kernel_name="python3", transport="ipc", ip=str(Path(private) / "kernel"))
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
    """Run each notebook in a fresh kernel, printing its time; return the failures."""
    failures = []
    for path in paths:
        start = time.monotonic()
        try:
            execute(path, timeout)
            print(f"ok     {path.name}  {time.monotonic() - start:.1f} s")
        except CellExecutionError as exc:
            first = str(exc).strip().splitlines()[-1][:300]
            print(f"FAILED {path.name}  {time.monotonic() - start:.1f} s: {first}")
            failures.append(str(path))
    return failures
