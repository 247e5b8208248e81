"""What the checks of ex13_inductor_passes record of a learner's result, as plain data (runs where learner code
runs)."""
from __future__ import annotations

import weakref
from typing import Any

import torch
import torch.fx as fx

from autograder.checks.evidence import lint_error, qualified, stale_code
from autograder.checks.framework import CheckFailed
from autograder.checks.ex13_inductor_passes.cases import (GRAPH, PROBE, UPDATE, build_nothing, changed_settings,
                                                          config_state, restore_config)
from autograder.checks.ex13_inductor_passes.models import aten_graph, change_weight, run_graph

# The passes make_pattern_pass returned in this process, held weakly: an answer that hands out one pass again
# (kept in a cache) keeps it alive, and a pass nobody keeps is gone and matches nothing.
_RETURNED: list[weakref.ref] = []
# Their pattern tables, held: a copy of a kept pass (copy.copy) is another object that shares its table.
_TABLES: list = []


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:400]}"


def targets(gm: fx.GraphModule | fx.Graph) -> list[str]:
    """The targets of the call_function nodes the output depends on, in graph order (dead nodes, which
    eliminate_dead_code may remove or not, are left out)."""
    graph = gm if isinstance(gm, fx.Graph) else gm.graph
    live, todo = set(), [n for n in graph.nodes if n.op == "output"]
    while todo:
        node = todo.pop()
        if node not in live:
            live.add(node)
            todo.extend(node.all_input_nodes)
    return [qualified(n.target) for n in graph.nodes if n.op == "call_function" and n in live]


def applied(pattern_pass: Any, graph: str, seed: int = 0) -> dict:
    """A pass applied to a fresh ATen graph: its count, the targets after it, the graph's output."""
    gm, inputs = aten_graph(graph, seed)
    try:
        count = pattern_pass.apply(gm)
    except Exception as exc:
        return {"graph": graph, "error": _error(exc)}
    gm.recompile()
    try:
        out = run_graph(gm, inputs)
    except Exception as exc:
        out = _error(exc)
    return {"graph": graph, "count": int(count) if isinstance(count, int) else repr(count)[:80],
            "targets": targets(gm), "output": out}


def _make_evidence(result: Any, args: tuple) -> dict:
    from torch._inductor.pattern_matcher import PatternMatcherPass
    if not isinstance(result, PatternMatcherPass):
        raise CheckFailed(f"make_pattern_pass returned {type(result).__name__}, expected a PatternMatcherPass",
                          "ex13.return_pass_function_ended_without" if result is None else
                          "ex13.return_pass_itself_register_replacement")
    from torch._inductor.fx_passes import post_grad
    inductors = [p for p in getattr(post_grad, "pass_patterns", [])]
    returned_before = any(ref() is result for ref in _RETURNED)
    _RETURNED[:] = [ref for ref in _RETURNED if ref() is not None] + [weakref.ref(result)]
    shared_table = any(result.patterns is table for table in _TABLES)
    _TABLES.append(result.patterns)
    return {"entries": sum(len(v) for v in result.patterns.values()), "returned_before": returned_before,
            "shared_table": shared_table, "inductor_s_own": any(result is p for p in inductors),
            "inputs_changed": [i for i, t in enumerate(args[2]) if isinstance(t, torch.Tensor) and t.requires_grad],
            "applied": [applied(result, g) for g in getattr(args[2], "graphs", ())]}


def _apply_evidence(result: Any, args: tuple) -> dict:
    gm = args[0]
    if type(result) is not int:
        raise CheckFailed(f"apply_pattern_pass returned {type(result).__name__}"
                          f"{' ' + repr(result)[:40] if type(result) is bool else ''}, expected an int",
                          "ex13.return_number_replacements_int_pattern"
                          if result is not None else
                          "ex13.return_number_replacements_function_ended")
    try:
        out = run_graph(gm, getattr(gm, PROBE))
    except Exception as exc:
        out = _error(exc)
    held = getattr(gm, GRAPH, gm.graph)   # the graph gm held when it was handed over
    return {"count": result, "targets": targets(gm), "lint": lint_error(gm), "stale": stale_code(gm), "output": out,
            "own_graph": gm.graph is held, "held_targets": targets(held)}


def _output(out: Any) -> Any:
    return out.detach().clone() if isinstance(out, torch.Tensor) else f"returned {type(out).__name__}, not a tensor"


def _compile_evidence(result: Any, args: tuple) -> dict:
    from torch._dynamo.utils import counters
    model, pattern_pass = args
    leaked = [key for key, on in config_state() if on and [key, on] not in pattern_pass.config_before]
    changed = [key for key in changed_settings(pattern_pass.values_before) if key not in leaked]
    if not callable(result):
        restore_config()
        build_nothing(False)
        raise CheckFailed(f"compile_with_post_grad_pass returned {type(result).__name__}, expected a callable",
                          "ex13.return_what_torch_compile_returns" if result is not None else
                          "ex13.return_compiled_model_function_ended")
    before = sum(counters["inductor"].values())
    outputs = []
    try:
        inputs, weight = getattr(model, PROBE), getattr(model, UPDATE, "")
        with torch.no_grad():
            for x in inputs:
                outputs.append(_output(result(x)))
            if weight:   # the caller changes a weight in place and calls again; the weight is put back after
                saved = model.get_parameter(weight).detach().clone()
                change_weight(model, weight)
                try:
                    outputs.append(_output(result(inputs[0])))
                finally:
                    model.get_parameter(weight).copy_(saved)
    except Exception as exc:
        outputs.append(_error(exc))
    finally:   # an answer that set inductor's config for good leaves it set for no later case
        restore_config()
        build_nothing(False)
        torch._dynamo.reset()
    return {"leaked": leaked, "changed": changed, "outputs": outputs, "runs": list(pattern_pass.runs),
            "inductor": sum(counters["inductor"].values()) > before}
