"""Checks of ex01_tracing: node_summary, count_nodes, outputs_match."""
from __future__ import annotations

import copy

import torch
import torch.fx as fx
import torch.nn as nn

from fxplayground import Net, ThreeReluNet, TinyNet

from autograder.checks.framework import Case, Check, CheckFailed
from autograder.checks.evidence import expect, expect_equal, expect_type
from autograder.checks.randmodels import random_mlp, seeded_randn


class ScaledSkip(nn.Module):
    """Uses a parameter directly (get_attr), a method call and two inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.tensor([0.5, 2.0, -1.0]))
        self.fc = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.fc(x).mul(self.scale) + y.sum(dim=-1, keepdim=True)


class DeadBranch(nn.Module):
    """Computes a tanh nobody uses: tracing keeps the dead node, and it is a node like any other."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        unused = torch.tanh(x)  # noqa: F841 (the dead node is the point)
        return self.fc(x)


class GradModeNet(nn.Module):
    """Its output depends on whether autograd is on, so a check can see if no_grad was used."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * (2.0 if torch.is_grad_enabled() else 1.0)


def _traced(make):
    return lambda: (fx.symbolic_trace(make()),)


def _graph_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [Case("TinyNet", _traced(TinyNet)), Case("Net", _traced(Net))]
    return [Case("ThreeReluNet (unseen)", _traced(ThreeReluNet)),
            Case("ScaledSkip with get_attr and two inputs (unseen)", _traced(ScaledSkip)),
            Case("DeadBranch: a node nobody uses (unseen)", _traced(DeadBranch))] + [
        Case(f"random model seed {s}", _traced(lambda s=s: random_mlp(s))) for s in (11, 12)]


# ----------------------------------------------------------------------------------- node_summary

def _summary_evidence(result, args):
    expect_type(result, (list, tuple), "node_summary", "a list of (op, name) tuples")
    rows = []
    for i, row in enumerate(result):
        if not (isinstance(row, (tuple, list)) and len(row) == 2 and all(isinstance(v, str) for v in row)):
            raise CheckFailed(f"item {i} is {row!r}, expected a tuple of two strings (op, name)",
                              "node.op and node.name are strings; build (node.op, node.name) for each node")
        rows.append((str(row[0]), str(row[1])))
    return {"rows": rows, "tuples": all(type(r) is tuple for r in result)}


def _summary_judge(case, ev):
    gm, = case.make()
    expected = [(n.op, n.name) for n in gm.graph.nodes]
    got = [tuple(r) for r in ev["rows"]]
    if got and got[0] == (expected[0][1], expected[0][0]):
        raise CheckFailed("the pairs are (name, op), expected (op, name)", "put node.op first, then node.name")
    if sorted(got) == sorted(expected) and got != expected:
        raise CheckFailed("the right nodes in the wrong order", "walk gm.graph.nodes: it is already in graph order")
    hint = None
    if len(got) == len(expected) - 2:
        hint = "placeholder and output nodes count too"
    elif got and {op for op, _ in got} <= {"call_module"}:
        hint = "every node counts, not only call_module nodes"
    expect_equal(got, expected, "(op, name) pairs", hint)
    expect(ev["tuples"], "items must be tuples, not lists", "return (node.op, node.name) with parentheses")


# ------------------------------------------------------------------------------------ count_nodes

def _count_cases(hidden: bool) -> list[Case]:
    out = []
    for base in _graph_cases(hidden):
        out.append(Case(f"{base.label}, op=None", base.make, data={"op": None}))
        for op in (("call_module", "output") if not hidden else ("placeholder", "get_attr", "call_method",
                                                                   "call_function")):
            out.append(Case(f"{base.label}, op={op!r}", lambda m=base.make, op=op: (*m(), op), data={"op": op}))
    if hidden:
        out.append(Case("TinyNet, op passed by keyword", _traced(TinyNet), kwargs=lambda: {"op": "call_module"},
                        data={"op": "call_module"}))
        for op in ("", "call_modle"):   # ops no node has: an empty string is not None, a typo matches nothing
            out.append(Case(f"TinyNet, op={op!r} (no node has it)", lambda op=op: (fx.symbolic_trace(TinyNet()), op),
                            data={"op": op}))
    return out


def _count_evidence(result, args):
    if isinstance(result, bool) or not isinstance(result, int):
        raise CheckFailed(f"returned {type(result).__name__} {result!r}, expected an int",
                          "return len(...) or a sum, an int")
    return result


def _count_judge(case, got):
    gm = case.make()[0]
    op = case.data["op"]
    expected = sum(1 for n in gm.graph.nodes if op is None or n.op == op)
    hint = None
    if op is None and got == expected - 2:
        hint = "placeholder and output are nodes too"
    elif op == "" and got == len(gm.graph.nodes):
        hint = "only op=None means every node: test `op is None`, not `not op` (an empty string is an op no node has)"
    elif op is not None and got == len(gm.graph.nodes):
        hint = "when op is given, count only nodes whose node.op equals it"
    elif op is None and got == 0:
        hint = "op=None means: count every node"
    expect(got == expected, f"counted {got} nodes, expected {expected}", hint)


# ---------------------------------------------------------------------------------- outputs_match

def _perturbed(gm: fx.GraphModule, delta: float) -> fx.GraphModule:
    with torch.no_grad():
        gm.fc2.bias[0] += delta
    return gm


def _match_case(label, make, expected, atol=None):
    kwargs = (lambda: {"atol": atol}) if atol is not None else dict
    return Case(label, make, kwargs=kwargs, data={"expected": expected})


def _match_cases(hidden: bool) -> list[Case]:
    def tiny_pair(delta=0.0, seed=0, scale=1.0):
        torch.manual_seed(seed)
        model = TinyNet()
        if scale != 1.0:
            with torch.no_grad():
                model.fc2.weight.mul_(scale)
                model.fc2.bias.fill_(scale)
        gm = fx.symbolic_trace(copy.deepcopy(model) if delta else model)
        if delta:
            _perturbed(gm, delta)
        return model, gm, seeded_randn(5, 4, seed=seed)

    if not hidden:
        return [_match_case("TinyNet and its trace", lambda: tiny_pair(), True),
                _match_case("TinyNet and a trace with a changed bias", lambda: tiny_pair(0.5), False)]

    def two_inputs():
        torch.manual_seed(3)
        m = ScaledSkip()
        return m, fx.symbolic_trace(m), seeded_randn(4, 3, seed=1), seeded_randn(4, 3, seed=2)

    def broadcast_trap():
        torch.manual_seed(4)
        m = TinyNet()
        gm = fx.symbolic_trace(m)
        g = fx.Graph()  # the same computation, but the output is averaged over the batch of one
        x = g.placeholder("x")
        out = g.call_module("fc2", (g.call_function(torch.relu, (g.call_module("fc1", (x,)),)),))
        g.output(g.call_method("mean", (out, 0)))
        return m, fx.GraphModule(gm, g), seeded_randn(1, 4, seed=4)

    def grad_mode():
        m = GradModeNet()
        return m, fx.symbolic_trace(m), seeded_randn(3, 2, seed=5)

    return [
        _match_case("TinyNet off by 1e-7, atol=0 (exact)", lambda: tiny_pair(1e-7, seed=1), False),
        _match_case("TinyNet off by 1e-7, atol=1e-3", lambda: tiny_pair(1e-7, seed=1), True, atol=1e-3),
        _match_case("TinyNet off by 0.1, atol=1e-3", lambda: tiny_pair(0.1, seed=2), False, atol=1e-3),
        _match_case("TinyNet with outputs near 1e4, off by 0.05, atol=1e-3 (no relative tolerance)",
                    lambda: tiny_pair(0.05, seed=6, scale=1e4), False, atol=1e-3),
        _match_case("a model with two inputs and its trace", two_inputs, True),
        _match_case("outputs of shapes (1, 2) and (2,) that broadcast", broadcast_trap, False),
        _match_case("a model whose output shows whether no_grad was on", grad_mode, False),
        _match_case("outputs of shapes (1, 2) and (2,) that broadcast, atol=1e-3", broadcast_trap, False, atol=1e-3),
        _match_case("TinyNet off by 0.5, atol=1.0", lambda: tiny_pair(0.5, seed=7), True, atol=1.0),
    ]


def _match_evidence(result, args):
    if isinstance(result, torch.Tensor):
        raise CheckFailed("returned a tensor, expected a Python bool",
                          "torch.equal returns a bool; for a tensor of booleans use .all().item()")
    if not isinstance(result, bool):
        raise CheckFailed(f"returned {type(result).__name__}, expected a Python bool")
    return result


def _match_judge(case, got):
    expected = case.data["expected"]
    hints = {
        "TinyNet off by 1e-7, atol=0 (exact)": "with atol == 0 the outputs must be exactly equal: use torch.equal",
        "outputs of shapes (1, 2) and (2,) that broadcast":
            "outputs of different shapes do not match, even when they broadcast: compare shapes too",
        "outputs of shapes (1, 2) and (2,) that broadcast, atol=1e-3":
            "outputs of different shapes do not match, even when they broadcast: compare shapes first, also "
            "when atol > 0 (torch.allclose broadcasts)",
        "TinyNet off by 0.5, atol=1.0": "any atol other than 0 is a tolerance, 1.0 included: torch.allclose(a, b, "
                                        "rtol=0, atol=atol)",
        "a model whose output shows whether no_grad was on": "run both modules inside `with torch.no_grad():`",
        "TinyNet off by 1e-7, atol=1e-3": "with atol > 0, compare with torch.allclose(a, b, rtol=0, atol=atol)",
        "TinyNet with outputs near 1e4, off by 0.05, atol=1e-3 (no relative tolerance)":
            "the tolerance is atol alone: torch.allclose(a, b, rtol=0, atol=atol) (its default rtol=1e-5 adds "
            "1e-5 * |b|, which is 0.1 for outputs near 1e4)",
    }
    expect(got == expected, f"returned {got}, expected {expected}", hints.get(case.label))


CHECKS = {
    "node_summary": Check("node_summary", _graph_cases, _summary_evidence, _summary_judge, unchanged="always"),
    "count_nodes": Check("count_nodes", _count_cases, _count_evidence, _count_judge, unchanged="always"),
    "outputs_match": Check("outputs_match", _match_cases, _match_evidence, _match_judge, unchanged="always"),
}
