"""Checks of ex09_dynamo: capture_graphs, graph_break_count, compile_with_pass.

Every case starts from `torch._dynamo.reset()`, so no compiled code of one case (or of the learner's notebook)
is reused by the next. The references compile with recording backends of this module (never inductor): what
dynamo hands a backend, `torch._dynamo.explain` for the breaks, and the eager model for the numbers. Models are
drawn from seeds (`BreakNet`), so an answer that fits the notebook's examples only is caught.
"""
from __future__ import annotations

import logging
import random
from typing import Any, Callable

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from autograder.checks.framework import Case, Check, CheckFailed
from autograder.checks.evidence import expect, qualified

PROBE = "_ex09_probe"   # the inputs a compile_with_pass case calls the compiled model on, stashed on the model


class _QuietAboutOwnCases(logging.Filter):
    """Drops dynamo's warnings about graph breaks in this module's own case functions (`.item()` in
    sin_item_scale, BreakNet...): they are the point of the cases, not the learner's code, and a test cell that
    prints them to stderr looks broken. Warnings about the learner's own code still show."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            return __file__ not in record.getMessage()
        except Exception:
            return True


for _name in ("torch._dynamo", "torch._dynamo.variables.tensor", "torch._dynamo.symbolic_convert",
              "torch._dynamo.convert_frame"):
    _logger = logging.getLogger(_name)
    if not any(isinstance(f, _QuietAboutOwnCases) for f in _logger.filters):
        _logger.addFilter(_QuietAboutOwnCases())


def _reset() -> None:
    import torch._dynamo
    torch._dynamo.reset()


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ------------------------------------------------------------------------------------------ the models

class GateNet(nn.Module):
    """The lesson's shape with other sizes: a shared Linear, a buffer, a branch on the mean (one break)."""

    def __init__(self, width: int = 6, act: str = "relu") -> None:
        super().__init__()
        self.act = act
        self.inp = nn.Linear(width, 2 * width)
        self.mid = nn.Linear(2 * width, 2 * width)
        self.out = nn.Linear(2 * width, 3)
        self.register_buffer("scale", torch.tensor(0.75))

    def _act(self, h: torch.Tensor) -> torch.Tensor:
        return torch.relu(h) if self.act == "relu" else torch.sigmoid(h)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self._act(self.inp(x))
        h = self.mid(h) * self.scale
        if h.mean() > 0:
            h = self._act(self.mid(h))
        return self.out(h)


class BreakNet(nn.Module):
    """A stack of steps drawn from a seed: Linears, activations, `.item()`, branches on values and on shapes.

    At least one step breaks the graph. `act` is the activation every "act" step uses ("relu" written as a
    function, a method or F.relu; "sigmoid" for the reference of compile_with_pass).
    """

    STEPS = ("linear", "act", "tanh", "item", "branch", "shape_branch")

    def __init__(self, seed: int, act: str = "relu") -> None:
        super().__init__()
        rng = random.Random(seed)
        torch.manual_seed(seed)
        self.act = act
        self.width = rng.choice([4, 5, 8])
        self.plan = [rng.choice(self.STEPS) for _ in range(rng.randint(4, 6))]
        if not any(s in ("item", "branch") for s in self.plan):
            self.plan.insert(rng.randrange(1, len(self.plan)), rng.choice(["item", "branch"]))
        self.forms = [rng.choice(["function", "method", "F"]) for _ in self.plan]
        self.layers = nn.ModuleList(nn.Linear(self.width, self.width, bias=rng.random() < 0.7) for _ in self.plan)

    def _act(self, x: torch.Tensor, form: str) -> torch.Tensor:
        if self.act != "relu":
            return torch.sigmoid(x)
        return torch.relu(x) if form == "function" else x.relu() if form == "method" else F.relu(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for step, form, layer in zip(self.plan, self.forms, self.layers):
            if step == "linear":
                x = layer(x)
            elif step == "act":
                x = self._act(layer(x), form)
            elif step == "tanh":
                x = torch.tanh(x) + x
            elif step == "item":
                x = x * (0.5 + abs(x.mean().item()))
            elif step == "branch":
                x = self._act(x, form) if x.sum() > 0 else layer(x)
            elif step == "shape_branch":
                x = x * 2 if x.shape[0] > 2 else x - 1
        return x


class Inner(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.mean() > 0:
            return x * 2
        return x - 1


class NestedBreak(nn.Module):
    """The branch sits in a submodule called between two calls of one Linear."""

    def __init__(self, width: int = 5) -> None:
        super().__init__()
        torch.manual_seed(width)
        self.lin = nn.Linear(width, width)
        self.inner = Inner()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(self.inner(self.lin(x)))


class PlainMLP(nn.Module):
    def __init__(self, width: int = 6, act: str = "relu") -> None:
        super().__init__()
        torch.manual_seed(width)
        self.act = act
        self.a = nn.Linear(width, 2 * width)
        self.b = nn.Linear(2 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.a(x)
        h = h.relu() if self.act == "relu" else h.sigmoid()
        return self.b(h)


def sin_item_scale(x: torch.Tensor) -> torch.Tensor:
    """The lesson's debug function without its print: `.item()` breaks the graph."""
    y = torch.sin(x)
    s = y.sum().item()
    return y * s


def two_items(x: torch.Tensor) -> torch.Tensor:
    y = torch.cos(x) + 1
    a = y.mean().item()
    b = (y * y).max().item()
    return y * a - b


def returns_a_number(x: torch.Tensor) -> float:
    """The graph ends at `.item()`, and nothing after it is a tensor operation."""
    return (torch.tanh(x) * 3).sum().item()


def relu_twice(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x) * 2 + torch.relu(-x)


# ----------------------------------------------------------------------------------------- references

_CACHE: dict = {}


def _recording_backend(store: list) -> Callable:
    def backend(gm: fx.GraphModule, example_inputs: list) -> Callable:
        store.append(gm)
        return gm.forward
    return backend


def _calls(gm: fx.GraphModule) -> list[str]:
    return [f"{n.op} {qualified(n.target)}" for n in gm.graph.nodes if n.op in ("call_function", "call_method",
                                                                                 "call_module")]


def _graph_summary(gm: fx.GraphModule) -> dict:
    return {"placeholders": sum(n.op == "placeholder" for n in gm.graph.nodes), "calls": _calls(gm)}


def _reference_capture(label: str, make: Callable[[], tuple]) -> list[dict]:
    """What a recording backend receives when the case's function is compiled and called once, from a reset."""
    key = ("capture", label)
    if key not in _CACHE:
        fn, *inputs = make()
        _reset()
        graphs: list = []
        with torch.no_grad():
            torch.compile(fn, backend=_recording_backend(graphs))(*inputs)
        _reset()
        _CACHE[key] = [_graph_summary(g) for g in graphs]
    return _CACHE[key]


def _reference_breaks(label: str, make: Callable[[], tuple]) -> tuple[int, int]:
    """(graph breaks, graphs) as torch._dynamo.explain reports them, from a reset."""
    import torch._dynamo
    key = ("explain", label)
    if key not in _CACHE:
        fn, *inputs = make()
        _reset()
        with torch.no_grad():
            report = torch._dynamo.explain(fn)(*inputs)
        _reset()
        _CACHE[key] = (int(report.graph_break_count), int(report.graph_count))
    return _CACHE[key]


def _fn_cases(hidden: bool, warm: bool) -> list[Case]:
    """(fn, *inputs) cases shared by capture_graphs and graph_break_count."""
    def model(factory: Callable[[], nn.Module], shape: tuple, seed: int, dtype=torch.float32):
        def make():
            _reset()
            torch.manual_seed(seed)
            m = factory().eval().to(dtype)
            return (m, torch.randn(*shape, generator=_gen(seed), dtype=dtype))
        return make

    def function(fn: Callable, shape: tuple, seed: int):
        def make():
            _reset()
            return (fn, torch.randn(*shape, generator=_gen(seed)))
        return make

    if not hidden:
        return [Case("sin_item_scale: .item() in the middle", function(sin_item_scale, (5,), 1)),
                Case("GateNet(6): a branch on h.mean()", model(lambda: GateNet(6), (4, 6), 0))]

    def break_net(seed: int):
        return model(lambda: BreakNet(seed), (3, BreakNet(seed).width), seed)

    cases = [
        Case("BreakNet seed 3 (unseen)", break_net(3)),
        Case("BreakNet seed 17 (unseen): nothing breaks its graph", break_net(17)),
    ]
    if warm:   # capture_graphs
        cases += [Case("GateNet(4) in float64", model(lambda: GateNet(4), (3, 4), 8, torch.float64)),
                  Case("returns_a_number: the graph ends at .item()", function(returns_a_number, (4,), 7))]
    else:      # graph_break_count
        cases += [Case("two_items: two .item() calls", function(two_items, (2, 3), 4)),
                  Case("NestedBreak: the branch inside a submodule", model(lambda: NestedBreak(5), (3, 5), 5))]
    if warm:
        def warmed():
            fn, x = function(relu_twice, (6,), 9)()
            import torch._dynamo
            for _ in range(torch._dynamo.config.recompile_limit):   # a notebook's earlier experiments
                torch.compile(fn, backend=_recording_backend([]))(x)
            return fn, x
        cases.append(Case("relu_twice, compiled eight times before in this kernel", warmed,
                          data={"cold": function(relu_twice, (6,), 9), "warm": True}))
    return cases


# ===================================================================================== capture_graphs

def _capture_cases(hidden: bool) -> list[Case]:
    return _fn_cases(hidden, warm=True)


def _capture_evidence(result: Any, args: tuple) -> dict:
    _reset()
    if not isinstance(result, (list, tuple)):
        raise CheckFailed(f"capture_graphs returned {type(result).__name__}, expected a list of fx.GraphModule",
                          "return the value instead of printing it" if result is None else
                          "collect every graph the backend receives in a list and return the list")
    items = []
    for i, g in enumerate(result):
        if isinstance(g, fx.GraphModule):
            items.append(_graph_summary(g))
        else:
            items.append({"type": type(g).__name__})
    return {"graphs": items}


LAZY = ("torch.compile is lazy: nothing is captured until the function it returned is called; call "
        "compiled(*inputs) once (calling fn itself runs it eagerly, without dynamo), and give it your backend: "
        "torch.compile(fn, backend=your_backend)")
RESET = ("start with torch._dynamo.reset(): dynamo keeps compiled code per function, and once a function has "
         "been compiled torch._dynamo.config.recompile_limit times it runs eagerly and calls no backend at all")


def _capture_judge(case: Case, ev: dict) -> None:
    expected = _reference_capture(case.label, case.data.get("cold", case.make))
    got = ev["graphs"]
    for i, g in enumerate(got):
        expect("type" not in g, f"item {i} of the list is a {g.get('type')}, expected an fx.GraphModule",
               "append gm, the first argument dynamo passes to the backend (the second is the example inputs)")
    if not got and expected:
        raise CheckFailed(f"no graph captured; dynamo hands a backend {len(expected)} graph(s) for this function",
                          RESET if case.data.get("warm") else LAZY)
    if len(got) != len(expected):
        more = len(got) < len(expected)
        raise CheckFailed(
            f"returned {len(got)} graph(s), but dynamo hands the backend {len(expected)} for this function "
            f"(graph breaks make several)",
            "keep every graph: append each gm the backend receives, and return them all in the order they came "
            "(and compile without fullgraph=True, which may squeeze or refuse what dynamo would split)" if more else "call the compiled function once, and return only the graphs of that call")
    for i, (g, e) in enumerate(zip(got, expected)):
        if g != e:
            order = [x for x in expected if x == g]
            raise CheckFailed(
                f"graph {i + 1} of {len(expected)} has {g['placeholders']} placeholders and calls "
                f"{g['calls'][:6]}{'...' if len(g['calls']) > 6 else ''}, expected {e['placeholders']} placeholders "
                f"and {e['calls'][:6]}{'...' if len(e['calls']) > 6 else ''}",
                "return the graphs in the order the backend received them" if order else
                "return each graph exactly as dynamo handed it to the backend (do not retrace or edit it), and "
                "compile with torch.compile's defaults (dynamic shapes left to dynamo)")


# ================================================================================== graph_break_count

def _breaks_cases(hidden: bool) -> list[Case]:
    return _fn_cases(hidden, warm=False)


def _breaks_evidence(result: Any, args: tuple) -> Any:
    _reset()
    if type(result) is not int:
        raise CheckFailed(f"graph_break_count returned {type(result).__name__} {result!r:.80}, expected an int",
                          "return the value instead of printing it" if result is None else
                          "return the number itself: torch._dynamo.explain(fn)(*inputs).graph_break_count")
    return result


def _breaks_judge(case: Case, got: int) -> None:
    breaks, graphs = _reference_breaks(case.label, case.make)
    if got == breaks:
        return
    if got == graphs and graphs != breaks:
        hint = ("that is the number of graphs: each graph break ends one graph and starts another; "
                "torch._dynamo.explain(fn)(*inputs) reports both, graph_count and graph_break_count")
    elif got < breaks:
        hint = ("count every break, not whether there is one (and not its kinds): torch._dynamo.explain(fn)(*inputs) "
                "reports graph_break_count")
    else:
        hint = "torch._dynamo.explain(fn)(*inputs).graph_break_count counts them"
    raise CheckFailed(f"returned {got}, but compiling this function for these inputs causes {breaks} graph "
                      f"break(s) ({graphs} graph(s))", hint)


# =================================================================================== compile_with_pass

class SigmoidPass:
    """A pass `gm -> gm` for the cases: every ReLU (torch.relu, F.relu, .relu()) becomes torch.sigmoid.

    It returns a NEW GraphModule and leaves the one it is given as it was, so an answer that ignores what the
    pass returns runs the old graph. It records each call, so the judge sees how many graphs it saw."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, gm: fx.GraphModule) -> fx.GraphModule:
        self.calls += 1
        graph = fx.Graph()
        env: dict = {}
        for node in gm.graph.nodes:
            if (node.op == "call_function" and node.target in (torch.relu, F.relu)) or \
                    (node.op == "call_method" and node.target == "relu"):
                env[node] = graph.call_function(torch.sigmoid, (env[node.args[0]],))
            else:
                env[node] = graph.node_copy(node, lambda n: env[n])
        graph.lint()
        return fx.GraphModule(gm, graph)

    __name__ = "relu_to_sigmoid"


def _pass_cases(hidden: bool) -> list[Case]:
    def case(factory: Callable[[str], nn.Module], shapes: list[tuple], seed: int, dtype=torch.float32):
        def make():
            _reset()
            torch.manual_seed(seed)
            m = factory("relu").eval().to(dtype)
            object.__setattr__(m, PROBE, [torch.randn(*s, generator=_gen(seed + i), dtype=dtype)
                                          for i, s in enumerate(shapes)])
            return (m, SigmoidPass())
        return make, factory, dtype

    def mk(label: str, spec: tuple) -> Case:
        make, factory, dtype = spec
        return Case(label, make, data={"factory": factory, "dtype": dtype})

    if not hidden:
        return [mk("PlainMLP(6) with relu_to_sigmoid", case(lambda a: PlainMLP(6, a), [(3, 6)], 0)),
                mk("GateNet(6) with relu_to_sigmoid: two graphs", case(lambda a: GateNet(6, a), [(4, 6)], 1))]

    def break_net(seed: int):
        return case(lambda a: BreakNet(seed, a), [(3, BreakNet(seed).width)], seed)

    return [
        mk("BreakNet seed 3 with relu_to_sigmoid (unseen)", break_net(3)),
        mk("BreakNet seed 29 with relu_to_sigmoid (unseen)", break_net(29)),
        mk("PlainMLP(5) called on batches of 2, 5 and 7 (recompiles)",
           case(lambda a: PlainMLP(5, a), [(2, 5), (5, 5), (7, 5)], 2)),
        mk("GateNet(4) in float64", case(lambda a: GateNet(4, a), [(3, 4), (3, 4)], 3, torch.float64)),
    ]


def _pass_evidence(result: Any, args: tuple) -> dict:
    model, pass_fn = args
    if not callable(result):
        _reset()
        raise CheckFailed(f"compile_with_pass returned {type(result).__name__}, expected a callable (what "
                          "torch.compile returns)",
                          "return the value instead of printing it" if result is None else
                          "return torch.compile(model, backend=your_backend)")
    outputs = []
    try:
        with torch.no_grad():
            for x in getattr(model, PROBE):
                outputs.append(result(x))
    except Exception as exc:
        outputs = f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        _reset()
    return {"outputs": outputs, "calls": int(pass_fn.calls), "is_model": result is model}


def _pass_judge(case: Case, ev: dict) -> None:
    model, _ = case.make()
    _reset()
    reference = case.data["factory"]("sigmoid").to(case.data["dtype"]).eval()
    reference.load_state_dict(model.state_dict())
    inputs = getattr(model, PROBE)
    if isinstance(ev["outputs"], str):
        raise CheckFailed(f"calling what compile_with_pass returned raised {ev['outputs']}",
                          "the backend must return a callable that runs the graph: pass_fn(gm).forward" if
                          "did not return callable" in ev["outputs"] else
                          "do not use fullgraph=True: a model with a graph break is several graphs, and the "
                          "backend is called for each" if "fullgraph" in ev["outputs"] or "Unsupported" in
                          ev["outputs"] else None)
    expect(not ev["is_model"], "compile_with_pass returned the model itself, not a compiled function",
           "return torch.compile(model, backend=...) with a backend that applies pass_fn")
    with torch.no_grad():
        expected = [reference(x) for x in inputs]
        unpassed = [model(x) for x in inputs]
    for i, (got, want, old) in enumerate(zip(ev["outputs"], expected, unpassed)):
        what = f"call {i + 1} (input of shape {tuple(inputs[i].shape)})"
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            raise CheckFailed(f"{what}: returned {type(got).__name__} "
                              f"{tuple(got.shape) if isinstance(got, torch.Tensor) else ''}, expected a tensor of "
                              f"shape {tuple(want.shape)}")
        if torch.allclose(got.double(), want.double(), rtol=1e-5, atol=1e-6) and got.dtype == want.dtype:
            continue
        if torch.allclose(got.double(), old.double(), rtol=1e-5, atol=1e-6):
            hint = ("pass_fn was never called: the backend must call pass_fn(gm) on every graph it receives"
                    if ev["calls"] == 0 else
                    "pass_fn returns a new GraphModule and leaves its argument alone: run what pass_fn returns "
                    "(pass_fn(gm).forward), not the gm you gave it")
            raise CheckFailed(f"{what}: the output is the eager model's without the pass (relu where the pass "
                              "puts sigmoid)", hint)
        raise CheckFailed(f"{what}: the output differs from the eager model after the pass by up to "
                          f"{float((got.double() - want.double()).abs().max()):.3g}",
                          "apply pass_fn to every graph dynamo hands the backend, each time it is called (graph "
                          "breaks and recompiles on a new shape bring new graphs), not only to the first")


CHECKS = {
    "capture_graphs": Check("capture_graphs", _capture_cases, _capture_evidence, _capture_judge, timeout=120.0),
    "graph_break_count": Check("graph_break_count", _breaks_cases, _breaks_evidence, _breaks_judge, timeout=120.0),
    "compile_with_pass": Check("compile_with_pass", _pass_cases, _pass_evidence, _pass_judge, timeout=120.0,
                               unchanged="always"),
}
