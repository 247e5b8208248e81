"""Seeded random models for checks: depths, widths, branches, shared modules, missing biases.

A check that only ever sees the example model lets through answers that only fit the example; these
generators draw a different, reproducible model for every seed.
"""
from __future__ import annotations

import contextlib
import hashlib
import random
from typing import Iterator

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["RandomMLP", "RandomConvNet", "SpecMLP", "SpecConvNet", "random_mlp", "random_convnet", "example_input",
           "seeded_randn", "randomize_batchnorm", "salted", "current_salt", "seed_of", "manual_seed", "generator"]


_COMMON_STEPS = ("linear", "relu_fn", "relu_mod", "relu_method", "residual", "dropout", "dropout_mod", "chain")


# ------------------------------------------------------------------------------ hidden cases' seeds
# A hidden case is built, called and judged under a salt drawn from the course's secret (framework.Case.salt):
# every seed a case, a model of this library or a check draws through seed_of, manual_seed or generator then
# becomes another, so what a hidden case holds cannot be known, or memorised, without the secret. Salt 0 (no
# secret: pytest, validation, run_check in a notebook) leaves every seed as it is written.
_SALT = [0]


@contextlib.contextmanager
def salted(salt: int) -> Iterator[None]:
    """Draw every seed under `salt` until the block ends."""
    old, _SALT[0] = _SALT[0], int(salt)
    try:
        yield
    finally:
        _SALT[0] = old


def current_salt() -> int:
    return _SALT[0]


def seed_of(seed: int) -> int:
    """`seed` as drawn now: itself without a salt, else a 31-bit seed mixed from the salt and it."""
    if not _SALT[0]:
        return seed
    digest = hashlib.sha256(f"{_SALT[0]}:{seed}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def manual_seed(seed: int) -> None:
    """torch.manual_seed of the seed as drawn now (seed_of)."""
    torch.manual_seed(seed_of(seed))


def generator(seed: int) -> torch.Generator:
    """A generator of its own, seeded with the seed as drawn now (seed_of)."""
    return torch.Generator().manual_seed(seed_of(seed))


def _common_step(layers: nn.ModuleDict, i: int, kind: str, x: torch.Tensor) -> torch.Tensor:
    """Step `i` of an MLP plan, for the kinds RandomMLP and SpecMLP share (their layers are named alike)."""
    if kind == "linear":
        return layers[f"l{i}"](x)
    if kind == "relu_fn":
        return F.relu(x)
    if kind == "relu_mod":
        return layers[f"r{i}"](x)
    if kind == "relu_method":
        return x.relu()
    if kind == "residual":
        return torch.relu(layers[f"l{i}"](x)) + x
    if kind in ("dropout", "dropout_mod"):
        return layers[f"d{i}"](x)
    return layers[f"c{i}b"](layers[f"c{i}a"](x))   # chain


class RandomMLP(nn.Module):
    """A stack of steps drawn from a seed; each step is one of a few tricky patterns."""

    STEPS = ("linear", "relu_fn", "relu_mod", "relu_method", "residual", "dropout", "chain", "shared", "branch")

    def __init__(self, seed: int, width: int | None = None, depth: int | None = None,
                 steps: tuple[str, ...] | None = None) -> None:
        super().__init__()
        rng = random.Random(seed)
        manual_seed(seed)
        self.width = width or rng.choice([4, 6, 8, 12])
        depth = depth or rng.randint(3, 6)
        self.plan = list(steps) if steps else [rng.choice(self.STEPS) for _ in range(depth)]
        self.layers = nn.ModuleDict()
        w = self.width
        for i, step in enumerate(self.plan):
            bias = rng.random() < 0.7
            if step in ("linear", "residual", "branch"):
                self.layers[f"l{i}"] = nn.Linear(w, w, bias=bias)
            elif step == "relu_mod":
                self.layers[f"r{i}"] = nn.ReLU()
            elif step == "dropout":
                self.layers[f"d{i}"] = nn.Dropout(0.3)
            elif step == "chain":
                mid = rng.choice([w // 2 or 1, w, 2 * w])
                self.layers[f"c{i}a"] = nn.Linear(w, mid, bias=bias)
                self.layers[f"c{i}b"] = nn.Linear(mid, w, bias=rng.random() < 0.7)
            elif step == "shared":
                self.layers[f"s{i}"] = nn.Linear(w, w, bias=bias)
        self.head = nn.Linear(w, rng.choice([2, 3, 5]), bias=rng.random() < 0.8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, step in enumerate(self.plan):
            if step in _COMMON_STEPS:
                x = _common_step(self.layers, i, step, x)
            elif step == "shared":
                lin = self.layers[f"s{i}"]
                x = lin(torch.relu(lin(x)))
            elif step == "branch":
                x = torch.cat([self.layers[f"l{i}"](x), torch.tanh(x)], dim=-1)[..., : self.width] * 0.5 + x.sigmoid()
        return self.head(x)


class RandomConvNet(nn.Module):
    """Conv2d/BatchNorm2d stacks drawn from a seed: biases on or off, affine BN or not, a shared conv."""

    def __init__(self, seed: int, shared: bool | None = None) -> None:
        super().__init__()
        rng = random.Random(seed)
        manual_seed(seed)
        c = rng.choice([3, 4, 6])
        self.in_channels = 3
        blocks = []
        cin = 3
        for _ in range(rng.randint(1, 3)):
            k = rng.choice([1, 3])
            conv = nn.Conv2d(cin, c, k, padding=k // 2, bias=rng.random() < 0.5)
            bn = nn.BatchNorm2d(c, affine=rng.random() < 0.7)
            blocks += [conv, bn, nn.ReLU()]
            cin = c
        self.features = nn.Sequential(*blocks)
        self.shared = shared if shared is not None else rng.random() < 0.5
        self.tail = nn.Conv2d(c, c, 3, padding=1, bias=rng.random() < 0.5)
        self.bn_a = nn.BatchNorm2d(c)
        self.bn_b = nn.BatchNorm2d(c)
        self.head = nn.Linear(c, 3)
        randomize_batchnorm(self, seed, 0.5, 1.5, bias_scale=0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        y = self.bn_a(self.tail(x))
        if self.shared:
            y = y + self.bn_b(self.tail(x.flip(-1)))
        return self.head(y.mean(dim=(2, 3)))


class SpecMLP(nn.Module):
    """An MLP built from an explicit plan, so that a property-based test (tests/strategies.py) chooses every part.

    `steps` is a list of (kind, bias, mid): kind one of STEPS, bias for the step's Linear, mid the inner width of
    a chain. `shared` steps reuse one Linear for every shared step (a module called from several sites);
    `tuple_out` returns (head(x), x.sum(-1)) instead of one tensor.
    """

    STEPS = ("linear", "chain", "shared", "relu_fn", "relu_mod", "relu_method", "dropout_mod", "dropout_fn",
             "residual", "branch")

    def __init__(self, width: int, steps: list, head_bias: bool = True, tuple_out: bool = False,
                 seed: int = 0, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        manual_seed(seed)
        self.width, self.plan, self.tuple_out = width, [tuple(s) for s in steps], tuple_out
        self.layers = nn.ModuleDict()
        for i, (kind, bias, mid) in enumerate(self.plan):
            if kind in ("linear", "residual", "branch"):
                self.layers[f"l{i}"] = nn.Linear(width, width, bias=bias)
            elif kind == "chain":
                self.layers[f"c{i}a"] = nn.Linear(width, mid, bias=bias)
                self.layers[f"c{i}b"] = nn.Linear(mid, width, bias=not bias)
            elif kind == "shared" and "shared" not in self.layers:
                self.layers["shared"] = nn.Linear(width, width, bias=bias)
            elif kind == "relu_mod":
                self.layers[f"r{i}"] = nn.ReLU()
            elif kind == "dropout_mod":
                self.layers[f"d{i}"] = nn.Dropout(0.25)
        self.head = nn.Linear(width, 3, bias=head_bias)
        self.to(dtype)

    def forward(self, x: torch.Tensor):
        for i, (kind, _bias, _mid) in enumerate(self.plan):
            if kind in _COMMON_STEPS:
                x = _common_step(self.layers, i, kind, x)
            elif kind == "shared":
                x = self.layers["shared"](x)
            elif kind == "dropout_fn":
                x = F.dropout(x, 0.25, self.training)
            elif kind == "branch":
                x = self.layers[f"l{i}"](x) * 0.5 + torch.tanh(x)
        out = self.head(x)
        return (out, x.sum(-1)) if self.tuple_out else out


class SpecConvNet(nn.Module):
    """Conv2d -> BatchNorm2d blocks built from an explicit plan: per block (kernel, conv bias, BN affine,
    padding_mode, relu after); `shared_tail` calls one conv from two sites; `tuple_out` returns two tensors."""

    def __init__(self, channels: int, blocks: list, shared_tail: bool = False, tuple_out: bool = False,
                 seed: int = 0, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        manual_seed(seed)
        self.plan, self.shared_tail, self.tuple_out = [tuple(b) for b in blocks], shared_tail, tuple_out
        self.convs, self.bns = nn.ModuleList(), nn.ModuleList()
        cin = 3
        for k, bias, affine, mode, _relu in self.plan:
            self.convs.append(nn.Conv2d(cin, channels, k, padding=k // 2, bias=bias, padding_mode=mode))
            self.bns.append(nn.BatchNorm2d(channels, affine=affine))
            cin = channels
        self.tail = nn.Conv2d(cin, channels, 3, padding=1)
        self.bn_a, self.bn_b = nn.BatchNorm2d(channels), nn.BatchNorm2d(channels)
        self.head = nn.Linear(channels, 2)
        randomize_batchnorm(self, seed)
        self.to(dtype)

    def forward(self, x: torch.Tensor):
        for (_k, _b, _a, _m, relu), conv, bn in zip(self.plan, self.convs, self.bns):
            x = bn(conv(x))
            if relu:
                x = torch.relu(x)
        y = self.bn_a(self.tail(x))
        if self.shared_tail:
            y = y + self.bn_b(self.tail(x.flip(-1)))
        out = self.head(y.mean(dim=(2, 3)))
        return (out, y.amax(dim=(1, 2, 3))) if self.tuple_out else out


def random_mlp(seed: int, **kwargs: object) -> RandomMLP:
    """A seeded RandomMLP in eval mode."""
    return RandomMLP(seed, **kwargs).eval()


def random_convnet(seed: int, **kwargs: object) -> RandomConvNet:
    """A seeded RandomConvNet in eval mode."""
    return RandomConvNet(seed, **kwargs).eval()


def seeded_randn(*shape: int, seed: int = 0) -> torch.Tensor:
    """A standard normal tensor of `shape` drawn from its own generator seeded with `seed` (the global one
    is left alone)."""
    return torch.randn(*shape, generator=generator(seed))


def example_input(model: nn.Module, batch: int = 3, seed: int = 0) -> torch.Tensor:
    """A seeded input that fits a model from this module (or TinyNet/Net-like models with .fc1)."""
    g = generator(seed)
    if isinstance(model, RandomMLP):
        return torch.randn(batch, model.width, generator=g)
    if isinstance(model, RandomConvNet):
        return torch.randn(batch, 3, 6, 6, generator=g)
    first = next(m for m in model.modules() if isinstance(m, (nn.Linear, nn.Conv2d)))
    if isinstance(first, nn.Linear):
        return torch.randn(batch, first.in_features, generator=g)
    return torch.randn(batch, first.in_channels, 8, 8, generator=g)


def randomize_batchnorm(model: nn.Module, seed: int, var_low: float = 0.5, var_high: float = 2.0, *,
                        bias_scale: float = 0.2) -> nn.Module:
    """Non-trivial running statistics and affine parameters for every BatchNorm that keeps statistics (in
    place), as if the model had been trained, so that folding them matters. Variances in var_low..var_high,
    weights in 0.5..1.5, biases normal with standard deviation bias_scale."""
    g = generator(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.running_mean is not None:
                n = m.num_features
                m.running_mean.copy_(torch.randn(n, generator=g) * 0.5)
                m.running_var.copy_(var_low + (var_high - var_low) * torch.rand(n, generator=g))
                if m.affine:
                    m.weight.copy_(0.5 + torch.rand(n, generator=g))
                    m.bias.copy_(torch.randn(n, generator=g) * bias_scale)
    return model


# --------------------------------------------------------------------------- graphs as passes leave them

def edited_not_recompiled(model: nn.Module) -> "torch.fx.GraphModule":
    """model's trace after a pass put torch.neg after its first torch.relu node and did not call recompile() yet:
    the graph has the node, gm.code (what gm runs) does not, until the caller recompiles."""
    gm = torch.fx.symbolic_trace(model)
    negate_in_place(gm, next(n.name for n in gm.graph.nodes if n.target is torch.relu), recompile=False)
    return gm


def split_in_two(model: nn.Module, first: tuple[str, ...]) -> "torch.fx.GraphModule":
    """model's trace split by torch.fx's split_module: the nodes named in `first` go to submod_0, the others to
    submod_1. Its graph calls the two submodules, each a GraphModule with a graph of its own."""
    from torch.fx.passes.split_module import split_module

    gm = torch.fx.symbolic_trace(model)
    return split_module(gm, model, lambda node: 0 if node.name in first else 1)


def with_unread_call(gm: "torch.fx.GraphModule", target: str, recompile: bool = True) -> "torch.fx.GraphModule":
    """gm with one more call of its submodule `target`, on its first input, whose value nothing reads (tracing keeps
    such calls, and so do passes that leave dead code alone); without `recompile`, gm.code does not have it yet."""
    x = next(n for n in gm.graph.nodes if n.op == "placeholder")
    with gm.graph.inserting_after(x):
        gm.graph.call_module(target, (x,))
    if recompile:
        gm.recompile()
    return gm


def negate_in_place(gm: "torch.fx.GraphModule", after: str | None = None, recompile: bool = True) -> None:
    """gm changed in place, as a pass changes the graph it is given: torch.neg put after node `after` (by default
    the first value gm returns), and read by every node that read that node; gm recompiled unless not `recompile`."""
    nodes = list(gm.graph.nodes)
    node = (next(n for n in nodes if n.op == "output").all_input_nodes[0] if after is None else
            next(n for n in nodes if n.name == after))
    with gm.graph.inserting_after(node):
        neg = gm.graph.call_function(torch.neg, (node,))
    node.replace_all_uses_with(neg, delete_user_cb=lambda user: user is not neg)
    if recompile:
        gm.recompile()
