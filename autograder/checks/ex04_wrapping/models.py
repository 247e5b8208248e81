"""The models and small helpers the cases of ex04_wrapping are built from."""
from __future__ import annotations

import builtins
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.checks.randmodels import seed_of


# ------------------------------------------------------------------------------ the notebook's own models

MODELS_SOURCE = '''
def gate(x: torch.Tensor) -> torch.Tensor:
    """ReLU when the values of x add up to a positive number, else tanh scaled by one half."""
    if x.sum() > 0:
        return torch.relu(x)
    return 0.5 * torch.tanh(x)


class GatedNet(nn.Module):
    """Linear 6->16, then the data-dependent gate, then Linear 16->3."""

    def __init__(self, d_in: int = 6, hidden: int = 16, d_out: int = 3) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(gate(self.fc1(x)))


class RowNorm(nn.Module):
    """Scales each row of x to unit length, one row at a time (a Python loop over the tensor)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([row / (row.norm() + 1e-6) for row in x])


class Block(nn.Module):
    """Linear -> ReLU -> Linear, plus the input."""

    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(torch.relu(self.fc1(x)))


class MixerNet(nn.Module):
    """Linear, a Block, a RowNorm and a Linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(6, 8)
        self.block = Block(8)
        self.norm = RowNorm()
        self.head = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.norm(self.block(torch.relu(self.inp(x)))))


class FlagNet(nn.Module):
    """Python-valued arguments steer the forward: a bool skips a layer, an int repeats it."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Linear(6, 8)
        self.extra = nn.Linear(8, 8)
        self.head = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor, use_extra: bool = True, repeats: int = 1) -> torch.Tensor:
        h = torch.relu(self.stem(x))
        if use_extra:
            for _ in range(repeats):
                h = torch.relu(self.extra(h))
        return self.head(h)
'''.strip("\n")
REF: dict[str, Any] = {"__name__": "ex04_wrapping_models", "__builtins__": builtins, "torch": torch, "nn": nn,
                       "F": F}
exec(compile(MODELS_SOURCE, "<ex04_wrapping models>", "exec"), REF)  # noqa: S102 (our own source text)
RowNorm: type = REF["RowNorm"]
Block: type = REF["Block"]


def _seed(seed: int) -> None:
    """Seed the CPU generator that nn.Module initialisation draws from (torch.manual_seed also queues CUDA
    seeding, which records a stack trace each time: 40x slower here); a hidden case's salt applies (seed_of)."""
    torch.default_generator.manual_seed(seed_of(seed))


# ===================================================================================== trace_gated

class _TwoGates(nn.Module):
    """gate called twice on different tensors: two call_function nodes."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.fc1 = nn.Linear(5, 7)
        self.fc2 = nn.Linear(7, 7)
        self.head = nn.Linear(7, 2)

    def forward(self, x):
        h = gate(self.fc1(x))  # noqa: F821 (gate is looked up in the notebook's globals, see _bind)
        return self.head(gate(self.fc2(h) - h))  # noqa: F821


class _GateCell(nn.Module):
    """A submodule whose own forward calls gate (traced through, since it is not a torch.nn module)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, x):
        return gate(self.lin(x)) + x  # noqa: F821


class _Nested(nn.Module):
    """Two _GateCells in a Sequential, then a head: gate lives in submodules, not in the root forward."""

    def __init__(self, seed: int, cell: type) -> None:
        super().__init__()
        _seed(seed)
        self.cells = nn.Sequential(cell(6), cell(6))
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        return self.head(self.cells(x))


class _ModeGated(nn.Module):
    """gate, then a Python `if self.training`: decided while tracing, so the graph shows the mode the model is in
    (and the case builds it in one mode: a trace must neither switch it nor trace a copy in another)."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.fc1 = nn.Linear(5, 6)
        self.fc2 = nn.Linear(6, 2)

    def forward(self, x):
        h = gate(self.fc1(x))  # noqa: F821
        if self.training:
            h = h * 0.5
        return self.fc2(h)


class _InPlaceGated(_ModeGated):
    """_ModeGated's layers; gate, then torch.relu_ on its result: an in-place call nobody reads the result of,
    which changes h."""

    def forward(self, x):
        h = gate(self.fc1(x))  # noqa: F821
        torch.relu_(h)
        return self.fc2(h)


class _TwoInputs(nn.Module):
    """Two tensor inputs; gate sees their difference."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.fc = nn.Linear(4, 4)

    def forward(self, x, y):
        return self.fc(gate(x - y)) * y  # noqa: F821


# =============================================================================== trace_with_leaves

class ScaledRowNorm(RowNorm):
    """A subclass of RowNorm: an instance of RowNorm too, so a leaf when RowNorm is a leaf type."""

    def __init__(self, scale: float = 2.0) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return super().forward(x) * self.scale


class _Tower(nn.Module):
    """Blocks nested in Sequentials ('stages.0', 'stages.1.1') and one Block called twice."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.stem = nn.Linear(5, 8)
        self.stages = nn.Sequential(Block(8), nn.Sequential(nn.ReLU(), Block(8)))
        self.shared = Block(8)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(self.shared(self.shared(self.stages(self.stem(x)))))


class _NormTower(nn.Module):
    """A RowNorm subclass deep inside a Sequential, after a Block that must be traced through."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.block = Block(4)
        self.post = nn.Sequential(nn.Linear(4, 4), nn.Sequential(ScaledRowNorm(3.0)))
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.post(self.block(x)))


class ScaledBlock(Block):
    """A subclass of Block with its own forward: traceable, and a leaf whenever Block is a leaf type."""

    def forward(self, x):
        return super().forward(x) * 0.5


class _SubBlockTower(nn.Module):
    """A Block subclass nested in a Sequential next to a plain nested Block, after a top-level Block;
    leaf_types=(Block,) keeps all three whole."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.first = Block(6)
        self.rest = nn.Sequential(nn.Tanh(), Block(6), ScaledBlock(6))
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        return self.head(self.rest(self.first(x)))


class _SeqModel(nn.Module):
    """A plain nn.Sequential of torch.nn layers next to a Block: leaf_types=(nn.Sequential,) keeps it whole."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.mlp = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 6))
        self.block = Block(6)

    def forward(self, x):
        return self.block(self.mlp(x)) - x


class _HalfStep(nn.Module):
    """A module of your own with no parameters and no children: traced through like any other of yours."""

    def forward(self, x):
        return x * 0.5


class _ParamFree(nn.Module):
    """A parameter-free module of the model's own between torch.nn layers and a Block; built in eval mode."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.stem = nn.Linear(5, 6)
        self.halve = _HalfStep()
        self.block = Block(6)
        self.head = nn.Linear(6, 2)
        self.eval()

    def forward(self, x):
        return self.head(self.block(self.halve(torch.relu(self.stem(x)))))


class _LibraryBlock(nn.Module):
    """Another library's `Block`: its class has the same name as the notebook's Block, but is neither that class
    nor a subclass of it (so it is no instance of Block, and is traced through)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        return torch.tanh(self.proj(x)) + x


_LibraryBlock.__name__ = "Block"


class _NameClash(nn.Module):
    """The notebook's Block next to another library's class also named Block."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.stem = nn.Linear(6, 6)
        self.block = Block(6)
        self.other = _LibraryBlock(6)
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        return self.head(self.other(self.block(self.stem(x))))


class _Shift(nn.Module):
    """A module of the model's own that adds one in training mode only: its forward reads self.training, so a
    trace records the mode it is in."""

    def forward(self, x):
        if self.training:
            return x + 1.0
        return x


class _ModeTower(nn.Module):
    """Two _Shift modules around a Block; each case sets every submodule's mode (cases.set_modes), some
    differently from the model's own."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.stem = nn.Linear(5, 6)
        self.up = _Shift()
        self.block = Block(6)
        self.down = _Shift()
        self.head = nn.Linear(6, 2)

    def forward(self, x):
        return self.head(self.down(self.block(self.up(self.stem(x)))))


class _InPlaceTower(_ModeTower):
    """_ModeTower's layers without its _Shift modules: a Block, then torch.relu_ on its output (an in-place call
    nobody reads the result of)."""

    def forward(self, x):
        h = self.block(self.stem(x))
        torch.relu_(h)
        return self.head(h)


# =============================================================================== trace_specialized

class _TwoInputFlags(nn.Module):
    """Two tensor inputs; a str picks the combination, a bool may leave y unused, a float scales."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.px = nn.Linear(5, 5)
        self.py = nn.Linear(5, 5)
        self.head = nn.Linear(5, 2)

    def forward(self, x, y, mode: str = "add", use_y: bool = True, scale: float = 1.0):
        h = self.px(x)
        if use_y:
            h = h + self.py(y) if mode == "add" else h * self.py(y)
        return self.head(h) * scale


class _ClipNet(nn.Module):
    """An optional clip (default None: no clamp node at all), a repeat count and an optional activation."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.fc = nn.Linear(4, 4)
        self.out = nn.Linear(4, 3)

    def forward(self, x, clip: float | None = None, depth: int = 1, act: str | None = "tanh"):
        for _ in range(depth):
            x = self.fc(x)
            if clip is not None:
                x = x.clamp(-clip, clip)
            if act == "tanh":
                x = x.tanh()
            elif act == "relu":
                x = x.relu()
        return self.out(x)


class _SnakeNames(nn.Module):
    """A tensor input whose name has an underscore (x_in), like the guards of flags (gain_db_1)."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.fc = nn.Linear(4, 3)

    def forward(self, x_in, gain_db: float = 0.0, use_bias: bool = True):
        h = self.fc(x_in) * (10.0 ** (gain_db / 20.0))
        if use_bias:
            h = h + 1.0
        return h


class _InPlaceFlag(nn.Module):
    """A flag that adds an in-place call whose result nobody reads (torch.relu_ changes h itself); built in eval
    mode."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.fc = nn.Linear(4, 4)
        self.out = nn.Linear(4, 3)
        self.eval()

    def forward(self, x, rectify: bool = False):
        h = self.fc(x)
        if rectify:
            torch.relu_(h)
        return self.out(h)


class _ModeFlags(_ModeTower):
    """_ModeTower with flags: use_up picks whether the first _Shift runs, scale multiplies the output."""

    def forward(self, x, use_up: bool = True, scale: float = 1.0):
        h = self.stem(x)
        if use_up:
            h = self.up(h)
        return self.head(self.down(self.block(h))) * scale


class _SuffixNames(nn.Module):
    """Two tensor inputs, the second named x_1, the way the guard placeholders of flags are named."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.fc = nn.Linear(4, 3)

    def forward(self, x, x_1, use_fc: bool = True):
        h = x - x_1
        return self.fc(h) if use_fc else h[:, :3]
