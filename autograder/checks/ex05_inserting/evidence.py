"""What the checks of ex05_inserting record of a learner's result, as plain data (runs where learner code runs)."""
from __future__ import annotations

import torch
import torch.fx as fx

from autograder.checks.framework import CheckFailed
from autograder.checks.evidence import describe_graph, expect_type, flat_outputs, lint_error, printed
from autograder.checks.evidence import stale_code as _stale


def _inputs_of(args: tuple) -> tuple:
    return getattr(args[0], "example_inputs", ())


def _run(gm: fx.GraphModule, inputs: tuple) -> dict:
    """Outputs of `gm` on `inputs` (as a list of tensors), or the error it raised, as plain data."""
    try:
        with torch.no_grad():
            out = gm(*inputs)
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:400]}
    return {"outputs": [t.detach().clone() if isinstance(t, torch.Tensor) else t for t in flat_outputs(out)]}


def _names_made(graph: fx.Graph) -> list[str]:
    """Every name the graph has handed out, present or not: a node created and later erased leaves its name
    behind in the graph's namespace (read defensively: the namespace is torch.fx's own)."""
    used = getattr(getattr(graph, "_graph_namespace", None), "_used_names", None)
    return sorted(str(n) for n in used) if isinstance(used, (set, frozenset, dict)) else []


def _pass_evidence(result, args, function: str) -> dict:
    expect_type(result, fx.GraphModule, function, "a torch.fx.GraphModule")
    given = args[0] if args and isinstance(args[0], fx.GraphModule) else None
    return {
        "graph": describe_graph(result),
        "names_made": _names_made(result.graph),
        "same_gm": result is given,
        "given_nodes": [n.name for n in given.graph.nodes] if given is not None else [],
        "code": result.code,
        "stale": _stale(result),
        "lint": lint_error(result),
        "run": _run(result, _inputs_of(args)),
        "modules": {name: f"{type(m).__module__}.{type(m).__qualname__}"
                    for name, m in result.named_modules() if name},
    }


def _insert_evidence(result, args):
    return _pass_evidence(result, args, "insert_after")


def _drop_evidence(result, args):
    return _pass_evidence(result, args, "remove_dropout")


def _shape_evidence(result, args):
    expect_type(result, dict, "record_shapes", "a dict from node name to shape tuple")
    shapes, kinds = {}, {}
    for key, value in result.items():
        if not isinstance(key, str):
            if isinstance(key, fx.Node):
                hint = "ex05.key_dict_node_name_str"
            elif callable(key):
                hint = "ex05.key_dict_node_name_call"
            else:
                hint = "ex05.key_dict_node_name_str_2"
            raise CheckFailed(f"a key is {type(key).__name__} {repr(key)[:80]}, expected a node name (str)", hint)
        kinds[key] = type(value).__name__
        if isinstance(value, tuple) and all(isinstance(d, int) and not isinstance(d, bool) for d in value):
            shapes[key] = [int(d) for d in value]
        elif isinstance(value, list) and all(isinstance(d, int) for d in value):
            shapes[key] = [int(d) for d in value]
        else:
            shapes[key] = None
    return {"shapes": shapes, "kinds": kinds}


def _flops_evidence(result, args):
    if isinstance(result, bool) or not isinstance(result, int):
        raise CheckFailed(f"returned {type(result).__name__} {repr(result)[:80]}, expected an int",
                          ("ex05.return_total_instead_printing" if printed() else
                           "ex05.return_total_function_ended_without")
                          if result is None else
                          "ex05.flops_are_whole_number_sum")
    return int(result)
