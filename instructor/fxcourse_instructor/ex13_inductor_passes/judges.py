"""The judges of ex13_inductor_passes: compare a result's evidence with the course's pass and say what differs."""
from __future__ import annotations

import torch

from autograder.checks.evidence import expect, expect_fresh, expect_lint
from autograder.checks.framework import Case, CheckFailed
from autograder.checks.hints import hint_of
from autograder.checks.ex13_inductor_passes.cases import PROBE, build_nothing, restore_config
from autograder.checks.ex13_inductor_passes.evidence import applied, targets
from autograder.checks.ex13_inductor_passes.models import (COMPILED, aten_graph, change_weight, reference_pass,
                                                           replacement)

REGISTER = "ex13.register_replacement_search_fn_replace"
OPTIONS = "ex13.hand_inductor_torch_compile_s"


def _close(got, expected) -> bool:
    return isinstance(got, torch.Tensor) and got.shape == expected.shape and \
        torch.allclose(got, expected, rtol=1e-4, atol=1e-5)


def explain_make_raise(case: Case, raised: dict) -> str | None:
    """register_replacement asserts when joint_fwd_bwd traces inputs that need no grad: with no message on torch
    2.13, with "gm was not set" on 2.14. Its trace of the course's functions on other inputs than the example ones
    (shapes of the learner's choosing) can fail to multiply them."""
    if raised["__raised__"] == "AssertionError" and raised["message"].strip() in ("", "gm was not set"):
        return "ex13.register_replacement_could_not_trace"
    if raised["__raised__"] == "RuntimeError" and "shapes cannot be multiplied" in raised["message"]:
        shapes = " and ".join(str(tuple(t.shape)) for t in replacement(case.data["replacement"])[2])
        return hint_of("ex13.trace_with_example_inputs_given", shapes=shapes)
    return None


def _make_judge(case: Case, ev: dict) -> None:
    name = case.data["replacement"]
    expect(not ev["inductor_s_own"], "make_pattern_pass returned one of inductor's own post-grad passes",
           "ex13.make_new_patternmatcherpass_each_call")
    if ev["entries"] != 1:
        raise CheckFailed(f"the pass holds {ev['entries']} replacement(s), expected 1",
                          REGISTER if ev["entries"] == 0 else
                          "ex13.make_new_patternmatcherpass_each_call_2")
    expect(not ev.get("returned_before"), "make_pattern_pass returned the pass an earlier call had returned, for "
           f"the same replacement ({name})",
           "ex13.pass_of_its_own_same_functions")
    expect(not ev.get("shared_table"), "make_pattern_pass returned a pass that shares its pattern table with a pass "
           f"an earlier call returned (a copy of it?), for the same replacement ({name})",
           "ex13.pass_of_its_own_same_functions")
    changed = ev.get("inputs_changed", [])
    expect(not changed, f"after make_pattern_pass the example input(s) {changed} require grad: it changed the "
           "caller's tensors", "ex13.leave_example_inputs_as_given")
    for got in ev["applied"]:
        graph = got["graph"]
        expected = applied(reference_pass(name), graph)
        where = f"the pass applied to the graph {graph!r}"
        if "error" in got:
            raise CheckFailed(f"{where} raised {got['error']}", REGISTER)
        if got["count"] != expected["count"]:
            hint = ("ex13.pass_replaced_more_than_this"
                    if isinstance(got["count"], int) and got["count"] > expected["count"] else REGISTER)
            raise CheckFailed(f"{where} made {got['count']} replacement(s), expected {expected['count']}", hint)
        if got["targets"] != expected["targets"]:
            raise CheckFailed(f"{where} left the calls {got['targets']}, expected {expected['targets']}", REGISTER)
        expect(_close(got["output"], expected["output"]),
               f"{where} computes something else than the graph did", REGISTER)


def _apply_judge(case: Case, ev: dict) -> None:
    gm, _ = aten_graph(case.data["graph"], case.data["seed"])
    before = targets(gm)
    pattern_pass = reference_pass(case.data["replacement"])
    count = pattern_pass.apply(gm)
    expected = targets(gm)
    if not ev.get("own_graph", True):
        raise CheckFailed(f"gm.graph is another Graph object after the call: the graph gm held still calls "
                          f"{ev['held_targets']}, expected {expected}", "ex13.pass_in_gm_s_own_graph")
    total, again = count, pattern_pass.apply(gm)   # what applying the pass until it finds nothing would give
    while again:
        total, again = total + again, pattern_pass.apply(gm)
    if total != count and ev["count"] == total and ev["targets"] == targets(gm):
        raise CheckFailed(f"apply_pattern_pass returned {total} and gm calls {ev['targets']}: one apply of the pass "
                          f"makes {count} replacement(s) and leaves {expected}",
                          "ex13.apply_once_not_until_nothing_left")
    if ev["targets"] == before and count:
        raise CheckFailed(f"gm still calls {before}: the pass made none of its {count} replacement(s) in gm",
                          "ex13.apply_pass_gm_itself_place")
    if ev["count"] != count:
        hint = ("ex13.return_int_pattern_pass_apply" if ev["targets"] == expected and ev["count"] == 0 else
                "ex13.return_int_pattern_pass_apply_2")
        raise CheckFailed(f"apply_pattern_pass returned {ev['count']}, expected {count} replacement(s)", hint)
    expect(ev["targets"] == expected, f"gm calls {ev['targets']} after the pass, expected {expected}",
           "ex13.apply_pattern_pass_once_change")
    expect_lint(ev)
    expect_fresh(ev["stale"])
    fresh, inputs = aten_graph(case.data["graph"], case.data["seed"])
    with torch.no_grad():
        want = fresh(*inputs)
    expect(_close(ev["output"], want), "gm computes something else after the pass than before",
           "ex13.replacement_computes_what_pattern_computed")


def explain_compile_raise(case: Case, raised: dict) -> str | None:
    """An answer that raised left no evidence to collect, so the settings its case made are undone here (inductor
    builds code again, and whatever the answer set in inductor's config is unset); the error's own hint applies."""
    restore_config()
    build_nothing(False)
    return None


def _compile_judge(case: Case, ev: dict) -> None:
    model, pattern_pass = case.make()
    build_nothing(False)   # the judge compiles nothing: the eager model is its reference
    inputs = getattr(model, PROBE)
    errors = [o for o in ev["outputs"] if isinstance(o, str)]
    if errors:
        raise CheckFailed(f"calling the compiled model raised {errors[0]}" if ":" in errors[0] else
                          f"the compiled model {errors[0]}", OPTIONS)
    if not ev["runs"]:
        if not ev["inductor"]:
            raise CheckFailed("inductor never compiled the model, so it never ran the pass",
                              "ex13.compile_inductor_torch_compile_s")
        raise CheckFailed("inductor compiled the model but never ran the pass",
                          "ex13.hand_inductor_torch_compile_s_2")
    runs = ev["runs"]   # per run: [replacements, an ATen graph, inductor's hook that ran it, on inductor's graph]
    if not sum(count for count, *_ in runs):
        if not any(aten for _, aten, *_ in runs):
            raise CheckFailed(f"the pass ran {len(ev['runs'])} time(s), on graphs of torch functions, and replaced "
                              "nothing", "ex13.ran_before_aotautograd_pre_grad")
        raise CheckFailed(f"the pass ran {len(ev['runs'])} time(s) on ATen graphs and replaced nothing",
                          "ex13.compile_model_you_are_given")
    if any(own is False for _, _, _, own in runs):
        raise CheckFailed("the pass ran on another graph than the one inductor handed its hook (a copy?): "
                          "inductor's graph kept what the pass should have replaced", "ex13.apply_pass_to_graph_inductor")
    graphs = COMPILED[case.data["model"]][3]
    if len(runs) != graphs:
        hooks = sorted({hook for _, _, hook, _ in runs if hook})
        raise CheckFailed(f"the pass ran {len(runs)} time(s) (as {' and '.join(hooks) or 'no hook of inductor'}) while "
                          f"inductor compiled {graphs} graph(s) of the model (dynamo breaks it in two where the model "
                          "has a graph break): once per graph expected",
                          "ex13.pass_runs_once_per_graph")
    expect(not ev["leaked"], f"torch._inductor.config.{', '.join(ev['leaked'])} is still set after "
                             "compile_with_post_grad_pass returned: every later torch.compile of the process runs it",
           "ex13.leave_torch_inductor_config_was")
    changed = ev.get("changed", [])
    expect(not changed, f"torch._inductor.config.{', '.join(changed)} changed when compile_with_post_grad_pass "
                        "returned: every later torch.compile of the process sees it",
           "ex13.leave_torch_inductor_config_was")
    with torch.no_grad():
        for i, (x, got) in enumerate(zip(inputs, ev["outputs"])):
            want = model(x)
            expect(_close(got, want), f"on input {i} the compiled model gives something else than the eager model"
                   + (f" (up to {(got - want).abs().max().item():.3g} apart)" if isinstance(got, torch.Tensor)
                      and got.shape == want.shape else ""),
                   "ex13.compile_model_you_are_given_2")
        weight = case.data.get("update")
        if weight:
            change_weight(model, weight)
            got, want = ev["outputs"][len(inputs)], model(inputs[0])
            apart = (f" (up to {(got - want).abs().max().item():.3g} apart)"
                     if isinstance(got, torch.Tensor) and got.shape == want.shape else "")
            expect(_close(got, want), f"after the caller negated {weight} in place, the compiled model gives on "
                   f"input 0 something else than the eager model{apart}", "ex13.compile_model_itself_not_copy")
    build_nothing(False)
    torch._dynamo.reset()
