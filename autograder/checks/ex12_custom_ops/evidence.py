"""What the checks of ex12_custom_ops record of a learner's result, as plain data (runs where learner code runs)."""
from __future__ import annotations

from typing import Any

import torch
import torch.fx as fx
import torch.nn as nn

from autograder.checks.randmodels import generator
from autograder.checks.framework import CheckFailed
from autograder.checks.evidence import lint_error, printed, stale_code
from autograder.checks.ex12_custom_ops.models import LINTED, PROBE, other_scaled_gelu


def _gen(seed: int) -> torch.Generator:
    return generator(seed)


# (input, scale): float32, float64, a 0-dim tensor, a negative and a zero scale
def probes() -> list[tuple[torch.Tensor, float]]:
    return [(torch.randn(3, 4, generator=_gen(1)) * 3, 1.5),
            (torch.randn(2, 5, generator=_gen(2), dtype=torch.float64), -0.5),
            (torch.tensor(0.7), 2.0),
            (torch.randn(4, generator=_gen(3)), 0.0)]


def _none_hint() -> str:
    """For a function that returned None: printing is named only when it printed something."""
    return ("shared.return_value_instead_printing" if printed() else
            "shared.return_value_function_ended_without")


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:400]}"


def _overload(result: Any):
    """The OpOverload behind what register_scaled_gelu returned: a CustomOpDef, a packet or an overload."""
    from torch._library.custom_ops import CustomOpDef
    if isinstance(result, CustomOpDef):
        return result._opoverload
    if isinstance(result, torch._ops.OpOverloadPacket):
        try:
            return result.default
        except AttributeError:
            return None
    if isinstance(result, torch._ops.OpOverload):
        return result
    raise CheckFailed(f"register_scaled_gelu returned {type(result).__name__}, expected the operator",
                      _none_hint() if result is None else
                      "ex12.return_what_torch_library_custom")


def _register_evidence(result: Any, args: tuple) -> dict:
    (namespace,) = args
    overload = _overload(result)
    ev: dict = {"namespace": namespace, "type": type(result).__name__,
                "schema": str(overload._schema) if overload is not None else None}
    ev["outputs"], ev["kept"] = [], []
    for x, scale in probes():
        before = x.clone()
        try:
            with torch.no_grad():
                out = result(x, scale)
            ev["outputs"].append(out.detach().clone() if isinstance(out, torch.Tensor) else
                                 f"returned {type(out).__name__}, not a tensor")
        except Exception as exc:
            ev["outputs"].append(_error(exc))
        ev["kept"].append(torch.equal(before, x))
    ev["grad"] = _grad(result)
    ev["fake"], ev["fake_alias"] = _fake(result)
    ev["strides"] = _strides(result)
    ev["opcheck"] = _opcheck(overload)
    ev["export"] = _export_count(result, overload)
    ev["compile"] = compile_evidence(result, overload)
    return ev


def grad_probes() -> list[tuple[torch.Tensor, float, torch.Tensor]]:
    """(x, scale, w) of the two calls whose gradients are taken in one backward of
    (op(x1, scale1) * w1).sum() + (op(x2, scale2) * w2).sum(), in float64: the gradient flowing in (w) is not all
    ones, and each call has its own scale."""
    x1 = torch.randn(3, 4, generator=_gen(4), dtype=torch.float64).mul_(2)
    x2 = torch.randn(5, generator=_gen(8), dtype=torch.float64)
    return [(x1, -1.25, torch.randn(3, 4, generator=_gen(9), dtype=torch.float64)),
            (x2, 2.0, torch.randn(5, generator=_gen(10), dtype=torch.float64))]


def _grad(op) -> Any:
    """Each call's x.grad (grad_probes), or the error."""
    calls = grad_probes()
    xs = [x.clone().requires_grad_() for x, _, _ in calls]
    try:
        sum((op(x, scale) * w).sum() for x, (_, scale, w) in zip(xs, calls)).backward()
    except Exception as exc:
        return _error(exc)
    return [x.grad.detach().clone() if x.grad is not None else "x.grad is None after backward" for x in xs]


def _fake(op) -> tuple[Any, bool]:
    """([shape, dtype] of the op's result on two fake tensors, or the error; whether a result was x itself)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    out, alias = [], False
    try:
        with FakeTensorMode() as mode:
            for shape, dtype in (((2, 7), torch.float32), ((3,), torch.float64)):
                x = mode.from_tensor(torch.empty(shape, dtype=dtype))
                y = op(x, 2.0)
                alias = alias or y is x
                out.append([list(y.shape), str(y.dtype)])
    except Exception as exc:
        return _error(exc), False
    return out, alias


def transposed() -> torch.Tensor:
    """A (3, 5) input that is not contiguous: strides (1, 3)."""
    return torch.randn(5, 3, generator=_gen(7)).t()


def _strides(op) -> dict:
    """The strides of the op's result on the transposed input, from the real kernel and from the fake one (or the
    error either raised): opcheck's fake-tensor test compares them."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    out: dict = {}
    try:
        with torch.no_grad():
            out["real"] = list(op(transposed(), 1.5).stride())
    except Exception as exc:
        out["real"] = _error(exc)
    try:
        with FakeTensorMode() as mode:
            out["fake"] = list(op(mode.from_tensor(transposed()), 1.5).stride())
    except Exception as exc:
        out["fake"] = _error(exc)
    return out


def _opcheck(overload) -> Any:
    if overload is None:
        return "the returned packet has no default overload"
    found = {}
    for x, scale in (probes()[0], probes()[1]):
        try:
            report = torch.library.opcheck(overload, (x.clone().requires_grad_(), scale), raise_exception=False)
        except Exception as exc:
            return _error(exc)
        for test, verdict in report.items():
            if verdict != "SUCCESS" and test not in found:
                found[test] = _error(verdict) if isinstance(verdict, BaseException) else str(verdict)[:400]
    return found


class _Uses(nn.Module):
    def __init__(self, op) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        object.__setattr__(self, "op", op)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.op(self.fc(x), 0.5).relu()


def _export_count(op, overload) -> Any:
    """The op's nodes in torch.export of _Uses with a dynamic batch (the fake kernel sees a symbolic size), or the
    error."""
    from torch.export import Dim, export
    try:
        ep = export(_Uses(op), (torch.randn(2, 4, generator=_gen(5)),), dynamic_shapes=({0: Dim("batch")},))
    except Exception as exc:
        return _error(exc)
    return sum(1 for n in ep.graph.nodes if n.op == "call_function" and n.target == overload)


def compile_evidence(op, overload) -> dict:
    """What torch.compile makes of a function calling the op: the graphs a backend receives, its calls in them."""
    graphs: list = []

    def backend(gm: fx.GraphModule, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    try:
        fn = torch.compile(lambda t: op(t, 0.75).sin() + 1, backend=backend)
        fn(torch.randn(5, generator=_gen(6)))
    except Exception as exc:
        return {"error": _error(exc)}
    finally:
        torch._dynamo.reset()
    calls = sum(1 for gm in graphs for n in gm.graph.nodes if n.op == "call_function"
                and overload is not None and (n.target == overload or n.target == overload.overloadpacket))
    return {"graphs": len(graphs), "calls": calls}


def _count_evidence(result: Any, args: tuple) -> dict:
    if type(result) is not int:
        raise CheckFailed(f"count_op_nodes returned {type(result).__name__}, expected an int",
                          _none_hint() if result is None else
                          "ex12.return_number_matching_nodes_int")
    return {"count": result}


def _target(target: Any, fn: Any, op: Any) -> str:
    if target is op:
        return "op"
    if target is fn:
        return "fn"
    if target is other_scaled_gelu:
        return "the other scaled_gelu"
    if isinstance(target, str):
        return target
    return str(getattr(target, "__name__", target))


def describe(gm: fx.GraphModule, fn: Any, op: Any) -> list:
    """Each node as [op, target, args, kwargs], node arguments as '%<index>' (names may change, places not)."""
    index = {n: i for i, n in enumerate(gm.graph.nodes)}

    def arg(a: Any) -> Any:
        if isinstance(a, fx.Node):
            return f"%{index.get(a, '?')}"
        if isinstance(a, (tuple, list)):
            return [arg(b) for b in a]
        if isinstance(a, dict):
            return {str(k): arg(v) for k, v in a.items()}
        return a if type(a) in (int, float, bool, str, type(None)) else repr(a)[:80]

    return [[n.op, _target(n.target, fn, op), arg(n.args), arg(n.kwargs)] for n in gm.graph.nodes]


def wrapped_marks(gm: fx.GraphModule) -> list[bool]:
    """Per node, whether it carries meta["is_wrapped"] (a wrapped function's call, as traced)."""
    return [bool(n.meta.get("is_wrapped")) for n in gm.graph.nodes]


def run(gm: Any, x: torch.Tensor) -> Any:
    try:
        with torch.no_grad():
            return gm(x)
    except Exception as exc:
        return _error(exc)


def _replace_evidence(result: Any, args: tuple) -> dict:
    gm, fn, op = args
    if not isinstance(result, fx.GraphModule):
        raise CheckFailed(f"replace_with_op returned {type(result).__name__}, expected an fx.GraphModule",
                          _none_hint() if result is None else
                          "ex12.return_graphmodule_gm_itself_changed")
    rewrapped = [n.name for n in result.graph.nodes if n.op == "call_function" and n.target is op
                 and n.meta.get("is_wrapped")]
    # whether the answer linted the graph it was given, read before lint_error lints it (None: the answer
    # returned a graph of its own, where no mark was set up)
    linted = getattr(result.graph, LINTED, None) if result.graph is gm.graph else None
    return {"nodes": describe(result, fn, op), "linted": linted, "lint": lint_error(result),
            "stale": stale_code(result),
            "rewrapped": rewrapped, "wrapped": wrapped_marks(result),
            "output": run(result, getattr(gm, PROBE))}
