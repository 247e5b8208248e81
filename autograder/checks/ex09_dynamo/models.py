"""The models, functions, pass and recording backend the cases of ex09_dynamo are built from."""
from __future__ import annotations

import logging
import os
import random
import sys
from typing import Callable

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from autograder.checks.randmodels import manual_seed, generator, seed_of


PROBE = "_ex09_probe"   # the inputs a compile_with_pass case calls the compiled model on, stashed on the model


_HERE = os.path.dirname(os.path.abspath(__file__))  # the package's folder: its files are named in the warnings


class _QuietAboutOwnCases(logging.Filter):
    """Drops dynamo's warnings about graph breaks in this package's own case functions (`.item()` in
    sin_item_scale, BreakNet...): they are the point of the cases, not the learner's code, and a test cell that
    prints them to stderr looks broken. Warnings about the learner's own code still show."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            return _HERE not in record.getMessage()
        except Exception:
            return True


for _name in ("torch._dynamo", "torch._dynamo.variables.tensor", "torch._dynamo.symbolic_convert",
              "torch._dynamo.convert_frame"):
    _logger = logging.getLogger(_name)
    if not any(isinstance(f, _QuietAboutOwnCases) for f in _logger.filters):
        _logger.addFilter(_QuietAboutOwnCases())


def _reset() -> None:
    import torch._dynamo
    torch._dynamo.reset()


_SETTINGS: dict = {}   # torch._dynamo.config's plain settings as the current case found them


def _dynamo_settings() -> dict:
    import torch._dynamo
    return {k: v for k, v in torch._dynamo.config.get_config_copy().items()
            if isinstance(v, (bool, int, float, str, type(None)))}


def _remember_settings() -> None:
    """Note torch._dynamo.config's settings as a case hands its inputs over (the learner's code runs next)."""
    _SETTINGS.clear()
    _SETTINGS.update(_dynamo_settings())


def _settings_left_changed() -> str | None:
    """The first setting of torch._dynamo.config the learner's code left changed, in words (all of them are put
    back, so that the next case starts as this one did), or None."""
    import torch._dynamo
    now = _dynamo_settings()
    changed = [k for k in _SETTINGS if now.get(k) != _SETTINGS[k]]
    for k in changed:
        setattr(torch._dynamo.config, k, _SETTINGS[k])
    if not changed:
        return None
    k = changed[0]
    return f"torch._dynamo.config.{k} was left at {now.get(k)!r}, it was {_SETTINGS[k]!r}"


SETTINGS_HINT = "ex09.leave_dynamo_config_as_found"


def _gen(seed: int) -> torch.Generator:
    return generator(seed)


class GateNet(nn.Module):
    """The lesson's shape with other sizes: a shared Linear, a buffer, a branch on the mean (one break)."""

    def __init__(self, width: int = 6, act: str = "relu") -> None:
        super().__init__()
        self.act = act
        self.inp = nn.Linear(width, 2 * width)
        self.mid = nn.Linear(2 * width, 2 * width)
        self.out = nn.Linear(2 * width, 3)
        self.register_buffer("scale", torch.tensor(0.75))

    def _act(self, h: torch.Tensor) -> torch.Tensor:
        return torch.relu(h) if self.act == "relu" else torch.sigmoid(h)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self._act(self.inp(x))
        h = self.mid(h) * self.scale
        if h.mean() > 0:
            h = self._act(self.mid(h))
        return self.out(h)


class BreakNet(nn.Module):
    """A stack of steps drawn from a seed: Linears, activations, `.item()`, branches on values and on shapes.

    At least one step breaks the graph. `act` is the activation every "act" step uses ("relu" written as a
    function, a method or F.relu; "sigmoid" for the reference of compile_with_pass).
    """

    STEPS = ("linear", "act", "tanh", "item", "branch", "shape_branch")

    def __init__(self, seed: int, act: str = "relu") -> None:
        super().__init__()
        rng = random.Random(seed)
        manual_seed(seed)
        self.act = act
        self.width = rng.choice([4, 5, 8])
        self.plan = [rng.choice(self.STEPS) for _ in range(rng.randint(4, 6))]
        if not any(s in ("item", "branch") for s in self.plan):
            self.plan.insert(rng.randrange(1, len(self.plan)), rng.choice(["item", "branch"]))
        self.forms = [rng.choice(["function", "method", "F"]) for _ in self.plan]
        self.layers = nn.ModuleList(nn.Linear(self.width, self.width, bias=rng.random() < 0.7) for _ in self.plan)

    def _act(self, x: torch.Tensor, form: str) -> torch.Tensor:
        if self.act != "relu":
            return torch.sigmoid(x)
        return torch.relu(x) if form == "function" else x.relu() if form == "method" else F.relu(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for step, form, layer in zip(self.plan, self.forms, self.layers):
            if step == "linear":
                x = layer(x)
            elif step == "act":
                x = self._act(layer(x), form)
            elif step == "tanh":
                x = torch.tanh(x) + x
            elif step == "item":
                x = x * (0.5 + abs(x.mean().item()))
            elif step == "branch":
                x = self._act(x, form) if x.sum() > 0 else layer(x)
            elif step == "shape_branch":
                x = x * 2 if x.shape[0] > 2 else x - 1
        return x


class Inner(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.mean() > 0:
            return x * 2
        return x - 1


class NestedBreak(nn.Module):
    """The branch sits in a submodule called between two calls of one Linear."""

    def __init__(self, width: int = 5) -> None:
        super().__init__()
        manual_seed(width)
        self.lin = nn.Linear(width, width)
        self.inner = Inner()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(self.inner(self.lin(x)))


class PlainMLP(nn.Module):
    def __init__(self, width: int = 6, act: str = "relu") -> None:
        super().__init__()
        manual_seed(width)
        self.act = act
        self.a = nn.Linear(width, 2 * width)
        self.b = nn.Linear(2 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.a(x)
        h = h.relu() if self.act == "relu" else h.sigmoid()
        return self.b(h)


class TailNet(PlainMLP):
    """PlainMLP with a graph break before its last Linear: the second graph has no ReLU for the pass to change."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.a(x)
        h = h.relu() if self.act == "relu" else h.sigmoid()
        torch._dynamo.graph_break()
        return self.b(h)


class Stepper(nn.Module):
    """Counts its calls in a Python int attribute and scales by it: dynamo guards on the attribute, so every
    further call of the compiled model compiles (and hands the backend) one more graph."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        manual_seed(width)
        self.lin = nn.Linear(width, width)
        self.steps = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.steps += 1
        return torch.tanh(self.lin(x)) * self.steps


def sin_item_scale(x: torch.Tensor) -> torch.Tensor:
    """The lesson's debug function without its print: `.item()` breaks the graph."""
    y = torch.sin(x)
    s = y.sum().item()
    return y * s


def two_items(x: torch.Tensor) -> torch.Tensor:
    y = torch.cos(x) + 1
    a = y.mean().item()
    b = (y * y).max().item()
    return y * a - b


def returns_a_number(x: torch.Tensor) -> float:
    """The graph ends at `.item()`, and nothing after it is a tensor operation."""
    return (torch.tanh(x) * 3).sum().item()


def scaled_by_item(x: torch.Tensor, scale: torch.Tensor | None = None) -> torch.Tensor:
    """Two inputs, the second optional: given, its `.item()` breaks the graph; left out, nothing breaks, so an
    answer that passes on the first input only compiles another function than the one asked for."""
    y = torch.cos(x) * 2
    if scale is not None:
        y = y * scale.abs().max().item()
    return y - 1


def relu_twice(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x) * 2 + torch.relu(-x)


def _recording_backend(store: list) -> Callable:
    def backend(gm: fx.GraphModule, example_inputs: list) -> Callable:
        store.append(gm)
        return gm.forward
    return backend


class SigmoidPass:
    """A pass `gm -> gm` for the cases: every ReLU (torch.relu, F.relu, .relu()) becomes torch.sigmoid.

    It returns a NEW GraphModule and leaves the one it is given as it was, so an answer that ignores what the
    pass returns runs the old graph. It records each call, so the judge sees how many graphs it saw, and how many
    of them were ATen graphs (AOTAutograd's, make_fx's), where its relus are aten.relu.default and it finds none."""

    def __init__(self) -> None:
        self.calls = 0
        self.aten_graphs = 0
        self.at_run_time = 0   # calls made while no compile was under way (by the callable a backend returned)

    def __call__(self, gm: fx.GraphModule) -> fx.GraphModule:
        self.calls += 1
        frame = sys._getframe(1)
        while frame is not None and not frame.f_code.co_filename.endswith("convert_frame.py"):
            frame = frame.f_back
        self.at_run_time += frame is None
        if any(isinstance(n.target, torch._ops.OpOverload) for n in gm.graph.nodes):
            self.aten_graphs += 1
        graph = fx.Graph()
        env: dict = {}
        for node in gm.graph.nodes:
            if (node.op == "call_function" and node.target in (torch.relu, F.relu)) or \
                    (node.op == "call_method" and node.target == "relu"):
                env[node] = graph.call_function(torch.sigmoid, (env[node.args[0]],))
            else:
                env[node] = graph.node_copy(node, lambda n: env[n])
        graph.lint()
        return fx.GraphModule(gm, graph)

    __name__ = "relu_to_sigmoid"


FAILED = "relu_to_sigmoid failed on this graph (on purpose)"


class FailingPass(SigmoidPass):
    """relu_to_sigmoid with a bug: it raises ValueError(FAILED) on every graph it is given. The caller's compiled
    model then fails at its first call, with the pass's error; an answer that catches the error and runs the graph
    without the pass gives the caller outputs the pass never made, and says nothing."""

    def __call__(self, gm: fx.GraphModule) -> fx.GraphModule:
        super().__call__(gm)   # counts the call
        raise ValueError(FAILED)


def grad_gated(x: torch.Tensor) -> torch.Tensor:
    """Takes another path when autograd records (as checkpointing code does): with grad enabled, a `.item()` breaks
    the graph; under torch.no_grad() nothing breaks, so an answer that calls fn under no_grad captures (and counts)
    the graphs of another function than the one the caller runs."""
    y = torch.sin(x)
    if torch.is_grad_enabled():
        y = y * y.sum().item()
    return torch.cos(y)


def needs_grad_path(x: torch.Tensor) -> torch.Tensor:
    """Branches on x.requires_grad (dynamo guards on it): a detached copy of x takes the other branch."""
    if x.requires_grad:
        return torch.sin(x) * 2
    return torch.cos(x) + 1


def product_plus(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Called with one tensor as both inputs, dynamo sees that they are the same tensor: one placeholder."""
    return a * b + a


class TrainNet(nn.Module):
    """BatchNorm1d and Dropout, to be used in training mode: its graph counts the batches (an add_ on
    num_batches_tracked) and normalises with the batch's statistics; in eval mode the graph differs."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.bn = nn.BatchNorm1d(width)
        self.drop = nn.Dropout(0.25)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(torch.relu(self.bn(self.fc(x))))


def sin_thrice(x: torch.Tensor) -> torch.Tensor:
    """The same graph three times: sin, a break, sin, a break, sin (dynamo hands the backend each of them)."""
    x = torch.sin(x)
    torch._dynamo.graph_break()
    x = torch.sin(x)
    torch._dynamo.graph_break()
    return torch.sin(x)


def contiguity_path(x: torch.Tensor) -> torch.Tensor:
    """Branches on x.is_contiguous() (dynamo guards on it): a transposed input takes sin, a contiguous copy cos."""
    if x.is_contiguous():
        return torch.cos(x) + 1
    return torch.sin(x) * 2


def _halve(module: nn.Module, inputs: tuple, output: torch.Tensor) -> torch.Tensor:
    return torch.tanh(output) * 0.5


def hooked_mlp(width: int) -> nn.Module:
    """A PlainMLP with a forward hook the caller registered: calling the model runs it, its forward alone does
    not (dynamo puts the hook's tanh in the graph)."""
    model = PlainMLP(width)
    model.register_forward_hook(_halve)
    return model


class TrainBreak(nn.Module):
    """A .item() in training mode only: how many graph breaks compiling it causes depends on its mode."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        manual_seed(width)
        self.fc = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        if self.training:
            h = h * h.mean().item()
        return torch.relu(h)


def break_if_grad(x: torch.Tensor) -> torch.Tensor:
    """A graph break only for an input that requires grad: a detached copy of x compiles whole."""
    h = torch.sin(x)
    if x.requires_grad:
        torch._dynamo.graph_break()
    return torch.cos(h)


def break_if_same(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """A graph break only when both inputs are one tensor (dynamo sees it): copies of them compile whole."""
    h = a * b
    if a is b:
        torch._dynamo.graph_break()
    return h + 1


STEP = "_ex09_step"   # set on a compile_with_pass case's model: its weights change in place between calls
GRAD = "_ex09_grad"   # set on a compile_with_pass case's model: the compiled model is called with grad enabled


def weight_step(model: nn.Module) -> None:
    """A change of the model's weights in place, as an optimizer step or load_state_dict makes: every parameter
    negated (so two steps give the weights back exactly)."""
    with torch.no_grad():
        for p in model.parameters():
            p.neg_()
