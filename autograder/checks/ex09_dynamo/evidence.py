"""What the checks of ex09_dynamo record of a learner's result, as plain data (runs where learner code runs)."""
from __future__ import annotations

from typing import Any

import torch
import torch.fx as fx

from autograder.checks.hints import hint_of
from autograder.checks.framework import CheckFailed
from autograder.checks.evidence import qualified
from autograder.checks.ex09_dynamo.models import (
    GRAD, PROBE, SETTINGS_HINT, STEP, _reset, _settings_left_changed, weight_step
)


def _calls(gm: fx.GraphModule) -> list[str]:
    return [f"{n.op} {qualified(n.target)}" for n in gm.graph.nodes if n.op in ("call_function", "call_method",
                                                                                 "call_module")]


def _graph_summary(gm: fx.GraphModule) -> dict:
    return {"placeholders": sum(n.op == "placeholder" for n in gm.graph.nodes), "calls": _calls(gm)}


def _settings_kept(function: str) -> None:
    changed = _settings_left_changed()
    if changed:
        raise CheckFailed(f"{function} left dynamo's settings changed: {changed}", SETTINGS_HINT)


def _capture_evidence(result: Any, args: tuple) -> dict:
    _reset()
    _settings_kept("capture_graphs")
    if not isinstance(result, (list, tuple)):
        raise CheckFailed(f"capture_graphs returned {type(result).__name__}, expected a list of fx.GraphModule",
                          "shared.return_value_instead_printing" if result is None else
                          "ex09.collect_every_graph_backend_receives")
    items = []
    for i, g in enumerate(result):
        if isinstance(g, fx.GraphModule):
            # dynamo's own graphs carry the example values it traced with; a retrace or a rebuilt graph does not
            items.append({**_graph_summary(g), "dynamo_meta": any("example_value" in n.meta for n in g.graph.nodes)})
        else:
            items.append({"type": type(g).__name__})
    fn = args[0] if args else None
    # the mode the caller's model was left in (a case's model in training mode must still be in it)
    training = bool(fn.training) if isinstance(fn, torch.nn.Module) else None
    # which of the caller's inputs require grad after the call (the answer must not change them)
    inputs_grad = [bool(t.requires_grad) for t in args[1:] if isinstance(t, torch.Tensor)]
    return {"graphs": items, "training": training, "inputs_grad": inputs_grad}


def _breaks_evidence(result: Any, args: tuple) -> Any:
    _reset()
    _settings_kept("graph_break_count")
    if type(result) is not int:
        number = isinstance(result, (float, bool)) or (isinstance(result, torch.Tensor) and result.numel() == 1) \
            or type(result).__name__.startswith(("int", "float", "uint"))   # numpy's int64, float32, ...
        raise CheckFailed(f"graph_break_count returned {type(result).__name__} {result!r:.80}, expected an int",
                          "shared.return_value_instead_printing" if result is None else
                          hint_of("ex09.count_python_int_not_return", name=type(result).__name__) if number
                          else "ex09.return_number_itself_torch_dynamo")
    return result


def _pass_evidence(result: Any, args: tuple) -> dict:
    model, pass_fn = args
    if not callable(result):
        _reset()
        raise CheckFailed(f"compile_with_pass returned {type(result).__name__}, expected a callable (what "
                          "torch.compile returns)",
                          "shared.return_value_instead_printing" if result is None else
                          "ex09.return_torch_compile_model_backend")
    outputs: Any = []
    needs_grad: list[bool] = []
    step, grad = getattr(model, STEP, False), getattr(model, GRAD, False)
    steps = 0
    try:
        with torch.set_grad_enabled(grad):   # the caller's grad mode: grad enabled where the case says so
            for i, x in enumerate(getattr(model, PROBE)):
                if i and step:
                    weight_step(model)   # the caller updates its weights between two calls
                    steps += 1
                out = result(x)
                needs_grad.append(bool(isinstance(out, torch.Tensor) and out.requires_grad))
                outputs.append(out.detach() if isinstance(out, torch.Tensor) else out)
    except Exception as exc:
        outputs = f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        _reset()
        if steps % 2:
            weight_step(model)   # two steps give the weights back: the model's as the case handed it over
    _settings_kept("compile_with_pass")
    return {"outputs": outputs, "calls": int(pass_fn.calls), "aten_graphs": int(pass_fn.aten_graphs),
            "at_run_time": int(pass_fn.at_run_time),
            "is_model": result is model, "wraps_model": getattr(result, "_orig_mod", None) is model,
            "returned": type(result).__name__, "wraps": type(getattr(result, "_orig_mod", None)).__name__,
            "requires_grad": needs_grad,
            "dtype": str(next(model.parameters()).dtype)}
