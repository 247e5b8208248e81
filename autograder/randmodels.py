"""Seeded random models for checks: depths, widths, branches, shared modules, missing biases.

A check that only ever sees the example model lets through answers that only fit the example; these
generators draw a different, reproducible model for every seed.
"""
from __future__ import annotations

import random

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["RandomMLP", "RandomConvNet", "random_mlp", "random_convnet", "example_input", "randomize_batchnorm"]


class RandomMLP(nn.Module):
    """A stack of steps drawn from a seed; each step is one of a few tricky patterns."""

    STEPS = ("linear", "relu_fn", "relu_mod", "relu_method", "residual", "dropout", "chain", "shared", "branch")

    def __init__(self, seed: int, width: int | None = None, depth: int | None = None,
                 steps: tuple[str, ...] | None = None) -> None:
        super().__init__()
        rng = random.Random(seed)
        torch.manual_seed(seed)
        self.width = width or rng.choice([4, 6, 8, 12])
        depth = depth or rng.randint(3, 6)
        self.plan = list(steps) if steps else [rng.choice(self.STEPS) for _ in range(depth)]
        self.layers = nn.ModuleDict()
        w = self.width
        for i, step in enumerate(self.plan):
            bias = rng.random() < 0.7
            if step in ("linear", "residual", "branch"):
                self.layers[f"l{i}"] = nn.Linear(w, w, bias=bias)
            elif step == "relu_mod":
                self.layers[f"r{i}"] = nn.ReLU()
            elif step == "dropout":
                self.layers[f"d{i}"] = nn.Dropout(0.3)
            elif step == "chain":
                mid = rng.choice([w // 2 or 1, w, 2 * w])
                self.layers[f"c{i}a"] = nn.Linear(w, mid, bias=bias)
                self.layers[f"c{i}b"] = nn.Linear(mid, w, bias=rng.random() < 0.7)
            elif step == "shared":
                self.layers[f"s{i}"] = nn.Linear(w, w, bias=bias)
        self.head = nn.Linear(w, rng.choice([2, 3, 5]), bias=rng.random() < 0.8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, step in enumerate(self.plan):
            if step == "linear":
                x = self.layers[f"l{i}"](x)
            elif step == "relu_fn":
                x = F.relu(x)
            elif step == "relu_mod":
                x = self.layers[f"r{i}"](x)
            elif step == "relu_method":
                x = x.relu()
            elif step == "residual":
                x = torch.relu(self.layers[f"l{i}"](x)) + x
            elif step == "dropout":
                x = self.layers[f"d{i}"](x)
            elif step == "chain":
                x = self.layers[f"c{i}b"](self.layers[f"c{i}a"](x))
            elif step == "shared":
                lin = self.layers[f"s{i}"]
                x = lin(torch.relu(lin(x)))
            elif step == "branch":
                x = torch.cat([self.layers[f"l{i}"](x), torch.tanh(x)], dim=-1)[..., : self.width] * 0.5 + x.sigmoid()
        return self.head(x)


class RandomConvNet(nn.Module):
    """Conv2d/BatchNorm2d stacks drawn from a seed: biases on or off, affine BN or not, a shared conv."""

    def __init__(self, seed: int, shared: bool | None = None) -> None:
        super().__init__()
        rng = random.Random(seed)
        torch.manual_seed(seed)
        c = rng.choice([3, 4, 6])
        self.in_channels = 3
        blocks = []
        cin = 3
        for _ in range(rng.randint(1, 3)):
            k = rng.choice([1, 3])
            conv = nn.Conv2d(cin, c, k, padding=k // 2, bias=rng.random() < 0.5)
            bn = nn.BatchNorm2d(c, affine=rng.random() < 0.7)
            blocks += [conv, bn, nn.ReLU()]
            cin = c
        self.features = nn.Sequential(*blocks)
        self.shared = shared if shared is not None else rng.random() < 0.5
        self.tail = nn.Conv2d(c, c, 3, padding=1, bias=rng.random() < 0.5)
        self.bn_a = nn.BatchNorm2d(c)
        self.bn_b = nn.BatchNorm2d(c)
        self.head = nn.Linear(c, 3)
        g = torch.Generator().manual_seed(seed)
        for m in self.modules():  # non-trivial running statistics, so that folding matters
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.5)
                m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                if m.affine:
                    m.weight.data.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                    m.bias.data.copy_(torch.randn(m.num_features, generator=g) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        y = self.bn_a(self.tail(x))
        if self.shared:
            y = y + self.bn_b(self.tail(x.flip(-1)))
        return self.head(y.mean(dim=(2, 3)))


def random_mlp(seed: int, **kwargs: object) -> RandomMLP:
    """A seeded RandomMLP in eval mode."""
    return RandomMLP(seed, **kwargs).eval()


def random_convnet(seed: int, **kwargs: object) -> RandomConvNet:
    """A seeded RandomConvNet in eval mode."""
    return RandomConvNet(seed, **kwargs).eval()


def example_input(model: nn.Module, batch: int = 3, seed: int = 0) -> torch.Tensor:
    """A seeded input that fits a model from this module (or TinyNet/Net-like models with .fc1)."""
    g = torch.Generator().manual_seed(seed)
    if isinstance(model, RandomMLP):
        return torch.randn(batch, model.width, generator=g)
    if isinstance(model, RandomConvNet):
        return torch.randn(batch, 3, 6, 6, generator=g)
    first = next(m for m in model.modules() if isinstance(m, (nn.Linear, nn.Conv2d)))
    if isinstance(first, nn.Linear):
        return torch.randn(batch, first.in_features, generator=g)
    return torch.randn(batch, first.in_channels, 8, 8, generator=g)


def randomize_batchnorm(model: nn.Module, seed: int, var_low: float = 0.5, var_high: float = 2.0) -> nn.Module:
    """Non-trivial running statistics and affine parameters for every BatchNorm that keeps statistics (in
    place), as if the model had been trained, so that folding them matters. Variances in var_low..var_high."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.running_mean is not None:
                n = m.num_features
                m.running_mean.copy_(torch.randn(n, generator=g) * 0.5)
                m.running_var.copy_(var_low + (var_high - var_low) * torch.rand(n, generator=g))
                if m.affine:
                    m.weight.copy_(0.5 + torch.rand(n, generator=g))
                    m.bias.copy_(torch.randn(n, generator=g) * 0.2)
    return model
