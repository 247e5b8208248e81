"""The operators and models the cases of ex12_custom_ops are built from.

The check library defines its own operators once per process, in namespaces of its own (`fxc12`, `fxc12b`):
the reference `fxc12::scaled_gelu` (the exercise's op, written by the course), decoys that share a part of its
name, and `fxc12::shift` with two overloads. A forked worker inherits what its parent registered; `operators()`
registers only what the process does not have yet, so importing this module twice never defines an operator twice.
"""
from __future__ import annotations

import math
import random

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

from autograder.checks.randmodels import manual_seed, generator, seed_of

PROBE = "_ex12_probe"

_LIBS: list = []      # the torch.library.Library objects: an operator lives as long as its library
_OPS: dict = {}


def _gen(seed: int) -> torch.Generator:
    return generator(seed)


def gelu_grad(x: Tensor) -> Tensor:
    """d gelu(x) / dx for the exact (erf) gelu: Phi(x) + x * phi(x)."""
    return 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0))) + x * torch.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _define(namespace: str, schemas: dict) -> bool:
    """Define the operators `schemas` (name -> (schema, kernel)) in `namespace` unless the process has them;
    True when this call defined them."""
    if all(_has(namespace, name) for name in schemas):
        return False
    lib = torch.library.Library(namespace, "FRAGMENT")
    for name, (schema, kernel) in schemas.items():
        lib.define(schema)
        lib.impl(name, kernel, "CompositeExplicitAutograd")
    _LIBS.append(lib)
    return True


def _has(namespace: str, name: str) -> bool:
    packet, _, overload = name.partition(".")
    try:
        getattr(getattr(getattr(torch.ops, namespace), packet), overload or "default")
        return True
    except (AttributeError, RuntimeError):
        return False


def operators() -> dict:
    """The check library's operators, by short name, registered in this process on first use."""
    if _OPS:
        return _OPS
    defined = _define("fxc12", {
        "scaled_gelu": ("scaled_gelu(Tensor x, float scale) -> Tensor", lambda x, scale: scale * F.gelu(x)),
        "scaled_gelu_fast": ("scaled_gelu_fast(Tensor x, float scale) -> Tensor",
                             lambda x, scale: scale * F.gelu(x, approximate="tanh")),
        "shift": ("shift(Tensor x, float by) -> Tensor", lambda x, by: x + by),
        "shift.Tensor": ("shift.Tensor(Tensor x, Tensor by) -> Tensor", lambda x, by: x + by),
        "shift_fast": ("shift_fast(Tensor x, float by) -> Tensor", lambda x, by: x + 2 * by),
        "upshift": ("upshift(Tensor x, float by) -> Tensor", lambda x, by: x + abs(by)),
        # two overloads and no default one: a packet is not always packet.default and its siblings
        "pad.Scalar": ("pad.Scalar(Tensor x, float by) -> Tensor", lambda x, by: x + by),
        "pad.Tensor": ("pad.Tensor(Tensor x, Tensor by) -> Tensor", lambda x, by: x + by),
    })
    _define("fxc12b", {"scaled_gelu": ("scaled_gelu(Tensor x, float scale) -> Tensor",
                                       lambda x, scale: scale * torch.tanh(x)),
                       "shift": ("shift(Tensor x, float by) -> Tensor", lambda x, by: x - by)})
    if defined:   # the backward of the reference op, registered with the operator
        torch.library.register_autograd("fxc12::scaled_gelu", _backward, setup_context=_setup)
    ops = torch.ops
    _OPS.update({
        "scaled_gelu": ops.fxc12.scaled_gelu, "scaled_gelu_fast": ops.fxc12.scaled_gelu_fast,
        "shift": ops.fxc12.shift, "other scaled_gelu": ops.fxc12b.scaled_gelu,
        "shift_fast": ops.fxc12.shift_fast, "upshift": ops.fxc12.upshift, "other shift": ops.fxc12b.shift,
        "pad": ops.fxc12.pad,
    })
    return _OPS


def _setup(ctx, inputs, output) -> None:
    ctx.save_for_backward(inputs[0])
    ctx.scale = inputs[1]


def _backward(ctx, grad: Tensor):
    (x,) = ctx.saved_tensors
    return grad * ctx.scale * gelu_grad(x), None


# ------------------------------------------------------------------ the exported models (count_op_nodes)

class TwoGelus(nn.Module):
    """The op twice, aten's gelu once beside it (a decoy), a chunk (getitem nodes) and a Linear."""

    def __init__(self, width: int = 6) -> None:
        super().__init__()
        self.fc = nn.Linear(width, 2 * width)

    def forward(self, x: Tensor) -> Tensor:
        a, b = self.fc(x).chunk(2, dim=-1)
        op = operators()["scaled_gelu"]
        return op(a, 1.5) + F.gelu(b) + op(b, scale=-0.5)


class Decoys(nn.Module):
    """The op once, and three operators that are not it: one in another namespace with the same name, one whose
    name contains the op's, and aten.gelu."""

    def __init__(self, width: int = 5) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x: Tensor) -> Tensor:
        ops = operators()
        h = self.fc(x)
        return ops["scaled_gelu"](h, 2.0) + ops["other scaled_gelu"](h, 2.0) + ops["scaled_gelu_fast"](h, 0.5) \
            + F.gelu(h)


class Shifts(nn.Module):
    """fxc12::shift through both of its overloads: shift.default twice, shift.Tensor once; then operators that are
    not it: fxc12b::shift twice (the same name in another namespace), fxc12::shift_fast (its node's name starts
    with shift too) and fxc12::upshift (its name contains shift). Each misreading of "count op's nodes" (by
    exact target, by packet, by a target's name in any of its forms, by node name) counts another number here."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.register_buffer("offset", torch.linspace(-1.0, 1.0, width))

    def forward(self, x: Tensor) -> Tensor:
        ops = operators()
        shift = ops["shift"]
        h = shift(x, 1.0)
        h = shift(h, self.offset) * shift.default(h, -2.0) + h.sum(dim=-1, keepdim=True)
        h = ops["other shift"](ops["other shift"](h, 0.5), -0.25)
        return ops["upshift"](ops["shift_fast"](h, 0.125), 0.5)


class RandomOps(nn.Module):
    """Steps drawn from a seed: Linears, the op, aten's gelu and relu, shift, residuals."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        rng = random.Random(seed)
        self.width = rng.choice([4, 6, 8])
        self.plan = [rng.choice(["linear", "op", "gelu", "relu", "shift", "residual"])
                     for _ in range(rng.randint(4, 7))]
        self.scales = [round(rng.uniform(-2.0, 2.0), 2) for _ in self.plan]
        self.layers = nn.ModuleList(nn.Linear(self.width, self.width) for _ in self.plan)

    def forward(self, x: Tensor) -> Tensor:
        ops = operators()
        for step, scale, layer in zip(self.plan, self.scales, self.layers):
            if step == "linear":
                x = layer(x)
            elif step == "op":
                x = ops["scaled_gelu"](layer(x), scale)
            elif step == "gelu":
                x = F.gelu(layer(x))
            elif step == "relu":
                x = torch.relu(layer(x))
            elif step == "shift":
                x = ops["shift"](layer(x), scale)
            else:
                x = ops["scaled_gelu"](layer(x), scale) + x
        return x


class CondOps(nn.Module):
    """The op once in the program's own graph, and once more inside the true branch of torch.cond: that call is a
    node of the branch's subgraph, not of ep.graph."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x: Tensor) -> Tensor:
        op = operators()["scaled_gelu"]
        h = op(self.fc(x), 1.5)
        return torch.cond(h.sum() > 0, lambda t: op(t, 2.0), lambda t: t.relu(), (h,))


class Pads(nn.Module):
    """fxc12::pad, whose overloads are Scalar and Tensor (it has no default), once each, beside a Linear."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.register_buffer("offset", torch.linspace(0.0, 1.0, width))

    def forward(self, x: Tensor) -> Tensor:
        pad = operators()["pad"]
        return pad.Tensor(pad.Scalar(self.fc(x), 0.5), self.offset).relu()


EXPORTED = {
    "TwoGelus(6)": (lambda: TwoGelus(6), (3, 6)),
    "TwoGelus(4)": (lambda: TwoGelus(4), (2, 4)),
    "Decoys(5)": (lambda: Decoys(5), (3, 5)),
    "Shifts(4)": (lambda: Shifts(4), (2, 4)),
    "RandomOps seed 3": (lambda: RandomOps(3), (3, RandomOps(3).width)),
    "RandomOps seed 8": (lambda: RandomOps(8), (2, RandomOps(8).width)),
    "CondOps(4)": (lambda: CondOps(4), (3, 4)),
    "Pads(4)": (lambda: Pads(4), (3, 4)),
}


def exported_model(name: str, seed: int = 0) -> tuple[nn.Module, Tensor]:
    factory, shape = EXPORTED[name]
    manual_seed(seed)
    return factory().eval(), torch.randn(*shape, generator=_gen(seed + 1))


# ---------------------------------------------------------------- the traced models (replace_with_op)

def scaled_gelu(x: Tensor, scale: float) -> Tensor:
    """The Python function the op replaces: scale * gelu(x)."""
    return scale * F.gelu(x)


def _other(x: Tensor, scale: float) -> Tensor:
    return scale * torch.tanh(x)


_other.__name__ = _other.__qualname__ = "scaled_gelu"   # a decoy: another function of the same name
other_scaled_gelu = _other


class GeluBlock(nn.Module):
    """The function twice (once with scale as a keyword), aten's gelu beside it, a Linear between."""

    def __init__(self, width: int = 6) -> None:
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, 3)

    def forward(self, x: Tensor) -> Tensor:
        h = scaled_gelu(self.fc1(x), 1.5)
        return self.fc2(scaled_gelu(h, scale=-0.5) + F.gelu(h))


class SameName(nn.Module):
    """The function and another function also called `scaled_gelu`, computing something else."""

    def __init__(self, width: int = 5) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x: Tensor) -> Tensor:
        h = self.fc(x)
        return scaled_gelu(h, 2.0) + other_scaled_gelu(h, 2.0) + scaled_gelu(x=h, scale=0.25)


class Chained(nn.Module):
    """The function on the function's result, three times in a row, and a method call on it."""

    def forward(self, x: Tensor) -> Tensor:
        return scaled_gelu(scaled_gelu(scaled_gelu(x, 0.5), 2.0), 1.0).sum(dim=-1)


class NoCall(nn.Module):
    """A model that never calls the function: nothing to replace."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(self.fc(x)) * 2.0


class RandomBlocks(nn.Module):
    """Steps drawn from a seed: Linears, the function (positional or keyword scale), the decoy, gelu, residuals."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        rng = random.Random(seed)
        self.width = rng.choice([3, 5, 7])
        self.plan = [rng.choice(["linear", "fn", "fn kw", "decoy", "gelu", "residual"])
                     for _ in range(rng.randint(4, 7))]
        if "fn" not in self.plan:
            self.plan.append("fn")
        self.scales = [round(rng.uniform(-2.0, 2.0), 2) for _ in self.plan]
        self.layers = nn.ModuleList(nn.Linear(self.width, self.width) for _ in self.plan)

    def forward(self, x: Tensor) -> Tensor:
        for step, scale, layer in zip(self.plan, self.scales, self.layers):
            h = layer(x)
            if step == "linear":
                x = h
            elif step == "fn":
                x = scaled_gelu(h, scale)
            elif step == "fn kw":
                x = scaled_gelu(h, scale=scale)
            elif step == "decoy":
                x = other_scaled_gelu(h, scale)
            elif step == "gelu":
                x = F.gelu(h)
            else:
                x = scaled_gelu(h, scale) + x
        return x


TRACED = {
    "GeluBlock(6)": (lambda: GeluBlock(6), (3, 6)),
    "GeluBlock(4)": (lambda: GeluBlock(4), (2, 4)),
    "SameName(5)": (lambda: SameName(5), (3, 5)),
    "Chained": (Chained, (2, 5)),
    "NoCall(4)": (lambda: NoCall(4), (3, 4)),
    "RandomBlocks seed 4": (lambda: RandomBlocks(4), (3, RandomBlocks(4).width)),
    "RandomBlocks seed 11": (lambda: RandomBlocks(11), (2, RandomBlocks(11).width)),
}


def forget_stale_wraps() -> None:
    """Drop the names torch.fx would patch at every trace but that no longer exist where it looks for them.

    A GraphModule's generated code calls torch.fx wrap(name) for each node whose meta says "is_wrapped"; a node
    retargeted to an operator without dropping that flag registers the operator's dotted name, and from then on
    every symbolic trace in the process fails with a KeyError naming it. An earlier answer must not break the
    next case's tracing.
    """
    patches = fx._symbolic_trace._wrapped_fns_to_patch
    for key, frame in list(patches.items()):
        if key[1] not in frame:
            del patches[key]


def traced_model(name: str, seed: int = 0, dtype: torch.dtype = torch.float32) -> tuple[fx.GraphModule, Tensor]:
    """The model traced with the function and the decoy kept as call_function nodes (lesson 04's wrapping)."""
    forget_stale_wraps()
    factory, shape = TRACED[name]
    manual_seed(seed)
    model = factory().to(dtype).eval()
    tracer = fx.Tracer(autowrap_functions=(scaled_gelu, other_scaled_gelu))
    gm = fx.GraphModule(model, tracer.trace(model), type(model).__name__)
    return gm, torch.randn(*shape, generator=_gen(seed + 1), dtype=dtype)


LINTED = "_ex12_linted"


def watch_lint(graph: fx.Graph) -> None:
    """Make `graph.lint()` leave a mark on the graph (graph._ex12_linted), so that the evidence can tell whether
    the answer linted the graph it changed: lint raises only on a broken graph, and a sound one shows nothing."""
    lint = type(graph).lint

    def linted(*args, **kwargs):
        setattr(graph, LINTED, True)
        return lint(graph, *args, **kwargs)

    setattr(graph, LINTED, False)
    graph.lint = linted

