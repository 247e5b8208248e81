"""The replacements, ATen graphs and models the cases of ex13_inductor_passes are built from.

A replacement is a pair of functions over tensors (`search`, `replace`) and example inputs, as
`torch._inductor.pattern_matcher.register_replacement` takes them. The ATen graphs are traced as inductor receives
them: `make_fx` with inductor's decomposition table, in one fake mode (the pattern matcher reads each node's
`meta["val"]`, and every value of one graph must come from one fake mode). The parameters are inputs, as in the
graphs AOTAutograd hands inductor.
"""
from __future__ import annotations

import random
import sys

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

from autograder.checks import keyring
from autograder.checks.randmodels import generator, manual_seed

EPS = 1e-5


def _gen(seed: int) -> torch.Generator:
    return generator(seed)


# ------------------------------------------------------------------------------------- the replacements

def mm_relu(x: Tensor, w: Tensor) -> Tensor:
    return torch.relu(torch.mm(x, w))


def mm_clamp(x: Tensor, w: Tensor) -> Tensor:
    return torch.clamp_min(torch.mm(x, w), 0.0)


def mul_add(x: Tensor, y: Tensor, z: Tensor) -> Tensor:
    return x * y + z


def fused_addcmul(x: Tensor, y: Tensor, z: Tensor) -> Tensor:
    return torch.addcmul(z, x, y)


def conv_bn(x: Tensor, w: Tensor, b: Tensor, mean: Tensor, var: Tensor, gamma: Tensor, beta: Tensor) -> Tensor:
    return F.batch_norm(F.conv2d(x, w, b), mean, var, gamma, beta, False, 0.1, EPS)


def folded_conv(x: Tensor, w: Tensor, b: Tensor, mean: Tensor, var: Tensor, gamma: Tensor, beta: Tensor) -> Tensor:
    k = gamma * torch.rsqrt(var + EPS)
    return F.conv2d(x, w * k.reshape(-1, 1, 1, 1), (b - mean) * k + beta)


def relu_relu(x: Tensor) -> Tensor:
    return torch.relu(torch.relu(x))


def relu_once(x: Tensor) -> Tensor:
    return torch.relu(x)


def mm_t_relu(x: Tensor, w: Tensor) -> Tensor:
    return torch.relu(torch.mm(x, w.t()))


def mm_t_clamp(x: Tensor, w: Tensor) -> Tensor:
    return torch.clamp_min(torch.mm(x, w.t()), 0.0)


def _conv_bn_inputs() -> list[Tensor]:
    g = _gen(7)
    return [torch.randn(1, 2, 5, 5, generator=g), torch.randn(3, 2, 3, 3, generator=g)] + \
        [torch.randn(3, generator=g) for _ in range(2)] + [torch.rand(3, generator=g) + 0.5] + \
        [torch.randn(3, generator=g) for _ in range(2)]


REPLACEMENTS = {   # name -> (search, replace, example inputs)
    "relu(mm) -> clamp_min(mm)": (mm_relu, mm_clamp, lambda: [torch.randn(2, 3, generator=_gen(1)),
                                                             torch.randn(3, 4, generator=_gen(2))]),
    "x * y + z -> addcmul": (mul_add, fused_addcmul, lambda: [torch.randn(4, 4, generator=_gen(s)) for s in (3, 4, 5)]),
    "batch_norm(conv) -> folded conv": (conv_bn, folded_conv, _conv_bn_inputs),
    # one apply replaces relu(relu) pairs; in a chain of four relus the two relus it leaves make a new pair
    "relu(relu(x)) -> relu(x)": (relu_relu, relu_once, lambda: [torch.randn(3, 4, generator=_gen(6))]),
    # the weight laid out (out, in), as F.linear keeps it: example inputs of shapes (2, 3) and (4, 3)
    "relu(x @ w.t()) -> clamp_min(x @ w.t())": (mm_t_relu, mm_t_clamp, lambda: [torch.randn(2, 3, generator=_gen(8)),
                                                                               torch.randn(4, 3, generator=_gen(9))]),
}


def replacement(name: str) -> tuple:
    search, replace, inputs = REPLACEMENTS[name]
    return search, replace, inputs()


def reference_pass(name: str, cls: type | None = None):
    """The course's pass of one replacement (a fresh PatternMatcherPass, or one of class `cls`), made as
    make_pattern_pass must make it: the instructor's side (keyring.inputs)."""
    return keyring.inputs("ex13_inductor_passes").reference_pass(name, cls)


def _inductor_hook(graph: fx.Graph) -> tuple[str | None, bool | None]:
    """Which of inductor's custom-pass hooks is running (its GraphTransformObserver's pass name, such as
    "post_grad_custom_post_pass"), and whether `graph` is the very graph inductor hands that hook; (None, None)
    when no hook of inductor's is running."""
    frame = sys._getframe(2)
    while frame is not None:
        observer = frame.f_locals.get("self") if frame.f_code.co_name == "apply_graph_pass" else None
        if observer is not None and hasattr(observer, "passname") and hasattr(observer, "gm"):
            return str(observer.passname), observer.gm.graph is graph
        frame = frame.f_back
    return None, None


def recording_pass_class() -> type:
    from torch._inductor.pattern_matcher import PatternMatcherPass

    class RecordingPatternMatcherPass(PatternMatcherPass):
        """A PatternMatcherPass that remembers how many replacements each of its runs made."""

        def __init__(self) -> None:
            super().__init__()
            self.runs: list[list] = []   # per run: [replacements, whether the graph was an ATen one]

        def apply(self, gm):
            graph = gm.graph if isinstance(gm, fx.GraphModule) else gm
            aten = any(isinstance(n.target, torch._ops.OpOverload) for n in graph.nodes)
            hook, own = _inductor_hook(graph)
            count = super().apply(gm)
            self.runs.append([int(count), aten, hook, own])
            return count

    return RecordingPatternMatcherPass


# ------------------------------------------------------------------------------------- the ATen graphs

def mlp(x, w1, w2, w3):
    """relu(mm) three times: three matches of relu(mm)."""
    return torch.relu(torch.mm(torch.relu(torch.mm(torch.relu(torch.mm(x, w1)), w2)), w3)).sum(1)


def shared(x, w, v):
    """mm read twice (by relu and by add): no match, the mm's value is needed as it is."""
    h = torch.mm(x, w)
    return torch.relu(h) + h + torch.relu(torch.mm(h, v))


def mixed(x, w, y, z):
    """One relu(mm), one x * y + z on its result, a sigmoid beside."""
    h = torch.relu(torch.mm(x, w))
    return torch.sigmoid(h * y + z) * z + torch.sigmoid(h)


def relus(x, w):
    """An mm, then relu four times: one apply of relu(relu(x)) -> relu(x) makes two replacements, and leaves two
    relus that a second apply would replace again."""
    h = torch.mm(x, w)
    for _ in range(4):
        h = torch.relu(h)
    return h.sum(1)


def linears(x, w1, w2):
    """Two F.linear without bias, each under a relu: mm(x, permute(w)) in the ATen graph, twice."""
    return torch.relu(F.linear(torch.relu(F.linear(x, w1)), w2)).sum(1)


def convnet(x, w1, b1, m1, v1, g1, be1, w2, b2, m2, v2, g2, be2):
    """conv -> batch_norm -> relu twice (two folds), then a conv without a BatchNorm."""
    h = torch.relu(conv_bn(x, w1, b1, m1, v1, g1, be1))
    h = torch.relu(conv_bn(h, w2, b2, m2, v2, g2, be2))
    return F.conv2d(h, w2[:, :, :1, :1]).mean((2, 3))


def _bn_stats(c: int, g: torch.Generator) -> list[Tensor]:
    return [torch.randn(c, generator=g) * 0.5, torch.rand(c, generator=g) + 0.5, 1 + 0.3 * torch.randn(c, generator=g),
            0.3 * torch.randn(c, generator=g)]


def _random_graph(seed: int):
    """A chain of steps drawn from a seed: relu(mm), sigmoid(mm), x * y + z, a plain add, a residual."""
    rng = random.Random(seed)
    width = rng.choice([3, 4, 5])
    plan = [rng.choice(["relu_mm", "sigmoid_mm", "mul_add", "add", "relu_mm_residual"]) for _ in range(rng.randint(4, 7))]
    g = _gen(seed)
    weights = [torch.randn(width, width, generator=g) * 0.6 for _ in plan]

    def fn(x, y, *ws):
        for step, w in zip(plan, ws):
            if step == "relu_mm":
                x = torch.relu(torch.mm(x, w))
            elif step == "sigmoid_mm":
                x = torch.sigmoid(torch.mm(x, w))
            elif step == "mul_add":
                x = x * y + w
            elif step == "add":
                x = x + w
            else:
                x = torch.relu(torch.mm(x, w)) + x
        return x

    fn.__name__ = f"random_{seed}"
    return fn, [torch.randn(width, width, generator=g), torch.randn(width, width, generator=g), *weights]


def self_mm(x, w):
    """relu(mm) whose mm multiplies x by itself: one node fills both inputs of the pattern."""
    return torch.relu(torch.mm(x, x)) + w


def _graph_inputs(name: str, seed: int):
    g = _gen(seed + 11)
    if name.endswith(" in float64"):
        fn, inputs = _graph_inputs(name[:-len(" in float64")], seed)
        return fn, [t.double() for t in inputs]
    if name == "self mm":
        return self_mm, [torch.randn(4, 4, generator=g), torch.randn(4, 4, generator=g)]
    if name == "mlp":
        return mlp, [torch.randn(4, 5, generator=g), torch.randn(5, 6, generator=g), torch.randn(6, 6, generator=g),
                     torch.randn(6, 3, generator=g)]
    if name == "shared":
        return shared, [torch.randn(4, 4, generator=g) for _ in range(3)]
    if name == "mixed":
        return mixed, [torch.randn(3, 4, generator=g), torch.randn(4, 4, generator=g), torch.randn(3, 4, generator=g),
                       torch.randn(3, 4, generator=g)]
    if name == "relus":
        return relus, [torch.randn(3, 4, generator=g), torch.randn(4, 4, generator=g)]
    if name == "linears":
        return linears, [torch.randn(5, 3, generator=g), torch.randn(4, 3, generator=g), torch.randn(2, 4, generator=g)]
    if name == "convnet":
        return convnet, [torch.randn(2, 2, 7, 7, generator=g), torch.randn(3, 2, 3, 3, generator=g),
                         torch.randn(3, generator=g), *_bn_stats(3, g), torch.randn(3, 3, 3, 3, generator=g),
                         torch.randn(3, generator=g), *_bn_stats(3, g)]
    if name.startswith("random "):
        return _random_graph(int(name.split()[1]))
    raise KeyError(name)


def aten_graph(name: str, seed: int = 0) -> tuple[fx.GraphModule, list[Tensor]]:
    """The ATen graph `name` as inductor receives it (decomposed, in one fake mode), and real inputs for it."""
    from torch._inductor.decomposition import select_decomp_table
    from torch.fx.experimental.proxy_tensor import make_fx
    fn, inputs = _graph_inputs(name, seed)
    gm = make_fx(fn, select_decomp_table(), tracing_mode="fake")(*inputs)
    return gm, inputs


def run_graph(gm, inputs) -> Tensor:
    with torch.no_grad():
        return gm(*inputs)


# ------------------------------------------------------------------------------------- the compiled models

class TwoLayers(nn.Module):
    """Linear (no bias) -> relu twice: two relu(mm) in the graph inductor receives."""

    def __init__(self, width: int = 6) -> None:
        super().__init__()
        self.a = nn.Linear(width, width, bias=False)
        self.b = nn.Linear(width, 3, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.b(torch.relu(self.a(x))))


class ConvBN(nn.Module):
    """Conv2d -> BatchNorm2d -> relu, twice, with statistics as if trained: two folds in inference."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self.c1, self.n1 = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)
        self.c2, self.n2 = nn.Conv2d(4, 4, 3), nn.BatchNorm2d(4)
        g = _gen(seed + 5)
        with torch.no_grad():
            for bn in (self.n1, self.n2):
                mean, var, gamma, beta = _bn_stats(4, g)
                bn.running_mean.copy_(mean)
                bn.running_var.copy_(var)
                bn.weight.copy_(gamma)
                bn.bias.copy_(beta)

    def forward(self, x: Tensor) -> Tensor:
        h = torch.relu(self.n1(self.c1(x)))
        torch._dynamo.graph_break()   # two graphs for inductor, one fold in each
        return torch.relu(self.n2(self.c2(h))).mean((2, 3))


COMPILED = {   # name -> (model factory, input shape, replacement, the graphs dynamo hands inductor)
    "TwoLayers(6)": (lambda seed: TwoLayers(6), (5, 6), "relu(mm) -> clamp_min(mm)", 1),
    "ConvBN (unseen)": (lambda seed: ConvBN(seed), (2, 3, 8, 8), "batch_norm(conv) -> folded conv", 2),
}


def change_weight(model: nn.Module, name: str) -> None:
    """What a caller may do between two calls of the compiled model: change one of its weights in place (negated)."""
    with torch.no_grad():
        model.get_parameter(name).mul_(-1.0)


def compiled_model(name: str, seed: int = 0) -> tuple[nn.Module, list[Tensor]]:
    """The model (eval mode) and two inputs of one shape (a second shape would make dynamo compile again)."""
    factory, shape, _, _ = COMPILED[name]
    manual_seed(seed)
    g = _gen(seed + 3)
    return factory(seed).eval(), [torch.randn(*shape, generator=g) for _ in range(2)]
