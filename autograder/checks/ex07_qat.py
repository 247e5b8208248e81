"""Checks of ex07_qat: prepare_for_qat, fake_quant_count, qat_finetune, to_int8, state_dict_bytes.

Every judge rebuilds the case and runs the reference (the torch.ao.quantization FX flow) on it, then compares
plain evidence with plain evidence: the same `evidence` function describes the learner's result and the
reference's, so the two are compared field by field. References are cached per case label: they are
deterministic, and preparing a model for QAT is not free.

torch 2.13 prints DeprecationWarning/UserWarning/FutureWarning from torch.ao.quantization on every prepare
and convert; `run_check` silences learner code, and `_silent()` silences the references, so a warning never
decides a verdict.
"""
from __future__ import annotations

import contextlib
import copy
import io
import pickle
import warnings
from typing import Any, Callable

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F
from torch.ao.quantization import (FakeQuantizeBase, FusedMovingAvgObsFakeQuantize, MinMaxObserver,
                                   MovingAverageMinMaxObserver, ObserverBase, disable_observer,
                                   get_default_qat_qconfig_mapping, get_default_qconfig_mapping)
from torch.ao.quantization._learnable_fake_quantize import _LearnableFakeQuantize
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx, prepare_qat_fx

from fxplayground import ConvBNNet, DropoutNet, Net, QATNet

from autograder.checks.framework import Case, Check, CheckFailed
from autograder.checks.evidence import describe_graph, expect, expect_type, max_difference
from autograder.checks.randmodels import RandomMLP, random_mlp

A = "ex07_qat"


# ------------------------------------------------------------------------------------------ helpers

@contextlib.contextmanager
def _silent():
    """Quiet and quick references: torch.ao.quantization warns on every call in torch 2.13, and on a busy
    machine tiny fake-quant ops run about ten times faster on one thread than on several."""
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


_CACHE: dict[tuple[str, str], Any] = {}
_PROTOTYPES: dict[str, Any] = {}


def _fresh(key: str, build: Callable[[], Any]) -> Any:
    """A deep copy of a prototype built once per process: preparing costs ~10x more than copying."""
    if key not in _PROTOTYPES:
        with _silent():
            _PROTOTYPES[key] = build()
    return copy.deepcopy(_PROTOTYPES[key])


def _reference(function: str, case: Case, build: Callable[[Case], Any]) -> Any:
    """The reference evidence of a case, computed once per process (deterministic, seeded)."""
    key = (function, case.label)
    if key not in _CACHE:
        with _silent():
            _CACHE[key] = build(case)
    return _CACHE[key]


def _prepare_ref(model: nn.Module, example_inputs: tuple, backend: str = "x86") -> fx.GraphModule:
    with _silent():
        return prepare_qat_fx(model.train(), get_default_qat_qconfig_mapping(backend), example_inputs)


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


def _skeleton(graph: list[dict]) -> list[tuple]:
    """What must match node by node: opcode, target, module type and the non-node arguments."""
    return [(n["op"], n["target"], n.get("module_type"), repr(n["args"]), repr(n["kwargs"])) for n in graph]


def _node_text(row: tuple) -> str:
    op, target, mtype, args, kwargs = row
    kind = f" ({_short(mtype)})" if mtype else ""
    kw = f" kwargs {kwargs}" if kwargs != "{}" else ""
    return f"{op} {target}{kind}{kw}"


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


_max_diff = max_difference


# ------------------------------------------------------------------------------------- the models

class SigmoidHead(nn.Module):
    """Linear -> ReLU -> Linear -> sigmoid: sigmoid gets a fixed-qparams fake-quant from the default mapping."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 12)
        self.fc2 = nn.Linear(12, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.fc2(torch.relu(self.fc1(x))))


class TiedNet(nn.Module):
    """One weight under two names (tied layers): torch.save stores the shared storage once."""

    def __init__(self) -> None:
        super().__init__()
        self.enc = nn.Linear(8, 8)
        self.dec = nn.Linear(8, 8)
        self.dec.weight = self.enc.weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dec(torch.relu(self.enc(x)))


class BufferNet(nn.Module):
    """Batch norm with a big buffer and no trainable parameters: counting parameters finds nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.bn = nn.BatchNorm1d(32, affine=False)
        self.register_buffer("lookup", torch.arange(200, dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)


def _seeded(make_model: Callable[[], nn.Module], seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return make_model()


def _mlp_no_dropout(seed: int) -> RandomMLP:
    """A random MLP without dropout (training runs must be reproducible step for step)."""
    return RandomMLP(seed, steps=("residual", "chain", "relu_fn")).eval()


# ----------------------------------------------------------------------------------- prepare_for_qat

def _prep_case(label: str, build: Callable[[], nn.Module], shape: tuple, backend: str | None = None) -> Case:
    def make():
        return build(), (_x(*shape, seed=7),)
    kwargs = (lambda: {"backend": backend}) if backend else dict
    return Case(label, make, kwargs, data={"backend": backend or "x86"})


def _prep_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [_prep_case("QATNet() (train mode)", lambda: _seeded(QATNet, 0), (4, 16)),
                _prep_case("Net().eval() (a model left in eval mode)", lambda: _seeded(Net, 1).eval(), (4, 8))]
    return [
        _prep_case("ConvBNNet in eval mode (unseen)", lambda: _seeded(ConvBNNet, 2).eval(), (2, 3, 8, 8)),
        _prep_case("DropoutNet in eval mode: F.dropout reads self.training (unseen)",
                   lambda: _seeded(DropoutNet, 3).eval(), (4, 6)),
        _prep_case("random model seed 47 with tanh, sigmoid and a shared layer", lambda: random_mlp(47), (3, 8)),
        _prep_case("QATNet with backend='qnnpack'", lambda: _seeded(QATNet, 5), (4, 16), backend="qnnpack"),
    ]


def _prep_evidence(result: Any, args: tuple) -> dict:
    expect_type(result, fx.GraphModule, "prepare_for_qat", "a torch.fx.GraphModule (what prepare_qat_fx returns)")
    return {
        "graph": describe_graph(result),
        "modules": _module_rows(result),
        "training": bool(result.training),
        "eval_submodules": sorted(n for n, m in result.named_modules() if not m.training)[:5],
        "outputs": _run(result, args[1]),
    }


def _prep_reference(case: Case) -> dict:
    model, example_inputs = case.make()
    backend = case.kwargs().get("backend", "x86")
    return _prep_evidence(_prepare_ref(model, example_inputs, backend), (model, example_inputs))


MAPPING_HINT = ("build the mapping with get_default_qat_qconfig_mapping(backend) for the backend you are given: "
                "it sets the right quantization range and weight scheme for that backend, and gives sigmoid/tanh "
                "their fixed-qparams fake-quants (a mapping with only a global qconfig does not)")


def _prep_judge(case: Case, ev: dict) -> None:
    ref = _prep_reference_cached(case)
    backend = case.data["backend"]
    fqs = [r for r in ev["modules"] if r.get("fake_quant")]
    observers = [r for r in ev["modules"] if r.get("observer")]
    if not fqs:
        if observers:
            raise CheckFailed(
                f"the graph calls {len(observers)} observers ({_short(observers[0]['type'])} at "
                f"'{observers[0]['node']}') and no fake-quantize module",
                "use get_default_qat_qconfig_mapping(backend), the QAT mapping: get_default_qconfig_mapping is "
                "for post-training quantization and inserts observers only")
        raise CheckFailed("the graph calls no fake-quantize module at all",
                          "prepare with prepare_qat_fx(model.train(), get_default_qat_qconfig_mapping(backend), "
                          "example_inputs)")
    if not ev["training"] or ev["eval_submodules"]:
        where = ", ".join(repr(n or "<root>") for n in ev["eval_submodules"]) or "the root"
        raise CheckFailed(f"the prepared model is not in train mode (eval mode: {where})",
                          "call model.train() before prepare_qat_fx: QAT prepares a model for training, and "
                          "prepare_qat_fx keeps whatever mode the model is in")
    by_node = {r["node"]: r for r in ev["modules"]}
    for r in ref["modules"]:
        got = by_node.get(r["node"])
        if ".qat." in (r["type"] or "") and got is not None and ".qat." not in (got["type"] or ""):
            raise CheckFailed(
                f"call_module '{r['node']}' calls a {got['type']}, expected the QAT module {r['type']}",
                "use prepare_qat_fx, not prepare_fx: only prepare_qat_fx swaps in QAT modules that "
                "fake-quantize their weights during training")
    got_sk, ref_sk = _skeleton(ev["graph"]), _skeleton(ref["graph"])
    for i, (g, e) in enumerate(zip(got_sk, ref_sk)):
        if g[:2] == e[:2] and g != e and ("'training': False" in g[4] or "'training': True" in g[4]):
            raise CheckFailed(
                f"node {i} ({ev['graph'][i]['name']}) is {_node_text(g)}, expected {_node_text(e)}",
                "call model.train() before tracing: a traced graph freezes the value of self.training it read "
                "(here in F.dropout), and .train() afterwards does not change the graph")
    for r in ref["modules"]:
        got = by_node.get(r["node"])
        for key, what in (("config", "fake-quant"), ("weight_fake_quant", "weight fake-quant")):
            exp = r.get(key)
            if exp is None or got is None:
                continue
            have = got.get(key)
            if have != exp:
                if have is None:
                    msg = f"'{r['node']}' has no {what}, expected {_short(exp['class'])}"
                else:
                    diff = next(k for k in exp if have.get(k) != exp[k])
                    msg = (f"the {what} of '{r['node']}' has {diff}={have.get(diff)!r}, expected {exp[diff]!r} "
                           f"(backend '{backend}': {_short(exp['class'])}, range {exp['quant_min']}..{exp['quant_max']}, "
                           f"{exp['qscheme']})")
                raise CheckFailed(msg, MAPPING_HINT)
    if got_sk != ref_sk:
        i = next((i for i, (g, e) in enumerate(zip(got_sk, ref_sk)) if g != e), min(len(got_sk), len(ref_sk)))
        g = _node_text(got_sk[i]) if i < len(got_sk) else "missing"
        e = _node_text(ref_sk[i]) if i < len(ref_sk) else "no node"
        fake_quant_differs = any("FakeQuantize" in (sk[i][2] or "") for sk in (got_sk, ref_sk) if i < len(sk))
        raise CheckFailed(f"the prepared graph has {len(got_sk)} nodes, expected {len(ref_sk)}; node {i} is {g}, "
                          f"expected {e}",
                          MAPPING_HINT if fake_quant_differs else
                          "prepare the model itself with prepare_qat_fx(model.train(), "
                          "get_default_qat_qconfig_mapping(backend), example_inputs) and return the result")
    out, exp = ev["outputs"], ref["outputs"]
    if isinstance(out, str):
        raise CheckFailed(f"the prepared model could not run in eval mode: {out}")
    expect(out.shape == exp.shape and torch.allclose(out, exp, rtol=1e-5, atol=1e-5),
           f"outputs of the prepared model (eval mode) differ from the reference by up to "
           f"{_max_diff(out, exp) if out.shape == exp.shape else float('inf'):.3g}",
           "do not change the weights: prepare the model you are given")


def _prep_reference_cached(case: Case) -> dict:
    return _reference("prepare_for_qat", case, _prep_reference)


# ---------------------------------------------------------------------------------- fake_quant_count

class _Handmade(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.input_quant = FusedMovingAvgObsFakeQuantize()
        self.lin = nn.Linear(4, 4)
        self.learned = _LearnableFakeQuantize(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255)
        self.fake_quant_stats = MinMaxObserver()


class RoundTrip(FakeQuantizeBase):
    """A fake-quantize module of the learner's own kind: a FakeQuantizeBase whose class name does not say so."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.fake_quantize_per_tensor_affine(x, 0.05, 0, -128, 127)

    def calculate_qparams(self):
        return torch.tensor([0.05]), torch.tensor([0])


class NotAFakeQuantize(nn.Identity):
    """Named like a fake-quantize module, but it is not one."""


class _Custom(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rt = RoundTrip()
        self.lin = nn.Linear(4, 4)
        self.deco = NotAFakeQuantize()


def _custom_fq() -> fx.GraphModule:
    """A FakeQuantizeBase subclass called RoundTrip, and an nn.Identity subclass called NotAFakeQuantize."""
    torch.manual_seed(9)
    root = _Custom()
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_module("deco", (g.call_module("deco", (g.call_module("lin", (g.call_module("rt", (x,)),)),)),)))
    return fx.GraphModule(root, g)


class _Diagnostic(nn.Module):
    """Modules chosen so that each usual mistake gives its own count (see _diagnostic)."""

    def __init__(self) -> None:
        super().__init__()
        from torch.ao.quantization import get_default_qat_qconfig
        self.qa = FusedMovingAvgObsFakeQuantize()            # a FakeQuantize subclass
        self.qb = _LearnableFakeQuantize(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255)
        self.qc = RoundTrip()                                  # a FakeQuantizeBase named otherwise
        self.fake_stats = MinMaxObserver()                     # an observer with 'fake' in its name
        self.activation_post_process_act = nn.ReLU()           # a ReLU named like prepare's observers
        self.lin = torch.ao.nn.qat.Linear(4, 4, qconfig=get_default_qat_qconfig("x86"))  # weight_fake_quant inside


def _diagnostic() -> fx.GraphModule:
    """Every count a usual mistake gives differs from the others and from the answer, 6: by the name
    activation_post_process 9, by that name or 'fake' 10, modules 8, unique targets 3, isinstance FakeQuantize 2,
    with observers 7, every call_module 17, class name 5, type(m) is FakeQuantize 0."""
    torch.manual_seed(11)
    root = _Diagnostic()
    g = fx.Graph()
    h = g.placeholder("x")
    for target in ("qa", "qb", "qa", "qb", "qc", "qb", "fake_stats") + ("activation_post_process_act",) * 9 + ("lin",):
        h = g.call_module(target, (h,))
    g.output(h)
    gm = fx.GraphModule(root, g)
    for i in range(4):   # registered, never called (a GraphModule keeps only what its graph calls: add them after)
        gm.add_submodule(f"spare{i}", FusedMovingAvgObsFakeQuantize())
    return gm


def _handmade() -> fx.GraphModule:
    """One fake-quant called from two sites under a custom name, a learnable fake-quant, a decoy observer."""
    torch.manual_seed(8)
    root = _Handmade()
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_module("input_quant", (x,))
    b = g.call_module("lin", (a,))
    c = g.call_module("input_quant", (b,))
    d = g.call_module("learned", (c,))
    g.output(g.call_module("fake_quant_stats", (d,)))
    return fx.GraphModule(root, g)


def _ptq_prepared() -> fx.GraphModule:
    torch.manual_seed(6)
    with _silent():
        return prepare_fx(QATNet().eval(), get_default_qconfig_mapping("x86"), (_x(2, 16),))


def _count_cases(hidden: bool) -> list[Case]:
    def prep(label, build, shape, seed=0):
        def make():
            return (_fresh(f"count {label}", lambda: _prepare_ref(
                _seeded(build, seed) if isinstance(build, type) else build(), (_x(*shape),))),)
        return Case(label, make)
    if not hidden:
        return [Case("a hand-built graph where every usual mistake gives a different count", lambda: (_diagnostic(),)),
                prep("QATNet prepared for QAT", QATNet, (4, 16)),
                prep("Net prepared for QAT", Net, (4, 8), seed=1)]
    return [
        prep("ConvBNNet prepared for QAT (unseen)", ConvBNNet, (2, 3, 8, 8), seed=2),
        prep("random model seed 47 prepared (tanh, sigmoid, a shared layer)", lambda: random_mlp(47), (3, 8)),
        Case("QATNet prepared with prepare_fx for post-training quantization: observers, no fake-quant",
             lambda: (_fresh("ptq", _ptq_prepared),)),
        Case("QATNet traced with symbolic_trace, not prepared", lambda: (fx.symbolic_trace(_seeded(QATNet, 0)),)),
        Case("a hand-built graph: one fake-quant called twice, a learnable fake-quant, an observer named "
             "'fake_quant_stats'", lambda: (_handmade(),)),
        Case("a hand-built graph: a FakeQuantizeBase subclass named RoundTrip, an nn.Identity subclass named "
             "NotAFakeQuantize called twice", lambda: (_custom_fq(),)),
    ]


def _count_reference(gm: fx.GraphModule) -> int:
    return sum(1 for n in gm.graph.nodes
               if n.op == "call_module" and isinstance(gm.get_submodule(n.target), FakeQuantizeBase))


def _count_evidence(result: Any, args: tuple) -> int:
    if isinstance(result, bool) or not isinstance(result, int):
        raise CheckFailed(f"returned {type(result).__name__} {str(result)[:80]}, expected an int",
                          "return the number of nodes, an int (len(...) or sum(...))")
    return result


def _count_judge(case: Case, got: int) -> None:
    def build(case):
        gm, = case.make()
        nodes = [n for n in gm.graph.nodes if n.op == "call_module"]
        mods = [gm.get_submodule(n.target) for n in nodes]
        return {
            "expected": _count_reference(gm),
            "by_name": sum(1 for n in nodes if "activation_post_process" in n.target or "fake" in n.target.lower()),
            "by_app_name": sum(1 for n in nodes if "activation_post_process" in n.target),
            "all_fq_modules": sum(1 for m in gm.modules() if isinstance(m, FakeQuantizeBase)),
            "unique": len({n.target for n, m in zip(nodes, mods) if isinstance(m, FakeQuantizeBase)}),
            "exact_class": sum(1 for m in mods if isinstance(m, torch.ao.quantization.FakeQuantize)),
            "with_observers": sum(1 for m in mods if isinstance(m, (FakeQuantizeBase, ObserverBase))),
            "call_module": len(nodes),
            "class_name": sum(1 for m in mods if "FakeQuantize" in type(m).__name__),
        }
    ref = _reference("fake_quant_count", case, build)
    expected = ref["expected"]
    if got == expected:
        return
    hints = []
    if got in (ref["by_name"], ref["by_app_name"]):
        hints.append("select nodes by module type, not by name: prepare_fx names observers "
                     "activation_post_process_N too, and a fake-quant can have any name")
    if got == ref["all_fq_modules"] and got != ref["unique"]:
        hints.append("count call_module nodes, not modules: the weight_fake_quant inside each QAT layer is a "
                     "fake-quantize module but no node of the graph calls it")
    if got == ref["unique"]:
        hints.append("every call_module node counts, also when two nodes call the same fake-quantize module")
    if got == ref["call_module"]:
        hints.append("count only call_module nodes whose module is a fake-quantize module, not every "
                     "call_module node")
    if got == ref["with_observers"]:
        hints.append("observers are not fake-quantize modules: test isinstance(module, FakeQuantizeBase), "
                     "not ObserverBase")
    if got == ref["exact_class"]:
        hints.append("FakeQuantizeBase is the base class of every fake-quantize module; FakeQuantize is only "
                     "one of its subclasses")
    if got == ref["class_name"]:
        hints.append("a class name says nothing: a FakeQuantizeBase subclass may be called anything, and a class "
                     "called ...FakeQuantize need not be one; test isinstance(module, FakeQuantizeBase)")
    if got == 0:
        hints.append("the modules are FusedMovingAvgObsFakeQuantize and other subclasses: test "
                     "isinstance(module, FakeQuantizeBase), not type(module) is ...")
    # A diagnosis is confirmed only when the count it predicts is the learner's count and no other diagnosis
    # predicts the same: when two mistakes give the same number here, naming either could blame what the
    # answer does right, so the hint stays general (another case tells them apart).
    hint = hints[0] if len(hints) == 1 else ("count call_module nodes whose module is an instance of "
                                             "torch.ao.quantization.FakeQuantizeBase")
    raise CheckFailed(f"counted {got} fake-quantize nodes, expected {expected}", hint)


# ------------------------------------------------------------------------------------- qat_finetune

def _blobs(n: int, features: int, classes: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(classes, features, generator=g) * 2.0
    y = torch.randint(0, classes, (n,), generator=g)
    return centers[y] + torch.randn(n, features, generator=g), y


def _ft_case(label: str, build: Callable[[], nn.Module], in_shape: tuple, classes: int, n_batches: int,
             steps: int, lr: float, *, eval_mode: bool = False, seed: int = 0) -> Case:
    def make():
        batches = []
        for b in range(n_batches):
            if len(in_shape) == 1:
                x, y = _blobs(8, in_shape[0], classes, seed * 100 + b)
            else:
                g = torch.Generator().manual_seed(seed * 100 + b)
                x = torch.randn(4, *in_shape, generator=g)
                y = torch.randint(0, classes, (4,), generator=g)
            batches.append((x, y))
        prepared = _fresh(f"finetune {label}", lambda: _prepare_ref(build(), (batches[0][0],)))
        if eval_mode:
            prepared.eval()
        return prepared, batches, steps, lr
    return Case(label, make, data={"steps": steps, "lr": lr, "n_batches": n_batches, "eval_mode": eval_mode})


def _ft_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [_ft_case("QATNet(16, 32, 4), 3 batches, steps=5, lr=0.1",
                         lambda: _seeded(lambda: QATNet(16, 32, 4), 0), (16,), 4, 3, 5, 0.1)]
    return [
        _ft_case("ConvBNNet handed over in eval mode, 2 batches, steps=3, lr=0.05",
                 lambda: _seeded(lambda: ConvBNNet(4, 3), 1), (3, 6, 6), 3, 2, 3, 0.05, eval_mode=True, seed=1),
        _ft_case("QATNet(8, 16, 3), 5 batches but steps=2 (only the first two are used)",
                 lambda: _seeded(lambda: QATNet(8, 16, 3), 2), (8,), 3, 5, 2, 0.2, seed=2),
        _ft_case("random model, 2 batches cycled over steps=5, lr=0.3",
                 lambda: _mlp_no_dropout(3), (_mlp_no_dropout(3).width,), 3, 2, 5, 0.3, seed=3),
        _ft_case("QATNet(8, 16, 3), steps=0 (nothing to do)", lambda: _seeded(lambda: QATNet(8, 16, 3), 4),
                 (8,), 3, 2, 0, 0.1, seed=4),
    ]


def _train(prepared: nn.Module, batches: list, steps: int, lr: float, variant: str = "") -> nn.Module:
    """The reference loop; `variant` names a wrong version, used only to recognise a learner's mistake."""
    if variant != "eval":
        prepared.train()
    params = list(prepared.parameters())
    if variant == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(params, lr=lr)
    else:
        opt = torch.optim.SGD(params, lr={"lr_0.01": 0.01, "lr_0.001": 0.001}.get(variant, lr),
                              momentum=0.9 if variant == "momentum" else 0.0, maximize=variant == "ascent")
    n = {"plus_one": steps + 1, "minus_one": max(steps - 1, 0), "no_cycle": min(steps, len(batches)),
         "one_epoch": len(batches)}.get(variant, steps)
    for i in range(n):
        x, y = batches[i % len(batches)]
        if variant != "no_zero_grad":
            opt.zero_grad()
        out = prepared(x)
        if variant == "sum":
            loss = F.cross_entropy(out, y, reduction="sum")
        elif variant == "mse":
            loss = F.mse_loss(out, F.one_hot(y, out.shape[-1]).float())
        else:
            loss = F.cross_entropy(out, y)
        if variant == "extra_forward_before":
            with torch.no_grad():
                prepared(x)
        loss.backward()
        opt.step()
        if variant == "extra_forward_after":
            with torch.no_grad():
                prepared(x)
    if variant == "eval_after":
        prepared.eval()
    return prepared


CYCLE_HINT = ("do exactly `steps` optimizer steps, cycling through batches: step i uses "
              "batches[i % len(batches)], so steps may exceed len(batches)")

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
    "mse": "the loss is the cross-entropy of the logits and the labels: F.cross_entropy(logits, y)",
    "ascent": "the loss went up: step against the gradient (loss.backward(), then optimizer.step())",
    "extra_forward_after": "run exactly one forward pass per step: every forward pass in train mode moves the "
                           "fake-quant observers (and batch-norm statistics), even under torch.no_grad()",
    "extra_forward_before": "run exactly one forward pass per step: every forward pass in train mode moves the "
                            "fake-quant observers (and batch-norm statistics), even under torch.no_grad()",
}


def _ft_evidence(result: Any, args: tuple) -> dict:
    prepared = args[0]
    if result is None:
        raise CheckFailed("qat_finetune returned None, expected the prepared model",
                          "return prepared (the same object, trained in place)")
    return {
        "same": result is prepared,
        "training": bool(prepared.training),
        "params": {n: p.detach().clone() for n, p in prepared.named_parameters()},
        "buffers": {n: b.detach().clone() for n, b in prepared.named_buffers() if b.is_floating_point()},
    }


def _state(model: nn.Module) -> dict:
    return {"params": {n: p.detach().clone() for n, p in model.named_parameters()},
            "buffers": {n: b.detach().clone() for n, b in model.named_buffers() if b.is_floating_point()}}


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


def _loss(model: nn.Module, batches: list) -> float:
    m = copy.deepcopy(model).eval()
    m.apply(disable_observer)
    with torch.no_grad():
        return float(sum(F.cross_entropy(m(x), y) for x, y in batches) / len(batches))


def _ft_reference(case: Case) -> dict:
    prepared, batches, steps, lr = case.make()
    initial = _state(prepared)
    _train(prepared, batches, steps, lr)
    return {"initial": initial, "final": _state(prepared)}


def _ft_losses(case: Case) -> tuple[float, float]:
    """Mean cross-entropy on the batches before and after the reference run (observers frozen)."""
    prepared, batches, steps, lr = case.make()
    before = _loss(prepared, batches)
    return before, _loss(_train(prepared, batches, steps, lr), batches)


def _variant_params(case: Case, variant: str) -> dict | None:
    def build(case):
        prepared, batches, steps, lr = case.make()
        try:
            return _state(_train(prepared, batches, steps, lr, variant))["params"]
        except Exception:
            return None
    return _reference(f"qat_finetune {variant}", case, build)


def _ft_judge(case: Case, ev: dict) -> None:
    ref = _reference("qat_finetune", case, _ft_reference)
    if not ev["same"]:
        raise CheckFailed("returned a different object from the prepared model it was given",
                          "train prepared in place and return prepared itself (not a copy)")
    if not ev["training"]:
        given = "it was handed over in eval mode" if case.data["eval_mode"] else "it was handed over in train mode"
        raise CheckFailed(f"the model is in eval mode after qat_finetune, expected train mode ({given})",
                          "call prepared.train() at the start and leave the model in train mode: switch to eval "
                          "only to evaluate or convert")
    steps = case.data["steps"]
    mismatch = _far(ev["params"], ref["final"]["params"])
    if mismatch is not None:
        if steps > 0 and _far(ev["params"], ref["initial"]["params"], atol=0, rtol=0) is None:
            raise CheckFailed(f"the parameters of the prepared model did not change after {steps} steps",
                              "train prepared in place: optimizer = torch.optim.SGD(prepared.parameters(), lr=lr); "
                              "each step zero_grad, loss.backward(), optimizer.step()")
        hint = next((text for variant, text in VARIANT_HINTS.items()
                     if (params := _variant_params(case, variant)) is not None and _far(ev["params"], params) is None),
                    None)
        before, after = _reference("qat_finetune losses", case, _ft_losses)
        raise CheckFailed(
            f"after {steps} steps the parameters differ from plain SGD on cross-entropy: {mismatch} "
            f"(the reference takes the mean loss on the batches from {before:.4f} to {after:.4f})",
            hint or "each step: x, y = batches[i % len(batches)]; optimizer.zero_grad(); "
                    "F.cross_entropy(prepared(x), y).backward(); optimizer.step(), with torch.optim.SGD(lr=lr)")
    mismatch = _far(ev["buffers"], ref["final"]["buffers"])
    if mismatch is not None:
        raise CheckFailed(f"the parameters match but the fake-quant/batch-norm statistics do not: {mismatch}",
                          VARIANT_HINTS["extra_forward_after"])


# ------------------------------------------------------------------------------------------ to_int8

def _calibrated(key: str, build: Callable[[], nn.Module], shape: tuple, *, steps: int = 2, eval_mode: bool = False,
                seed: int = 0) -> Callable[[], tuple]:
    """A prepared model that has seen a few batches in train mode (its observers hold statistics)."""
    def calibrate():
        prepared = _prepare_ref(build(), (_x(*shape, seed=seed),))
        with torch.no_grad():
            for i in range(steps):
                prepared(_x(*shape, seed=seed + 1 + i))
        return prepared

    def make():
        prepared = _fresh(f"calibrated {key}", calibrate)
        if eval_mode:
            prepared.eval()
        # Evidence runs the converted model on data the observers have seen: outside that range the int8 model
        # and the fake-quant model legitimately differ (x86 fake-quant emulates a reduced 0..127 range).
        prepared.input_for_checks = _x(*shape, seed=seed + 1)
        return (prepared,)
    return make


def _int8_cases(hidden: bool) -> list[Case]:
    def case(label, build, shape, **kw):
        return Case(label, _calibrated(label, build, shape, **kw), data={"shape": shape})
    if not hidden:
        return [case("QATNet prepared and calibrated, handed over in train mode", lambda: _seeded(QATNet, 0), (8, 16)),
                case("Net prepared and calibrated, in eval mode", lambda: _seeded(Net, 1), (8, 8), eval_mode=True)]
    return [
        case("ConvBNNet prepared and calibrated: ConvBn2d must fold (unseen)", lambda: _seeded(ConvBNNet, 2),
             (4, 3, 8, 8), seed=3),
        case("a model ending in torch.sigmoid (unseen)", lambda: _seeded(SigmoidHead, 4), (8, 6), seed=4),
        case("random model seed 19 (tanh, sigmoid, a chain of linears)", lambda: random_mlp(19), (6, 4), seed=5),
    ]


def _quantized(t: str | None) -> bool:
    return bool(t) and (".quantized.modules" in t) and ".reference." not in t


def _int8_evidence(result: Any, args: tuple) -> dict:
    expect_type(result, fx.GraphModule, "to_int8", "a torch.fx.GraphModule (what convert_fx returns)")
    mods = dict(result.named_modules())
    x = getattr(args[0], "input_for_checks", None)
    ev = {
        "training": bool(result.training),
        "graph": describe_graph(result),
        "fake_quant_left": [n for n, m in mods.items() if isinstance(m, FakeQuantizeBase)][:5],
        "observers_left": [n for n, m in mods.items() if isinstance(m, ObserverBase)][:5],
        "types": sorted({_qual(type(m)) for m in mods.values()}),
    }
    ev["outputs"] = None if x is None else _run(result, (x,))
    return ev


def _int8_reference(case: Case) -> dict:
    (prepared,) = case.make()
    x = prepared.input_for_checks
    converted = convert_fx(copy.deepcopy(prepared).eval())
    prepared.eval()
    # A run in eval mode would otherwise still move the scales. (Convert a copy made before this: convert_fx
    # re-observes the folded Conv+BN weights, so disabling observers first changes what it produces.)
    prepared.apply(disable_observer)
    with torch.no_grad():
        fake = prepared(x)
    out_fq = [n for n in prepared.graph.nodes if n.op == "output"][0].args[0]
    out_scale = float(prepared.get_submodule(out_fq.target).scale.max()) if out_fq.op == "call_module" else 0.0
    quant_out = _run(converted, (x,))
    return {"ev": {"graph": describe_graph(converted), "types": sorted({_qual(type(m)) for m in converted.modules()})},
            "outputs": quant_out, "fake": fake.detach(), "out_scale": out_scale}


def _int8_judge(case: Case, ev: dict) -> None:
    ref = _reference("to_int8", case, _int8_reference)
    if ev["fake_quant_left"] or ev["observers_left"]:
        left = ev["fake_quant_left"] or ev["observers_left"]
        raise CheckFailed(f"the result still contains fake-quantize/observer modules ({', '.join(left)})",
                          "convert with convert_fx and return the GraphModule it returns: "
                          "q = convert_fx(prepared.eval()); return q")
    ref_q = [t for t in ref["ev"]["types"] if _quantized(t)]
    got_q = [t for t in ev["types"] if _quantized(t)]
    if sorted(got_q) != sorted(ref_q):
        missing = sorted(set(ref_q) - set(got_q))
        refs = [t for t in ev["types"] if ".reference." in t]
        raise CheckFailed(
            f"expected quantized modules {', '.join(_short(t) for t in ref_q)}; the result has "
            f"{', '.join(_short(t) for t in got_q) or 'none'}"
            + (f" (missing {', '.join(_short(t) for t in missing)})" if missing else ""),
            "use convert_fx, not convert_to_reference_fx: the reference model keeps float modules between "
            "quantize/dequantize pairs" if refs else "convert the prepared model with convert_fx")
    if ev["training"]:
        raise CheckFailed("the converted model is in train mode, expected eval mode",
                          "put the model in eval mode: convert_fx(prepared.eval()), or call .eval() on what "
                          "convert_fx returns")
    out = ev["outputs"]
    if isinstance(out, str) or out is None:
        raise CheckFailed(f"the converted model could not run: {out}")
    exp, fake = ref["outputs"], ref["fake"]
    if out.shape != exp.shape:
        raise CheckFailed(f"output shape {tuple(out.shape)}, expected {tuple(exp.shape)}")
    tol = max(ref["out_scale"], 1e-4) * 1.01
    d_ref, d_fake = _max_diff(out, exp), _max_diff(out, fake)
    expect(d_ref <= tol,
           f"outputs differ from convert_fx's by up to {d_ref:.3g} (one output quantization step is "
           f"{ref['out_scale']:.3g}); from the prepared model in eval mode by {d_fake:.3g}",
           "do not run the prepared model on new data before converting: its observers still update in "
           "eval mode, which moves the scales")


# -------------------------------------------------------------------------------- state_dict_bytes

def _bytes(obj: Any) -> int:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.tell()


def _int8_qatnet() -> nn.Module:
    (prepared,) = _calibrated("QATNet for state_dict_bytes", lambda: _seeded(QATNet, 0), (8, 16))()
    with _silent():
        return convert_fx(prepared.eval())


def _size_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [Case("QATNet (fp32)", lambda: (_seeded(QATNet, 0),)),
                Case("QATNet converted to int8", lambda: (_int8_qatnet(),))]
    return [
        Case("a model with buffers and no parameters (unseen)", lambda: (BufferNet(),)),
        Case("nn.ReLU(): an empty state_dict", lambda: (nn.ReLU(),)),
        Case("tied weights: one tensor under two names", lambda: (_seeded(TiedNet, 1),)),
        Case("a model prepared for QAT (fake-quant buffers)",
             lambda: (_prepare_ref(_seeded(Net, 2), (_x(2, 8),)),)),
        Case("random model seed 12", lambda: (random_mlp(12),)),
    ]


def _size_evidence(result: Any, args: tuple) -> int:
    if isinstance(result, bool) or not isinstance(result, int):
        raise CheckFailed(f"returned {type(result).__name__} {str(result)[:80]}, expected an int (bytes)",
                          "return the number of bytes as an int: buf.tell() or len(buf.getvalue())")
    return result


def _size_judge(case: Case, got: int) -> None:
    def build(case):
        (model,) = case.make()
        sd = model.state_dict()
        tensors = [v for v in sd.values() if isinstance(v, torch.Tensor)]
        out = {"expected": _bytes(sd),
               "params": sum(p.numel() * p.element_size() for p in model.parameters()),
               "tensors": sum(t.numel() * t.element_size() for t in tensors)}
        try:
            out["whole"] = _bytes(model)
        except Exception:
            out["whole"] = -1
        try:
            out["pickle"] = len(pickle.dumps(sd))
        except Exception:
            out["pickle"] = -1
        return out
    ref = _reference("state_dict_bytes", case, build)
    expected = ref["expected"]
    if got == expected:
        return
    hint = ("serialize with torch.save(model.state_dict(), buf) into buf = io.BytesIO() and return the number "
            "of bytes written, buf.tell() or len(buf.getvalue())")
    if got == ref["whole"]:
        hint = "save model.state_dict(), not the whole model: torch.save(model.state_dict(), buf)"
    elif got == 0:
        hint = ("buf.tell() after buf.seek(0) is 0: read the size right after torch.save, or use "
                "len(buf.getvalue())")
    elif got in (ref["params"], ref["tensors"]):
        hint = ("count what torch.save writes (buffers, the zip archive and its metadata too), not only tensor "
                "bytes: " + hint)
    elif abs(got - expected) <= 0.05 * expected and got != ref["pickle"]:
        hint = ("save into an io.BytesIO, not a file: inside its zip archive torch.save names every record after "
                "the file name, so the size depends on the file name")
    raise CheckFailed(f"returned {got} bytes, expected {expected}", hint)


CHECKS = {
    "prepare_for_qat": Check("prepare_for_qat", _prep_cases, _prep_evidence, _prep_judge),
    "fake_quant_count": Check("fake_quant_count", _count_cases, _count_evidence, _count_judge, unchanged="always"),
    "qat_finetune": Check("qat_finetune", _ft_cases, _ft_evidence, _ft_judge),
    "to_int8": Check("to_int8", _int8_cases, _int8_evidence, _int8_judge, unchanged="always"),
    "state_dict_bytes": Check("state_dict_bytes", _size_cases, _size_evidence, _size_judge, unchanged="always"),
}
