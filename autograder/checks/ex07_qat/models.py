"""The models and small helpers the cases of ex07_qat are built from."""
from __future__ import annotations

import torch
import torch.nn as nn
from torch.ao.quantization import (
    FakeQuantize, FakeQuantizeBase, FusedMovingAvgObsFakeQuantize, MinMaxObserver, MovingAverageMinMaxObserver,
)
from torch.ao.quantization._learnable_fake_quantize import _LearnableFakeQuantize


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


class _Diagnostic(nn.Module):
    """Modules chosen so that each usual mistake gives its own count (see _diagnostic)."""

    def __init__(self) -> None:
        super().__init__()
        from torch.ao.quantization import get_default_qat_qconfig
        self.qa = FusedMovingAvgObsFakeQuantize()            # a FakeQuantize subclass
        self.qd = FakeQuantize()                               # exactly a FakeQuantize
        self.qb = _LearnableFakeQuantize(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255)
        self.qc = RoundTrip()                                  # a FakeQuantizeBase named otherwise
        self.fake_stats = MinMaxObserver()                     # an observer with 'fake' in its name
        self.activation_post_process_act = nn.ReLU()           # a ReLU named like prepare's observers
        self.lin = torch.ao.nn.qat.Linear(4, 4, qconfig=get_default_qat_qconfig("x86"))  # weight_fake_quant inside


class Gate(nn.Module):
    """A module of the learner's own with a buffer named like a fake-quant's switch: it is no fake-quantize module."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("fake_quant_enabled", torch.tensor([1], dtype=torch.uint8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.fake_quant_enabled


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fq = FakeQuantize()


class _Lookalikes(nn.Module):
    """A fake-quant at the top, one inside a submodule (target 'sub.fq'), a Gate and a Linear."""

    def __init__(self) -> None:
        super().__init__()
        self.qin = FusedMovingAvgObsFakeQuantize()
        self.sub = _Block()
        self.gate = Gate()
        self.lin = nn.Linear(4, 4)


class Impostor(nn.Identity):
    """Not a fake-quantize module, though its class is named FakeQuantizeBase: a class name proves nothing."""


Impostor.__name__ = Impostor.__qualname__ = "FakeQuantizeBase"


class _WithImpostor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.input_quant = FusedMovingAvgObsFakeQuantize()
        self.impostor = Impostor()
        self.lin = nn.Linear(4, 4)


class DropQATNet(nn.Module):
    """A classifier with an nn.Dropout(p=0.0) between its Linears: a dropout that drops nothing, so training runs
    the same whatever the random numbers, and its module's mode still shows whether training left it in train mode."""

    def __init__(self, features: int = 8, hidden: int = 16, classes: int = 3) -> None:
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.drop = nn.Dropout(p=0.0)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.drop(torch.relu(self.fc1(x))))


class NonPersistent(nn.Module):
    """A Linear and a large buffer registered with persistent=False, which state_dict() leaves out."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("scratch", torch.zeros(10000), persistent=False)


class HasModule(nn.Module):
    """A submodule named `module` beside a larger one: not a DataParallel wrapper, whatever the name says."""

    def __init__(self) -> None:
        super().__init__()
        self.module = nn.Linear(4, 4)
        self.head = nn.Linear(64, 64)
