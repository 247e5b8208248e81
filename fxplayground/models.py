"""Small models with tricky parts, used by the lessons, the exercises and the checks."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = [
    "TinyNet", "Net", "ThreeReluNet", "DropoutNet", "LinearChain", "ConvBNNet",
    "SharedConvNet", "ResidualBlock", "SmallResNet", "QATNet",
]


class TinyNet(nn.Module):
    """Linear 4->8, relu, Linear 8->2: the course's first model."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class Net(nn.Module):
    """Linear 8->16, nn.ReLU module, Linear 16->4."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class ThreeReluNet(nn.Module):
    """ReLU in all three forms (function, module, method) plus a skip connection."""

    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width, bias=False)
        self.act = nn.ReLU()
        self.head = nn.Linear(width, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.fc1(x))          # call_function
        h = self.act(self.fc2(h)) + x    # call_module, then a residual add
        return self.head(h.relu())       # call_method


class DropoutNet(nn.Module):
    """Dropout as a module and as a function, between linears."""

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 12)
        self.drop = nn.Dropout(p)
        self.fc2 = nn.Linear(12, 12)
        self.fc3 = nn.Linear(12, 2)
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.drop(torch.relu(self.fc1(x)))
        h = F.dropout(torch.relu(self.fc2(h)), p=self.p, training=self.training)
        return self.fc3(h)


class LinearChain(nn.Module):
    """Linears back to back with no nonlinearity between them: 512->2048->512 by default."""

    def __init__(self, dims: tuple[int, ...] = (512, 2048, 512), bias: bool = True) -> None:
        super().__init__()
        self.layers = nn.Sequential(*[nn.Linear(a, b, bias=bias) for a, b in zip(dims, dims[1:])])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


class ConvBNNet(nn.Module):
    """Conv2d->BatchNorm2d->ReLU twice, the second conv without bias, then pooling and a head."""

    def __init__(self, channels: int = 8, classes: int = 4) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, channels, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.head = nn.Linear(channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.bn2(self.conv2(x)))
        return self.head(x.mean(dim=(2, 3)))


class SharedConvNet(nn.Module):
    """One conv module called from two sites, each followed by its own BatchNorm: not safe to fold."""

    def __init__(self, channels: int = 4) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn_a = nn.BatchNorm2d(channels)
        self.bn_b = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn_a(self.conv(x)) + self.bn_b(self.conv(torch.flip(x, dims=(3,))))


class ResidualBlock(nn.Module):
    """conv-bn-relu-conv-bn plus the input: the unit of a ResNet."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(h)) + x)


class SmallResNet(nn.Module):
    """A stem, a few residual blocks and a linear head: ResNet in miniature."""

    def __init__(self, channels: int = 16, blocks: int = 2, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.blocks = nn.Sequential(*[ResidualBlock(channels) for _ in range(blocks)])
        self.head = nn.Linear(channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn(self.stem(x)))
        x = self.blocks(x)
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


class QATNet(nn.Module):
    """A linear-heavy classifier for quantization-aware training: 16 -> 64 -> 64 -> classes."""

    def __init__(self, features: int = 16, hidden: int = 64, classes: int = 4) -> None:
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(hidden, hidden)
        self.relu2 = nn.ReLU()
        self.fc3 = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc3(self.relu2(self.fc2(self.relu1(self.fc1(x)))))
