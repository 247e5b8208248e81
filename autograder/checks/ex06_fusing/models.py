"""The models and small helpers the cases of ex06_fusing are built from."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


# ========================================================================= fuse_consecutive_linears

class TwoChains(nn.Module):
    """Two chains alike but for their names (fc1 -> fc2, body.0 -> body.1): whatever a pass does to one it should
    do to the other, so a pass that fuses one only is seen deciding by name."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 4)
        self.body = nn.Sequential(nn.Linear(6, 8), nn.Linear(8, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.fc1(x)) + self.body(x)


class ForkedChain(nn.Module):
    """l1's output feeds l2 and a relu, so l1 ends its chain; l2 -> l3 is a chain of two."""

    def __init__(self, w: int = 6) -> None:
        super().__init__()
        self.l1 = nn.Linear(w, w)
        self.l2 = nn.Linear(w, 2 * w, bias=False)
        self.l3 = nn.Linear(2 * w, w)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.l1(x)
        return self.l3(self.l2(h)) + torch.relu(h)


class SharedSecond(nn.Module):
    """a -> b is a chain, and b is also called on another path."""

    def __init__(self, w: int = 5) -> None:
        super().__init__()
        self.a = nn.Linear(w, 2 * w)
        self.b = nn.Linear(2 * w, w)
        self.up = nn.Linear(w, 2 * w, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x)) + self.b(torch.tanh(self.up(x)))


class SharedFirst(nn.Module):
    """a -> b is a chain, and a is also called on another path (a sees `x` there too)."""

    def __init__(self, w: int = 5) -> None:
        super().__init__()
        self.a = nn.Linear(w, w)
        self.b = nn.Linear(w, 3, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x)).sum(-1, keepdim=True) + self.a(torch.tanh(x))


class SelfChain(nn.Module):
    """The same Linear twice in a row, and once more elsewhere."""

    def __init__(self, w: int = 6) -> None:
        super().__init__()
        self.a = nn.Linear(w, w)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.a(self.a(x)) + self.a(x.flip(-1))


class KeywordChain(nn.Module):
    """a(input=x) -> b -> c -> d(input=h): a Linear called with its input by keyword is left alone, so only
    b -> c is a chain."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b, self.c, self.d = nn.Linear(5, 6), nn.Linear(6, 7), nn.Linear(7, 8), nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.d(input=self.c(self.b(self.a(input=x))))


class MixedChain(nn.Module):
    """Five Linears back to back, biases on and off, widths changing, then a function ends it."""

    def __init__(self) -> None:
        super().__init__()
        dims, bias = (5, 7, 3, 9, 4, 6), (True, False, True, False, True)
        self.blocks = nn.ModuleList(nn.Linear(a, b, bias=c) for a, b, c in zip(dims, dims[1:], bias))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return torch.sigmoid(x)


class NameClash(nn.Module):
    """A chain a -> b, and submodules already called fused_a and fused_a_ (used elsewhere): a fused layer needs a
    name no submodule has."""

    def __init__(self, w: int = 5) -> None:
        super().__init__()
        self.a = nn.Linear(w, w)
        self.b = nn.Linear(w, 3)
        self.fused_a = nn.Linear(w, 3, bias=False)
        self.fused_a_ = nn.Linear(w, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x)) + self.fused_a(torch.tanh(x)) - self.fused_a_(torch.sigmoid(x))


class FunctionalBreak(nn.Module):
    """a, then F.linear with a parameter (a function, not a module), then b: no Linear -> Linear chain."""

    def __init__(self, w: int = 4) -> None:
        super().__init__()
        self.a = nn.Linear(w, w)
        self.w = nn.Parameter(torch.randn(w, w))
        self.b = nn.Linear(w, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(F.linear(self.a(x), self.w))


# ====================================================================================== fuse_conv_bn

class TwoBlocks(nn.Module):
    """Two Conv2d -> BatchNorm2d pairs alike but for their names (conv1 -> bn1, features.0 -> features.1)."""

    def __init__(self, c: int = 4) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, c, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(c)
        self.features = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn1(self.conv1(x)) - self.features(x)


class TwoUserConv(nn.Module):
    """conv1's output feeds bn1 and a skip connection, so it cannot be folded; conv2 -> bn2 can."""

    def __init__(self, c: int = 4) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, c, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv1(x)
        y = torch.relu(self.bn1(h)) + h
        return self.bn2(self.conv2(y))


class NoStatsBN(nn.Module):
    """A BatchNorm2d without running statistics normalizes with batch statistics even in eval mode."""

    def __init__(self, c: int = 4) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, c, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(c, track_running_stats=False)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))


class BigEps(nn.Module):
    """BatchNorms with a large eps, where forgetting eps shows."""

    def __init__(self, c: int = 4) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, c, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(c, eps=0.1)
        self.pool_bn = nn.BatchNorm2d(c, eps=0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool_bn(torch.relu(self.bn(self.conv(x))))   # pool_bn follows a relu, not a conv


class Conv1dBN(nn.Module):
    """Conv1d -> BatchNorm1d, then Conv2d -> BatchNorm2d: only the 2-d pair is fuse_conv_bn's to fold."""

    def __init__(self, c: int = 4) -> None:
        super().__init__()
        self.conv1d = nn.Conv1d(3, c, 3, padding=1)
        self.bn1d = nn.BatchNorm1d(c)
        self.conv = nn.Conv2d(1, 2, 3, padding=1)
        self.bn = nn.BatchNorm2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.bn1d(self.conv1d(x)))          # (N, c, L)
        return self.bn(self.conv(h.unsqueeze(1)))         # (N, 2, c, L)


class ModuleFedBN(nn.Module):
    """A BatchNorm2d whose input is an nn.ReLU module called once (one user): there is no conv to fold into."""

    def __init__(self, c: int = 4) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, c, 3, padding=1)
        self.act = nn.ReLU()
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(self.act(self.conv(x)))


# ============================================== hidden cases added for wrong answers that once got full marks

class TakenNames(nn.Module):
    """A chain a -> b, and submodules already called fused, fused_0 and fused_1 (used on other paths): a fused
    layer registered under a numbered name without looking replaces one of them."""

    def __init__(self, w: int = 5) -> None:
        super().__init__()
        self.a = nn.Linear(w, w)
        self.b = nn.Linear(w, 3)
        self.fused = nn.Linear(w, 3, bias=False)
        self.fused_0 = nn.Linear(w, 3)
        self.fused_1 = nn.Linear(w, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (self.b(self.a(x)) + self.fused(torch.tanh(x)) - self.fused_0(torch.sigmoid(x))
                + self.fused_1(torch.relu(x)))


class BiasRead(nn.Module):
    """A chain a -> b whose second Linear's bias the graph also reads (a get_attr node of b.bias): b is called
    from one site, so the chain is fused, but the module b must stay while the graph reads its bias."""

    def __init__(self, w: int = 5) -> None:
        super().__init__()
        self.a = nn.Linear(w, 2 * w)
        self.b = nn.Linear(2 * w, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x)) + self.b.bias


class KeywordBN(nn.Module):
    """conv1 -> bn1 called with its input by keyword (bn1(input=h)), then conv2 -> bn2 called positionally."""

    def __init__(self, c: int = 4) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, c, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 1)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn2(self.conv2(torch.relu(self.bn1(input=self.conv1(x)))))


class MoreTakenNames(nn.Module):
    """A chain a -> b, submodules already called by the names a pass may number its fused layers with
    (fused_linear_0, merged_0, fused0, linear_0, fused_a_b, fused_ab), each used on a path of its own, and a
    parameter fused_linear_1: a name is fresh only when gm has no attribute of that name at all."""

    def __init__(self, w: int = 5) -> None:
        super().__init__()
        self.a = nn.Linear(w, w)
        self.b = nn.Linear(w, 3)
        self.taken = ("fused_linear_0", "merged_0", "fused0", "linear_0", "fused_a_b", "fused_ab")
        for name in self.taken:
            setattr(self, name, nn.Linear(w, 3))
        self.fused_linear_1 = nn.Parameter(torch.linspace(-1.0, 1.0, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.b(self.a(x)) + self.fused_linear_1
        for k, name in enumerate(self.taken):
            out = out + getattr(self, name)(torch.sin(x * (k + 1)))
        return out


class ConvTwoSitesOneBN(nn.Module):
    """One conv called from two sites, only the first of them followed by a BatchNorm2d: the conv is shared all
    the same, so nothing folds (folding bn into it would change the second site's output too)."""

    def __init__(self, c: int = 3) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(self.bn(self.conv(x))))


class ConvTransposeBN(nn.Module):
    """A ConvTranspose2d -> BatchNorm2d pair, which stays (a ConvTranspose2d is no Conv2d: its weight's channels
    are the other way round), then a Conv2d -> BatchNorm2d pair, which folds."""

    def __init__(self) -> None:
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 6, 3)
        self.bn_up = nn.BatchNorm2d(6)
        self.conv = nn.Conv2d(6, 5, 1)
        self.bn = nn.BatchNorm2d(5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(self.conv(self.bn_up(self.up(x))))


class SharedBN(nn.Module):
    """One BatchNorm2d called from two sites: after a conv (that pair folds) and after a relu (that call stays, so
    the module must stay too)."""

    def __init__(self, c: int = 4) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(torch.relu(self.bn(self.conv(x))))
