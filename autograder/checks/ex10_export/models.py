"""The models the cases of ex10_export are built from, each drawn with seeded weights and statistics."""
from __future__ import annotations

import random
from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.checks.randmodels import manual_seed, generator, seed_of


aten = torch.ops.aten


PROBE = "_ex10_probe"


def _gen(seed: int) -> torch.Generator:
    return generator(seed)


class PatchNet(nn.Module):
    """Lesson 10's model with other sizes: Conv -> BatchNorm -> ReLU plus a skip, a mean, a Linear."""

    def __init__(self, channels: int = 6) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.bn = nn.BatchNorm2d(channels)
        self.skip = nn.Conv2d(3, channels, 1, bias=False)
        self.fc = nn.Linear(channels, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.bn(self.conv(x))) + self.skip(x)
        return self.fc(h.mean(dim=(2, 3)))


class Tagger(nn.Module):
    """Its input is called `inp`; a non-persistent buffer, a plain tensor attribute (a lifted constant), a
    chunk (getitem nodes), two relus and a leaky_relu."""

    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.embed = nn.Linear(width, 2 * width)
        self.head = nn.Linear(width, 3, bias=False)
        self.register_buffer("gain", torch.linspace(0.5, 1.5, 2 * width), persistent=False)
        self.temperature = torch.tensor(0.7)

    def forward(self, inp: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.embed(inp)) * self.gain
        a, b = h.chunk(2, dim=-1)
        z = torch.relu(a - b) + F.leaky_relu(b, 0.1)
        return self.head(z) / self.temperature + z.sum(dim=-1, keepdim=True).sum()


class Sequence(nn.Module):
    """A (batch, steps, features) input: only dimension 0 may be dynamic, steps and features stay fixed."""

    def __init__(self, steps: int = 5, features: int = 4) -> None:
        super().__init__()
        self.mix = nn.Linear(steps * features, 6)
        self.norm = nn.LayerNorm(6)

    def forward(self, seq: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(self.mix(seq.flatten(1))))


class RandomStack(nn.Module):
    """Steps drawn from a seed: Linears with and without bias, BatchNorm1d, relu/gelu/tanh, residuals, chunks."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        rng = random.Random(seed)
        self.width = rng.choice([4, 6, 8])
        self.plan = [rng.choice(["linear", "bn", "relu", "gelu", "residual", "chunk"]) for _ in range(rng.randint(3, 5))]
        if "relu" not in self.plan:
            self.plan.append("relu")
        w = self.width
        self.layers = nn.ModuleList(
            nn.BatchNorm1d(w) if step == "bn" else nn.Linear(w, w, bias=rng.random() < 0.6) for step in self.plan)
        self.out = nn.Linear(w, rng.choice([2, 3]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for step, layer in zip(self.plan, self.layers):
            if step in ("linear", "bn"):
                x = layer(x)
            elif step == "relu":
                x = torch.relu(layer(x))
            elif step == "gelu":
                x = F.gelu(layer(x))
            elif step == "residual":
                x = torch.tanh(layer(x)) + x
            elif step == "chunk":
                a, b = layer(x).chunk(2, dim=-1)
                x = torch.cat([b, a], dim=-1)
        return self.out(x)


class CondRouter(nn.Module):
    """torch.cond: two subgraphs (get_attr nodes), a `cond` call_function and a getitem; a relu in the graph and
    one in the true branch's subgraph."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.up = nn.Linear(width, width)
        self.down = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.cond(x.mean() > 0, lambda t: torch.relu(self.up(t)), lambda t: self.down(t), (x,))
        return torch.relu(y)


class Sums(nn.Module):
    """aten.sum.default and aten.sum.dim_IntList side by side: two overloads of one operator."""

    def __init__(self, width: int = 5) -> None:
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.lin(x)
        return h.sum(dim=1, keepdim=True) * 0.5 + h.sum() + h


class DeadEnds(nn.Module):
    """A sin nobody reads (export keeps its node), torch.add with alpha= (a keyword argument of its node), and two
    overloads of div side by side: div.Tensor and div.Tensor_mode (rounding_mode=)."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.sin()
        h = torch.relu(self.fc(x))
        s = torch.add(h, x, alpha=3.0)
        return torch.div(s, 2.0) + torch.div(s, 3.0, rounding_mode="floor")


_LIBS: list = []   # the torch.library.Library objects: an operator lives as long as its library


def namesake_relu():
    """fxc10::relu(Tensor x) -> Tensor, an operator of the check library's own that shares aten.relu's name (it
    computes relu(x) + 0.5), registered in this process on first use; its overload fxc10.relu.default."""
    try:
        return torch.ops.fxc10.relu.default
    except (AttributeError, RuntimeError):   # not defined in this process yet
        pass
    lib = torch.library.Library("fxc10", "FRAGMENT")
    lib.define("relu(Tensor x) -> Tensor")
    lib.impl("relu", lambda x: torch.relu(x) + 0.5, "CompositeExplicitAutograd")
    _LIBS.append(lib)
    return torch.ops.fxc10.relu.default


class Namesakes(nn.Module):
    """Names that meet once dots become underscores: the Linear a.b and the Linear a_b (placeholders
    p_a_b_weight and p_a_b_weight_1); aten.relu beside fxc10.relu, an operator of the same name in another
    namespace."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.a = nn.Module()
        self.a.b = nn.Linear(width, width)
        self.a_b = nn.Linear(width, width, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.a.b(x))
        return self.a_b(namesake_relu()(h)) + h


def _stats(model: nn.Module, seed: int) -> nn.Module:
    """Non-trivial running statistics, eval mode."""
    g = _gen(seed)
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.3)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
    return model.eval()


# (factory of the model, shape of the example input); each model is built under manual_seed(seed)
MODELS: dict[str, tuple[Callable[[], nn.Module], tuple]] = {
    "PatchNet(6)": (lambda: PatchNet(6), (2, 3, 8, 8)),
    "PatchNet(4)": (lambda: PatchNet(4), (3, 3, 6, 6)),
    "Tagger(8)": (lambda: Tagger(8), (3, 8)),
    "Tagger(6)": (lambda: Tagger(6), (4, 6)),
    "Sequence(5, 4)": (lambda: Sequence(5, 4), (3, 5, 4)),
    "RandomStack seed 5": (lambda: RandomStack(5), (3, RandomStack(5).width)),
    "RandomStack seed 12": (lambda: RandomStack(12), (4, RandomStack(12).width)),
    "CondRouter(4)": (lambda: CondRouter(4), (3, 4)),
    "Sums(5)": (lambda: Sums(5), (3, 5)),
    "Namesakes(4)": (lambda: Namesakes(4), (3, 4)),
    "DeadEnds(4)": (lambda: DeadEnds(4), (3, 4)),
}


def _model(name: str, seed: int = 0) -> tuple[nn.Module, torch.Tensor]:
    factory, shape = MODELS[name]
    manual_seed(seed)
    return _stats(factory(), seed), torch.randn(*shape, generator=_gen(seed + 1))
