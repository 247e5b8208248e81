"""The cases of ex06_fusing: the seeded inputs each graded function is called on, and their references."""
from __future__ import annotations

import weakref


import torch
import torch.fx as fx
import torch.nn as nn

from fxplayground import ConvBNNet, LinearChain, Net, SharedConvNet

from autograder.checks import keyring
from autograder.checks.framework import Case
from autograder.checks.randmodels import example_input, generator, manual_seed, randomize_batchnorm
from autograder.checks.ex06_fusing.models import TwoChains


PROBE = "_ex06_probe"   # the inputs a case runs the result on, stashed on its first argument


# ------------------------------------------------------------------------------------------ helpers

def _gen(seed: int) -> torch.Generator:
    return generator(seed)


def _stash(obj: object, *inputs: torch.Tensor) -> None:
    object.__setattr__(obj, PROBE, tuple(inputs))


# gm -> {name: (module, its parameters and buffers)} of the Linear, Conv2d and BatchNorm2d modules a case's gm held
# when the case made it: the traced model's own objects (symbolic_trace shares them), which a pass must leave as
# they were. Kept beside gm, not in it, so that an answer that deep-copies gm copies none of it.
ORIGINALS: "weakref.WeakKeyDictionary[fx.GraphModule, dict]" = weakref.WeakKeyDictionary()


def _traced(model: nn.Module, *inputs: torch.Tensor) -> fx.GraphModule:
    gm = fx.symbolic_trace(model)
    _stash(gm, *inputs)
    ORIGINALS[gm] = {name: (m, {k: v.detach().clone() for k, v in m.state_dict().items()})
                     for name, m in gm.named_modules() if isinstance(m, (nn.Linear, nn.Conv2d, nn.BatchNorm2d))}
    return gm


# ================================================================================== fuse_linear_pair

def _pair(first: nn.Linear, second: nn.Linear, seed: int, lead: tuple[int, ...] = (5,)) -> tuple:
    x = torch.randn(*lead, first.in_features, generator=_gen(seed), dtype=first.weight.dtype)
    _stash(first, x)
    return first, second


def _linear(i: int, o: int, bias: bool, seed: int, dtype=torch.float32) -> nn.Linear:
    manual_seed(seed)
    return nn.Linear(i, o, bias=bias, dtype=dtype)


def _pair_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex06_fusing")._pair_cases()

    def chain_pair(dims, bias=True, seed=0):
        def make():
            manual_seed(seed)
            layers = LinearChain(dims, bias=bias).layers
            return _pair(layers[0], layers[1], seed)
        return make
    return [Case("LinearChain 8->16->4: layers[0] then layers[1]", chain_pair((8, 16, 4))),
            Case("Linear(6->6) then Linear(6->6)", chain_pair((6, 6, 6), seed=1))]


def _model_case(label: str, build, seed: int, shape: tuple[int, ...], dtype=torch.float32,
                data: dict | None = None, bn: bool = False, var=(0.5, 1.5), train: tuple[str, ...] = (),
                spare_bn: bool = False) -> Case:
    """A traced model in eval mode, but for the submodules named in `train`, left in training mode; with
    `spare_bn`, its trace holds a BatchNorm2d 'spare_bn' in training mode that the graph does not call."""
    def make():
        manual_seed(seed)
        model = build()
        if bn:
            randomize_batchnorm(model, seed, *var)
        model = model.to(dtype).eval()
        for name in train:
            model.get_submodule(name).train()
        x = torch.randn(*shape, generator=_gen(seed + 1), dtype=dtype)
        gm = _traced(model, x)
        if spare_bn:
            gm.add_submodule("spare_bn", nn.BatchNorm2d(3).to(dtype).train())
        return (gm,)
    return Case(label, make, data=data or {})


def _random_case(label: str, make_model, seed: int) -> Case:
    def make():
        model = make_model(seed)
        return (_traced(model, example_input(model, batch=3, seed=seed)),)
    return Case(label, make)


def _chains_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex06_fusing")._chains_cases()
    return [_model_case("TwoChains: fc1 -> fc2 beside body.0 -> body.1, alike but for the names", TwoChains, 13,
                        (5, 6)),
            _model_case("LinearChain 8->16->4 (a chain of two)", lambda: LinearChain((8, 16, 4)), 0, (5, 8)),
            _model_case("LinearChain 6->12->12->3 (a chain of three)", lambda: LinearChain((6, 12, 12, 3)), 1,
                        (5, 6)),
            _model_case("Net (a ReLU between the Linears: nothing to fuse)", Net, 2, (5, 8))]


# ================================================================================= fold_bn_into_conv

def _conv_bn(conv: nn.Conv2d, bn: nn.BatchNorm2d, seed: int, var=(0.5, 1.5), hw: int = 7) -> tuple:
    randomize_batchnorm(bn, seed, *var)
    conv.eval()
    bn.eval()
    x = torch.randn(2, conv.in_channels, hw, hw, generator=_gen(seed + 7), dtype=conv.weight.dtype)
    _stash(conv, x)
    return conv, bn


def _fold_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex06_fusing")._fold_cases()

    def convbnnet(which, seed, var=(0.5, 1.5)):
        def make():
            manual_seed(seed)
            m = ConvBNNet()
            return _conv_bn(getattr(m, f"conv{which}"), getattr(m, f"bn{which}"), seed, var)
        return make
    return [Case("ConvBNNet: conv2 (no bias) + bn2", convbnnet(2, 0, (0.5, 1.5))),
            Case("ConvBNNet: conv1 + bn1, small running_var", convbnnet(1, 1, (1e-3, 1e-2)))]


def _train_case(label: str, build, seed: int, shape, where: str, only: str | None = None,
                spare: bool = False) -> Case:
    """A model that must make fuse_conv_bn raise: all of it in training mode, or (`only`) the model in eval mode
    but for one submodule, or (only="") but for the model's own flag (what gm.training reads). With `spare`, its
    trace holds a submodule 'spare' that the graph does not call (a call that raises must leave it there)."""
    def make():
        manual_seed(seed)
        model = randomize_batchnorm(build(), seed, 0.5, 1.5).eval()
        if only is None:
            model.train()
        elif only:
            model.get_submodule(only).train()
        else:
            model.training = True
        gm = _traced(model, torch.randn(*shape, generator=_gen(seed)))
        if spare:
            gm.add_submodule("spare", nn.Linear(2, 2))
        return (gm,)
    return Case(label, make, data={"raises": "ValueError", "where": where, "only": only})


def _fuse_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex06_fusing")._fuse_cases()
    return [
        _model_case("ConvBNNet in eval mode", ConvBNNet, 0, (2, 3, 8, 8), bn=True),
        _model_case("SharedConvNet: one conv called from two sites", SharedConvNet, 1, (2, 4, 8, 8), bn=True),
        _train_case("ConvBNNet in training mode", ConvBNNet, 2, (2, 3, 8, 8), "the module is in training mode"),
    ]


# ============================================================================ references of the algebra
# Used only to tell whose fault a failing pass is: a pass that fails with the learner's fuse_linear_pair (or
# fold_bn_into_conv) but passes with these loses no points; the helper's own test charges for it.


