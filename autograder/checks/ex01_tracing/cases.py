"""The cases of ex01_tracing: the seeded inputs each graded function is called on (the worker's side: no
expected value; what the judge knows of each case is added in `judging`)."""
from __future__ import annotations

import copy
import sys

import torch
import torch.fx as fx
import torch.nn as nn

from fxplayground import Net, ThreeReluNet, TinyNet

from autograder.checks.framework import Case
from autograder.checks.randmodels import manual_seed, random_mlp, seeded_randn
from autograder.checks.ex01_tracing.models import DeadBranch, GradModeNet, OpcodeNames, ScaledSkip, TwiceAndSpare


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


def _match_case(label, make, atol=None):
    kwargs = (lambda: {"atol": atol}) if atol is not None else dict

    def watched():
        model, gm, *inputs = make()
        return (*_watch(model, gm), *inputs)
    return Case(label, watched, kwargs=kwargs, data={"atol": atol or 0.0})


def _match_cases(hidden: bool) -> list[Case]:
    def tiny_pair(delta=0.0, seed=0, scale=1.0):
        manual_seed(seed)
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
        return [_match_case("TinyNet and its trace", lambda: tiny_pair()),
                _match_case("TinyNet and a trace with a changed bias", lambda: tiny_pair(0.5))]

    def two_inputs():
        manual_seed(3)
        m = ScaledSkip()
        return m, fx.symbolic_trace(m), seeded_randn(4, 3, seed=1), seeded_randn(4, 3, seed=2)

    def broadcast_trap():
        manual_seed(4)
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
        _match_case("TinyNet off by 1e-7, atol=0 (exact)", lambda: tiny_pair(1e-7, seed=1)),
        _match_case("TinyNet off by 1e-7, atol=1e-3", lambda: tiny_pair(1e-7, seed=1), atol=1e-3),
        _match_case("TinyNet off by 0.1, atol=1e-3", lambda: tiny_pair(0.1, seed=2), atol=1e-3),
        _match_case("TinyNet with outputs near 1e4, off by 0.05, atol=1e-3 (no relative tolerance)",
                    lambda: tiny_pair(0.05, seed=6, scale=1e4), atol=1e-3),
        _match_case("a model with two inputs and its trace", two_inputs),
        _match_case("outputs of shapes (1, 2) and (2,) that broadcast", broadcast_trap),
        _match_case("a model whose output shows whether no_grad was on", grad_mode),
        _match_case("outputs of shapes (1, 2) and (2,) that broadcast, atol=1e-3", broadcast_trap, atol=1e-3),
        _match_case("TinyNet off by 0.5, atol=1.0", lambda: tiny_pair(0.5, seed=7), atol=1.0),
    ]
