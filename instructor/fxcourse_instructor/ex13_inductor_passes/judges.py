"""The judges of ex13_inductor_passes: compare a result's evidence with the course's pass and say what differs."""
from __future__ import annotations

import torch

from autograder.checks.evidence import expect, expect_fresh, expect_lint
from autograder.checks.framework import Case, CheckFailed
from autograder.checks.ex13_inductor_passes.cases import PROBE, build_nothing, restore_config
from autograder.checks.ex13_inductor_passes.evidence import applied, targets
from autograder.checks.ex13_inductor_passes.models import aten_graph, reference_pass

REGISTER = ("register_replacement(search_fn, replace_fn, example_inputs, fwd_only, pattern_pass): search_fn is "
            "what is found, replace_fn what replaces it, fwd_only traces both as inference graphs after grad")
OPTIONS = ("hand it to inductor in torch.compile's options: options={\"post_grad_custom_post_pass\": "
           "pattern_pass.apply}")


def _close(got, expected) -> bool:
    return isinstance(got, torch.Tensor) and got.shape == expected.shape and \
        torch.allclose(got, expected, rtol=1e-4, atol=1e-5)


def explain_make_raise(case: Case, raised: dict) -> str | None:
    """register_replacement asserts when joint_fwd_bwd traces inputs that need no grad: with no message on torch
    2.13, with "gm was not set" on 2.14."""
    if raised["__raised__"] == "AssertionError" and raised["message"].strip() in ("", "gm was not set"):
        return ("register_replacement could not trace the pattern: trace with fwd_only for graphs after grad "
                "(joint_fwd_bwd traces a training graph, from inputs that require grad)")
    return None


def _make_judge(case: Case, ev: dict) -> None:
    name = case.data["replacement"]
    expect(not ev["inductor_s_own"], "make_pattern_pass returned one of inductor's own post-grad passes",
           "make a new PatternMatcherPass in each call: inductor's own passes run in every compile of the process")
    if ev["entries"] != 1:
        raise CheckFailed(f"the pass holds {ev['entries']} replacement(s), expected 1",
                          REGISTER if ev["entries"] == 0 else
                          "make a new PatternMatcherPass in each call: a pass kept between calls collects every "
                          "call's replacement")
    for got in ev["applied"]:
        graph = got["graph"]
        expected = applied(reference_pass(name), graph)
        where = f"the pass applied to the graph {graph!r}"
        if "error" in got:
            raise CheckFailed(f"{where} raised {got['error']}", REGISTER)
        if got["count"] != expected["count"]:
            hint = ("the pass replaced more than this replacement: make a new PatternMatcherPass in each call (a "
                    "pass kept between calls collects every call's replacement)"
                    if isinstance(got["count"], int) and got["count"] > expected["count"] else REGISTER)
            raise CheckFailed(f"{where} made {got['count']} replacement(s), expected {expected['count']}", hint)
        if got["targets"] != expected["targets"]:
            raise CheckFailed(f"{where} left the calls {got['targets']}, expected {expected['targets']}", REGISTER)
        expect(_close(got["output"], expected["output"]),
               f"{where} computes something else than the graph did", REGISTER)


def _apply_judge(case: Case, ev: dict) -> None:
    gm, _ = aten_graph(case.data["graph"], case.data["seed"])
    before = targets(gm)
    count = reference_pass(case.data["replacement"]).apply(gm)
    expected = targets(gm)
    if ev["targets"] == before and count:
        raise CheckFailed(f"gm still calls {before}: the pass made none of its {count} replacement(s) in gm",
                          "apply the pass to gm itself, in place (pattern_pass.apply(gm)), not to a copy")
    if ev["count"] != count:
        hint = "return the int that pattern_pass.apply(gm) returns, the number of replacements" + (
            " (apply it once: a second apply finds nothing left to replace)"
            if ev["targets"] == expected and ev["count"] == 0 else "")
        raise CheckFailed(f"apply_pattern_pass returned {ev['count']}, expected {count} replacement(s)", hint)
    expect(ev["targets"] == expected, f"gm calls {ev['targets']} after the pass, expected {expected}",
           "apply the pattern pass once, and change nothing else")
    expect_lint(ev)
    expect_fresh(ev["stale"])
    fresh, inputs = aten_graph(case.data["graph"], case.data["seed"])
    with torch.no_grad():
        want = fresh(*inputs)
    expect(_close(ev["output"], want), "gm computes something else after the pass than before",
           "the replacement computes what the pattern computed: apply the course's pass as it is")


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
                              "compile with inductor, torch.compile's default backend (backend=\"inductor\"): "
                              "aot_eager and eager run no inductor pass")
        raise CheckFailed("inductor compiled the model but never ran the pass",
                          OPTIONS + ". torch.compile compiles on the first call, so a config.patch around "
                          "torch.compile(...) alone has ended by then")
    if not sum(count for count, _ in ev["runs"]):
        if not any(aten for _, aten in ev["runs"]):
            raise CheckFailed(f"the pass ran {len(ev['runs'])} time(s), on graphs of torch functions, and replaced "
                              "nothing", "it ran before AOTAutograd (pre_grad_custom_pass): run it after grad, "
                                         "where the graph is ATen, as post_grad_custom_post_pass")
        raise CheckFailed(f"the pass ran {len(ev['runs'])} time(s) on ATen graphs and replaced nothing",
                          "compile the model you are given, as it is (its mode too): the replacement's pattern is "
                          "in its inference graph")
    expect(not ev["leaked"], f"torch._inductor.config.{', '.join(ev['leaked'])} is still set after "
                             "compile_with_post_grad_pass returned: every later torch.compile of the process runs it",
           "leave torch._inductor.config as it was: hand the pass in torch.compile's options, not by setting "
           "torch._inductor.config")
    with torch.no_grad():
        for i, (x, got) in enumerate(zip(inputs, ev["outputs"])):
            want = model(x)
            expect(_close(got, want), f"on input {i} the compiled model gives something else than the eager model"
                   + (f" (up to {(got - want).abs().max().item():.3g} apart)" if isinstance(got, torch.Tensor)
                      and got.shape == want.shape else ""),
                   "compile the model you are given, as it is, and return what torch.compile returns")
    build_nothing(False)
    torch._dynamo.reset()
