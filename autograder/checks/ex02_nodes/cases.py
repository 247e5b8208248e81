"""The cases of ex02_nodes: the seeded inputs each graded function is called on, and their references."""
from __future__ import annotations

import torch
import torch.fx as fx
import torch.nn as nn

from fxplayground import Net, SmallResNet, ThreeReluNet, TinyNet

from autograder.checks.framework import Case
from autograder.checks.randmodels import random_mlp
from autograder.checks.ex02_nodes.models import (
    CallOrder, DeadBranch, NestedUses, NoModules, Outer, ParamChain, SecondInputDeeper, ShallowFirst, SixOps,
    Square, Stacked, TwoOutputs,
)


# --------------------------------------------------------------------------------- hand-made graphs

def _users_out_of_order() -> fx.GraphModule:
    """x's users were created relu, sigmoid, neg, but neg was inserted first: users order != graph order."""
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(torch.relu, (x,))
    b = g.call_function(torch.sigmoid, (x,))
    with g.inserting_before(a):
        c = g.call_function(torch.neg, (x,))
    s = g.call_function(torch.cat, ([a, b, c],), {"dim": -1})
    g.output(s)
    return fx.GraphModule(nn.Module(), g)


def _chain(g: fx.Graph, node: fx.Node, fns) -> fx.Node:
    """node, then each of fns applied to the last result: a chain of len(fns) edges."""
    for fn in fns:
        node = g.call_function(fn, (node,))
    return node


def _constant_source() -> fx.GraphModule:
    """A call_function with no node inputs (torch.ones) starts a chain longer than the input's path."""
    g = fx.Graph()
    x = g.placeholder("x")
    c = _chain(g, g.call_function(torch.ones, (3,)), (torch.exp, torch.sigmoid, torch.tanh, torch.neg))
    g.output(g.call_function(torch.add, (x, c)))
    return fx.GraphModule(nn.Module(), g)


def _interleaved() -> fx.GraphModule:
    """Two branches whose nodes alternate in graph order; the short one ends last."""
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(torch.relu, (x,))
    b = g.call_function(torch.neg, (x,))
    a = _chain(g, a, (torch.tanh, torch.sigmoid, torch.exp))
    b2 = g.call_function(torch.abs, (b,))
    g.output(g.call_function(torch.add, (b2, a)))
    return fx.GraphModule(nn.Module(), g)


def _args0_neither() -> fx.GraphModule:
    """args[0] of the joining add is a middle branch: walking args[0] is neither the longest nor the shortest way."""
    g = fx.Graph()
    x = g.placeholder("x")
    a = _chain(g, x, (torch.relu, torch.tanh, torch.sigmoid))
    b = _chain(g, x, (torch.neg, torch.exp, torch.abs, torch.sin, torch.cos))
    joined = g.call_function(torch.add, (a, b))
    g.output(g.call_function(torch.add, (joined, g.call_function(torch.square, (x,)))))
    return fx.GraphModule(nn.Module(), g)


def _long_keyword_branch() -> fx.GraphModule:
    """The longest branch reaches the last add as a keyword argument (other=...); its positional input is short."""
    g = fx.Graph()
    x = g.placeholder("x")
    m = g.call_function(torch.add, (x, _chain(g, x, (torch.relu, torch.tanh, torch.sigmoid))))
    b = _chain(g, x, (torch.neg, torch.exp, torch.abs, torch.sin, torch.cos, torch.atan, torch.erf))
    g.output(g.call_function(torch.add, (m,), {"other": b}))
    return fx.GraphModule(nn.Module(), g)


def _renamed_modules() -> fx.GraphModule:
    """call_module nodes whose names have nothing to do with their targets."""
    root = nn.Module()
    root.encoder = nn.Module()
    root.encoder.fc = nn.Linear(3, 3)
    root.decoder = nn.Linear(3, 3)
    g = fx.Graph()
    x = g.placeholder("x")
    h = g.create_node("call_module", "encoder.fc", (x,), name="first")
    h = g.create_node("call_module", "decoder", (h,), name="second")
    h = g.create_node("call_module", "encoder.fc", (h,), name="third")
    g.output(h)
    return fx.GraphModule(root, g)


def _traced(make):
    return lambda: (fx.symbolic_trace(make()),)


def _graph_only(build):
    return lambda: (build(),)


# ------------------------------------------------------------------------------------ op_histogram

def _hist_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [Case("TinyNet", _traced(TinyNet)), Case("ThreeReluNet", _traced(ThreeReluNet))]
    return [
        Case("a model with all six opcodes and enc.0 called twice (unseen)", _traced(SixOps)),
        Case("a model with a parameter chain (get_attr) (unseen)", _traced(ParamChain)),
        Case("a block list used twice (unseen)", _traced(Outer)),
        Case("a model with two inputs (unseen)", _traced(SecondInputDeeper)),
        Case("a model without submodules (unseen)", _traced(NoModules)),
        Case("an unused chain: dead nodes count too (unseen)", _traced(DeadBranch)),
    ] + [Case(f"random model seed {s}", _traced(lambda s=s: random_mlp(s))) for s in (21, 22)]


# ---------------------------------------------------------------------------------- called_modules

def _with_spare() -> tuple[fx.GraphModule]:
    """Net traced, then a submodule registered that no node calls."""
    gm = fx.symbolic_trace(Net())
    gm.add_submodule("spare", nn.Linear(16, 16))
    return (gm,)


def _called_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [Case("TinyNet", _traced(TinyNet)), Case("Net", _traced(Net))]
    return [
        Case("a ModuleList applied in a loop (unseen)", _traced(Stacked)),
        Case("a registered submodule that the graph never calls (unseen)", _with_spare),
        Case("modules registered a, b but called b, a, b (unseen)", _traced(CallOrder)),
        Case("a model with all six opcodes and enc.0 called twice (unseen)", _traced(SixOps)),
        Case("blocks nested two levels deep, one used twice (unseen)", _traced(Outer)),
        Case("call_module nodes named unlike their targets (unseen)", _graph_only(_renamed_modules)),
        Case("SmallResNet (unseen)", _traced(lambda: SmallResNet(channels=4, blocks=2))),
        Case("a model without submodules (unseen)", _traced(NoModules)),
        Case("random model with a shared layer, seed 23",
             _traced(lambda: random_mlp(23, steps=("shared", "relu_mod", "chain", "residual")))),
    ]


# ---------------------------------------------------------------------------------------- consumers

def _cons_case(label, make, name, raises=False):
    data = {"node": name, "raises": "KeyError"} if raises else {"node": name}
    return Case(label, lambda: (*make(), name), data=data)


def _cons_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [
            _cons_case("TinyNet, node 'fc1'", _traced(TinyNet), "fc1"),
            _cons_case("ThreeReluNet, node 'x'", _traced(ThreeReluNet), "x"),
            _cons_case("TinyNet, unknown node 'fc3'", _traced(TinyNet), "fc3", raises=True),
        ]
    return [
        _cons_case("a node used twice by one mul, node 'fc' (unseen)", _traced(Square), "fc"),
        _cons_case("a node used inside a list and as a keyword, node 'fc' (unseen)", _traced(NestedUses), "fc"),
        _cons_case("a node that is also returned, node 'fc' (unseen)", _traced(TwoOutputs), "fc"),
        _cons_case("users created out of graph order, node 'x' (hand-made graph)",
                   _graph_only(_users_out_of_order), "x"),
        _cons_case("'enc.0' is a target, not a node name (unseen)", _traced(SixOps), "enc.0", raises=True),
        _cons_case("a node named 'enc_0' whose target is 'enc.0' (unseen)", _traced(SixOps), "enc_0"),
        _cons_case("a get_attr node, node 'scale' (unseen)", _traced(SixOps), "scale"),
        _cons_case("a dead node, node 'tanh' (unseen)", _traced(DeadBranch), "tanh"),
        _cons_case("the output node itself (unseen)", _traced(DeadBranch), "output"),
        _cons_case("ThreeReluNet, unknown node 'relu_7'", _traced(ThreeReluNet), "relu_7", raises=True),
        _cons_case("random model, node 'x'",
                   _traced(lambda: random_mlp(24, steps=("residual", "branch", "shared"))), "x"),
    ]


def _depth_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [Case("TinyNet", _traced(TinyNet)), Case("Net", _traced(Net))]
    return [
        Case("a skip connection (ThreeReluNet, unseen)", _traced(ThreeReluNet)),
        Case("args[0] leads neither the longest nor the shortest way (hand-made graph)",
             _graph_only(_args0_neither)),
        Case("the short branch is args[0] of the last add (unseen)", _traced(ShallowFirst)),
        Case("the longest branch is a keyword argument (other=) of the last add (hand-made graph)",
             _graph_only(_long_keyword_branch)),
        Case("a long chain starting at a parameter (get_attr) (unseen)", _traced(ParamChain)),
        Case("a long chain starting at torch.ones, no input (hand-made graph)", _graph_only(_constant_source)),
        Case("two inputs, the second one deeper (unseen)", _traced(SecondInputDeeper)),
        Case("an unused chain longer than the live path (unseen)", _traced(DeadBranch)),
        Case("two branches interleaved in graph order (hand-made graph)", _graph_only(_interleaved)),
        Case("SmallResNet with two residual blocks (unseen)", _traced(lambda: SmallResNet(channels=4, blocks=2))),
    ] + [Case(f"random model seed {s}", _traced(lambda s=s: random_mlp(s))) for s in (25, 26)]
