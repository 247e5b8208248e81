"""The cases of ex07_qat: the seeded inputs each graded function is called on, and their references."""
from __future__ import annotations

import copy
from typing import Any, Callable

import torch
import torch.fx as fx
import torch.nn as nn
from torch.ao.quantization import FusedMovingAvgObsFakeQuantize, get_default_qconfig_mapping
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

from fxplayground import Net, QATNet

from autograder.checks.evidence import quiet_one_thread
from autograder.checks import keyring
from autograder.checks.framework import Case
from autograder.checks.randmodels import current_salt, generator, manual_seed, RandomMLP, seeded_randn
from autograder.checks.ex07_qat.models import _Custom, _Diagnostic, _Handmade, _Lookalikes, _WithImpostor


# ------------------------------------------------------------------------------------------ helpers

_silent = quiet_one_thread  # the exercise's references and checks, quiet on one thread


_PROTOTYPES: dict[tuple[str, int], Any] = {}


def _fresh(key: str, build: Callable[[], Any]) -> Any:
    """A deep copy of a prototype built once per process: preparing costs ~10x more than copying."""
    key = (key, current_salt())   # type: ignore[assignment]  (a hidden case's salt: another prototype)
    if key not in _PROTOTYPES:
        with _silent():
            _PROTOTYPES[key] = build()
    return copy.deepcopy(_PROTOTYPES[key])


def _prepare_ref(model: nn.Module, example_inputs: tuple, backend: str = "x86") -> fx.GraphModule:
    """`model` prepared as prepare_for_qat must prepare it: the instructor's side (keyring.inputs)."""
    return keyring.inputs("ex07_qat").prepare_ref(model, example_inputs, backend)


def _seeded(make_model: Callable[[], nn.Module], seed: int) -> nn.Module:
    manual_seed(seed)
    return make_model()


def _mlp_no_dropout(seed: int) -> RandomMLP:
    """A random MLP without dropout (training runs must be reproducible step for step)."""
    return RandomMLP(seed, steps=("residual", "chain", "relu_fn")).eval()


# ----------------------------------------------------------------------------------- prepare_for_qat

def _prep_case(label: str, build: Callable[[], nn.Module], shape: tuple, backend: str | None = None) -> Case:
    def make():
        return build(), (seeded_randn(*shape, seed=7),)
    kwargs = (lambda: {"backend": backend}) if backend else dict
    return Case(label, make, kwargs, data={"backend": backend or "x86"})


def _prep_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex07_qat")._prep_cases()
    return [_prep_case("QATNet() (train mode)", lambda: _seeded(QATNet, 0), (4, 16)),
            _prep_case("Net().eval() (a model left in eval mode)", lambda: _seeded(Net, 1).eval(), (4, 8))]


def _custom_fq() -> fx.GraphModule:
    """A FakeQuantizeBase subclass called RoundTrip, and an nn.Identity subclass called NotAFakeQuantize."""
    manual_seed(9)
    root = _Custom()
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_module("deco", (g.call_module("deco", (g.call_module("lin", (g.call_module("rt", (x,)),)),)),)))
    return fx.GraphModule(root, g)


def _diagnostic() -> fx.GraphModule:
    """Every count a usual mistake gives differs from the others and from the answer, 7: by the name
    activation_post_process 9, by that name or 'fake' 10, modules 11, unique targets 4, isinstance FakeQuantize 3,
    with observers 8, every call_module 19, class name 6, type(m) is FakeQuantize 1, and 0 (a test of the node
    or its target instead of the module, among others)."""
    manual_seed(11)
    root = _Diagnostic()
    g = fx.Graph()
    h = g.placeholder("x")
    for target in ("qa", "qb", "qa", "qb", "qc", "qb", "qd", "fake_stats") + ("activation_post_process_act",) * 9 \
            + ("lin",):
        h = g.call_module(target, (h,))
    g.output(h)
    gm = fx.GraphModule(root, g)
    for i in range(6):   # registered, never called (a GraphModule keeps only what its graph calls: add them after)
        gm.add_submodule(f"spare{i}", FusedMovingAvgObsFakeQuantize())
    return gm


def _handmade() -> fx.GraphModule:
    """One fake-quant called from two sites under a custom name, a learnable fake-quant, a decoy observer."""
    manual_seed(8)
    root = _Handmade()
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_module("input_quant", (x,))
    b = g.call_module("lin", (a,))
    c = g.call_module("input_quant", (b,))
    d = g.call_module("learned", (c,))
    g.output(g.call_module("fake_quant_stats", (d,)))
    return fx.GraphModule(root, g)


def _with_impostor() -> fx.GraphModule:
    """A fake-quant, then a module whose class is named FakeQuantizeBase but is no FakeQuantizeBase, then a Linear."""
    manual_seed(9)
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_module("lin", (g.call_module("impostor", (g.call_module("input_quant", (x,)),)),)))
    return fx.GraphModule(_WithImpostor(), g)


def _lookalikes() -> fx.GraphModule:
    """Counts 3: the fake-quants 'qin' once and 'sub.fq' (inside a submodule) twice. Besides them a call_function
    torch.fake_quantize_per_tensor_affine, a Gate (a buffer named fake_quant_enabled, no FakeQuantizeBase) called
    three times and a Linear: with the call_function 4, by the module of the target's first part 1, by the
    attribute 6, every call_module 7."""
    manual_seed(12)
    root = _Lookalikes()
    g = fx.Graph()
    h = g.placeholder("x")
    for target in ("qin", "sub.fq", "gate", torch.fake_quantize_per_tensor_affine, "lin", "sub.fq", "gate", "gate"):
        h = g.call_module(target, (h,)) if isinstance(target, str) else g.call_function(target, (h, 0.1, 0, -128, 127))
    g.output(h)
    return fx.GraphModule(root, g)


def _ptq_prepared() -> fx.GraphModule:
    manual_seed(6)
    with _silent():
        return prepare_fx(QATNet().eval(), get_default_qconfig_mapping("x86"), (seeded_randn(2, 16),))


def _count_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex07_qat")._count_cases()

    def prep(label, build, shape, seed=0):
        def make():
            return (_fresh(f"count {label}", lambda: _prepare_ref(
                _seeded(build, seed) if isinstance(build, type) else build(), (seeded_randn(*shape),))),)
        return Case(label, make)
    return [Case("a hand-built graph where every usual mistake gives a different count", lambda: (_diagnostic(),)),
            prep("QATNet prepared for QAT", QATNet, (4, 16)),
            prep("Net prepared for QAT", Net, (4, 8), seed=1)]


# ------------------------------------------------------------------------------------- qat_finetune

def _blobs(n: int, features: int, classes: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = generator(seed)
    centers = torch.randn(classes, features, generator=g) * 2.0
    y = torch.randint(0, classes, (n,), generator=g)
    return centers[y] + torch.randn(n, features, generator=g), y


def _ft_case(label: str, build: Callable[[], nn.Module], in_shape: tuple, classes: int, n_batches: int,
             steps: int, lr: float, *, eval_mode: bool = False, seed: int = 0, scale: float = 1.0,
             stale_grads: bool = False, set_up: Callable[[fx.GraphModule], Any] | None = None) -> Case:
    """`scale` multiplies the inputs (large inputs, large gradients); `stale_grads`: the model arrives holding the
    gradients of one loss.backward() on the last batch, as after a loss printed with backward() beforehand;
    `set_up(prepared)` changes the prepared model as its caller had (a submodule's mode, observers, frozen weights)."""
    def make():
        batches = []
        for b in range(n_batches):
            if len(in_shape) == 1:
                x, y = _blobs(8, in_shape[0], classes, seed * 100 + b)
            else:
                g = generator(seed * 100 + b)
                x = torch.randn(4, *in_shape, generator=g)
                y = torch.randint(0, classes, (4,), generator=g)
            batches.append((x * scale, y))
        prepared = _fresh(f"finetune {label}", lambda: _prepare_ref(build(), (batches[0][0],)))
        if stale_grads:
            with quiet_one_thread():
                torch.nn.functional.cross_entropy(prepared(batches[-1][0]), batches[-1][1]).backward()
        if eval_mode:
            prepared.eval()
        if set_up is not None:
            set_up(prepared)
        return prepared, batches, steps, lr
    return Case(label, make, data={"steps": steps, "lr": lr, "n_batches": n_batches, "eval_mode": eval_mode})


def _ft_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex07_qat")._ft_cases()
    return [_ft_case("QATNet(16, 32, 4), 3 batches, steps=5, lr=0.1",
                     lambda: _seeded(lambda: QATNet(16, 32, 4), 0), (16,), 4, 3, 5, 0.1)]


# ------------------------------------------------------------------------------------------ to_int8

def _calibrated(key: str, build: Callable[[], nn.Module], shape: tuple, *, steps: int = 2, eval_mode: bool = False,
                seed: int = 0) -> Callable[[], tuple]:
    """A prepared model that has seen a few batches in train mode (its observers hold statistics)."""
    def calibrate():
        prepared = _prepare_ref(build(), (seeded_randn(*shape, seed=seed),))
        with torch.no_grad():
            for i in range(steps):
                prepared(seeded_randn(*shape, seed=seed + 1 + i))
        return prepared

    def make():
        prepared = _fresh(f"calibrated {key}", calibrate)
        if eval_mode:
            prepared.eval()
        # Evidence runs the converted model on data the observers have seen: outside that range the int8 model
        # and the fake-quant model legitimately differ (x86 fake-quant emulates a reduced 0..127 range).
        prepared.input_for_checks = seeded_randn(*shape, seed=seed + 1)
        return (prepared,)
    return make


def _int8_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex07_qat")._int8_cases()

    def case(label, build, shape, **kw):
        return Case(label, _calibrated(label, build, shape, **kw), data={"shape": shape})
    return [case("QATNet prepared and calibrated, handed over in train mode", lambda: _seeded(QATNet, 0), (8, 16)),
            case("Net prepared and calibrated, in eval mode", lambda: _seeded(Net, 1), (8, 8), eval_mode=True)]


def _int8_qatnet() -> nn.Module:
    (prepared,) = _calibrated("QATNet for state_dict_bytes", lambda: _seeded(QATNet, 0), (8, 16))()
    with _silent():
        return convert_fx(prepared.eval())


def _size_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex07_qat")._size_cases()
    return [Case("QATNet (fp32)", lambda: (_seeded(QATNet, 0),)),
            Case("QATNet converted to int8", lambda: (_int8_qatnet(),))]
