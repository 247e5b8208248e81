"""What the checks of ex11_pt2e record of a learner's result, as plain data (runs where learner code runs)."""
from __future__ import annotations

from collections import Counter
from typing import Any

import torch
import torch.fx as fx
import torch.nn as nn

from autograder.checks.randmodels import manual_seed
from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import expect_type, qualified
from autograder.checks.ex11_pt2e.models import _EXPORTED_TRAINING_ATTR, FakeQuantizeBase, ObserverBase
from autograder.checks.ex11_pt2e.cases import _prepare_ref


def _qual(t: type) -> str:
    return f"{t.__module__}.{t.__qualname__}"


def _run(gm: nn.Module, inputs: tuple, seed: int = 0) -> Any:
    """Outputs of gm on inputs (random ops seeded), as a float tensor; a string says why it could not run.

    Call it last when describing a result: a prepared model updates its fake-quant statistics on every run.
    """
    try:
        manual_seed(seed)
        with torch.no_grad():
            out = gm(*inputs)
        if isinstance(out, (tuple, list)) and len(out) == 1:
            out = out[0]
        if not isinstance(out, torch.Tensor):
            return f"returned {type(out).__name__}, not a tensor"
        return out.detach().float()
    except Exception as exc:  # evidence, not a crash
        return f"{type(exc).__name__}: {str(exc)[:300]}"


def _module_of(gm: fx.GraphModule, node: fx.Node) -> Any:
    try:
        return gm.get_submodule(node.target)
    except Exception:
        return None


def _reads(node: fx.Node) -> str:
    """What a fake-quant node rounds, in words: 'weight fc1.weight', 'input x', 'output of relu'."""
    if not node.args or not isinstance(node.args[0], fx.Node):
        return "nothing"
    src = node.args[0]
    if src.op == "get_attr":
        return f"the weight {src.target}"
    if src.op == "placeholder":
        return f"the input {src.name}"
    return f"the output of {src.name} ({_text(src.target)})"


def _fq_row(gm: fx.GraphModule, node: fx.Node) -> dict:
    mod = _module_of(gm, node)
    row: dict = {"node": node.name, "reads": _reads(node), "class": _qual(type(mod))}
    for attr in ("dtype", "quant_min", "quant_max", "qscheme", "ch_axis"):
        v = getattr(mod, attr, None)
        row[attr] = v if isinstance(v, (int, type(None))) and not isinstance(v, bool) else str(v)
    row["seen"] = _has_seen_data(mod)
    return row


def _has_seen_data(mod: Any) -> bool:
    """Whether a fake-quant's observer holds statistics: a fresh one has min_val inf (per tensor) or empty (per
    channel), and every forward pass of the prepared model fills it."""
    low = getattr(getattr(mod, "activation_post_process", None), "min_val", None)
    return isinstance(low, torch.Tensor) and low.numel() > 0 and bool(torch.isfinite(low).all())


def _prepared_for_qat(gm: fx.GraphModule) -> bool | None:
    """What torchao's prepare recorded in the graph module's meta: True after prepare_qat_pt2e, False after
    prepare_pt2e, None when neither prepared it."""
    attrs = getattr(gm, "meta", {}).get("_observed_graph_module_attrs")
    flag = getattr(attrs, "is_qat", None)
    return flag if isinstance(flag, bool) else None


def _text(target: Any) -> str:
    """A call_function target as the learner sees it: str() of an ATen overload ('aten.linear.default',
    'quantized_decomposed.quantize_per_tensor.default'), the qualified name of anything else."""
    return str(target) if isinstance(target, torch._ops.OpOverload) else qualified(target)


def _ops(gm: fx.GraphModule) -> dict:
    """call_function targets and their count; shape bookkeeping (sym_size and the like) left out."""
    counts = Counter(_text(n.target) for n in gm.graph.nodes if n.op == "call_function")
    return {k: v for k, v in counts.items() if "sym_" not in k and not k.startswith("_operator.")}


def _dropouts(gm: fx.GraphModule) -> list[list]:
    """[node name, train flag] of every aten.dropout node."""
    return [[n.name, bool(n.args[2]) if len(n.args) > 2 else bool(n.kwargs.get("train", False))]
            for n in gm.graph.nodes if n.op == "call_function" and "dropout" in _text(n.target)]


def _prep_evidence(result: Any, args: tuple) -> dict:
    expect_type(result, fx.GraphModule, "prepare_pt2e_qat", "a torch.fx.GraphModule (what prepare_qat_pt2e returns)")
    rows, observers, others = [], [], []
    for node in result.graph.nodes:
        if node.op != "call_module":
            continue
        mod = _module_of(result, node)
        if isinstance(mod, FakeQuantizeBase):
            rows.append(_fq_row(result, node))
        elif isinstance(mod, ObserverBase) or isinstance(mod, torch.ao.quantization.ObserverBase):
            observers.append([node.name, _qual(type(mod))])
        elif not type(mod).__name__ == "GuardsFn":
            others.append([node.name, _qual(type(mod))])
    return {"fake_quants": rows, "observers": observers, "modules": others, "ops": _ops(result),
            "dropouts": _dropouts(result), "is_qat": _prepared_for_qat(result),
            "moved_to_eval": getattr(result, _EXPORTED_TRAINING_ATTR, True) is False, "outputs": _run(result, args[1])}


def _count_evidence(result: Any, args: tuple) -> int:
    if isinstance(result, bool) or not isinstance(result, int):
        raise CheckFailed(f"returned {type(result).__name__} {str(result)[:80]}, expected an int",
                          "ex11.return_number_nodes_int_len")
    return result


def _state(model: nn.Module) -> dict:
    return {"params": {n: p.detach().clone() for n, p in model.named_parameters()},
            "buffers": {n: b.detach().clone() for n, b in model.named_buffers()}}   # the observers' switches too


def _ft_evidence(result: Any, args: tuple) -> dict:
    if result is None:
        raise CheckFailed("pt2e_finetune returned None, expected the prepared model",
                          "ex11.return_prepared_same_object_trained")
    return {"same": result is args[0], "dropouts": _dropouts(args[0]), **_state(args[0])}


def _qdq_evidence(result: Any, args: tuple) -> dict:
    expect_type(result, fx.GraphModule, "to_qdq", "a torch.fx.GraphModule (what convert_pt2e returns)")
    left = [n.name for n in result.graph.nodes if n.op == "call_module"
            and isinstance(_module_of(result, n), (FakeQuantizeBase, ObserverBase))]
    x = getattr(args[0], "input_for_checks", None)
    ev = {"left": left[:5], "ops": _ops(result), "dropouts": _dropouts(result), "same": result is args[0]}
    ev["outputs"] = None if x is None else [_run(result, (x,), seed=1), _run(result, (x,), seed=2)]
    return ev


def _qdq_count_evidence(result: Any, args: tuple) -> list:
    if isinstance(result, list):
        raise CheckFailed(f"returned a list {str(result)[:80]}, expected a tuple of two ints",
                          "ex11.return_tuple_signature_says_return")
    if not isinstance(result, (tuple, list)) or len(result) != 2 or \
            any(isinstance(v, bool) or not isinstance(v, int) for v in result):
        raise CheckFailed(f"returned {type(result).__name__} {str(result)[:80]}, expected a tuple of two ints",
                          "ex11.return_number_quantize_nodes_number")
    return [int(result[0]), int(result[1])]
