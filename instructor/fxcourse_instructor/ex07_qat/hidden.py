"""The hidden cases of ex07_qat: what each case function of its `cases` builds for hidden=True (the
instructor's side: reached through autograder.checks.keyring.hidden, never installed where learners work)."""
from __future__ import annotations

import torch
import torch.fx as fx
from torch.ao.quantization import disable_fake_quant, disable_observer
import torch.nn as nn

from fxplayground import ConvBNNet, DropoutNet, Net, QATNet

from autograder.checks.framework import Case, given_again
from autograder.checks.randmodels import random_mlp, seeded_randn, with_unread_call
from autograder.checks.ex07_qat.models import BufferNet, DropQATNet, HasModule, NonPersistent, SigmoidHead, TiedNet
from autograder.checks.ex07_qat.cases import (
    _calibrated, _custom_fq, _fresh, _ft_case, _handmade, _lookalikes, _mlp_no_dropout, _prep_case, _prepare_ref,
    _ptq_prepared, _seeded, _with_impostor
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
        given_again("QATNet given again, after its fc2 got a new weight (a new Parameter) in place",
                    _prep_case("", lambda: _seeded(QATNet, 11), (4, 16)).make, _new_fc2_weight,
                    data={"backend": "x86"}),
    ]


def _new_fc2_weight(model, example_inputs) -> None:
    model.fc2.weight = nn.Parameter(model.fc2.weight.detach() * -0.5)


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
        Case("a hand-built graph: a fake-quant, then a module whose class is named FakeQuantizeBase but is none",
             lambda: (_with_impostor(),)),
        Case("QATNet prepared for QAT, then a fake-quant call a pass inserted on its input, gm not recompiled yet",
             lambda: (_inserted_not_recompiled(_prepare_ref(_seeded(QATNet, 5), (seeded_randn(2, 16),))),)),
        given_again("a hand-built graph given again, after a pass made its first fake-quant call a call of 'lin' in "
                    "place (as many nodes as before)", lambda: (_handmade(),), _first_fake_quant_to_lin),
    ]


def _inserted_not_recompiled(gm: fx.GraphModule) -> fx.GraphModule:
    """gm with one more call of its first fake-quant on its input, nobody reading it, and no recompile() yet: the
    graph has the node, gm.code does not."""
    target = next(n.target for n in gm.graph.nodes if n.op == "call_module" and "post_process" in n.target)
    return with_unread_call(gm, target, recompile=False)


def _first_fake_quant_to_lin(gm: fx.GraphModule) -> None:
    node = next(n for n in gm.graph.nodes if n.op == "call_module" and n.target == "input_quant")
    node.target = "lin"
    gm.recompile()


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
        _ft_case("QATNet(8, 16, 3) on inputs 5000 times larger (gradient norms in the thousands), steps=2, lr=1e-6",
                 lambda: _seeded(lambda: QATNet(8, 16, 3), 7), (8,), 3, 2, 2, 1e-6, seed=7, scale=5000.0),
        _ft_case("DropQATNet: an nn.Dropout(p=0.0) module, handed over in train mode but for it, steps=2, lr=0.1",
                 lambda: _seeded(DropQATNet, 8), (8,), 3, 2, 2, 0.1, seed=8, set_up=lambda m: m.drop.eval()),
        _ft_case("QATNet(8, 16, 3) whose observers the caller switched off (disable_observer), steps=3, lr=0.1",
                 lambda: _seeded(lambda: QATNet(8, 16, 3), 9), (8,), 3, 2, 3, 0.1, seed=9,
                 set_up=lambda m: m.apply(disable_observer)),
        _ft_case("QATNet(8, 16, 3) whose fc1.weight the caller froze (requires_grad False), steps=3, lr=0.1",
                 lambda: _seeded(lambda: QATNet(8, 16, 3), 10), (8,), 3, 2, 3, 0.1, seed=10,
                 set_up=lambda m: m.fc1.weight.requires_grad_(False)),
    ]


def _int8_cases() -> list[Case]:
    def case(label, build, shape, **kw):
        return Case(label, _calibrated(label, build, shape, **kw), data={"shape": shape})
    return [
        case("ConvBNNet prepared and calibrated: ConvBn2d must fold (unseen)", lambda: _seeded(ConvBNNet, 2),
             (4, 3, 8, 8), seed=3),
        case("a model ending in torch.sigmoid (unseen)", lambda: _seeded(SigmoidHead, 4), (8, 6), seed=4),
        case("random model seed 19 (tanh, sigmoid, a chain of linears)", lambda: random_mlp(19), (6, 4), seed=5),
        Case("DropQATNet prepared and calibrated, in train mode but for its Dropout, left in eval mode",
             _with_modes(_calibrated("DropQATNet", lambda: _seeded(DropQATNet, 6), (8, 8), seed=6), drop=False),
             data={"shape": (8, 8)}),
        Case("QATNet prepared and calibrated, then a fake-quant call a pass inserted on its input (nobody reads it), "
             "gm not recompiled yet",
             _edited(_calibrated("QATNet edited", lambda: _seeded(QATNet, 8), (8, 16), seed=8)),
             data={"shape": (8, 16)}),
        given_again("QATNet prepared and calibrated, given again after its fc1.weight was halved in place",
                    _calibrated("QATNet again", lambda: _seeded(QATNet, 7), (8, 16), seed=7), _scale_fc1,
                    data={"shape": (8, 16)}),
    ]


def _with_modes(make, **modes):
    """make()'s prepared model with the named submodules switched: True to train mode, False to eval mode."""
    def made():
        (prepared,) = make()
        for name, training in modes.items():
            prepared.get_submodule(name).train(training)
        return (prepared,)
    return made


def _edited(make):
    return lambda: (_inserted_not_recompiled(make()[0]),)


def _scale_fc1(prepared) -> None:
    """fc1's weight halved (as a training step changes it): the activations stay within the ranges the observers
    saw, so the int8 model still agrees with the fake-quant one to a few steps."""
    with torch.no_grad():
        prepared.fc1.weight.mul_(0.5)


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
        Case("a small nn.Linear(3, 2), the first of two layers of one class", lambda: (_seeded(
            lambda: nn.Linear(3, 2), 3),)),
        Case("nn.Linear(64, 32): a larger layer of the same class, with the same keys", lambda: (_seeded(
            lambda: nn.Linear(64, 32), 4),)),
        Case("a Linear and a buffer of 10000 floats registered with persistent=False (not in the state_dict)",
             lambda: (_seeded(NonPersistent, 5),)),
        Case("a submodule named module beside a larger one (no DataParallel wrapper)",
             lambda: (_seeded(HasModule, 6),)),
        given_again("TiedNet untied, given again after its two layers were tied in place (the same keys and shapes, "
                    "one tensor fewer to store)", lambda: (_untied(),), _tie),
    ]


def _untied():
    model = _seeded(TiedNet, 7)
    model.dec.weight = nn.Parameter(model.enc.weight.detach().clone())
    return model


def _tie(model) -> None:
    model.dec.weight = model.enc.weight
