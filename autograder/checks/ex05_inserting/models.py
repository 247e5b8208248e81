"""The models and small helpers the cases of ex05_inserting are built from."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules.linear import NonDynamicallyQuantizableLinear


class SharedUse(nn.Module):
    """`h` is read twice by one node, once inside a list argument, and by one node both as a plain argument
    and as a keyword argument (so a pass that rewires plain arguments only is seen doing so)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(5, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        return torch.cat([h, h * h, torch.add(h, other=h)], dim=-1)


class SideBranch(nn.Module):
    """'relu' is read by the last node only: the node right after it (sigmoid) is no user of it, so "right
    after 'relu'" and "just before its first user" are two places."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = torch.relu(x)
        b = torch.sigmoid(x)
        return a * b


# =================================================================================== remove_dropout

class MyDropout(nn.Dropout):
    """A subclass of nn.Dropout: still a dropout."""


class SharedDropNet(nn.Module):
    """One nn.Dropout module called from two sites."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 10)
        self.fc2 = nn.Linear(10, 4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.drop(torch.relu(self.fc1(x)))
        return self.fc2(self.drop(h * 2.0))


class OutputDropNet(nn.Module):
    """Dropout feeding the output directly, and dropout right on the input, back to back; only one of the
    three is named like a dropout (drop_in), so a name never decides."""

    def __init__(self) -> None:
        super().__init__()
        self.drop_in = nn.Dropout(0.5)
        self.again = nn.Dropout(0.5)
        self.fc = nn.Linear(5, 5)
        self.out = nn.Dropout(0.5)

    def forward(self, x: torch.Tensor):
        h = self.fc(self.again(self.drop_in(x)))
        return self.out(h), h.sum(dim=-1)


class FunctionalDropNet(nn.Module):
    """Functional dropouts with training=self.training (baked in when traced), one input passed by keyword."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.dropout(self.fc1(x), p=0.5, training=self.training)
        h = torch.dropout(torch.tanh(h), 0.5, self.training)
        h = torch.dropout(input=h, p=0.5, train=self.training)  # tracing keeps these keywords
        return self.fc2(h)


class DropoutZooNet(nn.Module):
    """The other dropout layers and functions: 2-d, alpha, feature-alpha, a plain nn.Dropout and a subclass of
    it (kept a call_module by the case's tracer)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.d2 = nn.Dropout2d(0.5)
        self.alpha = nn.AlphaDropout(0.5)
        self.feat = nn.FeatureAlphaDropout(0.5)
        self.plain = nn.Dropout(0.5)
        self.mine = MyDropout(0.5)
        self.head = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.d2(self.conv(x))
        h = F.dropout2d(torch.relu(h), 0.5, self.training)
        h = F.dropout(self.feat(h), 0.5, self.training).mean(dim=(2, 3))
        h = F.alpha_dropout(self.alpha(h), 0.5, self.training)
        return self.head(self.mine(self.plain(h)))


class UnusedNodesDropNet(nn.Module):
    """A dropout beside nodes whose values nothing reads (tracing keeps them): torch.sin(x) and a call of
    'probe'. They are no dropouts, so they stay."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)
        self.probe = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        torch.sin(x)
        h = self.drop(self.fc(x))
        self.probe(h)
        return h


class EncoderDropNet(nn.Module):
    """An nn.Dropout node before a leaf nn.TransformerEncoderLayer, which owns Dropout submodules of its own
    (enc.dropout, enc.dropout1, enc.dropout2) that no node calls: the layer itself calls them."""

    def __init__(self) -> None:
        super().__init__()
        self.drop = nn.Dropout(0.1)
        self.enc = nn.TransformerEncoderLayer(8, 2, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.enc(self.drop(x))


# ==================================================================================== record_shapes

class ShapeZoo(nn.Module):
    """Non-tensor nodes (an int from size(), a torch.Size from .shape, a tuple from chunk), a parameter,
    a scalar and a tuple output."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.scale = nn.Parameter(torch.ones(3))

    def forward(self, x: torch.Tensor):
        n = x.size(0)
        a, b = self.fc(x).chunk(2, dim=-1)
        y = (a * self.scale).reshape(n, -1)
        return y + b.sum(), x.shape[1]


class TwoInputs(nn.Module):
    """Two inputs of different ranks, broadcasting, and a 3-D batch."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(3, 5)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.proj(x).transpose(1, 2) @ y


class BufferNet(nn.Module):
    """Reads a buffer: a get_attr node whose value is a tensor but no nn.Parameter."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.register_buffer("offset", torch.ones(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x + self.offset)


class SingleOut(nn.Module):
    """Returns a single tensor from a function call: the output node's value is a tensor too."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flatten(x, 1).softmax(dim=-1)


# ===================================================================================== linear_flops

class ReshapeNet(nn.Module):
    """The leading dimensions change between the input and the Linear that reads them."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 5)
        self.out = nn.Linear(15, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc(x.view(x.size(0), 3, 4)))
        return self.out(h.flatten(1))


class RowsNet(nn.Module):
    """A reshape changes how many rows reach the Linear: (2, 12) -> (6, 4), so the rows of the model's input,
    the first dimension of the Linear's input and the right count all differ."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x.reshape(-1, 4)).sum(dim=0)


class FunctionalLinearNet(nn.Module):
    """F.linear with a weight parameter (not an nn.Linear call) beside an nn.Linear called three times."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(6, 6))
        self.fc = nn.Linear(6, 6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc(F.linear(x, self.w)))
        return self.fc(torch.relu(self.fc(h)))


class EncoderHeadNet(nn.Module):
    """A leaf nn.TransformerEncoderLayer, whose Linears run inside its one call_module node (none of them is a
    node of the graph), and an nn.Linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.enc = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
        self.head = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.enc(x))


class SubclassLinearNet(nn.Module):
    """NonDynamicallyQuantizableLinear, a subclass of nn.Linear that lives in torch.nn (so a leaf call_module
    node), after an nn.Linear: both are nn.Linear modules."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.proj = NonDynamicallyQuantizableLinear(6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(torch.relu(self.fc(x)))


class DeadDropNet(nn.Module):
    """Dropouts whose results nothing reads (tracing keeps their nodes): an nn.Dropout call and an F.dropout call.
    The dropout nodes go, dead or not."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        self.drop(h)
        F.dropout(h, 0.5, training=self.training)
        return h.relu()


class TupleOut(nn.Module):
    """Returns (fc2(h), h): the output node reads h inside a tuple, beside another value."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.fc2 = nn.Linear(6, 3)

    def forward(self, x: torch.Tensor):
        h = torch.relu(self.fc1(x))
        return self.fc2(h), h


class DropoutNames(nn.Module):
    """An nn.Dropout(p=0.0) (a dropout all the same), a Linear whose name holds 'drop' (backdrop_proj), and an
    nn.Dropout called with its input by keyword."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.quiet = nn.Dropout(p=0.0)
        self.backdrop_proj = nn.Linear(6, 6)
        self.drop = nn.Dropout(p=0.3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(input=self.backdrop_proj(self.quiet(self.fc(x))))


class OutputNamed(nn.Module):
    """A submodule named output: its call node is 'output', and the graph's output node is 'output_1'."""

    def __init__(self) -> None:
        super().__init__()
        self.output = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.output(x))

