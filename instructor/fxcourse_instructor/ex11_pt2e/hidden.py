"""The hidden cases of ex11_pt2e: what each case function of its `cases` builds for hidden=True (the
instructor's side: reached through autograder.checks.keyring.hidden, never installed where learners work)."""
from __future__ import annotations

import torch

from autograder.checks.framework import Case
from autograder.checks.randmodels import random_mlp, with_unread_call
from autograder.checks.ex11_pt2e.models import (
    PairNet, SigmoidHead, _diagnostic, _dropout, _handmade_qdq, _more_fake_quants, _more_qdq, _nested_fake_quants,
    _qatnet, _seeded, _x
)
from autograder.checks.ex11_pt2e.cases import (
    _HIDDEN_ORDER, _calibrated, _converted, _fresh, _ft_case, _prep_case, _prepared
)


def _prep_cases() -> list[Case]:
    return [
        _prep_case("DropoutNet handed over in eval mode: dropout must train (unseen)", _dropout, (4, 6),
                   eval_mode=True),
        _prep_case("a residual add and a sigmoid head (unseen)", lambda: _seeded(SigmoidHead, 5), (4, 6)),
        _prep_case("random model seed 47: a chain, a branch and a shared layer", lambda: random_mlp(47), (3, 8)),
        _prep_case("PairNet: two inputs, each with a dynamic batch", lambda: _seeded(PairNet, 2), (3, 6), False,
                   (3, 5)),
    ]


def _switched_off(key: str):
    """The prepared model of `key` with every fake-quant switched off (disable_fake_quant()): still fake-quants."""
    gm = _prepared(key)
    for m in gm.modules():
        if hasattr(m, "disable_fake_quant") and hasattr(m, "fake_quant_enabled"):
            m.disable_fake_quant()
    return gm


def _count_cases() -> list[Case]:
    return [
        Case("DropoutNet prepared (unseen)", lambda: (_prepared("DropoutNet"),)),
        Case("random model seed 47 prepared: a shared layer", lambda: (_prepared("random 47"),)),
        Case("QATNet prepared with a quantizer without is_qat=True: observers, no fake-quant",
             lambda: (_prepared("QATNet PTQ"),)),
        Case("QATNet exported, not prepared", lambda: (_fresh("exported QATNet", lambda: torch.export.export(
            _qatnet(), (_x(4, 16),)).module()),)),
        Case("another hand-built graph: the same modules called in another order and number (unseen)",
             lambda: (_diagnostic(_HIDDEN_ORDER, spares=3),)),
        Case("a hand-built graph with fake-quants in a submodule, called as 'blk.fq' (unseen)",
             lambda: (_nested_fake_quants(),)),
        Case("DropoutNet prepared, every fake-quant switched off (disable_fake_quant): still fake-quantize modules",
             lambda: (_switched_off("DropoutNet"),)),
        Case("the hand-built graph with a fake-quant call on the input whose value nobody reads",
             lambda: (with_unread_call(_diagnostic(), "activation_post_process_0"),)),
        Case("a hand-built graph: one fake-quant under two names, two call_function fake-quantizes, a nested "
             "GraphModule calling a fake-quant of its own (unseen)", lambda: (_more_fake_quants(),)),
    ]


def _ft_cases() -> list[Case]:
    return [
        _ft_case("DropoutNet prepared (dropout trains), 2 batches, steps=3, lr=0.05 (unseen)", "DropoutNet", 2, 2,
                 3, 0.05, seed=1),
        _ft_case("random model seed 47, 5 batches but steps=2 (only the first two are used)", "random 47", 3, 5, 2,
                 0.2, seed=2),
        _ft_case("QATNet prepared, 2 batches cycled over steps=5, lr=0.3", "QATNet", 4, 2, 5, 0.3, seed=3),
        _ft_case("QATNet prepared, steps=0 (nothing to do)", "QATNet", 4, 2, 0, 0.1, seed=4),
        _ft_case("QATNet prepared, holding the gradients of an earlier loss.backward(), steps=3, lr=0.1", "QATNet",
                 4, 2, 3, 0.1, seed=5, stale_grads=True),
    ]


def _qdq_cases() -> list[Case]:
    return [
        Case("DropoutNet prepared and calibrated: dropout must stop (unseen)", lambda: (_calibrated("DropoutNet"),)),
        Case("a residual add and a sigmoid head, prepared and calibrated (unseen)",
             lambda: (_calibrated("SigmoidHead"),)),
    ]


def _count_qdq_cases() -> list[Case]:
    return [
        Case("DropoutNet converted (unseen)", lambda: (_converted("DropoutNet"),)),
        Case("a residual add and a sigmoid head, converted (unseen)", lambda: (_converted("SigmoidHead"),)),
        Case("a hand-built graph with per-channel nodes only", lambda: (_handmade_qdq(per_channel_only=True),)),
        Case("a hand-built graph, three per-tensor rounds: overloads, decoys and choose_qparams (unseen)",
             lambda: (_handmade_qdq(rounds=3),)),
        Case("a hand-built graph with aten.quantize_per_tensor.default and aten.dequantize.self, the eager "
             "quantize's ATen ops (unseen)", lambda: (_handmade_qdq(aten_ops=True),)),
        Case("QATNet exported, never quantized", lambda: (_fresh("exported QATNet", lambda: torch.export.export(
            _qatnet(), (_x(4, 16),)).module()),)),
        Case("a hand-built graph: .tensor2 overloads, a quantize node nobody reads, a nested GraphModule holding a "
             "Q/DQ pair of its own (unseen)", lambda: (_more_qdq(),)),
    ]
