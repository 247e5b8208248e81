"""Checks of ex11_pt2e: prepare_pt2e_qat, pt2e_fake_quant_count, pt2e_finetune, to_qdq, qdq_counts.

The reference flow is the one of lesson 11: `torch.export.export(model.train(), example_inputs).module()`, an
`X86InductorQuantizer` set to `get_default_x86_inductor_quantization_config(is_qat=True)`, `prepare_qat_pt2e`,
training, `move_exported_model_to_eval`, `convert_pt2e`, all from torchao's `torchao.quantization.pt2e`.

Exporting and preparing cost tenths of a second, moving a model to eval a second or more (it pattern-matches
with export), so the models are small linear nets without batch norm (whose QAT folding makes `convert_pt2e`
take tens of seconds), every prepared model is built once per process and deep-copied for each case
(`_fresh`), and every reference is computed once per case (`_reference`). The functions that receive a
prepared model (`pt2e_fake_quant_count`, `pt2e_finetune`, `to_qdq`) receive one prepared by the reference,
never by the learner's `prepare_pt2e_qat`, so each test charges for its own function only.

torch and torchao print deprecation and other warnings here; `run_check` silences learner code and `_silent()`
the references, so a warning never decides a verdict. No check compiles with inductor.
"""
from __future__ import annotations

import contextlib
import copy
import warnings
from collections import Counter
from typing import Any, Callable

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from fxplayground import DropoutNet, Net, QATNet

from autograder.checks.framework import Case, Check, CheckFailed
from autograder.checks.evidence import expect_type, qualified
from autograder.checks.randmodels import random_mlp

with warnings.catch_warnings():  # torchao's import logs and warns about kernels this CPU build lacks
    warnings.simplefilter("ignore")
    from torchao.quantization.pt2e import (FakeQuantizeBase, FakeQuantize, FixedQParamsFakeQuantize,
                                           FixedQParamsObserver, FusedMovingAvgObsFakeQuantize, MinMaxObserver,
                                           ObserverBase, move_exported_model_to_eval)
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e
    from torchao.quantization.pt2e.utils import _disallow_eval_train
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
        X86InductorQuantizer, get_default_x86_inductor_quantization_config)

A = "ex11_pt2e"
QD = torch.ops.quantized_decomposed


# ------------------------------------------------------------------------------------------ helpers

@contextlib.contextmanager
def _silent():
    """Quiet references on one thread (tiny ops run faster on one thread of a busy machine)."""
    threads = torch.get_num_threads()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.set_num_threads(1)
        try:
            yield
        finally:
            torch.set_num_threads(threads)


def _qual(t: type) -> str:
    return f"{t.__module__}.{t.__qualname__}"


def _short(qualname: str | None) -> str:
    return (qualname or "?").rsplit(".", 1)[-1]


def _x(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _seeded(make_model: Callable[[], nn.Module], seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return make_model()


_CACHE: dict[tuple[str, str], Any] = {}
_PROTOTYPES: dict[str, Any] = {}


def _fresh(key: str, build: Callable[[], Any]) -> Any:
    """A deep copy of a prototype built once per process: exporting and preparing cost more than copying."""
    if key not in _PROTOTYPES:
        with _silent():
            _PROTOTYPES[key] = build()
    prototype = _PROTOTYPES[key]
    fresh = copy.deepcopy(prototype)
    if isinstance(fresh, fx.GraphModule) and "train" in vars(prototype):
        # prepare_qat_pt2e makes .train()/.eval() raise on the model it returns; GraphModule.__deepcopy__ drops
        # those instance attributes, so the copy gets them back, as a learner's own prepared model has them.
        _disallow_eval_train(fresh)
    return fresh


def _reference(function: str, case: Case, build: Callable[[Case], Any]) -> Any:
    """The reference of a case, computed once per process (deterministic, seeded)."""
    key = (function, case.label)
    if key not in _CACHE:
        with _silent():
            _CACHE[key] = build(case)
    return _CACHE[key]


def _quantizer(**config: Any) -> X86InductorQuantizer:
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config(**{"is_qat": True, **config}))
    return quantizer


def _prepare_ref(model: nn.Module, example_inputs: tuple, **config: Any) -> fx.GraphModule:
    """Lesson 11's flow. The batch dimension is dynamic, as in the lesson, so that the prepared models the other
    checks hand over train and run on batches of any size."""
    with _silent():
        dynamic = tuple({0: torch.export.Dim("batch")} for _ in example_inputs)
        exported = torch.export.export(model.train(), example_inputs, dynamic_shapes=dynamic).module()
        return prepare_qat_pt2e(exported, _quantizer(**config))


def _run(gm: nn.Module, inputs: tuple, seed: int = 0) -> Any:
    """Outputs of gm on inputs (random ops seeded), as a float tensor; a string says why it could not run.

    Call it last when describing a result: a prepared model updates its fake-quant statistics on every run.
    """
    try:
        torch.manual_seed(seed)
        with torch.no_grad():
            out = gm(*inputs)
        if isinstance(out, (tuple, list)) and len(out) == 1:
            out = out[0]
        if not isinstance(out, torch.Tensor):
            return f"returned {type(out).__name__}, not a tensor"
        return out.detach().float()
    except Exception as exc:  # evidence, not a crash
        return f"{type(exc).__name__}: {str(exc)[:300]}"


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.double() - b.double()).abs().max()) if a.numel() else 0.0


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
    return row


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


# ------------------------------------------------------------------------------------- the models

class SigmoidHead(nn.Module):
    """Linear -> ReLU -> Linear -> sigmoid, with a residual add: patterns Part I's models did not have."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 6)
        self.fc2 = nn.Linear(6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.fc2(torch.relu(self.fc1(x)) + x))


def _qatnet(seed: int = 0) -> nn.Module:
    return _seeded(QATNet, seed)


def _dropout(seed: int = 3) -> nn.Module:
    return _seeded(DropoutNet, seed)


def _prepared(key: str) -> fx.GraphModule:
    """A fresh copy of one of the prepared models every check shares."""
    builds = {
        "QATNet": lambda: _prepare_ref(_qatnet(), (_x(4, 16),)),
        "DropoutNet": lambda: _prepare_ref(_dropout(), (_x(4, 6),)),
        "random 47": lambda: _prepare_ref(random_mlp(47), (_x(3, 8),)),
        "SigmoidHead": lambda: _prepare_ref(_seeded(SigmoidHead, 5), (_x(4, 6),)),
        "QATNet PTQ": lambda: _prepare_ref(_qatnet(), (_x(4, 16),), is_qat=False),
    }
    return _fresh(f"prepared {key}", builds[key])


_SHAPES = {"QATNet": (16, 16), "DropoutNet": (16, 6), "random 47": (12, 8), "SigmoidHead": (16, 6)}


def _calibrated(key: str) -> fx.GraphModule:
    """A prepared model that has seen three batches (its fake-quants hold statistics), with an input to test on."""
    def build():
        prepared = _prepared(key)
        torch.manual_seed(0)
        with torch.no_grad():
            for i in range(3):
                prepared(_x(*_SHAPES[key], seed=10 + i))
        return prepared
    prepared = _fresh(f"calibrated {key}", build)
    prepared.input_for_checks = _x(*_SHAPES[key], seed=11)  # data like the data it has seen
    return prepared


def _converted(key: str) -> fx.GraphModule:
    def build():
        prepared = _calibrated(key)
        move_exported_model_to_eval(prepared)
        return convert_pt2e(prepared)
    return _fresh(f"converted {key}", build)


# --------------------------------------------------------------------------------- prepare_pt2e_qat

def _prep_case(label: str, build: Callable[[], nn.Module], shape: tuple, eval_mode: bool = False) -> Case:
    def make():
        model = build()
        return (model.eval() if eval_mode else model.train()), (_x(*shape, seed=7),)
    return Case(label, make, data={"eval_mode": eval_mode})


def _prep_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [_prep_case("QATNet() in train mode", _qatnet, (4, 16)),
                _prep_case("Net() handed over in eval mode", lambda: _seeded(Net, 1), (4, 8), eval_mode=True)]
    return [
        _prep_case("DropoutNet handed over in eval mode: dropout must train (unseen)", _dropout, (4, 6),
                   eval_mode=True),
        _prep_case("a residual add and a sigmoid head (unseen)", lambda: _seeded(SigmoidHead, 5), (4, 6)),
        _prep_case("random model seed 47: a chain, a branch and a shared layer", lambda: random_mlp(47), (3, 8)),
    ]


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
            "dropouts": _dropouts(result), "outputs": _run(result, args[1])}


def _prep_reference(case: Case) -> dict:
    model, example_inputs = case.make()
    return _prep_evidence(_prepare_ref(model, example_inputs), (model, example_inputs))


QUANTIZER_HINT = ("quantizer = X86InductorQuantizer(); quantizer.set_global("
                  "get_default_x86_inductor_quantization_config(is_qat=True)) and no other option: the defaults "
                  "give uint8 activations over 0..255 and per-channel int8 weights")


def _prep_judge(case: Case, ev: dict) -> None:
    ref = _reference("prepare_pt2e_qat", case, _prep_reference)
    fqs = ev["fake_quants"]
    if not fqs:
        if ev["observers"]:
            name, kind = ev["observers"][0]
            raise CheckFailed(
                f"the graph calls {len(ev['observers'])} observers ({_short(kind)} at '{name}') and no "
                f"fake-quantize module; expected {len(ref['fake_quants'])} fake-quants",
                "configure the quantizer for QAT: get_default_x86_inductor_quantization_config(is_qat=True); "
                "without is_qat=True it inserts observers for post-training calibration")
        if ev["modules"]:
            name, kind = ev["modules"][0]
            raise CheckFailed(
                f"the graph calls modules ('{name}' is a {_short(kind)}) and no fake-quantize module: it is not "
                f"an exported ATen graph",
                "capture the model with torch.export.export(model, example_inputs).module(): PT2E annotates "
                "ATen ops such as aten.linear.default, and finds nothing to quantize in a symbolic_trace graph")
        raise CheckFailed(f"the graph calls no fake-quantize module; expected {len(ref['fake_quants'])}",
                          "give the quantizer a global config before preparing: " + QUANTIZER_HINT)
    got_drop = dict((n, t) for n, t in ev["dropouts"])
    for name, train in ref["dropouts"]:
        if name in got_drop and got_drop[name] != train:
            raise CheckFailed(
                f"node '{name}' runs aten.dropout.default with train={got_drop[name]}, expected train={train}: "
                f"the model was exported in eval mode",
                "export the model in train mode, torch.export.export(model.train(), example_inputs): export "
                "freezes the mode it sees, and QAT trains the result")
    if ev["ops"] != ref["ops"]:
        missing = {k: v for k, v in ref["ops"].items() if ev["ops"].get(k) != v}
        extra = {k: v for k, v in ev["ops"].items() if k not in ref["ops"]}
        what = next(iter(missing.items()), None) or next(iter(extra.items()))
        raise CheckFailed(
            f"the prepared graph calls {what[0]} {ev['ops'].get(what[0], 0)} times, expected "
            f"{ref['ops'].get(what[0], 0)}",
            "export the model you are given in train mode, torch.export.export(model.train(), "
            "example_inputs).module(), and prepare that with prepare_qat_pt2e")
    if len(fqs) != len(ref["fake_quants"]):
        raise CheckFailed(f"the graph calls {len(fqs)} fake-quantize modules, expected {len(ref['fake_quants'])}",
                          QUANTIZER_HINT)
    by_reads = {r["reads"]: r for r in fqs}
    for exp in ref["fake_quants"]:
        got = by_reads.get(exp["reads"])
        if got is None:
            raise CheckFailed(f"no fake-quantize node rounds {exp['reads']}; expected {exp['node']} "
                              f"({_short(exp['class'])})", QUANTIZER_HINT)
        for key in ("class", "dtype", "quant_min", "quant_max", "qscheme", "ch_axis"):
            if got[key] != exp[key]:
                show = _short if key == "class" else (lambda v: v)
                raise CheckFailed(
                    f"the fake-quant '{got['node']}' on {exp['reads']} has {key} {show(got[key])!r}, expected "
                    f"{show(exp[key])!r} ({exp['dtype']} over {exp['quant_min']}..{exp['quant_max']}, "
                    f"{exp['qscheme']})", QUANTIZER_HINT)
    out, exp = ev["outputs"], ref["outputs"]
    if isinstance(out, str):
        raise CheckFailed(f"the prepared model could not run on the example inputs: {out}")
    if out.shape != exp.shape or not torch.allclose(out, exp, rtol=1e-4, atol=1e-5):
        diff = _max_diff(out, exp) if out.shape == exp.shape else float("inf")
        raise CheckFailed(f"outputs of the prepared model differ from the reference's by up to {diff:.3g}",
                          "prepare the model you are given, with its weights as they are")


# ---------------------------------------------------------------------------- pt2e_fake_quant_count

class NotAFakeQuantize(nn.Identity):
    """Named like a fake-quantize module, but it is not one."""


class _Diagnostic(nn.Module):
    """Modules chosen so that each usual mistake gives its own count (see _diagnostic)."""

    def __init__(self) -> None:
        super().__init__()
        self.activation_post_process_0 = FusedMovingAvgObsFakeQuantize()   # called four times
        self.activation_post_process_1 = MinMaxObserver()                  # an observer, named like a fake-quant
        self.weight_fake_quant = FakeQuantize()                            # a FakeQuantize, called twice
        self.sig = FixedQParamsFakeQuantize(observer=FixedQParamsObserver.with_args(
            scale=1 / 256, zero_point=0, dtype=torch.quint8, quant_min=0, quant_max=255))
        self.lin = nn.Linear(4, 4)
        self.deco = NotAFakeQuantize()                                     # a class name that lies
        self.old = torch.ao.quantization.FakeQuantize()                    # torch.ao's, not PT2E's


def _diagnostic() -> fx.GraphModule:
    """Answer 7 (activation_post_process_0 four times, weight_fake_quant twice, sig). Every usual mistake gives
    another count: by the name activation_post_process 5, by 'fake' in the name 2, unique modules 3, every
    registered fake-quant module 6, with observers 8, every call_module 12, exact type
    FusedMovingAvgObsFakeQuantize 4, torch.ao's base class 1, 'FakeQuantize' in the class name 9."""
    torch.manual_seed(11)
    root = _Diagnostic()
    g = fx.Graph()
    h = g.placeholder("x")
    order = ("activation_post_process_0", "lin", "activation_post_process_0", "weight_fake_quant",
             "activation_post_process_1", "sig", "deco", "old", "activation_post_process_0", "weight_fake_quant",
             "lin", "activation_post_process_0")
    for target in order:
        h = g.call_module(target, (h,))
    g.output(h)
    gm = fx.GraphModule(root, g)
    for i in range(3):   # registered, never called (a GraphModule keeps only what its graph calls: add them after)
        gm.add_submodule(f"spare{i}", FusedMovingAvgObsFakeQuantize())
    return gm


def _count_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [Case("a hand-built graph where every usual mistake gives a different count", lambda: (_diagnostic(),)),
                Case("QATNet prepared with prepare_qat_pt2e", lambda: (_prepared("QATNet"),))]
    return [
        Case("DropoutNet prepared (unseen)", lambda: (_prepared("DropoutNet"),)),
        Case("random model seed 47 prepared: a shared layer", lambda: (_prepared("random 47"),)),
        Case("QATNet prepared with a quantizer without is_qat=True: observers, no fake-quant",
             lambda: (_prepared("QATNet PTQ"),)),
        Case("QATNet exported, not prepared", lambda: (_fresh("exported QATNet", lambda: torch.export.export(
            _qatnet(), (_x(4, 16),)).module()),)),
    ]


def _count_evidence(result: Any, args: tuple) -> int:
    if isinstance(result, bool) or not isinstance(result, int):
        raise CheckFailed(f"returned {type(result).__name__} {str(result)[:80]}, expected an int",
                          "return the number of nodes, an int (len(...) or sum(...))")
    return result


def _count_judge(case: Case, got: int) -> None:
    def build(case):
        (gm,) = case.make()
        nodes = [n for n in gm.graph.nodes if n.op == "call_module"]
        mods = [_module_of(gm, n) for n in nodes]
        fq = [isinstance(m, FakeQuantizeBase) for m in mods]
        return {
            "expected": sum(fq),
            "by_app_name": sum(1 for n in nodes if "activation_post_process" in n.target),
            "by_fake_name": sum(1 for n in nodes if "fake" in n.target.lower()),
            "unique": len({n.target for n, f in zip(nodes, fq) if f}),
            "all_modules": sum(1 for m in gm.modules() if isinstance(m, FakeQuantizeBase)),
            "with_observers": sum(1 for m in mods if isinstance(m, (FakeQuantizeBase, ObserverBase))),
            "call_module": len(nodes),
            "exact_fused": sum(1 for m in mods if type(m) is FusedMovingAvgObsFakeQuantize),
            "torch_ao": sum(1 for m in mods if isinstance(m, torch.ao.quantization.FakeQuantizeBase)),
            "class_name": sum(1 for m in mods if "FakeQuantize" in type(m).__name__),
        }
    ref = _reference("pt2e_fake_quant_count", case, build)
    expected = ref["expected"]
    if got == expected:
        return
    diagnoses = {
        "by_app_name": "select nodes by module type, not by name: PT2E names observers activation_post_process_N "
                       "too, and a fake-quant may have any name",
        "by_fake_name": "select nodes by module type, not by name: a fake-quant may have any name",
        "unique": "count nodes: every call_module node counts, also when two nodes call the same fake-quantize "
                  "module",
        "all_modules": "count call_module nodes, not modules: a registered module that no node calls does not count",
        "with_observers": "observers are not fake-quantize modules: test isinstance(module, FakeQuantizeBase), "
                          "not ObserverBase",
        "call_module": "count only call_module nodes whose module is a fake-quantize module, not every "
                       "call_module node (an exported module also calls _guards_fn)",
        "exact_fused": "FakeQuantizeBase is the base class of every fake-quantize module: test "
                       "isinstance(module, FakeQuantizeBase), not type(module) is FusedMovingAvgObsFakeQuantize",
        "torch_ao": "PT2E's fake-quants are torchao's: import FakeQuantizeBase from torchao.quantization.pt2e; "
                    "torch.ao.quantization.FakeQuantizeBase is a different class",
        "class_name": "a class name says nothing: test isinstance(module, FakeQuantizeBase) from "
                      "torchao.quantization.pt2e",
    }
    # A diagnosis is named only when it alone predicts the learner's count: when two mistakes give the same
    # number here, another case tells them apart.
    hits = [text for key, text in diagnoses.items() if ref[key] == got]
    hint = hits[0] if len(hits) == 1 else ("count call_module nodes whose module is an instance of "
                                           "torchao.quantization.pt2e.FakeQuantizeBase")
    raise CheckFailed(f"counted {got} fake-quantize nodes, expected {expected}", hint)


# ------------------------------------------------------------------------------------ pt2e_finetune

def _batches(key: str, n: int, classes: int, seed: int) -> list:
    rows, features = _SHAPES[key]
    out = []
    for b in range(n):
        g = torch.Generator().manual_seed(seed * 100 + b)
        out.append((torch.randn(8, features, generator=g), torch.randint(0, classes, (8,), generator=g)))
    return out


def _ft_case(label: str, key: str, classes: int, n_batches: int, steps: int, lr: float, seed: int = 0) -> Case:
    def make():
        prepared = _prepared(key)
        batches = _batches(key, n_batches, classes, seed)
        torch.manual_seed(seed)   # dropout draws the same masks in the learner's run and the reference's
        return prepared, batches, steps, lr
    return Case(label, make, data={"steps": steps, "lr": lr, "n_batches": n_batches})


def _ft_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [_ft_case("QATNet prepared, 3 batches, steps=5, lr=0.1", "QATNet", 4, 3, 5, 0.1)]
    return [
        _ft_case("DropoutNet prepared (dropout trains), 2 batches, steps=3, lr=0.05 (unseen)", "DropoutNet", 2, 2,
                 3, 0.05, seed=1),
        _ft_case("random model seed 47, 5 batches but steps=2 (only the first two are used)", "random 47", 3, 5, 2,
                 0.2, seed=2),
        _ft_case("QATNet prepared, 2 batches cycled over steps=5, lr=0.3", "QATNet", 4, 2, 5, 0.3, seed=3),
        _ft_case("QATNet prepared, steps=0 (nothing to do)", "QATNet", 4, 2, 0, 0.1, seed=4),
    ]


def _state(model: nn.Module) -> dict:
    return {"params": {n: p.detach().clone() for n, p in model.named_parameters()},
            "buffers": {n: b.detach().clone() for n, b in model.named_buffers() if b.is_floating_point()}}


def _ft_evidence(result: Any, args: tuple) -> dict:
    if result is None:
        raise CheckFailed("pt2e_finetune returned None, expected the prepared model",
                          "return prepared (the same object, trained in place)")
    return {"same": result is args[0], **_state(args[0])}


def _train(prepared: nn.Module, batches: list, steps: int, lr: float, variant: str = "") -> nn.Module:
    """The reference loop; `variant` names a wrong version, used only to recognise a learner's mistake."""
    params = list(prepared.parameters())
    if variant == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(params, lr=lr)
    else:
        opt = torch.optim.SGD(params, lr={"lr_0.01": 0.01, "lr_0.001": 0.001}.get(variant, lr),
                              momentum=0.9 if variant == "momentum" else 0.0)
    n = {"plus_one": steps + 1, "minus_one": max(steps - 1, 0), "no_cycle": min(steps, len(batches)),
         "one_epoch": len(batches)}.get(variant, steps)
    for i in range(n):
        x, y = batches[i % len(batches)]
        if variant != "no_zero_grad":
            opt.zero_grad()
        out = prepared(x)
        loss = F.cross_entropy(out, y, reduction="sum" if variant == "sum" else "mean")
        loss.backward()
        opt.step()
        if variant == "extra_forward":
            with torch.no_grad():
                prepared(x)
    return prepared


CYCLE_HINT = ("do exactly `steps` optimizer steps, cycling through batches: step i uses batches[i % len(batches)], "
              "so steps may exceed len(batches)")

# Wrong versions of the loop, most common first; the judge names the first one the learner's result matches.
VARIANT_HINTS = {
    "plus_one": "do exactly `steps` optimizer steps (range(steps)), not one more",
    "minus_one": "do exactly `steps` optimizer steps (range(steps)), not one fewer",
    "no_cycle": CYCLE_HINT,
    "one_epoch": CYCLE_HINT,
    "no_zero_grad": "zero the gradients every step (optimizer.zero_grad()), or they accumulate",
    "lr_0.01": "use the learning rate `lr` you are given",
    "lr_0.001": "use the learning rate `lr` you are given",
    "adam": "use plain SGD: torch.optim.SGD(prepared.parameters(), lr=lr)",
    "momentum": "use plain SGD without momentum: torch.optim.SGD(prepared.parameters(), lr=lr)",
    "sum": "use the mean cross-entropy over the batch: F.cross_entropy(logits, y) with its default reduction",
    "extra_forward": "run exactly one forward pass per step: every forward pass of a prepared model moves its "
                     "fake-quant statistics, even under torch.no_grad()",
}


def _far(a: dict, b: dict, atol: float = 1e-5, rtol: float = 1e-4) -> str | None:
    """The first tensor of `b` that `a` does not match, or None."""
    if set(a) != set(b):
        missing = sorted(set(b) - set(a))
        return f"tensors {missing[:3]} are missing" if missing else f"unexpected tensors {sorted(set(a) - set(b))[:3]}"
    for name in b:
        x, y = a[name], b[name]
        if x.shape != y.shape:
            return f"'{name}' has shape {tuple(x.shape)}, expected {tuple(y.shape)}"
        if not torch.allclose(x.double(), y.double(), atol=atol, rtol=rtol, equal_nan=True):
            return f"'{name}' differs by up to {_max_diff(x, y):.3g}"
    return None


def _ft_reference(case: Case) -> dict:
    prepared, batches, steps, lr = case.make()
    initial = _state(prepared)
    _train(prepared, batches, steps, lr)
    return {"initial": initial, "final": _state(prepared)}


def _variant(case: Case, variant: str) -> dict | None:
    def build(case):
        prepared, batches, steps, lr = case.make()
        try:
            return _state(_train(prepared, batches, steps, lr, variant))
        except Exception:
            return None
    return _reference(f"pt2e_finetune {variant}", case, build)


def _ft_judge(case: Case, ev: dict) -> None:
    ref = _reference("pt2e_finetune", case, _ft_reference)
    if not ev["same"]:
        raise CheckFailed("returned a different object from the prepared model it was given",
                          "train prepared in place and return prepared itself (not a copy)")
    steps = case.data["steps"]
    mismatch = _far(ev["params"], ref["final"]["params"])
    if mismatch is not None:
        if steps > 0 and _far(ev["params"], ref["initial"]["params"], atol=0, rtol=0) is None:
            raise CheckFailed(f"the parameters of the prepared model did not change after {steps} steps",
                              "train prepared in place: optimizer = torch.optim.SGD(prepared.parameters(), lr=lr); "
                              "each step zero_grad, loss.backward(), optimizer.step()")
        hint = next((text for variant, text in VARIANT_HINTS.items()
                     if (state := _variant(case, variant)) is not None and _far(ev["params"], state["params"]) is None
                     and _far(ev["buffers"], state["buffers"]) is None), None)
        raise CheckFailed(f"after {steps} steps the parameters differ from plain SGD on cross-entropy: {mismatch}",
                          hint or "each step: x, y = batches[i % len(batches)]; optimizer.zero_grad(); "
                                  "F.cross_entropy(prepared(x), y).backward(); optimizer.step(), with "
                                  "torch.optim.SGD(prepared.parameters(), lr=lr)")
    mismatch = _far(ev["buffers"], ref["final"]["buffers"])
    if mismatch is not None:
        raise CheckFailed(f"the parameters match but the fake-quant statistics do not: {mismatch}",
                          VARIANT_HINTS["extra_forward"])


# ------------------------------------------------------------------------------------------- to_qdq

def _qdq_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [Case("QATNet prepared and calibrated", lambda: (_calibrated("QATNet"),))]
    return [
        Case("DropoutNet prepared and calibrated: dropout must stop (unseen)", lambda: (_calibrated("DropoutNet"),)),
        Case("a residual add and a sigmoid head, prepared and calibrated (unseen)",
             lambda: (_calibrated("SigmoidHead"),)),
    ]


def _qdq_evidence(result: Any, args: tuple) -> dict:
    expect_type(result, fx.GraphModule, "to_qdq", "a torch.fx.GraphModule (what convert_pt2e returns)")
    left = [n.name for n in result.graph.nodes if n.op == "call_module"
            and isinstance(_module_of(result, n), (FakeQuantizeBase, ObserverBase))]
    x = getattr(args[0], "input_for_checks", None)
    ev = {"left": left[:5], "ops": _ops(result), "dropouts": _dropouts(result)}
    ev["outputs"] = None if x is None else [_run(result, (x,), seed=1), _run(result, (x,), seed=2)]
    return ev


def _qdq_reference(case: Case) -> dict:
    (prepared,) = case.make()
    x = prepared.input_for_checks
    move_exported_model_to_eval(prepared)
    converted = convert_pt2e(prepared)
    return {"ops": _ops(converted), "dropouts": _dropouts(converted), "outputs": _run(converted, (x,))}


def _qdq_judge(case: Case, ev: dict) -> None:
    ref = _reference("to_qdq", case, _qdq_reference)
    if ev["left"]:
        raise CheckFailed(f"the result still runs fake-quantize/observer modules ({', '.join(ev['left'])})",
                          "convert with convert_pt2e and return the GraphModule it returns")
    got_drop = dict((n, t) for n, t in ev["dropouts"])
    for name, train in ref["dropouts"]:
        if got_drop.get(name) is True:
            raise CheckFailed(f"node '{name}' still runs aten.dropout.default with train=True, expected train=False",
                              "call move_exported_model_to_eval(prepared) before convert_pt2e: it rewrites the "
                              "train-mode ops of an exported graph into their eval forms")
    if ev["ops"] != ref["ops"]:
        keys = [k for k in {**ref["ops"], **ev["ops"]} if ev["ops"].get(k, 0) != ref["ops"].get(k, 0)]
        k = keys[0]
        hint = "convert the moved-to-eval model with convert_pt2e(prepared) and its default options"
        if k.startswith("quantized_decomposed.quantize_per_channel") and ev["ops"].get(k, 0) > ref["ops"].get(k, 0):
            hint = ("keep convert_pt2e's default fold_quantize=True: the weights' quantize nodes then run once, "
                    "at convert time, and the graph reads int8 weights")
        raise CheckFailed(f"the converted graph calls {k} {ev['ops'].get(k, 0)} times, expected "
                          f"{ref['ops'].get(k, 0)}", hint)
    outs, exp = ev["outputs"], ref["outputs"]
    if outs is None or isinstance(outs[0], str):
        raise CheckFailed(f"the converted model could not run: {outs[0] if outs else 'no input'}")
    out = outs[0]
    if out.shape != exp.shape:
        raise CheckFailed(f"output shape {tuple(out.shape)}, expected {tuple(exp.shape)}")
    if not torch.equal(outs[0], outs[1]):
        raise CheckFailed("the converted model gives different outputs on the same input in two runs: a random op "
                          "still trains", "call move_exported_model_to_eval(prepared) before convert_pt2e")
    if not torch.allclose(out, exp, rtol=1e-4, atol=1e-5):
        raise CheckFailed(f"outputs differ from the reference's converted model by up to {_max_diff(out, exp):.3g}",
                          "do not run the prepared model on new data before converting: every run moves its "
                          "fake-quant statistics, and with them the scales convert_pt2e uses")


# --------------------------------------------------------------------------------------- qdq_counts

def _handmade_qdq(per_channel_only: bool = False) -> fx.GraphModule:
    """quantized_decomposed nodes in every form the counts must cover, beside decoys that are not Q/DQ nodes.

    Answer (4, 5); only .default overloads give (3, 4), only per-tensor ops (3, 3), 'quantize' anywhere in the
    target's text (10, 5), the eager torch.quantize_per_tensor counted too (5, 5). With per_channel_only: (2, 3),
    and only per-tensor ops give (0, 0).
    """
    root = nn.Module()
    root.register_buffer("scales", torch.tensor([0.1, 0.2, 0.3, 0.4]))
    root.register_buffer("zps", torch.zeros(4, dtype=torch.int64))
    root.register_buffer("s", torch.tensor(0.05))
    root.register_buffer("z", torch.tensor(0, dtype=torch.int64))
    g = fx.Graph()
    x = g.placeholder("x")
    sc, zp, s, z = (g.get_attr(n) for n in ("scales", "zps", "s", "z"))
    lo, hi = -128, 127
    h = x
    if per_channel_only:
        for _ in range(2):
            q = g.call_function(QD.quantize_per_channel.default, (h, sc, zp, 1, lo, hi, torch.int8))
            h = g.call_function(QD.dequantize_per_channel.default, (q, sc, zp, 1, lo, hi, torch.int8))
        h = g.call_function(QD.dequantize_per_channel.default,
                            (g.call_function(torch.ops.aten.round.default, (h,)), sc, zp, 1, lo, hi, torch.int8))
    else:
        for _ in range(2):
            q = g.call_function(QD.quantize_per_tensor.default, (h, 0.05, 0, lo, hi, torch.int8))
            h = g.call_function(QD.dequantize_per_tensor.default, (q, 0.05, 0, lo, hi, torch.int8))
        q = g.call_function(QD.quantize_per_tensor.tensor, (h, s, z, lo, hi, torch.int8))
        h = g.call_function(QD.dequantize_per_tensor.tensor, (q, s, z, lo, hi, torch.int8))
        q = g.call_function(QD.quantize_per_channel.default, (h, sc, zp, 1, lo, hi, torch.int8))
        h = g.call_function(QD.dequantize_per_channel.default, (q, sc, zp, 1, lo, hi, torch.int8))
        w = g.call_function(QD.dequantize_per_channel.default,
                            (g.call_function(torch.ops.aten.round.default, (h,)), sc, zp, 1, lo, hi, torch.int8))
        eager = g.call_function(torch.quantize_per_tensor, (w, 0.1, 0, torch.qint8))
        h = g.call_method("dequantize", (eager,))
        decoy = g.call_function(torch.ops.aten.mul.Tensor, (h, 1.0))
        decoy.name = "quantize_scale"
        h = decoy
    g.output(h)
    return fx.GraphModule(root, g)


def _count_qdq_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [Case("QATNet converted with convert_pt2e", lambda: (_converted("QATNet"),)),
                Case("a hand-built graph: per-tensor and per-channel, .default and .tensor overloads, decoys",
                     lambda: (_handmade_qdq(),))]
    return [
        Case("DropoutNet converted (unseen)", lambda: (_converted("DropoutNet"),)),
        Case("a residual add and a sigmoid head, converted (unseen)", lambda: (_converted("SigmoidHead"),)),
        Case("a hand-built graph with per-channel nodes only", lambda: (_handmade_qdq(per_channel_only=True),)),
        Case("QATNet exported, never quantized", lambda: (_fresh("exported QATNet", lambda: torch.export.export(
            _qatnet(), (_x(4, 16),)).module()),)),
    ]


def _qdq_count_evidence(result: Any, args: tuple) -> list:
    if not isinstance(result, (tuple, list)) or len(result) != 2 or \
            any(isinstance(v, bool) or not isinstance(v, int) for v in result):
        raise CheckFailed(f"returned {type(result).__name__} {str(result)[:80]}, expected a tuple of two ints",
                          "return (number of quantize nodes, number of dequantize nodes)")
    return [int(result[0]), int(result[1])]


def _qdq_count_judge(case: Case, got: list) -> None:
    def build(case):
        (gm,) = case.make()
        fn = [n for n in gm.graph.nodes if n.op == "call_function"]
        text = [str(n.target) for n in fn]
        def count(pred):
            return sum(1 for t in text if pred(t))
        qd = "quantized_decomposed."
        return {
            "expected": [count(lambda t: t.startswith(qd + "quantize_per_")),
                         count(lambda t: t.startswith(qd + "dequantize_per_"))],
            "default_only": [count(lambda t: t.startswith(qd + "quantize_per_") and t.endswith(".default")),
                             count(lambda t: t.startswith(qd + "dequantize_per_") and t.endswith(".default"))],
            "per_tensor_only": [count(lambda t: t.startswith(qd + "quantize_per_tensor")),
                                count(lambda t: t.startswith(qd + "dequantize_per_tensor"))],
            "substring": [count(lambda t: "quantize" in t), count(lambda t: "dequantize" in t)],
            "eager_too": [count(lambda t: "quantize_per_" in t and "dequantize" not in t),
                          count(lambda t: "dequantize_per_" in t)],
        }
    ref = _reference("qdq_counts", case, build)
    expected = ref["expected"]
    if got == expected:
        return
    diagnoses = {
        "default_only": "count every overload: quantize_per_tensor.tensor (scale and zero point as tensors) is a "
                        "quantize node too; compare the op's name, str(node.target), not one overload object",
        "per_tensor_only": "count per-channel nodes too: dequantize_per_channel dequantizes the int8 weights",
        "substring": "'quantize' is a substring of 'dequantize': match the start of the op's name, "
                     "quantized_decomposed.quantize_per_ and quantized_decomposed.dequantize_per_",
        "eager_too": "count only quantized_decomposed ops: torch.quantize_per_tensor is the eager quantize "
                     "function, not a Q/DQ node",
    }
    if got == expected[::-1]:
        hits = ["return (quantize, dequantize), in that order"]
    else:
        hits = [text for key, text in diagnoses.items() if ref[key] == got]
    hint = hits[0] if len(hits) == 1 else ("count call_function nodes whose str(node.target) starts with "
                                           "quantized_decomposed.quantize_per_ and "
                                           "quantized_decomposed.dequantize_per_")
    raise CheckFailed(f"counted {tuple(got)} (quantize, dequantize) nodes, expected {tuple(expected)}", hint)


CHECKS = {
    "prepare_pt2e_qat": Check("prepare_pt2e_qat", _prep_cases, _prep_evidence, _prep_judge, unchanged="weights"),
    "pt2e_fake_quant_count": Check("pt2e_fake_quant_count", _count_cases, _count_evidence, _count_judge,
                                   unchanged="always"),
    "pt2e_finetune": Check("pt2e_finetune", _ft_cases, _ft_evidence, _ft_judge),
    "to_qdq": Check("to_qdq", _qdq_cases, _qdq_evidence, _qdq_judge),
    "qdq_counts": Check("qdq_counts", _count_qdq_cases, _qdq_count_evidence, _qdq_count_judge, unchanged="always"),
}
