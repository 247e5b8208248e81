"""The cases of ex11_pt2e: the prepared models each graded function is called on, built once per process."""
from __future__ import annotations

import copy
from typing import Any, Callable

import torch
import torch.fx as fx
import torch.nn as nn

from fxplayground import Net
from autograder.checks.evidence import quiet_one_thread
from autograder.checks import keyring
from autograder.checks.framework import Case
from autograder.checks.randmodels import current_salt, generator, manual_seed, random_mlp
from autograder.checks.ex11_pt2e.models import (
    SigmoidHead, _diagnostic, _disallow_eval_train, _dropout, _handmade_qdq, _qatnet, _seeded, _x, convert_pt2e,
    move_exported_model_to_eval,
)


_silent = quiet_one_thread  # the exercise's references and checks, quiet on one thread


_CACHE: dict[tuple[str, str], Any] = {}


_PROTOTYPES: dict[tuple[str, int], Any] = {}


def _fresh(key: str, build: Callable[[], Any]) -> Any:
    """A deep copy of a prototype built once per process: exporting and preparing cost more than copying."""
    key = (key, current_salt())   # type: ignore[assignment]  (a hidden case's salt: another prototype)
    if key not in _PROTOTYPES:
        with _silent():
            _PROTOTYPES[key] = build()
    prototype = _PROTOTYPES[key]
    fresh = copy.deepcopy(prototype)
    if isinstance(fresh, fx.GraphModule) and "train" in vars(prototype):
        # prepare_qat_pt2e makes .train()/.eval() raise on the model it returns; GraphModule.__deepcopy__ drops
        # those instance attributes, so the copy gets them back, as a learner's own prepared model has them.
        _disallow_eval_train(fresh)
    return fresh


def _prepare_ref(model: nn.Module, example_inputs: tuple, **config: Any) -> fx.GraphModule:
    """`model` prepared by lesson 11's flow, as prepare_pt2e_qat must prepare it (a dynamic batch dimension): the
    instructor's side (keyring.inputs)."""
    return keyring.inputs("ex11_pt2e").prepare_ref(model, example_inputs, **config)


def _prepared(key: str) -> fx.GraphModule:
    """A fresh copy of one of the prepared models every check shares."""
    builds = {
        "QATNet": lambda: _prepare_ref(_qatnet(), (_x(4, 16),)),
        "DropoutNet": lambda: _prepare_ref(_dropout(), (_x(4, 6),)),
        "random 47": lambda: _prepare_ref(random_mlp(47), (_x(3, 8),)),
        "SigmoidHead": lambda: _prepare_ref(_seeded(SigmoidHead, 5), (_x(4, 6),)),
        "QATNet PTQ": lambda: _prepare_ref(_qatnet(), (_x(4, 16),), is_qat=False),
    }
    return _fresh(f"prepared {key}", builds[key])


_SHAPES = {"QATNet": (16, 16), "DropoutNet": (16, 6), "random 47": (12, 8), "SigmoidHead": (16, 6)}


def _calibrated(key: str) -> fx.GraphModule:
    """A prepared model that has seen three batches (its fake-quants hold statistics), with an input to test on."""
    def build():
        prepared = _prepared(key)
        manual_seed(0)
        with torch.no_grad():
            for i in range(3):
                prepared(_x(*_SHAPES[key], seed=10 + i))
        return prepared
    prepared = _fresh(f"calibrated {key}", build)
    prepared.input_for_checks = _x(*_SHAPES[key], seed=11)  # data like the data it has seen
    return prepared


def _converted(key: str) -> fx.GraphModule:
    def build():
        prepared = _calibrated(key)
        move_exported_model_to_eval(prepared)
        return convert_pt2e(prepared)
    return _fresh(f"converted {key}", build)


def _prep_case(label: str, build: Callable[[], nn.Module], shape: tuple, eval_mode: bool = False,
               *more: tuple) -> Case:
    def make():
        model = build()
        return (model.eval() if eval_mode else model.train()), (_x(*shape, seed=7),
                                                                *(_x(*s, seed=8 + i) for i, s in enumerate(more)))
    return Case(label, make, data={"eval_mode": eval_mode})


def _prep_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex11_pt2e")._prep_cases()
    return [_prep_case("QATNet() in train mode", _qatnet, (4, 16)),
            _prep_case("Net() handed over in eval mode", lambda: _seeded(Net, 1), (4, 8), eval_mode=True)]


def _count_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex11_pt2e")._count_cases()
    return [Case("a hand-built graph where every usual mistake gives a different count", lambda: (_diagnostic(),)),
            Case("QATNet prepared with prepare_qat_pt2e", lambda: (_prepared("QATNet"),))]


# A hidden hand-built graph: answer 8, and each usual mistake gives its own count: by the name
# activation_post_process 7, by 'fake' in the name 1, unique modules 3, every registered fake-quant module 6, with
# observers 10, every call_module 16, exact type FusedMovingAvgObsFakeQuantize 5, torch.ao's base class 2,
# 'FakeQuantize' in the class name 13, a fake_quant_enabled attribute 12.
_HIDDEN_ORDER = ("activation_post_process_0", "activation_post_process_0", "sig", "deco", "activation_post_process_0",
                 "lin", "activation_post_process_0", "activation_post_process_1", "mimic", "mimic",
                 "activation_post_process_1", "sig", "old", "activation_post_process_0", "weight_fake_quant", "old")


class _Batches(list):
    """The batches of a fine-tune case: a plain list whose index error says how a step picks its batch."""

    def __getitem__(self, index):
        try:
            return super().__getitem__(index)
        except IndexError:
            raise IndexError(f"batches[{index}] is out of range: the list has {len(self)} batches, and step i uses "
                             "batches[i % len(batches)], cycling through the list when steps > len(batches)") from None


def _batches(key: str, n: int, classes: int, seed: int) -> list:
    rows, features = _SHAPES[key]
    out = _Batches()
    for b in range(n):
        g = generator(seed * 100 + b)
        out.append((torch.randn(8, features, generator=g), torch.randint(0, classes, (8,), generator=g)))
    return out


def _ft_case(label: str, key: str, classes: int, n_batches: int, steps: int, lr: float, seed: int = 0,
             stale_grads: bool = False) -> Case:
    """`stale_grads`: the model arrives holding the gradients of one loss.backward() on the last batch."""
    def make():
        prepared = _prepared(key)
        batches = _batches(key, n_batches, classes, seed)
        if stale_grads:
            torch.nn.functional.cross_entropy(prepared(batches[-1][0]), batches[-1][1]).backward()
        manual_seed(seed)   # dropout draws the same masks in the learner's run and the reference's
        return prepared, batches, steps, lr
    return Case(label, make, data={"steps": steps, "lr": lr, "n_batches": n_batches})


def _ft_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex11_pt2e")._ft_cases()
    return [_ft_case("QATNet prepared, 3 batches, steps=5, lr=0.1", "QATNet", 4, 3, 5, 0.1)]


def _qdq_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex11_pt2e")._qdq_cases()
    return [Case("QATNet prepared and calibrated", lambda: (_calibrated("QATNet"),))]


def _count_qdq_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex11_pt2e")._count_qdq_cases()
    return [Case("QATNet converted with convert_pt2e", lambda: (_converted("QATNet"),)),
            Case("a hand-built graph: per-tensor and per-channel, .default and .tensor overloads, decoys",
                 lambda: (_handmade_qdq(),))]
