"""The hidden cases of ex08_pipeline: what each case function of its `cases` builds for hidden=True (the
instructor's side: reached through autograder.checks.keyring.hidden, never installed where learners work)."""
from __future__ import annotations

import copy

import torch
import torch.fx as fx
import torch.nn as nn

from fxplayground import ConvBNNet, DropoutNet, LinearChain, SharedConvNet

from autograder.checks.framework import Case
from autograder.checks.randmodels import manual_seed, random_convnet, random_mlp, randomize_batchnorm, seeded_randn
from autograder.checks.ex08_pipeline.models import (
    _Log, AlphaDropoutNet, BatchStatsBNNet, BranchyLinearNet, ConvSkipNet, DropBetweenNet, FunctionalDropoutNet,
    MisplaceNeg, ModuleFedNet, SharedChainNet, SharedFirstLinearNet, SubclassLinearNet, TrainBranchNet,
    UnusedInputNet, UpsampleBNNet
)
from autograder.checks.ex08_pipeline.cases import (
    _NEW_EACH_ROUND, _all_to_f_relu, _all_to_torch_relu, _bypass_missing_modules, _cancel_one_double_neg,
    _delete_dropout_modules, _drop_mul_one_copy, _grow, _knots, _misspell_op, _mlp_width, _opt_case, _pipeline_case,
    _probe, _relu_to_f_relu_one, _seeded, _shared_pass, _toggle_relu
)


def _misplace_neg_in_copy(gm: fx.GraphModule) -> fx.GraphModule:
    """Broken on purpose, in a new GraphModule: appends neg(result) after the output node of a copy of the graph
    and makes the output read it; forgets recompile(), so the copy's code is still the code it was built with."""
    new = fx.GraphModule(gm, copy.deepcopy(gm.graph))
    out = next(n for n in new.graph.nodes if n.op == "output")
    late = new.graph.call_function(torch.neg, (out.args[0],))  # no inserting_before: lands after output
    out.args = (late,)
    return new


def _pipeline_cases() -> list[Case]:
    def h_retarget():
        gm, log = _knots(2)
        return gm, [_probe(log, "relu_to_f_relu", _relu_to_f_relu_one)]

    def h_retarget_after_drop():
        gm, log = _knots(11)
        return gm, [_probe(log, "relu_to_f_relu", _relu_to_f_relu_one),
                    _probe(log, "drop_mul_one", _drop_mul_one_copy)]

    def h_sloppy():
        gm, log = _knots(3)
        return gm, [_probe(log, "cancel_double_neg_no_recompile",
                           lambda g: _cancel_one_double_neg(g, recompile=False))]

    def h_new_each_time():
        gm, log = _knots(4)
        return gm, [_probe(log, "drop_mul_one", _drop_mul_one_copy)]

    def h_grow(limit, name):
        def make():
            gm, log = _knots(5)
            return gm, [_probe(log, name, _grow(limit))]
        return make

    def h_three_positional():
        gm, log = _knots(6)
        return gm, [_probe(log, "drop_mul_one", _drop_mul_one_copy),
                    _probe(log, "relu_to_f_relu", _relu_to_f_relu_one),
                    _probe(log, "cancel_double_neg", _cancel_one_double_neg)], 6

    def h_dangling():
        manual_seed(7)
        gm = fx.symbolic_trace(DropoutNet().eval())
        log = _Log((seeded_randn(4, 6, seed=7),))
        gm._fxcourse_log = log
        return gm, [_probe(log, "delete_dropout_modules", _delete_dropout_modules),
                    _probe(log, "bypass_missing_modules", _bypass_missing_modules)]

    def h_object():
        gm, log = _knots(8)
        broken = MisplaceNeg()
        broken.log = log
        return gm, [_probe(log, "cancel_double_neg", _cancel_one_double_neg), broken]

    def h_empty():
        gm, _ = _knots(9)
        return gm, []

    def h_returns_none():
        gm, log = _knots(10)
        return gm, [_probe(log, "cancel_double_neg", _cancel_one_double_neg),
                    _probe(log, "forgets_return", lambda g: None)]

    def h_returns_graph():
        gm, log = _knots(12)
        return gm, [_probe(log, "cancel_double_neg", _cancel_one_double_neg),
                    _probe(log, "returns_graph", lambda g: g.graph)]

    def h_returns_module():
        gm, log = _knots(13)
        return gm, [_probe(log, "wraps_in_sequential", lambda g: nn.Sequential(g))]

    def h_broken_copy():
        gm, log = _knots(14)
        return gm, [_probe(log, "cancel_double_neg", _cancel_one_double_neg),
                    _probe(log, "misplace_neg_in_copy", _misplace_neg_in_copy)]

    def h_toggle():
        gm, log = _knots(15)
        return gm, [_probe(log, "toggle_relu", _toggle_relu)]

    def h_undo():
        gm, log = _knots(16)
        return gm, [_probe(log, "relu_to_f_relu_all", _all_to_f_relu),
                    _probe(log, "f_relu_to_relu_all", _all_to_torch_relu)]

    def h_shared(seed):
        def make():
            gm, log = _knots(seed)
            return gm, [_shared_pass(log)]
        return make

    def h_misspelt():
        gm, log = _knots(19)
        return gm, [_probe(log, "cancel_double_neg", _cancel_one_double_neg),
                    _probe(log, "misspell_op", _misspell_op)]

    return [
        _pipeline_case("Knots with [relu_to_f_relu, drop_mul_one]: round 1 removes nodes, round 2 changes the "
                       "code but not the node count", h_retarget_after_drop),
        _pipeline_case("Knots with [relu_to_f_relu]: the code changes, the node count does not", h_retarget),
        _pipeline_case("Knots with a pass that edits the graph but forgets gm.recompile()", h_sloppy),
        _pipeline_case("Knots with a pass that returns a new GraphModule every time, even when nothing changes",
                       h_new_each_time, converges=_NEW_EACH_ROUND.format(name="its pass")),
        _pipeline_case("max_rounds=4, a pass that changes the graph on its first 3 calls",
                       h_grow(3, "grow_three_times"), kwargs={"max_rounds": 4},
                       converges="rounds 1-3 change gm.code and round 4, the last one max_rounds=4 allows, leaves "
                                 "it as it was: that round is the fixed point, so run it (rounds 1 to max_rounds) "
                                 "and raise only when round max_rounds still changed the code"),
        _pipeline_case("max_rounds=4, a pass that changes the graph on its first 4 calls",
                       h_grow(4, "grow_four_times"), kwargs={"max_rounds": 4}, raises="4",
                       hint="ex08.after_max_rounds_rounds_all"),
        _pipeline_case("default max_rounds, a pass that never stops changing the graph",
                       h_grow(None, "grow_forever"), raises="10",
                       hint="ex08.max_rounds_defaults_10_after"),
        _pipeline_case("three passes, max_rounds=6 given by position", h_three_positional),
        _pipeline_case("DropoutNet with [delete_dropout_modules, bypass_missing_modules]: the first leaves "
                       "call_module nodes whose submodule is gone, the second repairs the graph",
                       h_dangling, raises="delete_dropout_modules", repaired=True),
        _pipeline_case("a callable object MisplaceNeg() (no __name__) that breaks the graph", h_object,
                       raises="MisplaceNeg"),
        _pipeline_case("no passes at all", h_empty),
        _pipeline_case("Knots with [cancel_double_neg, forgets_return]: the second pass returns None "
                       "(wrong snippet 11)", h_returns_none, raises="forgets_return", error="TypeError"),
        _pipeline_case("Knots with [cancel_double_neg, returns_graph]: the second pass returns gm.graph, an "
                       "fx.Graph", h_returns_graph, raises="returns_graph", error="TypeError", returns="an fx.Graph"),
        _pipeline_case("Knots with [wraps_in_sequential]: the pass returns nn.Sequential(gm), an nn.Module that is no "
                       "GraphModule", h_returns_module, raises="wraps_in_sequential", error="TypeError",
                       returns="an nn.Sequential"),
        _pipeline_case("Knots with [cancel_double_neg, misplace_neg_in_copy]: the second pass returns a new "
                       "GraphModule whose graph is broken (and forgets recompile())", h_broken_copy,
                       raises="misplace_neg_in_copy", new_gm=True),
        _pipeline_case("Knots with [toggle_relu]: every call turns torch.relu into F.relu and back, so the code "
                       "of round 3 is that of round 1 again, and no round leaves it as the round found it",
                       h_toggle, raises="10", hint="ex08.code_seen_before_is_no_fixed_point"),
        _pipeline_case("Knots with [relu_to_f_relu_all, f_relu_to_relu_all]: the second pass undoes the first",
                       h_undo, converges="each pass changes gm.code, and f_relu_to_relu_all changes it back: the "
                                         "round as a whole leaves gm.code as it found it, which is the fixed point "
                                         "(compare the code before and after the whole round, not around each "
                                         "pass)"),
        _pipeline_case("Knots seed 17 with [shared_relu_to_f_relu], a pass function the next case is given too",
                       h_shared(17)),
        _pipeline_case("Knots seed 18 with [shared_relu_to_f_relu], the pass function the case before was given: "
                       "a new GraphModule with the same code", h_shared(18)),
        _pipeline_case("Knots with [cancel_double_neg, misspell_op]: misspell_op gives a node the opcode "
                       "'call_functon', which lint names and gm.recompile() fails on", h_misspelt,
                       raises="misspell_op", unrecompilable=True),
    ]


def _opt_cases() -> list[Case]:
    steps = ("linear", "dropout", "chain", "relu_method", "shared", "residual", "chain")
    cases = [
        _opt_case("random MLP seed 3 (training mode)", lambda: random_mlp(3).train(), (3, _mlp_width(3)), 3),
        _opt_case("random MLP with linear, dropout, chain, shared and residual steps",
                  lambda: random_mlp(21, width=6, steps=steps), (3, 6), 21),
        _opt_case("random conv net seed 5 (a shared conv, training mode)",
                  lambda: random_convnet(5, shared=True).train(), (2, 3, 6, 6), 5),
    ]
    cases += [
        _opt_case("SharedConvNet: one conv called from two sites", lambda: randomize_batchnorm(
            _seeded(SharedConvNet, 7).eval(), 7), (2, 4, 5, 5), 7),
        _opt_case("TrainBranchNet: `if self.training:` in forward, a dead auxiliary head; arrives in training mode",
                  lambda: _seeded(TrainBranchNet, 8), (4, 6), 8),
        _opt_case("DropBetweenNet: Dropout2d between Conv2d and BatchNorm2d, dropout inside a Linear chain",
                  lambda: randomize_batchnorm(_seeded(DropBetweenNet, 10), 10), (2, 3, 6, 6), 10),
        _opt_case("SharedChainNet: fc_b follows fc_a but is also called on its own",
                  lambda: _seeded(SharedChainNet, 11).eval(), (4, 6), 11),
        _opt_case("BranchyLinearNet: fc1's output has two users", lambda: _seeded(BranchyLinearNet, 12).eval(),
                  (4, 6), 12),
        _opt_case("ModuleFedNet: a BatchNorm2d after an nn.ReLU module, a Linear after an nn.Tanh module",
                  lambda: randomize_batchnorm(_seeded(ModuleFedNet, 14), 14), (2, 3, 5, 5), 14),
        _opt_case("ConvBNNet with tiny running variances (eps matters)",
                  lambda: randomize_batchnorm(_seeded(ConvBNNet, 13).eval(), 13, 1e-4, 1e-3), (2, 3, 6, 6), 13),
        _opt_case("ConvSkipNet: the conv's output feeds its BatchNorm2d and a skip connection (bn(y) + y)",
                  lambda: randomize_batchnorm(_seeded(ConvSkipNet, 15).eval(), 15), (2, 3, 5, 5), 15),
        _opt_case("SharedFirstLinearNet: fc2(fc1(x)) + fc1(x), the first Linear of the pair is called from two "
                  "sites", lambda: _seeded(SharedFirstLinearNet, 16).eval(), (4, 6), 16),
        _opt_case("UpsampleBNNet: a BatchNorm2d after a ConvTranspose2d, then a Conv2d -> BatchNorm2d",
                  lambda: randomize_batchnorm(_seeded(UpsampleBNNet, 17).eval(), 17), (2, 4, 3, 3), 17),
        _opt_case("FunctionalDropoutNet: F.dropout2d, F.dropout, F.alpha_dropout and torch.dropout; arrives in "
                  "training mode", lambda: _seeded(FunctionalDropoutNet, 18), (2, 3, 5, 5), 18),
        _opt_case("SubclassLinearNet: fc1 is torch.nn's NonDynamicallyQuantizableLinear, a subclass of nn.Linear, "
                  "followed by an nn.Linear", lambda: _seeded(SubclassLinearNet, 19).eval(), (4, 6), 19),
        _opt_case("AlphaDropoutNet: nn.FeatureAlphaDropout and nn.AlphaDropout modules; arrives in training mode",
                  lambda: _seeded(AlphaDropoutNet, 22), (2, 3, 5, 5), 22),
        Case("LinearChain 6 -> 8 -> 8 -> 5 in float64, and a float64 input",
             lambda: (_seeded(LinearChain, 24, (6, 8, 8, 5)).double().eval(),
                      (seeded_randn(4, 6, seed=24).double(),))),
        Case("UnusedInputNet: forward(x, mask) never reads mask; the caller passes both",
             lambda: (_seeded(UnusedInputNet, 25).eval(), (seeded_randn(4, 6, seed=25), seeded_randn(4, 6, seed=26)))),
        _opt_case("BatchStatsBNNet: a BatchNorm2d(track_running_stats=False) after a Conv2d normalises with the "
                  "batch's statistics in eval mode too", lambda: _seeded(BatchStatsBNNet, 27).eval(),
                  (2, 3, 5, 5), 27),
    ]
    return cases
