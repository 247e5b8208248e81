"""Execute notebooks top to bottom in fresh kernels (lessons headless, CI)."""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

import nbformat
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

__all__ = ["execute", "run_notebooks"]


def execute(path: str | Path, timeout: float = 600, allow_errors: bool = False, cwd: str | Path | None = None):
    """Run a notebook in a fresh python3 kernel; return the executed notebook (raises on a cell error).

    The kernel talks over Unix sockets (IPC transport) in a private temporary folder, not over loopback TCP:
    nothing else on the machine can connect to it, and ipykernel has no unencrypted-TCP warning to print.
    """
    nb = nbformat.read(str(path), as_version=4)
    with tempfile.TemporaryDirectory(prefix="fxcourse-kernel-") as sockets:
        km = KernelManager(kernel_name="python3", transport="ipc", ip=str(Path(sockets) / "kernel"))
        client = NotebookClient(nb, km=km, timeout=int(timeout), allow_errors=allow_errors,
                                resources={"metadata": {"path": str(cwd or Path(path).parent)}})
        try:
            client.execute()
        finally:  # nbclient leaves a kernel manager it was handed running
            if km.has_kernel:
                km.shutdown_kernel(now=False)
    return nb


def run_notebooks(paths: list[Path], timeout: float = 600) -> list[str]:
    """Run each notebook, printing its time; return the failures."""
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
