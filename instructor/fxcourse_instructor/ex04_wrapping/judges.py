"""The judges of ex04_wrapping: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

import collections

import torch
import torch.fx as fx
import torch.nn as nn

from autograder.checks.hints import hint_of
from autograder.checks.framework import CheckFailed
from autograder.checks.evidence import (
    describe_graph, expect, expect_close, expect_fresh, expect_lint, first_difference, qualified,
)
from autograder.checks.ex04_wrapping.models import REF
from autograder.checks.ex04_wrapping.cases import build_gated, GATED_KINDS, gated_probe, ORDER_HINT, set_modes
from fxcourse_instructor.ex04_wrapping.references import ReferenceLeafTracer


def _lint_ok(ev: dict) -> None:
    expect_fresh(ev["stale"], "ex04.call_gm_recompile_after_changing")
    expect_lint(ev)   # lint fails on a broken graph, whether or not the answer called it
    patched = ev.get("tracer_patched", [])
    expect(not patched, f"torch.fx.Tracer.{patched[0] if patched else ''} is no longer torch's own: it was replaced "
           "on the class, for every tracer of the process, so every later trace (symbolic_trace too) changes",
           "ex04.subclass_fx_tracer_change_class")


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


WRAP_HINT = "ex04.make_gate_leaf_function_recorded"


def _gated_judge(case, ev):
    kind, seed = case.data["kind"], case.data["seed"]
    reference = set_modes(build_gated(kind, seed, REF), case.data.get("modes"))
    expected = _graph_sequence(fx.Tracer(autowrap_functions=(REF["gate"],)).trace(reference), "gate")
    n_expected = GATED_KINDS[kind][0]
    gates = [n for n in ev["graph"] if n["op"] == "call_function" and _short(n["target"]) == "gate"]
    if not gates:
        whole = [n for n in ev["graph"] if n["op"] == "call_module" and n.get("module_type") and (
            not n["module_type"].startswith("torch.nn.") or n["module_type"].endswith(".Sequential"))]
        if whole:
            raise CheckFailed(f"no call_function node calls gate: module {whole[0]['target']!r} "
                              f"({whole[0]['module_type'].rsplit('.', 1)[-1]}) is one call_module node, so the gate "
                              "it calls is not in the graph",
                              "ex04.trace_through_model_s_own")
        traced_through = any(n["op"] in ("call_method", "call_function") and _short(n["target"]) in
                             ("sum", "gt", "where", "tanh", "relu") for n in ev["graph"])
        if traced_through:
            raise CheckFailed("no call_function node calls gate: gate was traced through (its sum/compare/relu "
                              "are in the graph instead), so one branch got frozen or rewritten", WRAP_HINT)
        raise CheckFailed("no call_function node calls gate", WRAP_HINT)
    if len(gates) != n_expected:
        modules = [t for op, t in expected if op == "call_module"]
        other = [n["target"] for n in ev["graph"] if n["op"] == "call_module"] != modules
        raise CheckFailed(f"{len(gates)} call_function node(s) call gate ({', '.join(n['name'] for n in gates)}), "
                          f"expected {n_expected}: one per call of gate in the model's forward",
                          hint_of("ex04.trace_model_you_are_given", modules=modules) if other else None)
    expect(not ev.get("gate_redefined"), "the notebook's gate is no longer the function its first cell defines: "
           "the models of other code call that one, which a trace through it cannot follow",
           "ex04.do_not_redefine_gate_make")
    _lint_ok(ev)
    got = _sequence(ev["graph"], "gate")
    if got != expected:
        _other_mode_graph(reference, got)
        raise CheckFailed(f"the graph differs from a trace with gate as a leaf: {_first_diff(got, expected)}")
    if ev["run_error"]:
        raise CheckFailed(f"the returned GraphModule raised {ev['run_error']} when run")
    inputs, sums = gated_probe(kind, seed)
    expect(len(ev["outputs"]) == len(inputs), f"{len(ev['outputs'])} outputs, expected {len(inputs)}")
    with torch.no_grad():
        for inp, out, s in zip(inputs, ev["outputs"], sums):
            side = "relu" if s > 0 else "tanh"
            expect_close(out, reference(*inp),
                         f"output on an input where gate's input sums to {s:+.2f} (the {side} branch)",
                         hint=None if ev.get("shares_parameters", True) else
                         "ex04.trace_model_argument_itself_not")


def _other_mode_graph(reference: nn.Module, got: list) -> None:
    """Fail naming the mode when `got` is the trace of the reference in the other mode (its forward reads
    self.training): a trace of a copy switched to eval() or train(), not of the model as it is."""
    mode = "training" if reference.training else "eval"
    reference.train(not reference.training)
    try:
        other = _graph_sequence(fx.Tracer(autowrap_functions=(REF["gate"],)).trace(reference), "gate")
    finally:
        reference.train(mode == "training")
    if got == other:
        other_mode = "eval" if mode == "training" else "training"
        raise CheckFailed(f"the graph is the trace of the model in {other_mode} mode, but the model passed in is in "
                          f"{mode} mode and its forward reads self.training", "ex04.trace_model_mode_it_is")


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
            else:
                _namesake(model.get_submodule(target), target, leaf_types)
            raise CheckFailed(f"module {target!r} ({kind}) is one call_module node, but it is not an instance of "
                              "leaf_types (nor a torch.nn layer): it should be traced through",
                              "ex04.only_instances_leaf_types_plus")
    for target in dict.fromkeys(ref_modules):
        if target in got_modules:
            continue
        kind = _type_name(model, target)
        inside = sorted(t for t in touched if t.startswith(target + "."))
        custom = isinstance(model.get_submodule(target), leaf_types)
        if custom:
            where = f" (the graph reaches inside it: {', '.join(inside[:3])})" if inside else ""
            hint = _leaf_hint(model, target, leaf_types, ref_modules, got_modules)
            raise CheckFailed(f"module {target!r} ({kind}) is an instance of a leaf type but is not one "
                              f"call_module node{where}", hint)
        into = f" into {inside[0]}" if inside else ""
        raise CheckFailed(f"torch.nn module {target!r} ({kind}) was traced through{into}; it should stay a "
                          "call_module node as usual",
                          "ex04.keep_default_rule_other_modules")
    _lint_ok(ev)
    got, expected = _sequence(ev["graph"]), _sequence(ref)
    expect(got == expected, f"the graph differs from the reference trace: {_first_diff(got, expected)}")
    if ev["run_error"]:
        raise CheckFailed(f"the returned GraphModule raised {ev['run_error']} when run")
    expect(len(ev["outputs"]) == len(model.probe_inputs), f"{len(ev['outputs'])} outputs, expected "
                                                           f"{len(model.probe_inputs)}")
    with torch.no_grad():
        for inp, out in zip(model.probe_inputs, ev["outputs"]):
            expect_close(out, model(*inp), "output of the returned GraphModule")


def _namesake(module: nn.Module, target: str, leaf_types: tuple) -> None:
    """Fail when a module kept whole is no instance of leaf_types but its class (or a base) shares a leaf type's
    name: the answer compared names, not classes."""
    names = {t.__name__: t for t in leaf_types}
    base = next((c for c in type(module).__mro__ if c.__name__ in names), None)
    if base is None:
        return
    name = base.__name__
    whose = (f"its class is named {name!r} like the leaf type" if base is type(module) else
             f"its class {type(module).__name__!r} derives from a class named {name!r} like the leaf type")
    raise CheckFailed(f"module {target!r} is one call_module node, but {whose}, and is another class, neither "
                      f"{names[name].__qualname__} nor a subclass of it: it should be traced through",
                      "ex04.compare_classes_not_their_names")


def _leaf_hint(model: nn.Module, target: str, leaf_types: tuple, ref_modules: list, got_modules: list) -> str | None:
    """Why an instance of leaf_types was traced through, when the other leaves kept or lost show it: a subclass
    (an exact type test) or a nested module (a test that sees only some qualnames), else None."""
    def subclass(t):
        return type(model.get_submodule(t)) not in leaf_types

    leaves = [t for t in dict.fromkeys(ref_modules) if isinstance(model.get_submodule(t), leaf_types)]
    kept_nested = any("." in t and t in got_modules for t in leaves)
    kept_subclass = any(subclass(t) and t in got_modules for t in leaves)
    by_type = "ex04.decide_type_isinstance_m_tuple"
    by_place = "ex04.leaf_module_asked_about_every"
    if subclass(target) and ("." not in target or kept_nested):
        return by_type
    if "." in target and (not subclass(target) or kept_subclass):
        return by_place
    return None


def _spec_positional(model: nn.Module, flags: dict) -> dict:
    """The flags' values given to forward's parameters after the tensors by position, in the order they came."""
    import inspect

    params = list(inspect.signature(model.forward).parameters)[len(model.probe_inputs[0]):]
    return dict(zip(params, flags.values()))


def _spec_variant_counts(model: nn.Module, flags: dict) -> dict:
    """call_module counts of the traces a wrong answer may have made: the flags bound by position, or ignored."""
    import inspect

    params = [p for p in inspect.signature(model.forward).parameters.values()][len(model.probe_inputs[0]):]
    out = {}
    positional = _spec_positional(model, flags)
    defaults = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
    for key, variant in (("position", positional), ("defaults", defaults)):
        if variant == flags:
            continue
        try:
            traced = fx.symbolic_trace(model, concrete_args=variant)
        except Exception:
            continue
        out[key] = collections.Counter(n.target for n in traced.graph.nodes if n.op == "call_module")
    return out


GUARD_HINT = "ex04.concrete_args_leaves_guard_each"


def _in_place_calls(graph: list[dict]) -> collections.Counter:
    """call_function and call_method nodes of in-place ops (a name ending in one underscore), by target."""
    return collections.Counter(n["target"] for n in graph if n["op"] in ("call_function", "call_method")
                               and _short(n["target"]).endswith("_") and not _short(n["target"]).endswith("__"))


def _spec_judge(case, ev):
    (model,) = case.make()
    flags = case.kwargs()
    ref = describe_graph(fx.symbolic_trace(model, concrete_args=flags))
    n_tensors = len(model.probe_inputs[0])
    tensor_inputs = [n["target"] for n in ref if n["op"] == "placeholder"][:n_tensors]
    placeholders = [n["target"] for n in ev["graph"] if n["op"] == "placeholder"]
    dropped = [t for t in tensor_inputs if t not in placeholders]
    expect(placeholders[:n_tensors] == tensor_inputs,
           f"the placeholders are {placeholders}; the first {n_tensors} should be the tensor input(s) "
           f"{tensor_inputs}, in order" + (f" ({dropped[0]!r} is gone)" if dropped else ""),
           "ex04.keep_every_tensor_input_placeholder" if dropped else None)
    _lint_ok(ev)
    # the graph first (which layers the flags picked), then running it: the first message names the root cause
    expected = collections.Counter(n["target"] for n in ref if n["op"] == "call_module")
    got = collections.Counter(n["target"] for n in ev["graph"] if n["op"] == "call_module")
    if got != expected:
        variants = {k: c for k, c in _spec_variant_counts(model, flags).items() if c != expected}
        guards = {n["target"].rsplit("_", 1)[0]: n["args"][0] for n in ev["graph"]
                  if n["op"] == "placeholder" and n["args"]}
        positional = _spec_positional(model, flags)
        by_position = any(k in guards and type(guards[k]) is type(v) and guards[k] == v and flags.get(k) != v
                          for k, v in positional.items())
        hint = (ORDER_HINT if variants.get("position") == got and (variants.get("defaults") != got or by_position)
                else
                "ex04.pass_flags_you_are_given"
                if variants.get("defaults") == got and variants.get("position") != got else None)
        target = next(t for t in sorted(set(expected) | set(got)) if got[t] != expected[t])
        raise CheckFailed(f"submodule {target!r} is called {got[target]} time(s) in the graph, expected "
                          f"{expected[target]} with {', '.join(f'{k}={v!r}' for k, v in flags.items())}", hint)
    missing = _in_place_calls(ref) - _in_place_calls(ev["graph"])
    if missing:
        target = sorted(missing)[0]
        raise CheckFailed(f"the graph has {_in_place_calls(ev['graph'])[target]} call(s) of {target}, expected "
                          f"{_in_place_calls(ref)[target]}: an in-place call changes its input even though nothing "
                          f"reads its result, and the model runs it with "
                          f"{', '.join(f'{k}={v!r}' for k, v in flags.items())}", "ex04.keep_every_call_trace_recorded")
    if ev["run_error"]:
        err = ev["run_error"]
        hint = None
        if "has been specialized" in err:
            hint = GUARD_HINT
        elif "missing" in err and "required positional argument" in err:
            hint = "ex04.flag_without_default_stays_required"
        elif "positional argument" in err and "given" in err:
            hint = "ex04.keep_every_tensor_input_placeholder"
        raise CheckFailed(f"calling the returned GraphModule with the {n_tensors} tensor input(s) only raised "
                          f"{err}", hint)
    expect(len(ev["outputs"]) == len(model.probe_inputs), f"{len(ev['outputs'])} outputs, expected "
                                                           f"{len(model.probe_inputs)}")
    with torch.no_grad():
        for inp, out in zip(model.probe_inputs, ev["outputs"]):
            expect_close(out, model(*inp, **flags), "output of gm(*tensors) against model(*tensors, **flags)")
