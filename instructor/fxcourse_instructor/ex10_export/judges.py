"""The judges of ex10_export: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

import torch

from autograder.checks.hints import hint_of
from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import expect, expect_lint
from autograder.checks.ex10_export.models import PROBE
from autograder.checks.ex10_export.evidence import _histogram, _subgraph_histograms, _swap_output
from fxcourse_instructor.diffs import dict_diff


def _export_judge(case: Case, ev: dict) -> None:
    model, x = case.make()
    expect(ev["inputs"] == 1, f"the program has {ev['inputs']} user inputs, expected 1 (the example input)",
           "ex10.export_model_example_input_args")
    want = ["symbolic"] + [int(s) for s in x.shape[1:]]
    shape = ev["shape"]
    if shape is not None and shape != want:
        if shape[0] != "symbolic":
            raise CheckFailed(f"the input placeholder's shape is {tuple(shape)}: dimension 0 is fixed at "
                              f"{shape[0]}, expected a symbolic batch size",
                              "ex10.mark_dimension_0_dynamic_dynamic")
        raise CheckFailed(f"the input placeholder's shape is {tuple(shape)}, expected {tuple(want)}: only "
                          "dimension 0 is dynamic", "ex10.only_dimension_0_batch_dynamic")
    expect(ev.get("upper") is None, f"the batch is dynamic, but its range ends at {ev.get('upper')}: the task "
           "asks for a batch without an upper bound",
           "ex10.give_batch_dimension_no_upper")
    with torch.no_grad():
        for probe in getattr(model, PROBE):
            got = ev["outputs"][str(probe.shape[0])]
            if isinstance(got, str):
                upper = ev.get("upper")
                if upper is not None and probe.shape[0] > upper:
                    raise CheckFailed(f"the program's module() on a batch of {probe.shape[0]} raised {got}: the "
                                      f"batch is dynamic, but its range ends at {upper}",
                                      "ex10.give_batch_dimension_no_upper_2")
                raise CheckFailed(f"the program's module() on a batch of {probe.shape[0]} raised {got}",
                                  "ex10.mark_dimension_0_dynamic_dynamic")
            expected = model(probe)
            expect(isinstance(got, torch.Tensor) and got.shape == expected.shape
                   and torch.allclose(got, expected, rtol=1e-4, atol=1e-5),
                   f"on a batch of {probe.shape[0]} the program's output differs from the model's",
                   ("ex10.export_model_mode_training_here" if model.training else "ex10.export_model_mode"))


def _dead_targets(ep) -> set[str]:
    """str(target) of the call_function nodes of ep.graph whose values nothing reads (export keeps them)."""
    return {str(n.target) for n in ep.graph.nodes if n.op == "call_function" and not n.users}


def _histogram_judge(case: Case, got: dict) -> None:
    ep, = case.make()
    expected = _histogram(ep.graph)
    if got == expected:
        return
    bad = [k for k, v in got.items() if type(v) is not int]
    if bad:
        raise CheckFailed(f"the count of {bad[0]!r} is {got[bad[0]]}, expected an int",
                          "ex10.count_integers_counts_key_counts")
    names = {n.name for n in ep.graph.nodes if n.op == "call_function"}
    inner: dict = {}   # what the subgraphs of torch.cond (and other higher-order ops) call, counted together
    for sub in ep.graph_module.modules():
        if isinstance(sub, torch.fx.GraphModule) and sub is not ep.graph_module:
            for k, v in _histogram(sub.graph).items():
                inner[k] = inner.get(k, 0) + v
    with_inner = dict(expected)
    for k, v in inner.items():
        with_inner[k] = with_inner.get(k, 0) + v
    fewer = [k for k in expected if got.get(k, 0) < expected[k]]
    if inner and got == with_inner:
        hint = "ex10.count_nodes_ep_graph_only"
    elif fewer and set(fewer) <= _dead_targets(ep) and set(got) <= set(expected):
        hint = "ex10.dead_nodes_are_nodes"
    elif set(got) == set(expected) and all(type(v) is int for v in got.values()):
        k = next(k for k in expected if got[k] != expected[k])
        hint = hint_of("ex10.keys_are_right_counts_are", k=k, got=got[k], expected=expected[k])
    elif any(k in names and k not in expected for k in got):
        hint = "ex10.key_str_node_target_operator"
    elif any(k in {n.name for n in ep.graph.nodes if n.op != "call_function"} or k == "output" for k in got):
        hint = "ex10.count_call_function_nodes_only"
    elif any(k.startswith("aten.") and k.count(".") == 1 for k in got):
        hint = "ex10.key_overload_str_node_target"
    elif namesakes := [k for k in expected if k not in got and not k.startswith("aten.")
                       and "aten." + k.split(".", 1)[-1] in got]:
        k = namesakes[0]
        hint = hint_of("ex10.key_names_operator_s_own", k=k, aten="aten." + k.split(".", 1)[-1])
    elif any(not k.startswith("aten.") for k in expected if k not in got) and all(k.startswith("aten.") for k in got):
        hint = "ex10.every_call_function_node_counts"
    elif got == _decomposed_histogram(case):
        hint = "ex10.count_graph_run_decompositions_makes"
    else:
        hint = "ex10.key_str_node_target_example"
    raise CheckFailed(f"the histogram differs: {dict_diff(got, expected)}", hint)


def _decomposed_histogram(case: Case) -> dict:
    ep, = case.make()
    return _histogram(ep.run_decompositions().graph)


def _params_judge(case: Case, got: dict) -> None:
    ep, = case.make()
    sig = ep.graph_signature
    params, buffers = dict(sig.inputs_to_parameters), dict(sig.inputs_to_buffers)
    expected = {**params, **buffers}
    if got == expected:
        return
    diff = dict_diff(got, expected)
    constants = dict(getattr(sig, "inputs_to_lifted_tensor_constants", {}) or {})
    objects = [k for k, v in got.items() if isinstance(v, dict)]
    short = [k for k in got if k in expected and isinstance(got[k], str) and got[k] != expected[k]
             and expected[k].endswith("." + got[k])]
    if objects:
        k = objects[0]
        hint = hint_of("ex10.value_map_each_placeholder_qualified", k=k, type=got[k]['type'],
                       example=expected.get(k, 'conv.weight'))
    elif short and set(got) == set(expected):
        k = short[0]
        hint = hint_of("ex10.carries_value_fully_qualified_name", k=k, got=expected[k], own=got[k])
    elif got and set(got) <= set(expected.values()) and set(got.values()) <= set(expected):
        hint = "ex10.keys_are_placeholder_names_p"
    elif any(k in sig.user_inputs for k in got):
        hint = "ex10.user_inputs_carry_no_parameter"
    elif any(k in constants for k in got):
        hint = "ex10.lifted_constant_plain_tensor_attribute"
    elif any(k in buffers and buffers[k] not in ep.state_dict for k in expected if k not in got or got[k] != expected[k]):
        hint = "ex10.non_persistent_buffer_buffer_too"
    elif set(got) == set(params):
        hint = "ex10.buffers_too_graph_signature_inputs"
    else:
        hint = "ex10.read_names_from_ep_graph"
    raise CheckFailed(f"the mapping differs: {diff}", hint)


def _reference_shapes(ep) -> dict:
    out = {}
    for n in ep.graph.nodes:
        val = n.meta.get("val")
        if isinstance(val, torch.Tensor):
            out[n.name] = tuple(s if isinstance(s, int) else str(s) for s in val.shape)
    return out


def _shapes_judge(case: Case, got: dict) -> None:
    ep, = case.make()
    expected = _reference_shapes(ep)
    if got == expected:
        return
    placeholders = {n.name for n in ep.graph.nodes if n.op == "placeholder"}
    nodes = {n.name: n for n in ep.graph.nodes}
    bad = [k for k, v in got.items() if isinstance(v, dict)]
    if bad:
        k = bad[0]
        what = f"the shape of {k!r} is a {got[k]['type']} ({got[k]['repr']}), expected a tuple of int and str"
        if k not in expected and k in nodes:
            kind = type(nodes[k].meta.get("val")).__name__
            raise CheckFailed(what, hint_of("ex10.leave_out_meta_val_not", k=k, kind=kind))
        if "SymInt" in got[k].get("sizes", []):
            raise CheckFailed(what, "ex10.symbolic_size_torch_symint_return_2")
        raise CheckFailed(what, "ex10.make_each_shape_tuple_tuple")
    missing = [k for k in expected if k not in got]
    extra = [k for k in got if k not in expected]
    wrong = [k for k in expected if k in got and got[k] != expected[k]]
    constants = set(dict(getattr(ep.graph_signature, "inputs_to_lifted_tensor_constants", {}) or {}))
    if extra and not any(k in nodes for k in extra):
        hint = "ex10.name_nodes_ep_graph_read"
    elif missing and all(k in nodes and not nodes[k].users and nodes[k].op != "placeholder" for k in missing):
        hint = "ex10.dead_nodes_are_nodes"
    elif missing and all(k in constants for k in missing):
        hint = "ex10.lifted_constant_s_placeholder_c"
    elif missing and all(expected[k] == () for k in missing):
        hint = "ex10.n0_d_tensor_tensor_too"
    elif missing and all(k in placeholders for k in missing):
        hint = "ex10.placeholders_carry_meta_val_too"
    elif extra and all(k in nodes for k in extra):
        hint = "ex10.only_nodes_whose_meta_val"
    elif missing:
        hint = "ex10.read_node_meta_val_every"
    elif wrong:
        k = wrong[0]
        g, e = got[k], expected[k]
        if len(g) == len(e) and all(isinstance(a, str) and str(b) == a for a, b in zip(g, e)) and g != e:
            hint = "ex10.static_sizes_are_ints_keep"
        elif len(g) == len(e) and any(isinstance(b, str) and not isinstance(a, str) for a, b in zip(g, e)):
            hint = "ex10.symbolic_size_torch_symint_return"
        else:
            hint = "ex10.tuple_val_shape_each_size"
    else:
        hint = "ex10.node_meta_val_shape_every"
    raise CheckFailed(f"the shapes differ: {dict_diff(got, expected)}", hint)


def _swap_judge(case: Case, ev: dict) -> None:
    ep, old, new = case.make()
    x = getattr(ep, PROBE)
    before = _histogram(ep.graph)
    expected = dict(before)
    moved = expected.pop(str(old), 0)
    if moved:
        expected[str(new)] = expected.get(str(new), 0) + moved
    got = ev["histogram"]
    if got != expected:
        left = got.get(str(old), 0)
        if left == moved and moved and got == before:
            hint = "ex10.nothing_changed_ep_graph_edit"
        elif 0 < left < moved:
            hint = "ex10.every_call_function_node_targeting"
        elif (fewer := [k for k in expected if got.get(k, 0) < expected[k]]) and set(fewer) <= _dead_targets(ep):
            hint = "ex10.dead_nodes_are_nodes"
        elif set(got) - set(before) - {str(new)}:
            hint = "ex10.operators_program_did_not_call"
        elif namesakes := [k for k in before if k != str(old) and got.get(k, 0) < before[k]
                           and k.split(".")[-2:] == str(old).split(".")[-2:]]:
            hint = hint_of("ex10.same_name_another_namespace_stays", k=namesakes[0], old=str(old))
        else:
            hint = "ex10.compare_node_target_old_exact"
        raise CheckFailed(f"after the swap the graph calls {dict_diff(got, expected)}", hint)
    expect(ev.get("subgraphs", {}) == _subgraph_histograms(ep),
           "a subgraph of the program (a branch of torch.cond) changed as well",
           "ex10.swap_nodes_ep_graph_only")
    expect_lint(ev, "ex10.change_node_target_only_do")
    expect(not ev["stale"], "ep.graph_module.code does not match its graph: the generated code is stale",
           "ex10.call_ep_graph_module_recompile")
    expect(ev["nodes"] == [[n.op, n.name] for n in ep.graph.nodes],
           "the nodes of the program changed (names or order), expected only targets to change",
           "ex10.change_node_target_place_keep")
    expect(ev["signature"] == [str(s.arg.name) for s in ep.graph_signature.input_specs],
           "the program's graph signature changed", "ex10.change_node_targets_only")
    # the numbers: the judge's own swap of a fresh copy, run through module()
    for node in ep.graph.nodes:
        if node.op == "call_function" and node.target == old:
            node.target = new
    ep.graph_module.recompile()
    reference = _swap_output(ep, x)
    got = ev["output"]
    if isinstance(got, str):
        raise CheckFailed(f"the returned program's module() raised {got}",
                          "ex10.change_node_target_only_overload")
    expect(isinstance(reference, torch.Tensor) and got.shape == reference.shape
           and torch.allclose(got, reference, rtol=1e-5, atol=1e-6),
           "the returned program's module() computes something else than the program with the swap",
           "ex10.change_node_target_matching_nodes")


def _export_raise(case: Case, raised: dict) -> str | None:
    """What a raise of export_dynamic_batch says when dtypes met: the example (or the model) was cast."""
    import re
    if re.search(r"type \((float|double|half)\) and \w+ type \((float|double|half)\) should be the same|"
                 r"must have the same dtype|expected scalar type", str(raised.get("message"))):
        model, x = case.make()
        return hint_of("ex10.export_example_input_own_dtype", dtype=x.dtype)
    return None
