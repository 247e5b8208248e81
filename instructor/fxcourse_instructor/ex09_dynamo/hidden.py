"""The hidden cases of ex09_dynamo: what each case function of its `cases` builds for hidden=True (the
instructor's side: reached through autograder.checks.keyring.hidden, never installed where learners work)."""
from __future__ import annotations

import torch

from autograder.checks.framework import Case
from autograder.checks.ex09_dynamo.cases import _makers, _pass_case, _pass_spec
from autograder.checks.ex09_dynamo.models import (
    BreakNet, GateNet, NestedBreak, PlainMLP, Stepper, TailNet, TrainBreak, TrainNet, _gen, _recording_backend,
    _remember_settings, _reset, break_if_grad, break_if_same, contiguity_path, grad_gated, hooked_mlp,
    needs_grad_path, product_plus, relu_twice, returns_a_number, scaled_by_item, sin_thrice, two_items,
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
        _pass_case("TailNet(4): a graph break before the last Linear, so the second graph has no ReLU",
                   _pass_spec(lambda a: TailNet(4, a), [(3, 4)], 7)),
        # one pass object for two models: what was compiled for the first is not the second's
        _pass_case("GateNet(4) seed 8 with a relu_to_sigmoid pass object", _pass_spec(lambda a: GateNet(4, a),
                   [(3, 4)], 8, shared="one pass")),
        _pass_case("GateNet(4) seed 9, other weights, with the same pass object as the case before", _pass_spec(
            lambda a: GateNet(4, a), [(3, 4)], 9, shared="one pass")),
        # a pass with a bug: the caller's call fails with its error, nothing runs without the pass
        _pass_case("PlainMLP(4) with a pass that raises ValueError on every graph", _pass_spec(
            lambda a: PlainMLP(4, a), [(2, 4)], 10, failing=True), pass_raises=True),
    ]


def _given(fn, seed: int, how: str):
    """A case's make: fn on an input of `seed` as `how` says: "same" (one tensor as both inputs), "grad" (it
    requires grad) or "transposed" (not contiguous)."""
    def make():
        _reset()
        _remember_settings()
        if how == "transposed":
            return (fn, torch.randn(6, 4, generator=_gen(seed)).t())
        x = torch.randn(5, generator=_gen(seed))
        return (fn, x, x) if how == "same" else (fn, x.requires_grad_())
    return make


def _inputs_as_given() -> list[Case]:
    """capture_graphs cases whose graphs depend on the inputs themselves: which of them are one tensor, which
    require grad, which are contiguous."""
    return [Case("product_plus(x, x): one tensor passed as both inputs", _given(product_plus, 13, "same"),
                 data={"variants": ("clone",)}),
            Case("needs_grad_path(x): an input that requires grad, and a branch on x.requires_grad",
                 _given(needs_grad_path, 14, "grad"), data={"grad": True, "variants": ("detach",)}),
            Case("contiguity_path(x) on a transposed input, and a branch on x.is_contiguous()",
                 _given(contiguity_path, 17, "transposed"))]


def _breaks_as_given() -> list[Case]:
    """graph_break_count cases whose breaks depend on the inputs themselves: one tensor as both, one that
    requires grad."""
    return [Case("break_if_same(x, x): one tensor passed as both inputs, a break only when they are one",
                 _given(break_if_same, 18, "same")),
            Case("break_if_grad(x): an input that requires grad, a break only then", _given(break_if_grad, 19, "grad"),
                 data={"grad": True})]


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
    # and called under torch.no_grad() by its caller: fn then takes the path without .item(), whatever the answer wants
    cases += [Case("grad_gated called under torch.no_grad(): no .item() on that path", function(grad_gated, (5,), 27),
                   around=torch.no_grad, data={"variants": ("enable_grad",)})]
    if warm:   # capture_graphs
        cases += [Case("GateNet(4) in float64", model(lambda: GateNet(4), (3, 4), 8, torch.float64)),
                  Case("returns_a_number: the graph ends at .item()", function(returns_a_number, (4,), 7)),
                  # a second call of the compiled model compiles again: the graphs of one call are asked for
                  Case("Stepper(4): counts its calls in an int attribute (each call compiles anew)",
                       model(lambda: Stepper(4), (2, 4), 12)),
                  Case("TrainNet(4) in training mode (BatchNorm1d, Dropout): the model stays in it",
                       model(lambda: TrainNet(4), (3, 4), 16, train=True),
                       data={"train": True, "variants": ("eval",)}),
                  Case("sin_thrice: the same graph three times, between two breaks", function(sin_thrice, (5,), 21)),
                  Case("PlainMLP(4) with a forward hook the caller registered",
                       model(lambda: hooked_mlp(4), (2, 4), 22))]
        cases += _inputs_as_given()
    else:      # graph_break_count
        cases += [Case("NestedBreak: the branch inside a submodule", model(lambda: NestedBreak(5), (3, 5), 5)),
                  Case("TrainBreak(4) in training mode: a .item() in training mode only",
                       model(lambda: TrainBreak(4), (3, 4), 23, train=True)),
                  Case("TrainBreak(4) in eval mode: nothing breaks its graph",
                       model(lambda: TrainBreak(4), (3, 4), 24))]
        cases += _breaks_as_given()
    if warm:
        def warmed():
            fn, x = function(relu_twice, (6,), 9)()
            import torch._dynamo
            for _ in range(torch._dynamo.config.recompile_limit):   # a notebook's earlier experiments
                torch.compile(fn, backend=_recording_backend([]))(x)
            return fn, x
        cases.append(Case("relu_twice, compiled eight times before in this kernel", warmed,
                          data={"cold": function(relu_twice, (6,), 9), "warm": True}))

        def other_length():
            fn, x = function(relu_twice, (7,), 25)()
            torch.compile(fn, backend=_recording_backend([]))(torch.randn(5, generator=_gen(26)))
            return fn, x   # without a reset, dynamo compiles the second length with a symbolic size

        cases.append(Case("relu_twice, compiled before in this kernel on an input of another length", other_length,
                          data={"cold": function(relu_twice, (7,), 25), "warm": True}))
    return cases
