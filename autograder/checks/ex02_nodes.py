"""Checks of ex02_nodes: op_histogram, called_modules, consumers, graph_depth.

These four functions read a graph without changing it, so each check compares plain data (a dict, a list of
names, an int) with a reference computed here from a fresh copy of the case's graph. The hidden cases are
built so that the easy wrong answer passes the visible ones: nested submodules (qualified names such as
"layers.0" differ from node names such as "layers_0"), a module called twice, a node used twice by one user,
users recorded out of graph order, skip connections, get_attr chains, several placeholders, dead code.

The unknown-node case of `consumers` expects a KeyError: it sets `Case.data["raises"]`, so the judge sees the
raised error (type and message) instead of the case failing outright.
"""
from __future__ import annotations

import collections

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from fxplayground import Net, SmallResNet, ThreeReluNet, TinyNet

from autograder.checks.framework import Case, Check, CheckFailed
from autograder.checks.evidence import expect, qualified
from autograder.checks.randmodels import random_mlp

OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")


# --------------------------------------------------------------------------- models the learner has not seen

class SixOps(nn.Module):
    """All six opcodes, a nested Sequential (targets 'enc.0', 'enc.1') and 'enc.0' called a second time."""

    def __init__(self) -> None:
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.scale = nn.Parameter(torch.linspace(0.5, 2.0, 4))
        self.head = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.enc(x)
        h = self.enc[0](h)                      # the same Linear again: a second call_module 'enc.0'
        h = (h * self.scale).tanh()             # get_attr, call_function, call_method
        return self.head(h)


class Stacked(nn.Module):
    """A ModuleList applied in a loop: node names layers_0.. but targets layers.0.."""

    def __init__(self, n: int = 3) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(5, 5) for _ in range(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


class CallOrder(nn.Module):
    """Registered a then b, called b, a, b: graph order is not registration order, and b repeats."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(self.b(x)))


class Inner(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.proj(x)) + x


class Outer(nn.Module):
    """Two levels of nesting and a block used twice: targets 'blocks.1.proj', ... and 'blocks.0.*' again."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([Inner(), Inner()])
        self.out = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks[1](self.blocks[0](x))
        x = self.blocks[0](x)
        return self.out(x)


class NoModules(nn.Module):
    """Functions and methods only: no call_module node at all."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x).sum(dim=-1)


class Square(nn.Module):
    """fc's output is used twice by the same mul (users is a dict: mul once), and once by add."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.out = nn.Linear(3, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        return self.out(h * h + h)


class NestedUses(nn.Module):
    """fc's output is used inside a list (torch.cat) and as a keyword argument (other=)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        both = torch.cat([h, x], dim=-1)
        return both.sum(dim=-1, keepdim=True) + torch.add(x, other=h)


class TwoOutputs(nn.Module):
    """fc's output is returned as well as used by relu: the output node is a user."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.fc(x)
        return torch.relu(h), h


class DeadBranch(nn.Module):
    """An unused chain longer than the live path (symbolic_trace keeps dead code)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        unused = torch.sigmoid(x).neg().exp().relu().tanh()  # noqa: F841
        return self.fc(x)


class ParamChain(nn.Module):
    """A long chain that starts at a parameter (get_attr), a short one from the input."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3))
        self.fc = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.scale.exp().exp().sigmoid().tanh()
        return self.fc(x) * w


class SecondInputDeeper(nn.Module):
    """Two placeholders; the longest path starts at the second one, the shortest too, x's path is between."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 3)
        self.fc2 = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(y))) + x.neg() + y


class ShallowFirst(nn.Module):
    """The first argument of the final add is the short branch; the long one is args[1]."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 3)
        self.fc2 = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x) + self.fc2(F.relu(self.fc1(x)))


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


def _constant_source() -> fx.GraphModule:
    """A call_function with no node inputs (torch.ones) starts a chain longer than the input's path."""
    g = fx.Graph()
    x = g.placeholder("x")
    c = g.call_function(torch.ones, (3,))
    for fn in (torch.exp, torch.sigmoid, torch.tanh, torch.neg):
        c = g.call_function(fn, (c,))
    g.output(g.call_function(torch.add, (x, c)))
    return fx.GraphModule(nn.Module(), g)


def _interleaved() -> fx.GraphModule:
    """Two branches whose nodes alternate in graph order; the short one ends last."""
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(torch.relu, (x,))
    b = g.call_function(torch.neg, (x,))
    a = g.call_function(torch.tanh, (a,))
    a = g.call_function(torch.sigmoid, (a,))
    a = g.call_function(torch.exp, (a,))
    b2 = g.call_function(torch.abs, (b,))
    g.output(g.call_function(torch.add, (b2, a)))
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
    ] + [Case(f"random model seed {s}", _traced(lambda s=s: random_mlp(s))) for s in (21, 22)]


def _hist_evidence(result, args):
    if not isinstance(result, dict):
        raise CheckFailed(f"returned {type(result).__name__}, expected a dict mapping opcode to count",
                          "build a dict such as {'placeholder': 1, 'call_module': 2, ...}; "
                          "a collections.Counter is fine too")
    out = {}
    for key, value in result.items():
        if not isinstance(key, str):
            raise CheckFailed(f"key {key!r} is a {type(key).__name__}, expected an opcode string",
                              "key the dict by node.op, a string such as 'call_module'")
        if isinstance(value, bool) or not isinstance(value, int):
            raise CheckFailed(f"the count of {key!r} is {value!r} ({type(value).__name__}), expected an int",
                              "count with += 1 or collections.Counter")
        out[key] = int(value)
    return out


def _hist_judge(case, got):
    gm, = case.make()
    expected = dict(collections.Counter(n.op for n in gm.graph.nodes))
    if got == expected:
        return
    strangers = sorted(k for k in got if k not in OPS)
    if strangers:
        raise CheckFailed(f"{strangers[0]!r} is not an opcode; the keys must be opcodes such as 'call_module'",
                          "key the dict by node.op, not by node.name or node.target")
    zeros = sorted(k for k, v in got.items() if v == 0 and k not in expected)
    if zeros:
        raise CheckFailed(f"{zeros[0]!r} is listed with count 0 but no node has that opcode here",
                          "list only the opcodes that occur in the graph")
    for op in OPS:
        if op in expected and op not in got:
            hint = ("placeholder and output nodes count too" if op in ("placeholder", "output") else
                    f"every node counts, {op} nodes too: take node.op from each node instead of a fixed list")
            raise CheckFailed(f"opcode {op!r} is missing; the graph has {expected[op]} {op} node(s)", hint)
    for op in OPS:
        if got.get(op) != expected.get(op):
            hint = None
            if op == "call_module":
                n_sub = sum(1 for _ in gm.named_modules()) - 1
                n_child = sum(1 for _ in gm.children())
                hint = ("count call_module nodes in gm.graph.nodes: a module called twice is two nodes, and "
                        "containers such as nn.Sequential are never called"
                        if got.get(op) in (n_sub, n_child) else None)
            raise CheckFailed(f"{op}: counted {got.get(op)}, expected {expected.get(op)}", hint)


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


def _called_evidence(result, args):
    if not isinstance(result, (list, tuple)):
        raise CheckFailed(f"returned {type(result).__name__}, expected a list of qualified module names",
                          "return a list such as ['layers.0', 'layers.1']")
    out = []
    for i, item in enumerate(result):
        if not isinstance(item, str):
            raise CheckFailed(f"item {i} is a {type(item).__name__}, expected a str: the qualified name",
                              "return the call_module node's target (a string such as 'layers.0'), "
                              "not the module object")
        out.append(item)
    return out


def _called_judge(case, got):
    gm, = case.make()
    nodes = [n for n in gm.graph.nodes if n.op == "call_module"]
    expected = [n.target for n in nodes]
    if got == expected:
        return
    submodules = [name for name, _ in gm.named_modules() if name]
    leaves = [name for name, m in gm.named_modules() if name and not list(m.children())]
    children = [name for name, _ in gm.named_children()]
    other_calls = {text for n in gm.graph.nodes if n.op in ("call_function", "call_method")
                   for text in (str(n.target), qualified(n.target), getattr(n.target, "__name__", None))}
    hint = None
    if got == [n.name for n in nodes]:
        hint = ("the qualified name is node.target (such as 'layers.0'); node.name is the node's own "
                "identifier (such as 'layers_0'), which need not match")
    elif got == list(dict.fromkeys(expected)):
        hint = ("a module called twice appears twice: keep repeats (one entry per call_module node, "
                "where a list of gm's submodules has one entry per module)")
    elif got in (submodules, leaves, children):
        hint = ("list the graph's call_module nodes, not the submodules of gm: a module can be called twice, "
                "or not at all")
    elif sorted(got) == sorted(expected):
        hint = "keep graph order: walk gm.graph.nodes and do not sort"
    elif got == [t.rsplit(".", 1)[-1] for t in expected]:
        hint = "return the full qualified name ('blocks.0.proj'), not its last part"
    elif any(g in other_calls for g in got):
        hint = "only call_module nodes: functions and methods are not module calls"
    raise CheckFailed(f"call_module targets: got {got}, expected {expected}", hint)


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


def _cons_evidence(result, args):
    if not isinstance(result, (list, tuple)):
        raise CheckFailed(f"returned {type(result).__name__}, expected a list of node names",
                          "return the value instead of printing it" if result is None else
                          "return a list of names such as ['relu', 'add']")
    out = []
    for i, item in enumerate(result):
        if not isinstance(item, str):
            raise CheckFailed(f"item {i} is a {type(item).__name__}, expected a str",
                              "return the users' names (user.name), not the Node objects")
        out.append(item)
    return out


def _cons_judge(case, got):
    gm, name = case.make()
    target = case.data["node"]
    if "raises" in case.data:
        wanted = "raise KeyError(node_name) (or KeyError with a message naming it) when no node has that name"
        if isinstance(got, dict) and "__raised__" in got:
            kinds = got.get("bases") or [got["__raised__"]]   # "bases": the error's classes, when recorded
            expect("KeyError" in kinds,
                   f"raised {got['__raised__']} for the unknown node name {target!r}, expected KeyError", wanted)
            expect(target in got.get("message", ""),
                   f"the KeyError does not name the node: its message is {got.get('message')!r}",
                   f"name the node in the message, for example raise KeyError(f\"no node named {{node_name!r}}\")")
            return
        by_target = [n for n in gm.graph.nodes if str(n.target) == target]
        hint = (f"look nodes up by node.name: {target!r} is the target of {by_target[0].name!r}, not a node name"
                if by_target else wanted)
        raise CheckFailed(f"returned {got!r} for the unknown node name {target!r}, expected a KeyError", hint)
    node = next(n for n in gm.graph.nodes if n.name == target)
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    expected = [u.name for u in sorted(node.users, key=order.__getitem__)]
    if got == expected:
        return
    hint = None
    if len(got) > len(set(got)):
        hint = ("list each consumer once, even when it uses the node in two arguments (h * h): "
                "node.users is a dict with one key per user")
    elif got == [u.name for u in node.users]:
        hint = ("return them in graph order: node.users keeps the order in which the uses were created, "
                "which after inserting nodes is not the order of gm.graph.nodes")
    elif sorted(got) == sorted(expected):
        hint = "return them in graph order (the order of gm.graph.nodes)"
    elif set(got) < set(expected) and "output" in expected and "output" not in got:
        hint = "the output node is a user too: it reads the node it returns"
    elif set(got) < set(expected):
        hint = ("uses inside lists (torch.cat([h, x])) and keyword arguments (other=h) count too: "
                "read node.users (or node.all_input_nodes of each candidate), not only node.args")
    elif got and set(got) == {a.name for a in node.all_input_nodes}:
        hint = "consumers are the nodes that read this node (node.users), not the nodes it reads"
    raise CheckFailed(f"consumers of {target!r}: got {got}, expected {expected}", hint)


# -------------------------------------------------------------------------------------- graph_depth

def _longest(gm: fx.GraphModule, starts=None, end_at_output=True, any_source=False) -> int | None:
    """Edges on the longest path from a start to the output (or to any node); None when none reaches it."""
    dist: dict[fx.Node, int] = {}
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    starts = placeholders if starts is None else starts
    for n in gm.graph.nodes:
        if n in starts or (any_source and not n.all_input_nodes):
            dist[n] = 0
        reach = [dist[a] + 1 for a in n.all_input_nodes if a in dist]
        if reach:
            dist[n] = max(reach + [dist.get(n, 0)])
    if end_at_output:
        out = next(n for n in gm.graph.nodes if n.op == "output")
        return dist.get(out)
    return max(dist.values(), default=None)


def _shortest(gm: fx.GraphModule) -> int | None:
    dist: dict[fx.Node, int] = {}
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            dist[n] = 0
        reach = [dist[a] + 1 for a in n.all_input_nodes if a in dist]
        if reach:
            dist[n] = min(reach)
    return dist.get(next(n for n in gm.graph.nodes if n.op == "output"))


def _first_arg_walk(gm: fx.GraphModule) -> int:
    node, steps = next(n for n in gm.graph.nodes if n.op == "output"), 0
    while node.all_input_nodes and steps < 10_000:
        first = node.args[0] if node.args else None
        while isinstance(first, (list, tuple)) and first:
            first = first[0]
        node = first if isinstance(first, fx.Node) else node.all_input_nodes[0]
        steps += 1
    return steps


def _depth_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [Case("TinyNet", _traced(TinyNet)), Case("Net", _traced(Net))]
    return [
        Case("a skip connection (ThreeReluNet, unseen)", _traced(ThreeReluNet)),
        Case("the short branch is args[0] of the last add (unseen)", _traced(ShallowFirst)),
        Case("a long chain starting at a parameter (get_attr) (unseen)", _traced(ParamChain)),
        Case("a long chain starting at torch.ones, no input (hand-made graph)", _graph_only(_constant_source)),
        Case("two inputs, the second one deeper (unseen)", _traced(SecondInputDeeper)),
        Case("an unused chain longer than the live path (unseen)", _traced(DeadBranch)),
        Case("two branches interleaved in graph order (hand-made graph)", _graph_only(_interleaved)),
        Case("SmallResNet with two residual blocks (unseen)", _traced(lambda: SmallResNet(channels=4, blocks=2))),
    ] + [Case(f"random model seed {s}", _traced(lambda s=s: random_mlp(s))) for s in (25, 26)]


def _depth_evidence(result, args):
    if isinstance(result, bool) or not isinstance(result, int):
        raise CheckFailed(f"returned {type(result).__name__} {result!r}, expected an int",
                          "return the number of edges as an int")
    return result


def _depth_judge(case, got):
    gm, = case.make()
    expected = _longest(gm)
    if got == expected:
        return
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    wrong = [
        (_first_arg_walk(gm), "follow every input of a node (node.all_input_nodes), not only args[0]"),
        (_shortest(gm), "take the longest path, not the shortest: a skip connection is a shortcut, "
                        "the depth goes the long way round"),
        (_longest(gm, any_source=True), "paths start at placeholders only: get_attr nodes and calls without "
                                        "node inputs (torch.ones(3)) are not starts"),
        (_longest(gm, starts=placeholders[:1]), "every placeholder is a start, not only the first one"),
        (_longest(gm, end_at_output=False), "the path must end at the output node: nodes that never reach it "
                                            "(dead code) do not count"),
        (len(gm.graph.nodes) - 1, "the number of nodes is not the depth: branches run side by side, "
                                  "take the longest path through node.all_input_nodes"),
        (expected + 1, "count edges, not nodes: x -> fc -> output has depth 2"),
        (expected - 1, "the edge into the output node counts too"),
    ]
    hint = next((h for value, h in wrong if value is not None and value != expected and got == value), None)
    expect(False, f"depth {got}, expected {expected} (edges on the longest path from a placeholder "
                  f"to the output node)", hint)


CHECKS = {
    "op_histogram": Check("op_histogram", _hist_cases, _hist_evidence, _hist_judge, unchanged="always"),
    "called_modules": Check("called_modules", _called_cases, _called_evidence, _called_judge, unchanged="always"),
    "consumers": Check("consumers", _cons_cases, _cons_evidence, _cons_judge, unchanged="always"),
    "graph_depth": Check("graph_depth", _depth_cases, _depth_evidence, _depth_judge, unchanged="always"),
}
