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

from autograder.checks import keyring
from autograder.checks.framework import Case
from autograder.checks.ex12_custom_ops.models import (PROBE, exported_model, operators, scaled_gelu, traced_model,
                                                      watch_lint)

_COUNT = itertools.count()


def fresh_namespace(tag: str) -> str:
    """A namespace unused in this process (and in any process forked from it: the pid is part of it)."""
    return f"ex12_{tag}_{os.getpid()}_{next(_COUNT)}"


def _register_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex12_custom_ops")._register_cases()
    return [Case("a fresh namespace", lambda: (fresh_namespace("a"),))]


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
    if hidden:
        return keyring.hidden("ex12_custom_ops")._count_cases()

    def case(label: str, model: str, op: str, dynamic: bool = False, seed: int = 0) -> Case:
        return Case(label, lambda: (_export(model, seed, dynamic), _op(op)),
                    data={"model": model, "op": op, "dynamic": dynamic})
    return [case("TwoGelus(6), the packet fxc12.scaled_gelu", "TwoGelus(6)", "fxc12.scaled_gelu"),
            case("Shifts(4), the packet fxc12.shift (two overloads)", "Shifts(4)", "fxc12.shift"),
            case("Shifts(4), the overload fxc12.shift.Tensor", "Shifts(4)", "fxc12.shift.Tensor")]


def _replace_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex12_custom_ops")._replace_cases()

    def case(label: str, model: str, op: str = "fxc12.scaled_gelu", seed: int = 0,
             dtype: torch.dtype = torch.float32) -> Case:
        def make():
            gm, x = traced_model(model, seed, dtype)
            object.__setattr__(gm, PROBE, x)
            watch_lint(gm.graph)
            return gm, scaled_gelu, _op(op)
        return Case(label, make, data={"model": model, "op": op})
    return [case("GeluBlock(6): the function twice, once with scale= (the packet)", "GeluBlock(6)"),
            case("GeluBlock(6), the overload fxc12.scaled_gelu.default", "GeluBlock(6)",
                 "fxc12.scaled_gelu.default")]
