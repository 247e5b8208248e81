"""Test-wide set-up: Jupyter, IPython, matplotlib and torch write into a temporary home, never the user's."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# ex01's graded functions answered correctly, written the way a learner would (not copied from solutions/)
EX01_RIGHT = {
    "node_summary": "def node_summary(gm):\n    return [(n.op, n.name) for n in gm.graph.nodes]\n",
    "count_nodes": "def count_nodes(gm, op=None):\n    return sum(1 for n in gm.graph.nodes if op is None or n.op == op)\n",
    "outputs_match": (
        "def outputs_match(model, gm, *inputs, atol=0.0):\n"
        "    with torch.no_grad():\n"
        "        a, b = model(*inputs), gm(*inputs)\n"
        "    if a.shape != b.shape:\n"
        "        return False\n"
        "    return torch.equal(a, b) if atol == 0 else torch.allclose(a, b, rtol=0, atol=atol)\n"),
}
_HOME = Path(tempfile.mkdtemp(prefix="fxcourse-test-home-"))


def pytest_configure(config: pytest.Config) -> None:
    for var, sub in (("HOME", ""), ("JUPYTER_CONFIG_DIR", ".jupyter"), ("JUPYTER_DATA_DIR", ".local/share/jupyter"),
                     ("JUPYTER_RUNTIME_DIR", ".local/share/jupyter/runtime"), ("IPYTHONDIR", ".ipython"),
                     ("MPLCONFIGDIR", ".mpl"), ("TORCHINDUCTOR_CACHE_DIR", ".inductor"),
                     ("TRITON_CACHE_DIR", ".triton"), ("XDG_CACHE_HOME", ".cache")):
        path = _HOME / sub
        path.mkdir(parents=True, exist_ok=True)
        os.environ[var] = str(path)
    os.environ["MPLBACKEND"] = "Agg"
    os.environ.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning")
    # The kernel spec python3 must be the interpreter running the tests.
    from jupyter_client.kernelspec import KernelSpecManager  # noqa: F401


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_HOME, ignore_errors=True)


def assignments() -> list[str]:
    """Every graded exercise of the course (from solutions/)."""
    return sorted(p.name for p in (ROOT / "solutions").iterdir() if (p / f"{p.name}.ipynb").is_file())


def lessons() -> list[Path]:
    return sorted((ROOT / "lessons").glob("*.ipynb"))


@pytest.fixture(scope="module")
def one_thread():
    """One intra-op thread for a module whose cases run hundreds of tiny ops: on a busy machine a second
    thread only adds waiting."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
