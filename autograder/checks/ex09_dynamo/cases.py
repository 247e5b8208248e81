"""The cases of ex09_dynamo: the functions and models each graded function is called on, each from a reset."""
from __future__ import annotations

from typing import Callable

import torch
import torch.nn as nn

from autograder.checks.randmodels import manual_seed
from autograder.checks.framework import Case
from autograder.checks.ex09_dynamo.models import (
    BreakNet, GateNet, NestedBreak, PROBE, PlainMLP, SigmoidPass, Stepper, _gen, _recording_backend,
    _remember_settings, _reset, relu_twice, returns_a_number, scaled_by_item, sin_item_scale, two_items,
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


def _fn_cases(hidden: bool, warm: bool) -> list[Case]:
    """(fn, *inputs) cases shared by capture_graphs and graph_break_count."""
    def model(factory: Callable[[], nn.Module], shape: tuple, seed: int, dtype=torch.float32):
        def make():
            _reset()
            if not warm:
                _earlier_compile()
            manual_seed(seed)
            m = factory().eval().to(dtype)
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

    if not hidden:
        return [Case("sin_item_scale: .item() in the middle", function(sin_item_scale, (5,), 1)),
                Case("GateNet(6): a branch on h.mean()", model(lambda: GateNet(6), (4, 6), 0))]

    def break_net(seed: int):
        return model(lambda: BreakNet(seed), (3, BreakNet(seed).width), seed)

    # graph_break_count: two breaks of one kind come first, so that counting kinds of break shows as that
    cases = [Case("two_items: two .item() calls", function(two_items, (2, 3), 4))] if not warm else []
    cases += [
        Case("BreakNet seed 3 (unseen)", break_net(3)),
        Case("BreakNet seed 17 (unseen): nothing breaks its graph", break_net(17)),
        # the second input decides whether the graph breaks: passing the first one only is another function
        Case("scaled_by_item(x, scale): two inputs, the second one breaks the graph",
             function(scaled_by_item, (4,), 11, (3,)), data={"first_only": function(scaled_by_item, (4,), 11)}),
    ]
    if warm:   # capture_graphs
        cases += [Case("GateNet(4) in float64", model(lambda: GateNet(4), (3, 4), 8, torch.float64)),
                  Case("returns_a_number: the graph ends at .item()", function(returns_a_number, (4,), 7)),
                  # a second call of the compiled model compiles again: the graphs of one call are asked for
                  Case("Stepper(4): counts its calls in an int attribute (each call compiles anew)",
                       model(lambda: Stepper(4), (2, 4), 12))]
    else:      # graph_break_count
        cases += [Case("NestedBreak: the branch inside a submodule", model(lambda: NestedBreak(5), (3, 5), 5))]
    if warm:
        def warmed():
            fn, x = function(relu_twice, (6,), 9)()
            import torch._dynamo
            for _ in range(torch._dynamo.config.recompile_limit):   # a notebook's earlier experiments
                torch.compile(fn, backend=_recording_backend([]))(x)
            return fn, x
        cases.append(Case("relu_twice, compiled eight times before in this kernel", warmed,
                          data={"cold": function(relu_twice, (6,), 9), "warm": True}))
    return cases


def _capture_cases(hidden: bool) -> list[Case]:
    return _fn_cases(hidden, warm=True)


def _breaks_cases(hidden: bool) -> list[Case]:
    return _fn_cases(hidden, warm=False)


def _pass_cases(hidden: bool) -> list[Case]:
    def case(factory: Callable[[str], nn.Module], shapes: list[tuple], seed: int, dtype=torch.float32,
             train: bool = False):
        def make():
            _reset()
            manual_seed(seed)
            m = factory("relu").train(train).to(dtype)   # PlainMLP computes the same in either mode
            object.__setattr__(m, PROBE, [torch.randn(*s, generator=_gen(seed + i), dtype=dtype)
                                          for i, s in enumerate(shapes)])
            _remember_settings()
            return (m, SigmoidPass())
        return make, factory, dtype

    def mk(label: str, spec: tuple) -> Case:
        make, factory, dtype = spec
        return Case(label, make, data={"factory": factory, "dtype": dtype})

    if not hidden:
        return [mk("PlainMLP(6) with relu_to_sigmoid", case(lambda a: PlainMLP(6, a), [(3, 6)], 0)),
                mk("GateNet(6) with relu_to_sigmoid: two graphs", case(lambda a: GateNet(6, a), [(4, 6)], 1))]

    def break_net(seed: int):
        return case(lambda a: BreakNet(seed, a), [(3, BreakNet(seed).width)], seed)

    return [
        mk("BreakNet seed 3 with relu_to_sigmoid (unseen)", break_net(3)),
        mk("BreakNet seed 29 with relu_to_sigmoid (unseen)", break_net(29)),
        mk("PlainMLP(5) called on batches of 2, 5 and 7 (recompiles)",
           case(lambda a: PlainMLP(5, a), [(2, 5), (5, 5), (7, 5)], 2)),
        mk("GateNet(4) in float64", case(lambda a: GateNet(4, a), [(3, 4), (3, 4)], 3, torch.float64)),
        mk("PlainMLP(4) in training mode: the caller's model stays as it is",
           case(lambda a: PlainMLP(4, a), [(2, 4)], 4, train=True)),
    ]
