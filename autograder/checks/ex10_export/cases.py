"""The cases of ex10_export: the exported programs each graded function is called on, exported once per process."""
from __future__ import annotations

import copy
import warnings
from typing import Any

import torch

from autograder.checks.randmodels import current_salt
from autograder.checks import keyring
from autograder.checks.framework import Case
from autograder.checks.ex10_export.models import PROBE, _gen, _model, aten


_PROGRAMS: dict = {}


def _program(name: str, dynamic: bool = False, seed: int = 0):
    """The exported program of one model (cached per process), as a fresh deep copy, with its probe input."""
    from torch.export import Dim, export
    key = (name, dynamic, seed, current_salt())
    if key not in _PROGRAMS:
        model, x = _model(name, seed)
        shapes = ({0: Dim("batch")},) if dynamic else None
        _PROGRAMS[key] = (export(model, (x,), dynamic_shapes=shapes), model, x)
    ep, model, x = _PROGRAMS[key]
    with warnings.catch_warnings():   # torch's own FutureWarning about its pytree specs, copying a program
        warnings.simplefilter("ignore", FutureWarning)
        return copy.deepcopy(ep), model, x


def _ep_case(label: str, name: str, dynamic: bool = False, seed: int = 0, **data: Any) -> Case:
    return Case(label, lambda: (_program(name, dynamic, seed)[0],),
                data={"model": name, "dynamic": dynamic, "seed": seed, **data})


def _ep_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex10_export")._ep_cases()
    return [_ep_case("PatchNet(6), exported", "PatchNet(6)"),
            _ep_case("Tagger(8), exported with a dynamic batch", "Tagger(8)", dynamic=True)]


def _export_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex10_export")._export_cases()

    def case(name: str, seed: int = 0, batches: tuple = (1, 5), dtype=torch.float32, train: bool = False):
        def make():
            model, x = _model(name, seed)
            model.to(dtype).train(train)   # Sequence computes the same in training mode: no dropout, no BatchNorm
            object.__setattr__(model, PROBE, [torch.randn(b, *x.shape[1:], generator=_gen(seed + b), dtype=dtype)
                                              for b in batches])
            return model, x.to(dtype)
        return make
    return [Case("PatchNet(6) on a batch of 2", case("PatchNet(6)")),
            Case("Tagger(8) on a batch of 3 (its argument is `inp`)", case("Tagger(8)"))]


# (model, old, new, name of the reference model's operator change)
SWAPS = {
    "relu -> sigmoid": (aten.relu.default, aten.sigmoid.default),
    "sum.dim_IntList -> mean.dim": (aten.sum.dim_IntList, aten.mean.dim),
    "gelu -> relu": (aten.gelu.default, aten.relu.default),
    "add.Tensor -> sub.Tensor": (aten.add.Tensor, aten.sub.Tensor),
    "div.Tensor -> mul.Tensor": (aten.div.Tensor, aten.mul.Tensor),
}


def _swap_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex10_export")._swap_cases()

    def case(label: str, name: str, swap: str, dynamic: bool = False) -> Case:
        old, new = SWAPS[swap]
        def make():
            ep, _, x = _program(name, dynamic)
            object.__setattr__(ep, PROBE, x)
            return ep, old, new
        return Case(label, make, data={"model": name, "dynamic": dynamic, "swap": swap})
    return [case("PatchNet(6): relu -> sigmoid", "PatchNet(6)", "relu -> sigmoid"),
            case("Tagger(8): relu -> sigmoid (two relus and a leaky_relu)", "Tagger(8)", "relu -> sigmoid")]
