"""The judges of ex04_wrapping: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

import collections

import torch
import torch.fx as fx
import torch.nn as nn

from autograder.checks.framework import CheckFailed
from autograder.checks.evidence import (
    describe_graph, expect, expect_close, expect_fresh, expect_lint, first_difference, qualified,
)
from autograder.checks.ex04_wrapping.models import REF
from autograder.checks.ex04_wrapping.cases import build_gated, GATED_KINDS, gated_probe, ReferenceLeafTracer


def _lint_ok(ev: dict) -> None:
    expect_fresh(ev["stale"], "call gm.recompile() after changing gm.graph, so gm.code and forward are regenerated")
    expect_lint(ev, "call gm.graph.lint() and gm.recompile() after editing the graph")


def _short(target: str) -> str:
    return target.rsplit(".", 1)[-1]


def _graph_sequence(graph: fx.Graph, gate_name: str | None = None) -> list[tuple[str, str]]:
    """Like _sequence, straight from a Graph: no GraphModule, so no code is generated. (Generated code that
    calls a wrapped function runs fx.wrap at its top level, and torch.fx keeps every such registration, and
    patches all of them at every later trace, for the life of the process.)"""
    return _sequence([{"op": n.op, "target": qualified(n.target)} for n in graph.nodes], gate_name)


def _sequence(graph: list[dict], gate_name: str | None = None) -> list[tuple[str, str]]:
    """(op, target) of every node, with the gate function's target shortened to 'gate'."""
    out = []
    for n in graph:
        target = n["target"]
        if gate_name and n["op"] == "call_function" and _short(target) == gate_name:
            target = gate_name
        out.append((n["op"], target))
    return out


def _first_diff(got: list, expected: list) -> str:
    """The first (op, target) pair of two node sequences that differs."""
    return first_difference(got, expected, "node", lambda node: f"{node[0]} {node[1]!r}")


WRAP_HINT = ("make gate a leaf function, recorded as one call_function node: call fx.wrap(\"gate\") at the top "
             "level of your answer cell (outside any def), or trace with fx.Tracer(autowrap_functions=(gate,))")


def _gated_judge(case, ev):
    kind, seed = case.data["kind"], case.data["seed"]
    reference = build_gated(kind, seed, REF)
    expected = _graph_sequence(fx.Tracer(autowrap_functions=(REF["gate"],)).trace(reference), "gate")
    n_expected = GATED_KINDS[kind][0]
    gates = [n for n in ev["graph"] if n["op"] == "call_function" and _short(n["target"]) == "gate"]
    if not gates:
        traced_through = any(n["op"] in ("call_method", "call_function") and _short(n["target"]) in
                             ("sum", "gt", "where", "tanh", "relu") for n in ev["graph"])
        if traced_through:
            raise CheckFailed("no call_function node calls gate: gate was traced through (its sum/compare/relu "
                              "are in the graph instead), so one branch got frozen or rewritten", WRAP_HINT)
        raise CheckFailed("no call_function node calls gate", WRAP_HINT)
    if len(gates) != n_expected:
        raise CheckFailed(f"{len(gates)} call_function node(s) call gate ({', '.join(n['name'] for n in gates)}), "
                          f"expected {n_expected}: one per call of gate in the model's forward",
                          "trace the model you are given: every call of gate becomes its own node")
    _lint_ok(ev)
    got = _sequence(ev["graph"], "gate")
    expect(got == expected, f"the graph differs from a trace with gate as a leaf: {_first_diff(got, expected)}",
           "trace the `model` argument itself, with gate as a leaf and everything else traced as usual")
    if ev["run_error"]:
        raise CheckFailed(f"the returned GraphModule raised {ev['run_error']} when run")
    inputs, sums = gated_probe(kind, seed)
    expect(len(ev["outputs"]) == len(inputs), f"{len(ev['outputs'])} outputs, expected {len(inputs)}")
    with torch.no_grad():
        for inp, out, s in zip(inputs, ev["outputs"], sums):
            side = "relu" if s > 0 else "tanh"
            expect_close(out, reference(*inp),
                         f"output on an input where gate's input sums to {s:+.2f} (the {side} branch)",
                         hint="trace the `model` argument itself (not a new instance); gate must run at call "
                              "time, so both of its branches still work")


def _type_name(model: nn.Module, qualname: str) -> str:
    return type(model.get_submodule(qualname)).__name__


def _leaf_judge(case, ev):
    model, leaf_types = case.make()
    leaf_types = tuple(leaf_types)
    tracer = ReferenceLeafTracer(leaf_types)
    ref = describe_graph(fx.GraphModule(model, tracer.trace(model)))
    ref_modules = [n["target"] for n in ref if n["op"] == "call_module"]
    got_modules = [n["target"] for n in ev["graph"] if n["op"] == "call_module"]
    touched = {n["target"] for n in ev["graph"] if n["op"] in ("call_module", "get_attr")}
    for target in dict.fromkeys(got_modules):
        inside_a_ref_module = any(target.startswith(r + ".") for r in ref_modules)
        if target not in ref_modules and not inside_a_ref_module:  # (inside: a leaf traced through, see below)
            try:
                kind = _type_name(model, target)
            except AttributeError:
                kind = "not a submodule of the model"
            raise CheckFailed(f"module {target!r} ({kind}) is one call_module node, but it is not an instance of "
                              "leaf_types (nor a torch.nn layer): it should be traced through",
                              "only instances of leaf_types, plus what torch.nn makes a leaf anyway, stay whole")
    for target in dict.fromkeys(ref_modules):
        if target in got_modules:
            continue
        kind = _type_name(model, target)
        inside = sorted(t for t in touched if t.startswith(target + "."))
        custom = isinstance(model.get_submodule(target), leaf_types)
        if custom:
            where = f" (the graph reaches inside it: {', '.join(inside[:3])})" if inside else ""
            hint = ("is_leaf_module is asked about every module, nested ones too, with their dotted qualname: "
                    "decide by type with isinstance(m, tuple(leaf_types)), which counts subclasses too")
            raise CheckFailed(f"module {target!r} ({kind}) is an instance of a leaf type but is not one "
                              f"call_module node{where}", hint)
        into = f" into {inside[0]}" if inside else ""
        raise CheckFailed(f"torch.nn module {target!r} ({kind}) was traced through{into}; it should stay a "
                          "call_module node as usual",
                          "keep the default rule for the other modules: "
                          "return ... or super().is_leaf_module(m, module_qualified_name)")
    _lint_ok(ev)
    got, expected = _sequence(ev["graph"]), _sequence(ref)
    expect(got == expected, f"the graph differs from the reference trace: {_first_diff(got, expected)}",
           "trace the model you are given with a custom fx.Tracer whose is_leaf_module decides the leaves")
    if ev["run_error"]:
        raise CheckFailed(f"the returned GraphModule raised {ev['run_error']} when run")
    expect(len(ev["outputs"]) == len(model.probe_inputs), f"{len(ev['outputs'])} outputs, expected "
                                                           f"{len(model.probe_inputs)}")
    with torch.no_grad():
        for inp, out in zip(model.probe_inputs, ev["outputs"]):
            expect_close(out, model(*inp), "output of the returned GraphModule")


GUARD_HINT = ("concrete_args leaves a guard for each flag: a placeholder named <flag>_1 whose default is the "
              "flag's ORIGINAL default, checked by torch._assert. Give that placeholder the fixed value as its "
              "default (node.args = (value,)), or erase the guard, then gm.recompile()")


def _spec_judge(case, ev):
    (model,) = case.make()
    flags = case.kwargs()
    ref = describe_graph(fx.symbolic_trace(model, concrete_args=flags))
    n_tensors = len(model.probe_inputs[0])
    tensor_inputs = [n["target"] for n in ref if n["op"] == "placeholder"][:n_tensors]
    placeholders = [n["target"] for n in ev["graph"] if n["op"] == "placeholder"]
    expect(placeholders[:n_tensors] == tensor_inputs,
           f"the placeholders are {placeholders}; the first {n_tensors} should be the tensor input(s) "
           f"{tensor_inputs}, in order",
           "keep every tensor input as a placeholder, even one the flags leave unused")
    _lint_ok(ev)
    if ev["run_error"]:
        err = ev["run_error"]
        hint = None
        if "has been specialized" in err:
            hint = GUARD_HINT
        elif "missing" in err and "required positional argument" in err:
            hint = ("a flag without a default stays a required placeholder after concrete_args (named <flag>_1): "
                    "give it the fixed value as default, or remove it with its guard")
        elif "positional argument" in err and "given" in err:
            hint = "keep every tensor input as a placeholder, even one the flags leave unused"
        raise CheckFailed(f"calling the returned GraphModule with the {n_tensors} tensor input(s) only raised "
                          f"{err}", hint)
    expected = collections.Counter(n["target"] for n in ref if n["op"] == "call_module")
    got = collections.Counter(n["target"] for n in ev["graph"] if n["op"] == "call_module")
    for target in sorted(set(expected) | set(got)):
        expect(got[target] == expected[target],
               f"submodule {target!r} is called {got[target]} time(s) in the graph, expected {expected[target]} "
               f"with {', '.join(f'{k}={v!r}' for k, v in flags.items())}",
               case.data.get("hint") or "trace with concrete_args=flags so the Python values pick the layers")
    expect(len(ev["outputs"]) == len(model.probe_inputs), f"{len(ev['outputs'])} outputs, expected "
                                                           f"{len(model.probe_inputs)}")
    with torch.no_grad():
        for inp, out in zip(model.probe_inputs, ev["outputs"]):
            expect_close(out, model(*inp, **flags), "output of gm(*tensors) against model(*tensors, **flags)",
                         hint=case.data.get("hint"))
