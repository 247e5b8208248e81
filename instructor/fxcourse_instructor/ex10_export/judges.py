"""The judges of ex10_export: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

import torch

from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import expect, expect_lint
from autograder.checks.ex10_export.models import PROBE
from autograder.checks.ex10_export.evidence import _histogram, _subgraph_histograms, _swap_output


def _dict_diff(got: dict, expected: dict) -> str:
    missing = [k for k in expected if k not in got]
    extra = [k for k in got if k not in expected]
    wrong = [k for k in expected if k in got and got[k] != expected[k]]
    parts = []
    if missing:
        parts.append(f"missing {', '.join(repr(k) for k in missing[:4])}" + (" ..." if len(missing) > 4 else ""))
    if extra:
        parts.append(f"unexpected {', '.join(repr(k) for k in extra[:4])}" + (" ..." if len(extra) > 4 else ""))
    if wrong:
        k = wrong[0]
        parts.append(f"{k!r} is {got[k]!r}, expected {expected[k]!r}")
    return "; ".join(parts)


def _export_judge(case: Case, ev: dict) -> None:
    model, x = case.make()
    expect(ev["inputs"] == 1, f"the program has {ev['inputs']} user inputs, expected 1 (the example input)",
           "export(model, (example_input,), ...): the args of export are a tuple of the inputs")
    want = ["symbolic"] + [int(s) for s in x.shape[1:]]
    shape = ev["shape"]
    if shape is not None and shape != want:
        if shape[0] != "symbolic":
            raise CheckFailed(f"the input placeholder's shape is {tuple(shape)}: dimension 0 is fixed at "
                              f"{shape[0]}, expected a symbolic batch size",
                              "mark dimension 0 dynamic: dynamic_shapes=({0: Dim(\"batch\")},)")
        raise CheckFailed(f"the input placeholder's shape is {tuple(shape)}, expected {tuple(want)}: only "
                          "dimension 0 is dynamic", "only dimension 0, the batch, is dynamic: ({0: Dim(\"batch\")},)")
    expect(ev.get("upper") is None, f"the batch is dynamic, but its range ends at {ev.get('upper')}: the task "
           "asks for a batch without an upper bound",
           "give the batch dimension no upper bound: Dim(\"batch\") without max=")
    with torch.no_grad():
        for probe in getattr(model, PROBE):
            got = ev["outputs"][str(probe.shape[0])]
            if isinstance(got, str):
                upper = ev.get("upper")
                if upper is not None and probe.shape[0] > upper:
                    raise CheckFailed(f"the program's module() on a batch of {probe.shape[0]} raised {got}: the "
                                      f"batch is dynamic, but its range ends at {upper}",
                                      "give the batch dimension no upper bound: Dim(\"batch\") without max= (a "
                                      "range too narrow refuses the batch sizes the caller has)")
                raise CheckFailed(f"the program's module() on a batch of {probe.shape[0]} raised {got}",
                                  "mark dimension 0 dynamic: dynamic_shapes=({0: Dim(\"batch\")},)")
            expected = model(probe)
            expect(isinstance(got, torch.Tensor) and got.shape == expected.shape
                   and torch.allclose(got, expected, rtol=1e-4, atol=1e-5),
                   f"on a batch of {probe.shape[0]} the program's output differs from the model's",
                   "export the model as it is, in the mode it is in" + (
                       " (training here): export freezes the mode it sees, and an eval-mode export, of the model or "
                       "of a copy, normalises with running statistics instead of the batch's" if model.training
                       else ""))


def _histogram_judge(case: Case, got: dict) -> None:
    ep, = case.make()
    expected = _histogram(ep.graph)
    if got == expected:
        return
    bad = [k for k, v in got.items() if type(v) is not int]
    if bad:
        raise CheckFailed(f"the count of {bad[0]!r} is {got[bad[0]]}, expected an int",
                          "count with integers: counts[key] = counts.get(key, 0) + 1")
    names = {n.name for n in ep.graph.nodes if n.op == "call_function"}
    inner: dict = {}   # what the subgraphs of torch.cond (and other higher-order ops) call, counted together
    for sub in ep.graph_module.modules():
        if isinstance(sub, torch.fx.GraphModule) and sub is not ep.graph_module:
            for k, v in _histogram(sub.graph).items():
                inner[k] = inner.get(k, 0) + v
    with_inner = dict(expected)
    for k, v in inner.items():
        with_inner[k] = with_inner.get(k, 0) + v
    if inner and got == with_inner:
        hint = ("count the nodes of ep.graph only: the branches of torch.cond are subgraphs of their own (get_attr "
                "true_graph_0, ...), and their nodes are not nodes of ep.graph")
    elif set(got) == set(expected) and all(type(v) is int for v in got.values()):
        k = next(k for k in expected if got[k] != expected[k])
        hint = (f"the keys are right, the counts are not ({k!r}: {got[k]} for {expected[k]} nodes): add 1 for every "
                "call_function node, counts[key] = counts.get(key, 0) + 1")
    elif any(k in names and k not in expected for k in got):
        hint = "key by str(node.target), the operator overload, not by node.name"
    elif any(k in {n.name for n in ep.graph.nodes if n.op != "call_function"} or k == "output" for k in got):
        hint = "count call_function nodes only: placeholders, get_attr and output are not operators"
    elif any(k.startswith("aten.") and k.count(".") == 1 for k in got):
        hint = ("key by the overload, str(node.target) such as 'aten.linear.default', not by the operator packet "
                "(overloadpacket)")
    elif any(not k.startswith("aten.") for k in expected if k not in got) and all(k.startswith("aten.") for k in got):
        hint = "every call_function node counts, operator.getitem and torch.cond included, not only aten ones"
    elif got == _decomposed_histogram(case):
        hint = "count the graph as it is: run_decompositions() makes another program with other operators"
    else:
        hint = "key by str(node.target), for example 'aten.linear.default'"
    raise CheckFailed(f"the histogram differs: {_dict_diff(got, expected)}", hint)


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
    diff = _dict_diff(got, expected)
    constants = dict(getattr(sig, "inputs_to_lifted_tensor_constants", {}) or {})
    objects = [k for k, v in got.items() if isinstance(v, dict)]
    short = [k for k in got if k in expected and isinstance(got[k], str) and got[k] != expected[k]
             and expected[k].endswith("." + got[k])]
    if objects:
        k = objects[0]
        hint = (f"the value of {k!r} is a {got[k]['type']}: map each placeholder to the qualified NAME of what it "
                f"carries, a str such as {expected.get(k, 'conv.weight')!r}, not to the tensor")
    elif short and set(got) == set(expected):
        k = short[0]
        hint = (f"{k!r} carries {expected[k]!r}: the value is the fully qualified name, with the submodules' path, "
                f"not the attribute's own name {got[k]!r}")
    elif got and set(got) <= set(expected.values()) and set(got.values()) <= set(expected):
        hint = "the keys are placeholder names (p_fc_weight), the values the qualified names (fc.weight)"
    elif any(k in sig.user_inputs for k in got):
        hint = "user inputs carry no parameter or buffer: leave them out (graph_signature.user_inputs)"
    elif any(k in constants for k in got):
        hint = ("a lifted constant (a plain tensor attribute, placeholder c_...) is neither a parameter nor a "
                "buffer: leave it out")
    elif any(k in buffers and buffers[k] not in ep.state_dict for k in expected if k not in got or got[k] != expected[k]):
        hint = ("a non-persistent buffer is a buffer too, though ep.state_dict leaves it out: read the names from "
                "ep.graph_signature.inputs_to_buffers")
    elif set(got) == set(params):
        hint = "buffers too: graph_signature.inputs_to_buffers, next to inputs_to_parameters"
    else:
        hint = ("read the names from ep.graph_signature (inputs_to_parameters, inputs_to_buffers): a placeholder's "
                "name does not say where its dots were, and the state_dict lacks non-persistent buffers")
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
            raise CheckFailed(what, f"leave {k!r} out: its meta[\"val\"] is a {kind}, not one tensor (only nodes "
                                    "whose val is a tensor are in the dict)")
        if "SymInt" in got[k].get("sizes", []):
            raise CheckFailed(what, "a symbolic size is a torch.SymInt: return str(size) for it, and keep static "
                                    "sizes as int")
        raise CheckFailed(what, "make each shape a tuple: tuple(... for s in val.shape)")
    missing = [k for k in expected if k not in got]
    extra = [k for k in got if k not in expected]
    wrong = [k for k in expected if k in got and got[k] != expected[k]]
    constants = set(dict(getattr(ep.graph_signature, "inputs_to_lifted_tensor_constants", {}) or {}))
    if extra and not any(k in nodes for k in extra):
        hint = ("name the nodes of ep.graph and read their node.meta[\"val\"], the tensors export recorded (symbolic "
                "sizes included): do not run the program, nor walk ep.module()'s graph, whose nodes are named "
                "otherwise")
    elif missing and all(k in constants for k in missing):
        hint = ("a lifted constant's placeholder (c_...) has meta[\"val\"] but no tensor_meta: read node.meta[\"val\"] "
                "of every node")
    elif missing and all(expected[k] == () for k in missing):
        hint = "a 0-d tensor is a tensor too: its shape is (), an empty tuple"
    elif missing and all(k in placeholders for k in missing):
        hint = "placeholders carry meta[\"val\"] too: parameters, buffers and the input are nodes with shapes"
    elif extra and all(k in nodes for k in extra):
        hint = ("only nodes whose meta[\"val\"] is a tensor: a node that returns several tensors (a list or "
                "tuple), the output node and get_attr nodes are left out")
    elif missing:
        hint = "read node.meta[\"val\"] of every node (a constant's node has no tensor_meta, but it has val)"
    elif wrong:
        k = wrong[0]
        g, e = got[k], expected[k]
        if len(g) == len(e) and all(isinstance(a, str) and str(b) == a for a, b in zip(g, e)) and g != e:
            hint = "static sizes are ints: keep an int as it is and make only a symbolic size a str"
        elif len(g) == len(e) and any(isinstance(b, str) and not isinstance(a, str) for a, b in zip(g, e)):
            hint = ("a symbolic size is a torch.SymInt: return str(size) for it (int() would fix it to the example's "
                    "value), and read node.meta[\"val\"] instead of running the program")
        else:
            hint = "tuple(val.shape) with each size an int, or str(size) where it is symbolic"
    else:
        hint = "node.meta[\"val\"].shape of every node whose val is a tensor"
    raise CheckFailed(f"the shapes differ: {_dict_diff(got, expected)}", hint)


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
            hint = ("nothing changed in ep.graph: edit the nodes of ep.graph itself (ep.module() makes a copy), "
                    "and return ep")
        elif 0 < left < moved:
            hint = "every call_function node targeting old: do not stop at the first one"
        elif set(got) - set(before) - {str(new)}:
            hint = ("operators the program did not call appeared: swap the targets in ep.graph as it is "
                    "(run_decompositions() makes another program, with other operators)")
        else:
            hint = ("compare node.target == old, the exact overload: other overloads of the operator and other "
                    "operators whose names contain it stay")
        raise CheckFailed(f"after the swap the graph calls {_dict_diff(got, expected)}", hint)
    expect(ev.get("subgraphs", {}) == _subgraph_histograms(ep),
           "a subgraph of the program (a branch of torch.cond) changed as well",
           "swap the nodes of ep.graph only: the branches of torch.cond are subgraphs of their own, with nodes "
           "that are not ep.graph's; leave them as they are")
    expect_lint(ev, "change node.target only; do not add or erase nodes")
    expect(not ev["stale"], "ep.graph_module.code does not match its graph: the generated code is stale",
           "call ep.graph_module.recompile() after changing the targets")
    expect(ev["nodes"] == [[n.op, n.name] for n in ep.graph.nodes],
           "the nodes of the program changed (names or order), expected only targets to change",
           "change node.target in place; keep every node")
    expect(ev["signature"] == [str(s.arg.name) for s in ep.graph_signature.input_specs],
           "the program's graph signature changed", "change node targets only")
    # the numbers: the judge's own swap of a fresh copy, run through module()
    for node in ep.graph.nodes:
        if node.op == "call_function" and node.target == old:
            node.target = new
    ep.graph_module.recompile()
    reference = _swap_output(ep, x)
    got = ev["output"]
    if isinstance(got, str):
        raise CheckFailed(f"the returned program's module() raised {got}",
                          "change node.target only, to an overload that takes the same arguments")
    expect(isinstance(reference, torch.Tensor) and got.shape == reference.shape
           and torch.allclose(got, reference, rtol=1e-5, atol=1e-6),
           "the returned program's module() computes something else than the program with the swap",
           "change node.target of the matching nodes, nothing else")


def _export_raise(case: Case, raised: dict) -> str | None:
    """What a raise of export_dynamic_batch says when dtypes met: the example (or the model) was cast."""
    import re
    if re.search(r"type \((float|double|half)\) and \w+ type \((float|double|half)\) should be the same|"
                 r"must have the same dtype|expected scalar type", str(raised.get("message"))):
        model, x = case.make()
        return (f"export example_input as it is, in its own dtype ({x.dtype}), with the model as it is: cast "
                "neither (no .float() on the example or the model)")
    return None
