"""The models the cases of ex14_exported_programs are built from, and their exported programs (cached per process).

None of them reads a shape inside forward but Sizes, whose program only module_of_nodes gets: there a dynamic batch
adds a sym_size node, whose module stack torch fills with a stand-in entry (no module). Every submodule of the
unflattened program takes only tensors.
"""
from __future__ import annotations

import copy
import random
import warnings
from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.checks.randmodels import current_salt, generator, manual_seed


aten = torch.ops.aten

PROBE = "_ex14_probe"


def _gen(seed: int) -> torch.Generator:
    return generator(seed)


class Block(nn.Module):
    """Linear -> LayerNorm -> SiLU (a module), times a gate of its own (a parameter)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)
        self.act = nn.SiLU()
        self.gate = nn.Parameter(torch.linspace(0.5, 1.5, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.norm(self.fc(x))) * self.gate


class Tower(nn.Module):
    """A stem, blocks in a ModuleList with residuals at the root, a head, a buffer: nodes at three depths."""

    def __init__(self, width: int = 6, depth: int = 2) -> None:
        super().__init__()
        self.stem = nn.Linear(width, width)
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))
        self.head = nn.Linear(width, 3)
        self.register_buffer("scale", torch.tensor(2.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.stem(x))
        for block in self.blocks:
            x = block(x) + x
        return self.head(x) * self.scale


class Shared(nn.Module):
    """`fc` called twice, a Hardswish module, a Sequential, a functional gelu at the root, a non-persistent
    buffer and a plain tensor attribute (a lifted constant)."""

    def __init__(self, width: int = 5) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.act = nn.Hardswish()
        self.inner = nn.Sequential(nn.Linear(width, width), nn.SiLU())
        self.register_buffer("gain", torch.linspace(0.5, 1.5, width), persistent=False)
        self.offset = torch.tensor(0.25)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.inner(self.act(self.fc(self.fc(x))))
        return h * self.gain + F.gelu(x) + self.offset


class Mixer(nn.Module):
    """A submodule with two inputs."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return self.lin(a) * torch.sigmoid(b)


class Pair(nn.Module):
    """proj -> mix(h, x) -> out, where mix takes two tensors."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.mix = Mixer(width)
        self.out = nn.Linear(width, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.mix(torch.tanh(self.proj(x)), x))


class Lender(nn.Module):
    """Linear -> LayerNorm, then `act`, a module its caller hands over (not one of its own)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x: torch.Tensor, act: nn.Module) -> torch.Tensor:
        return act(self.norm(self.fc(x)))


class Borrower(nn.Module):
    """Two blocks that call the root's Hardswish `act`: that node's stack runs '', 'blocks.0', 'act', so its
    innermost module has a shorter name than the block that called it."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Lender(width) for _ in range(2))
        self.act = nn.Hardswish()
        self.out = nn.Linear(width, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x, self.act) + x
        return self.out(x)


class Prefixed(nn.Module):
    """`head_pre` (registered first) and `head`, one name the start of the other; aten.rsub twice, once per
    overload (rsub.Tensor and rsub.Scalar, both decomposed to core ATen)."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.head_pre = nn.Linear(width, width)
        self.head = nn.Linear(width, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.head_pre(x)
        return self.head(torch.rsub(h, x) + torch.rsub(h, 2.0))


class Sizes(nn.Module):
    """Reads the batch size in forward (x.shape[0]): exported with a dynamic batch, the program reads it with a
    sym_size node whose stack holds only torch's stand-in entry, _empty_nn_module_stack_from_metadata_hook."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.fc = nn.Linear(width, 2 * width)
        self.out = nn.Linear(width, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.fc(x).reshape(x.shape[0] * 2, -1))


def _layer(rng: random.Random, width: int, depth: int) -> nn.Module:
    kind = rng.choice(["linear", "norm", "silu", "hardswish", "gelu", "seq", "seq"] if depth < 2 else
                      ["linear", "norm", "silu", "hardswish", "gelu"])
    if kind == "linear":
        return nn.Linear(width, width, bias=rng.random() < 0.7)
    if kind == "norm":
        return nn.LayerNorm(width)
    if kind == "silu":
        return nn.SiLU()
    if kind == "hardswish":
        return nn.Hardswish()
    if kind == "gelu":
        return nn.GELU()
    return nn.Sequential(*(_layer(rng, width, depth + 1) for _ in range(rng.randint(1, 3))))


class RandomTower(nn.Module):
    """Stages drawn from a seed: Sequentials nested up to three deep, with residuals and a relu at the root."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        rng = random.Random(seed)
        self.width = rng.choice([4, 5, 6])
        self.stages = nn.ModuleList(
            nn.Sequential(nn.Linear(self.width, self.width), *(_layer(rng, self.width, 1)
                                                               for _ in range(rng.randint(1, 3))))
            for _ in range(rng.randint(2, 3)))
        self.out = nn.Linear(self.width, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, stage in enumerate(self.stages):
            x = stage(x) + x if i % 2 else torch.relu(stage(x))
        return self.out(x)

    def deepest(self) -> str:
        """The qualified name of its most deeply nested submodule that computes something (not a container)."""
        names = [n for n, m in self.named_modules() if n and not isinstance(m, (nn.Sequential, nn.ModuleList))]
        return max(names, key=lambda n: (n.count("."), n))


# (factory of the model, shape of the example input); each model is built under manual_seed(seed)
MODELS: dict[str, tuple[Callable[[], nn.Module], tuple]] = {
    "Tower(6)": (lambda: Tower(6), (3, 6)),
    "Tower(4)": (lambda: Tower(4, 3), (2, 4)),
    "Shared(5)": (lambda: Shared(5), (3, 5)),
    "Shared(4)": (lambda: Shared(4), (4, 4)),
    "Pair(4)": (lambda: Pair(4), (3, 4)),
    "RandomTower seed 3": (lambda: RandomTower(3), (3, RandomTower(3).width)),
    "RandomTower seed 9": (lambda: RandomTower(9), (4, RandomTower(9).width)),
    "Borrower(4)": (lambda: Borrower(4), (3, 4)),
    "Prefixed(4)": (lambda: Prefixed(4), (3, 4)),
    "Sizes(4)": (lambda: Sizes(4), (3, 4)),
}


def model(name: str, seed: int = 0) -> tuple[nn.Module, torch.Tensor]:
    """The model (eval mode, seeded weights) and its example input."""
    factory, shape = MODELS[name]
    manual_seed(seed)
    return factory().eval(), torch.randn(*shape, generator=_gen(seed + 1))


def probes(name: str, seed: int = 0, dynamic: bool = False) -> list[torch.Tensor]:
    """Inputs to run a program on: the example's batch, and with a dynamic batch three other batch sizes, one of them
    far beyond the example's (a program that kept a small upper bound on its batch fails there)."""
    _, x = model(name, seed)
    sizes = [x.shape[0]] + ([1 + x.shape[0], 7, 100] if dynamic else [])
    return [torch.randn(b, *x.shape[1:], generator=_gen(seed + 10 + b)) for b in sizes]


_PROGRAMS: dict = {}


def program(name: str, *, strict: bool = False, dynamic: bool = False, seed: int = 0, preserve: tuple = ()):
    """The exported program of one model (exported once per process), as a fresh deep copy; `preserve` names the
    submodules whose calling convention export keeps (preserve_module_call_signature)."""
    from torch.export import Dim, export
    key = (name, strict, dynamic, seed, preserve, current_salt())
    if key not in _PROGRAMS:
        m, x = model(name, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _PROGRAMS[key] = export(m, (x,), strict=strict, dynamic_shapes=({0: Dim.AUTO},) if dynamic else None,
                                    preserve_module_call_signature=preserve)
    with warnings.catch_warnings():   # torch's own FutureWarning about its pytree specs, copying a program
        warnings.simplefilter("ignore", FutureWarning)
        return copy.deepcopy(_PROGRAMS[key])


def submodule_io(name: str, fqn: str, inputs: list[torch.Tensor], seed: int = 0) -> list[tuple[tuple, torch.Tensor]]:
    """What the eager submodule `fqn` receives and returns while the model runs on each input (its first call)."""
    m, _ = model(name, seed)
    sub = m.get_submodule(fqn)
    out = []
    for x in inputs:
        seen: list = []
        handle = sub.register_forward_hook(lambda mod, args, result: seen.append((args, result)))
        try:
            with torch.no_grad():
                m(x)
        finally:
            handle.remove()
        args, result = seen[0]
        out.append((tuple(a.detach().clone() for a in args), result.detach().clone()))
    return out
