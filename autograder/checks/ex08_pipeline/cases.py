"""The cases of ex08_pipeline: the seeded inputs each graded function is called on, and their references."""
from __future__ import annotations

import copy
import operator

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from fxplayground import ConvBNNet, DropoutNet, LinearChain

from autograder.checks import keyring
from autograder.checks.hints import hint_of
from autograder.checks.framework import Case
from autograder.checks.randmodels import manual_seed, random_mlp, randomize_batchnorm, seeded_randn
from autograder.checks.ex08_pipeline.models import _Log, _misplace_neg, Knots


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


def _retarget_relu(gm: fx.GraphModule, swap: dict) -> fx.GraphModule:
    """Retargets every relu call by `swap` (torch.relu <-> F.relu): the code changes, the numbers do not."""
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in swap:
            node.target = swap[node.target]
    gm.recompile()
    return gm


def _toggle_relu(gm):
    return _retarget_relu(gm, {torch.relu: F.relu, F.relu: torch.relu})


def _all_to_f_relu(gm):
    return _retarget_relu(gm, {torch.relu: F.relu})


def _all_to_torch_relu(gm):
    return _retarget_relu(gm, {F.relu: torch.relu})


def _misspell_op(gm: fx.GraphModule) -> fx.GraphModule:
    """Broken on purpose: gives the first call_function node the opcode 'call_functon'; forgets recompile()
    (recompiling would fail on it: only lint names what is wrong)."""
    node = next(n for n in gm.graph.nodes if n.op == "call_function")
    node.op = "call_functon"
    return gm


_SHARED_LOG: list = [None]


def shared_relu_to_f_relu(gm: fx.GraphModule) -> fx.GraphModule:
    """One pass function for several cases, as a caller hands the same passes to every call: it logs into the
    log of the case that made it current (_shared_pass)."""
    _SHARED_LOG[0].calls.append(["shared_relu_to_f_relu", len(gm.graph.nodes)])
    return _relu_to_f_relu_one(gm)


def _shared_pass(log: _Log):
    _SHARED_LOG[0] = log
    return shared_relu_to_f_relu


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


_KNOTS: list[fx.Graph] = []


def _knots(seed: int = 0):
    if not _KNOTS:  # trace once; every case gets its own copy of the graph
        _KNOTS.append(fx.symbolic_trace(Knots()).graph)
    gm = fx.GraphModule(nn.Module(), copy.deepcopy(_KNOTS[0]))
    log = _Log((seeded_randn(3, 5, seed=seed),))
    gm._fxcourse_log = log
    return gm, log


_NEW_EACH_ROUND = ("{name} returns a new GraphModule every round, also when nothing changed: a round changed the "
                   "graph only when gm.code after it differs from gm.code before it, whichever object the pass "
                   "returned")


def _pipeline_case(label, build, *, kwargs=None, raises=None, hint=None, error="RuntimeError", repaired=False,
                   converges=None, returns="None", new_gm=False, unrecompilable=False):
    """build() -> (gm, passes, *rest) with the probes' log on gm; `raises`: what the `error` must mention.

    `hint`: what to say when a case that must raise because no fixed point is reached returns normally (the judge
    finds every other hint in what the answer did); `repaired`: a later pass repairs the graph a pass broke;
    `converges`: why this case, whose passes break nothing, reaches its fixed point (said when the answer gives
    up on it with a no-fixed-point error: see explain_raise); `returns`: what the pass of a TypeError case returns
    instead of a GraphModule; `new_gm`: the pass that breaks the graph returns a new GraphModule;
    `unrecompilable`: gm.recompile() fails on the graph that pass leaves, with an error that names no pass."""
    data = {"hint": hint, "repaired": repaired, "converges": converges, "returns": returns, "new_gm": new_gm,
            "unrecompilable": unrecompilable}
    if raises is not None:
        data.update(raises=error, must_mention=raises)

    def make():
        args = build()
        args[0]._fxcourse_log.expect_raise = raises is not None
        return args
    return Case(label, make, kwargs=(lambda: dict(kwargs)) if kwargs else dict, data=data)


def _pipeline_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex08_pipeline")._pipeline_cases()

    def v_two_passes():
        gm, log = _knots(0)
        return gm, [_probe(log, "cancel_double_neg", _cancel_one_double_neg),
                    _probe(log, "drop_mul_one", _drop_mul_one_copy)]

    def v_misplaced():
        gm, log = _knots(1)
        return gm, [_probe(log, "cancel_double_neg", _cancel_one_double_neg),
                    _probe(log, "misplace_neg", _misplace_neg)]
    return [
        _pipeline_case("Knots with [cancel_double_neg (in place), drop_mul_one (returns a new GraphModule)]",
                       v_two_passes, converges=_NEW_EACH_ROUND.format(name="drop_mul_one")),
        _pipeline_case("Knots with [cancel_double_neg, misplace_neg]: misplace_neg breaks the graph",
                       v_misplaced, raises="misplace_neg"),
    ]


def _seeded(cls, seed: int, *args, **kwargs) -> nn.Module:
    manual_seed(seed)
    return cls(*args, **kwargs)


def _ex(shape: tuple[int, ...], seed: int) -> tuple[torch.Tensor]:
    return (seeded_randn(*shape, seed=seed),)


def _opt_case(label: str, make_model, shape: tuple[int, ...], seed: int) -> Case:
    """The judge finds every hint in what the answer did (see judges._output_hint and _expect_no_dropout)."""
    return Case(label, lambda: (make_model(), _ex(shape, seed)))


def _mlp_width(seed: int) -> int:
    return random_mlp(seed).width


def _opt_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex08_pipeline")._opt_cases()
    return [
        _opt_case("DropoutNet (arrives in training mode)", lambda: _seeded(DropoutNet, 0), (4, 6), 0),
        _opt_case("ConvBNNet (arrives in training mode, BatchNorm statistics set)",
                  lambda: randomize_batchnorm(_seeded(ConvBNNet, 1), 1), (2, 3, 6, 6), 1),
        _opt_case("LinearChain 16 -> 32 -> 24 -> 8", lambda: _seeded(LinearChain, 2, (16, 32, 24, 8)),
                  (4, 16), 2),
    ]


def explain_raise(case: Case, raised: dict) -> str | None:
    """A no-fixed-point RuntimeError on a case whose passes break nothing and which does reach its fixed point:
    the case's own account of why (its passes are the course's, so nothing else can have raised it)."""
    message = str(raised.get("message", "")).lower()
    if raised.get("__raised__") != "RuntimeError" or not case.data.get("converges"):
        return None
    if not any(word in message for word in ("fixed", "round", "converg")):
        return None
    return hint_of("ex08.this_case_reaches_fixed_point", converges=case.data['converges'])
