"""The models and small helpers the cases of ex08_pipeline are built from."""
from __future__ import annotations

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules.linear import NonDynamicallyQuantizableLinear


# =========================================================================================== run_pipeline


class Knots(nn.Module):
    """Redundant arithmetic for the probe passes to untangle: double negations, multiplications by one."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = torch.neg(torch.neg(x))
        b = torch.relu(a) * 1.0
        c = torch.neg(torch.neg(torch.neg(torch.neg(b))))
        return torch.relu(c) + torch.sigmoid(x) * 1.0


class _Log:
    """What the probe passes of one case did: a list of [pass name, nodes in the graph it received]."""

    def __init__(self, inputs: tuple) -> None:
        self.calls: list[list] = []
        self.inputs = inputs
        self.expect_raise = False


def _misplace_neg(gm: fx.GraphModule) -> fx.GraphModule:
    """Broken on purpose: appends neg(result) after the output node and makes the output read it."""
    out = next(n for n in gm.graph.nodes if n.op == "output")
    late = gm.graph.call_function(torch.neg, (out.args[0],))  # no inserting_before: lands after output
    out.args = (late,)
    gm.recompile()
    return gm


class MisplaceNeg:
    """The same broken pass as a callable object (no __name__)."""

    def __call__(self, gm: fx.GraphModule) -> fx.GraphModule:
        self.log.calls.append(["MisplaceNeg", len(gm.graph.nodes)])
        return _misplace_neg(gm)


class TrainBranchNet(nn.Module):
    """Halves its features only in training mode (a Python `if` that tracing freezes); computes a dead head."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.drop = nn.Dropout(0.5)
        self.fc2 = nn.Linear(8, 3)
        self.aux = nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc1(x)
        if self.training:
            h = h * 0.5
        unused = self.aux(torch.relu(h))  # noqa: F841 (dead on purpose)
        total = h.sum()  # noqa: F841
        return self.fc2(self.drop(h))


class DropBetweenNet(nn.Module):
    """Dropout hides a Conv2d -> BatchNorm2d pair and a Linear -> Linear chain until it is removed."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.drop2d = nn.Dropout2d(0.2)
        self.bn = nn.BatchNorm2d(4)
        self.fc1 = nn.Linear(4, 8)
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(8, 8)
        self.fc3 = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn(self.drop2d(self.conv(x))))
        h = self.fc1(x.mean(dim=(2, 3)))
        h = F.dropout(self.drop(h), p=0.1, training=self.training)
        return self.fc3(self.fc2(h))


class SharedChainNet(nn.Module):
    """fc_b follows fc_a but is also called on its own; then a chain that may be fused."""

    def __init__(self) -> None:
        super().__init__()
        self.fc_a = nn.Linear(6, 6)
        self.fc_b = nn.Linear(6, 6)
        self.fc_c = nn.Linear(6, 5)
        self.fc_d = nn.Linear(5, 4, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc_b(self.fc_a(x)) + self.fc_b(x)
        return self.fc_d(self.fc_c(y))


class BranchyLinearNet(nn.Module):
    """fc1's output feeds two linears: it has two users, so it is not a chain."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 4)
        self.fc3 = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc1(x)
        return self.fc2(h) + self.fc3(h)


class ModuleFedNet(nn.Module):
    """A BatchNorm2d after an nn.ReLU module and a Linear after an nn.Tanh module: neither follows a conv or a
    Linear, so nothing folds or fuses there (each module is called once, each output has one user)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.act = nn.ReLU()
        self.bn = nn.BatchNorm2d(4)
        self.squash = nn.Tanh()
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.bn(self.act(self.conv(x))).mean(dim=(2, 3))
        return self.fc(self.squash(h))


class ConvSkipNet(nn.Module):
    """A Conv2d called once whose output feeds its BatchNorm2d and a skip connection: two users, so no fold."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        return self.bn(y) + y


class SharedFirstLinearNet(nn.Module):
    """fc1 feeds only fc2 at one site but is called again on its own: the first Linear of the pair is shared."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 6)
        self.fc2 = nn.Linear(6, 6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.fc1(x)) + self.fc1(x)


class UpsampleBNNet(nn.Module):
    """A BatchNorm2d after a ConvTranspose2d, which is no Conv2d (its weight holds the input channels in dim 0):
    nothing folds there; then a Conv2d -> BatchNorm2d pair that folds."""

    def __init__(self) -> None:
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 4, 2, stride=2)
        self.bn_up = nn.BatchNorm2d(4)
        self.conv = nn.Conv2d(4, 3, 3, padding=1)
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(self.conv(torch.relu(self.bn_up(self.up(x)))))


class FunctionalDropoutNet(nn.Module):
    """Functional dropouts of several kinds, each given the model's mode: F.dropout, F.dropout2d, F.alpha_dropout
    and torch.dropout."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.dropout2d(self.conv(x), 0.2, self.training)
        h = F.dropout(h.mean(dim=(2, 3)), p=0.1, training=self.training)
        h = F.alpha_dropout(torch.tanh(h), 0.1, self.training)
        return self.fc(torch.dropout(h, 0.3, self.training))


class SubclassLinearNet(nn.Module):
    """A Linear chain whose first module is torch.nn's NonDynamicallyQuantizableLinear, a subclass of nn.Linear (a
    leaf of symbolic_trace, as torch.nn modules are): it is a Linear, so fc1 -> fc2 fuses."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = NonDynamicallyQuantizableLinear(6, 8)
        self.fc2 = nn.Linear(8, 4)
        self.fc3 = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc3(torch.relu(self.fc2(self.fc1(x))))


class AlphaDropoutNet(nn.Module):
    """The dropout modules met less often: nn.FeatureAlphaDropout and nn.AlphaDropout (neither is an nn.Dropout)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.feature_drop = nn.FeatureAlphaDropout(0.2)
        self.alpha_drop = nn.AlphaDropout(0.1)
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.feature_drop(torch.tanh(self.conv(x)))
        return self.fc(self.alpha_drop(h.mean(dim=(2, 3))))


class UnusedInputNet(nn.Module):
    """forward(x, mask) never reads mask: its placeholder has no users, and it stays (the caller passes both)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.drop = nn.Dropout(0.2)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.drop(self.fc1(x)))


class BatchStatsBNNet(nn.Module):
    """A Conv2d -> BatchNorm2d(track_running_stats=False): in eval mode too it normalises with the batch's own
    statistics (it has no running ones), so it cannot be folded into the conv's weights."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4, track_running_stats=False)
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.relu(self.bn(self.conv(x))).mean(dim=(2, 3)))
