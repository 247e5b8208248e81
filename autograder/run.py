"""Execute notebooks top to bottom in fresh kernels (lessons headless, CI)."""
from __future__ import annotations

import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

__all__ = ["execute", "run_notebooks"]


def execute(path: str | Path, timeout: float = 600, allow_errors: bool = False, cwd: str | Path | None = None):
    """Run a notebook in a fresh python3 kernel; return the executed notebook (raises on a cell error)."""
    nb = nbformat.read(str(path), as_version=4)
    client = NotebookClient(nb, timeout=int(timeout), kernel_name="python3", allow_errors=allow_errors,
                            resources={"metadata": {"path": str(cwd or Path(path).parent)}})
    client.execute()
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
