"""What the checks of ex07_qat record of a learner's result, as plain data (runs where learner code runs)."""
from __future__ import annotations

import copy
from typing import Any

import torch
import torch.fx as fx
import torch.nn as nn
from torch.ao.quantization import FakeQuantizeBase, ObserverBase, disable_observer
from torch.ao.quantization.quantize_fx import convert_fx

from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import describe_graph, expect_type
from autograder.checks.ex07_qat.cases import _prepare_ref


def _qual(t: type) -> str:
    return f"{t.__module__}.{t.__qualname__}"


def _fq_config(m: nn.Module) -> dict:
    out: dict = {"class": _qual(type(m))}
    for attr in ("dtype", "quant_min", "quant_max", "qscheme", "ch_axis"):
        v = getattr(m, attr, None)
        out[attr] = v if isinstance(v, (int, type(None))) and not isinstance(v, bool) else str(v)
    return out


def _module_rows(gm: fx.GraphModule) -> list[dict]:
    """One row per call_module node: the module's type, mode, and fake-quant configuration."""
    rows = []
    for node in gm.graph.nodes:
        if node.op != "call_module":
            continue
        try:
            mod = gm.get_submodule(node.target)
        except AttributeError:
            rows.append({"node": node.name, "target": str(node.target), "type": None})
            continue
        wfq = getattr(mod, "weight_fake_quant", None)
        rows.append({
            "node": node.name, "target": str(node.target), "type": _qual(type(mod)), "training": mod.training,
            "fake_quant": isinstance(mod, FakeQuantizeBase), "observer": isinstance(mod, ObserverBase),
            "config": _fq_config(mod) if isinstance(mod, FakeQuantizeBase) else None,
            "weight_fake_quant": _fq_config(wfq) if isinstance(wfq, FakeQuantizeBase) else None,
        })
    return rows


def _run(gm: nn.Module, inputs: tuple) -> Any:
    """Outputs of gm in eval mode on inputs, as a float tensor; a string says why it could not run.

    Call it last when describing a result: a fake-quant model still updates its observers in eval mode.
    """
    was_training = gm.training
    try:
        gm.eval()
        with torch.no_grad():
            out = gm(*inputs)
        gm.train(was_training)
        if isinstance(out, torch.Tensor) and out.is_quantized:
            out = out.dequantize()
        if not isinstance(out, torch.Tensor):
            return f"returned {type(out).__name__}, not a tensor"
        return out.detach().float()
    except Exception as exc:  # evidence, not a crash
        return f"{type(exc).__name__}: {str(exc)[:300]}"


def _tensors(model: nn.Module) -> dict:
    """The parameters and the floating-point buffers (observer statistics, scales) of a model, by name."""
    return {"params": {n: p.detach().clone() for n, p in model.named_parameters()},
            "buffers": {n: b.detach().clone() for n, b in model.named_buffers() if b.is_floating_point()}}


def _prep_evidence(result: Any, args: tuple) -> dict:
    expect_type(result, fx.GraphModule, "prepare_for_qat", "a torch.fx.GraphModule (what prepare_qat_fx returns)")
    return {
        "graph": describe_graph(result),
        "modules": _module_rows(result),
        "training": bool(result.training),
        "eval_submodules": sorted(n for n, m in result.named_modules() if not m.training)[:5],
        "caller_training": bool(getattr(args[0], "training", False)),  # the model passed in, after the call
        "tensors": _tensors(result),  # before _run: running moves the observers
        "outputs": _run(result, args[1]),
    }


def _count_evidence(result: Any, args: tuple) -> int:
    if isinstance(result, bool) or not isinstance(result, int):
        raise CheckFailed(f"returned {type(result).__name__} {str(result)[:80]}, expected an int",
                          "ex07.return_number_nodes_int_len")
    return result


def _ft_evidence(result: Any, args: tuple) -> dict:
    prepared = args[0]
    if result is None:
        raise CheckFailed("qat_finetune returned None, expected the prepared model",
                          "ex07.return_prepared_same_object_trained")
    return {
        "same": result is prepared,
        "training": bool(prepared.training),
        "params": {n: p.detach().clone() for n, p in prepared.named_parameters()},
        "buffers": {n: b.detach().clone() for n, b in prepared.named_buffers()},   # the observers' switches too
        "in_eval": [n for n, m in prepared.named_modules() if not m.training][:5],
        "frozen": [n for n, p in prepared.named_parameters() if not p.requires_grad],
        "batches_grad": any(isinstance(t, torch.Tensor) and t.requires_grad
                            for batch in args[1] if isinstance(batch, (tuple, list)) for t in batch),
    }


def _quant_params(gm: nn.Module) -> dict:
    """The quantization parameters of a converted model: every scalar scale and zero point of its state_dict (the
    quantize nodes' _scale_N/_zero_point_N and the quantized modules' output ones), and each quantized module's
    weight, dequantized (its per-channel scales are in it)."""
    out: dict = {"qparams": {}, "weights": {}}
    try:
        for k, v in gm.state_dict().items():
            if k.rsplit(".", 1)[-1].startswith(("scale", "zero_point", "_scale", "_zero_point")) \
                    and isinstance(v, torch.Tensor) and v.numel() == 1:
                out["qparams"][k] = float(v)
        for name, m in gm.named_modules():
            w = getattr(m, "weight", None)
            if callable(w) and not isinstance(w, nn.Parameter):
                w = w()
                if isinstance(w, torch.Tensor) and w.is_quantized:
                    out["weights"][name] = w.dequantize().detach().clone()
    except Exception:  # a result that is no converted model: the other evidence says what it is
        pass
    return out


def _int8_evidence(result: Any, args: tuple) -> dict:
    expect_type(result, fx.GraphModule, "to_int8", "a torch.fx.GraphModule (what convert_fx returns)")
    mods = dict(result.named_modules())
    x = getattr(args[0], "input_for_checks", None)
    ev = {
        "same": result is args[0],
        "quant": _quant_params(result),
        "training": bool(result.training),
        "graph": describe_graph(result),
        "fake_quant_left": [n for n, m in mods.items() if isinstance(m, FakeQuantizeBase)][:5],
        "observers_left": [n for n, m in mods.items() if isinstance(m, ObserverBase)][:5],
        "types": sorted({_qual(type(m)) for m in mods.values()}),
    }
    ev["outputs"] = None if x is None else _run(result, (x,))
    return ev


def _size_evidence(result: Any, args: tuple) -> int:
    if isinstance(result, bool) or not isinstance(result, int):
        raise CheckFailed(f"returned {type(result).__name__} {str(result)[:80]}, expected an int (bytes)",
                          "ex07.return_number_bytes_int_buf")
    return result
