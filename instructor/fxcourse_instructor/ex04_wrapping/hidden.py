"""The hidden cases of ex04_wrapping: what each case function of its `cases` builds for hidden=True (the
instructor's side: reached through autograder.checks.keyring.hidden, never installed where learners work)."""
from __future__ import annotations

import torch.nn as nn

from autograder.checks.framework import Case
from autograder.checks.ex04_wrapping.models import Block, RowNorm
from autograder.checks.ex04_wrapping.cases import _gated_case, _leaf_case, _spec_case


def _gated_cases() -> list[Case]:
    return [
        _gated_case("GatedNet(4, 10, 2), other weights (unseen)", "GatedNet(4, 10, 2)", 5),
        _gated_case("a model calling gate twice (unseen)", "_TwoGates", 6),
        _gated_case("gate called inside two submodules (unseen)", "_Nested", 7),
        _gated_case("a model with two tensor inputs (unseen)", "_TwoInputs", 8),
        _gated_case("a model in training mode whose forward reads self.training (unseen)",
                    "_ModeGated in training mode", 9),
        _gated_case("a model in eval mode (unseen)", "_ModeGated in eval mode", 10),
        _gated_case("a model in training mode whose fc1 is in eval mode (unseen)", "_ModeGated in training mode", 11,
                    modes={"": True, "fc1": False}, key="gated"),
        _gated_case("the same model object again, switched to eval mode since (unseen)",
                    "_ModeGated in training mode", 11, modes={"": False}, key="gated"),
        _gated_case("torch.relu_ on gate's result, an in-place call whose result nobody reads (unseen)",
                    "_InPlaceGated", 12),
    ]


def _leaf_cases() -> list[Case]:
    return [
        _leaf_case("Blocks nested in Sequentials and one called twice, leaf_types=[Block] (a list) (unseen)",
                   "_Tower", 31, lambda: [Block]),
        _leaf_case("a subclass of Block with its own forward, nested, leaf_types=(Block,) (unseen)",
                   "_SubBlockTower", 35, lambda: (Block,)),
        _leaf_case("a subclass of RowNorm nested two levels deep, leaf_types=(RowNorm,) (unseen)",
                   "_NormTower", 32, lambda: (RowNorm,)),
        _leaf_case("leaf_types=(nn.Sequential,) on a model with an nn.Sequential and a Block (unseen)",
                   "_SeqModel", 33, lambda: (nn.Sequential,)),
        _leaf_case("a random model, leaf_types=() (unseen)", "random_mlp", 34, lambda: ()),
        _leaf_case("a module of the model's own with no parameters or children, leaf_types=(), the model in eval "
                   "mode (unseen)", "_ParamFree", 36, lambda: ()),
        _leaf_case("another class named Block (not the notebook's Block, nor a subclass), leaf_types=(Block,) "
                   "(unseen)", "_NameClash", 37, lambda: (Block,)),
        _leaf_case("submodules in other modes than the model's: the model and 'up' in training mode, 'block' and "
                   "'down' in eval mode, leaf_types=(Block,) (unseen)", "_ModeTower", 38, lambda: (Block,),
                   modes={"": True, "block": False, "down": False}, key="tower"),
        _leaf_case("the same model object again, its modes changed since, leaf_types=(Block,) (unseen)",
                   "_ModeTower", 38, lambda: (Block,), modes={"": False, "down": True}, key="tower"),
        _leaf_case("the same model object again, leaf_types=() (unseen)", "_ModeTower", 38, lambda: (),
                   modes={"": True}, key="tower"),
        _leaf_case("torch.relu_ on a Block's output, an in-place call whose result nobody reads, leaf_types=(Block,) "
                   "(unseen)", "_InPlaceTower", 39, lambda: (Block,)),
    ]


def _spec_cases() -> list[Case]:
    return [
        _spec_case("FlagNet, repeats=2, use_extra=True (flags in another order) (unseen)", "FlagNet", 41,
                   {"repeats": 2, "use_extra": True}),
        _spec_case("FlagNet, use_extra=True, repeats=0 (unseen)", "FlagNet", 42, {"use_extra": True, "repeats": 0}),
        _spec_case("two tensor inputs, mode='mul', use_y=True, scale=0.25 (unseen)", "_TwoInputFlags", 43,
                   {"mode": "mul", "use_y": True, "scale": 0.25}),
        _spec_case("two tensor inputs, use_y=False leaves y unused, mode='add' (unseen)", "_TwoInputFlags", 44,
                   {"use_y": False, "mode": "add"}),
        _spec_case("depth=2, act='tanh', clip=0.5 where clip defaults to None (unseen)", "_ClipNet", 45,
                   {"depth": 2, "act": "tanh", "clip": 0.5}),
        _spec_case("clip=None given explicitly, act=None where act defaults to 'tanh', depth=3 (unseen)",
                   "_ClipNet", 46, {"clip": None, "act": None, "depth": 3}),
        _spec_case("act='relu', depth=1, clip=2.0 (unseen)", "_ClipNet", 47, {"act": "relu", "depth": 1, "clip": 2.0}),
        _spec_case("a tensor input named x_in, gain_db=6.0, use_bias=False (unseen)", "_SnakeNames", 48,
                   {"gain_db": 6.0, "use_bias": False}),
        _spec_case("rectify=True adds torch.relu_(h), an in-place call whose result nobody reads, the model in eval "
                   "mode (unseen)", "_InPlaceFlag", 49, {"rectify": True}),
        _spec_case("the model in eval mode, its submodule 'up' in training mode, use_up=True, scale=0.5 (unseen)",
                   "_ModeFlags", 50, {"use_up": True, "scale": 0.5}, modes={"": False, "up": True}, key="flags"),
        _spec_case("the same model object again, its modes changed since, use_up=True, scale=0.5 (unseen)",
                   "_ModeFlags", 50, {"use_up": True, "scale": 0.5}, modes={"": True, "block": False}, key="flags"),
        _spec_case("a second tensor input named x_1, use_fc=True (unseen)", "_SuffixNames", 51, {"use_fc": True}),
    ]
