"""What the checks of ex03_replacing record of a learner's result, as plain data (runs where learner code runs)."""
from __future__ import annotations

import operator
import re

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from autograder.checks.randmodels import generator
from autograder.checks.hints import hint_of
from autograder.checks.framework import CheckFailed
from autograder.checks.evidence import describe_graph, generated_code, lint_error, qualified
from autograder.checks.ex03_replacing.cases import STASH


RELU_FUNCTIONS = (torch.relu, torch.relu_, F.relu, torch.Tensor.relu, torch.Tensor.relu_)  # F.relu_ is torch.relu_
RELU_METHODS = ("relu", "relu_")
GELU_FUNCTIONS = (F.gelu,)  # F.gelu is torch._C._nn.gelu; tensors have no .gelu() method
MATMUL_FUNCTIONS = (torch.matmul, operator.matmul, torch.mm, torch.bmm, torch.Tensor.matmul, torch.Tensor.mm)
# torch.einsum is no matmul here: the task asks for torch.matmul or @ with W transposed
MATMUL_METHODS = ("matmul", "mm", "bmm", "__matmul__")
LINEAR_FUNCTIONS = (F.linear, torch.addmm, torch.Tensor.addmm)
STR_TARGET_HINT = "ex03.call_module_node_s_target"


def _stash(gm: fx.GraphModule) -> dict:
    stash = gm.__dict__.get(STASH)
    if stash is None:
        raise CheckFailed("the GraphModule given to your function lost its test data; run the cell again")
    return stash


def _sgd_step(model: nn.Module) -> None:
    """One SGD step on every parameter, with seeded gradients: 'training the original'."""
    g = generator(1234)
    params = [p for _, p in model.named_parameters()]
    with torch.no_grad():
        for p in params:  # what torch.optim.SGD(params, lr=0.5).step() does, without importing torch.optim
            p.sub_(0.5 * torch.randn(p.shape, generator=g))


# ---------------------------------------------------------------------------------------- evidence

def _resolve(gm: nn.Module, target: str):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def _facts(gm: fx.GraphModule, model: nn.Module) -> list[dict]:
    """describe_graph plus what each node computes (relu, gelu, clamp, linear, matmul) and reads (get_attr)."""
    params = {id(p): name for name, p in model.named_parameters()}
    storages = {(p.data_ptr(), tuple(p.shape)): name for name, p in model.named_parameters()}
    out = describe_graph(gm)
    for entry, node in zip(out, gm.graph.nodes):
        t = node.target
        entry.update(kind=None, relu=False, gelu=None, clamp=False, linear=False, matmul=False,
                     reads=None, lambda_=getattr(t, "__name__", None) == "<lambda>")
        if node.op == "call_function":
            if any(t is f for f in RELU_FUNCTIONS):
                entry.update(relu=True, kind=qualified(t))
            elif any(t is f for f in GELU_FUNCTIONS):
                approx = node.kwargs.get("approximate", node.args[1] if len(node.args) > 1 else "none")
                entry["gelu"] = str(approx)
            entry["clamp"] = t is torch.clamp
            entry["linear"] = any(t is f for f in LINEAR_FUNCTIONS)
            entry["matmul"] = any(t is f for f in MATMUL_FUNCTIONS)
        elif node.op == "call_method":
            if t in RELU_METHODS:
                entry.update(relu=True, kind=f"Tensor.{t}")
            entry["matmul"] = t in MATMUL_METHODS
            entry["linear"] = t == "addmm"
        elif node.op == "call_module" and isinstance(t, str):
            try:
                mod = gm.get_submodule(t)
            except Exception:
                mod = None
            if isinstance(mod, nn.Module):
                inner = list(mod.modules())
                if any(isinstance(m, nn.ReLU) for m in inner):
                    entry.update(relu=True, kind="nn.ReLU")
                if isinstance(mod, nn.GELU):
                    entry["gelu"] = str(mod.approximate)
                entry["linear"] = any(isinstance(m, nn.Linear) for m in inner)
        elif node.op == "get_attr" and isinstance(t, str):
            try:
                obj = _resolve(gm, t)
            except Exception as exc:
                entry["reads"] = {"kind": "missing", "error": f"{type(exc).__name__}: {exc}"[:200]}
                continue
            info = {"kind": type(obj).__name__, "param_of": None, "storage_of": None}
            if obj is None:
                info["kind"] = "None"
            elif isinstance(obj, torch.Tensor):
                info["kind"] = "Parameter" if isinstance(obj, nn.Parameter) else "Tensor"
                info["param_of"] = params.get(id(obj))
                info["storage_of"] = storages.get((obj.data_ptr(), tuple(obj.shape)))
            entry["reads"] = info
    return out


def untransposed_weights(graph: list[dict]) -> list[str]:
    """Names of the matmul nodes of a described graph whose second operand is a get_attr of a weight itself."""
    reads = {n["name"]: n["target"] for n in graph if n["op"] == "get_attr"}
    out = []
    for n in graph:
        if n.get("matmul") and len(n["args"]) > 1 and isinstance(n["args"][1], dict):
            source = reads.get(n["args"][1].get("node"))
            if source is not None and source.endswith("weight"):
                out.append(n["name"])
    return out


def _run_hint(message: str, graph: list[dict] | None = None) -> str | None:
    """The hint for an error raised while running (or linting) the returned GraphModule.

    With `graph` (the result's described graph, from _facts) each diagnosis must also be seen in it: a missing
    bias only when a get_attr reads a None bias, a missing transpose only when a matmul multiplies by a weight
    as it is, torch.mm only when a node calls it, a missing submodule only when a node names one gm lacks."""
    seen = (lambda pred: True) if graph is None else (lambda pred: any(pred(n) for n in graph))  # noqa: E731
    if re.search(r"nonexistent attribute bias|NoneType", message) and seen(
            lambda n: (n.get("reads") or {}).get("kind") == "None" or (
                n["op"] == "get_attr" and n["target"].endswith("bias") and (n.get("reads") or {}).get("kind")
                == "missing")):
        return "ex03.this_nn_linear_has_no"
    if "unexpected keyword argument" in message:
        if "gelu" in message and "inplace" in message:
            return "ex03.f_gelu_takes_no_inplace"
        return "ex03.node_s_target_does_not"
    if re.search(r"shapes cannot be multiplied|size mismatch|must match the size", message) and (
            graph is None or untransposed_weights(graph)):
        return "ex03.nn_linear_computes_x_w"
    if ("must be a matrix" in message or "expected 2D" in message) and seen(
            lambda n: n["target"] in ("torch.mm", "torch._C._VariableFunctions.mm", "mm")):
        return "ex03.torch_mm_only_multiplies_2"
    if ("has no attribute" in message or "nonexistent attribute" in message) and seen(
            lambda n: (n.get("reads") or {}).get("kind") == "missing" or (
                n["op"] == "call_module" and n.get("module_type", "") is None)):
        return "ex03.node_names_submodule_attribute_no"
    if re.search(r"str is expected|Expected node.target to be str", message):
        return STR_TARGET_HINT
    return None


def _stale(gm: fx.GraphModule) -> dict | None:
    """gm's code and the code its graph gives now, when they differ (a graph changed without gm.recompile())."""
    src = generated_code(gm)
    return None if src is None or src == gm.code else {"code": gm.code, "graph_code": src}


def _run(fn, inputs: list, graph: list[dict] | None = None) -> tuple[list, dict | None]:
    outs = []
    with torch.no_grad():
        for x in inputs:
            try:
                outs.append(fn(x.clone()))
            except Exception as exc:
                msg = f"{type(exc).__name__}: {exc}"[:600]
                return outs, {"error": msg, "hint": _run_hint(msg, graph)}
    return outs, None


def _evidence(function: str, result, args: tuple, *, step: bool = False) -> dict:
    gm_in = args[0]
    stash = _stash(gm_in)
    if not isinstance(result, fx.GraphModule):
        hint = ("ex03.end_pass_return_gm_returned" if result is None else
                "ex03.return_gm_graphmodule_not_graph" if isinstance(result, fx.Graph) else
                hint_of("ex03.return_gm_graphmodule_you_changed", name=type(result).__name__))
        raise CheckFailed(f"{function} returned {type(result).__name__}, expected a torch.fx.GraphModule", hint)
    model, inputs = stash["model"], stash["inputs"]
    ev: dict = {"graph": _facts(result, model), "code": result.code, "codegen": None, "graph_code": None}
    try:
        ev["graph_code"] = result.graph.python_code(root_module="self").src
    except Exception as exc:
        ev["codegen"] = f"{type(exc).__name__}: {exc}"[:500]
    ev["lint"] = lint_error(result)
    ev["given"] = None if result is gm_in else _stale(gm_in)
    # result.forward, not result(...): when a GraphModule raises, its __call__ builds a pretty error message and
    # that imports torch._dynamo (seconds, once per process); the error itself is the same
    ev["outputs"], ev["run_error"] = _run(result.forward, inputs, ev["graph"])
    ev["original_outputs"], ev["original_error"] = _run(model, inputs)
    if step:
        _sgd_step(model)
        ev["stepped_outputs"], ev["stepped_error"] = _run(result.forward, inputs, ev["graph"])
    return ev


def _swap_evidence(result, args):
    return _evidence("swap_function", result, args)


def _clamp_evidence(result, args):
    return _evidence("relu_to_clamp", result, args)


def _gelu_evidence(result, args):
    return _evidence("relu_to_gelu", result, args)


def _matmul_evidence(result, args):
    return _evidence("linear_to_matmul", result, args, step=True)
