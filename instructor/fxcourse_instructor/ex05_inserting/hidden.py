"""The hidden cases of ex05_inserting: what each case function of its `cases` builds for hidden=True (the
instructor's side: reached through autograder.checks.keyring.hidden, never installed where learners work)."""
from __future__ import annotations

import torch

from torch.fx.passes.shape_prop import ShapeProp

from fxplayground import LinearChain, ThreeReluNet, TinyNet

from autograder.checks.framework import Case, given_again
from autograder.checks.randmodels import (
    negate_in_place, random_convnet, random_mlp, seeded_randn, with_unread_call
)
from autograder.checks.ex05_inserting.models import (
    BufferNet, DeadDropNet, DropoutNames, DropoutZooNet, EncoderDropNet, EncoderHeadNet, FunctionalDropNet,
    FunctionalLinearNet, OutputDropNet, OutputNamed, ReshapeNet, RowsNet, ShapeZoo,
    SharedDropNet, SharedUse, SideBranch, SingleOut, SubclassLinearNet, TupleOut, TwoInputs,
    UnusedNodesDropNet
)
from autograder.checks.ex05_inserting.cases import (
    DropoutLeafTracer, _drop_case, _flops_case, _insert_case, _shape_case, _traced, _width, double
)


def _insert_cases() -> list[Case]:
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
        _insert_case("'relu' followed by a node that does not read it (sigmoid): its only user comes later",
                     SideBranch, ((3, 4),), "relu", torch.tanh, seed=9),
        _insert_case("after 'sin', a node nobody reads: the new node reads it, and nothing reads the new node",
                     UnusedNodesDropNet, ((3, 4),), "sin", torch.tanh, seed=10),
        Case("TinyNet, an unknown node name 'fc9'", lambda: (_traced(TinyNet(), seeded_randn(2, 4)), "fc9", torch.tanh),
             data={"raises": "KeyError", "name": "fc9"}),
        Case("LinearChain 4->8->2, 'layers.0': a target, no node's name (the node is layers_0)",
             lambda: (_traced(LinearChain((4, 8, 2)), seeded_randn(2, 4)), "layers.0", torch.tanh),
             data={"raises": "KeyError", "name": "layers.0"}),
        _insert_case("TwoInputs, tanh after its first input 'x' (the second placeholder 'y' comes after it)",
                     TwoInputs, ((2, 7, 3), (2, 7, 4)), "x", torch.tanh, seed=11),
        _insert_case("tanh after 'relu', which the output reads inside a tuple beside fc2's value", TupleOut,
                     ((3, 4),), "relu", torch.tanh, seed=13),
    ]
    return cases


def _drop_cases() -> list[Case]:
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
        _drop_case("a dropout beside nodes whose values nothing reads (torch.sin(x), a call of 'probe')",
                   UnusedNodesDropNet, ((3, 4),), train=True, seed=9),
        _drop_case("an nn.Dropout before a leaf nn.TransformerEncoderLayer, which owns dropout submodules that no "
                   "node calls (eval mode)", EncoderDropNet, ((3, 2, 8),), train=False, seed=10),
        _drop_case("dropouts whose results nothing reads: an nn.Dropout call, an F.dropout call", DeadDropNet,
                   ((3, 4),), train=True, seed=11),
        _drop_case("an nn.Dropout(p=0.0), a Linear named backdrop_proj, and an nn.Dropout called with input=",
                   DropoutNames, ((3, 4),), train=True, seed=12),
        _drop_case("a model with no dropout at all (random model seed 42)",
                   lambda: random_mlp(42, steps=("linear", "relu_mod", "branch")), _width(3), train=False, seed=7),
    ]


def _shape_cases() -> list[Case]:
    return [
        _shape_case("a model with x.size(0), x.shape, chunk (a node whose value is a tuple of tensors), a "
                    "parameter and a tuple output", ShapeZoo, ((5, 4),), 2),
        _shape_case("two inputs and a 3-D batch", TwoInputs, ((2, 7, 3), (2, 7, 4)), 3),
        _shape_case("a single tensor output from a function call", SingleOut, ((2, 3, 4),), 4),
        _shape_case("a model that reads a buffer (a get_attr node whose value is no nn.Parameter)", BufferNet,
                    ((2, 4),), 7),
        _shape_case("nodes whose values nothing reads (torch.sin(x), a call of 'probe')", UnusedNodesDropNet,
                    ((3, 4),), 8),
        _shape_case("random model seed 51", lambda: random_mlp(51), _width(3), 5),
        _shape_case("random conv model seed 52", lambda: random_convnet(52), ((2, 3, 6, 6),), 6),
        _given_again(_shape_case("TinyNet on a (3, 4) input, given again after a pass put torch.neg after its "
                                 "output in place", TinyNet, ((3, 4),), 53), negate_in_place),
        _shape_case("a submodule named output: its call node is 'output', the output node 'output_1'", OutputNamed,
                    ((3, 4),), 55),
        _stale_meta(_shape_case("TinyNet on a (3, 4) input, its nodes' tensor_meta left by a ShapeProp run on (9, 4)",
                                TinyNet, ((3, 4),), 56)),
    ]


def _stale_meta(case: Case) -> Case:
    """`case`'s gm after ShapeProp ran it on an input of 9 rows: node.meta holds the shapes of that run."""
    def make():
        gm, *inputs = case.make()
        ShapeProp(gm).propagate(torch.zeros(9, *inputs[0].shape[1:]))
        return (gm, *inputs)
    return Case(case.label, make, kwargs=case.kwargs, data=case.data)


def _given_again(case: Case, change) -> Case:
    """`case` (gm and its inputs) handed over again, after `change(gm)` changed gm in place."""
    return given_again(case.label, case.make, lambda gm, *inputs: change(gm), kwargs=case.kwargs, data=case.data)


def _flops_cases() -> list[Case]:
    return [
        _flops_case("TinyNet on a 3-D (2, 3, 4) input", TinyNet, ((2, 3, 4),), 2),
        _flops_case("TinyNet on a 1-D (4,) input", TinyNet, ((4,),), 3),
        _flops_case("one nn.Linear called three times, after an F.linear call", FunctionalLinearNet, ((3, 6),), 5),
        _flops_case("a reshape between the input and the Linear: (2, 12) -> (6, 4)", RowsNet, ((2, 12),), 8),
        _flops_case("a view between the input and the Linear: (2, 12) -> (2, 3, 4)", ReshapeNet, ((2, 12),), 4),
        _flops_case("a leaf nn.TransformerEncoderLayer (its Linears run inside one call_module node) and an "
                    "nn.Linear head", EncoderHeadNet, ((2, 3, 8),), 9),
        _flops_case("NonDynamicallyQuantizableLinear, a subclass of nn.Linear, after an nn.Linear", SubclassLinearNet,
                    ((5, 4),), 10),
        _flops_case("random model seed 61 (shared and chained linears) on a 3-D input",
                    lambda: random_mlp(61, width=6, steps=("shared", "chain", "branch", "linear")),
                    _width(5, 2), 6),
        _flops_case("random model seed 62", lambda: random_mlp(62), _width(4), 7),
        _given_again(_flops_case("TinyNet on a (3, 4) input, given again after a pass added a call of fc1 on its "
                                 "input in place", TinyNet, ((3, 4),), 63), lambda gm: with_unread_call(gm, "fc1")),
        _flops_case("TinyNet on a 4-D (2, 3, 5, 4) input", TinyNet, ((2, 3, 5, 4),), 64),
        _stale_meta(_flops_case("TinyNet on a (3, 4) input, its nodes' tensor_meta left by a ShapeProp run on (9, 4)",
                                TinyNet, ((3, 4),), 66)),
        _given_again(_flops_case("TinyNet on a (3, 4) input, given again after fc1 and fc2 were replaced by wider "
                                 "Linears in place (gm.code unchanged)", TinyNet, ((3, 4),), 67), _widen),
    ]


def _widen(gm) -> None:
    """fc1 4->16 and fc2 16->2 in place of 4->8 and 8->2: the graph and its code stay as they were."""
    gm.fc1, gm.fc2 = torch.nn.Linear(4, 16), torch.nn.Linear(16, 2)
