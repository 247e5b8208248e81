"""The hidden cases of ex06_fusing: what each case function of its `cases` builds for hidden=True (the
instructor's side: reached through autograder.checks.keyring.hidden, never installed where learners work)."""
from __future__ import annotations

import torch
import torch.nn as nn

from fxplayground import ConvBNNet, LinearChain, SharedConvNet

from autograder.checks.framework import Case, given_again
from autograder.checks.randmodels import manual_seed, random_convnet, random_mlp
from autograder.checks.ex06_fusing.models import (
    BiasRead, BigEps, Conv1dBN, ConvTransposeBN, ConvTwoSitesOneBN, ForkedChain, FunctionalBreak, KeywordBN,
    KeywordChain, MixedChain, ModuleFedBN, MoreTakenNames, NameClash, NoStatsBN, SelfChain, SharedBN, SharedFirst,
    SharedSecond, TakenNames, TwoBlocks, TwoUserConv
)
from autograder.checks.ex06_fusing.cases import _conv_bn, _linear, _model_case, _pair, _random_case, _train_case


def _pair_cases() -> list[Case]:
    def two(i, h, o, b1, b2, seed, dtype=torch.float32, lead=(5,), mismatch=None):
        return lambda: _pair(_linear(i, h, b1, seed, dtype), _linear(mismatch or h, o, b2, seed + 100, dtype), seed,
                             lead)

    def from_random_mlp(seed):
        def make():
            m = random_mlp(seed)
            a, b = next((m.layers[k], m.layers[k[:-1] + "b"]) for k in m.layers if k.endswith("a"))
            return _pair(a, b, seed)
        return make

    return [
        Case("Linear(5->7, bias=False) then Linear(7->3): first without bias", two(5, 7, 3, False, True, 2)),
        Case("Linear(5->7) then Linear(7->7, bias=False): second without bias", two(5, 7, 7, True, False, 3)),
        Case("Linear(4->9, bias=False) then Linear(9->4, bias=False): both without bias",
             two(4, 9, 4, False, False, 4)),
        Case("float64 layers Linear(6->10) then Linear(10->3)", two(6, 10, 3, True, True, 5, torch.float64)),
        Case("Linear(3->12) then Linear(12->3) on a (2, 4, 3) input", two(3, 12, 3, True, True, 6, lead=(2, 4))),
        Case("Linear(7->7) then Linear(7->7), square", two(7, 7, 7, True, True, 7)),
        Case("the 'chain' pair of random model seed 39 (unseen)", from_random_mlp(39)),
        Case("the 'chain' pair of random model seed 0 (unseen)", from_random_mlp(0)),
        Case("Linear(4->6) then Linear(5->3): the widths do not meet", two(4, 6, 3, True, True, 8, mismatch=5),
             data={"raises": "ValueError"}),
        Case("float64 Linear(5->7, bias=False) then Linear(7->3)", two(5, 7, 3, False, True, 17, torch.float64)),
        Case("float64 Linear(4->6, bias=False) then Linear(6->2, bias=False)",
             two(4, 6, 2, False, False, 18, torch.float64)),
        Case("Linear(4->6) then Linear(5->4): the widths do not meet, though second's output is first's input",
             two(4, 6, 4, True, True, 19, mismatch=5), data={"raises": "ValueError"}),
        given_again("Linear(5->7) then Linear(7->3) given again, after first's weight was doubled in place",
                    two(5, 7, 3, True, True, 20), _double_first_weight),
    ]


def _chains_cases() -> list[Case]:
    return [
        _model_case("MixedChain: five Linears in a row, biases on and off (unseen)", MixedChain, 3, (4, 5)),
        _model_case("ForkedChain: l1's output has two users (unseen)", ForkedChain, 4, (4, 6)),
        _model_case("SharedSecond: the second Linear of a chain is called elsewhere too (unseen)", SharedSecond, 5,
                    (4, 5)),
        _model_case("SharedFirst: the first Linear of a chain is called elsewhere too (unseen)", SharedFirst, 6,
                    (4, 5)),
        _model_case("SelfChain: a(a(x)) + a(flip(x)) (unseen)", SelfChain, 7, (4, 6)),
        _model_case("FunctionalBreak: F.linear between two Linears (unseen)", FunctionalBreak, 8, (4, 4)),
        _model_case("NameClash: submodules are already called fused_a and fused_a_ (unseen)", NameClash, 12, (4, 5)),
        _model_case("KeywordChain: a(input=x) -> b -> c -> d(input=h), keyword calls are left alone (unseen)",
                    KeywordChain, 14, (3, 5)),
        _model_case("LinearChain 4->32->8->4 in float64 (unseen)", lambda: LinearChain((4, 32, 8, 4)), 9, (3, 4),
                    dtype=torch.float64),
        _model_case("TakenNames: submodules are already called fused, fused_0 and fused_1 (unseen)", TakenNames, 15,
                    (4, 5)),
        _model_case("BiasRead: b(a(x)) + b.bias, the graph still reads b's bias after fusing a -> b (unseen)",
                    BiasRead, 16, (4, 5)),
        _model_case("MoreTakenNames: submodules already called fused_linear_0, merged_0, fused0, linear_0, "
                    "fused_a_b and fused_ab, and a parameter fused_linear_1 (unseen)", MoreTakenNames, 17, (4, 5)),
    ] + [_random_case(f"random model seed {s} (unseen)", random_mlp, s) for s in (39, 10, 16, 0)]


def _fold_cases() -> list[Case]:
    def pair(cin, cout, k, seed, bias=True, affine=True, eps=1e-5, dtype=torch.float32, var=(0.5, 1.5), stats=True,
             **kw):
        def make():
            manual_seed(seed)
            conv = nn.Conv2d(cin, cout, k, bias=bias, **kw).to(dtype)
            bn = nn.BatchNorm2d(cout, eps=eps, affine=affine, track_running_stats=stats).to(dtype)
            return _conv_bn(conv, bn, seed, var)
        return make

    def from_random(seed):
        def make():
            m = random_convnet(seed)
            return _conv_bn(m.features[0], m.features[1], seed)
        return make

    return [
        Case("Conv2d(4->6, 3) + BatchNorm2d(6, affine=False)", pair(4, 6, 3, 2, affine=False)),
        Case("Conv2d(3->5, 1, bias=False) + BatchNorm2d(5, affine=False)", pair(3, 5, 1, 3, bias=False, affine=False)),
        Case("Conv2d(3->4, 3) + BatchNorm2d(4, eps=0.1)", pair(3, 4, 3, 4, eps=0.1)),
        Case("float64 Conv2d(3->6, 3) + BatchNorm2d(6)", pair(3, 6, 3, 5, dtype=torch.float64)),
        Case("Conv2d(4->6, 3, stride=2, padding=1, dilation=1, groups=2) + BatchNorm2d(6)",
             pair(4, 6, 3, 6, stride=2, padding=1, groups=2)),
        Case("Conv2d(3->3, 3, padding=2, dilation=2, bias=False) + BatchNorm2d(3)",
             pair(3, 3, 3, 7, bias=False, padding=2, dilation=2)),
        Case("first block of random convnet seed 0 (unseen)", from_random(0)),
        Case("first block of random convnet seed 5 (unseen)", from_random(5)),
        Case("Conv2d(3->4, 3, padding=1, padding_mode='reflect') + BatchNorm2d(4)",
             pair(3, 4, 3, 8, padding=1, padding_mode="reflect")),
        Case("Conv2d(2->4, 3, padding=1, padding_mode='circular', bias=False) + BatchNorm2d(4, affine=False)",
             pair(2, 4, 3, 9, bias=False, affine=False, padding=1, padding_mode="circular")),
        Case("Conv2d(3->4, 3, bias=False) + BatchNorm2d(4, eps=0.1)", pair(3, 4, 3, 11, bias=False, eps=0.1)),
        Case("Conv2d(3->4, 3) + BatchNorm2d(4, track_running_stats=False): nothing to fold",
             pair(3, 4, 3, 10, stats=False), data={"raises": "ValueError"}),
        given_again("Conv2d(3->4, 3) + BatchNorm2d(4) given again, after the BatchNorm's running_mean moved by 0.5 in "
                    "place", pair(3, 4, 3, 12), _move_running_mean),
    ]


def _double_first_weight(first, second) -> None:
    with torch.no_grad():
        first.weight.mul_(2.0)


def _move_running_mean(conv, bn) -> None:
    bn.running_mean.add_(0.5)


def _fuse_cases() -> list[Case]:
    return [
        _model_case("TwoUserConv: a conv output with two users (unseen)", TwoUserConv, 3, (2, 3, 6, 6), bn=True),
        _model_case("NoStatsBN: BatchNorm2d(track_running_stats=False) (unseen)", NoStatsBN, 4, (3, 3, 6, 6),
                    bn=True),
        _model_case("BigEps: BatchNorm2d(eps=0.1) (unseen)", BigEps, 5, (2, 3, 6, 6), bn=True),
        _model_case("ModuleFedBN: a BatchNorm2d after an nn.ReLU module stays (unseen)", ModuleFedBN, 9,
                    (2, 3, 6, 6), bn=True),
        _model_case("Conv1dBN: Conv1d -> BatchNorm1d stays, Conv2d -> BatchNorm2d folds (unseen)", Conv1dBN, 8,
                    (2, 3, 7), bn=True),
        _model_case("ConvBNNet in float64, small running_var (unseen)", ConvBNNet, 6, (2, 3, 8, 8), bn=True,
                    dtype=torch.float64, var=(1e-3, 1e-2)),
        _model_case("TwoBlocks: conv1 -> bn1 beside features.0 -> features.1, alike but for the names (unseen)",
                    TwoBlocks, 10, (2, 3, 6, 6), bn=True),
        _train_case("ConvBNNet in eval mode except bn2, left in training mode (unseen)", ConvBNNet, 7,
                    (2, 3, 8, 8), "gm.bn2 is in training mode (gm itself is in eval mode)", only="bn2"),
        _train_case("ConvBNNet in eval mode but for gm itself, left in training mode (unseen)", ConvBNNet, 12,
                    (2, 3, 8, 8), "gm itself is in training mode (gm.training is True), though every BatchNorm2d "
                    "it calls is in eval mode", only=""),
        _train_case("BigEps in eval mode except pool_bn, a BatchNorm2d after a relu (unseen)", BigEps, 13,
                    (2, 3, 6, 6), "gm.pool_bn, a BatchNorm2d the graph calls, is in training mode (that it follows "
                    "a relu, not a conv, does not matter)", only="pool_bn"),
        _model_case("Conv1dBN in eval mode except bn1d, a BatchNorm1d left in training mode (unseen)", Conv1dBN, 14,
                    (2, 3, 7), bn=True, train=("bn1d",)),
        _model_case("KeywordBN: conv1 -> bn1(input=...) called by keyword, then conv2 -> bn2 (unseen)", KeywordBN, 15,
                    (2, 3, 6, 6), bn=True),
        _model_case("ConvTwoSitesOneBN: conv(bn(conv(x))), one conv at two sites, only one of them before a "
                    "BatchNorm2d (unseen)", ConvTwoSitesOneBN, 16, (2, 3, 6, 6), bn=True),
        _model_case("ConvTransposeBN: ConvTranspose2d -> BatchNorm2d stays, Conv2d -> BatchNorm2d folds (unseen)",
                    ConvTransposeBN, 17, (2, 4, 5, 5), bn=True),
        _model_case("SharedBN: one BatchNorm2d after a conv and after a relu (unseen)", SharedBN, 18, (2, 3, 6, 6),
                    bn=True),
        _train_case("SharedConvNet in training mode: nothing it could fold, and still a ValueError (unseen)",
                    SharedConvNet, 19, (2, 4, 8, 8), "the model is in training mode, though it has no pair to fold"),
        _train_case("NoStatsBN in eval mode except bn1, a BatchNorm2d without running statistics (unseen)", NoStatsBN,
                    20, (2, 3, 6, 6), "gm.bn1, a BatchNorm2d the graph calls, is in training mode (that it has no "
                    "running statistics does not matter)", only="bn1"),
        _train_case("ConvBNNet in eval mode except bn1, with a submodule 'spare' nobody calls (unseen)", ConvBNNet, 21,
                    (2, 3, 8, 8), "gm.bn1 is in training mode (gm itself is in eval mode)", only="bn1",
                    spare=True),
        _model_case("ConvBNNet with a BatchNorm2d 'spare_bn' nobody calls, in training mode (unseen)", ConvBNNet, 22,
                    (2, 3, 8, 8), bn=True, spare_bn=True),
    ] + [_random_case(f"random convnet seed {s} (unseen)", random_convnet, s) for s in (5, 11, 0, 9)]
