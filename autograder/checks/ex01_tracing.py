"""Checks of ex01_tracing: node_summary, count_nodes, outputs_match."""
from __future__ import annotations

import copy
import sys

import torch
import torch.fx as fx
import torch.nn as nn

from fxplayground import Net, ThreeReluNet, TinyNet

from autograder.checks.framework import Case, Check, CheckFailed
from autograder.checks.evidence import expect, expect_equal, expect_type, names_left, removed_nodes_hint, sole_hint
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


class OpcodeNames(nn.Module):
    """Its nodes are named like opcodes: a placeholder named call_module, a call_module node named placeholder
    (the submodule's name), so only node.op, never node.name, tells a node's opcode."""

    def __init__(self) -> None:
        super().__init__()
        self.placeholder = nn.Linear(3, 3)

    def forward(self, call_module: torch.Tensor) -> torch.Tensor:
        return self.placeholder(call_module)


class TwiceAndSpare(nn.Module):
    """fc is called twice and spare never: two call_module nodes for fc, none for spare."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.spare = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.relu(self.fc(x)))


def _traced(make):
    return lambda: (fx.symbolic_trace(make()),)


def _graph_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [Case("TinyNet", _traced(TinyNet)), Case("Net", _traced(Net))]
    return [Case("ThreeReluNet (unseen)", _traced(ThreeReluNet)),
            Case("ScaledSkip with get_attr and two inputs (unseen)", _traced(ScaledSkip)),
            Case("DeadBranch: a node nobody uses (unseen)", _traced(DeadBranch)),
            Case("OpcodeNames: nodes named like opcodes (unseen)", _traced(OpcodeNames))] + [
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
    return {"rows": rows, "tuples": all(type(r) is tuple for r in result), "left": names_left(args)}


OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")


def _summary_judge(case, ev):
    gm, = case.make()
    expected = [(n.op, n.name) for n in gm.graph.nodes]
    got = [tuple(r) for r in ev["rows"]]
    swapped = [(name, op) for op, name in got]
    if got != expected and got and set(swapped) <= set(expected) and all(second in OPS for _, second in got):
        raise CheckFailed("the pairs are (name, op), expected (op, name)", "put node.op first, then node.name")
    if sorted(got) == sorted(expected) and got != expected:
        raise CheckFailed("the right nodes in the wrong order", "walk gm.graph.nodes: it is already in graph order")
    missing = [row for row in expected if row not in got]
    hint = None
    unused = {n.name for n in gm.graph.nodes if not n.users and n.op != "output"}
    targets = [(n.op, str(n.target)) for n in gm.graph.nodes]
    if missing and [row for row in expected if row in got] == got:   # a part of the nodes, nothing else
        ops = list(dict.fromkeys(op for op, _ in missing))
        hint = removed_nodes_hint(gm, ev.get("left", []))
        if hint is None and {name for _, name in missing} <= unused:
            hint = (f"a node nobody uses is a node too: list {', '.join(name for _, name in missing[:3])} "
                    "(dead nodes are nodes of gm.graph like any other)")
        elif hint is None:
            hint = ("placeholder and output nodes count too" if set(ops) <= {"placeholder", "output"} else
                    f"every node counts, {' and '.join(ops)} nodes too")
    elif got == targets:
        hint = "the second item is node.name, not node.target (a target is a module path or a function)"
    where = f" (missing {', '.join(name for _, name in missing[:4])})" if missing and len(got) < len(expected) else ""
    expect_equal(got, expected, "(op, name) pairs" + where, hint)
    expect(ev["tuples"], "items must be tuples, not lists", "return (node.op, node.name) with parentheses")


# ------------------------------------------------------------------------------------ count_nodes

_LISTINGS = ("modules", "named_modules", "children", "named_children")


class _Op(str):
    """The op a case passes: a str that records being compared (==) or tested for truth (`not op`)."""

    __hash__ = str.__hash__

    def _seen(self, what: str) -> None:
        log = self.__dict__.setdefault("log", [])
        if what not in log:
            log.append(what)

    def __eq__(self, other):
        self._seen("==")
        return str.__eq__(self, other)

    def __ne__(self, other):
        self._seen("==")
        return str.__ne__(self, other)

    def __bool__(self):
        self._seen("truth")
        return len(self) > 0


def _spied(make):
    """gm with its module listings (gm.modules() and the like) recording that they were asked for, so the hint
    about counting modules fires only for an answer that listed them."""
    def spied():
        gm, *rest = make()
        asked: list = []
        for name in _LISTINGS:
            def spy(*a, _listing=getattr(gm, name), _name=name, **k):
                caller = sys._getframe(1).f_globals.get("__name__", "")
                if len(asked) < 20 and not caller.startswith(("autograder.", "torch.")):   # the grader's own
                    asked.append(_name)                                                 # snapshots do not count
                return _listing(*a, **k)
            object.__setattr__(gm, name, spy)
        gm.__dict__["_fxcourse_asked"] = asked
        return (gm, *rest)
    return spied


def _count_cases(hidden: bool) -> list[Case]:
    def watched_op(make):
        return lambda: tuple(_Op(a) if type(a) is str else a for a in make())

    def watched_kwargs(kwargs):
        return lambda: {k: _Op(v) if type(v) is str else v for k, v in kwargs().items()}
    return [Case(c.label, _spied(watched_op(c.make)), watched_kwargs(c.kwargs), c.data)
            for c in _plain_count_cases(hidden)]


def _plain_count_cases(hidden: bool) -> list[Case]:
    out = []
    for base in _graph_cases(hidden):
        out.append(Case(f"{base.label}, op=None", base.make, data={"op": None}))
        for op in (("call_module", "output") if not hidden else ("placeholder", "get_attr", "call_method",
                                                                   "call_function")):
            out.append(Case(f"{base.label}, op={op!r}", lambda m=base.make, op=op: (*m(), op), data={"op": op}))
    if hidden:
        out.append(Case("TinyNet, op passed by keyword", _traced(TinyNet), kwargs=lambda: {"op": "call_module"},
                        data={"op": "call_module"}))
        out.append(Case("a module called twice and one never called, op='call_module' (unseen)",
                        lambda: (fx.symbolic_trace(TwiceAndSpare()), "call_module"), data={"op": "call_module"}))
        for op in ("", "call_modle"):   # ops no node has: an empty string is not None, a typo matches nothing
            out.append(Case(f"TinyNet, op={op!r} (no node has it)", lambda op=op: (fx.symbolic_trace(TinyNet()), op),
                            data={"op": op}))
    return out


def _count_evidence(result, args):
    if isinstance(result, bool) or not isinstance(result, int):
        raise CheckFailed(f"returned {type(result).__name__} {result!r}, expected an int",
                          "return len(...) or a sum, an int")
    op = next((a for a in args[1:] if isinstance(a, _Op)), None)
    return {"count": result, "asked": list(args[0].__dict__.get("_fxcourse_asked", [])),
            "op_used": list(op.__dict__.get("log", [])) if op is not None else None, "left": names_left(args)}


def _count_judge(case, ev):
    got = ev["count"]
    gm = case.make()[0]
    op = case.data["op"]
    expected = sum(1 for n in gm.graph.nodes if op is None or n.op == op)
    nodes = list(gm.graph.nodes)
    # what the known mistakes count on this case, each with its hint; a hint fires when it alone predicts `got`
    mistakes = []
    if op is None:
        mistakes += [(sum(1 for n in nodes if n.op not in ("placeholder", "output")),
                      "placeholder and output are nodes too"),
                     (0, "op=None means: count every node")]
    elif op == "" and "truth" in (ev.get("op_used") or ()):   # it tested `not op` (or `if op`)
        mistakes += [(len(nodes), "only op=None means every node: test `op is None`, not `not op` (an empty string "
                                  "is an op no node has)")]
    elif "==" not in (ev.get("op_used") or ()) and ev.get("op_used") is not None:   # it never compared op
        mistakes += [(len(nodes), "when op is given, count only nodes whose node.op equals it")]
    if op and any(n.name == op and n.op != op for n in nodes):
        mistakes += [(sum(1 for n in nodes if n.op == op or n.name == op),
                      f"a node's name is not its opcode: the node named {op!r} is a "
                      f"{next(n.op for n in nodes if n.name == op)} node; count only nodes whose node.op equals op")]
    left = ev.get("left") or []
    removed = removed_nodes_hint(gm, left)
    if removed is not None:
        mistakes += [(sum(1 for n in nodes if n.name in left and (op is None or n.op == op)), removed)]
    which = "every node" if op is None else f"nodes with op={op!r}"
    if got != expected and ev["asked"]:   # it listed gm's modules: what it counted is not the nodes
        raise CheckFailed(f"counted {got} nodes, expected {expected} ({which})",
                          f"count the nodes of gm.graph, not the modules of gm (your answer called gm.{ev['asked'][0]}())")
    expect(got == expected, f"counted {got} nodes, expected {expected} ({which})",
           sole_hint(got, expected, mistakes))


# ---------------------------------------------------------------------------------- outputs_match

class _Watched(torch.Tensor):
    """An output handed to the learner's comparison: records which comparison functions are called on it, so a
    hint about torch.equal or allclose's rtol fires only when the answer called them."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name in ("equal", "allclose", "isclose"):
            log = next((a.__dict__.get("_fxcourse_log") for a in args if isinstance(a, _Watched)
                        and a.__dict__.get("_fxcourse_log") is not None), None)
            if log is not None and len(log) < 100:
                entry = {"fn": name}
                if name != "equal":
                    for key, at, default in (("rtol", 2, 1e-5), ("atol", 3, 1e-8)):
                        value = kwargs.get(key, args[at] if len(args) > at else default)
                        entry[key] = float(value) if isinstance(value, (int, float)) else None
                log.append(entry)
        with torch._C.DisableTorchFunctionSubclass():
            return func(*args, **kwargs)


def _watch(model: nn.Module, gm: nn.Module) -> tuple[nn.Module, nn.Module]:
    """Hooks on both modules: each call records whether autograd was on and how many inputs it got, and hands
    back its output as a _Watched tensor that records the comparisons made with it (all in model._fxcourse_runs)."""
    runs: list = []
    compared: list = []

    def hook(who):
        def record(module, inputs, output):
            if len(runs) < 100:
                runs.append({"who": who, "grad": torch.is_grad_enabled(), "inputs": len(inputs)})
            if type(output) is torch.Tensor:
                output = output.as_subclass(_Watched)
                output._fxcourse_log = compared
            return output
        return record

    model.register_forward_hook(hook("model"))
    gm.register_forward_hook(hook("gm"))
    model.__dict__["_fxcourse_runs"] = (runs, compared)
    return model, gm


def _perturbed(gm: fx.GraphModule, delta: float) -> fx.GraphModule:
    with torch.no_grad():
        gm.fc2.bias[0] += delta
    return gm


def _match_case(label, make, expected, atol=None, why=""):
    kwargs = (lambda: {"atol": atol}) if atol is not None else dict

    def watched():
        model, gm, *inputs = make()
        return (*_watch(model, gm), *inputs)
    return Case(label, watched, kwargs=kwargs, data={"expected": expected, "atol": atol or 0.0, "why": why})


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
        return [_match_case("TinyNet and its trace", lambda: tiny_pair(), True, why="same"),
                _match_case("TinyNet and a trace with a changed bias", lambda: tiny_pair(0.5), False, why="changed")]

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
        _match_case("TinyNet off by 1e-7, atol=0 (exact)", lambda: tiny_pair(1e-7, seed=1), False, why="exact"),
        _match_case("TinyNet off by 1e-7, atol=1e-3", lambda: tiny_pair(1e-7, seed=1), True, atol=1e-3,
                    why="tolerance"),
        _match_case("TinyNet off by 0.1, atol=1e-3", lambda: tiny_pair(0.1, seed=2), False, atol=1e-3, why="far"),
        _match_case("TinyNet with outputs near 1e4, off by 0.05, atol=1e-3 (no relative tolerance)",
                    lambda: tiny_pair(0.05, seed=6, scale=1e4), False, atol=1e-3, why="rtol"),
        _match_case("a model with two inputs and its trace", two_inputs, True, why="same"),
        _match_case("outputs of shapes (1, 2) and (2,) that broadcast", broadcast_trap, False, why="shape"),
        _match_case("a model whose output shows whether no_grad was on", grad_mode, False, why="grad"),
        _match_case("outputs of shapes (1, 2) and (2,) that broadcast, atol=1e-3", broadcast_trap, False, atol=1e-3,
                    why="shape"),
        _match_case("TinyNet off by 0.5, atol=1.0", lambda: tiny_pair(0.5, seed=7), True, atol=1.0, why="tolerance"),
    ]


def _match_evidence(result, args):
    if isinstance(result, torch.Tensor):
        raise CheckFailed("returned a tensor, expected a Python bool",
                          "torch.equal returns a bool; for a tensor of booleans use .all().item()")
    if not isinstance(result, bool):
        raise CheckFailed(f"returned {type(result).__name__}, expected a Python bool")
    runs, compared = args[0].__dict__.get("_fxcourse_runs", ([], []))
    return {"result": result, "runs": list(runs), "compared": list(compared)}


def _match_judge(case, ev):
    expected, atol = case.data["expected"], case.data["atol"]
    got = ev["result"]
    if got == expected:
        return
    runs, compared = ev["runs"], ev["compared"]
    with_grad = [r["who"] for r in runs if r["grad"]]
    used = {c["fn"] for c in compared}
    loose = [c for c in compared if c["fn"] != "equal" and c.get("rtol") not in (0, 0.0)]
    why = case.data["why"]
    hint = None
    if why == "grad" and with_grad:
        hint = (f"{' and '.join(dict.fromkeys(with_grad))} ran with autograd on: run both modules inside "
                "`with torch.no_grad():`")
    elif why == "shape":
        hint = ("outputs of different shapes do not match, even when they broadcast: "
                + ("compare shapes first, also when atol > 0 (torch.allclose broadcasts)" if atol else
                   "compare shapes too"))
    elif why == "exact" and used & {"allclose", "isclose"} and "equal" not in used:
        tolerances = [c.get("atol") for c in compared if c["fn"] != "equal"]
        hint = (f"atol defaults to 0.0, but with no atol given your answer compared with atol={tolerances[0]!r}: "
                "keep the signature's default, atol=0.0" if tolerances and tolerances[0] not in (None, 0, 0.0)
                and "atol" not in case.kwargs() else
                "with atol == 0 the outputs must be exactly equal: use torch.equal (allclose has tolerances of its own)")
    elif why == "rtol" and loose:
        hint = ("the tolerance is atol alone: torch.allclose(a, b, rtol=0, atol=atol) (its default rtol=1e-5 adds "
                "1e-5 * |b|, which is 0.1 for outputs near 1e4)")
    elif why == "tolerance" and "equal" in used and not used & {"allclose", "isclose"}:
        hint = f"atol={atol!r} is a tolerance: compare with torch.allclose(a, b, rtol=0, atol=atol), not torch.equal"
    expect(False, f"returned {got}, expected {expected}" + (f": {_WHY[why]}" if why in _WHY else ""), hint)


_WHY = {
    "exact": "with atol == 0 (the default) the outputs must be exactly equal, and these differ by about 1e-7",
    "tolerance": "the outputs differ by less than atol, so they match",
    "far": "the outputs differ by more than atol",
    "rtol": "the outputs, near 1e4, differ by 0.05, more than atol=1e-3",
    "shape": "the outputs have different shapes",
    "grad": "the model's output depends on whether autograd is on, and under torch.no_grad() the two differ",
    "changed": "gm's fc2 bias was changed, so the outputs differ",
    "same": "gm is a trace of the model, so their outputs are equal",
}


CHECKS = {
    "node_summary": Check("node_summary", _graph_cases, _summary_evidence, _summary_judge, unchanged="always"),
    "count_nodes": Check("count_nodes", _count_cases, _count_evidence, _count_judge, unchanged="always"),
    "outputs_match": Check("outputs_match", _match_cases, _match_evidence, _match_judge, unchanged="always"),
}
