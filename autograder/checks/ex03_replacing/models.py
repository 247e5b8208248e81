"""The models and small helpers the cases of ex03_replacing are built from."""
from __future__ import annotations

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules.linear import NonDynamicallyQuantizableLinear
from torch.overrides import TorchFunctionMode


# ------------------------------------------------------------------------------------------ models

class ClampFunctionNet(nn.Module):
    """torch.relu twice (one output used twice), F.relu in between: only torch.relu calls may change."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 10)
        self.fc2 = nn.Linear(10, 10)
        self.head = nn.Linear(10, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc1(x))
        g = F.relu(self.fc2(h))
        return self.head(torch.relu(g + h) + h)


class ReluOutputNet(nn.Module):
    """A torch.relu whose value is both used and returned, next to a .relu() method call."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(5, 5)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = torch.relu(self.fc(x))
        return h, self.fc(h).relu() * 2.0


class InplaceReluNet(nn.Module):
    """The in-place spellings: torch.relu_, F.relu(inplace=True), nn.ReLU(inplace=True), .relu_()."""

    def __init__(self) -> None:
        super().__init__()
        self.l1 = nn.Linear(6, 8)
        self.l2 = nn.Linear(8, 8)
        self.l3 = nn.Linear(8, 8, bias=False)
        self.act = nn.ReLU(inplace=True)
        self.head = nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu_(self.l1(x))
        h = F.relu(self.l2(h), inplace=True)
        h = self.act(self.l3(h))
        return self.head(self.l2(h).relu_() + h)


class SharedReluNet(nn.Module):
    """One nn.ReLU module called from two sites, nested in a Sequential, plus a sigmoid that must stay."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 6))
        self.act = nn.ReLU()
        self.head = nn.Linear(6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act(self.body(x))
        return self.head(self.act(h - 0.5) + torch.sigmoid(h))


class KeywordReluNet(nn.Module):
    """torch.relu called with its input by keyword: node.args is empty, node.kwargs holds `input`."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.relu(input=self.fc(x)) - 0.1)


class ReluLikeNet(nn.Module):
    """A torch.relu next to ReLU-like ops that are not ReLU and must stay: F.relu6, F.leaky_relu, nn.ReLU6 and
    nn.LeakyReLU."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.six = nn.ReLU6()
        self.leaky = nn.LeakyReLU(0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc(x))
        return h + F.relu6(x * 4.0) + F.leaky_relu(x, 0.2) + self.six(x * 4.0) + self.leaky(x)


class PlainAndInplaceReluNet(nn.Module):
    """torch.relu next to torch.relu_: the in-place function is another op, so relu_to_clamp leaves it."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.head = nn.Linear(6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        return self.head(torch.relu(h) + torch.relu_(h * 0.5))


def relu(t: torch.Tensor) -> torch.Tensor:
    """The model's own helper that is only named relu: a leaky ReLU, kept whole by fx.wrap (lesson 04)."""
    return torch.where(t > 0, t, 0.1 * t)


fx.wrap("relu")


class NamesakeReluNet(nn.Module):
    """A wrapped helper of the model's own named `relu` (a call_function node, not torch.relu) next to torch.relu."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.head = nn.Linear(6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        return self.head(relu(h) + torch.relu(h - 0.5))


class ReluCousinsNet(nn.Module):
    """nn.ReLU next to modules whose class names contain ReLU but that compute no ReLU: nn.RReLU (eval mode:
    a fixed negative slope) and nn.PReLU (a learned one)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.act = nn.ReLU()
        self.rrelu = nn.RReLU()
        self.prelu = nn.PReLU()
        self.head = nn.Linear(6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        return self.head(self.act(h) + self.rrelu(h) + self.prelu(h))


class SwapNet(nn.Module):
    """torch.relu and F.relu (both named 'relu'), a .sigmoid() method and torch.sigmoid, an add."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(5, 7)
        self.fc2 = nn.Linear(7, 7)
        self.head = nn.Linear(7, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc1(x))
        g = F.relu(self.fc2(h)) + torch.relu(h)
        return self.head(torch.sigmoid(g) + h.sigmoid() + h)


class KwargsNet(nn.Module):
    """torch.sum called with keyword arguments (dim=1, keepdim=True) that the swapped node must keep."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        return h + torch.sum(h, dim=1, keepdim=True)


class SharedLinearNet(nn.Module):
    """One Linear called twice, on 3-d inputs (batch, tokens, features), then a bias-free head."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(6, 6)
        self.head = nn.Linear(6, 4, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.proj(torch.tanh(self.proj(x))) + x)


class NestedAndTopLinear(nn.Module):
    """A top-level Linear ('fc') and one nested in a Sequential ('block.0'): a pass that handles one form only
    shows which one it misses."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(5, 6)
        self.block = nn.Sequential(nn.Linear(6, 3), nn.Tanh())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block(torch.relu(self.fc(x)))


class SubclassLinearNet(nn.Module):
    """An nn.Linear subclass of torch.nn's own (NonDynamicallyQuantizableLinear, nn.MultiheadAttention's out_proj),
    which tracing keeps whole as a call_module node, after a plain Linear."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(5, 6)
        self.out_proj = NonDynamicallyQuantizableLinear(6, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out_proj(torch.tanh(self.fc(x)))


class InplaceAfterLinearNet(nn.Module):
    """An in-place relu_ call on what a Linear returned, whose own result no one reads: it still changes h."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.head = nn.Linear(6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        h.relu_()
        return self.head(h)


class DeadNodesNet(nn.Module):
    """Calls whose results nobody reads: a torch.relu, an nn.ReLU, an nn.Linear and a torch.tanh, dead nodes of the
    graph that a pass must treat as any other node (replace what it replaces, keep what it keeps); and h.add_(1.0),
    an in-place call whose own result is unused but which changes h, so dropping dead code changes the output."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.act = nn.ReLU()
        self.probe = nn.Linear(6, 2)
        self.head = nn.Linear(6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        torch.relu(h)
        self.act(h)
        self.probe(h)
        torch.tanh(h)
        h.add_(1.0)
        return self.head(h)


class _EagerSwap(TorchFunctionMode):
    """Run eager code with some torch functions replaced: the reference for passes that change an op."""

    def __init__(self, mapping: list[tuple[object, object]]) -> None:
        super().__init__()
        self.mapping = mapping

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        for old, new in self.mapping:
            if func is old:
                return new(*args, **kwargs)
        return func(*args, **kwargs)
