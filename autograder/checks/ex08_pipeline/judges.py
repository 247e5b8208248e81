"""The judges of ex08_pipeline: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

import copy
from collections import Counter

import torch

from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import describe_graph, expect, expect_close, expect_fresh, expect_lint, first_difference
from autograder.checks.ex08_pipeline.cases import _reference_pipeline
from autograder.checks.ex08_pipeline.evidence import _trial_inputs


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
        pad = max(len(got_nodes), len(exp_nodes))
        where = first_difference(got_nodes + ["nothing"] * (pad - len(got_nodes)),
                                 exp_nodes + ["nothing"] * (pad - len(exp_nodes)), "node", str)
        raise CheckFailed(f"the returned graph is not the one the last pass produced: {where}",
                          "return the GraphModule that the last pass returned (gm = p(gm))")
    expect_lint(ev)
    expect_fresh(ev["stale_code"], "call gm.recompile() after every pass")
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
