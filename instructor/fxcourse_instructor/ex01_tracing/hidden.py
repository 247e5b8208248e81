"""The hidden cases of ex01_tracing: what each case function of its `cases` builds for hidden=True (the
instructor's side: reached through autograder.checks.keyring.hidden, never installed where learners work)."""
from __future__ import annotations

import torch
import torch.fx as fx

from fxplayground import ThreeReluNet, TinyNet

from autograder.checks.framework import Case
from autograder.checks.randmodels import manual_seed, random_mlp, seeded_randn
from autograder.checks.ex01_tracing.cases import _match_case, _op_cases, _tiny_pair, _traced
from autograder.checks.ex01_tracing.models import DeadBranch, GradModeNet, OpcodeNames, ScaledSkip, TwiceAndSpare


def _graph_cases() -> list[Case]:
    return [Case("ThreeReluNet (unseen)", _traced(ThreeReluNet)),
            Case("ScaledSkip with get_attr and two inputs (unseen)", _traced(ScaledSkip)),
            Case("DeadBranch: a node nobody uses (unseen)", _traced(DeadBranch)),
            Case("OpcodeNames: nodes named like opcodes (unseen)", _traced(OpcodeNames))] + [
        Case(f"random model seed {s}", _traced(lambda s=s: random_mlp(s))) for s in (11, 12)]


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

    return [
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
    ]


def _plain_count_cases() -> list[Case]:
    out = [case for base in _graph_cases() for case in _op_cases(base, ("placeholder", "get_attr", "call_method",
                                                                         "call_function"))]
    out.append(Case("TinyNet, op passed by keyword", _traced(TinyNet), kwargs=lambda: {"op": "call_module"},
                    data={"op": "call_module"}))
    out.append(Case("a module called twice and one never called, op='call_module' (unseen)",
                    lambda: (fx.symbolic_trace(TwiceAndSpare()), "call_module"), data={"op": "call_module"}))
    for op in ("", "call_modle"):   # ops no node has: an empty string is not None, a typo matches nothing
        out.append(Case(f"TinyNet, op={op!r} (no node has it)", lambda op=op: (fx.symbolic_trace(TinyNet()), op),
                        data={"op": op}))
    return out
