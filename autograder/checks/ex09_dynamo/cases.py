"""The cases of ex09_dynamo: the functions and models each graded function is called on, each from a reset."""
from __future__ import annotations

from typing import Callable

import torch
import torch.nn as nn

from autograder.checks import keyring
from autograder.checks.framework import Case
from autograder.checks.randmodels import manual_seed
from autograder.checks.ex09_dynamo.models import (
    GRAD, FailingPass, GateNet, PROBE, PlainMLP, STEP, SigmoidPass, _gen, _remember_settings, _reset, sin_item_scale
)


def _earlier_compile() -> None:
    """A compile with two graph breaks, as a notebook's earlier cells make: dynamo's process-wide counters
    (torch._dynamo.utils.counters, which reset() does not clear) then hold counts of other compiles in every case,
    whatever ran before it in this process. Two, so that an answer reading them returns more than the case's
    own compile has graphs (a case with b breaks has b + 1 graphs), which no count of one compile does: the
    judge tells it from counting graphs instead of breaks, the same way each time. The counters only grow, so
    the compile runs only while they hold fewer than two breaks (the first case of a process, or after an
    answer cleared them)."""
    from torch._dynamo.utils import counters

    if sum(counters["graph_break"].values()) >= 2:
        return

    def earlier(x):
        y = x.sin()
        z = y * float(y.sum())      # .item()-like: a graph break
        return z * float(z.mean())  # and a second

    torch.compile(earlier, backend="eager")(torch.ones(3))
    _reset()


def _makers(warm: bool):
    """(model, function): the makers of the (fn, *inputs) cases shared by capture_graphs and graph_break_count
    (`warm`: without an earlier compile in the same process)."""
    def model(factory: Callable[[], nn.Module], shape: tuple, seed: int, dtype=torch.float32, train: bool = False):
        def make():
            _reset()
            if not warm:
                _earlier_compile()
            manual_seed(seed)
            m = factory().train(train).to(dtype)
            _remember_settings()
            return (m, torch.randn(*shape, generator=_gen(seed), dtype=dtype))
        return make

    def function(fn: Callable, shape: tuple, seed: int, *more: tuple):
        def make():
            _reset()
            if not warm:
                _earlier_compile()
            _remember_settings()
            return (fn, torch.randn(*shape, generator=_gen(seed)),
                    *(torch.randn(*s, generator=_gen(seed + 1 + i)) for i, s in enumerate(more)))
        return make

    return model, function


def _fn_cases(hidden: bool, warm: bool) -> list[Case]:
    """(fn, *inputs) cases shared by capture_graphs and graph_break_count."""
    if hidden:
        return keyring.hidden("ex09_dynamo")._fn_cases(warm)
    model, function = _makers(warm)
    return [Case("sin_item_scale: .item() in the middle", function(sin_item_scale, (5,), 1)),
            Case("GateNet(6): a branch on h.mean()", model(lambda: GateNet(6), (4, 6), 0))]


def _capture_cases(hidden: bool) -> list[Case]:
    return _fn_cases(hidden, warm=True)


def _breaks_cases(hidden: bool) -> list[Case]:
    return _fn_cases(hidden, warm=False)


_PASSES: dict[str, SigmoidPass] = {}


def _pass_spec(factory: Callable[[str], nn.Module], shapes: list[tuple], seed: int, dtype=torch.float32,
               train: bool = False, step: bool = False, grad: bool = False, shared: str | None = None,
               failing: bool = False):
    """How a relu_to_sigmoid case is made: (make, the model's factory, its dtype), for `_pass_case`. `step`: the
    model's weights change in place between two calls; `grad`: the compiled model is called with grad enabled;
    `shared`: the cases of one name hand over one pass object (its counts cleared), each with its own model;
    `failing`: the pass raises on every graph (FailingPass)."""
    def make():
        _reset()
        pass_fn = FailingPass() if failing else _PASSES.setdefault(shared, SigmoidPass()) if shared else SigmoidPass()
        pass_fn.__init__()
        manual_seed(seed)
        m = factory("relu").train(train).to(dtype)   # PlainMLP computes the same in either mode
        object.__setattr__(m, PROBE, [torch.randn(*s, generator=_gen(seed + i), dtype=dtype)
                                      for i, s in enumerate(shapes)])
        object.__setattr__(m, STEP, step)
        object.__setattr__(m, GRAD, grad)
        _remember_settings()
        return (m, pass_fn)
    return make, factory, dtype


def _pass_case(label: str, spec: tuple, **data) -> Case:
    """A relu_to_sigmoid case from `_pass_spec`'s (make, factory, dtype), with more `data` for the judge."""
    make, factory, dtype = spec
    return Case(label, make, data={"factory": factory, "dtype": dtype, **data})


def _pass_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex09_dynamo")._pass_cases()

    return [_pass_case("PlainMLP(6) with relu_to_sigmoid", _pass_spec(lambda a: PlainMLP(6, a), [(3, 6)], 0)),
            _pass_case("GateNet(6) with relu_to_sigmoid: two graphs",
                       _pass_spec(lambda a: GateNet(6, a), [(4, 6)], 1))]
