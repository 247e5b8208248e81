"""The hidden cases of ex12_custom_ops: what each case function of its `cases` builds for hidden=True (the
instructor's side: reached through autograder.checks.keyring.hidden, never installed where learners work)."""
from __future__ import annotations

import torch

from autograder.checks.framework import Case
from autograder.checks.ex12_custom_ops.models import PROBE, scaled_gelu, traced_model, watch_lint
from autograder.checks.ex12_custom_ops.cases import _export, _op, fresh_namespace


def _register_cases() -> list[Case]:
    return [Case("another namespace, in the same process (unseen)", lambda: (fresh_namespace("b"),))]


def _count_cases() -> list[Case]:
    def case(label: str, model: str, op: str, dynamic: bool = False, seed: int = 0) -> Case:
        return Case(label, lambda: (_export(model, seed, dynamic), _op(op)),
                    data={"model": model, "op": op, "dynamic": dynamic})
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
        case("CondOps(4): one more call inside a branch of torch.cond, a node of its subgraph (unseen)", "CondOps(4)",
             "fxc12.scaled_gelu"),
        case("TwoGelus(4), aten's linear: the program as exported, not decomposed further (unseen)", "TwoGelus(4)",
             "aten.linear"),
        case("Pads(4), the packet fxc12.pad, whose overloads are Scalar and Tensor, none default (unseen)", "Pads(4)",
             "fxc12.pad"),
    ]


def _replace_cases() -> list[Case]:
    def case(label: str, model: str, op: str = "fxc12.scaled_gelu", seed: int = 0,
             dtype: torch.dtype = torch.float32) -> Case:
        def make():
            gm, x = traced_model(model, seed, dtype)
            object.__setattr__(gm, PROBE, x)
            watch_lint(gm.graph)
            return gm, scaled_gelu, _op(op)
        return Case(label, make, data={"model": model, "op": op})
    return [
        case("SameName(5): another function called scaled_gelu stays", "SameName(5)"),
        case("Chained: the function on its own result", "Chained", "fxc12.scaled_gelu.default"),
        case("NoCall(4): nothing to replace", "NoCall(4)"),
        case("GeluBlock(4) in float64", "GeluBlock(4)", seed=3, dtype=torch.float64),
        case("RandomBlocks seed 4 (unseen)", "RandomBlocks seed 4", seed=1),
        case("RandomBlocks seed 11 (unseen), the overload", "RandomBlocks seed 11", "fxc12.scaled_gelu.default"),
    ]
