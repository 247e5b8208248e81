"""Checks of ex08_pipeline: run_pipeline, optimize_for_inference.

run_pipeline is run on *probe* passes built by each case: small, deterministic passes that record every call
(its name and the size of the graph it received) in a plain log. The log is read back in evidence(), so the
judge can compare the rounds and calls with those of a reference pipeline run on fresh probes.
Cases whose data has "raises" expect run_pipeline to raise (see autograder.checks.framework.Case).

optimize_for_inference is judged on numbers (outputs against model.eval() on seeded inputs, rtol=1e-4,
atol=1e-5) and on structure, read from the returned graph: no dropout, no BatchNorm2d right after a Conv2d
that could be folded, no Linear -> Linear chain that could be fused, no dead node, no unused submodule, every
module in eval mode, and the model passed in left unchanged.
"""
from __future__ import annotations

import copy
import operator
from collections import Counter

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from fxplayground import ConvBNNet, DropoutNet, LinearChain, SharedConvNet

from autograder.checks.framework import Case, Check, CheckFailed
from autograder.checks.evidence import (
    describe_graph, expect, expect_close, expect_lint, expect_type, graph_module_evidence,
)
from autograder.checks.randmodels import random_convnet, random_mlp, randomize_batchnorm

# =========================================================================================== run_pipeline


class Knots(nn.Module):
    """Redundant arithmetic for the probe passes to untangle: double negations, multiplications by one."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = torch.neg(torch.neg(x))
        b = torch.relu(a) * 1.0
        c = torch.neg(torch.neg(torch.neg(torch.neg(b))))
        return torch.relu(c) + torch.sigmoid(x) * 1.0


class _Log:
    """What the probe passes of one case did: a list of [pass name, nodes in the graph it received]."""

    def __init__(self, inputs: tuple) -> None:
        self.calls: list[list] = []
        self.inputs = inputs
        self.expect_raise = False


def _probe(log: _Log, name: str, body):
    """A pass named `name` that logs its call, then runs `body(gm)` and returns what body returns."""
    def run(gm):
        log.calls.append([name, len(gm.graph.nodes)])
        return body(gm)
    run.__name__ = run.__qualname__ = name
    run.log = log
    return run


def _cancel_one_double_neg(gm: fx.GraphModule, recompile: bool = True) -> fx.GraphModule:
    """Removes the first neg(neg(x)) it finds (one per call, on purpose); in place."""
    for node in gm.graph.nodes:
        inner = node.args[0] if node.args else None
        if (node.op == "call_function" and node.target is torch.neg and isinstance(inner, fx.Node)
                and inner.op == "call_function" and inner.target is torch.neg and len(inner.users) == 1):
            node.replace_all_uses_with(inner.args[0])
            gm.graph.erase_node(node)
            gm.graph.erase_node(inner)
            break
    if recompile:
        gm.recompile()
    return gm


def _drop_mul_one_copy(gm: fx.GraphModule) -> fx.GraphModule:
    """Removes every `x * 1.0`, in a new GraphModule (returned even when nothing changed)."""
    new = copy.deepcopy(gm)
    for node in list(new.graph.nodes):
        if (node.op == "call_function" and node.target in (operator.mul, torch.mul) and len(node.args) == 2
                and not isinstance(node.args[1], fx.Node) and node.args[1] == 1.0):
            node.replace_all_uses_with(node.args[0])
            new.graph.erase_node(node)
    new.recompile()
    return new


def _relu_to_f_relu_one(gm: fx.GraphModule) -> fx.GraphModule:
    """Retargets the first torch.relu call to F.relu: the code changes, the node count does not."""
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.relu:
            node.target = F.relu
            break
    gm.recompile()
    return gm


def _grow(limit: int | None):
    """A pass that wraps the output in neg(neg(.)) on each of its first `limit` calls (always if None)."""
    state = {"n": 0}

    def body(gm):
        state["n"] += 1
        if limit is None or state["n"] <= limit:
            out = next(n for n in gm.graph.nodes if n.op == "output")
            value = out.args[0]
            with gm.graph.inserting_before(out):
                twice = gm.graph.call_function(torch.neg, (gm.graph.call_function(torch.neg, (value,)),))
            out.args = (twice,)
            gm.recompile()
        return gm
    return body


def _misplace_neg(gm: fx.GraphModule) -> fx.GraphModule:
    """Broken on purpose: appends neg(result) after the output node and makes the output read it."""
    out = next(n for n in gm.graph.nodes if n.op == "output")
    late = gm.graph.call_function(torch.neg, (out.args[0],))  # no inserting_before: lands after output
    out.args = (late,)
    gm.recompile()
    return gm


class MisplaceNeg:
    """The same broken pass as a callable object (no __name__)."""

    def __call__(self, gm: fx.GraphModule) -> fx.GraphModule:
        self.log.calls.append(["MisplaceNeg", len(gm.graph.nodes)])
        return _misplace_neg(gm)


def _delete_dropout_modules(gm: fx.GraphModule) -> fx.GraphModule:
    """Broken on purpose: deletes dropout submodules but leaves their call_module nodes dangling."""
    for name, mod in list(gm.named_modules()):
        if isinstance(mod, nn.Dropout):
            gm.delete_submodule(name)
    gm.recompile()
    return gm


def _bypass_missing_modules(gm: fx.GraphModule) -> fx.GraphModule:
    """Repairs what the pass above broke: call_module nodes whose target is gone are bypassed."""
    for node in list(gm.graph.nodes):
        if node.op == "call_module":
            try:
                gm.get_submodule(node.target)
            except AttributeError:
                node.replace_all_uses_with(node.args[0])
                gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    return gm


def _x(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


_KNOTS: list[fx.Graph] = []


def _knots(seed: int = 0):
    if not _KNOTS:  # trace once; every case gets its own copy of the graph
        _KNOTS.append(fx.symbolic_trace(Knots()).graph)
    gm = fx.GraphModule(nn.Module(), copy.deepcopy(_KNOTS[0]))
    log = _Log((_x(3, 5, seed=seed),))
    gm._fxcourse_log = log
    return gm, log


def _pipeline_case(label, build, *, kwargs=None, raises=None, hint=None, error="RuntimeError"):
    """build() -> (gm, passes, *rest) with the probes' log on gm; `raises`: what the `error` must mention."""
    data = {"hint": hint}
    if raises is not None:
        data.update(raises=error, must_mention=raises)

    def make():
        args = build()
        args[0]._fxcourse_log.expect_raise = raises is not None
        return args
    return Case(label, make, kwargs=(lambda: dict(kwargs)) if kwargs else dict, data=data)


def _pipeline_cases(hidden: bool) -> list[Case]:
    def v_two_passes():
        gm, log = _knots(0)
        return gm, [_probe(log, "cancel_double_neg", _cancel_one_double_neg),
                    _probe(log, "drop_mul_one", _drop_mul_one_copy)]

    def v_misplaced():
        gm, log = _knots(1)
        return gm, [_probe(log, "cancel_double_neg", _cancel_one_double_neg),
                    _probe(log, "misplace_neg", _misplace_neg)]

    if not hidden:
        return [
            _pipeline_case("Knots with [cancel_double_neg (in place), drop_mul_one (returns a new GraphModule)]",
                           v_two_passes),
            _pipeline_case("Knots with [cancel_double_neg, misplace_neg]: misplace_neg breaks the graph",
                           v_misplaced, raises="misplace_neg",
                           hint="call gm.graph.lint() right after each pass; when it fails, raise a RuntimeError "
                                "whose message names that pass"),
        ]

    def h_retarget():
        gm, log = _knots(2)
        return gm, [_probe(log, "relu_to_f_relu", _relu_to_f_relu_one)]

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
        torch.manual_seed(7)
        gm = fx.symbolic_trace(DropoutNet().eval())
        log = _Log((_x(4, 6, seed=7),))
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

    none_hint = ("check what each pass returns before using it: when it is not a GraphModule (a pass that "
                 "forgot `return gm` returns None), raise TypeError (or RuntimeError) naming the pass")
    lint_hint = ("call gm.graph.lint() after every pass, not once per round: a later pass can hide the damage, "
                 "and the error must name the pass that did it")
    return [
        _pipeline_case("Knots with [relu_to_f_relu]: the code changes, the node count does not", h_retarget,
                       hint="detect the fixed point by comparing gm.code before and after a round: "
                            "a pass may change the graph without changing its number of nodes"),
        _pipeline_case("Knots with a pass that edits the graph but forgets gm.recompile()", h_sloppy,
                       hint="call gm.recompile() after every pass, so gm.code is current even when "
                            "a pass forgot to"),
        _pipeline_case("Knots with a pass that returns a new GraphModule every time, even when nothing changes",
                       h_new_each_time,
                       hint="compare gm.code, not the GraphModule objects: a pass may return a new but "
                            "identical GraphModule"),
        _pipeline_case("max_rounds=4, a pass that changes the graph on its first 3 calls",
                       h_grow(3, "grow_three_times"), kwargs={"max_rounds": 4},
                       hint="rounds 1-3 change the graph, round 4 changes nothing: that is a fixed point "
                            "within max_rounds=4"),
        _pipeline_case("max_rounds=4, a pass that changes the graph on its first 4 calls",
                       h_grow(4, "grow_four_times"), kwargs={"max_rounds": 4}, raises="4",
                       hint="after max_rounds rounds that all changed gm.code, raise a RuntimeError that says "
                            "no fixed point was reached in max_rounds rounds"),
        _pipeline_case("default max_rounds, a pass that never stops changing the graph",
                       h_grow(None, "grow_forever"), raises="10",
                       hint="max_rounds defaults to 10; after that many changing rounds, raise a RuntimeError "
                            "that says so"),
        _pipeline_case("three passes, max_rounds=6 given by position", h_three_positional),
        _pipeline_case("DropoutNet with [delete_dropout_modules, bypass_missing_modules]: the first leaves "
                       "call_module nodes whose submodule is gone, the second repairs the graph",
                       h_dangling, raises="delete_dropout_modules", hint=lint_hint),
        _pipeline_case("a callable object MisplaceNeg() (no __name__) that breaks the graph", h_object,
                       raises="MisplaceNeg",
                       hint="name a pass by getattr(p, '__name__', type(p).__name__): callable objects have "
                            "no __name__"),
        _pipeline_case("no passes at all", h_empty),
        _pipeline_case("Knots with [cancel_double_neg, forgets_return]: the second pass returns None "
                       "(wrong snippet 11)", h_returns_none, raises="forgets_return", error="TypeError",
                       hint=none_hint),
    ]


def _reference_pipeline(gm: fx.GraphModule, passes: list, max_rounds: int = 10) -> fx.GraphModule:
    for _ in range(max_rounds):
        before = gm.code
        for p in passes:
            gm = p(gm)
            gm.graph.lint()
            gm.recompile()
        if gm.code == before:
            return gm
    raise RuntimeError(f"no fixed point after {max_rounds} rounds")


def _pipeline_evidence(result, args):
    expect_type(result, fx.GraphModule, "run_pipeline", "a torch.fx.GraphModule")
    log = args[0]._fxcourse_log
    if log.expect_raise:  # it should have raised: do not run what it returned
        return {"returned": type(result).__name__}
    code_now = result.code
    result.recompile()
    ev = graph_module_evidence(result, "run_pipeline", [log.inputs])
    ev["stale_code"] = code_now != result.code
    ev["calls"] = [list(c) for c in log.calls]
    return ev


def _rounds_text(calls: list, per_round: int) -> str:
    if not per_round:
        return f"{len(calls)} call(s)"
    return f"{len(calls) / per_round:g} round(s) ({len(calls)} pass calls)"


def _pipeline_judge(case: Case, ev) -> None:
    hint = case.data.get("hint")
    if "raises" in case.data:
        wanted, error = case.data["must_mention"], case.data["raises"]
        if not (isinstance(ev, dict) and "__raised__" in ev):
            what = (f"no fixed point is reached within max_rounds={wanted}" if wanted.isdigit() else
                    f"the pass '{wanted}' returns None" if error == "TypeError" else
                    f"the pass '{wanted}' breaks the graph")
            raise CheckFailed(f"returned normally, expected a {error}: {what}", hint)
        bases = ev.get("bases") or [ev["__raised__"]]
        allowed = ("TypeError", "RuntimeError") if error == "TypeError" else (error,)
        expect(any(e in bases for e in allowed),
               f"raised {ev['__raised__']} ({ev['message'][:200]}), expected a {' or a '.join(allowed)}",
               hint if "__name__" in ev["message"] or error != "RuntimeError" else
               "raise RuntimeError(...) with a message that says what went wrong and where")
        expect(wanted in ev["message"],
               f"raised {error}, but its message does not mention {wanted!r}: {ev['message'][:300]!r}",
               hint)
        return

    gm, passes, *rest = case.make()
    kwargs = case.kwargs()
    per_round = len(passes)
    log = gm._fxcourse_log
    expected_gm = _reference_pipeline(gm, passes, *rest, **kwargs)
    expected_calls = log.calls
    got_calls = [list(c) for c in ev["calls"]]
    if got_calls != expected_calls:
        got_names = [c[0] for c in got_calls]
        exp_names = [c[0] for c in expected_calls]
        found = _rounds_text(got_calls, per_round)
        wanted = _rounds_text(expected_calls, per_round)
        if len(got_calls) < len(expected_calls):
            raise CheckFailed(f"the passes ran {found}, expected {wanted}: the pipeline stopped before a whole "
                              "round left gm.code unchanged",
                              hint or "keep going round after round until a whole round leaves gm.code unchanged")
        if len(got_calls) > len(expected_calls):
            raise CheckFailed(f"the passes ran {found}, expected {wanted}: the pipeline went on after a round "
                              "that left gm.code unchanged",
                              hint or "stop as soon as one round leaves gm.code unchanged: compare gm.code "
                                      "before and after the round")
        if got_names != exp_names:
            raise CheckFailed(f"the passes were called in the order {got_names}, expected {exp_names}",
                              "run the passes in the order given, each once per round")
        i = next(i for i, (g, e) in enumerate(zip(got_calls, expected_calls)) if g != e)
        raise CheckFailed(f"call {i + 1} ({got_calls[i][0]}) received a graph of {got_calls[i][1]} nodes, "
                          f"expected {expected_calls[i][1]}: it was not given the GraphModule that the pass "
                          "before it returned",
                          "a pass may return a new GraphModule: keep what it returns (gm = p(gm))")
    got_nodes = [(n["op"], n["target"]) for n in ev["graph"]]
    exp_nodes = [(n["op"], n["target"]) for n in describe_graph(expected_gm)]
    if got_nodes != exp_nodes:
        i = next((i for i, (g, e) in enumerate(zip(got_nodes, exp_nodes)) if g != e), min(len(got_nodes),
                                                                                        len(exp_nodes)))
        g = got_nodes[i] if i < len(got_nodes) else "nothing"
        e = exp_nodes[i] if i < len(exp_nodes) else "nothing"
        raise CheckFailed(f"the returned graph is not the one the last pass produced: node {i} is {g}, "
                          f"expected {e}", "return the GraphModule that the last pass returned (gm = p(gm))")
    expect_lint(ev)
    expect(not ev["stale_code"], "the returned GraphModule's gm.code is out of date with its graph",
           "call gm.recompile() after every pass")
    with torch.no_grad():
        expected_out = expected_gm(*log.inputs)
    expect_close(ev["outputs"][0], expected_out, "output of the returned GraphModule")


# ================================================================================ optimize_for_inference

DROPOUT_TYPES = ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout")
LINEAR_FUNCTIONS = ("torch.nn.functional.linear", "torch._C._nn.linear")
TOL = {"rtol": 1e-4, "atol": 1e-5}


class TrainBranchNet(nn.Module):
    """Halves its features only in training mode (a Python `if` that tracing freezes); computes a dead head."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.drop = nn.Dropout(0.5)
        self.fc2 = nn.Linear(8, 3)
        self.aux = nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc1(x)
        if self.training:
            h = h * 0.5
        unused = self.aux(torch.relu(h))  # noqa: F841 (dead on purpose)
        total = h.sum()  # noqa: F841
        return self.fc2(self.drop(h))


class DropBetweenNet(nn.Module):
    """Dropout hides a Conv2d -> BatchNorm2d pair and a Linear -> Linear chain until it is removed."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.drop2d = nn.Dropout2d(0.2)
        self.bn = nn.BatchNorm2d(4)
        self.fc1 = nn.Linear(4, 8)
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(8, 8)
        self.fc3 = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn(self.drop2d(self.conv(x))))
        h = self.fc1(x.mean(dim=(2, 3)))
        h = F.dropout(self.drop(h), p=0.1, training=self.training)
        return self.fc3(self.fc2(h))


class SharedChainNet(nn.Module):
    """fc_b follows fc_a but is also called on its own; then a chain that may be fused."""

    def __init__(self) -> None:
        super().__init__()
        self.fc_a = nn.Linear(6, 6)
        self.fc_b = nn.Linear(6, 6)
        self.fc_c = nn.Linear(6, 5)
        self.fc_d = nn.Linear(5, 4, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc_b(self.fc_a(x)) + self.fc_b(x)
        return self.fc_d(self.fc_c(y))


class BranchyLinearNet(nn.Module):
    """fc1's output feeds two linears: it has two users, so it is not a chain."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 4)
        self.fc3 = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc1(x)
        return self.fc2(h) + self.fc3(h)


class ModuleFedNet(nn.Module):
    """A BatchNorm2d after an nn.ReLU module and a Linear after an nn.Tanh module: neither follows a conv or a
    Linear, so nothing folds or fuses there (each module is called once, each output has one user)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.act = nn.ReLU()
        self.bn = nn.BatchNorm2d(4)
        self.squash = nn.Tanh()
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.bn(self.act(self.conv(x))).mean(dim=(2, 3))
        return self.fc(self.squash(h))


def _seeded(cls, seed: int, *args, **kwargs) -> nn.Module:
    torch.manual_seed(seed)
    return cls(*args, **kwargs)


def _ex(shape: tuple[int, ...], seed: int) -> tuple[torch.Tensor]:
    return (_x(*shape, seed=seed),)


def _opt_case(label: str, make_model, shape: tuple[int, ...], seed: int, hint: str | None = None,
              order: bool = False) -> Case:
    return Case(label, lambda: (make_model(), _ex(shape, seed)), data={"hint": hint, "order": order})


_SHARED_CONV = ("a Conv2d module called from two sites is shared: folding a BatchNorm into it changes the "
                "other call too; count the call sites of a conv before folding (fold only when it is called once "
                "and its output has one user)")
_TRAIN_BN = "BatchNorm in training mode normalises with batch statistics: put the copy in eval mode"


def _mlp_width(seed: int) -> int:
    return random_mlp(seed).width


def _opt_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [
            _opt_case("DropoutNet (arrives in training mode)", lambda: _seeded(DropoutNet, 0), (4, 6), 0,
                      hint="F.dropout(..., training=self.training) is traced with the mode of the moment: put a "
                           "copy of the model in eval mode before tracing, then remove every dropout"),
            _opt_case("ConvBNNet (arrives in training mode, BatchNorm statistics set)",
                      lambda: randomize_batchnorm(_seeded(ConvBNNet, 1), 1), (2, 3, 6, 6), 1, hint=_TRAIN_BN),
            _opt_case("LinearChain 16 -> 32 -> 24 -> 8", lambda: _seeded(LinearChain, 2, (16, 32, 24, 8)),
                      (4, 16), 2, hint="fold the chain step by step: W = W2 @ W1, b = W2 @ b1 + b2"),
        ]
    steps = ("linear", "dropout", "chain", "relu_method", "shared", "residual", "chain")
    cases = [
        _opt_case("random MLP seed 3 (training mode)", lambda: random_mlp(3).train(), (3, _mlp_width(3)), 3),
        _opt_case("random MLP with linear, dropout, chain, shared and residual steps",
                  lambda: random_mlp(21, width=6, steps=steps), (3, 6), 21, order=True,
                  hint="a module called from two sites is shared: fusing it in place changes the other call too"),
        _opt_case("random conv net seed 5 (a shared conv, training mode)",
                  lambda: random_convnet(5, shared=True).train(), (2, 3, 6, 6), 5, hint=_SHARED_CONV),
    ]
    cases += [
        _opt_case("SharedConvNet: one conv called from two sites", lambda: randomize_batchnorm(
            _seeded(SharedConvNet, 7).eval(), 7), (2, 4, 5, 5), 7, hint=_SHARED_CONV),
        _opt_case("TrainBranchNet: `if self.training:` in forward, a dead auxiliary head; arrives in training mode",
                  lambda: _seeded(TrainBranchNet, 8), (4, 6), 8, order=True,
                  hint="put the copy in eval mode *before* tracing: a Python `if self.training:` is decided "
                       "once, when tracing, and frozen into the graph"),
        _opt_case("DropBetweenNet: Dropout2d between Conv2d and BatchNorm2d, dropout inside a Linear chain",
                  lambda: randomize_batchnorm(_seeded(DropBetweenNet, 10), 10), (2, 3, 6, 6), 10, order=True),
        _opt_case("SharedChainNet: fc_b follows fc_a but is also called on its own",
                  lambda: _seeded(SharedChainNet, 11).eval(), (4, 6), 11,
                  hint="a Linear module called from two sites is shared: fusing into it in place changes the "
                       "other call too; fuse only when both modules are called once"),
        _opt_case("BranchyLinearNet: fc1's output has two users", lambda: _seeded(BranchyLinearNet, 12).eval(),
                  (4, 6), 12,
                  hint="fuse a pair only when the first Linear's output has exactly one user"),
        _opt_case("ModuleFedNet: a BatchNorm2d after an nn.ReLU module, a Linear after an nn.Tanh module",
                  lambda: randomize_batchnorm(_seeded(ModuleFedNet, 14), 14), (2, 3, 5, 5), 14,
                  hint="fold a BatchNorm2d only into a Conv2d, and fuse a Linear only into a Linear: check the "
                       "module type of the node before it"),
        _opt_case("ConvBNNet with tiny running variances (eps matters)",
                  lambda: randomize_batchnorm(_seeded(ConvBNNet, 13).eval(), 13, 1e-4, 1e-3), (2, 3, 6, 6), 13,
                  hint="the fold divides by sqrt(running_var + eps): keep bn.eps"),
    ]
    return cases


def _trial_inputs(example_inputs: tuple) -> list[tuple]:
    """The example itself and one seeded input shaped like it."""
    g = torch.Generator().manual_seed(1234)
    trials = [tuple(example_inputs)]
    for _ in range(1):
        trials.append(tuple(torch.randn(x.shape, generator=g) for x in example_inputs))
    return trials


def _unused_submodules(gm: fx.GraphModule) -> list[str]:
    used = {n.target for n in gm.graph.nodes if n.op in ("call_module", "get_attr")}
    unused = []
    for name, mod in gm.named_modules():
        if not name:
            continue
        own = list(mod.parameters(recurse=False)) + list(mod.buffers(recurse=False))
        if own and not any(t == name or t.startswith(name + ".") or name.startswith(t + ".") for t in used):
            unused.append(name)
    return unused


def _opt_evidence(result, args):
    expect_type(result, fx.GraphModule, "optimize_for_inference", "a torch.fx.GraphModule")
    model, example_inputs = args
    ev = graph_module_evidence(result, "optimize_for_inference", _trial_inputs(example_inputs))
    ev["training"] = [name or "(the GraphModule itself)" for name, m in result.named_modules() if m.training]
    ev["unused"] = _unused_submodules(result)
    ev["model_state"] = dict(model.state_dict())
    return ev


def _node_text(n: dict) -> str:
    if n["op"] == "call_module":
        kind = (n.get("module_type") or "?").rsplit(".", 1)[-1]
        return f"node '{n['name']}' ({kind} '{n['target']}')"
    return f"node '{n['name']}' ({n['op']} {n['target']})"


def _mod_kind(n: dict) -> str:
    return (n.get("module_type") or "").rsplit(".", 1)[-1] if n["op"] == "call_module" else ""


def _is_linear(n: dict) -> bool:
    return _mod_kind(n) == "Linear" or (n["op"] == "call_function" and n["target"] in LINEAR_FUNCTIONS)


def _input_node(n: dict, by_name: dict) -> dict | None:
    a = n["args"][0] if n["args"] else None
    return by_name.get(a["node"]) if isinstance(a, dict) and "node" in a else None


def _opt_judge(case: Case, ev) -> None:
    model, example_inputs = case.make()
    hint = case.data.get("hint")
    expect_lint(ev, "end every pass with gm.graph.lint() to find the pass that breaks the graph")
    reference = copy.deepcopy(model).eval()
    with torch.no_grad():
        for i, (x, got) in enumerate(zip(_trial_inputs(example_inputs), ev["outputs"])):
            expected = reference(*x)
            what = "output on the example input" if i == 0 else f"output on random input {i}"
            expect_close(got, expected, f"{what} (compared with model.eval())", **TOL,
                         hint=hint or "run compare_modules(model.eval(), gm, example_inputs) after each pass to "
                                      "find the pass that changes the numbers")
    state = dict(model.state_dict())
    changed = [k for k, v in state.items()
               if k not in ev["model_state"] or not torch.equal(ev["model_state"][k], v)]
    if changed:
        how = "is gone" if changed[0] not in ev["model_state"] else "differs"
        raise CheckFailed(f"optimize_for_inference changed the model it was given: {changed[0]!r} {how}",
                          "work on copy.deepcopy(model): folding must not rewrite the weights of the caller's model")
    if ev["training"]:
        raise CheckFailed(f"the returned GraphModule is not in eval mode: {ev['training'][0]} is in training mode",
                          "call .eval() on the result: modules you create start in training mode, and so do "
                          "the container modules symbolic_trace creates for nested names like 'layers.0'")

    graph = ev["graph"]
    by_name = {n["name"]: n for n in graph}
    sites = Counter(n["target"] for n in graph if n["op"] == "call_module")
    order = (" Here a dropout or a dead user hides the pattern until it is gone: remove dropout first, then "
             "dead code, or run the passes until nothing changes (run_pipeline).") if case.data.get("order") else ""
    for n in graph:
        if _mod_kind(n) in DROPOUT_TYPES:
            extra = (" (nn.Dropout2d is not a subclass of nn.Dropout: test for every dropout module type)"
                     if _mod_kind(n) != "Dropout" else "")
            raise CheckFailed(f"{_node_text(n)} is still called: remove dropout{extra}",
                              "dropout does nothing in eval mode: point its users at its input and erase the node")
        if n["op"] in ("call_function", "call_method") and "dropout" in n["target"].lower():
            raise CheckFailed(f"{_node_text(n)} is still called: remove dropout",
                              "F.dropout is a call_function node, not a module: remove those too")
    for n in graph:
        if _mod_kind(n) == "BatchNorm2d":
            conv = _input_node(n, by_name)
            if conv is not None and _mod_kind(conv) == "Conv2d" and conv["users"] == [n["name"]] \
                    and sites[conv["target"]] == 1:
                raise CheckFailed(f"{_node_text(n)} still follows {_node_text(conv)}, which is called once and "
                                  "feeds only it: fold the BatchNorm into the conv." + order,
                                  "fold_bn_into_conv(conv, bn) gives the folded conv; install it in place of the "
                                  "conv, point the BatchNorm's users at the conv node and erase the BatchNorm node")
    for n in graph:
        if _is_linear(n):
            first = _input_node(n, by_name)
            if first is not None and _is_linear(first) and first["users"] == [n["name"]] \
                    and (first["op"] != "call_module" or sites[first["target"]] == 1) \
                    and (n["op"] != "call_module" or sites[n["target"]] == 1):
                raise CheckFailed(f"{_node_text(first)} feeds only {_node_text(n)}: this Linear -> Linear "
                                  "chain can be fused." + order,
                                  "walk the nodes in order and fuse each pair into the second node, so a chain "
                                  "of any length collapses (or run the fusion until nothing changes)")
    dead = [n for n in graph if n["op"] not in ("placeholder", "output") and not n["users"]]
    if dead:
        raise CheckFailed(f"{_node_text(dead[0])} has no users: it is dead code",
                          "gm.graph.eliminate_dead_code() removes nodes whose results nobody uses")
    if ev["unused"]:
        raise CheckFailed(f"submodule {ev['unused'][0]!r} is no longer used by the graph but is still held "
                          "(with its parameters)",
                          "gm.delete_all_unused_submodules() drops submodules the graph no longer calls")


CHECKS = {
    "run_pipeline": Check("run_pipeline", _pipeline_cases, _pipeline_evidence, _pipeline_judge),
    "optimize_for_inference": Check("optimize_for_inference", _opt_cases, _opt_evidence, _opt_judge, unchanged="weights"),
}
