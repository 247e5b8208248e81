"""What the checks of ex10_export record of a learner's result, as plain data (runs where learner code runs)."""
from __future__ import annotations

import copy
from typing import Any

import torch
import torch.fx as fx

from autograder.checks.hints import hint_of
from autograder.checks.framework import CheckFailed
from autograder.checks.evidence import lint_error, stale_code
from autograder.checks.ex10_export.models import PROBE


def _expect_program(result: Any, function: str) -> None:
    from torch.export import ExportedProgram
    if not isinstance(result, ExportedProgram):
        raise CheckFailed(f"{function} returned {type(result).__name__}, expected a torch.export.ExportedProgram",
                          "shared.return_value_instead_printing" if result is None else
                          "ex10.return_exportedprogram_itself_ep_module")


def _histogram(graph: fx.Graph) -> dict:
    out: dict = {}
    for n in graph.nodes:
        if n.op == "call_function":
            out[str(n.target)] = out.get(str(n.target), 0) + 1
    return out


def _plain_dict(result: Any, function: str, what: str) -> dict:
    if not isinstance(result, dict):
        raise CheckFailed(f"{function} returned {type(result).__name__}, expected a dict {what}",
                          "shared.return_value_instead_printing" if result is None else
                          hint_of("ex10.build_return_dict", what=what))
    out = {}
    for k, v in result.items():
        if not isinstance(k, str):
            raise CheckFailed(f"{function}: the key {k!r} is a {type(k).__name__}, expected a str",
                              "ex10.use_str_target_node_s")
        out[k] = v
    return out


def _export_evidence(result: Any, args: tuple) -> dict:
    model, x = args
    _expect_program(result, "export_dynamic_batch")
    user = [n for n in result.graph.nodes if n.op == "placeholder"
            and n.name in set(result.graph_signature.user_inputs)]
    shape, upper = None, None
    if len(user) == 1 and isinstance(user[0].meta.get("val"), torch.Tensor):
        sizes = user[0].meta["val"].shape
        shape = [s if isinstance(s, int) else "symbolic" for s in sizes]
        if shape and shape[0] == "symbolic":   # the largest batch the program promises to take, None for no bound
            upper = _upper_bound(result, sizes[0])
    outputs = {}
    # a copy: a program exported in training mode updates batch norm's running statistics when it runs, and
    # module() shares them with the caller's model, which the check compares before and after the call
    runner = copy.deepcopy(result.module())
    for probe in getattr(model, PROBE):
        try:
            with torch.no_grad():
                outputs[str(probe.shape[0])] = runner(probe)
        except Exception as exc:
            outputs[str(probe.shape[0])] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    return {"inputs": len(user), "shape": shape, "upper": upper, "outputs": outputs}


def _upper_bound(ep, size) -> int | None:
    try:
        found = ep.range_constraints.get(size.node.expr)
        upper = found.upper if found is not None else None
        if upper is None or str(upper) in ("int_oo", "oo"):   # torch's integer infinity claims is_finite
            return None
        return int(upper)
    except Exception:   # a range torch describes otherwise: no bound known
        return None


def _histogram_evidence(result: Any, args: tuple) -> dict:
    got = _plain_dict(result, "aten_histogram", "from str(node.target) to a count")
    return {k: v if type(v) is int else repr(v)[:80] for k, v in got.items()}


def _params_evidence(result: Any, args: tuple) -> dict:
    got = _plain_dict(result, "parameter_placeholders", "from placeholder name to qualified name")
    return {k: v if type(v) is str else {"type": type(v).__name__, "repr": repr(v)[:80]} for k, v in got.items()}


def _shapes_evidence(result: Any, args: tuple) -> dict:
    got = _plain_dict(result, "node_shapes", "from node name to shape")
    out = {}
    for k, v in got.items():
        if type(v) is tuple and all(type(s) in (int, str) for s in v):
            out[k] = v
        else:
            sizes = [type(s).__name__ for s in v] if isinstance(v, (tuple, list, torch.Size)) else []
            out[k] = {"type": type(v).__name__, "repr": repr(v)[:80], "sizes": sizes[:8]}
    return out


def _swap_evidence(result: Any, args: tuple) -> dict:
    _expect_program(result, "swap_aten_op")
    ev: dict = {"histogram": _histogram(result.graph), "lint": lint_error(result.graph_module),
                "stale": stale_code(result.graph_module)}
    ev["signature"] = [str(s.arg.name) for s in result.graph_signature.input_specs]
    ev["nodes"] = [[n.op, n.name] for n in result.graph.nodes]
    ev["subgraphs"] = _subgraph_histograms(result)
    ev["output"] = _swap_output(result, getattr(args[0], PROBE))
    return ev


def _subgraph_histograms(ep) -> dict:
    """What each subgraph of the program (the branches of torch.cond, ...) calls, by its qualified name."""
    return {name: _histogram(m.graph) for name, m in ep.graph_module.named_modules()
            if name and isinstance(m, fx.GraphModule)}


def _swap_output(ep, x) -> Any:
    try:
        with torch.no_grad():
            return ep.module()(x)
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
