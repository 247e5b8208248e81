"""The cases of ex05_inserting: the seeded inputs each graded function is called on, and their references."""
from __future__ import annotations


import torch
import torch.fx as fx
import torch.nn as nn

from fxplayground import DropoutNet, LinearChain, TinyNet

from autograder.checks import keyring
from autograder.checks.framework import Case
from autograder.checks.randmodels import manual_seed, seeded_randn


class DropoutLeafTracer(fx.Tracer):
    """Keeps every dropout module a leaf, a subclass defined outside torch.nn too (symbolic_trace would trace
    into one and record the F.dropout inside)."""

    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        return isinstance(m, nn.Dropout) or super().is_leaf_module(m, module_qualified_name)


def _traced(model: nn.Module, *inputs: torch.Tensor, tracer: type[fx.Tracer] | None = None) -> fx.GraphModule:
    """Trace `model` and keep seeded example inputs on it, so evidence can run what the learner returned."""
    gm = fx.symbolic_trace(model) if tracer is None else fx.GraphModule(model, tracer().trace(model))
    gm.example_inputs = tuple(inputs)  # a plain attribute: the learner's function does not need it
    return gm


# ===================================================================================== insert_after

def double(t: torch.Tensor) -> torch.Tensor:
    """A plain Python function to insert: FX calls it like any other function."""
    return t * 2.0


def _shapes(shapes, model: nn.Module) -> tuple:
    """Input shapes: given, or for a random MLP `(rows, width)` with its own width."""
    return shapes(model) if callable(shapes) else shapes


def _width(rows: int, *lead: int):
    return lambda model: ((*lead, rows, model.width),) if lead else ((rows, model.width),)


def _seeded(make, seed):
    def build():
        manual_seed(seed)
        return make()
    return build


def _insert_case(label: str, make_model, shape: tuple, node: str | None, fn, seed: int = 0,
                 pick: str | None = None) -> Case:
    """A case of insert_after; `pick` chooses the node by a rule when its name depends on the model."""
    def make():
        model = _seeded(make_model, seed)()
        gm = _traced(model, *[seeded_randn(*s, seed=seed + i) for i, s in enumerate(_shapes(shape, model))])
        name = node if pick is None else _pick(gm, pick)
        return gm, name, fn
    return Case(label, make, data={"pick": pick})


def _pick(gm: fx.GraphModule, rule: str) -> str:
    nodes = list(gm.graph.nodes)
    if rule == "first call_module":
        return next(n.name for n in nodes if n.op == "call_module")
    if rule == "last before output":
        return nodes[-1].args[0].name
    raise ValueError(rule)


def _insert_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex05_inserting")._insert_cases()
    return [
        _insert_case("TinyNet, tanh after 'relu'", TinyNet, ((3, 4),), "relu", torch.tanh),
        _insert_case("TinyNet, sigmoid after 'fc1'", TinyNet, ((3, 4),), "fc1", torch.sigmoid, seed=1),
    ]


def _drop_case(label: str, make_model, shape: tuple, *, train: bool, seed: int = 0,
               tracer: type[fx.Tracer] | None = None) -> Case:
    def make():
        manual_seed(seed)
        model = make_model()
        model.train(train)
        return (_traced(model, *[seeded_randn(*s, seed=seed + i) for i, s in enumerate(_shapes(shape, model))],
                        tracer=tracer),)
    return Case(label, make, data={"make": make_model, "train": train, "seed": seed, "shape": shape})


def _drop_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex05_inserting")._drop_cases()
    return [
        _drop_case("DropoutNet traced in train mode", DropoutNet, ((4, 6),), train=True),
        _drop_case("DropoutNet traced in eval mode", DropoutNet, ((4, 6),), train=False, seed=1),
    ]


def _shape_case(label: str, make_model, shapes: tuple, seed: int = 0) -> Case:
    def make():
        manual_seed(seed)
        model = make_model()
        inputs = [seeded_randn(*s, seed=seed + i) for i, s in enumerate(_shapes(shapes, model))]
        return (fx.symbolic_trace(model), *inputs)
    return Case(label, make)


def _shape_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex05_inserting")._shape_cases()
    return [_shape_case("TinyNet on a (3, 4) input", TinyNet, ((3, 4),)),
            _shape_case("DropoutNet (eval) on a (5, 6) input", lambda: DropoutNet().eval(), ((5, 6),), 1)]


def _flops_case(label: str, make_model, shapes: tuple, seed: int = 0) -> Case:
    return _shape_case(label, make_model, shapes, seed)


def _flops_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex05_inserting")._flops_cases()
    return [_flops_case("TinyNet on a (5, 4) input", TinyNet, ((5, 4),)),
            _flops_case("LinearChain (8, 16, 4) on a (3, 8) input", lambda: LinearChain((8, 16, 4)),
                        ((3, 8),), 1)]
