"""The references of ex05_inserting, used by its judges only (never imported where learner code runs)."""
from __future__ import annotations

import math

import torch
import torch.fx as fx
import torch.nn as nn

from autograder.checks.evidence import flat_outputs


def _reference_outputs(module: nn.Module, inputs: tuple) -> list:
    with torch.no_grad():
        out = module(*inputs)
    return flat_outputs(out)


def reference_insert_after(gm: fx.GraphModule, node_name: str, fn) -> fx.GraphModule:
    """The reference answer, used by the judge only."""
    node = next((n for n in gm.graph.nodes if n.name == node_name), None)
    if node is None:
        raise KeyError(node_name)
    with gm.graph.inserting_after(node):
        new = gm.graph.call_function(fn, (node,))
    node.replace_all_uses_with(new, delete_user_cb=lambda user: user is not new)
    gm.graph.lint()
    gm.recompile()
    return gm


def reference_shapes(gm: fx.GraphModule, *inputs: torch.Tensor) -> dict[str, tuple[int, ...]]:
    """Shapes of every tensor-valued node except output, by name, from an interpreter run."""
    shapes: dict[str, tuple[int, ...]] = {}

    class Recorder(fx.Interpreter):
        def run_node(self, n):
            value = super().run_node(n)
            if n.op != "output" and isinstance(value, torch.Tensor):
                shapes[n.name] = tuple(value.shape)
            return value

    with torch.no_grad():
        Recorder(gm).run(*inputs)
    return shapes


def reference_linear_flops(gm: fx.GraphModule, *inputs: torch.Tensor) -> int:
    """2 * rows * in * out for every nn.Linear call, rows from the input the call receives."""
    total = 0

    class Counter(fx.Interpreter):
        def call_module(self, target, args, kwargs):
            nonlocal total
            module = self.fetch_attr(target)
            if isinstance(module, nn.Linear):
                x = args[0] if args else kwargs["input"]
                total += 2 * math.prod(x.shape[:-1]) * module.in_features * module.out_features
            return super().call_module(target, args, kwargs)

    with torch.no_grad():
        Counter(gm).run(*inputs)
    return total


# What the answers that trust the tensor_meta a case's gm arrived with compute (to name that mistake).

def _meta_shapes(gm: fx.GraphModule) -> dict[str, tuple]:
    """The shapes the nodes' tensor_meta held when the case made gm (an earlier ShapeProp run's, if any)."""
    return {n.name: tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes
            if hasattr(n.meta.get("tensor_meta"), "shape")}


def _stale_flops(gm: fx.GraphModule, stale: dict[str, tuple]) -> int | None:
    """The count from the shapes node.meta held before the call (None where some Linear's input has none)."""
    try:
        return sum(2 * math.prod(stale[n.args[0].name][:-1]) * m.in_features * m.out_features
                   for n in gm.graph.nodes if n.op == "call_module"
                   for m in [gm.get_submodule(n.target)] if isinstance(m, nn.Linear))
    except (KeyError, IndexError, AttributeError):
        return None
