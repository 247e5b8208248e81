"""The cases of ex04_wrapping: the seeded inputs each graded function is called on, and their references."""
from __future__ import annotations

import sys
import types
from typing import Any

import torch
import torch.nn as nn

from autograder.checks import keyring
from autograder.checks.framework import Case
from autograder.checks.randmodels import current_salt, random_mlp, seeded_randn
from autograder.checks.ex04_wrapping.models import (
    _ClipNet, _GateCell, _InPlaceFlag, _InPlaceGated, _InPlaceTower, _ModeFlags, _ModeGated, _ModeTower, _NameClash,
    _Nested, _NormTower, _ParamFree, _seed, _SeqModel, _SnakeNames, _SubBlockTower, _SuffixNames, _Tower, _TwoGates,
    _TwoInputFlags, _TwoInputs, Block, REF, RowNorm,
)


MixerNet: type = REF["MixerNet"]
FlagNet: type = REF["FlagNet"]


def _with_inputs(model: nn.Module, inputs: list[tuple[torch.Tensor, ...]]) -> nn.Module:
    """Attach the probe inputs the evidence runs the learner's module on (the judge rebuilds its own)."""
    model.probe_inputs = inputs
    return model


_KEPT: dict[tuple[str, int], tuple[dict, nn.Module]] = {}


def kept(key: str | None, build: Any, owner: dict | None = None) -> nn.Module:
    """`build()`, or, for a `key` an earlier case built a model under for the same notebook, that very model (which
    the learner's function was given then): a function called again on the same model must trace it as it is
    now, not hand back what it made of it before, nor meet marks it left on it. Another notebook (another
    answer graded in this process), or none (the judge), gets a model of its own. The cases of one key share
    their salt (their data["kept"]: secrecy.hidden_cases), so each builds the same model. `owner`: the notebook's
    namespace, when the caller has found it already."""
    if key is None:
        return build()
    owner, index = owner if owner is not None else notebook_namespace(), (key, current_salt())
    if index not in _KEPT or _KEPT[index][0] is not owner:
        _KEPT[index] = (owner, build())   # holding the namespace keeps its id from going to another one
    return _KEPT[index][1]


def set_modes(model: nn.Module, modes: dict | None) -> nn.Module:
    """Each named submodule ('' the model itself, set first) in training (True) or eval mode (False)."""
    for name, training in (modes or {}).items():
        model.get_submodule(name).train(training)
    return model


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
    "_ModeGated in training mode": (1, 1),
    "_ModeGated in eval mode": (1, 1),
    "_InPlaceGated": (1, 1),
}


def build_gated(kind: str, seed: int, g: dict) -> nn.Module:
    """The model of a trace_gated case, its forwards bound to the globals `g` (the notebook's, or REF)."""
    if kind.startswith("GatedNet"):
        _seed(seed)
        cls = _bind(REF["GatedNet"], g)
        return cls() if kind == "GatedNet" else cls(4, 10, 2)
    if kind == "_Nested":
        return _Nested(seed, _bind(_GateCell, g))
    if kind.startswith("_ModeGated"):
        return _bind(_ModeGated, g)(seed).train(kind.endswith("training mode"))
    return _bind({"_TwoGates": _TwoGates, "_TwoInputs": _TwoInputs, "_InPlaceGated": _InPlaceGated}[kind], g)(seed)


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
    key = (kind, seed, current_salt())
    if key not in _PROBES:
        _PROBES[key] = _search_probe(kind, seed)
    inputs, sums = _PROBES[key]
    return [tuple(t.clone() for t in inp) for inp in inputs], list(sums)


def _search_probe(kind: str, seed: int) -> tuple[list[tuple[torch.Tensor, ...]], list[float]]:
    n_in = GATED_KINDS[kind][1]
    d = {"GatedNet": 6, "GatedNet(4, 10, 2)": 4, "_TwoGates": 5, "_Nested": 6, "_TwoInputs": 4,
         "_ModeGated in training mode": 5, "_ModeGated in eval mode": 5, "_InPlaceGated": 5}[kind]
    for trial in range(50):
        base = [seeded_randn(3, d, seed=1000 * seed + 10 * trial + i) for i in range(n_in)]
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


def _gated_case(label: str, kind: str, seed: int, modes: dict | None = None, key: str | None = None) -> Case:
    """`modes`: the submodules' modes to set (set_modes); `key`: the model is kept under it (kept)."""
    def make():
        g = notebook_namespace()
        model = set_modes(kept(key, lambda: build_gated(kind, seed, g), g), modes)
        return (_with_inputs(model, gated_inputs(kind, seed)),)
    return Case(label, make, data={"kind": kind, "seed": seed, "modes": modes, "kept": key})


def _gated_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex04_wrapping")._gated_cases()
    return [_gated_case("the notebook's GatedNet", "GatedNet", 0)]


def _leaf_models() -> dict:
    return {
        "MixerNet": lambda seed: MixerNet(),
        "_Tower": _Tower,
        "_NormTower": _NormTower,
        "_SeqModel": _SeqModel,
        "_SubBlockTower": _SubBlockTower,
        "_ParamFree": _ParamFree,
        "_NameClash": _NameClash,
        "random_mlp": random_mlp,
        "_ModeTower": _ModeTower,
        "_InPlaceTower": _InPlaceTower,
    }


_IN_FEATURES = {"MixerNet": 6, "_Tower": 5, "_NormTower": 4, "_SeqModel": 6, "_SubBlockTower": 6, "_ParamFree": 5,
                "_NameClash": 6, "_ModeTower": 5, "_InPlaceTower": 5}


def _leaf_case(label: str, kind: str, seed: int, leaf_types: Any, modes: dict | None = None,
               key: str | None = None) -> Case:
    def make():
        _seed(seed)
        model = set_modes(kept(key, lambda: _leaf_models()[kind](seed)), modes)
        d = model.width if kind == "random_mlp" else _IN_FEATURES[kind]
        return _with_inputs(model, [(seeded_randn(4, d, seed=seed + 100),)]), leaf_types()
    return Case(label, make, data={"kind": kind, "seed": seed, "kept": key})


def _leaf_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex04_wrapping")._leaf_cases()
    return [_leaf_case("MixerNet, leaf_types=(RowNorm,)", "MixerNet", 0, lambda: (RowNorm,)),
            _leaf_case("MixerNet, leaf_types=(RowNorm, Block)", "MixerNet", 0, lambda: (RowNorm, Block))]


_SPEC_MODELS = {"FlagNet": lambda seed: FlagNet(), "_TwoInputFlags": _TwoInputFlags, "_ClipNet": _ClipNet,
                "_SnakeNames": _SnakeNames, "_InPlaceFlag": _InPlaceFlag, "_ModeFlags": _ModeFlags,
                "_SuffixNames": _SuffixNames}
_SPEC_INPUTS = {"FlagNet": (6,), "_TwoInputFlags": (5, 5), "_ClipNet": (4,), "_SnakeNames": (4,), "_InPlaceFlag": (4,),
                "_ModeFlags": (5,), "_SuffixNames": (4, 4)}


def _spec_case(label: str, kind: str, seed: int, flags: dict, modes: dict | None = None,
               key: str | None = None) -> Case:
    def make():
        _seed(seed)
        model = set_modes(kept(key, lambda: _SPEC_MODELS[kind](seed)), modes)
        inputs = [tuple(seeded_randn(3, d, seed=seed + 10 * t + i) for i, d in enumerate(_SPEC_INPUTS[kind]))
                  for t in range(2)]
        return (_with_inputs(model, inputs),)
    return Case(label, make, kwargs=lambda: dict(flags), data={"kept": key})


ORDER_HINT = "ex04.flags_by_name_not_position"


def _spec_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex04_wrapping")._spec_cases()
    return [_spec_case("FlagNet, use_extra=False", "FlagNet", 0, {"use_extra": False}),
            _spec_case("FlagNet, use_extra=True, repeats=3", "FlagNet", 0, {"use_extra": True, "repeats": 3})]
