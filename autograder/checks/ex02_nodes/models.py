"""The models and small helpers the cases of ex02_nodes are built from."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


# --------------------------------------------------------------------------- models the learner has not seen

class SixOps(nn.Module):
    """All six opcodes, a nested Sequential (targets 'enc.0', 'enc.1') and 'enc.0' called a second time."""

    def __init__(self) -> None:
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.scale = nn.Parameter(torch.linspace(0.5, 2.0, 4))
        self.head = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.enc(x)
        h = self.enc[0](h)                      # the same Linear again: a second call_module 'enc.0'
        h = (h * self.scale).tanh()             # get_attr, call_function, call_method
        return self.head(h)


class Stacked(nn.Module):
    """A ModuleList applied in a loop: node names layers_0.. but targets layers.0.."""

    def __init__(self, n: int = 3) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(5, 5) for _ in range(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


class CallOrder(nn.Module):
    """Registered a then b, called b, a, b: graph order is not registration order, and b repeats."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(self.b(x)))


class Inner(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.proj(x)) + x


class Outer(nn.Module):
    """Two levels of nesting and a block used twice: targets 'blocks.1.proj', ... and 'blocks.0.*' again."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([Inner(), Inner()])
        self.out = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks[1](self.blocks[0](x))
        x = self.blocks[0](x)
        return self.out(x)


class NoModules(nn.Module):
    """Functions and methods only: no call_module node at all."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x).sum(dim=-1)


class Square(nn.Module):
    """fc's output is used twice by the same mul (users is a dict: mul once), and once by add."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.out = nn.Linear(3, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        return self.out(h * h + h)


class NestedUses(nn.Module):
    """fc's output is used inside a list (torch.cat) and as a keyword argument (other=)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        both = torch.cat([h, x], dim=-1)
        return both.sum(dim=-1, keepdim=True) + torch.add(x, other=h)


class TwoOutputs(nn.Module):
    """fc's output is returned as well as used by relu: the output node is a user."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.fc(x)
        return torch.relu(h), h


class DeadBranch(nn.Module):
    """An unused chain longer than the live path (symbolic_trace keeps dead code)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        unused = torch.sigmoid(x).neg().exp().relu().tanh()  # noqa: F841
        return self.fc(x)


class ParamChain(nn.Module):
    """A long chain that starts at a parameter (get_attr), a short one from the input."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3))
        self.fc = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.scale.exp().exp().sigmoid().tanh()
        return self.fc(x) * w


class SecondInputDeeper(nn.Module):
    """Two placeholders; the longest path starts at the second one, the shortest too, x's path is between."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 3)
        self.fc2 = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(y))) + x.neg() + y


class ShallowFirst(nn.Module):
    """The first argument of the final add is the short branch; the long one is args[1]."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 3)
        self.fc2 = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x) + self.fc2(F.relu(self.fc1(x)))


class ReadsBias(nn.Module):
    """A Linear called, and its bias read as a tensor: a get_attr node 'fc.bias' whose target starts at a
    submodule (still a get_attr, not a module call)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x) * self.fc.bias


class UnusedCall(nn.Module):
    """'probe' is called but its result is never used (a call kept for its side effects): symbolic_trace keeps
    the call_module node, which has no users. Registered fc, probe; called probe, fc."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.probe = nn.Linear(3, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.probe(x)
        return self.fc(x)


class Bias(nn.Module):
    """A module called with no input at all: it returns its own parameter."""

    def __init__(self) -> None:
        super().__init__()
        self.b = nn.Parameter(torch.zeros(3))

    def forward(self) -> torch.Tensor:
        return self.b


class SequentialBlock(nn.Module):
    """A Sequential and a Linear: a tracer that keeps Sequentials as leaves calls 'block' itself, a module with
    children."""

    def __init__(self) -> None:
        super().__init__()
        self.block = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
        self.head = nn.Linear(3, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.block(x))


class DictOutput(nn.Module):
    """Returns a dict holding a tuple holding a list: the output node reads h and x only from deep inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> dict:
        h = self.fc(x).relu()
        return {"h": torch.sigmoid(h), "pair": (x, [h])}


class Relus(nn.Module):
    """Nodes named relu and relu_1: the name of one is a part of the other's."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = torch.relu(x)
        b = torch.relu(x * 2)
        return torch.sum(a) + b.neg()


class InputNamed(nn.Module):
    """An input named `input`: symbolic_trace names its placeholder input_1 (the name input is taken), its target
    stays 'input'."""

    def forward(self, input: torch.Tensor) -> torch.Tensor:  # noqa: A002
        return torch.relu(input)
