"""Helpers for checks: describe what a learner returned as plain data, and compare it with a reference."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import torch
import torch.fx as fx

from .core import CheckFailed

__all__ = [
    "qualified", "describe_graph", "graph_module_evidence", "expect", "expect_type", "expect_close",
    "expect_equal", "nodes_where", "first_difference", "unravel",
]


def qualified(target: Any) -> str:
    """A node target as text: strings as they are, callables by their qualified name."""
    if isinstance(target, str):
        return target
    try:
        return fx.node._get_qualified_name(target)
    except Exception:
        return getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or type(target).__name__


def _arg(a: Any) -> Any:
    if isinstance(a, fx.Node):
        return {"node": a.name}
    if isinstance(a, (list, tuple)):
        return [_arg(x) for x in a]
    if isinstance(a, dict):
        return {str(k): _arg(v) for k, v in a.items()}
    if isinstance(a, (bool, int, float, str)) or a is None:
        return a
    if isinstance(a, torch.dtype | torch.device | torch.memory_format | torch.layout):
        return str(a)
    if isinstance(a, slice):
        return {"slice": [_arg(a.start), _arg(a.stop), _arg(a.step)]}
    if callable(a):
        return {"callable": qualified(a)}
    return {"repr": repr(a)[:200]}


def describe_graph(gm: fx.GraphModule) -> list[dict]:
    """Every node as plain data: op, name, target text, args/kwargs (nodes by name), users, module type."""
    out = []
    for node in gm.graph.nodes:
        entry = {
            "op": node.op,
            "name": node.name,
            "target": qualified(node.target),
            "args": _arg(node.args),
            "kwargs": _arg(dict(node.kwargs)),
            "users": [u.name for u in node.users],
        }
        if node.op == "call_module":
            try:
                mod = gm.get_submodule(node.target)
                entry["module_type"] = f"{type(mod).__module__}.{type(mod).__qualname__}"
            except Exception:
                entry["module_type"] = None
        out.append(entry)
    return out


def graph_module_evidence(result: Any, function: str, inputs: Sequence[torch.Tensor] = (),
                          *, lint: bool = True) -> dict:
    """Standard evidence for a pass: its graph, code, lint result and outputs on `inputs` (no grad)."""
    expect_type(result, fx.GraphModule, function, "a torch.fx.GraphModule")
    evidence: dict = {"graph": describe_graph(result), "code": result.code}
    if lint:
        try:
            result.graph.lint()
            evidence["lint"] = None
        except Exception as exc:
            evidence["lint"] = f"{type(exc).__name__}: {exc}"[:500]
    outputs = []
    with torch.no_grad():
        for x in inputs:
            try:
                # forward() directly: a GraphModule's __call__ builds its error message with torch._dynamo,
                # an import that costs seconds the first time a learner's graph raises.
                outputs.append(result.forward(*x) if isinstance(x, tuple) else result.forward(x))
            except Exception as exc:
                raise CheckFailed(f"the returned GraphModule raised {type(exc).__name__} when run: {exc}") from None
    evidence["outputs"] = outputs
    return evidence


def expect(condition: bool, message: str, hint: str | None = None) -> None:
    """Fail with `message` (and `hint`) unless `condition` holds."""
    if not condition:
        raise CheckFailed(message, hint)


def expect_type(value: Any, kind: type | tuple[type, ...], function: str, what: str) -> None:
    if not isinstance(value, kind):
        raise CheckFailed(f"{function} returned {type(value).__name__}, expected {what}",
                          "return the value instead of printing it" if value is None else None)


def first_difference(got: Sequence, expected: Sequence) -> str:
    """Where two sequences first differ, said in words."""
    for i, (g, e) in enumerate(zip(got, expected)):
        if g != e:
            return f"item {i} is {g!r}, expected {e!r}"
    if len(got) != len(expected):
        return f"{len(got)} items, expected {len(expected)}"
    return "no difference"


def expect_equal(got: Any, expected: Any, what: str, hint: str | None = None) -> None:
    """Plain-data equality with a message that names the first difference."""
    if type(got) is not type(expected) and not (isinstance(got, (list, tuple)) and isinstance(expected, (list, tuple))):
        raise CheckFailed(f"{what}: got a {type(got).__name__}, expected a {type(expected).__name__} ({expected!r})",
                          hint)
    if isinstance(expected, (list, tuple)):
        if list(got) != list(expected):
            raise CheckFailed(f"{what}: {first_difference(list(got), list(expected))}", hint)
    elif got != expected:
        raise CheckFailed(f"{what}: got {got!r}, expected {expected!r}", hint)


def expect_close(got: Any, expected: torch.Tensor, what: str, *, rtol: float = 1e-5, atol: float = 1e-6,
                 hint: str | None = None) -> None:
    """Tensor closeness with the largest difference and its index in the message."""
    if not isinstance(got, torch.Tensor):
        raise CheckFailed(f"{what}: got {type(got).__name__}, expected a tensor", hint)
    if tuple(got.shape) != tuple(expected.shape):
        raise CheckFailed(f"{what}: shape {tuple(got.shape)}, expected {tuple(expected.shape)}", hint)
    if got.is_quantized:
        got = got.dequantize()
    if expected.is_quantized:
        expected = expected.dequantize()
    g, e = got.detach().double(), expected.detach().double()
    if not torch.allclose(g, e, rtol=rtol, atol=atol, equal_nan=True):
        diff = torch.nan_to_num((g - e).abs(), nan=float("inf"))
        flat = int(diff.argmax())
        idx = unravel(flat, tuple(e.shape))
        raise CheckFailed(f"{what}: differs by up to {float(diff.flatten()[flat]):.3g} at index {idx} "
                          f"(got {float(g.flatten()[flat]):.6g}, expected {float(e.flatten()[flat]):.6g})", hint)


def unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The index of element `flat` of a tensor of `shape` (torch.unravel_index imports sympy: seconds)."""
    idx = []
    for size in reversed(shape):
        idx.append(flat % size if size else 0)
        flat //= size if size else 1
    return tuple(reversed(idx))


def nodes_where(graph: list[dict], pred: Callable[[dict], bool]) -> list[dict]:
    """The described nodes for which `pred` holds."""
    return [n for n in graph if pred(n)]
