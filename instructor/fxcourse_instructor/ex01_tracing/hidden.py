"""The hidden cases of ex01_tracing: what each case function of its `cases` builds for hidden=True (the
instructor's side: reached through autograder.checks.keyring.hidden, never installed where learners work)."""
from __future__ import annotations

import operator

import torch
import torch.fx as fx
import torch.nn as nn

from fxplayground import ThreeReluNet, TinyNet

from autograder.checks.framework import Case, given_again
from autograder.checks.randmodels import (
    edited_not_recompiled, manual_seed, negate_in_place, random_mlp, seeded_randn, split_in_two
)
from autograder.checks.ex01_tracing.cases import _match_case, _op_cases, _tiny_pair, _traced
from autograder.checks.ex01_tracing.models import (
    DeadBranch, DropoutNet, GradModeNet, LogNet, Namesakes, OpcodeNames, ScaledSkip, Spectrum, TwiceAndSpare,
    times_grad_flag,
)


def _renamed_by_a_pass() -> tuple[fx.GraphModule]:
    """TinyNet's trace after a pass put torch.neg after the relu as a node it named flip_sign: the names are the
    graph's own (a new trace of gm would call that node neg)."""
    gm = fx.symbolic_trace(TinyNet())
    relu = next(n for n in gm.graph.nodes if n.name == "relu")
    with gm.graph.inserting_after(relu):
        flip = gm.graph.create_node("call_function", torch.neg, (relu,), name="flip_sign")
    relu.replace_all_uses_with(flip, delete_user_cb=lambda user: user is not flip)
    gm.recompile()
    return (gm,)


def _seeded(seed: int, make):
    """make(), with torch's random numbers seeded first (its weights)."""
    manual_seed(seed)
    return make()


def _graph_cases() -> list[Case]:
    return [Case("ThreeReluNet (unseen)", _traced(ThreeReluNet)),
            Case("ScaledSkip with get_attr and two inputs (unseen)", _traced(ScaledSkip)),
            Case("DeadBranch: a node nobody uses (unseen)", _traced(DeadBranch)),
            Case("OpcodeNames: nodes named like opcodes (unseen)", _traced(OpcodeNames))] + [
        Case(f"random model seed {s}", _traced(lambda s=s: random_mlp(s))) for s in (11, 12)] + [
        Case("Namesakes: inputs named input and output, so placeholder input_1 and output node output_1 (unseen)",
             _traced(Namesakes)),
        Case("TinyNet with a node a pass named flip_sign (unseen)", _renamed_by_a_pass),
        Case("TinyNet with a node a pass inserted, gm not recompiled yet (unseen)",
             lambda: (edited_not_recompiled(TinyNet()),)),
        Case("TinyNet split in two GraphModules by split_module, each with a graph of its own (unseen)",
             lambda: (split_in_two(_seeded(5, TinyNet), ("x", "fc1")),)),
        given_again("TinyNet's trace given again, after a pass put torch.neg after its output in place (unseen)",
                    _traced(TinyNet), negate_in_place)]


def _with_tail(model: nn.Module, op: str, target, *args) -> fx.GraphModule:
    """model's trace with one more node applied to its output: (op, target) on (output, *args)."""
    gm = fx.symbolic_trace(model)
    out = next(n for n in gm.graph.nodes if n.op == "output")
    with gm.graph.inserting_before(out):
        tail = gm.graph.create_node(op, target, (out.args[0], *args))
    out.args = (tail,)
    gm.recompile()
    return gm


def _match_cases() -> list[Case]:
    def two_inputs():
        manual_seed(3)
        m = ScaledSkip()
        return m, fx.symbolic_trace(m), seeded_randn(4, 3, seed=1), seeded_randn(4, 3, seed=2)

    def broadcast_trap():
        manual_seed(4)
        m = TinyNet()
        gm = fx.symbolic_trace(m)
        g = fx.Graph()  # the same computation, but the output is averaged over the batch of one
        x = g.placeholder("x")
        out = g.call_module("fc2", (g.call_function(torch.relu, (g.call_module("fc1", (x,)),)),))
        g.output(g.call_method("mean", (out, 0)))
        return m, fx.GraphModule(gm, g), seeded_randn(1, 4, seed=4)

    def grad_mode():
        m = GradModeNet()
        return m, fx.symbolic_trace(m), seeded_randn(3, 2, seed=5)

    def off_by_atol():   # multiples of 0.25: relu(x) + 0.25 - relu(x) is 0.25 exactly
        m = nn.ReLU()
        x = torch.round(seeded_randn(2, 4, seed=12) * 4) / 4
        return m, _with_tail(m, "call_function", operator.add, 0.25), x

    def transposed():    # (1, 4) against (4, 1), one value throughout: torch.allclose broadcasts them to equal
        m = nn.ReLU()
        return m, _with_tail(m, "call_method", "t"), seeded_randn(1, 1, seed=13).abs().expand(1, 4).clone()

    def with_inf():      # log(0) is -inf, in both outputs
        m = LogNet()
        x = torch.cat([torch.zeros(2, 1), seeded_randn(2, 3, seed=14).abs() + 0.1], dim=1)
        return m, fx.symbolic_trace(m), x

    def conjugated():    # the same real parts, the imaginary parts negated
        m = Spectrum()
        return m, _with_tail(m, "call_function", torch.conj_physical), seeded_randn(2, 8, seed=10)

    def grad_read_at_run_time():   # gm calls times_grad_flag, which reads the grad mode whenever gm runs
        m = GradModeNet()
        g = fx.Graph()
        g.output(g.call_function(times_grad_flag, (g.placeholder("x"),)))
        return m, fx.GraphModule(nn.Module(), g), seeded_randn(3, 2, seed=15)

    def with_nan():      # log of a negative number is nan, in both outputs
        m = LogNet()
        return m, fx.symbolic_trace(m), -seeded_randn(2, 3, seed=16).abs() - 0.1

    def dropout_training():   # both in training mode: each run drops other values
        manual_seed(17)
        m = DropoutNet().train()
        return m, fx.symbolic_trace(m), seeded_randn(5, 4, seed=17)

    return [   # atol=0 passed first: an answer that floors atol is told so before a case that keeps the default
        _match_case("TinyNet with outputs near 1e-3, off by about 1e-9, atol=0 (exact)",
                    lambda: _tiny_pair(1e-9, seed=9, scale=1e-3), atol=0.0),
        _match_case("TinyNet off by 1e-7, atol=0 (exact)", lambda: _tiny_pair(1e-7, seed=1)),
        _match_case("TinyNet off by 1e-7, atol=1e-3", lambda: _tiny_pair(1e-7, seed=1), atol=1e-3),
        _match_case("TinyNet off by 0.1, atol=1e-3", lambda: _tiny_pair(0.1, seed=2), atol=1e-3),
        _match_case("TinyNet with outputs near 1e4, off by 0.05, atol=1e-3 (no relative tolerance)",
                    lambda: _tiny_pair(0.05, seed=6, scale=1e4), atol=1e-3),
        _match_case("a model with two inputs and its trace", two_inputs),
        _match_case("outputs of shapes (1, 2) and (2,) that broadcast", broadcast_trap),
        _match_case("a model whose output shows whether no_grad was on", grad_mode),
        _match_case("outputs of shapes (1, 2) and (2,) that broadcast, atol=1e-3", broadcast_trap, atol=1e-3),
        _match_case("TinyNet off by 0.5, atol=1.0", lambda: _tiny_pair(0.5, seed=7), atol=1.0),
        _match_case("TinyNet with one output column off by 0.5 (the mean difference 0.25), atol=0.3",
                    lambda: _tiny_pair(0.5, seed=8), atol=0.3),
        _match_case("outputs off by exactly atol=0.25", off_by_atol, atol=0.25),
        _match_case("outputs of shapes (1, 4) and (4, 1) holding one value, atol=0.1", transposed, atol=0.1),
        _match_case("outputs holding -inf at the same places (log of 0)", with_inf),
        _match_case("complex outputs whose imaginary parts differ (rfft, and its conjugate)", conjugated),
        _match_case("outputs holding nan at the same places (log of a negative number)", with_nan),
        _match_case("outputs holding nan at the same places (log of a negative number), atol=1e-3", with_nan,
                    atol=1e-3),
        _match_case("a GraphModule that reads the grad mode each time it runs, and the model it computes",
                    grad_read_at_run_time),
        _match_case("a model with a Dropout and its trace, both in training mode (each run drops other values), "
                    "atol=1e-3", dropout_training, atol=1e-3),
        _given_again(_match_case("TinyNet and its trace given again, after a pass put torch.neg after the trace's "
                                 "output in place", lambda: _tiny_pair(seed=18))),
    ]


def _given_again(case: Case) -> Case:
    """`case` (a model, its trace, inputs) given again: the second time, the trace returns its output negated."""
    def change(model, gm, *inputs):
        for log in model.__dict__["_fxcourse_runs"]:   # the runs and comparisons of the second call alone
            log.clear()
        negate_in_place(gm)
    return given_again(case.label, case.make, change, kwargs=case.kwargs, data=case.data)


def _plain_count_cases() -> list[Case]:
    out = [case for base in _graph_cases() if base.again is None
           for case in _op_cases(base, ("placeholder", "get_attr", "call_method", "call_function"))]
    out.append(given_again("TinyNet's trace given again, after a pass put torch.neg after its output in place, "
                           "op='call_function' (unseen)", lambda: (fx.symbolic_trace(TinyNet()), "call_function"),
                           lambda gm, op: negate_in_place(gm), data={"op": "call_function"}))
    out.append(Case("TinyNet, op passed by keyword", _traced(TinyNet), kwargs=lambda: {"op": "call_module"},
                    data={"op": "call_module"}))
    out.append(Case("a module called twice and one never called, op='call_module' (unseen)",
                    lambda: (fx.symbolic_trace(TwiceAndSpare()), "call_module"), data={"op": "call_module"}))
    # ops no node has: an empty string is not None, a typo, a part of opcodes, another case or a space match nothing
    for op in ("", "call_modle", "call", "Placeholder", " placeholder", "all"):
        out.append(Case(f"TinyNet, op={op!r} (no node has it)", lambda op=op: (fx.symbolic_trace(TinyNet()), op),
                        data={"op": op}))
    return out
