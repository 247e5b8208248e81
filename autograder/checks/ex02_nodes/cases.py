"""The cases of ex02_nodes: the seeded inputs each graded function is called on, and their references."""
from __future__ import annotations

import torch
import torch.fx as fx
import torch.nn as nn

from fxplayground import Net, ThreeReluNet, TinyNet

from autograder.checks import keyring
from autograder.checks.framework import Case
from autograder.checks.ex02_nodes.models import Bias


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


def _two_users_out_of_order() -> fx.GraphModule:
    """x's two users were created relu, then sigmoid, but sigmoid was inserted before relu."""
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(torch.relu, (x,))
    with g.inserting_before(a):
        b = g.call_function(torch.sigmoid, (x,))
    g.output(g.call_function(torch.add, (a, b)))
    return fx.GraphModule(nn.Module(), g)


def _module_inserted_first() -> fx.GraphModule:
    """Net's trace after a pass inserted a call_module node 'pre' before fc1: graph order is pre, fc1, act, fc2;
    the order the nodes were made in is fc1, act, fc2, pre. Not recompiled (a pass may leave that to its caller)."""
    gm = fx.symbolic_trace(Net())
    gm.add_submodule("pre", nn.Identity())
    x = next(n for n in gm.graph.nodes if n.op == "placeholder")
    first = next(iter(x.users))
    with gm.graph.inserting_before(first):
        pre = gm.graph.call_module("pre", (x,))
    first.replace_input_with(x, pre)
    return gm


def _getattr_twice() -> fx.GraphModule:
    """Two get_attr nodes of one target, w and w_1 (a pass that took a module apart at two call sites makes such)."""
    root = nn.Module()
    root.w = nn.Parameter(torch.ones(3, 3))
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(torch.matmul, (x, g.get_attr("w")))
    b = g.call_function(torch.matmul, (a, g.get_attr("w")))
    g.output(b)
    return fx.GraphModule(root, g)


def _called_with_nothing() -> fx.GraphModule:
    """A call_module node with no argument, 'bias' (a module that returns its parameter), between fc and add: no
    path from the input leads to it, and it is called all the same."""

    root = nn.Module()
    root.fc = nn.Linear(3, 3)
    root.bias = Bias()
    g = fx.Graph()
    x = g.placeholder("x")
    h = g.call_module("fc", (x,))
    g.output(g.call_function(torch.add, (h, g.call_module("bias"))))
    return fx.GraphModule(root, g)


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
    if hidden:
        return keyring.hidden("ex02_nodes")._hist_cases()
    return [Case("TinyNet", _traced(TinyNet)), Case("ThreeReluNet", _traced(ThreeReluNet))]


# ---------------------------------------------------------------------------------- called_modules

def _with_spare() -> tuple[fx.GraphModule]:
    """Net traced, then a submodule registered that no node calls."""
    gm = fx.symbolic_trace(Net())
    gm.add_submodule("spare", nn.Linear(16, 16))
    return (gm,)


def _called_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex02_nodes")._called_cases()
    return [Case("TinyNet", _traced(TinyNet)), Case("Net", _traced(Net))]


# ---------------------------------------------------------------------------------------- consumers

def _cons_case(label, make, name, raises=False):
    data = {"node": name, "raises": "KeyError"} if raises else {"node": name}
    return Case(label, lambda: (*make(), name), data=data)


def _cons_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex02_nodes")._cons_cases()
    return [
        _cons_case("TinyNet, node 'fc1'", _traced(TinyNet), "fc1"),
        _cons_case("ThreeReluNet, node 'x'", _traced(ThreeReluNet), "x"),
        _cons_case("TinyNet, unknown node 'fc3'", _traced(TinyNet), "fc3", raises=True),
    ]


def _depth_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex02_nodes")._depth_cases()
    return [Case("TinyNet", _traced(TinyNet)), Case("Net", _traced(Net))]
