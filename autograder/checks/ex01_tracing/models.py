"""The models of ex01_tracing's cases (the worker's side: needed to build the cases' inputs)."""
from __future__ import annotations

import torch
import torch.nn as nn


class ScaledSkip(nn.Module):
    """Uses a parameter directly (get_attr), a method call and two inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.tensor([0.5, 2.0, -1.0]))
        self.fc = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.fc(x).mul(self.scale) + y.sum(dim=-1, keepdim=True)


class DeadBranch(nn.Module):
    """Computes a tanh nobody uses: tracing keeps the dead node, and it is a node like any other."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        unused = torch.tanh(x)  # noqa: F841 (the dead node is the point)
        return self.fc(x)


class GradModeNet(nn.Module):
    """Its output depends on whether autograd is on, so a check can see if no_grad was used."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * (2.0 if torch.is_grad_enabled() else 1.0)


class OpcodeNames(nn.Module):
    """Its nodes are named like opcodes: a placeholder named call_module, a call_module node named placeholder
    (the submodule's name), so only node.op, never node.name, tells a node's opcode."""

    def __init__(self) -> None:
        super().__init__()
        self.placeholder = nn.Linear(3, 3)

    def forward(self, call_module: torch.Tensor) -> torch.Tensor:
        return self.placeholder(call_module)


class TwiceAndSpare(nn.Module):
    """fc is called twice and spare never: two call_module nodes for fc, none for spare."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.spare = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.relu(self.fc(x)))


class Namesakes(nn.Module):
    """Its inputs are named input and output: FX names the first placeholder input_1 (its target stays 'input')
    and, the name output being taken, the output node output_1."""

    def forward(self, input: torch.Tensor, output: torch.Tensor) -> torch.Tensor:  # noqa: A002 (the point)
        return torch.relu(input) + output


class LogNet(nn.Module):
    """A log: an input of 0 gives -inf, the same -inf in the model and in its trace (and -inf - -inf is nan)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(x)


class Spectrum(nn.Module):
    """A real FFT: complex outputs."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.fft.rfft(x)


def times_grad_flag(x: torch.Tensor) -> torch.Tensor:
    """x doubled while autograd records, x as it is under torch.no_grad(): GradModeNet's forward as a function a
    graph can call, so a GraphModule that calls it reads the grad mode when it runs (a trace of GradModeNet reads
    it once, while tracing)."""
    return x * (2.0 if torch.is_grad_enabled() else 1.0)


class DropoutNet(nn.Module):
    """A Linear and a Dropout: in training mode two runs drop other values, in eval mode they agree."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.drop = nn.Dropout(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.fc(x))
