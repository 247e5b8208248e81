"""The cases of ex12_custom_ops.

A custom operator lives in torch's dispatcher for the life of the process: `custom_op` on a name already defined
replaces that operator (its fake kernel and backward with it), and `Library.define` refuses it. Every case of
register_scaled_gelu hands the learner a namespace no process has used (`fresh_namespace`), so that the
solution, the mutants, the check library's own operators and the learner's own calls never meet.
"""
from __future__ import annotations

import itertools
import os
import warnings

import torch

from autograder.checks.framework import Case
from autograder.checks.ex12_custom_ops.models import (PROBE, exported_model, operators, scaled_gelu, traced_model,
                                                      watch_lint)

_COUNT = itertools.count()


def fresh_namespace(tag: str) -> str:
    """A namespace unused in this process (and in any process forked from it: the pid is part of it)."""
    return f"ex12_{tag}_{os.getpid()}_{next(_COUNT)}"


def _register_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [Case("a fresh namespace", lambda: (fresh_namespace("a"),))]
    return [Case("another namespace, in the same process (unseen)", lambda: (fresh_namespace("b"),))]


def _export(name: str, seed: int = 0, dynamic: bool = False):
    from torch.export import Dim, export
    model, x = exported_model(name, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return export(model, (x,), dynamic_shapes=({0: Dim("batch")},) if dynamic else None)


def _op(spec: str):
    """'fxc12.shift' -> the overload packet; 'fxc12.shift.Tensor' -> that overload; 'aten.gelu' -> aten's."""
    operators()   # the check library's own operators, registered in this process on first use
    parts = spec.split(".")
    packet = getattr(getattr(torch.ops, parts[0]), parts[1])
    return getattr(packet, parts[2]) if len(parts) == 3 else packet


def _count_cases(hidden: bool) -> list[Case]:
    def case(label: str, model: str, op: str, dynamic: bool = False, seed: int = 0) -> Case:
        return Case(label, lambda: (_export(model, seed, dynamic), _op(op)),
                    data={"model": model, "op": op, "dynamic": dynamic})

    if not hidden:
        return [case("TwoGelus(6), the packet fxc12.scaled_gelu", "TwoGelus(6)", "fxc12.scaled_gelu"),
                case("Shifts(4), the packet fxc12.shift (two overloads)", "Shifts(4)", "fxc12.shift"),
                case("Shifts(4), the overload fxc12.shift.Tensor", "Shifts(4)", "fxc12.shift.Tensor")]
    return [
        case("Decoys(5): the same name in another namespace, and scaled_gelu_fast", "Decoys(5)",
             "fxc12.scaled_gelu"),
        case("Decoys(5), the overload fxc12.scaled_gelu.default", "Decoys(5)", "fxc12.scaled_gelu.default"),
        case("Shifts(4), the overload fxc12.shift.default", "Shifts(4)", "fxc12.shift.default"),
        case("Shifts(4) with a dynamic batch, the packet fxc12.shift: both overloads count (unseen)", "Shifts(4)",
             "fxc12.shift", dynamic=True),
        case("TwoGelus(4), aten's gelu: an ATen operator counts the same way", "TwoGelus(4)", "aten.gelu"),
        case("TwoGelus(4) with a dynamic batch", "TwoGelus(4)", "fxc12.scaled_gelu.default", dynamic=True),
        case("RandomOps seed 3 (unseen), the packet", "RandomOps seed 3", "fxc12.scaled_gelu"),
        case("RandomOps seed 8 (unseen), the overload", "RandomOps seed 8", "fxc12.scaled_gelu.default", seed=2),
        case("RandomOps seed 8 (unseen), fxc12.shift: not called", "RandomOps seed 8", "fxc12.shift"),
    ]


def _replace_cases(hidden: bool) -> list[Case]:
    def case(label: str, model: str, op: str = "fxc12.scaled_gelu", seed: int = 0,
             dtype: torch.dtype = torch.float32) -> Case:
        def make():
            gm, x = traced_model(model, seed, dtype)
            object.__setattr__(gm, PROBE, x)
            watch_lint(gm.graph)
            return gm, scaled_gelu, _op(op)
        return Case(label, make, data={"model": model, "op": op})

    if not hidden:
        return [case("GeluBlock(6): the function twice, once with scale= (the packet)", "GeluBlock(6)"),
                case("GeluBlock(6), the overload fxc12.scaled_gelu.default", "GeluBlock(6)",
                     "fxc12.scaled_gelu.default")]
    return [
        case("SameName(5): another function called scaled_gelu stays", "SameName(5)"),
        case("Chained: the function on its own result", "Chained", "fxc12.scaled_gelu.default"),
        case("NoCall(4): nothing to replace", "NoCall(4)"),
        case("GeluBlock(4) in float64", "GeluBlock(4)", seed=3, dtype=torch.float64),
        case("RandomBlocks seed 4 (unseen)", "RandomBlocks seed 4", seed=1),
        case("RandomBlocks seed 11 (unseen), the overload", "RandomBlocks seed 11", "fxc12.scaled_gelu.default"),
    ]
