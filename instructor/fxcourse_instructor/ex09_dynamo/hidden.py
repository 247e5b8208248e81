"""The hidden cases of ex09_dynamo: what each case function of its `cases` builds for hidden=True (the
instructor's side: reached through autograder.checks.keyring.hidden, never installed where learners work)."""
from __future__ import annotations

import torch

from autograder.checks.framework import Case
from autograder.checks.ex09_dynamo.cases import _makers, _pass_case, _pass_spec
from autograder.checks.ex09_dynamo.models import (
    BreakNet, GateNet, NestedBreak, PlainMLP, Stepper, TrainNet, _gen, _recording_backend, _remember_settings,
    _reset, grad_gated, needs_grad_path, product_plus, relu_twice, returns_a_number, scaled_by_item, two_items,
)


def _pass_cases() -> list[Case]:
    def break_net(seed: int):
        return _pass_spec(lambda a: BreakNet(seed, a), [(3, BreakNet(seed).width)], seed)

    return [
        _pass_case("BreakNet seed 3 with relu_to_sigmoid (unseen)", break_net(3)),
        _pass_case("BreakNet seed 29 with relu_to_sigmoid (unseen)", break_net(29)),
        _pass_case("PlainMLP(5) called on batches of 2, 5 and 7 (recompiles)",
                   _pass_spec(lambda a: PlainMLP(5, a), [(2, 5), (5, 5), (7, 5)], 2)),
        _pass_case("GateNet(4) in float64",
                   _pass_spec(lambda a: GateNet(4, a), [(3, 4), (3, 4)], 3, torch.float64)),
        _pass_case("PlainMLP(4) in training mode: the caller's model stays as it is",
                   _pass_spec(lambda a: PlainMLP(4, a), [(2, 4)], 4, train=True)),
        # the caller trains the model it compiled: grad enabled, its weights changed in place between the calls
        _pass_case("PlainMLP(5) in training mode, called with grad enabled, its weights updated in place between "
                   "calls (an optimizer step)",
                   _pass_spec(lambda a: PlainMLP(5, a), [(2, 5), (2, 5)], 6, train=True, step=True, grad=True)),
    ]


def _inputs_as_given() -> list[Case]:
    """capture_graphs cases whose graphs depend on the inputs themselves: which of them are one tensor, which
    require grad."""
    def same_twice():
        _reset()
        _remember_settings()
        x = torch.randn(5, generator=_gen(13))
        return (product_plus, x, x)

    def requiring_grad():
        _reset()
        _remember_settings()
        return (needs_grad_path, torch.randn(5, generator=_gen(14)).requires_grad_())

    return [Case("product_plus(x, x): one tensor passed as both inputs", same_twice, data={"variants": ("clone",)}),
            Case("needs_grad_path(x): an input that requires grad, and a branch on x.requires_grad",
                 requiring_grad, data={"grad": True, "variants": ("detach",)})]


def _fn_cases(warm: bool) -> list[Case]:
    model, function = _makers(warm)

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
    # called with grad enabled (as the grader calls every answer): under torch.no_grad() fn takes another path
    cases += [Case("grad_gated: a .item() only when grad is enabled, called with grad enabled",
                   function(grad_gated, (5,), 15), data={"grad": True, "variants": ("no_grad",)})]
    if warm:   # capture_graphs
        cases += [Case("GateNet(4) in float64", model(lambda: GateNet(4), (3, 4), 8, torch.float64)),
                  Case("returns_a_number: the graph ends at .item()", function(returns_a_number, (4,), 7)),
                  # a second call of the compiled model compiles again: the graphs of one call are asked for
                  Case("Stepper(4): counts its calls in an int attribute (each call compiles anew)",
                       model(lambda: Stepper(4), (2, 4), 12)),
                  Case("TrainNet(4) in training mode (BatchNorm1d, Dropout): the model stays in it",
                       model(lambda: TrainNet(4), (3, 4), 16, train=True),
                       data={"train": True, "variants": ("eval",)})]
        cases += _inputs_as_given()
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
