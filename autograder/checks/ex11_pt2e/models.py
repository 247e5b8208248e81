"""The models, inputs and torchao names the cases of ex11_pt2e are built from."""
from __future__ import annotations

import warnings
from typing import Callable

import torch
import torch.fx as fx
import torch.nn as nn

from autograder.checks.randmodels import manual_seed, generator

from fxplayground import DropoutNet, QATNet


with warnings.catch_warnings():  # torchao's import logs and warns about kernels this CPU build lacks
    warnings.simplefilter("ignore")
    from torchao.quantization.pt2e import (FakeQuantizeBase, FakeQuantize, FixedQParamsFakeQuantize,
                                           FixedQParamsObserver, FusedMovingAvgObsFakeQuantize, MinMaxObserver,
                                           ObserverBase, move_exported_model_to_eval,
                                           move_exported_model_to_train)
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e
    from torchao.quantization.pt2e.utils import _disallow_eval_train
    from torchao.quantization.pt2e.export_utils import _EXPORTED_TRAINING_ATTR
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
        X86InductorQuantizer, get_default_x86_inductor_quantization_config)


QD = torch.ops.quantized_decomposed


def _x(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=generator(seed))


def _seeded(make_model: Callable[[], nn.Module], seed: int) -> nn.Module:
    manual_seed(seed)
    return make_model()


class SigmoidHead(nn.Module):
    """Linear -> ReLU -> Linear -> sigmoid, with a residual add: patterns Part I's models did not have."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 6)
        self.fc2 = nn.Linear(6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.fc2(torch.relu(self.fc1(x)) + x))


class PairNet(nn.Module):
    """Two inputs, each through its own Linear, added: every input's batch dimension is dynamic."""

    def __init__(self) -> None:
        super().__init__()
        self.left = nn.Linear(6, 4)
        self.right = nn.Linear(5, 4)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.left(x)) + self.right(y)


def _qatnet(seed: int = 0) -> nn.Module:
    return _seeded(QATNet, seed)


def _dropout(seed: int = 3) -> nn.Module:
    return _seeded(DropoutNet, seed)


class NotAFakeQuantize(nn.Identity):
    """Named like a fake-quantize module, but it is not one."""


class FakeQuantizeLookalike(nn.Identity):
    """Has a fake-quant's fake_quant_enabled flag, and is no fake-quantize module."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("fake_quant_enabled", torch.tensor([1], dtype=torch.uint8))


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
        self.mimic = FakeQuantizeLookalike()                               # an attribute that lies


_DIAGNOSTIC_ORDER = ("activation_post_process_0", "lin", "activation_post_process_0", "weight_fake_quant",
                     "activation_post_process_1", "sig", "deco", "old", "mimic", "activation_post_process_0",
                     "weight_fake_quant", "lin", "activation_post_process_0")


def _diagnostic(order: tuple[str, ...] = _DIAGNOSTIC_ORDER, spares: int = 3) -> fx.GraphModule:
    """With the default order and spares: answer 7 (activation_post_process_0 four times, weight_fake_quant
    twice, sig). Every usual mistake gives
    another count: by the name activation_post_process 5, by 'fake' in the name 2, unique modules 3, every
    registered fake-quant module 6, with observers 8, every call_module 13, exact type
    FusedMovingAvgObsFakeQuantize 4, torch.ao's base class 1, 'FakeQuantize' in the class name 10, a
    fake_quant_enabled attribute 9."""
    manual_seed(11)
    root = _Diagnostic()
    g = fx.Graph()
    h = g.placeholder("x")
    for target in order:
        h = g.call_module(target, (h,))
    g.output(h)
    gm = fx.GraphModule(root, g)
    for i in range(spares):   # registered, never called (a GraphModule keeps only what its graph calls: add them after)
        gm.add_submodule(f"spare{i}", FusedMovingAvgObsFakeQuantize())
    return gm


def _nested_fake_quants() -> fx.GraphModule:
    """A fake-quant below the root, called by a dotted target (call_module 'blk.fq'), beside one at the root and an
    observer in the same submodule: answer 3 (quant once, blk.fq twice). Looking modules up with getattr(gm,
    target) finds only the root's (1, or an AttributeError); no other usual mistake gives 1."""
    manual_seed(12)
    root = nn.Module()
    root.quant = FusedMovingAvgObsFakeQuantize()
    root.blk = nn.Module()
    root.blk.fq = FusedMovingAvgObsFakeQuantize()
    root.blk.obs = MinMaxObserver()
    root.blk.lin = nn.Linear(4, 4)
    g = fx.Graph()
    h = g.placeholder("x")
    for target in ("quant", "blk.lin", "blk.fq", "blk.obs", "blk.fq"):
        h = g.call_module(target, (h,))
    g.output(h)
    return fx.GraphModule(root, g)


def _handmade_qdq(per_channel_only: bool = False, rounds: int = 2, aten_ops: bool = False) -> fx.GraphModule:
    """quantized_decomposed nodes in every form the counts must cover, beside decoys that are not Q/DQ nodes.

    Answer (4, 5); only .default overloads give (3, 4), only per-tensor ops (3, 3), 'quantize' anywhere in the
    target's text (10, 5), the eager torch.quantize_per_tensor counted too (5, 5), every quantized_decomposed op
    but the dequantize ones as a quantize node (the two choose_qparams too) (6, 5), node names instead of targets
    (the eager quantize_per_tensor node and the dequantize_per_tensor_scale decoy too) (5, 6). With
    per_channel_only: (2, 3),
    and only per-tensor ops give (0, 0). With aten_ops, the eager quantize as an ATen overload follows
    (aten.quantize_per_tensor.default, then aten.dequantize.self): still no Q/DQ node, though the text of the
    first has '.quantize_per' in it.
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
        for _ in range(rounds):   # rounds=2 gives the answers above
            q = g.call_function(QD.quantize_per_tensor.default, (h, 0.05, 0, lo, hi, torch.int8))
            h = g.call_function(QD.dequantize_per_tensor.default, (q, 0.05, 0, lo, hi, torch.int8))
        # what dynamic quantization computes its scale with: quantized_decomposed ops that quantize nothing
        g.call_function(QD.choose_qparams.tensor, (h, lo, hi, 1e-5, torch.int8))
        g.call_function(QD.choose_qparams_symmetric.tensor, (h, lo, hi, 1e-5, torch.int8))
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
        h = g.call_function(torch.ops.aten.mul.Tensor, (decoy, 1.0))
        h.name = "dequantize_per_tensor_scale"   # named like a Q/DQ node: a name is only a label
        if aten_ops:   # what the eager quantize becomes in an ATen graph: aten's own ops, no Q/DQ nodes
            eager = g.call_function(torch.ops.aten.quantize_per_tensor.default, (h, 0.1, 0, torch.qint8))
            h = g.call_function(torch.ops.aten.dequantize.self, (eager,))
    g.output(h)
    return fx.GraphModule(root, g)


def _more_fake_quants() -> fx.GraphModule:
    """One fake-quant registered under two names (fq_a and fq_b, one module: named_modules() lists it once) and
    called by both, two call_function torch.fake_quantize_per_tensor_affine (no module), and a call of a nested
    GraphModule whose own graph calls a fake-quant (a node of that graph, not of this one): answer 2. Looking
    targets up in named_modules() gives 1 (3 with the call_functions); the nested graph's node counted gives 3."""
    manual_seed(13)
    root = nn.Module()
    root.fq_a = FusedMovingAvgObsFakeQuantize()
    root.fq_b = root.fq_a
    inner_root = nn.Module()
    inner_root.fq = FusedMovingAvgObsFakeQuantize()
    inner = fx.Graph()
    inner.output(inner.call_module("fq", (inner.placeholder("x"),)))
    root.inner = fx.GraphModule(inner_root, inner)
    g = fx.Graph()
    h = g.call_module("fq_a", (g.placeholder("x"),))
    for _ in range(2):
        h = g.call_function(torch.fake_quantize_per_tensor_affine, (h, 0.1, 0, -128, 127))
    g.output(g.call_module("fq_b", (g.call_module("inner", (h,)),)))
    return fx.GraphModule(root, g)


def _more_qdq() -> fx.GraphModule:
    """Q/DQ nodes in forms the counts must cover too: the .tensor2 overloads (scale, zero point and range as
    tensors), a quantize node whose value nobody reads, and a call of a nested GraphModule whose own graph holds a
    Q/DQ pair (nodes of that graph, not of this one): answer (2, 1)."""
    root = nn.Module()
    for name, value in (("s", torch.tensor(0.05)), ("z", torch.tensor(0)), ("lo", torch.tensor(-128)),
                        ("hi", torch.tensor(127))):
        root.register_buffer(name, value)
    inner = fx.Graph()
    x = inner.placeholder("x")
    q = inner.call_function(QD.quantize_per_tensor.default, (x, 0.05, 0, -128, 127, torch.int8))
    inner.output(inner.call_function(QD.dequantize_per_tensor.default, (q, 0.05, 0, -128, 127, torch.int8)))
    root.inner = fx.GraphModule(nn.Module(), inner)
    g = fx.Graph()
    x = g.placeholder("x")
    s, z, lo, hi = (g.get_attr(n) for n in ("s", "z", "lo", "hi"))
    g.call_function(QD.quantize_per_tensor.default, (x, 0.05, 0, -128, 127, torch.int8))   # nobody reads it
    q = g.call_function(QD.quantize_per_tensor.tensor2, (x, s, z, lo, hi, torch.int8))
    h = g.call_function(QD.dequantize_per_tensor.tensor2, (q, s, z, lo, hi, torch.int8))
    g.output(g.call_module("inner", (h,)))
    return fx.GraphModule(root, g)
