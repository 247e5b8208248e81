"""The cases of ex03_replacing: the seeded inputs each graded function is called on, and their references."""
from __future__ import annotations


import torch
import torch.fx as fx

from fxplayground import ThreeReluNet, TinyNet

from autograder.checks import keyring
from autograder.checks.framework import Case
from autograder.checks.randmodels import generator, manual_seed


STASH = "_fxcourse_case"


# ---------------------------------------------------------------------------------- case plumbing

def _inputs(shape: tuple[int, ...], seed: int, n: int = 2, scale: float = 2.0) -> list:
    g = generator(seed)
    return [torch.randn(shape, generator=g) * scale for _ in range(n)]


def _prepare(make_model, shape: tuple[int, ...], seed: int = 0):
    """A fresh traced model with its model and seeded inputs stashed on it (deterministic)."""
    manual_seed(seed)
    model = make_model().eval()
    gm = fx.symbolic_trace(model)
    # a node of an fx.wrap-ed function makes gm.code call wrap("<its target's name>") again; once a pass gives
    # that node another target (torch.clamp), that call registers a name tracing then cannot find, and every
    # later symbolic_trace in the process raises KeyError: the cases' graphs carry no such mark
    if any(node.meta.pop("is_wrapped", False) for node in list(gm.graph.nodes)):
        gm.recompile()
    gm.__dict__[STASH] = {"model": model, "inputs": _inputs(shape, seed + 100)}
    return gm


# ---------------------------------------------------------------------------------- swap_function

def _swap_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex03_replacing")._swap_cases()

    def case(label, make, old, new, eager, *, keywords=False):
        if keywords:
            return Case(label, lambda: (make(),), kwargs=lambda: {"old": old, "new": new},
                        data={"old": old, "new": new, "eager": eager})
        return Case(label, lambda: (make(), old, new), data={"old": old, "new": new, "eager": eager})

    tiny = lambda: _prepare(TinyNet, (5, 4), seed=0)  # noqa: E731
    return [case("TinyNet, torch.relu -> torch.sigmoid", tiny, torch.relu, torch.sigmoid,
                 [(torch.relu, torch.sigmoid)])]


# ---------------------------------------------------------------------------------- relu_to_clamp

def _clamp_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex03_replacing")._clamp_cases()

    def case(label, make, max_value, *, keyword=False):
        data = {"max_value": max_value}
        if keyword:
            return Case(label, lambda: (make(),), kwargs=lambda: {"max_value": max_value}, data=data)
        return Case(label, lambda: (make(), max_value), data=data)
    return [case("TinyNet, max_value=1.0", lambda: _prepare(TinyNet, (6, 4), seed=0), 1.0)]


def _gelu_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex03_replacing")._gelu_cases()
    return [Case("ThreeReluNet (F.relu, nn.ReLU and .relu())", lambda: (_prepare(ThreeReluNet, (4, 8)),))]


# ------------------------------------------------------------------------------- linear_to_matmul

def _matmul_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex03_replacing")._matmul_cases()
    return [Case("TinyNet", lambda: (_prepare(TinyNet, (5, 4)),))]
