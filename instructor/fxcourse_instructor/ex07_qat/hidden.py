"""The hidden cases of ex07_qat: what each case function of its `cases` builds for hidden=True (the
instructor's side: reached through autograder.checks.keyring.hidden, never installed where learners work)."""
from __future__ import annotations

import torch
import torch.fx as fx
from torch.ao.quantization import disable_fake_quant
import torch.nn as nn

from fxplayground import ConvBNNet, DropoutNet, Net, QATNet

from autograder.checks.framework import Case, given_again
from autograder.checks.randmodels import random_mlp, seeded_randn, with_unread_call
from autograder.checks.ex07_qat.models import BufferNet, SigmoidHead, TiedNet
from autograder.checks.ex07_qat.cases import (
    _calibrated, _custom_fq, _fresh, _ft_case, _handmade, _lookalikes, _mlp_no_dropout, _prep_case, _prepare_ref,
    _ptq_prepared, _seeded
)


def _prep_cases() -> list[Case]:
    return [
        _prep_case("ConvBNNet in eval mode (unseen)", lambda: _seeded(ConvBNNet, 2).eval(), (2, 3, 8, 8)),
        _prep_case("DropoutNet in eval mode: F.dropout reads self.training (unseen)",
                   lambda: _seeded(DropoutNet, 3).eval(), (4, 6)),
        _prep_case("random model seed 47 with tanh, sigmoid and a shared layer", lambda: random_mlp(47), (3, 8)),
        _prep_case("QATNet with backend='qnnpack'", lambda: _seeded(QATNet, 5), (4, 16), backend="qnnpack"),
        _prep_case("QATNet with backend='onednn' (its own mapping, not x86's)", lambda: _seeded(QATNet, 6), (4, 16),
                   backend="onednn"),
    ]


def _count_cases() -> list[Case]:
    def prep(label, build, shape, seed=0):
        def make():
            return (_fresh(f"count {label}", lambda: _prepare_ref(
                _seeded(build, seed) if isinstance(build, type) else build(), (seeded_randn(*shape),))),)
        return Case(label, make)
    return [
        prep("ConvBNNet prepared for QAT (unseen)", ConvBNNet, (2, 3, 8, 8), seed=2),
        prep("random model seed 47 prepared (tanh, sigmoid, a shared layer)", lambda: random_mlp(47), (3, 8)),
        Case("QATNet prepared with prepare_fx for post-training quantization: observers, no fake-quant",
             lambda: (_fresh("ptq", _ptq_prepared),)),
        Case("QATNet traced with symbolic_trace, not prepared", lambda: (fx.symbolic_trace(_seeded(QATNet, 0)),)),
        Case("ConvBNNet prepared for QAT, its fake-quant switched off (disable_fake_quant): still fake-quantize "
             "modules", lambda: (_fresh("count disabled", lambda: _prepare_ref(_seeded(ConvBNNet, 3),
                                (seeded_randn(2, 3, 8, 8),)).apply(disable_fake_quant)),)),
        Case("a hand-built graph with a fake-quant call on the input whose value nobody reads",
             lambda: (with_unread_call(_handmade(), "input_quant"),)),
        Case("a hand-built graph: one fake-quant called twice, a learnable fake-quant, an observer named "
             "'fake_quant_stats'", lambda: (_handmade(),)),
        Case("a hand-built graph: a FakeQuantizeBase subclass named RoundTrip, an nn.Identity subclass named "
             "NotAFakeQuantize called twice", lambda: (_custom_fq(),)),
        Case("a hand-built graph: a fake-quant at the nested target 'sub.fq' called twice, a call_function "
             "torch.fake_quantize_per_tensor_affine, a module with a 'fake_quant_enabled' buffer that is no "
             "FakeQuantizeBase", lambda: (_lookalikes(),)),
        given_again("a hand-built graph given again, after a pass added a call of its fake-quant 'input_quant' on "
                    "its input in place", lambda: (_handmade(),), lambda gm: with_unread_call(gm, "input_quant")),
    ]


def _ft_cases() -> list[Case]:
    return [
        _ft_case("ConvBNNet handed over in eval mode, 2 batches, steps=3, lr=0.05",
                 lambda: _seeded(lambda: ConvBNNet(4, 3), 1), (3, 6, 6), 3, 2, 3, 0.05, eval_mode=True, seed=1),
        _ft_case("QATNet(8, 16, 3), 5 batches but steps=2 (only the first two are used)",
                 lambda: _seeded(lambda: QATNet(8, 16, 3), 2), (8,), 3, 5, 2, 0.2, seed=2),
        _ft_case("random model, 2 batches cycled over steps=5, lr=0.3",
                 lambda: _mlp_no_dropout(3), (_mlp_no_dropout(3).width,), 3, 2, 5, 0.3, seed=3),
        _ft_case("QATNet(8, 16, 3), steps=0 (nothing to do)", lambda: _seeded(lambda: QATNet(8, 16, 3), 4),
                 (8,), 3, 2, 0, 0.1, seed=4),
        _ft_case("QATNet(8, 16, 3) handed over in eval mode, steps=0 (only the mode changes)",
                 lambda: _seeded(lambda: QATNet(8, 16, 3), 4), (8,), 3, 2, 0, 0.1, eval_mode=True, seed=4),
        _ft_case("QATNet(8, 16, 3) holding the gradients of an earlier loss.backward(), steps=3, lr=0.1",
                 lambda: _seeded(lambda: QATNet(8, 16, 3), 5), (8,), 3, 2, 3, 0.1, seed=5, stale_grads=True),
        _ft_case("QATNet(8, 16, 3) on inputs a hundred times larger (gradient norms near 100), steps=3, lr=0.003",
                 lambda: _seeded(lambda: QATNet(8, 16, 3), 6), (8,), 3, 2, 3, 0.003, seed=6, scale=100.0),
    ]


def _int8_cases() -> list[Case]:
    def case(label, build, shape, **kw):
        return Case(label, _calibrated(label, build, shape, **kw), data={"shape": shape})
    return [
        case("ConvBNNet prepared and calibrated: ConvBn2d must fold (unseen)", lambda: _seeded(ConvBNNet, 2),
             (4, 3, 8, 8), seed=3),
        case("a model ending in torch.sigmoid (unseen)", lambda: _seeded(SigmoidHead, 4), (8, 6), seed=4),
        case("random model seed 19 (tanh, sigmoid, a chain of linears)", lambda: random_mlp(19), (6, 4), seed=5),
    ]


def _size_cases() -> list[Case]:
    return [
        Case("a model with buffers and no parameters (unseen)", lambda: (BufferNet(),)),
        Case("nn.ReLU(): an empty state_dict", lambda: (nn.ReLU(),)),
        Case("tied weights: one tensor under two names", lambda: (_seeded(TiedNet, 1),)),
        Case("a model prepared for QAT (fake-quant buffers)",
             lambda: (_prepare_ref(_seeded(Net, 2), (seeded_randn(2, 8),)),)),
        Case("random model seed 12", lambda: (random_mlp(12),)),
        given_again("random model seed 13 given again, after a buffer of 64 floats was registered on it in place",
                    lambda: (random_mlp(13),), lambda model: model.register_buffer("extra", torch.ones(64))),
    ]
