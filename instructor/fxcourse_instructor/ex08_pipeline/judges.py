"""The judges of ex08_pipeline: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

import copy
import re
from collections import Counter

import torch
import torch.fx as fx
from torch.nn.utils.fusion import fuse_conv_bn_eval

from autograder.checks.hints import hint_of
from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import (cached_reference, describe_graph, expect, expect_close, expect_fresh,
                                        expect_lint, first_difference, lint_error, stale_code)
from fxcourse_instructor.ex08_pipeline.references import _reference_pipeline
from autograder.checks.ex08_pipeline.evidence import _trial_inputs


def _rounds_text(calls: list, per_round: int) -> str:
    if not per_round:
        return f"{len(calls)} call(s)"
    return f"{len(calls) / per_round:g} round(s) ({len(calls)} pass calls)"


def _pass_name(p) -> str:
    return getattr(p, "__name__", type(p).__name__)


# Wrong pipelines a learner writes, run on fresh copies of a case: when the learner's pass calls are exactly
# those of one of them (and of no other), the hint names that mistake; otherwise the message alone says what
# differs.
def _wrong_pipeline(*, rounds: bool = True, fingerprint=lambda gm: gm.code, recompile: bool = True,
                    keep: bool = True):
    """A pipeline that runs once (rounds=False), compares another fingerprint of the graph, never recompiles, or
    does not keep what a pass returns (keep=False); (gm, passes, max_rounds) -> the GraphModule it ends with."""
    def run(gm, passes, max_rounds=10):
        for _ in range(max_rounds if rounds else 1):
            before = fingerprint(gm)
            for p in passes:
                out = p(gm)
                gm = out if keep else gm
                if recompile:
                    gm.recompile()
            if not rounds or fingerprint(gm) == before:
                return gm
        raise RuntimeError("no fixed point")
    return run


PIPELINE_MISTAKES = {
    _wrong_pipeline(rounds=False): "ex08.keep_going_round_after_round",
    _wrong_pipeline(fingerprint=lambda gm: len(gm.graph.nodes)):
        "ex08.detect_fixed_point_comparing_gm",
    _wrong_pipeline(recompile=False):
        "ex08.call_gm_recompile_after_every_2",
    _wrong_pipeline(keep=False): "ex08.pass_may_return_new_graphmodule",
}


def _mistake_run(case: Case, mistake) -> tuple | None:
    """The pass calls of a wrong pipeline on a fresh copy of the case, and whether the GraphModule it returns has
    stale code (None when it raises)."""
    gm, passes, *rest = case.make()
    log = gm._fxcourse_log
    try:
        out = mistake(gm, passes, *rest, **case.kwargs())
    except Exception:
        return None
    return [list(c) for c in log.calls], stale_code(out)


def _named_mistake(case: Case, ev: dict) -> str | None:
    run = ([list(c) for c in ev["calls"]], ev["stale_code"])
    named = {hint for mistake, hint in PIPELINE_MISTAKES.items() if _mistake_run(case, mistake) == run}
    return named.pop() if len(named) == 1 else None


def _lint_text(case: Case) -> str:
    """What gm.graph.lint() says right after the pass that breaks the case's graph ("" if none does)."""
    gm, passes, *rest = case.make()
    for _ in range(3):
        for p in passes:
            gm = p(gm)
            text = lint_error(gm)
            if text:
                return text.split(": ", 1)[-1]
            gm.recompile()
    return ""


def _lint_hint(case: Case, message: str, wanted: str) -> str:
    """The hint for an error that should name the pass `wanted` that broke the graph but does not."""
    gm, passes, *_ = case.make()
    others = [n for n in dict.fromkeys(_pass_name(p) for p in passes) if n != wanted and n in message]
    if others:
        return hint_of("ex08.lint_right_after_each_pass_2", named=others[0], wanted=wanted)
    lint = _lint_text(case)
    if "fixed point" in message or "max_rounds" in message:  # no lint stopped it: the rounds ran out
        return "ex08.call_gm_graph_lint_right"
    if lint and message.startswith(lint[:60]):  # lint's own error, unwrapped: lint ran, nobody named the pass
        return "ex08.catch_error_gm_graph_lint"
    return "ex08.lint_right_after_each_pass"


_NONE_HINT = "ex08.check_what_each_pass_returns"


def _raise_judge(case: Case, ev) -> None:
    """The cases that must raise: a broken graph, no fixed point within max_rounds, a pass returning None."""
    wanted, error = case.data["must_mention"], case.data["raises"]
    rounds = wanted.isdigit()
    returns = case.data.get("returns", "None")
    # a pass that returns something else than None, or a new GraphModule that is broken
    other = (hint_of("ex08.not_only_none_graphmodule", returns=returns) if error == "TypeError" and returns != "None"
             else hint_of("ex08.lint_graphmodule_pass_returned", wanted=wanted) if case.data.get("new_gm") else None)
    if not (isinstance(ev, dict) and "__raised__" in ev):
        what = (f"no fixed point is reached within max_rounds={wanted}" if rounds else
                f"the pass '{wanted}' returns {returns}" if error == "TypeError" else
                f"the pass '{wanted}' returns a new GraphModule whose graph is broken" if case.data.get("new_gm") else
                f"the pass '{wanted}' breaks the graph")
        hint = (other or _NONE_HINT if error == "TypeError" else
                case.data.get("hint") if rounds else other or
                ("ex08.call_gm_graph_lint_right_2" if case.data.get("repaired") else "ex08.call_gm_graph_lint_right_3"))
        raise CheckFailed(f"returned normally, expected a {error}: {what}", hint)
    message, raised = ev["message"], ev["__raised__"]
    bases = ev.get("bases") or [raised]
    allowed = (error,)
    if not any(e in bases for e in allowed):
        if other is not None and error == "TypeError":
            raise CheckFailed(f"raised {raised} ({message[:200]}), expected a TypeError: the pass '{wanted}' "
                              f"returns {returns}, not a GraphModule", other)
        if error == "TypeError" and "NoneType" in message:
            hint = hint_of("ex08.check_what_pass_returned_right", raised=raised)
        elif "__name__" in message:
            hint = "ex08.name_pass_getattr_p_name"
        elif wanted in message:
            hint = hint_of("ex08.raise_subclass_fine_not", expected=' or a '.join(allowed), raised=raised)
        elif error == "TypeError" and "NoneType" in message:
            hint = _NONE_HINT
        else:
            hint = "ex08.raise_runtimeerror_message_says_what"
        raise CheckFailed(f"raised {raised} ({message[:200]}), expected a {' or a '.join(allowed)}", hint)
    if wanted in message:
        return
    found = f"raised {raised}, but its message does not mention {wanted!r}: {message[:300]!r}"
    if rounds:
        numbers = [n for n in re.findall(r"\d+", message) if n != wanted]
        default = "max_rounds" not in case.kwargs()
        if numbers and default:
            hint = hint_of("ex08.max_rounds_defaults_message_says", wanted=wanted, said=numbers[0])
        elif numbers:
            hint = hint_of("ex08.max_rounds_was_given_give", wanted=wanted)
        else:
            hint = hint_of("ex08.say_message_how_many_rounds", wanted=wanted)
    elif error == "TypeError":
        hint = (_NONE_HINT if "NoneType" in message else
                "ex08.name_pass_message_raise_typeerror")
    elif other is not None and any(_pass_name(p) not in (wanted, "") and _pass_name(p) in message
                                   for p in case.make()[1]):   # the lint ran on the GraphModule passed in
        hint = other
    elif case.data.get("unrecompilable") and raised == "NotImplementedError":   # gm.recompile()'s own error
        hint = "ex08.lint_before_recompile"
    else:
        hint = _lint_hint(case, message, wanted)
    raise CheckFailed(found, hint)


def _pipeline_judge(case: Case, ev) -> None:
    if "raises" in case.data:
        _raise_judge(case, ev)
        return
    gm, passes, *rest = case.make()
    kwargs = case.kwargs()
    per_round = len(passes)
    log = gm._fxcourse_log
    given = [(n["op"], n["target"]) for n in describe_graph(gm)]
    expected_gm = _reference_pipeline(gm, passes, *rest, **kwargs)
    expected_calls = log.calls
    got_calls = [list(c) for c in ev["calls"]]
    if got_calls != expected_calls:
        got_names = [c[0] for c in got_calls]
        exp_names = [c[0] for c in expected_calls]
        found = _rounds_text(got_calls, per_round)
        wanted = _rounds_text(expected_calls, per_round)
        hint = _named_mistake(case, ev)
        expect(got_calls, f"the passes were never called, expected {wanted}: run_pipeline returned without running "
               "a round on the GraphModule it was given", "ex08.run_passes_on_every_call_keep_nothing")
        if len(got_calls) < len(expected_calls):
            raise CheckFailed(f"the passes ran {found}, expected {wanted}: the pipeline stopped before a whole "
                              "round left gm.code unchanged", hint)
        if len(got_calls) > len(expected_calls):
            raise CheckFailed(f"the passes ran {found}, expected {wanted}: the pipeline went on after a round "
                              "that left gm.code unchanged", hint)
        if got_names != exp_names:
            raise CheckFailed(f"the passes were called in the order {got_names}, expected {exp_names}",
                              "ex08.run_passes_order_given_each")
        i = next(i for i, (g, e) in enumerate(zip(got_calls, expected_calls)) if g != e)
        raise CheckFailed(f"call {i + 1} ({got_calls[i][0]}) received a graph of {got_calls[i][1]} nodes, "
                          f"expected {expected_calls[i][1]}: it was not given the GraphModule that the pass "
                          "before it returned", hint)
    got_nodes = [(n["op"], n["target"]) for n in ev["graph"]]
    exp_nodes = [(n["op"], n["target"]) for n in describe_graph(expected_gm)]
    if got_nodes != exp_nodes:
        pad = max(len(got_nodes), len(exp_nodes))
        where = first_difference(got_nodes + ["nothing"] * (pad - len(got_nodes)),
                                 exp_nodes + ["nothing"] * (pad - len(exp_nodes)), "node", str)
        raise CheckFailed(f"the returned graph is not the one the last pass produced: {where}",
                          "ex08.return_graphmodule_last_pass_returned" if got_nodes == given else None)
    expect_lint(ev)
    expect_fresh(ev["stale_code"], "ex08.call_gm_recompile_after_every")
    with torch.no_grad():
        expected_out = expected_gm(*log.inputs)
    expect_close(ev["outputs"][0], expected_out, "output of the returned GraphModule")


# ================================================================================ optimize_for_inference

DROPOUT_TYPES = ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout")
LINEAR_FUNCTIONS = ("torch.nn.functional.linear", "torch._C._nn.linear")
TOL = {"rtol": 1e-4, "atol": 1e-5}


def _node_text(n: dict) -> str:
    if n["op"] == "call_module":
        kind = (n.get("module_type") or "?").rsplit(".", 1)[-1]
        return f"node '{n['name']}' ({kind} '{n['target']}')"
    return f"node '{n['name']}' ({n['op']} {n['target']})"


def _mod_kind(n: dict) -> str:
    return (n.get("module_type") or "").rsplit(".", 1)[-1] if n["op"] == "call_module" else ""


# nn.Linear and its subclasses in torch.nn (leaves of symbolic_trace, as torch.nn modules are; a subclass of your
# own is traced through, to an F.linear call)
LINEAR_KINDS = ("Linear", "NonDynamicallyQuantizableLinear")


def _is_linear(n: dict) -> bool:
    return _mod_kind(n) in LINEAR_KINDS or (n["op"] == "call_function" and n["target"] in LINEAR_FUNCTIONS)


def _input_node(n: dict, by_name: dict) -> dict | None:
    a = n["args"][0] if n["args"] else None
    return by_name.get(a["node"]) if isinstance(a, dict) and "node" in a else None


def _dropout_kind(n: dict) -> str | None:
    """'module' or 'function' when the described node is a dropout, else None."""
    if _mod_kind(n) in DROPOUT_TYPES:
        return "module"
    if n["op"] in ("call_function", "call_method") and "dropout" in n["target"].lower():
        return "function"
    return None


def _eval_trace(model) -> list[dict]:
    """The graph of the model traced in eval mode, as the learner's pipeline receives it."""
    return describe_graph(fx.symbolic_trace(copy.deepcopy(model).eval()))


def _expect_no_dropout(traced: list[dict], graph: list[dict]) -> None:   # traced: _eval_trace of the model
    left = [n for n in graph if _dropout_kind(n)]
    was = {(n["name"], n["target"]) for n in traced if _dropout_kind(n) == "module"}
    kept = [n for n in graph if n["op"] == "call_module" and (n["name"], n["target"]) in was]   # an Identity now?
    expect(left or not kept, kept and f"{_node_text(kept[0])} is still called where the dropout module "
           f"'{kept[0]['target']}' was: remove the dropout's node, not only its module",
           "ex08.erase_dropout_node_not_module")
    if not left:
        return
    n, kind = left[0], _dropout_kind(left[0])
    now = {m["name"] for m in graph}
    # the learner's pass removes dropouts of this kind elsewhere: only some types or functions are missing
    removes_some = any(_dropout_kind(m) == kind and m["name"] not in now for m in traced)
    if kind == "module":   # a kind other than nn.Dropout left: the answer most likely tests for nn.Dropout alone
        hint = (hint_of("ex08.nn_not_nn_dropout_nor", mod_kind=_mod_kind(n))
                if removes_some or _mod_kind(n) != "Dropout" else "ex08.dropout_does_nothing_eval_mode")
    elif n["kwargs"].get("training") is True:
        hint = "ex08.this_dropout_was_traced_training"
    else:
        hint = (hint_of("ex08.remove_every_functional_dropout_too", target=n['target']) if removes_some else
                "ex08.f_dropout_call_function_node")
    raise CheckFailed(f"{_node_text(n)} is still called: remove dropout", hint)


def _bypass_dropout(gm: fx.GraphModule) -> None:
    for node in list(gm.graph.nodes):
        if _dropout_kind({"op": node.op, "target": str(getattr(node.target, "__name__", node.target)),
                          "module_type": type(gm.get_submodule(node.target)).__qualname__
                          if node.op == "call_module" else None}):
            node.replace_all_uses_with(node.args[0])
            gm.graph.erase_node(node)
    gm.recompile()


def _fold_and_fuse(gm: fx.GraphModule, *, shared_conv: bool = False, shared_linear: bool = False,
                   conv_users: bool = False, any_conv: bool = False, shared_first: bool = False) -> None:
    """The folds of the task on a traced graph, with a rule relaxed as a learner may relax it: the call sites of
    the conv, of the second or of the first Linear (then fused into the first one's module, which its other call
    reads too), the users of the conv's output, or the conv's type (any conv, folded with the Conv2d formula)."""
    sites = Counter(n.target for n in gm.graph.nodes if n.op == "call_module")

    def module(node, kind):
        ok = isinstance(node, fx.Node) and node.op == "call_module"
        return gm.get_submodule(node.target) if ok and isinstance(gm.get_submodule(node.target), kind) else None
    for node in list(gm.graph.nodes):
        src = node.args[0] if node.args else None
        bn = module(node, torch.nn.BatchNorm2d)
        conv = module(src, torch.nn.modules.conv._ConvNd if any_conv else torch.nn.Conv2d)
        if bn is not None and conv is not None and (conv_users or len(src.users) == 1) \
                and (shared_conv or sites[src.target] == 1):
            gm.add_submodule(src.target, fuse_conv_bn_eval(conv.eval(), bn.eval()))
            node.replace_all_uses_with(src)
            gm.graph.erase_node(node)
    for node in list(gm.graph.nodes):
        src = node.args[0] if node.args else None
        second, first = module(node, torch.nn.Linear), module(src, torch.nn.Linear)
        if second is not None and first is not None and len(src.users) == 1 \
                and (shared_first or sites[src.target] == 1) and (shared_linear or sites[node.target] == 1):
            fused = torch.nn.Linear(first.in_features, second.out_features)
            with torch.no_grad():
                fused.weight.copy_(second.weight @ first.weight)
                b1 = first.bias if first.bias is not None else torch.zeros(first.out_features)
                b2 = second.bias if second.bias is not None else torch.zeros(second.out_features)
                fused.bias.copy_(second.weight @ b1 + b2)
            if shared_first:
                gm.add_submodule(src.target, fused)
                node.replace_all_uses_with(src)
                gm.graph.erase_node(node)
                continue
            gm.add_submodule(node.target, fused)
            node.args = (src.args[0],) + tuple(node.args[1:])
            gm.graph.erase_node(src)
    gm.recompile()


def _wrong_output(model, x: tuple, mistake: str):
    """What a learner's GraphModule computes after a known mistake (None when it is not deterministic here)."""
    m = copy.deepcopy(model)
    if mistake == "train_mode":          # BatchNorm (and the rest) left in training mode
        m.train()
        outs = [m(*x) for _ in range(2)]
        return outs[0] if torch.equal(outs[0], outs[1]) else None
    if mistake == "traced_in_train":     # traced in training mode, dropout removed, then put in eval mode
        gm = fx.symbolic_trace(m.train())
        _bypass_dropout(gm)
        return gm.eval()(*x)
    if mistake == "no_eps":              # the fold without bn.eps
        m.eval()
        for bn in m.modules():
            if isinstance(bn, torch.nn.modules.batchnorm._BatchNorm):
                bn.eps = 0.0
        return m(*x)
    gm = fx.symbolic_trace(m.eval())
    _bypass_dropout(gm)
    _fold_and_fuse(gm, shared_conv=mistake == "shared_conv", shared_linear=mistake == "shared_linear",
                   conv_users=mistake == "conv_users", any_conv=mistake == "any_conv",
                   shared_first=mistake == "shared_first")
    return gm.eval()(*x)


OUTPUT_MISTAKES = {
    "train_mode": "ex08.batchnorm_training_mode_normalises_batch",
    "traced_in_train": "ex08.put_copy_eval_mode_before",
    "no_eps": "ex08.fold_divides_sqrt_running_var",
    "shared_conv": "ex08.conv2d_module_called_from_two",
    "shared_linear": "ex08.linear_module_called_from_two",
    "shared_first": "ex08.linear_module_called_from_two",
    "conv_users": "ex08.conv_output_feeds_more_than",
    "any_conv": "ex08.fold_only_into_conv2d",
}


def _output_hint(case: Case, model, x: tuple, got) -> str:
    """The mistake whose output alone is the learner's, or advice on finding the pass that changes the numbers."""
    def build(case):
        out = {}
        with torch.no_grad():
            for mistake in OUTPUT_MISTAKES:
                try:
                    out[mistake] = _wrong_output(model, x, mistake)
                except Exception:
                    out[mistake] = None
        return out
    wrong = cached_reference(_OUT_CACHE, "optimize_for_inference", case, build)
    expected = copy.deepcopy(model).eval()
    with torch.no_grad():
        right = expected(*x)
    named = {OUTPUT_MISTAKES[k] for k, w in wrong.items()
             if isinstance(got, torch.Tensor) and w is not None and w.shape == got.shape
             and not torch.allclose(w.double(), right.double(), **TOL)
             and torch.allclose(got.detach().double(), w.double(), **TOL)}
    return named.pop() if len(named) == 1 else ("ex08.run_compare_modules_model_eval")


_OUT_CACHE: dict = {}

# Cases built for one rule (by the start of their label), each unlike the other cases in that respect: an answer
# whose own check of its numbers (assert_close, or an assert of allclose) fails there most likely broke that rule
RULE_OF_CASE = {
    "ConvSkipNet": "ex08.conv_output_feeds_more_than",
    "UpsampleBNNet": "ex08.fold_only_into_conv2d",
    "SharedFirstLinearNet": "ex08.linear_module_called_from_two",
    "SharedChainNet": "ex08.linear_module_called_from_two",
    "SharedConvNet": "ex08.conv2d_module_called_from_two",
}


def _batch_stats_only(model) -> list[str]:
    """The model's BatchNorms without running statistics (track_running_stats=False)."""
    return [name for name, m in model.named_modules()
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.running_mean is None]


def _opt_raise(case: Case, raised: dict):
    """The rule of a case built for one, when the answer's own self-check raised there; a BatchNorm without running
    statistics, when the fold raised on it (else None)."""
    rule = next((h for k, h in RULE_OF_CASE.items() if case.label.startswith(k)), None)
    said = f"{raised.get('message', '')} {raised.get('where', '')}".lower()
    if raised.get("__raised__") == "TypeError" and "nonetype" in said and _batch_stats_only(case.make()[0]):
        return "ex08.fold_only_bn_with_running_stats"
    if rule is None or raised.get("__raised__") != "AssertionError" or "close" not in said:
        return None
    return hint_of("ex08.own_check_failed_on_case", advice=str(hint_of(rule)))


def _opt_judge(case: Case, ev) -> None:
    model, example_inputs = case.make()
    expect_lint(ev, "ex08.end_every_pass_gm_graph")
    traced = {n["name"]: n for n in _eval_trace(model)}
    _expect_no_dropout(list(traced.values()), ev["graph"])   # a dropout left in training mode makes the numbers random
    reference = copy.deepcopy(model).eval()
    with torch.no_grad():
        for i, (x, got) in enumerate(zip(_trial_inputs(example_inputs), ev["outputs"])):
            expected = reference(*x)
            what = "output on the example input" if i == 0 else f"output on random input {i}"
            if not (isinstance(got, torch.Tensor) and got.shape == expected.shape
                    and torch.allclose(got.detach().double(), expected.double(), **TOL)):
                expect_close(got, expected, f"{what} (compared with model.eval())", **TOL,
                             hint=_output_hint(case, model, x, got) if i == 0 else
                             "ex08.run_compare_modules_model_eval")
    state = dict(model.state_dict())
    changed = [k for k, v in state.items()
               if k not in ev["model_state"] or not torch.equal(ev["model_state"][k], v)]
    if changed:
        how = "is gone" if changed[0] not in ev["model_state"] else "differs"
        stats = changed[0].rsplit(".", 1)[-1] in ("running_mean", "running_var", "num_batches_tracked")
        raise CheckFailed(f"optimize_for_inference changed the model it was given: {changed[0]!r} {how}",
                          "ex08.caller_s_batchnorm_statistics_moved" if stats and how == "differs"
                          else "ex08.work_copy_deepcopy_model_folding")
    was = {name: m.training for name, m in model.named_modules()}
    switched = [n and f"submodule {n!r} of " for n, on in ev.get("model_training", []) if on and not was.get(n, 1)]
    expect(not switched, f"optimize_for_inference switched {(switched or [''])[0]}the model it was given from eval to "
           "training mode (switching it to eval mode is fine)", "ex08.leave_caller_s_model_mode_or_eval")
    if ev["training"]:
        raise CheckFailed(f"the returned GraphModule is not in eval mode: {ev['training'][0]} is in training mode",
                          "ex08.call_eval_result_modules_you")

    graph = ev["graph"]
    by_name = {n["name"]: n for n in graph}
    sites = Counter(n["target"] for n in graph if n["op"] == "call_module")

    def hidden(first: dict, second: dict) -> bool:
        """Whether, in the graph the pipeline received, the pair was not yet adjacent: a dropout between them or a
        dead user of the first hid it until another pass removed that."""
        a, b = traced.get(first["name"]), traced.get(second["name"])
        if a is not None and b is None:   # the second is a new node (a fused one): what did `first` feed then?
            users = [traced[u] for u in a["users"] if u in traced]
            return len(users) != 1 or not _is_linear(users[0])
        return a is not None and b is not None and (_input_node(b, traced) is not a or a["users"] != [b["name"]])

    order = (" In the traced graph a dropout or a dead user hid this pair: it appears once those are gone.")
    order_hint = "ex08.remove_dropout_first_then_dead"
    batch_stats_only = _batch_stats_only(model)   # such a BatchNorm normalises with the batch's own: no fold
    for n in graph:
        if _mod_kind(n) == "BatchNorm2d" and n["target"] not in batch_stats_only:
            conv = _input_node(n, by_name)
            if conv is not None and _mod_kind(conv) == "Conv2d" and conv["users"] == [n["name"]] \
                    and sites[conv["target"]] == 1:
                late = hidden(conv, n)
                raise CheckFailed(f"{_node_text(n)} still follows {_node_text(conv)}, which is called once and "
                                  "feeds only it: fold the BatchNorm into the conv." + (order if late else ""),
                                  order_hint if late else
                                  "ex08.fold_bn_into_conv_conv")
    traced_sites = Counter(n["target"] for n in traced.values() if n["op"] == "call_module")
    stay = [(n, conv) for n in traced.values() if _mod_kind(n) == "BatchNorm2d"
            for conv in [_input_node(n, traced)] if conv is not None and _mod_kind(conv) == "Conv2d"
            and traced_sites[conv["target"]] > 1]
    left = sum(1 for n in graph if _mod_kind(n) == "BatchNorm2d")
    if len(stay) > left:
        bn, conv = stay[0]
        raise CheckFailed(f"{_node_text(bn)} follows {_node_text(conv)}, a conv called from "
                          f"{traced_sites[conv['target']]} sites, so it stays; the result calls {left} BatchNorm2d, "
                          f"expected at least {len(stay)}",
                          "ex08.conv_module_called_from_more")
    linears = sum(1 for n in traced.values() if _is_linear(n))
    for n in graph:
        if _is_linear(n):
            first = _input_node(n, by_name)
            if first is not None and _is_linear(first) and first["users"] == [n["name"]] \
                    and (first["op"] != "call_module" or sites[first["target"]] == 1) \
                    and (n["op"] != "call_module" or sites[n["target"]] == 1):
                late = hidden(first, n)
                fused_some = sum(1 for m in graph if _is_linear(m)) < linears
                subclass = next((k for k in (_mod_kind(first), _mod_kind(n)) if k not in ("", "Linear")), None)
                raise CheckFailed(f"{_node_text(first)} feeds only {_node_text(n)}: this Linear -> Linear "
                                  "chain can be fused." + (order if late else ""),
                                  order_hint if late else
                                  hint_of("ex08.subclass_nn_linear_is_linear", kind=subclass) if subclass else
                                  "ex08.walk_nodes_order_fuse_each" if fused_some
                                  else "ex08.fuse_linear_pair_first_second")
    dead = [n for n in graph if n["op"] not in ("placeholder", "output") and not n["users"]]
    if dead:
        raise CheckFailed(f"{_node_text(dead[0])} has no users: it is dead code",
                          "ex08.gm_graph_eliminate_dead_code")
    if ev["unused"]:
        raise CheckFailed(f"submodule {ev['unused'][0]!r} is no longer used by the graph but is still held "
                          "(with its parameters)",
                          "ex08.gm_delete_all_unused_submodules")
