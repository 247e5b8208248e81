"""The course's notebook executor (autograder.grader.jail.headless.execute, run by `fxcourse lab --headless`, the site
build and the tests): each notebook in a fresh `python -m ipykernel_launcher`, a dead kernel and a cell over its
time found as such, the kernel's own stderr kept apart."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from autograder.grader.jail.forkserver import ended
from autograder.grader.jail.headless import execute

pytestmark = pytest.mark.kernel

SEEN = ("import json, os\n"
        "print(json.dumps({'pid': os.getpid(), 'ppid': os.getppid(), 'cwd': os.getcwd(),\n"
        "                  'modules': sorted(m for m in __import__('sys').modules if m in ('torch', 'numpy'))}))\n")


def _notebook(folder: Path, *cells: str) -> Path:
    path = folder / "probe.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), str(path))
    return path


def _seen(nb) -> dict:
    return json.loads(next(o.text for o in nb.cells[0].outputs if o.output_type == "stream"))


def test_each_notebook_runs_in_a_fresh_kernel_that_is_gone_afterwards(tmp_path):
    """A kernel of its own, started by this process (nothing imported before the notebook asks), in the folder
    given, and ended with its notebook."""
    first, second = (_seen(execute(_notebook(tmp_path, SEEN), cwd=tmp_path)) for _ in range(2))
    assert first["pid"] != second["pid"] and first["ppid"] == second["ppid"] == os.getpid()
    assert first["modules"] == [] and first["cwd"] == str(tmp_path)
    assert ended(first["pid"], 10) and ended(second["pid"], 10), "a kernel outlived its notebook"


def test_a_kernel_that_dies_is_a_dead_kernel_found_within_seconds(tmp_path):
    path = _notebook(tmp_path, "import os\nos._exit(3)\n", "print('never')\n")
    start = time.monotonic()
    with pytest.raises(DeadKernelError):
        execute(path, timeout=120, cwd=tmp_path)
    assert time.monotonic() - start < 60  # not at the cell's timeout


def test_a_cell_over_its_time_is_interrupted(tmp_path):
    path = _notebook(tmp_path, "import time\nfor _ in range(600):\n    time.sleep(0.1)\n")
    start = time.monotonic()
    with pytest.raises(CellTimeoutError):
        execute(path, timeout=3, cwd=tmp_path)
    assert time.monotonic() - start < 50


def test_the_kernel_s_own_stderr_is_kept_apart_and_shown_when_the_run_fails(tmp_path, capfd):
    path = _notebook(tmp_path, "import os\nos.write(2, b'native library says why\\n')\nraise ValueError('broken')\n")
    with pytest.raises(Exception, match="broken"):
        execute(path, cwd=tmp_path)
    assert "native library says why" in capfd.readouterr().err
