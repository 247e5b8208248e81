"""Checks of ex10_export: export_dynamic_batch, aten_histogram, parameter_placeholders, node_shapes, swap_aten_op.

Exporting costs a fraction of a second per model, so each process exports each case's model once (`_program`)
and hands every case a deep copy: a learner's pass that edits its program never reaches the next case. The
references read the copy the judge builds (graph signature, `node.meta["val"]`), and the numbers come from
the eager models.
"""
from __future__ import annotations

import copy
import random
import warnings
from typing import Any, Callable

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from autograder.checks.framework import Case, Check, CheckFailed
from autograder.checks.evidence import expect, expect_lint, lint_error, stale_code

aten = torch.ops.aten
PROBE = "_ex10_probe"


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ------------------------------------------------------------------------------------------ the models

class PatchNet(nn.Module):
    """Lesson 10's model with other sizes: Conv -> BatchNorm -> ReLU plus a skip, a mean, a Linear."""

    def __init__(self, channels: int = 6) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.bn = nn.BatchNorm2d(channels)
        self.skip = nn.Conv2d(3, channels, 1, bias=False)
        self.fc = nn.Linear(channels, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.bn(self.conv(x))) + self.skip(x)
        return self.fc(h.mean(dim=(2, 3)))


class Tagger(nn.Module):
    """Its input is called `inp`; a non-persistent buffer, a plain tensor attribute (a lifted constant), a
    chunk (getitem nodes), two relus and a leaky_relu."""

    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.embed = nn.Linear(width, 2 * width)
        self.head = nn.Linear(width, 3, bias=False)
        self.register_buffer("gain", torch.linspace(0.5, 1.5, 2 * width), persistent=False)
        self.temperature = torch.tensor(0.7)

    def forward(self, inp: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.embed(inp)) * self.gain
        a, b = h.chunk(2, dim=-1)
        z = torch.relu(a - b) + F.leaky_relu(b, 0.1)
        return self.head(z) / self.temperature + z.sum(dim=-1, keepdim=True).sum()


class Sequence(nn.Module):
    """A (batch, steps, features) input: only dimension 0 may be dynamic, steps and features stay fixed."""

    def __init__(self, steps: int = 5, features: int = 4) -> None:
        super().__init__()
        self.mix = nn.Linear(steps * features, 6)
        self.norm = nn.LayerNorm(6)

    def forward(self, seq: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(self.mix(seq.flatten(1))))


class RandomStack(nn.Module):
    """Steps drawn from a seed: Linears with and without bias, BatchNorm1d, relu/gelu/tanh, residuals, chunks."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        rng = random.Random(seed)
        self.width = rng.choice([4, 6, 8])
        self.plan = [rng.choice(["linear", "bn", "relu", "gelu", "residual", "chunk"]) for _ in range(rng.randint(3, 5))]
        if "relu" not in self.plan:
            self.plan.append("relu")
        w = self.width
        self.layers = nn.ModuleList(
            nn.BatchNorm1d(w) if step == "bn" else nn.Linear(w, w, bias=rng.random() < 0.6) for step in self.plan)
        self.out = nn.Linear(w, rng.choice([2, 3]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for step, layer in zip(self.plan, self.layers):
            if step in ("linear", "bn"):
                x = layer(x)
            elif step == "relu":
                x = torch.relu(layer(x))
            elif step == "gelu":
                x = F.gelu(layer(x))
            elif step == "residual":
                x = torch.tanh(layer(x)) + x
            elif step == "chunk":
                a, b = layer(x).chunk(2, dim=-1)
                x = torch.cat([b, a], dim=-1)
        return self.out(x)


class CondRouter(nn.Module):
    """torch.cond: two subgraphs (get_attr nodes), a `cond` call_function and a getitem."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.up = nn.Linear(width, width)
        self.down = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.cond(x.mean() > 0, lambda t: self.up(t), lambda t: self.down(t), (x,))
        return torch.relu(y)


class Sums(nn.Module):
    """aten.sum.default and aten.sum.dim_IntList side by side: two overloads of one operator."""

    def __init__(self, width: int = 5) -> None:
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.lin(x)
        return h.sum(dim=1, keepdim=True) * 0.5 + h.sum() + h


def _stats(model: nn.Module, seed: int) -> nn.Module:
    """Non-trivial running statistics, eval mode."""
    g = _gen(seed)
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.3)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
    return model.eval()


# (factory of the model, shape of the example input); each model is built under torch.manual_seed(seed)
MODELS: dict[str, tuple[Callable[[], nn.Module], tuple]] = {
    "PatchNet(6)": (lambda: PatchNet(6), (2, 3, 8, 8)),
    "PatchNet(4)": (lambda: PatchNet(4), (3, 3, 6, 6)),
    "Tagger(8)": (lambda: Tagger(8), (3, 8)),
    "Tagger(6)": (lambda: Tagger(6), (4, 6)),
    "Sequence(5, 4)": (lambda: Sequence(5, 4), (3, 5, 4)),
    "RandomStack seed 5": (lambda: RandomStack(5), (3, RandomStack(5).width)),
    "RandomStack seed 12": (lambda: RandomStack(12), (4, RandomStack(12).width)),
    "CondRouter(4)": (lambda: CondRouter(4), (3, 4)),
    "Sums(5)": (lambda: Sums(5), (3, 5)),
}


def _model(name: str, seed: int = 0) -> tuple[nn.Module, torch.Tensor]:
    factory, shape = MODELS[name]
    torch.manual_seed(seed)
    return _stats(factory(), seed), torch.randn(*shape, generator=_gen(seed + 1))


_PROGRAMS: dict = {}


def _program(name: str, dynamic: bool = False, seed: int = 0):
    """The exported program of one model (cached per process), as a fresh deep copy, with its probe input."""
    from torch.export import Dim, export
    key = (name, dynamic, seed)
    if key not in _PROGRAMS:
        model, x = _model(name, seed)
        shapes = ({0: Dim("batch")},) if dynamic else None
        _PROGRAMS[key] = (export(model, (x,), dynamic_shapes=shapes), model, x)
    ep, model, x = _PROGRAMS[key]
    with warnings.catch_warnings():   # torch's own FutureWarning about its pytree specs, copying a program
        warnings.simplefilter("ignore", FutureWarning)
        return copy.deepcopy(ep), model, x


def _ep_case(label: str, name: str, dynamic: bool = False, seed: int = 0, **data: Any) -> Case:
    return Case(label, lambda: (_program(name, dynamic, seed)[0],),
                data={"model": name, "dynamic": dynamic, "seed": seed, **data})


def _ep_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [_ep_case("PatchNet(6), exported", "PatchNet(6)"),
                _ep_case("Tagger(8), exported with a dynamic batch", "Tagger(8)", dynamic=True)]
    return [
        _ep_case("RandomStack seed 5, exported (unseen)", "RandomStack seed 5"),
        _ep_case("RandomStack seed 12, exported with a dynamic batch (unseen)", "RandomStack seed 12", dynamic=True),
        _ep_case("CondRouter(4): torch.cond with two subgraphs", "CondRouter(4)"),
        _ep_case("Sequence(5, 4), exported with a dynamic batch", "Sequence(5, 4)", dynamic=True),
    ]


def _expect_program(result: Any, function: str) -> None:
    from torch.export import ExportedProgram
    if not isinstance(result, ExportedProgram):
        raise CheckFailed(f"{function} returned {type(result).__name__}, expected a torch.export.ExportedProgram",
                          "return the value instead of printing it" if result is None else
                          "return the ExportedProgram itself: ep.module() is a GraphModule made from it, without "
                          "its graph signature")


def _histogram(graph: fx.Graph) -> dict:
    out: dict = {}
    for n in graph.nodes:
        if n.op == "call_function":
            out[str(n.target)] = out.get(str(n.target), 0) + 1
    return out


def _dict_diff(got: dict, expected: dict) -> str:
    missing = [k for k in expected if k not in got]
    extra = [k for k in got if k not in expected]
    wrong = [k for k in expected if k in got and got[k] != expected[k]]
    parts = []
    if missing:
        parts.append(f"missing {', '.join(repr(k) for k in missing[:4])}" + (" ..." if len(missing) > 4 else ""))
    if extra:
        parts.append(f"unexpected {', '.join(repr(k) for k in extra[:4])}" + (" ..." if len(extra) > 4 else ""))
    if wrong:
        k = wrong[0]
        parts.append(f"{k!r} is {got[k]!r}, expected {expected[k]!r}")
    return "; ".join(parts)


def _plain_dict(result: Any, function: str, what: str) -> dict:
    if not isinstance(result, dict):
        raise CheckFailed(f"{function} returned {type(result).__name__}, expected a dict {what}",
                          "return the value instead of printing it" if result is None else
                          f"build and return a dict {what}")
    out = {}
    for k, v in result.items():
        if not isinstance(k, str):
            raise CheckFailed(f"{function}: the key {k!r} is a {type(k).__name__}, expected a str",
                              "use str(...) of the target or the node's name as the key")
        out[k] = v
    return out


# =============================================================================== export_dynamic_batch

def _export_cases(hidden: bool) -> list[Case]:
    def case(name: str, seed: int = 0, batches: tuple = (1, 5)):
        def make():
            model, x = _model(name, seed)
            object.__setattr__(model, PROBE, [torch.randn(b, *x.shape[1:], generator=_gen(seed + b)) for b in batches])
            return model, x
        return make

    if not hidden:
        return [Case("PatchNet(6) on a batch of 2", case("PatchNet(6)")),
                Case("Tagger(8) on a batch of 3 (its argument is `inp`)", case("Tagger(8)"))]
    return [
        Case("RandomStack seed 5 on a batch of 3 (unseen)", case("RandomStack seed 5", 0, (2, 9))),
        Case("Sequence(5, 4): only the batch dimension may vary", case("Sequence(5, 4)", 0, (1, 6))),
    ]


def _export_evidence(result: Any, args: tuple) -> dict:
    model, x = args
    _expect_program(result, "export_dynamic_batch")
    user = [n for n in result.graph.nodes if n.op == "placeholder"
            and n.name in set(result.graph_signature.user_inputs)]
    shape = None
    if len(user) == 1 and isinstance(user[0].meta.get("val"), torch.Tensor):
        shape = [s if isinstance(s, int) else "symbolic" for s in user[0].meta["val"].shape]
    outputs = {}
    runner = result.module()
    for probe in getattr(model, PROBE):
        try:
            with torch.no_grad():
                outputs[str(probe.shape[0])] = runner(probe)
        except Exception as exc:
            outputs[str(probe.shape[0])] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    return {"inputs": len(user), "shape": shape, "outputs": outputs}


def _export_judge(case: Case, ev: dict) -> None:
    model, x = case.make()
    expect(ev["inputs"] == 1, f"the program has {ev['inputs']} user inputs, expected 1 (the example input)",
           "export(model, (example_input,), ...): the args of export are a tuple of the inputs")
    want = ["symbolic"] + [int(s) for s in x.shape[1:]]
    shape = ev["shape"]
    if shape is not None and shape != want:
        if shape[0] != "symbolic":
            raise CheckFailed(f"the input placeholder's shape is {tuple(shape)}: dimension 0 is fixed at "
                              f"{shape[0]}, expected a symbolic batch size",
                              "mark dimension 0 dynamic: dynamic_shapes=({0: Dim(\"batch\")},)")
        raise CheckFailed(f"the input placeholder's shape is {tuple(shape)}, expected {tuple(want)}: only "
                          "dimension 0 is dynamic", "only dimension 0, the batch, is dynamic: ({0: Dim(\"batch\")},)")
    with torch.no_grad():
        for probe in getattr(model, PROBE):
            got = ev["outputs"][str(probe.shape[0])]
            if isinstance(got, str):
                raise CheckFailed(f"the program's module() on a batch of {probe.shape[0]} raised {got}",
                                  "mark dimension 0 dynamic: dynamic_shapes=({0: Dim(\"batch\")},)")
            expected = model(probe)
            expect(isinstance(got, torch.Tensor) and got.shape == expected.shape
                   and torch.allclose(got, expected, rtol=1e-4, atol=1e-5),
                   f"on a batch of {probe.shape[0]} the program's output differs from the model's",
                   "export the model as it is, in the mode it is in")


# ===================================================================================== aten_histogram

def _histogram_evidence(result: Any, args: tuple) -> dict:
    got = _plain_dict(result, "aten_histogram", "from str(node.target) to a count")
    return {k: v if type(v) is int else repr(v)[:80] for k, v in got.items()}


def _histogram_judge(case: Case, got: dict) -> None:
    ep, = case.make()
    expected = _histogram(ep.graph)
    if got == expected:
        return
    bad = [k for k, v in got.items() if type(v) is not int]
    if bad:
        raise CheckFailed(f"the count of {bad[0]!r} is {got[bad[0]]}, expected an int",
                          "count with integers: counts[key] = counts.get(key, 0) + 1")
    names = {n.name for n in ep.graph.nodes if n.op == "call_function"}
    if any(k in names and k not in expected for k in got):
        hint = "key by str(node.target), the operator overload, not by node.name"
    elif any(k in {n.name for n in ep.graph.nodes if n.op != "call_function"} or k == "output" for k in got):
        hint = "count call_function nodes only: placeholders, get_attr and output are not operators"
    elif any(k.startswith("aten.") and k.count(".") == 1 for k in got):
        hint = ("key by the overload, str(node.target) such as 'aten.linear.default', not by the operator packet "
                "(overloadpacket)")
    elif any(not k.startswith("aten.") for k in expected if k not in got) and all(k.startswith("aten.") for k in got):
        hint = "every call_function node counts, operator.getitem and torch.cond included, not only aten ones"
    elif sum(got.values()) != sum(expected.values()) and set(got) - set(expected):
        hint = "count the graph as it is: run_decompositions() makes another program with other operators"
    else:
        hint = "key by str(node.target), for example 'aten.linear.default'"
    raise CheckFailed(f"the histogram differs: {_dict_diff(got, expected)}", hint)


# ============================================================================= parameter_placeholders

def _params_evidence(result: Any, args: tuple) -> dict:
    got = _plain_dict(result, "parameter_placeholders", "from placeholder name to qualified name")
    return {k: v if type(v) is str else repr(v)[:80] for k, v in got.items()}


def _params_judge(case: Case, got: dict) -> None:
    ep, = case.make()
    sig = ep.graph_signature
    params, buffers = dict(sig.inputs_to_parameters), dict(sig.inputs_to_buffers)
    expected = {**params, **buffers}
    if got == expected:
        return
    diff = _dict_diff(got, expected)
    constants = dict(getattr(sig, "inputs_to_lifted_tensor_constants", {}) or {})
    if got and set(got) <= set(expected.values()) and set(got.values()) <= set(expected):
        hint = "the keys are placeholder names (p_fc_weight), the values the qualified names (fc.weight)"
    elif any(k in sig.user_inputs for k in got):
        hint = "user inputs carry no parameter or buffer: leave them out (graph_signature.user_inputs)"
    elif any(k in constants for k in got):
        hint = ("a lifted constant (a plain tensor attribute, placeholder c_...) is neither a parameter nor a "
                "buffer: leave it out")
    elif any(k in buffers and buffers[k] not in ep.state_dict for k in expected if k not in got or got[k] != expected[k]):
        hint = ("a non-persistent buffer is a buffer too, though ep.state_dict leaves it out: read the names from "
                "ep.graph_signature.inputs_to_buffers")
    elif set(got) == set(params):
        hint = "buffers too: graph_signature.inputs_to_buffers, next to inputs_to_parameters"
    else:
        hint = ("read the names from ep.graph_signature (inputs_to_parameters, inputs_to_buffers): a placeholder's "
                "name does not say where its dots were, and the state_dict lacks non-persistent buffers")
    raise CheckFailed(f"the mapping differs: {diff}", hint)


# ======================================================================================== node_shapes

def _shapes_evidence(result: Any, args: tuple) -> dict:
    got = _plain_dict(result, "node_shapes", "from node name to shape")
    out = {}
    for k, v in got.items():
        if type(v) is tuple and all(type(s) in (int, str) for s in v):
            out[k] = v
        else:
            out[k] = {"type": type(v).__name__, "repr": repr(v)[:80]}
    return out


def _reference_shapes(ep) -> dict:
    out = {}
    for n in ep.graph.nodes:
        val = n.meta.get("val")
        if isinstance(val, torch.Tensor):
            out[n.name] = tuple(s if isinstance(s, int) else str(s) for s in val.shape)
    return out


def _shapes_judge(case: Case, got: dict) -> None:
    ep, = case.make()
    expected = _reference_shapes(ep)
    if got == expected:
        return
    bad = [k for k, v in got.items() if isinstance(v, dict)]
    if bad:
        raise CheckFailed(f"the shape of {bad[0]!r} is a {got[bad[0]]['type']} ({got[bad[0]]['repr']}), expected a "
                          "tuple of int and str", "make each shape a tuple: tuple(... for s in val.shape)")
    placeholders = {n.name for n in ep.graph.nodes if n.op == "placeholder"}
    nodes = {n.name: n for n in ep.graph.nodes}
    missing = [k for k in expected if k not in got]
    extra = [k for k in got if k not in expected]
    wrong = [k for k in expected if k in got and got[k] != expected[k]]
    constants = set(dict(getattr(ep.graph_signature, "inputs_to_lifted_tensor_constants", {}) or {}))
    if missing and all(k in constants for k in missing):
        hint = ("a lifted constant's placeholder (c_...) has meta[\"val\"] but no tensor_meta: read node.meta[\"val\"] "
                "of every node")
    elif missing and all(k in placeholders for k in missing):
        hint = "placeholders carry meta[\"val\"] too: parameters, buffers and the input are nodes with shapes"
    elif extra and all(k in nodes for k in extra):
        hint = ("only nodes whose meta[\"val\"] is a tensor: a node that returns several tensors (a list or "
                "tuple), the output node and get_attr nodes are left out")
    elif missing:
        hint = "read node.meta[\"val\"] of every node (a constant's node has no tensor_meta, but it has val)"
    elif wrong:
        k = wrong[0]
        g, e = got[k], expected[k]
        if len(g) == len(e) and all(isinstance(a, str) and str(b) == a for a, b in zip(g, e)) and g != e:
            hint = "static sizes are ints: keep an int as it is and make only a symbolic size a str"
        elif len(g) == len(e) and any(isinstance(b, str) and not isinstance(a, str) for a, b in zip(g, e)):
            hint = ("a symbolic size is a torch.SymInt: return str(size) for it (int() would fix it to the example's "
                    "value), and read node.meta[\"val\"] instead of running the program")
        else:
            hint = "tuple(val.shape) with each size an int, or str(size) where it is symbolic"
    else:
        hint = "node.meta[\"val\"].shape of every node whose val is a tensor"
    raise CheckFailed(f"the shapes differ: {_dict_diff(got, expected)}", hint)


# ======================================================================================= swap_aten_op

# (model, old, new, name of the reference model's operator change)
SWAPS = {
    "relu -> sigmoid": (aten.relu.default, aten.sigmoid.default),
    "sum.dim_IntList -> mean.dim": (aten.sum.dim_IntList, aten.mean.dim),
    "gelu -> relu": (aten.gelu.default, aten.relu.default),
}


def _swap_cases(hidden: bool) -> list[Case]:
    def case(label: str, name: str, swap: str, dynamic: bool = False) -> Case:
        old, new = SWAPS[swap]
        def make():
            ep, _, x = _program(name, dynamic)
            object.__setattr__(ep, PROBE, x)
            return ep, old, new
        return Case(label, make, data={"model": name, "dynamic": dynamic, "swap": swap})

    if not hidden:
        return [case("PatchNet(6): relu -> sigmoid", "PatchNet(6)", "relu -> sigmoid"),
                case("Tagger(8): relu -> sigmoid (two relus and a leaky_relu)", "Tagger(8)", "relu -> sigmoid")]
    return [
        case("Sums(5): sum.dim_IntList -> mean.dim (sum.default stays)", "Sums(5)", "sum.dim_IntList -> mean.dim"),
        case("RandomStack seed 12 with a dynamic batch: relu -> sigmoid (unseen)", "RandomStack seed 12",
             "relu -> sigmoid", dynamic=True),
        case("Tagger(6): gelu -> relu, an operator the program does not call", "Tagger(6)", "gelu -> relu"),
    ]


def _swap_evidence(result: Any, args: tuple) -> dict:
    _expect_program(result, "swap_aten_op")
    ev: dict = {"histogram": _histogram(result.graph), "lint": lint_error(result.graph_module),
                "stale": stale_code(result.graph_module)}
    ev["signature"] = [str(s.arg.name) for s in result.graph_signature.input_specs]
    ev["nodes"] = [[n.op, n.name] for n in result.graph.nodes]
    ev["output"] = _swap_output(result, getattr(args[0], PROBE))
    return ev


def _swap_output(ep, x) -> Any:
    try:
        with torch.no_grad():
            return ep.module()(x)
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"


def _swap_judge(case: Case, ev: dict) -> None:
    ep, old, new = case.make()
    x = getattr(ep, PROBE)
    before = _histogram(ep.graph)
    expected = dict(before)
    moved = expected.pop(str(old), 0)
    if moved:
        expected[str(new)] = expected.get(str(new), 0) + moved
    got = ev["histogram"]
    if got != expected:
        left = got.get(str(old), 0)
        if left == moved and moved and got == before:
            hint = ("nothing changed in ep.graph: edit the nodes of ep.graph itself (ep.module() makes a copy), "
                    "and return ep")
        elif 0 < left < moved:
            hint = "every call_function node targeting old: do not stop at the first one"
        else:
            hint = ("compare node.target == old, the exact overload: other overloads of the operator and other "
                    "operators whose names contain it stay")
        raise CheckFailed(f"after the swap the graph calls {_dict_diff(got, expected)}", hint)
    expect_lint(ev, "change node.target only; do not add or erase nodes")
    expect(not ev["stale"], "ep.graph_module.code does not match its graph: the generated code is stale",
           "call ep.graph_module.recompile() after changing the targets")
    expect(ev["nodes"] == [[n.op, n.name] for n in ep.graph.nodes],
           "the nodes of the program changed (names or order), expected only targets to change",
           "change node.target in place; keep every node")
    expect(ev["signature"] == [str(s.arg.name) for s in ep.graph_signature.input_specs],
           "the program's graph signature changed", "change node targets only")
    # the numbers: the judge's own swap of a fresh copy, run through module()
    for node in ep.graph.nodes:
        if node.op == "call_function" and node.target == old:
            node.target = new
    ep.graph_module.recompile()
    reference = _swap_output(ep, x)
    got = ev["output"]
    if isinstance(got, str):
        raise CheckFailed(f"the returned program's module() raised {got}",
                          "change node.target only, to an overload that takes the same arguments")
    expect(isinstance(reference, torch.Tensor) and got.shape == reference.shape
           and torch.allclose(got, reference, rtol=1e-5, atol=1e-6),
           "the returned program's module() computes something else than the program with the swap",
           "change node.target of the matching nodes, nothing else")


CHECKS = {
    "export_dynamic_batch": Check("export_dynamic_batch", _export_cases, _export_evidence, _export_judge,
                                  timeout=120.0, unchanged="always"),
    "aten_histogram": Check("aten_histogram", _ep_cases, _histogram_evidence, _histogram_judge, timeout=120.0),
    "parameter_placeholders": Check("parameter_placeholders", _ep_cases, _params_evidence, _params_judge,
                                    timeout=120.0),
    "node_shapes": Check("node_shapes", _ep_cases, _shapes_evidence, _shapes_judge, timeout=120.0),
    "swap_aten_op": Check("swap_aten_op", _swap_cases, _swap_evidence, _swap_judge, timeout=120.0),
}
