"""The cases of ex05_inserting: the seeded inputs each graded function is called on, and their references."""
from __future__ import annotations

import math

import torch
import torch.fx as fx
import torch.nn as nn

from fxplayground import DropoutNet, LinearChain, ThreeReluNet, TinyNet

from autograder.checks.framework import Case
from autograder.checks.evidence import flat_outputs
from autograder.checks.randmodels import manual_seed, random_convnet, random_mlp, seeded_randn
from autograder.checks.ex05_inserting.models import (
    DropoutZooNet, FunctionalDropNet, FunctionalLinearNet, OutputDropNet, ReshapeNet, RowsNet, ShapeZoo,
    SharedDropNet, SharedUse, SingleOut, TwoInputs,
)


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
    if not hidden:
        return [
            _insert_case("TinyNet, tanh after 'relu'", TinyNet, ((3, 4),), "relu", torch.tanh),
            _insert_case("TinyNet, sigmoid after 'fc1'", TinyNet, ((3, 4),), "fc1", torch.sigmoid, seed=1),
        ]
    cases = [
        _insert_case("ThreeReluNet, tanh after the input 'x' (two users: fc1 and the residual add)",
                     ThreeReluNet, ((4, 8),), "x", torch.tanh, seed=2),
        _insert_case("ThreeReluNet, a Python function after 'head' (its user is the output node)",
                     ThreeReluNet, ((4, 8),), "head", double, seed=3),
        _insert_case("a node read twice by one user, once inside a list argument and once by keyword "
                     "(torch.cat([h, h * h, torch.add(h, other=h)]))",
                     SharedUse, ((2, 5),), "fc", torch.sigmoid, seed=4),
        _insert_case("random model seed 21, after its first call_module (name differs from target)",
                     lambda: random_mlp(21), _width(3), None, torch.neg, pick="first call_module"),
        _insert_case("random model seed 22, after the node that feeds the output",
                     lambda: random_mlp(22), _width(3), None, double, pick="last before output"),
        Case("TinyNet, an unknown node name 'fc9'", lambda: (_traced(TinyNet(), seeded_randn(2, 4)), "fc9", torch.tanh),
             data={"raises": "KeyError", "name": "fc9"}),
    ]
    return cases


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
    if not hidden:
        return [
            _drop_case("DropoutNet traced in train mode", DropoutNet, ((4, 6),), train=True),
            _drop_case("DropoutNet traced in eval mode", DropoutNet, ((4, 6),), train=False, seed=1),
        ]
    return [
        _drop_case("one nn.Dropout module called from two sites", SharedDropNet, ((3, 6),), train=True, seed=2),
        _drop_case("dropout on the input, twice in a row, and dropout feeding the output directly",
                   OutputDropNet, ((3, 5),), train=True, seed=3),
        _drop_case("F.dropout/torch.dropout with training=self.training traced in train mode, one input "
                   "passed by keyword (torch.dropout(input=h, ...))", FunctionalDropNet, ((4, 6),), train=True, seed=4),
        _drop_case("F.dropout/torch.dropout traced in eval mode: the calls stay in the graph with training=False",
                   FunctionalDropNet, ((4, 6),), train=False, seed=8),
        _drop_case("Dropout2d, AlphaDropout, FeatureAlphaDropout, F.dropout2d, F.alpha_dropout, F.dropout, an "
                   "nn.Dropout and a subclass of it, traced as a call_module", DropoutZooNet, ((2, 3, 5, 5),), train=True, seed=5,
                   tracer=DropoutLeafTracer),
        _drop_case("random model seed 41 with dropout modules named 'layers.d*'",
                   lambda: random_mlp(41, steps=("dropout", "linear", "relu_fn", "dropout", "residual")),
                   _width(3), train=True, seed=6),
        _drop_case("a model with no dropout at all (random model seed 42)",
                   lambda: random_mlp(42, steps=("linear", "relu_mod", "branch")), _width(3), train=False, seed=7),
    ]


def _shape_case(label: str, make_model, shapes: tuple, seed: int = 0) -> Case:
    def make():
        manual_seed(seed)
        model = make_model()
        inputs = [seeded_randn(*s, seed=seed + i) for i, s in enumerate(_shapes(shapes, model))]
        return (fx.symbolic_trace(model), *inputs)
    return Case(label, make)


def _shape_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [_shape_case("TinyNet on a (3, 4) input", TinyNet, ((3, 4),)),
                _shape_case("DropoutNet (eval) on a (5, 6) input", lambda: DropoutNet().eval(), ((5, 6),), 1)]
    return [
        _shape_case("a model with x.size(0), x.shape, chunk (a node whose value is a tuple of tensors), a "
                    "parameter and a tuple output", ShapeZoo, ((5, 4),), 2),
        _shape_case("two inputs and a 3-D batch", TwoInputs, ((2, 7, 3), (2, 7, 4)), 3),
        _shape_case("a single tensor output from a function call", SingleOut, ((2, 3, 4),), 4),
        _shape_case("random model seed 51", lambda: random_mlp(51), _width(3), 5),
        _shape_case("random conv model seed 52", lambda: random_convnet(52), ((2, 3, 6, 6),), 6),
    ]


def _flops_case(label: str, make_model, shapes: tuple, seed: int = 0) -> Case:
    return _shape_case(label, make_model, shapes, seed)


def _flops_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [_flops_case("TinyNet on a (5, 4) input", TinyNet, ((5, 4),)),
                _flops_case("LinearChain (8, 16, 4) on a (3, 8) input", lambda: LinearChain((8, 16, 4)),
                            ((3, 8),), 1)]
    return [
        _flops_case("TinyNet on a 3-D (2, 3, 4) input", TinyNet, ((2, 3, 4),), 2),
        _flops_case("TinyNet on a 1-D (4,) input", TinyNet, ((4,),), 3),
        _flops_case("one nn.Linear called three times, after an F.linear call", FunctionalLinearNet, ((3, 6),), 5),
        _flops_case("a reshape between the input and the Linear: (2, 12) -> (6, 4)", RowsNet, ((2, 12),), 8),
        _flops_case("a view between the input and the Linear: (2, 12) -> (2, 3, 4)", ReshapeNet, ((2, 12),), 4),
        _flops_case("random model seed 61 (shared and chained linears) on a 3-D input",
                    lambda: random_mlp(61, width=6, steps=("shared", "chain", "branch", "linear")),
                    _width(5, 2), 6),
        _flops_case("random model seed 62", lambda: random_mlp(62), _width(4), 7),
    ]
