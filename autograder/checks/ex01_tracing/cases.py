"""The cases of ex01_tracing: the seeded inputs each graded function is called on (the worker's side: no
expected value; what the judge knows of each case is added in `judging`)."""
from __future__ import annotations

import copy
import dataclasses
import sys

import torch
import torch.fx as fx
import torch.nn as nn

from fxplayground import Net, TinyNet

from autograder.checks import keyring
from autograder.checks.framework import Case
from autograder.checks.randmodels import manual_seed, seeded_randn


def _traced(make):
    return lambda: (fx.symbolic_trace(make()),)


def _graph_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex01_tracing")._graph_cases()
    return [Case("TinyNet", _traced(TinyNet)), Case("Net", _traced(Net))]


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
                # the grader's own snapshots (autograder's, the instructor's side's, torch's) do not count
                if len(asked) < 20 and not caller.startswith(("autograder.", "fxcourse_instructor.", "torch.")):
                    asked.append(_name)
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
    return [dataclasses.replace(c, make=_spied(watched_op(c.make)), kwargs=watched_kwargs(c.kwargs),
                                again=c.again and (_spied(watched_op(c.again[0])), c.again[1]))
            for c in _plain_count_cases(hidden)]


def _plain_count_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex01_tracing")._plain_count_cases()
    return [case for base in _graph_cases(False) for case in _op_cases(base, ("call_module", "output"))]


def _op_cases(base: Case, ops: tuple[str, ...]) -> list[Case]:
    """count_nodes on `base`'s graph: with op=None, then with each of `ops`."""
    out = [Case(f"{base.label}, op=None", base.make, data={"op": None})]
    for op in ops:
        out.append(Case(f"{base.label}, op={op!r}", lambda m=base.make, op=op: (*m(), op), data={"op": op}))
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


def _tiny_pair(delta=0.0, seed=0, scale=1.0):
    """TinyNet (fc2 scaled by `scale`), its trace (its bias moved by `delta`) and an input."""
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


def _match_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex01_tracing")._match_cases()

    return [_match_case("TinyNet and its trace", lambda: _tiny_pair()),
            _match_case("TinyNet and a trace with a changed bias", lambda: _tiny_pair(0.5))]
