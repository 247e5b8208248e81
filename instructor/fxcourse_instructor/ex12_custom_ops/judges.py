"""The judges of ex12_custom_ops: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

import math
import re

import torch
import torch.nn.functional as F

from autograder.checks.hints import hint_of
from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import expect, expect_fresh, expect_lint
from autograder.checks.ex12_custom_ops.evidence import describe, grad_probes, probes, run, wrapped_marks
from autograder.checks.ex12_custom_ops.models import PROBE, gelu_grad

NO_FAKE = "ex12.register_fake_without_fake_kernel"
NO_AUTOGRAD = "ex12.register_autograd_backward_setup_context"


def _schema_hint(got: str, namespace: str) -> str:
    name = got.split("(")[0]
    if name != f"{namespace}::scaled_gelu":
        other = name.split("::")[0]
        if name.split("::")[-1] == "scaled_gelu" and re.fullmatch(r"ex12_[a-z]+_\d+_\d+", other):
            return hint_of("ex12.operator_returned_lives_namespace_earlier", other=other, namespace=namespace)
        if name.split("::")[-1] == "scaled_gelu":
            return hint_of("ex12.operator_s_namespace_argument_namespace", namespace=namespace)
        return "ex12.operator_called_scaled_gelu_define"
    if "!" in got:
        return "ex12.op_changes_none_arguments_mutates"
    if "SymInt scale" in got or "int scale" in got:
        return "ex12.annotate_scale_float_schema_says"
    if re.search(r"\(Tensor x, float scale\)", got) is None:
        return "ex12.parameters_are_x_torch_tensor"
    return "ex12.op_returns_one_new_tensor"


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
                              "ex12.real_kernel_computes_scale_torch")
        expect(kept, f"{what} changed x", "ex12.compute_new_tensor_op_promises")
        reference = scale * F.gelu(x)
        if got.shape != reference.shape or got.dtype != reference.dtype:
            raise CheckFailed(f"{what} returned shape {tuple(got.shape)} {got.dtype}, expected "
                              f"{tuple(reference.shape)} {reference.dtype}",
                              "ex12.keep_x_s_shape_dtype")
        rtol, atol = _tolerance(x)
        if not torch.allclose(got, reference, rtol=rtol, atol=atol):
            if torch.allclose(got, reference, rtol=1e-5, atol=1e-6):
                raise CheckFailed(f"{what} differs from scale * gelu(x) by up to "
                                  f"{(got - reference).abs().max().item():.3g}, float32's rounding, not float64's",
                                  "ex12.compute_in_x_s_own_dtype")
            tanh = scale * F.gelu(x, approximate="tanh")
            inside = F.gelu(scale * x)
            hint = ("ex12.f_gelu_x_exact_gelu"
                    if torch.allclose(got, tanh, rtol=1e-5, atol=1e-6) else
                    "ex12.scale_multiplies_gelu_s_result"
                    if torch.allclose(got, inside, rtol=1e-5, atol=1e-6) else "ex12.scale_torch_nn_functional_gelu")
            raise CheckFailed(f"{what} differs from scale * gelu(x) by up to "
                              f"{(got - reference).abs().max().item():.3g}", hint)
    fake = ev["fake"]
    if isinstance(fake, str):
        hint = NO_FAKE if "no fake impl" in fake or "fake" in fake.lower() else \
            "ex12.fake_kernel_makes_empty_tensor"
        raise CheckFailed(f"the op on fake tensors raised {fake}", hint)
    expect(not ev.get("fake_alias"), "the fake kernel returned its input x itself",
           "ex12.fake_kernel_returns_new_empty")
    for (got_shape, got_dtype), (shape, dtype) in zip(fake, (([2, 7], "torch.float32"), ([3], "torch.float64"))):
        expect(got_shape == shape and got_dtype == dtype,
               f"on a fake {tuple(shape)} {dtype} tensor the fake kernel returned {tuple(got_shape)} {got_dtype}",
               "ex12.fake_kernel_s_result_has")
    _judge_strides(ev.get("strides", {}))
    _judge_grad(ev["grad"])
    found = ev["opcheck"]
    if found:
        test, said = (next(iter(found.items())) if isinstance(found, dict) else ("opcheck", found))
        raise CheckFailed(f"torch.library.opcheck fails {test}: {said[:300]}",
                          NO_AUTOGRAD if "autograd" in said.lower() and "no autograd" in said.lower() else
                          "ex12.run_torch_library_opcheck_op")
    exported = ev["export"]
    if isinstance(exported, str):
        raise CheckFailed(f"torch.export of a module that calls the op once, with a dynamic batch, raised {exported}",
                          "ex12.fake_kernel_follows_x_s_sizes" if "specialized" in exported
                          or "Constraints violated" in exported else "ex12.op_must_reach_export_one")
    if exported != 1:
        raise CheckFailed(f"torch.export of a module that calls the op once, with a dynamic batch, gave "
                          f"{exported} call_function nodes of it, expected 1",
                          "ex12.op_must_reach_export_one")
    comp = ev["compile"]
    if "error" in comp:
        raise CheckFailed(f"torch.compile of a function calling the op raised {comp['error']}", NO_FAKE)
    expect(comp["graphs"] == 1 and comp["calls"] == 1,
           f"torch.compile of t -> op(t, 0.75).sin() + 1 handed its backend {comp['graphs']} graph(s) with "
           f"{comp['calls']} call(s) of the op, expected 1 graph with 1 call", NO_FAKE)


def _judge_strides(strides: dict) -> None:
    """On a transposed input the fake kernel must promise the strides the real kernel gives (opcheck checks it)."""
    what = "op(x, 1.5) on a transposed (3, 5) tensor with strides (1, 3)"
    real, fake = strides.get("real"), strides.get("fake")
    if isinstance(real, str):
        raise CheckFailed(f"{what} raised {real}", "ex12.real_kernel_computes_scale_torch")
    if isinstance(fake, str):
        raise CheckFailed(f"{what}, on fake tensors, raised {fake}", "ex12.fake_kernel_makes_empty_tensor")
    if real != fake:
        raise CheckFailed(f"{what}: the real kernel returns strides {tuple(real)}, the fake kernel promises "
                          f"{tuple(fake)}; torch.library.opcheck fails test_faketensor on such an input",
                          "ex12.fake_kernel_keeps_x_s_layout")


def _tolerance(x: torch.Tensor) -> tuple[float, float]:
    """(rtol, atol) for a result computed from x: float64's own rounding for a float64 x, else float32's."""
    return (1e-10, 1e-12) if x.dtype == torch.float64 else (1e-5, 1e-6)


def _judge_grad(grads) -> None:
    """The gradients of (op(x1, s1) * w1).sum() + (op(x2, s2) * w2).sum() (grad_probes): w * scale * gelu'(x) for each
    call, in float64."""
    calls = grad_probes()
    what = " + ".join(f"(op(x{i}, {scale}) * w{i}).sum()" for i, (_, scale, _) in enumerate(calls, 1))
    if isinstance(grads, str):
        raise CheckFailed(f"{what}.backward() raised {grads}" if ":" in grads else grads,
                          NO_AUTOGRAD if "autograd" in grads.lower() else
                          "ex12.backward_ctx_grad_returns_grad")
    for i, ((x, scale, w), grad) in enumerate(zip(calls, grads), 1):
        if isinstance(grad, str):
            raise CheckFailed(f"after {what}.backward(): x{i}.grad is None", "ex12.backward_ctx_grad_returns_grad")
        reference = w * scale * gelu_grad(x)
        if grad.shape != reference.shape:
            raise CheckFailed(f"the gradient of {what} with respect to x{i} has shape {tuple(grad.shape)}, expected "
                              f"{tuple(reference.shape)}", "ex12.backward_returns_grad_scale_gelu")
        if torch.allclose(grad, reference, rtol=1e-10, atol=1e-12):
            continue
        other = calls[2 - i][1]   # the other call's scale

        def near(value: torch.Tensor) -> bool:
            return torch.allclose(grad, value, rtol=1e-6, atol=1e-8)
        hint = ("ex12.compute_in_x_s_own_dtype" if near(reference) else
                "ex12.backward_multiplies_grad_flowing_in" if near(scale * gelu_grad(x)) else
                "ex12.each_call_s_backward_uses" if near(w * other * gelu_grad(x)) else
                "ex12.gradient_scale_times_gelu_s" if near(w * gelu_grad(x)) else
                "ex12.gradient_scale_times_derivative_gelu" if near(w * scale) else
                "ex12.gelu_x_x_phi_x" if near(w * scale * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))) else
                "ex12.backward_returns_grad_scale_gelu")
        raise CheckFailed(f"the gradient of {what} with respect to x{i} differs from w{i} * {scale} * gelu'(x{i}) "
                          f"by up to {(grad - reference).abs().max().item():.3g}", hint)


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
    name_hint = "ex12.compare_target_objects_not_names"
    by_name = {sum(1 for n in calls if short in str(n.target)),      # the short name within the target's name
               sum(1 for n in calls if str(op) in str(n.target)),    # op's whole name within the target's name
               sum(1 for n in calls if _same_name(n.target, op))}    # the same name, whatever the namespace
    names = sum(1 for n in ep.graph.nodes if n.name.startswith(short))
    default = getattr(packet, "default", None) if is_packet else None
    nested = sum(1 for m in ep.graph_module.modules() if isinstance(m, torch.fx.GraphModule)
                 for n in m.graph.nodes if n.op == "call_function" and _matches(n.target, op))
    try:   # the count on the program decomposed further (not what was asked)
        decomposed = sum(1 for n in ep.run_decompositions().graph.nodes if n.op == "call_function"
                         and _matches(n.target, op))
    except Exception:
        decomposed = expected
    readings = [  # what the answer's count would be under each misreading, and what to tell it
        (decomposed if decomposed != expected else None, "ex12.count_program_as_given"),
        (nested if nested != expected else None, "ex12.count_nodes_ep_graph_only"),
        (exact if is_packet else None, "ex12.op_overload_packet_here_nodes"),
        (whole if not is_packet else None, "ex12.op_one_overload_here_count"),
        (0 if not is_packet else None, "ex12.op_one_overload_here_not"),
        (sum(1 for n in calls if n.target == default) if default is not None else None,
         "ex12.packet_s_nodes_may_target"),
        *((value, name_hint) for value in by_name),
        (names, "ex12.compare_node_target_op_not"),
    ]
    hints = list(dict.fromkeys(hint for value, hint in readings if value == got))
    if not hints:
        hints = ["ex12.only_call_function_nodes_whose"
                 if got > expected else
                 "ex12.every_call_function_node_ep"]
    which = ", ".join(n.name for n in calls if _matches(n.target, op)) or "none"
    raise CheckFailed(f"count_op_nodes returned {got} for {op}, expected {expected} (the nodes: {which})",
                      "; or: ".join(map(hint_of, hints)))


# ------------------------------------------------------------------------------------- replace_with_op

def _replace_judge(case: Case, ev: dict) -> None:
    gm, fn, op = case.make()
    x = getattr(gm, PROBE)
    before = describe(gm, fn, op)
    expected = [[o, "op" if t == "fn" else t, a, k] for o, t, a, k in before]
    got = ev["nodes"]
    if got != expected:
        _explain_nodes(got, expected, before)
    expect_lint(ev, "ex12.change_node_target_only_insert")
    expect_fresh(ev["stale"])
    expect(not ev["rewrapped"], f"the node(s) {', '.join(ev['rewrapped'])} call op but still carry "
           "meta[\"is_wrapped\"]: gm.code asks torch.fx to wrap the operator's dotted name, and every later "
           "symbolic trace in the process fails with a KeyError naming it",
           "ex12.node_no_longer_calls_wrapped")
    for i, (mark, kept, (_, target, _, _)) in enumerate(zip(wrapped_marks(gm), ev.get("wrapped", []), before)):
        expect(kept or not mark or target == "fn",
               f"node {i} ({target}) lost its meta[\"is_wrapped\"]: it is not a call of fn, and gm.code no longer "
               "wraps that function, so the next symbolic trace of gm traces into it instead of keeping one node",
               "ex12.only_nodes_whose_target_fn")
    reference = run(gm, x)
    out = ev["output"]
    if isinstance(out, str):
        raise CheckFailed(f"the returned GraphModule raised {out}", "ex12.op_takes_same_arguments_fn")
    expect(isinstance(out, torch.Tensor) and out.shape == reference.shape
           and torch.allclose(out, reference, rtol=1e-5, atol=1e-6),
           "the returned GraphModule computes something else than the model did",
           "ex12.op_computes_what_fn_computed")
    expect(ev.get("linted") is not False or expected == before,
           "gm.graph.lint() was not called on the changed graph",
           "ex12.after_changing_graph_call_gm")


def _replace_raise(case: Case, raised: dict) -> str | None:
    """A raise on a model without a call of fn: nothing to replace is no error."""
    if case.data.get("model") == "NoCall(4)":
        return "ex12.graph_without_call_fn_no"
    return None


def _explain_nodes(got: list, expected: list, before: list) -> None:
    if got == before and any(t == "fn" for _, t, _, _ in before):
        raise CheckFailed("nothing changed: the graph still calls fn",
                          "ex12.set_node_target_op_every")
    fns = sum(1 for _, t, _, _ in before if t == "fn")
    if len(got) == len(expected) + fns and sum(1 for _, t, _, _ in got if t == "fn") == fns \
            and sum(1 for _, t, _, _ in got if t == "op") == fns + sum(1 for _, t, _, _ in before if t == "op"):
        raise CheckFailed(f"the graph has {len(got)} nodes, expected {len(expected)}: next to each new call of op, "
                          "the old node that calls fn is still in the graph",
                          "ex12.erase_each_old_node_gm")
    if len(got) != len(expected):
        raise CheckFailed(f"the graph has {len(got)} nodes, expected {len(expected)}",
                          "ex12.replace_each_call_fn_one")
    for i, (g, e, b) in enumerate(zip(got, expected, before)):
        if g == e:
            continue
        where = f"node {i} ({b[0]} {b[1]})"
        if b[1] == "fn" and g[1] == "fn":
            hint = "ex12.every_call_function_node_calls"
        elif b[1] == "fn" and g[1] != "op":
            hint = "ex12.new_target_op_itself_object"
        elif b[1] != "fn" and g[1] == "op":
            hint = "ex12.only_nodes_whose_target_fn"
        elif g[3] != e[3] or g[2] != e[2]:
            hint = "ex12.keep_node_s_args_kwargs"
        else:
            hint = "ex12.change_node_target_calls_fn"
        raise CheckFailed(f"{where} is {g[:2]} with args {g[2]} and kwargs {g[3]}, expected {e[:2]} with args "
                          f"{e[2]} and kwargs {e[3]}", hint)
