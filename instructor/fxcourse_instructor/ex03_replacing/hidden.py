"""The hidden cases of ex03_replacing: what each case function of its `cases` builds for hidden=True (the
instructor's side: reached through autograder.checks.keyring.hidden, never installed where learners work)."""
from __future__ import annotations

import operator

import torch
import torch.nn.functional as F

from fxplayground import LinearChain, Net, ThreeReluNet, TinyNet

from autograder.checks.framework import Case
from autograder.checks.randmodels import random_mlp
from autograder.checks.ex03_replacing.models import (
    ClampFunctionNet, DeadNodesNet, InplaceAfterLinearNet, InplaceReluNet, KeywordReluNet, NamesakeReluNet,
    NestedAndTopLinear, PlainAndInplaceReluNet, ReluCousinsNet, ReluLikeNet, ReluOutputNet, KwargsNet,
    SharedLinearNet, SharedReluNet, SubclassLinearNet, SwapNet
)
from autograder.checks.ex03_replacing.cases import _prepare


def _swap_cases() -> list[Case]:
    def case(label, make, old, new, eager, *, keywords=False):
        if keywords:
            return Case(label, lambda: (make(),), kwargs=lambda: {"old": old, "new": new},
                        data={"old": old, "new": new, "eager": eager})
        return Case(label, lambda: (make(), old, new), data={"old": old, "new": new, "eager": eager})

    tiny = lambda: _prepare(TinyNet, (5, 4), seed=0)  # noqa: E731
    swap = lambda: _prepare(SwapNet, (4, 5), seed=1)  # noqa: E731
    return [
        case("SwapNet, torch.relu -> torch.tanh (F.relu, also named 'relu', must stay)", swap, torch.relu,
             torch.tanh, [(torch.relu, torch.tanh)]),
        case("SwapNet, F.relu -> F.silu (torch.relu must stay)", swap, F.relu, F.silu, [(F.relu, F.silu)]),
        case("SwapNet, torch.sigmoid -> torch.tanh given as keywords (the .sigmoid() method must stay)", swap,
             torch.sigmoid, torch.tanh, [(torch.sigmoid, torch.tanh)], keywords=True),
        case("SwapNet, operator.add -> operator.sub", swap, operator.add, operator.sub,
             [(torch.Tensor.add, torch.Tensor.sub)]),
        case("torch.sum(h, dim=1, keepdim=True) -> torch.mean: the keyword arguments stay",
             lambda: _prepare(KwargsNet, (3, 4), seed=2), torch.sum, torch.mean, [(torch.sum, torch.mean)]),
        case("TinyNet, torch.tanh -> torch.sigmoid (no node targets old)", tiny, torch.tanh, torch.sigmoid, []),
        case("random model seed 31, torch.relu -> torch.sigmoid",
             lambda: _prepare(lambda: random_mlp(31, width=6, steps=("residual", "relu_fn", "linear", "residual")),
                              (3, 6), seed=31),
             torch.relu, torch.sigmoid, [(torch.relu, torch.sigmoid)]),
        case("DeadNodesNet: a torch.relu nobody reads, a dead torch.tanh and an in-place h.add_(1.0), torch.relu -> "
             "torch.sigmoid", lambda: _prepare(DeadNodesNet, (4, 6), seed=32), torch.relu, torch.sigmoid,
             [(torch.relu, torch.sigmoid)]),
    ]


def _clamp_cases() -> list[Case]:
    def case(label, make, max_value, *, keyword=False):
        data = {"max_value": max_value}
        if keyword:
            return Case(label, lambda: (make(),), kwargs=lambda: {"max_value": max_value}, data=data)
        return Case(label, lambda: (make(), max_value), data=data)
    return [
        case("two torch.relu calls and an F.relu (F.relu must stay), max_value=0.5",
             lambda: _prepare(ClampFunctionNet, (5, 6), seed=2), 0.5),
        case("a torch.relu whose value is returned too, next to .relu(), max_value=6.0 by keyword",
             lambda: _prepare(ReluOutputNet, (4, 5), seed=3), 6.0, keyword=True),
        case("ThreeReluNet (no torch.relu: nothing changes), max_value=1.0",
             lambda: _prepare(ThreeReluNet, (3, 8), seed=4), 1.0),
        case("ReluLikeNet: F.relu6, F.leaky_relu, nn.ReLU6, nn.LeakyReLU must stay, max_value=0.75",
             lambda: _prepare(ReluLikeNet, (4, 6), seed=42), 0.75),
        case("KeywordReluNet: torch.relu(input=h), its input by keyword, max_value=0.5",
             lambda: _prepare(KeywordReluNet, (4, 6), seed=43), 0.5),
        case("random model seed 41, max_value=2 (an int)",
             lambda: _prepare(lambda: random_mlp(41, width=6, steps=("residual", "relu_fn", "relu_mod",
                                                                     "residual", "relu_method")), (5, 6),
                              seed=41), 2),
        case("torch.relu next to torch.relu_ (the in-place function must stay), max_value=0.5",
             lambda: _prepare(PlainAndInplaceReluNet, (4, 6), seed=44), 0.5),
        case("a function of the model's own named relu (fx.wrap) next to torch.relu, max_value=1.0",
             lambda: _prepare(NamesakeReluNet, (4, 6), seed=45), 1.0),
        case("TinyNet, max_value=0 (every torch.relu becomes 0)", lambda: _prepare(TinyNet, (5, 4), seed=46), 0),
        case("DeadNodesNet: a torch.relu nobody reads, a dead torch.tanh and an in-place h.add_(1.0), max_value=0.5",
             lambda: _prepare(DeadNodesNet, (4, 6), seed=47), 0.5),
    ]


def _gelu_cases() -> list[Case]:
    return [
        Case("in-place ReLUs: torch.relu_, F.relu(inplace=True), nn.ReLU(inplace=True), .relu_()",
             lambda: (_prepare(InplaceReluNet, (5, 6), seed=5),)),
        Case("one nn.ReLU called twice, another nested in a Sequential",
             lambda: (_prepare(SharedReluNet, (4, 4), seed=6),)),
        Case("a torch.relu whose value is returned too",
             lambda: (_prepare(ReluOutputNet, (3, 5), seed=7),)),
        Case("random model seed 51 (ReLU modules in a ModuleDict)",
             lambda: (_prepare(lambda: random_mlp(51, width=6, steps=("relu_mod", "linear", "relu_method",
                                                                      "relu_mod", "residual", "relu_fn")),
                               (4, 6), seed=51),)),
        Case("TinyNet (torch.relu only)", lambda: (_prepare(TinyNet, (6, 4), seed=8),)),
        Case("ReluLikeNet: F.relu6, F.leaky_relu, nn.ReLU6, nn.LeakyReLU must stay",
             lambda: (_prepare(ReluLikeNet, (4, 6), seed=52),)),
        Case("KeywordReluNet: torch.relu(input=h), its input by keyword",
             lambda: (_prepare(KeywordReluNet, (4, 6), seed=53),)),
        Case("ReluCousinsNet: nn.RReLU and nn.PReLU compute no ReLU and must stay, next to an nn.ReLU",
             lambda: (_prepare(ReluCousinsNet, (4, 6), seed=54),)),
        Case("a function of the model's own named relu (fx.wrap) next to torch.relu",
             lambda: (_prepare(NamesakeReluNet, (4, 6), seed=55),)),
        Case("DeadNodesNet: a torch.relu and an nn.ReLU nobody reads, a dead torch.tanh and an in-place h.add_(1.0)",
             lambda: (_prepare(DeadNodesNet, (4, 6), seed=56),)),
    ]


def _matmul_cases() -> list[Case]:
    return [
        Case("ThreeReluNet (fc2 has no bias)", lambda: (_prepare(ThreeReluNet, (4, 8), seed=9),)),
        Case("a top-level Linear 'fc' and a nested one 'block.0'",
             lambda: (_prepare(NestedAndTopLinear, (3, 5), seed=13),)),
        Case("LinearChain 6->12->5 without biases (targets 'layers.0', 'layers.1')",
             lambda: (_prepare(lambda: LinearChain((6, 12, 5), bias=False), (3, 6), seed=10),)),
        Case("one Linear called twice, on 3-d inputs",
             lambda: (_prepare(SharedLinearNet, (2, 3, 6), seed=11),)),
        Case("random model seed 61 (ModuleDict names, a chain, a Linear called twice)",
             lambda: (_prepare(lambda: random_mlp(61, width=6, steps=("chain", "shared", "relu_fn", "linear")),
                               (4, 6), seed=61),)),
        Case("Net (with an nn.ReLU that must stay)", lambda: (_prepare(Net, (3, 8), seed=12),)),
        Case("an nn.Linear subclass (NonDynamicallyQuantizableLinear 'out_proj') after a plain Linear",
             lambda: (_prepare(SubclassLinearNet, (3, 5), seed=14),)),
        Case("h.relu_() on a Linear's output, its result unused",
             lambda: (_prepare(InplaceAfterLinearNet, (4, 6), seed=15),)),
        Case("DeadNodesNet: an nn.Linear call nobody reads, a dead torch.tanh and an in-place h.add_(1.0)",
             lambda: (_prepare(DeadNodesNet, (4, 6), seed=16),)),
    ]
