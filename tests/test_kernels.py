"""Kernels forked from the fork server (its kernels' one: forkserver.spawn_kernel, `execute(..., fork=True)`): what
a notebook sees is what a fresh `python -m ipykernel_launcher` gives it, the kernel's life and death are
jupyter_client's as before, and where the server cannot serve, kernels start the usual way."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from autograder.grader.jail import forkserver
from autograder.grader.jail.forkserver import ended
from autograder.grader.jail.headless import execute

pytestmark = [pytest.mark.kernel,
              pytest.mark.skipif(not forkserver.enabled(), reason="the fork server needs Linux (fork, SCM_RIGHTS)")]

SEEN = ("import json, os, random, signal, sys, warnings\n"
        "import numpy, torch\n"
        "grand = int(open(f'/proc/{os.getppid()}/stat').read().rsplit(')', 1)[1].split()[1])\n"
        "print(json.dumps({'cwd': os.getcwd(), 'path0': sys.path[0], 'argv0': os.path.basename(sys.argv[0]),\n"
        "                  'mark': os.environ.get('FXCOURSE_TEST_MARK'), 'ppid': os.getppid(), 'pid': os.getpid(),\n"
        "                  'grand': grand, 'parent': os.environ.get('JPY_PARENT_PID'), 'sid': os.getsid(0),\n"
        "                  'random': random.random(), 'numpy': float(numpy.random.rand()),\n"
        "                  'torch': float(torch.rand(1)), 'main': sys.modules['__main__'].__name__,\n"
        "                  'threads': [torch.get_num_threads(), torch.get_num_interop_threads()],\n"
        "                  'signals': [str(signal.getsignal(s)) for s in (signal.SIGINT, signal.SIGTERM,\n"
        "                              signal.SIGCHLD, signal.SIGHUP, signal.SIGPIPE)],\n"
        "                  'flags': list(sys.flags), 'environ': sorted(set(os.environ) - {'JPY_SESSION_NAME'}),\n"
        "                  'warnings': sorted(repr(f) for f in warnings.filters)}))\n")
PLOT = "import matplotlib, matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()\nprint(matplotlib.get_backend())\n"
FRESH_THREADS = "import torch; print(torch.get_num_threads(), torch.get_num_interop_threads())"


def _notebook(folder: Path, *cells: str) -> Path:
    path = folder / "probe.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), str(path))
    return path


def _seen(nb) -> dict:
    return json.loads(next(o.text for o in nb.cells[0].outputs if o.output_type == "stream"))


@pytest.fixture(autouse=True)
def kernel_server(monkeypatch):
    """Each test forks its kernels from a kernels' server of its own (stopped afterwards); the grading fork server
    of the test process is not touched."""
    monkeypatch.setenv("FXCOURSE_TEST_MARK", "set by the test")
    monkeypatch.delenv("FXCOURSE_FORKSERVER", raising=False)
    server = forkserver._Server(kernels=True)
    monkeypatch.setattr(forkserver, "_KERNELS", server)
    yield server
    server.stop()


def _server_pid():
    return forkserver.server_pid(kernels=True)


def test_a_forked_kernel_sees_what_a_fresh_one_sees_with_fresh_random_seeds(tmp_path, monkeypatch):
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's own choice: the inline backend, as in Jupyter
    path = _notebook(tmp_path, SEEN, PLOT)
    fresh = execute(path, cwd=tmp_path)
    plain = _seen(fresh)
    first, again = (execute(path, cwd=tmp_path, fork=True) for _ in range(2))
    one, two = _seen(first), _seen(again)
    server = _server_pid()
    assert server is not None and one["grand"] == two["grand"] == server, (one, server)  # through its manager
    assert plain["ppid"] == os.getpid() != server
    python_c = subprocess.run([sys.executable, "-c", FRESH_THREADS], capture_output=True, text=True, timeout=300)
    assert plain["threads"] == [int(n) for n in python_c.stdout.split()], (plain["threads"], python_c.stderr)
    for seen in (one, two):
        for key in ("cwd", "path0", "argv0", "mark", "parent", "main", "threads", "signals", "flags", "environ",
                    "warnings"):
            assert seen[key] == plain[key], (key, seen[key], plain[key])
        assert seen["sid"] == seen["pid"]  # a session of its own, as the launcher starts a kernel
    assert one["cwd"] == str(tmp_path) and one["argv0"] == "ipykernel_launcher.py" and one["parent"] == str(os.getpid())
    assert all(one[k] != two[k] for k in ("random", "numpy", "torch")), (one, two)  # not the server's seeds
    for nb in (fresh, first, again):
        pngs = [o for o in nb.cells[1].outputs if "image/png" in o.get("data", {})]
        assert len(pngs) == 1, ("the plot is not shown inline", nb.cells[1].outputs)
        assert [o.text for o in nb.cells[1].outputs if o.output_type == "stream"] == \
            ["module://matplotlib_inline.backend_inline\n"]


def test_a_finished_kernel_is_gone_and_the_server_goes_with_this_process(tmp_path):
    nb = execute(_notebook(tmp_path, SEEN), cwd=tmp_path, fork=True)
    pid, server = _seen(nb)["pid"], _server_pid()
    assert ended(pid, 10), "the kernel outlived its notebook"
    forkserver.stop()
    assert _server_pid() is None and ended(server, 0)


def test_a_kernel_that_dies_is_a_dead_kernel_as_before(tmp_path):
    path = _notebook(tmp_path, "import os\nos._exit(3)\n", "print('never')\n")
    for fork in (False, True):  # found within seconds, not at the cell's timeout
        start = time.monotonic()
        with pytest.raises(DeadKernelError):
            execute(path, timeout=120, cwd=tmp_path, fork=fork)
        assert time.monotonic() - start < 60
    nb = execute(_notebook(tmp_path, "print('next')\n"), cwd=tmp_path, fork=True)  # the server goes on
    assert nb.cells[0].outputs[0].text == "next\n"


@pytest.mark.parametrize("fork", [False, True], ids=["plain", "forked"])
def test_a_cell_over_its_time_is_interrupted_as_before(tmp_path, fork):
    path = _notebook(tmp_path, "import time\nfor _ in range(600):\n    time.sleep(0.1)\n")
    start = time.monotonic()
    with pytest.raises(CellTimeoutError):
        execute(path, timeout=3, cwd=tmp_path, fork=fork)
    assert time.monotonic() - start < 50


def test_the_kernel_s_own_stderr_is_kept_apart_and_shown_when_the_run_fails(tmp_path, capfd):
    path = _notebook(tmp_path, "import os\nos.write(2, b'native library says why\\n')\nraise ValueError('broken')\n")
    with pytest.raises(Exception, match="broken"):
        execute(path, cwd=tmp_path, fork=True)
    assert "native library says why" in capfd.readouterr().err


def test_a_kernel_that_needs_another_interpreter_set_up_starts_the_usual_way(tmp_path, monkeypatch):
    path = _notebook(tmp_path, SEEN)
    assert _seen(execute(path, cwd=tmp_path, fork=True))["grand"] == _server_pid()
    monkeypatch.setenv("PYTHONPATH", str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    seen = _seen(execute(path, cwd=tmp_path, fork=True))  # PYTHONPATH is read at start: the server's is another
    assert seen["ppid"] == os.getpid() and seen["path0"] == str(tmp_path)


def test_without_a_server_kernels_start_the_usual_way_and_it_is_said_once(tmp_path, monkeypatch, capfd):
    path = _notebook(tmp_path, SEEN)
    monkeypatch.setenv("FXCOURSE_FORKSERVER", "0")  # the one switch, for workers, judges and kernels
    assert _seen(execute(path, cwd=tmp_path, fork=True))["ppid"] == os.getpid()
    assert _server_pid() is None and "fork server" not in capfd.readouterr().err  # off: quietly
    monkeypatch.delenv("FXCOURSE_FORKSERVER")
    broken = tmp_path / "broken"
    (broken / "torch").mkdir(parents=True)
    (broken / "torch" / "__init__.py").write_text("raise ImportError('no torch here')\n")
    monkeypatch.setenv("PYTHONPATH", str(broken))  # the server cannot import what kernels need
    for _ in range(2):
        assert _seen(execute(_notebook(tmp_path, "print('{}')\n"), cwd=tmp_path, fork=True)) == {}
    said = capfd.readouterr().err
    assert said.count("each kernel starts as a fresh process") == 1 and "no torch here" in said, said


def test_lab_headless_and_the_site_build_fork_their_kernels():
    """`fxcourse lab --headless` (run_notebooks) and docs/site/build.py run their notebooks forked; the
    benchmarks time the kernels learners get, so they do not."""
    root = Path(__file__).resolve().parent.parent
    assert "execute(path, timeout, fork=True)" in (root / "autograder" / "grader" / "jail" / "headless.py").read_text()
    assert "fork=True" in (root / "docs" / "site" / "build.py").read_text()
    for bench in (root / "benchmarks").glob("*.py"):
        assert "fork=True" not in bench.read_text(), bench.name


def test_the_server_imports_torch_but_not_the_kernel_nor_matplotlib():
    code = ("import json, sys\nfrom autograder.grader.jail import forking\nforking._prepare(kernels=True)\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('torch', 'ipykernel', 'IPython', 'matplotlib', 'zmq'))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    loaded = {m.split(".")[0] for m in json.loads(r.stdout.splitlines()[-1])}
    assert loaded == {"torch"}, loaded
