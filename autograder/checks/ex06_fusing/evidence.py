"""What the checks of ex06_fusing record of a learner's result, as plain data (runs where learner code runs)."""
from __future__ import annotations

from collections import Counter

import torch
import torch.fx as fx
import torch.nn as nn

from autograder.checks.framework import CheckFailed
from autograder.checks.evidence import expect_type, lint_error, printed, qualified, stale_code
from autograder.checks.ex06_fusing.cases import ORIGINALS, PROBE


# What a right answer computes, stated without guessing what a wrong one did (the judges add a diagnosis only
# where the evidence confirms it).
LINEAR_FORMULA = "ex06.linear_formula"
BN_FORMULA = "ex06.bn_formula"


def _none_hint() -> str:
    """For a function that returned None: printing is named only when it printed something."""
    return ("shared.return_value_instead_printing" if printed() else
            "shared.return_value_function_ended_without")


def _probe(obj: object) -> tuple:
    return getattr(obj, PROBE, ())


def _state(module: nn.Module) -> dict:
    """A module's parameters, buffers and training flag as plain data (to see if it was changed)."""
    out = {k: v.detach().clone() for k, v in module.state_dict().items() if isinstance(v, torch.Tensor)}
    out["__training__"] = bool(module.training)
    return out


def _run(module: nn.Module, inputs: tuple) -> torch.Tensor | str:
    try:
        with torch.no_grad():
            return module(*inputs)
    except Exception as exc:  # evidence, not a crash: the judge says what it means
        return f"{type(exc).__name__}: {str(exc)[:300]}"


def _module_of(gm: nn.Module, node: fx.Node) -> nn.Module | None:
    if node.op != "call_module" or not isinstance(node.target, str):
        return None
    try:
        return gm.get_submodule(node.target)
    except AttributeError:
        return None


def _input_kind(gm: nn.Module, node: object) -> str:
    """What feeds a node, in words that do not depend on node names."""
    if not isinstance(node, fx.Node):
        return "constant"
    if node.op == "placeholder":
        return "input"
    if node.op == "call_module":
        mod = _module_of(gm, node)
        return "Linear" if isinstance(mod, nn.Linear) else type(mod).__name__
    if node.op == "call_method":
        return f".{node.target}()"
    return qualified(node.target)


def _other_nodes(gm: fx.GraphModule, skip: tuple[type, ...]) -> Counter:
    """Call nodes that are not calls of the `skip` module types, by (op, target or module type)."""
    out: Counter = Counter()
    for n in gm.graph.nodes:
        if n.op in ("call_function", "call_method"):
            out[f"{n.op} {qualified(n.target)}"] += 1
        elif n.op == "call_module":
            mod = _module_of(gm, n)
            if not isinstance(mod, skip):
                out[f"call_module {type(mod).__name__}"] += 1
    return out


def _pass_evidence(result, args, function: str, kinds: tuple[type, ...]) -> dict:
    """Graph evidence of a pass: lint, stale code, non-fused nodes, and each call of a `kinds` module."""
    expect_type(result, fx.GraphModule, function, "a torch.fx.GraphModule")
    ev: dict = {"lint": lint_error(result), "stale": stale_code(result)}
    ev["others"] = dict(_other_nodes(result, kinds))
    calls = []
    for n in result.graph.nodes:
        mod = _module_of(result, n)
        if not isinstance(mod, kinds):
            continue
        entry = {"name": n.name, "target": n.target, "type": type(mod).__name__,
                 "input": _input_kind(result, n.args[0] if n.args else n.kwargs.get("input")),
                 "input_name": n.args[0].name if n.args and isinstance(n.args[0], fx.Node) else "",
                 "users": [u.name for u in n.users], "by_keyword": bool(n.kwargs) or len(n.args) != 1}
        if isinstance(mod, nn.Linear):
            entry["in"], entry["out"] = int(mod.in_features), int(mod.out_features)
            entry["shape"] = list(mod.weight.shape)
        calls.append(entry)
    ev["calls"] = calls
    ev["weights"] = {}
    for name, mod in result.named_modules():
        if isinstance(mod, (nn.Linear, nn.Conv2d)):
            ev["weights"][name] = {"weight": mod.weight.detach().clone(),
                                   "bias": None if mod.bias is None else mod.bias.detach().clone()}
    ev["output"] = _run(result, _probe(args[0]))
    ev["originals_changed"] = _originals_changed(args[0])
    return ev


def _originals_changed(gm: object) -> list[str]:
    """The names, in the gm the case made, of the modules it held then whose parameters or buffers have changed
    since (cases.ORIGINALS): those objects are the traced model's own."""
    changed = []
    for name, (module, state) in ORIGINALS.get(gm, {}).items() if isinstance(gm, fx.GraphModule) else ():
        now = module.state_dict()
        if now.keys() != state.keys() or not all(
                isinstance(now[k], torch.Tensor) and now[k].shape == v.shape and now[k].dtype == v.dtype
                and torch.equal(now[k].detach(), v) for k, v in state.items()):
            changed.append(name)
    return changed


def _tensors(module: nn.Module):
    return [*module.named_parameters(), *module.named_buffers()]


def _memory(t: torch.Tensor) -> tuple | None:
    storage = t.untyped_storage()
    return (storage.device.type, storage.data_ptr()) if storage.nbytes() else None


def _shared_memory(result: nn.Module, inputs: dict[str, nn.Module]) -> list[str]:
    """Each tensor of `result` that shares its memory with a tensor of an input module, in words."""
    theirs: dict = {}
    for who, module in inputs.items():
        for name, t in _tensors(module):
            if _memory(t) is not None:
                theirs.setdefault(_memory(t), f"{who}.{name}")
    return [f"its {name} shares its memory with {theirs[_memory(t)]}" for name, t in _tensors(result)
            if _memory(t) is not None and _memory(t) in theirs]


def _pair_evidence(result, args) -> dict:
    first, second = args
    if not isinstance(result, nn.Linear):
        raise CheckFailed(f"fuse_linear_pair returned {type(result).__name__}, expected one nn.Linear",
                          _none_hint() if result is None else
                          "ex06.fusing_means_one_nn_linear")
    return {
        "in": int(result.in_features), "out": int(result.out_features),
        "weight": result.weight.detach().clone(),
        "bias": None if result.bias is None else result.bias.detach().clone(),
        "shape": list(result.weight.shape), "dtype": str(result.weight.dtype),
        "bias_dtype": None if result.bias is None else str(result.bias.dtype),
        "output": _run(result, _probe(first)),
        "first": _state(first), "second": _state(second),
        "shared": _shared_memory(result, {"first": first, "second": second}),
    }


def _chains_evidence(result, args) -> dict:
    return _pass_evidence(result, args, "fuse_consecutive_linears", (nn.Linear,))


_HYPER = ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "padding_mode")


def _fold_evidence(result, args) -> dict:
    conv, bn = args
    if not isinstance(result, nn.Conv2d):
        raise CheckFailed(f"fold_bn_into_conv returned {type(result).__name__}, expected one nn.Conv2d",
                          _none_hint() if result is None else
                          "ex06.folding_means_one_nn_conv2d")
    hyper = {}
    for k in _HYPER:
        v = getattr(result, k)
        hyper[k] = list(v) if isinstance(v, tuple) else v
    return {"hyper": hyper, "dtype": str(result.weight.dtype), "has_bias": result.bias is not None,
            "weight": result.weight.detach().clone(),
            "bias": None if result.bias is None else result.bias.detach().clone(),
            "bias_dtype": None if result.bias is None else str(result.bias.dtype),
            "output": _run(result, _probe(conv)), "conv": _state(conv), "bn": _state(bn)}


def _fuse_evidence(result, args) -> dict:
    return _pass_evidence(result, args, "fuse_conv_bn", (nn.Conv2d, nn.BatchNorm2d))
