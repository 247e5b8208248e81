"""Checks of ex04_wrapping: trace_gated, trace_with_leaves, trace_specialized.

The models of the exercise notebook live here as source text (`MODELS_SOURCE`): the builder of the notebook
pastes it into the setup cell, and this module runs the same text once into a private namespace (`REF`) to get
the reference classes. One text, two places, no drift (tests/test_ex04_wrapping.py checks they agree).

`trace_gated` is special. Its learner makes the notebook's `gate` a leaf function, either with
`fx.wrap("gate")` at the top level of a cell (which patches the *notebook's globals dict* while tracing) or with
`fx.Tracer(autowrap_functions=(gate,))` (which patches the globals of the traced `forward`s). Both only work on
models whose `forward` looks `gate` up in the notebook's own globals. So the models of its cases are built
here, but their `forward` functions are re-bound to the notebook's namespace (`_bind`); that namespace is the
`__globals__` of the learner's `trace_gated`, found on the call stack (`notebook_namespace`). The judge never
needs it: it rebuilds the same models bound to `REF` and compares.
"""
from __future__ import annotations

import builtins
import collections
import sys
import types
from typing import Any

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from autograder.checks.framework import Case, Check, CheckFailed
from autograder.checks.evidence import (
    describe_graph, expect, expect_close, expect_lint, expect_type, lint_error, qualified, stale_code,
)
from autograder.checks.randmodels import random_mlp

# ------------------------------------------------------------------------------ the notebook's own models

MODELS_SOURCE = '''
def gate(x: torch.Tensor) -> torch.Tensor:
    """ReLU when the values of x add up to a positive number, else tanh scaled by one half."""
    if x.sum() > 0:
        return torch.relu(x)
    return 0.5 * torch.tanh(x)


class GatedNet(nn.Module):
    """Linear 6->16, then the data-dependent gate, then Linear 16->3."""

    def __init__(self, d_in: int = 6, hidden: int = 16, d_out: int = 3) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(gate(self.fc1(x)))


class RowNorm(nn.Module):
    """Scales each row of x to unit length, one row at a time (a Python loop over the tensor)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([row / (row.norm() + 1e-6) for row in x])


class Block(nn.Module):
    """Linear -> ReLU -> Linear, plus the input."""

    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(torch.relu(self.fc1(x)))


class MixerNet(nn.Module):
    """Linear, a Block, a RowNorm and a Linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(6, 8)
        self.block = Block(8)
        self.norm = RowNorm()
        self.head = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.norm(self.block(torch.relu(self.inp(x)))))


class FlagNet(nn.Module):
    """Python-valued arguments steer the forward: a bool skips a layer, an int repeats it."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Linear(6, 8)
        self.extra = nn.Linear(8, 8)
        self.head = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor, use_extra: bool = True, repeats: int = 1) -> torch.Tensor:
        h = torch.relu(self.stem(x))
        if use_extra:
            for _ in range(repeats):
                h = torch.relu(self.extra(h))
        return self.head(h)
'''.strip("\n")

REF: dict[str, Any] = {"__name__": "ex04_wrapping_models", "__builtins__": builtins, "torch": torch, "nn": nn,
                       "F": F}
exec(compile(MODELS_SOURCE, "<ex04_wrapping models>", "exec"), REF)  # noqa: S102 (our own source text)
RowNorm: type = REF["RowNorm"]
Block: type = REF["Block"]
MixerNet: type = REF["MixerNet"]
FlagNet: type = REF["FlagNet"]


def _seed(seed: int) -> None:
    """Seed the CPU generator that nn.Module initialisation draws from (torch.manual_seed also queues CUDA
    seeding, which records a stack trace each time: 40x slower here)."""
    torch.default_generator.manual_seed(seed)


def _x(*shape: int, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _with_inputs(model: nn.Module, inputs: list[tuple[torch.Tensor, ...]]) -> nn.Module:
    """Attach the probe inputs the evidence runs the learner's module on (the judge rebuilds its own)."""
    model.probe_inputs = inputs
    return model


def _check_gm(result: Any, function: str) -> None:
    if isinstance(result, fx.Graph):
        raise CheckFailed(f"{function} returned a torch.fx.Graph, expected a torch.fx.GraphModule",
                          "a Tracer returns a Graph; pair it with its module: fx.GraphModule(model, graph)")
    expect_type(result, fx.GraphModule, function, "a torch.fx.GraphModule")


def _gm_evidence(result: Any, args: tuple, function: str) -> dict:
    """Graph, lint result and the outputs on the model's probe inputs; an error when run is evidence too."""
    _check_gm(result, function)
    ev: dict = {"graph": describe_graph(result), "code": result.code, "lint": lint_error(result), "outputs": [],
                "run_error": None, "stale": stale_code(result)}
    with torch.no_grad():
        for inputs in args[0].probe_inputs:
            try:
                # forward, not __call__: on torch 2.13 a GraphModule whose generated code raises builds its
                # error message with torch._dynamo.disable, importing all of dynamo (seconds of CPU) first.
                ev["outputs"].append(result.forward(*inputs))
            except Exception as exc:
                ev["run_error"] = f"{type(exc).__name__}: {str(exc)[:400]}"
                break
    return ev


def _lint_ok(ev: dict) -> None:
    expect(not ev["stale"], "gm.code is out of date: the graph was changed after the code was generated",
           "call gm.recompile() after changing gm.graph, so gm.code and forward are regenerated")
    expect_lint(ev, "call gm.graph.lint() and gm.recompile() after editing the graph")


def _short(target: str) -> str:
    return target.rsplit(".", 1)[-1]


def _graph_sequence(graph: fx.Graph, gate_name: str | None = None) -> list[tuple[str, str]]:
    """Like _sequence, straight from a Graph: no GraphModule, so no code is generated. (Generated code that
    calls a wrapped function runs fx.wrap at its top level, and torch.fx keeps every such registration, and
    patches all of them at every later trace, for the life of the process.)"""
    return _sequence([{"op": n.op, "target": qualified(n.target)} for n in graph.nodes], gate_name)


def _sequence(graph: list[dict], gate_name: str | None = None) -> list[tuple[str, str]]:
    """(op, target) of every node, with the gate function's target shortened to 'gate'."""
    out = []
    for n in graph:
        target = n["target"]
        if gate_name and n["op"] == "call_function" and _short(target) == gate_name:
            target = gate_name
        out.append((n["op"], target))
    return out


def _first_diff(got: list, expected: list) -> str:
    for i, (g, e) in enumerate(zip(got, expected)):
        if g != e:
            return f"node {i} is {g[0]} {g[1]!r}, expected {e[0]} {e[1]!r}"
    return f"{len(got)} nodes, expected {len(expected)}"


# ===================================================================================== trace_gated

class _TwoGates(nn.Module):
    """gate called twice on different tensors: two call_function nodes."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.fc1 = nn.Linear(5, 7)
        self.fc2 = nn.Linear(7, 7)
        self.head = nn.Linear(7, 2)

    def forward(self, x):
        h = gate(self.fc1(x))  # noqa: F821 (gate is looked up in the notebook's globals, see _bind)
        return self.head(gate(self.fc2(h) - h))  # noqa: F821


class _GateCell(nn.Module):
    """A submodule whose own forward calls gate (traced through, since it is not a torch.nn module)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, x):
        return gate(self.lin(x)) + x  # noqa: F821


class _Nested(nn.Module):
    """Two _GateCells in a Sequential, then a head: gate lives in submodules, not in the root forward."""

    def __init__(self, seed: int, cell: type) -> None:
        super().__init__()
        _seed(seed)
        self.cells = nn.Sequential(cell(6), cell(6))
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        return self.head(self.cells(x))


class _TwoInputs(nn.Module):
    """Two tensor inputs; gate sees their difference."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.fc = nn.Linear(4, 4)

    def forward(self, x, y):
        return self.fc(gate(x - y)) * y  # noqa: F821


def _bind(cls: type, g: dict) -> type:
    """A subclass of `cls` whose forward looks its globals (gate) up in `g` instead of this module."""
    fwd = cls.forward
    new = types.FunctionType(fwd.__code__, g, fwd.__name__, fwd.__defaults__, fwd.__closure__)
    new.__qualname__, new.__doc__ = fwd.__qualname__, fwd.__doc__
    return type(cls.__name__, (cls,), {"forward": new, "__module__": cls.__module__,
                                       "__qualname__": cls.__qualname__, "__doc__": cls.__doc__})


def _is_notebook(g: Any) -> bool:
    return isinstance(g, dict) and g is not REF and callable(g.get("gate")) and g.get("__name__") != __name__


def notebook_namespace() -> dict:
    """The globals of the notebook that defines gate: those of the learner's function, found on the stack.

    collect_evidence (and run_check, run_answer, the worker) hold the learner's function in a local variable;
    its __globals__ is the namespace its cell ran in. Fallbacks, for when it is not a plain function: a
    namespace dict held by a caller or the globals of a frame on the stack (a test cell), then
    sys.modules['__main__'], and last a private copy of the reference namespace, so that a broken notebook
    fails its own cases instead of crashing the grader (fx.wrap in the notebook then has no effect on the
    case's model, and tracing it raises the usual TraceError).
    """
    frame = sys._getframe(1)
    seen_globals = []
    while frame is not None:
        values = list(frame.f_locals.values())
        for value in values:
            if isinstance(value, types.FunctionType) and _is_notebook(value.__globals__):
                return value.__globals__
        seen_globals.extend(v for v in values if isinstance(v, dict))  # e.g. the worker's `ns`
        seen_globals.append(frame.f_globals)
        frame = frame.f_back
    for g in seen_globals:
        if _is_notebook(g):
            return g
    main = sys.modules.get("__main__")
    if main is not None and _is_notebook(vars(main)):
        return vars(main)
    return dict(REF)


GATED_KINDS = {
    # kind: (number of gate calls, number of tensor inputs)
    "GatedNet": (1, 1),
    "GatedNet(4, 10, 2)": (1, 1),
    "_TwoGates": (2, 1),
    "_Nested": (2, 1),
    "_TwoInputs": (1, 2),
}


def build_gated(kind: str, seed: int, g: dict) -> nn.Module:
    """The model of a trace_gated case, its forwards bound to the globals `g` (the notebook's, or REF)."""
    if kind.startswith("GatedNet"):
        _seed(seed)
        cls = _bind(REF["GatedNet"], g)
        return cls() if kind == "GatedNet" else cls(4, 10, 2)
    if kind == "_Nested":
        return _Nested(seed, _bind(_GateCell, g))
    return _bind({"_TwoGates": _TwoGates, "_TwoInputs": _TwoInputs}[kind], g)(seed)


def _first_gate_sums(model_of, inputs: tuple) -> list[float]:
    """The sum gate's input has at each call, on `inputs` (running a copy bound to a recording gate)."""
    sums: list[float] = []

    def recording_gate(x):
        sums.append(float(x.sum()))
        return REF["gate"](x)

    g = dict(REF, gate=recording_gate)
    with torch.no_grad():
        model_of(g)(*inputs)
    return sums


_PROBES: dict[tuple[str, int], tuple[list[tuple[torch.Tensor, ...]], list[float]]] = {}


def gated_probe(kind: str, seed: int) -> tuple[list[tuple[torch.Tensor, ...]], list[float]]:
    """Inputs that send gate's first call down both branches (positive sum first), and those sums.

    Deterministic: the same in the worker and in the judge. Cached; the tensors returned are fresh copies.
    """
    if (kind, seed) not in _PROBES:
        _PROBES[(kind, seed)] = _search_probe(kind, seed)
    inputs, sums = _PROBES[(kind, seed)]
    return [tuple(t.clone() for t in inp) for inp in inputs], list(sums)


def _search_probe(kind: str, seed: int) -> tuple[list[tuple[torch.Tensor, ...]], list[float]]:
    n_in = GATED_KINDS[kind][1]
    d = {"GatedNet": 6, "GatedNet(4, 10, 2)": 4, "_TwoGates": 5, "_Nested": 6, "_TwoInputs": 4}[kind]
    for trial in range(50):
        base = [_x(3, d, seed=1000 * seed + 10 * trial + i) for i in range(n_in)]
        if n_in == 1:
            pair = [(3.0 * base[0],), (-3.0 * base[0],)]
        else:
            pair = [(base[0], base[1]), (base[1], base[0])]
        sums = [_first_gate_sums(lambda g: build_gated(kind, seed, g), p)[0] for p in pair]
        if sums[0] * sums[1] < 0 and min(abs(s) for s in sums) > 0.5:
            return (pair, sums) if sums[0] > 0 else (pair[::-1], sums[::-1])
    raise AssertionError(f"no inputs found on both sides of gate for {kind}")  # never: tested


def gated_inputs(kind: str, seed: int) -> list[tuple[torch.Tensor, ...]]:
    """The probe inputs of a trace_gated case."""
    return gated_probe(kind, seed)[0]


def _gated_case(label: str, kind: str, seed: int) -> Case:
    def make():
        model = build_gated(kind, seed, notebook_namespace())
        return (_with_inputs(model, gated_inputs(kind, seed)),)
    return Case(label, make, data={"kind": kind, "seed": seed})


def _gated_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [_gated_case("the notebook's GatedNet", "GatedNet", 0)]
    return [
        _gated_case("GatedNet(4, 10, 2), other weights (unseen)", "GatedNet(4, 10, 2)", 5),
        _gated_case("a model calling gate twice (unseen)", "_TwoGates", 6),
        _gated_case("gate called inside two submodules (unseen)", "_Nested", 7),
        _gated_case("a model with two tensor inputs (unseen)", "_TwoInputs", 8),
    ]


def _gated_evidence(result, args):
    return _gm_evidence(result, args, "trace_gated")


WRAP_HINT = ("make gate a leaf function, recorded as one call_function node: call fx.wrap(\"gate\") at the top "
             "level of your answer cell (outside any def), or trace with fx.Tracer(autowrap_functions=(gate,))")


def _gated_judge(case, ev):
    kind, seed = case.data["kind"], case.data["seed"]
    reference = build_gated(kind, seed, REF)
    expected = _graph_sequence(fx.Tracer(autowrap_functions=(REF["gate"],)).trace(reference), "gate")
    n_expected = GATED_KINDS[kind][0]
    gates = [n for n in ev["graph"] if n["op"] == "call_function" and _short(n["target"]) == "gate"]
    if not gates:
        traced_through = any(n["op"] in ("call_method", "call_function") and _short(n["target"]) in
                             ("sum", "gt", "where", "tanh", "relu") for n in ev["graph"])
        if traced_through:
            raise CheckFailed("no call_function node calls gate: gate was traced through (its sum/compare/relu "
                              "are in the graph instead), so one branch got frozen or rewritten", WRAP_HINT)
        raise CheckFailed("no call_function node calls gate", WRAP_HINT)
    if len(gates) != n_expected:
        raise CheckFailed(f"{len(gates)} call_function node(s) call gate ({', '.join(n['name'] for n in gates)}), "
                          f"expected {n_expected}: one per call of gate in the model's forward",
                          "trace the model you are given: every call of gate becomes its own node")
    _lint_ok(ev)
    got = _sequence(ev["graph"], "gate")
    expect(got == expected, f"the graph differs from a trace with gate as a leaf: {_first_diff(got, expected)}",
           "trace the `model` argument itself, with gate as a leaf and everything else traced as usual")
    if ev["run_error"]:
        raise CheckFailed(f"the returned GraphModule raised {ev['run_error']} when run")
    inputs, sums = gated_probe(kind, seed)
    expect(len(ev["outputs"]) == len(inputs), f"{len(ev['outputs'])} outputs, expected {len(inputs)}")
    with torch.no_grad():
        for inp, out, s in zip(inputs, ev["outputs"], sums):
            side = "relu" if s > 0 else "tanh"
            expect_close(out, reference(*inp),
                         f"output on an input where gate's input sums to {s:+.2f} (the {side} branch)",
                         hint="trace the `model` argument itself (not a new instance); gate must run at call "
                              "time, so both of its branches still work")


# =============================================================================== trace_with_leaves

class ScaledRowNorm(RowNorm):
    """A subclass of RowNorm: an instance of RowNorm too, so a leaf when RowNorm is a leaf type."""

    def __init__(self, scale: float = 2.0) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return super().forward(x) * self.scale


class _Tower(nn.Module):
    """Blocks nested in Sequentials ('stages.0', 'stages.1.1') and one Block called twice."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.stem = nn.Linear(5, 8)
        self.stages = nn.Sequential(Block(8), nn.Sequential(nn.ReLU(), Block(8)))
        self.shared = Block(8)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(self.shared(self.shared(self.stages(self.stem(x)))))


class _NormTower(nn.Module):
    """A RowNorm subclass deep inside a Sequential, after a Block that must be traced through."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.block = Block(4)
        self.post = nn.Sequential(nn.Linear(4, 4), nn.Sequential(ScaledRowNorm(3.0)))
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.post(self.block(x)))


class ScaledBlock(Block):
    """A subclass of Block with its own forward: traceable, and a leaf whenever Block is a leaf type."""

    def forward(self, x):
        return super().forward(x) * 0.5


class _SubBlockTower(nn.Module):
    """A Block subclass nested in a Sequential next to a plain Block; leaf_types=(Block,) keeps both whole."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.first = Block(6)
        self.rest = nn.Sequential(nn.Tanh(), ScaledBlock(6))
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        return self.head(self.rest(self.first(x)))


class _SeqModel(nn.Module):
    """A plain nn.Sequential of torch.nn layers next to a Block: leaf_types=(nn.Sequential,) keeps it whole."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.mlp = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 6))
        self.block = Block(6)

    def forward(self, x):
        return self.block(self.mlp(x)) - x


def _leaf_models() -> dict:
    return {
        "MixerNet": lambda seed: MixerNet(),
        "_Tower": _Tower,
        "_NormTower": _NormTower,
        "_SeqModel": _SeqModel,
        "_SubBlockTower": _SubBlockTower,
        "random_mlp": random_mlp,
    }


_IN_FEATURES = {"MixerNet": 6, "_Tower": 5, "_NormTower": 4, "_SeqModel": 6, "_SubBlockTower": 6}


def _leaf_case(label: str, kind: str, seed: int, leaf_types: Any) -> Case:
    def make():
        _seed(seed)
        model = _leaf_models()[kind](seed)
        d = model.width if kind == "random_mlp" else _IN_FEATURES[kind]
        return _with_inputs(model, [(_x(4, d, seed=seed + 100),)]), leaf_types()
    return Case(label, make, data={"kind": kind, "seed": seed})


def _leaf_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [_leaf_case("MixerNet, leaf_types=(RowNorm,)", "MixerNet", 0, lambda: (RowNorm,)),
                _leaf_case("MixerNet, leaf_types=(RowNorm, Block)", "MixerNet", 0, lambda: (RowNorm, Block))]
    return [
        _leaf_case("Blocks nested in Sequentials and one called twice, leaf_types=[Block] (a list) (unseen)",
                   "_Tower", 31, lambda: [Block]),
        _leaf_case("a subclass of Block with its own forward, nested, leaf_types=(Block,) (unseen)",
                   "_SubBlockTower", 35, lambda: (Block,)),
        _leaf_case("a subclass of RowNorm nested two levels deep, leaf_types=(RowNorm,) (unseen)",
                   "_NormTower", 32, lambda: (RowNorm,)),
        _leaf_case("leaf_types=(nn.Sequential,) on a model with an nn.Sequential and a Block (unseen)",
                   "_SeqModel", 33, lambda: (nn.Sequential,)),
        _leaf_case("a random model, leaf_types=() (unseen)", "random_mlp", 34, lambda: ()),
    ]


class ReferenceLeafTracer(fx.Tracer):
    """The reference: instances of leaf_types are leaves, and so is everything torch.nn makes a leaf."""

    def __init__(self, leaf_types) -> None:
        super().__init__()
        self.leaf_types = tuple(leaf_types)

    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        return isinstance(m, self.leaf_types) or super().is_leaf_module(m, module_qualified_name)


def _leaf_evidence(result, args):
    return _gm_evidence(result, args, "trace_with_leaves")


def _type_name(model: nn.Module, qualname: str) -> str:
    return type(model.get_submodule(qualname)).__name__


def _leaf_judge(case, ev):
    model, leaf_types = case.make()
    leaf_types = tuple(leaf_types)
    tracer = ReferenceLeafTracer(leaf_types)
    ref = describe_graph(fx.GraphModule(model, tracer.trace(model)))
    ref_modules = [n["target"] for n in ref if n["op"] == "call_module"]
    got_modules = [n["target"] for n in ev["graph"] if n["op"] == "call_module"]
    touched = {n["target"] for n in ev["graph"] if n["op"] in ("call_module", "get_attr")}
    for target in dict.fromkeys(got_modules):
        inside_a_ref_module = any(target.startswith(r + ".") for r in ref_modules)
        if target not in ref_modules and not inside_a_ref_module:  # (inside: a leaf traced through, see below)
            try:
                kind = _type_name(model, target)
            except AttributeError:
                kind = "not a submodule of the model"
            raise CheckFailed(f"module {target!r} ({kind}) is one call_module node, but it is not an instance of "
                              "leaf_types (nor a torch.nn layer): it should be traced through",
                              "only instances of leaf_types, plus what torch.nn makes a leaf anyway, stay whole")
    for target in dict.fromkeys(ref_modules):
        if target in got_modules:
            continue
        kind = _type_name(model, target)
        inside = sorted(t for t in touched if t.startswith(target + "."))
        custom = isinstance(model.get_submodule(target), leaf_types)
        if custom:
            where = f" (the graph reaches inside it: {', '.join(inside[:3])})" if inside else ""
            hint = ("is_leaf_module is asked about every module, nested ones too, with their dotted qualname: "
                    "decide by type with isinstance(m, tuple(leaf_types)), which counts subclasses too")
            raise CheckFailed(f"module {target!r} ({kind}) is an instance of a leaf type but is not one "
                              f"call_module node{where}", hint)
        into = f" into {inside[0]}" if inside else ""
        raise CheckFailed(f"torch.nn module {target!r} ({kind}) was traced through{into}; it should stay a "
                          "call_module node as usual",
                          "keep the default rule for the other modules: "
                          "return ... or super().is_leaf_module(m, module_qualified_name)")
    _lint_ok(ev)
    got, expected = _sequence(ev["graph"]), _sequence(ref)
    expect(got == expected, f"the graph differs from the reference trace: {_first_diff(got, expected)}",
           "trace the model you are given with a custom fx.Tracer whose is_leaf_module decides the leaves")
    if ev["run_error"]:
        raise CheckFailed(f"the returned GraphModule raised {ev['run_error']} when run")
    expect(len(ev["outputs"]) == len(model.probe_inputs), f"{len(ev['outputs'])} outputs, expected "
                                                           f"{len(model.probe_inputs)}")
    with torch.no_grad():
        for inp, out in zip(model.probe_inputs, ev["outputs"]):
            expect_close(out, model(*inp), "output of the returned GraphModule")


# =============================================================================== trace_specialized

class _TwoInputFlags(nn.Module):
    """Two tensor inputs; a str picks the combination, a bool may leave y unused, a float scales."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.px = nn.Linear(5, 5)
        self.py = nn.Linear(5, 5)
        self.head = nn.Linear(5, 2)

    def forward(self, x, y, mode: str = "add", use_y: bool = True, scale: float = 1.0):
        h = self.px(x)
        if use_y:
            h = h + self.py(y) if mode == "add" else h * self.py(y)
        return self.head(h) * scale


class _ClipNet(nn.Module):
    """An optional clip (default None: no clamp node at all), a repeat count and an optional activation."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.fc = nn.Linear(4, 4)
        self.out = nn.Linear(4, 3)

    def forward(self, x, clip: float | None = None, depth: int = 1, act: str | None = "tanh"):
        for _ in range(depth):
            x = self.fc(x)
            if clip is not None:
                x = x.clamp(-clip, clip)
            if act == "tanh":
                x = x.tanh()
            elif act == "relu":
                x = x.relu()
        return self.out(x)


class _SnakeNames(nn.Module):
    """A tensor input whose name has an underscore (x_in), like the guards of flags (gain_db_1)."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        _seed(seed)
        self.fc = nn.Linear(4, 3)

    def forward(self, x_in, gain_db: float = 0.0, use_bias: bool = True):
        h = self.fc(x_in) * (10.0 ** (gain_db / 20.0))
        if use_bias:
            h = h + 1.0
        return h


_SPEC_MODELS = {"FlagNet": lambda seed: FlagNet(), "_TwoInputFlags": _TwoInputFlags, "_ClipNet": _ClipNet,
                "_SnakeNames": _SnakeNames}
_SPEC_INPUTS = {"FlagNet": (6,), "_TwoInputFlags": (5, 5), "_ClipNet": (4,), "_SnakeNames": (4,)}


def _spec_case(label: str, kind: str, seed: int, flags: dict, hint: str | None = None) -> Case:
    def make():
        _seed(seed)
        model = _SPEC_MODELS[kind](seed)
        inputs = [tuple(_x(3, d, seed=seed + 10 * t + i) for i, d in enumerate(_SPEC_INPUTS[kind]))
                  for t in range(2)]
        return (_with_inputs(model, inputs),)
    return Case(label, make, kwargs=lambda: dict(flags), data={"hint": hint})


ORDER_HINT = "flags arrive as keyword arguments: pass them to concrete_args by name, not by position"


def _spec_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [_spec_case("FlagNet, use_extra=False", "FlagNet", 0, {"use_extra": False}),
                _spec_case("FlagNet, use_extra=True, repeats=3", "FlagNet", 0, {"use_extra": True, "repeats": 3})]
    return [
        _spec_case("FlagNet, repeats=2, use_extra=True (flags in another order) (unseen)", "FlagNet", 41,
                   {"repeats": 2, "use_extra": True}, ORDER_HINT),
        _spec_case("FlagNet, use_extra=True, repeats=0 (unseen)", "FlagNet", 42, {"use_extra": True, "repeats": 0}),
        _spec_case("two tensor inputs, mode='mul', use_y=True, scale=0.25 (unseen)", "_TwoInputFlags", 43,
                   {"mode": "mul", "use_y": True, "scale": 0.25}),
        _spec_case("two tensor inputs, use_y=False leaves y unused, mode='add' (unseen)", "_TwoInputFlags", 44,
                   {"use_y": False, "mode": "add"}),
        _spec_case("depth=2, act='tanh', clip=0.5 where clip defaults to None (unseen)", "_ClipNet", 45,
                   {"depth": 2, "act": "tanh", "clip": 0.5}, ORDER_HINT),
        _spec_case("clip=None given explicitly, act=None where act defaults to 'tanh', depth=3 (unseen)",
                   "_ClipNet", 46, {"clip": None, "act": None, "depth": 3}),
        _spec_case("act='relu', depth=1, clip=2.0 (unseen)", "_ClipNet", 47, {"act": "relu", "depth": 1, "clip": 2.0}),
        _spec_case("a tensor input named x_in, gain_db=6.0, use_bias=False (unseen)", "_SnakeNames", 48,
                   {"gain_db": 6.0, "use_bias": False}),
    ]


def _spec_evidence(result, args):
    return _gm_evidence(result, args, "trace_specialized")


GUARD_HINT = ("concrete_args leaves a guard for each flag: a placeholder named <flag>_1 whose default is the "
              "flag's ORIGINAL default, checked by torch._assert. Give that placeholder the fixed value as its "
              "default (node.args = (value,)), or erase the guard, then gm.recompile()")


def _spec_judge(case, ev):
    (model,) = case.make()
    flags = case.kwargs()
    ref = describe_graph(fx.symbolic_trace(model, concrete_args=flags))
    n_tensors = len(model.probe_inputs[0])
    tensor_inputs = [n["target"] for n in ref if n["op"] == "placeholder"][:n_tensors]
    placeholders = [n["target"] for n in ev["graph"] if n["op"] == "placeholder"]
    expect(placeholders[:n_tensors] == tensor_inputs,
           f"the placeholders are {placeholders}; the first {n_tensors} should be the tensor input(s) "
           f"{tensor_inputs}, in order",
           "keep every tensor input as a placeholder, even one the flags leave unused")
    _lint_ok(ev)
    if ev["run_error"]:
        err = ev["run_error"]
        hint = None
        if "has been specialized" in err:
            hint = GUARD_HINT
        elif "missing" in err and "required positional argument" in err:
            hint = ("a flag without a default stays a required placeholder after concrete_args (named <flag>_1): "
                    "give it the fixed value as default, or remove it with its guard")
        elif "positional argument" in err and "given" in err:
            hint = "keep every tensor input as a placeholder, even one the flags leave unused"
        raise CheckFailed(f"calling the returned GraphModule with the {n_tensors} tensor input(s) only raised "
                          f"{err}", hint)
    expected = collections.Counter(n["target"] for n in ref if n["op"] == "call_module")
    got = collections.Counter(n["target"] for n in ev["graph"] if n["op"] == "call_module")
    for target in sorted(set(expected) | set(got)):
        expect(got[target] == expected[target],
               f"submodule {target!r} is called {got[target]} time(s) in the graph, expected {expected[target]} "
               f"with {', '.join(f'{k}={v!r}' for k, v in flags.items())}",
               case.data.get("hint") or "trace with concrete_args=flags so the Python values pick the layers")
    expect(len(ev["outputs"]) == len(model.probe_inputs), f"{len(ev['outputs'])} outputs, expected "
                                                           f"{len(model.probe_inputs)}")
    with torch.no_grad():
        for inp, out in zip(model.probe_inputs, ev["outputs"]):
            expect_close(out, model(*inp, **flags), "output of gm(*tensors) against model(*tensors, **flags)",
                         hint=case.data.get("hint"))


CHECKS = {
    "trace_gated": Check("trace_gated", _gated_cases, _gated_evidence, _gated_judge, unchanged="always"),
    "trace_with_leaves": Check("trace_with_leaves", _leaf_cases, _leaf_evidence, _leaf_judge, unchanged="always"),
    "trace_specialized": Check("trace_specialized", _spec_cases, _spec_evidence, _spec_judge, unchanged="always"),
}

__all__ = ["CHECKS", "MODELS_SOURCE", "REF", "build_gated", "gated_inputs", "notebook_namespace",
           "ReferenceLeafTracer"]
