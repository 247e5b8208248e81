"""The judges of ex12_custom_ops: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

import math
import re

import torch
import torch.nn.functional as F

from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import expect, expect_fresh, expect_lint
from autograder.checks.ex12_custom_ops.evidence import _gen, describe, probes, run
from autograder.checks.ex12_custom_ops.models import PROBE, gelu_grad

NO_FAKE = "register_fake: without a fake kernel torch.compile and torch.export cannot know the output's shape"
NO_AUTOGRAD = "register_autograd(backward, setup_context=...): without it the op cannot be differentiated"


def _schema_hint(got: str, namespace: str) -> str:
    name = got.split("(")[0]
    if name != f"{namespace}::scaled_gelu":
        other = name.split("::")[0]
        if name.split("::")[-1] == "scaled_gelu" and re.fullmatch(r"ex12_[a-z]+_\d+_\d+", other):
            return (f"the operator returned lives in {other!r}, the namespace of an earlier call: every call "
                    f"defines the operator anew in the namespace it is given ({namespace!r} here), it does not "
                    "return one defined before")
        if name.split("::")[-1] == "scaled_gelu":
            return (f"the operator's namespace is the argument `namespace` ({namespace!r} here): define "
                    f"f\"{{namespace}}::scaled_gelu\", not a namespace of your own")
        return f"the operator is called scaled_gelu: define f\"{{namespace}}::scaled_gelu\""
    if "!" in got:
        return "the op changes none of its arguments: mutates_args=() (a mutated argument shows as Tensor(a!))"
    if "SymInt scale" in got or "int scale" in got:
        return "annotate scale as float: the schema says float scale (an int annotation makes it SymInt)"
    if re.search(r"\(Tensor x, float scale\)", got) is None:
        return "the parameters are (x: torch.Tensor, scale: float), with these names: the schema reads them"
    return "the op returns one new tensor: -> torch.Tensor"


def _register_judge(case: Case, ev: dict) -> None:
    namespace = ev["namespace"]
    expected = f"{namespace}::scaled_gelu(Tensor x, float scale) -> Tensor"
    if ev["schema"] != expected:
        raise CheckFailed(f"the operator's schema is {ev['schema']!r}, expected {expected!r}",
                          _schema_hint(ev["schema"] or "", namespace))
    for (x, scale), got, kept in zip(probes(), ev["outputs"], ev["kept"]):
        what = f"op(x, {scale}) on a {tuple(x.shape)} {str(x.dtype).replace('torch.', '')} tensor"
        if isinstance(got, str):
            raise CheckFailed(f"{what} raised {got}" if ":" in got else f"{what} {got}",
                              "the real kernel computes scale * torch.nn.functional.gelu(x) and returns a new tensor")
        expect(kept, f"{what} changed x", "compute a new tensor: the op promises (mutates_args=()) to leave x alone")
        reference = scale * F.gelu(x)
        if got.shape != reference.shape or got.dtype != reference.dtype:
            raise CheckFailed(f"{what} returned shape {tuple(got.shape)} {got.dtype}, expected "
                              f"{tuple(reference.shape)} {reference.dtype}",
                              "keep x's shape and dtype: scale * F.gelu(x)")
        if not torch.allclose(got, reference, rtol=1e-5, atol=1e-6):
            tanh = scale * F.gelu(x, approximate="tanh")
            inside = F.gelu(scale * x)
            hint = ("F.gelu(x) is the exact gelu; approximate=\"tanh\" computes something else"
                    if torch.allclose(got, tanh, rtol=1e-5, atol=1e-6) else
                    "scale multiplies gelu's result: scale * F.gelu(x), not F.gelu(scale * x)"
                    if torch.allclose(got, inside, rtol=1e-5, atol=1e-6) else "scale * torch.nn.functional.gelu(x)")
            raise CheckFailed(f"{what} differs from scale * gelu(x) by up to "
                              f"{(got - reference).abs().max().item():.3g}", hint)
    fake = ev["fake"]
    if isinstance(fake, str):
        hint = NO_FAKE if "no fake impl" in fake or "fake" in fake.lower() else \
            "the fake kernel makes an empty tensor like x (torch.empty_like(x)) and reads no data"
        raise CheckFailed(f"the op on fake tensors raised {fake}", hint)
    expect(not ev.get("fake_alias"), "the fake kernel returned its input x itself",
           "the fake kernel returns a new empty tensor like x (torch.empty_like(x)), not x itself: the real kernel "
           "returns a new tensor, and the fake one must say the same")
    for (got_shape, got_dtype), (shape, dtype) in zip(fake, (([2, 7], "torch.float32"), ([3], "torch.float64"))):
        expect(got_shape == shape and got_dtype == dtype,
               f"on a fake {tuple(shape)} {dtype} tensor the fake kernel returned {tuple(got_shape)} {got_dtype}",
               "the fake kernel's result has x's shape and dtype: torch.empty_like(x)")
    _judge_grad(ev["grad"])
    found = ev["opcheck"]
    if found:
        test, said = (next(iter(found.items())) if isinstance(found, dict) else ("opcheck", found))
        raise CheckFailed(f"torch.library.opcheck fails {test}: {said[:300]}",
                          NO_AUTOGRAD if "autograd" in said.lower() and "no autograd" in said.lower() else
                          "run torch.library.opcheck(op, (x, scale)) yourself: it names what is wrong")
    if ev["export"] != 1:
        raise CheckFailed(f"torch.export of a module that calls the op once gave "
                          f"{ev['export']} call_function nodes of it, expected 1",
                          "the op must reach export as one call_function node: a custom_op with a fake kernel")
    comp = ev["compile"]
    if "error" in comp:
        raise CheckFailed(f"torch.compile of a function calling the op raised {comp['error']}", NO_FAKE)
    expect(comp["graphs"] == 1 and comp["calls"] == 1,
           f"torch.compile of t -> op(t, 0.75).sin() + 1 handed its backend {comp['graphs']} graph(s) with "
           f"{comp['calls']} call(s) of the op, expected 1 graph with 1 call", NO_FAKE)


def _judge_grad(grad) -> None:
    x = torch.randn(3, 4, generator=_gen(4), dtype=torch.float64).mul_(2)
    scale = -1.25
    if isinstance(grad, str):
        raise CheckFailed(f"op(x, {scale}).sum().backward() raised {grad}" if ":" in grad else grad,
                          NO_AUTOGRAD if "autograd" in grad.lower() else
                          "backward(ctx, grad) returns (grad * scale * gelu'(x), None): one gradient per input, "
                          "None for the float")
    reference = scale * gelu_grad(x)
    if grad.shape == reference.shape and torch.allclose(grad, reference, rtol=1e-6, atol=1e-8):
        return
    if grad.shape == reference.shape and torch.allclose(grad, gelu_grad(x), rtol=1e-6, atol=1e-8):
        hint = "the gradient is scale times gelu's: multiply by scale (save it on ctx in setup_context)"
    elif grad.shape == reference.shape and torch.allclose(grad, torch.full_like(x, scale)):
        hint = "the gradient is scale times the derivative of gelu at x, not scale alone"
    elif grad.shape == reference.shape and torch.allclose(grad, scale * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0))),
                                                          rtol=1e-6, atol=1e-8):
        hint = ("gelu(x) = x * Phi(x), so gelu'(x) = Phi(x) + x * phi(x): the backward leaves out the x * phi(x) "
                "term")
    else:
        hint = ("backward returns grad * scale * gelu'(x), with gelu'(x) = Phi(x) + x * phi(x) (save x in "
                "setup_context)")
    raise CheckFailed(f"the gradient of op(x, {scale}).sum() with respect to x differs from scale * gelu'(x) by up "
                      f"to {(grad - reference).abs().max().item() if grad.shape == reference.shape else 'its shape'}",
                      hint)


# ------------------------------------------------------------------------------------- count_op_nodes

def _matches(target, op) -> bool:
    return target == op or getattr(target, "overloadpacket", None) is op


def _same_name(target, op) -> bool:
    """A name-only match: target and op share their operator's name (and overload), whatever their namespaces."""
    if isinstance(op, torch._ops.OpOverloadPacket):
        return getattr(getattr(target, "overloadpacket", None), "__name__", None) == op.__name__
    return isinstance(target, torch._ops.OpOverload) and target.__name__ == op.__name__


def _count_judge(case: Case, ev: dict) -> None:
    ep, op = case.make()
    calls = [n for n in ep.graph.nodes if n.op == "call_function"]
    expected = sum(1 for n in calls if _matches(n.target, op))
    got = ev["count"]
    if got == expected:
        return
    is_packet = isinstance(op, torch._ops.OpOverloadPacket)
    packet = op if is_packet else op.overloadpacket
    exact = sum(1 for n in calls if n.target == op)
    whole = sum(1 for n in calls if getattr(n.target, "overloadpacket", None) is packet)
    short = str(packet).split(".")[-1]
    name_hint = ("compare the target objects, not their names: an operator of the same name in another namespace, "
                 "or one whose name contains op's, is another operator")
    by_name = {sum(1 for n in calls if short in str(n.target)),      # the short name within the target's name
               sum(1 for n in calls if str(op) in str(n.target)),    # op's whole name within the target's name
               sum(1 for n in calls if _same_name(n.target, op))}    # the same name, whatever the namespace
    names = sum(1 for n in ep.graph.nodes if n.name.startswith(short))
    default = getattr(packet, "default", None) if is_packet else None
    readings = [  # what the answer's count would be under each misreading, and what to tell it
        (exact if is_packet else None, "op is an overload packet here, and nodes target its overloads: compare "
                                       "node.target.overloadpacket with op"),
        (whole if not is_packet else None, "op is one overload here: count only nodes whose target is that exact "
                                           "overload, not its other overloads"),
        (0 if not is_packet else None, "op is one overload here, not a packet: count the nodes whose target == op "
                                       "(no node's target has an overload as its overloadpacket)"),
        (sum(1 for n in calls if n.target == default) if default is not None else None,
         "a packet's nodes may target any of its overloads (op.overloads() names them), not only op.default: "
         "compare node.target.overloadpacket with op"),
        *((value, name_hint) for value in by_name),
        (names, "compare node.target with op, not node names: a node's name says nothing of its target"),
    ]
    hints = list(dict.fromkeys(hint for value, hint in readings if value == got))
    if not hints:
        hints = ["only call_function nodes whose target is op (or, for a packet, one of its overloads)"
                 if got > expected else
                 "every call_function node of ep.graph whose target is op, or an overload of op when op is a packet"]
    which = ", ".join(n.name for n in calls if _matches(n.target, op)) or "none"
    raise CheckFailed(f"count_op_nodes returned {got} for {op}, expected {expected} (the nodes: {which})",
                      "; or: ".join(hints))


# ------------------------------------------------------------------------------------- replace_with_op

def _replace_judge(case: Case, ev: dict) -> None:
    gm, fn, op = case.make()
    x = getattr(gm, PROBE)
    before = describe(gm, fn, op)
    expected = [[o, "op" if t == "fn" else t, a, k] for o, t, a, k in before]
    got = ev["nodes"]
    if got != expected:
        _explain_nodes(got, expected, before)
    expect_lint(ev, "change node.target only (or insert the new node before erasing the old one)")
    expect_fresh(ev["stale"])
    expect(not ev["rewrapped"], f"the node(s) {', '.join(ev['rewrapped'])} call op but still carry "
           "meta[\"is_wrapped\"]: gm.code asks torch.fx to wrap the operator's dotted name, and every later "
           "symbolic trace in the process fails with a KeyError naming it",
           "the node no longer calls a wrapped Python function: node.meta.pop(\"is_wrapped\", None)")
    reference = run(gm, x)
    out = ev["output"]
    if isinstance(out, str):
        raise CheckFailed(f"the returned GraphModule raised {out}", "the op takes the same arguments as fn")
    expect(isinstance(out, torch.Tensor) and out.shape == reference.shape
           and torch.allclose(out, reference, rtol=1e-5, atol=1e-6),
           "the returned GraphModule computes something else than the model did",
           "the op computes what fn computed: only the targets change")
    expect(ev.get("linted") is not False or expected == before,
           "gm.graph.lint() was not called on the changed graph",
           "after changing the graph call gm.graph.lint(), then gm.recompile(), as the task asks: lint checks that "
           "every node's inputs are defined before it and belong to the graph")


def _replace_raise(case: Case, raised: dict) -> str | None:
    """A raise on a model without a call of fn: nothing to replace is no error."""
    if case.data.get("model") == "NoCall(4)":
        return ("a graph without a call of fn is no error: there is nothing to replace, so lint, recompile and "
                "return gm as it is")
    return None


def _explain_nodes(got: list, expected: list, before: list) -> None:
    if got == before and any(t == "fn" for _, t, _, _ in before):
        raise CheckFailed("nothing changed: the graph still calls fn",
                          "set node.target = op on every call_function node whose target is fn, in gm.graph")
    fns = sum(1 for _, t, _, _ in before if t == "fn")
    if len(got) == len(expected) + fns and sum(1 for _, t, _, _ in got if t == "fn") == fns \
            and sum(1 for _, t, _, _ in got if t == "op") == fns + sum(1 for _, t, _, _ in before if t == "op"):
        raise CheckFailed(f"the graph has {len(got)} nodes, expected {len(expected)}: next to each new call of op, "
                          "the old node that calls fn is still in the graph",
                          "erase each old node (gm.graph.erase_node(node)) once its users call the new one "
                          "(node.replace_all_uses_with(new)): only op is called")
    if len(got) != len(expected):
        raise CheckFailed(f"the graph has {len(got)} nodes, expected {len(expected)}",
                          "replace each call of fn by one call of op: keep every other node")
    for i, (g, e, b) in enumerate(zip(got, expected, before)):
        if g == e:
            continue
        where = f"node {i} ({b[0]} {b[1]})"
        if b[1] == "fn" and g[1] == "fn":
            hint = "every call_function node that calls fn: do not stop at the first one"
        elif b[1] == "fn" and g[1] != "op":
            hint = "the new target is op itself, the object you were given"
        elif b[1] != "fn" and g[1] == "op":
            hint = ("only nodes whose target is fn itself (node.target is fn): another function, even one of "
                    "the same name, stays")
        elif g[3] != e[3] or g[2] != e[2]:
            hint = "keep the node's args and kwargs as they were (scale may be a keyword argument)"
        else:
            hint = "change node.target of the calls of fn only"
        raise CheckFailed(f"{where} is {g[:2]} with args {g[2]} and kwargs {g[3]}, expected {e[:2]} with args "
                          f"{e[2]} and kwargs {e[3]}", hint)
