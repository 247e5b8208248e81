"""What the checks of ex04_wrapping record of a learner's result, as plain data (runs where learner code runs)."""
from __future__ import annotations

import types
from typing import Any

import torch
import torch.fx as fx

from autograder.checks.framework import CheckFailed
from autograder.checks.evidence import describe_graph, expect_type, lint_error, stale_code
from autograder.checks.ex04_wrapping.cases import notebook_namespace
from autograder.checks.ex04_wrapping.models import REF


def _check_gm(result: Any, function: str) -> None:
    if isinstance(result, fx.Graph):
        raise CheckFailed(f"{function} returned a torch.fx.Graph, expected a torch.fx.GraphModule",
                          "ex04.tracer_returns_graph_pair_module")
    expect_type(result, fx.GraphModule, function, "a torch.fx.GraphModule")


def _shares(result: fx.GraphModule, model: torch.nn.Module) -> bool:
    """Are the result's parameters the model's own (the same tensors), as a trace of `model` itself has?"""
    own = {p.data_ptr() for p in model.parameters()}
    return all(p.data_ptr() in own for p in result.parameters())


def _tracer_patched() -> list[str]:
    """Methods of torch.fx.Tracer itself that are no longer torch's own (replaced for every tracer of the
    process)."""
    return sorted(name for name, value in vars(fx.Tracer).items()
                  if isinstance(value, types.FunctionType) and not value.__module__.startswith("torch."))


def _gm_evidence(result: Any, args: tuple, function: str) -> dict:
    """Graph, lint result and the outputs on the model's probe inputs; an error when run is evidence too."""
    _check_gm(result, function)
    ev: dict = {"graph": describe_graph(result), "code": result.code, "lint": lint_error(result), "outputs": [],
                "run_error": None, "stale": stale_code(result), "shares_parameters": _shares(result, args[0]),
                "tracer_patched": _tracer_patched()}
    with torch.no_grad():
        for inputs in args[0].probe_inputs:
            try:
                # forward, not __call__: on torch 2.13 a GraphModule whose generated code raises builds its
                # error message with torch._dynamo.disable, importing all of dynamo (seconds of CPU) first.
                ev["outputs"].append(result.forward(*inputs))
            except Exception as exc:
                ev["run_error"] = f"{type(exc).__name__}: {str(exc)[:400]}"
                break
    return ev


def _gated_evidence(result, args):
    ev = _gm_evidence(result, args, "trace_gated")
    gate = notebook_namespace().get("gate")
    # the notebook's gate is the one its first cell defines (fx.wrap hands back the same function): the same
    # names, constants and variables (its bytecode may differ once Python has specialized one of them)
    ev["gate_redefined"] = _code_of(gate) != _code_of(REF["gate"])
    return ev


def _code_of(fn: Any) -> Any:
    code = getattr(fn, "__code__", None)
    return None if code is None else (code.co_names, code.co_consts, code.co_varnames)


def _leaf_evidence(result, args):
    return _gm_evidence(result, args, "trace_with_leaves")


def _spec_evidence(result, args):
    return _gm_evidence(result, args, "trace_specialized")
