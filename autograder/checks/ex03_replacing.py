"""Checks of ex03_replacing: swap_function, relu_to_clamp, relu_to_gelu, linear_to_matmul.

Each case traces a seeded model and hands the learner the GraphModule, with the model and its seeded inputs
stashed on it (attribute `_fxcourse_case`, a plain dict, so it is not a submodule). `evidence` reads that
stash where the learner's function ran: it describes the returned graph (what every node computes, what every
get_attr reads), runs the result, runs the *original* model again (a pass must not change it) and, for
linear_to_matmul, runs the result once more after an SGD step on the original model's parameters (they must
stay shared). `judge` rebuilds the same model from `case.make()` and computes every reference eagerly; where
the pass changes what is computed, the eager model runs under `_EagerSwap`, a TorchFunctionMode that replaces
the old function by the new one whenever eager code calls it.

Judging order: lambda targets, lint, stale code (forgot recompile), structure, run errors, numbers,
the original model, shared parameters: the first message a learner sees is the root cause.
"""
from __future__ import annotations

import difflib
import functools
import operator
import re

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from fxplayground import LinearChain, Net, ThreeReluNet, TinyNet

from autograder.checks.framework import Case, Check, CheckFailed
from autograder.checks.evidence import describe_graph, expect_close, expect_lint, flat_outputs, lint_error, qualified
from autograder.checks.randmodels import random_mlp

STASH = "_fxcourse_case"

RELU_FUNCTIONS = (torch.relu, torch.relu_, F.relu, torch.Tensor.relu, torch.Tensor.relu_)  # F.relu_ is torch.relu_
RELU_METHODS = ("relu", "relu_")
GELU_FUNCTIONS = (F.gelu,)  # F.gelu is torch._C._nn.gelu; tensors have no .gelu() method
MATMUL_FUNCTIONS = (torch.matmul, operator.matmul, torch.mm, torch.bmm, torch.einsum, torch.Tensor.matmul,
                    torch.Tensor.mm)
MATMUL_METHODS = ("matmul", "mm", "bmm", "__matmul__")
LINEAR_FUNCTIONS = (F.linear, torch.addmm, torch.Tensor.addmm)

LAMBDA_HINT = ("give node.target a real function such as torch.clamp and put its extra arguments in node.args/"
               "node.kwargs; a lambda hides what the node computes: gm.code calls it under a generated name")
RECOMPILE_HINT = "call gm.recompile() after changing the graph, so gm.code and forward are regenerated"
RETURN_HINT = "a pass ends with graph.lint(), gm.recompile() and `return gm`"
STR_TARGET_HINT = ("a call_module node's target must be the string name of a submodule registered on the "
                   "GraphModule (gm.add_submodule(name, module)); to call a function, use a call_function node")
SHARED_HINT = ("parameters must stay shared with the original model: read the original nn.Parameter with a "
               "get_attr node (for example 'fc1.weight'); do not clone it or wrap its data in a new nn.Parameter")
ORIGINAL_HINT = ("the original model changed: gm shares its submodules and parameters with the model it was "
                 "traced from, so read them but do not modify them in place")


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


class SharedLinearNet(nn.Module):
    """One Linear called twice, on 3-d inputs (batch, tokens, features), then a bias-free head."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(6, 6)
        self.head = nn.Linear(6, 4, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.proj(torch.tanh(self.proj(x))) + x)


# ---------------------------------------------------------------------------------- case plumbing

def _inputs(model: nn.Module, shape: tuple[int, ...], seed: int, n: int = 2, scale: float = 2.0) -> list:
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=g) * scale for _ in range(n)]


def _prepare(make_model, shape: tuple[int, ...], seed: int = 0):
    """A fresh traced model with its model and seeded inputs stashed on it (deterministic)."""
    torch.manual_seed(seed)
    model = make_model().eval()
    gm = fx.symbolic_trace(model)
    gm.__dict__[STASH] = {"model": model, "inputs": _inputs(model, shape, seed + 100)}
    return gm


def _stash(gm: fx.GraphModule) -> dict:
    stash = gm.__dict__.get(STASH)
    if stash is None:
        raise CheckFailed("the GraphModule given to your function lost its test data; run the cell again")
    return stash


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


def _eager(model: nn.Module, inputs: list, mapping: list | None = None) -> list[torch.Tensor]:
    outs = []
    with torch.no_grad():
        for x in inputs:
            if mapping:
                with _EagerSwap(mapping):
                    outs.append(model(x.clone()))
            else:
                outs.append(model(x.clone()))
    return outs


def _input_of(args: tuple, kwargs: dict):
    """The tensor a ReLU-style call works on: its first argument, or input= given by keyword."""
    return args[0] if args else kwargs["input"]


def _gelu_only(*args, **kwargs):
    return F.gelu(_input_of(args, kwargs))


RELU_TO_GELU = [(f, _gelu_only) for f in RELU_FUNCTIONS]


def _sgd_step(model: nn.Module) -> None:
    """One SGD step on every parameter, with seeded gradients: 'training the original'."""
    g = torch.Generator().manual_seed(1234)
    params = [p for _, p in model.named_parameters()]
    with torch.no_grad():
        for p in params:  # what torch.optim.SGD(params, lr=0.5).step() does, without importing torch.optim
            p.sub_(0.5 * torch.randn(p.shape, generator=g))


# ---------------------------------------------------------------------------------------- evidence

def _one_thread(fn):
    """Run fn with one intra-op thread: these models are tiny, and on a busy machine the thread pool's
    hand-offs cost milliseconds per op (we measured 24 ms per F.gelu on a (4, 8) tensor with 2 threads)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return fn(*args, **kwargs)
        finally:
            torch.set_num_threads(threads)
    return wrapper


def _resolve(gm: nn.Module, target: str):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def _facts(gm: fx.GraphModule, model: nn.Module) -> list[dict]:
    """describe_graph plus what each node computes (relu, gelu, clamp, linear, matmul) and reads (get_attr)."""
    params = {id(p): name for name, p in model.named_parameters()}
    storages = {(p.data_ptr(), tuple(p.shape)): name for name, p in model.named_parameters()}
    out = describe_graph(gm)
    for entry, node in zip(out, gm.graph.nodes):
        t = node.target
        entry.update(kind=None, relu=False, gelu=None, clamp=False, linear=False, matmul=False,
                     reads=None, lambda_=getattr(t, "__name__", None) == "<lambda>")
        if node.op == "call_function":
            if any(t is f for f in RELU_FUNCTIONS):
                entry.update(relu=True, kind=qualified(t))
            elif any(t is f for f in GELU_FUNCTIONS):
                approx = node.kwargs.get("approximate", node.args[1] if len(node.args) > 1 else "none")
                entry["gelu"] = str(approx)
            entry["clamp"] = t is torch.clamp
            entry["linear"] = any(t is f for f in LINEAR_FUNCTIONS)
            entry["matmul"] = any(t is f for f in MATMUL_FUNCTIONS)
        elif node.op == "call_method":
            if t in RELU_METHODS:
                entry.update(relu=True, kind=f"Tensor.{t}")
            entry["matmul"] = t in MATMUL_METHODS
            entry["linear"] = t == "addmm"
        elif node.op == "call_module" and isinstance(t, str):
            try:
                mod = gm.get_submodule(t)
            except Exception:
                mod = None
            if isinstance(mod, nn.Module):
                inner = list(mod.modules())
                if any(isinstance(m, nn.ReLU) for m in inner):
                    entry.update(relu=True, kind="nn.ReLU")
                if isinstance(mod, nn.GELU):
                    entry["gelu"] = str(mod.approximate)
                entry["linear"] = any(isinstance(m, nn.Linear) for m in inner)
        elif node.op == "get_attr" and isinstance(t, str):
            try:
                obj = _resolve(gm, t)
            except Exception as exc:
                entry["reads"] = {"kind": "missing", "error": f"{type(exc).__name__}: {exc}"[:200]}
                continue
            info = {"kind": type(obj).__name__, "param_of": None, "storage_of": None}
            if obj is None:
                info["kind"] = "None"
            elif isinstance(obj, torch.Tensor):
                info["kind"] = "Parameter" if isinstance(obj, nn.Parameter) else "Tensor"
                info["param_of"] = params.get(id(obj))
                info["storage_of"] = storages.get((obj.data_ptr(), tuple(obj.shape)))
            entry["reads"] = info
    return out


def _run_hint(message: str) -> str | None:
    """The hint for an error raised while running (or linting) the returned GraphModule."""
    if re.search(r"nonexistent attribute bias|NoneType", message):
        return "this nn.Linear has no bias (bias=None): leave the add out for it"
    if "unexpected keyword argument" in message:
        if "gelu" in message:
            return ("F.gelu takes no `inplace` argument: give the new node only the ReLU's input, not the old "
                    "node's kwargs")
        return ("the node's new target does not accept the kwargs the node carries: did the pass change a node it "
                "should have left alone?")
    if re.search(r"shapes cannot be multiplied|size mismatch|must match the size", message):
        return "nn.Linear computes x @ W.T + b, with W of shape (out_features, in_features): transpose W"
    if "must be a matrix" in message or "expected 2D" in message:
        return "torch.mm only multiplies 2-d matrices: use torch.matmul (or @), which handles leading dimensions"
    if "has no attribute" in message or "nonexistent attribute" in message:
        return ("a node names a submodule or attribute that no longer exists on gm: keep every submodule that a "
                "call_module or get_attr node still uses (gm.delete_all_unused_submodules() removes only the others)")
    if re.search(r"str is expected|Expected node.target to be str", message):
        return STR_TARGET_HINT
    return None


def _run(fn, inputs: list) -> tuple[list, dict | None]:
    outs = []
    with torch.no_grad():
        for x in inputs:
            try:
                outs.append(fn(x.clone()))
            except Exception as exc:
                msg = f"{type(exc).__name__}: {exc}"[:600]
                return outs, {"error": msg, "hint": _run_hint(msg)}
    return outs, None


@_one_thread
def _evidence(function: str, result, args: tuple, *, step: bool = False) -> dict:
    gm_in = args[0]
    stash = _stash(gm_in)
    if not isinstance(result, fx.GraphModule):
        raise CheckFailed(f"{function} returned {type(result).__name__}, expected a torch.fx.GraphModule",
                          RETURN_HINT)
    model, inputs = stash["model"], stash["inputs"]
    ev: dict = {"graph": _facts(result, model), "code": result.code, "codegen": None, "graph_code": None}
    try:
        ev["graph_code"] = result.graph.python_code(root_module="self").src
    except Exception as exc:
        ev["codegen"] = f"{type(exc).__name__}: {exc}"[:500]
    ev["lint"] = lint_error(result)
    # result.forward, not result(...): when a GraphModule raises, its __call__ builds a pretty error message and
    # that imports torch._dynamo (seconds, once per process); the error itself is the same
    ev["outputs"], ev["run_error"] = _run(result.forward, inputs)
    ev["original_outputs"], ev["original_error"] = _run(model, inputs)
    if step:
        _sgd_step(model)
        ev["stepped_outputs"], ev["stepped_error"] = _run(result.forward, inputs)
    return ev


# ------------------------------------------------------------------------------------- judge helpers

def _callee(code: str, name: str) -> str:
    m = re.search(rf"^\s*{re.escape(name)} = ([\w.]+)\(", code, re.M)
    return m.group(1) if m else "a generated name"


def _first_changed_line(old: str, new: str) -> str:
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            return line[1:].strip()
    return ""


def _judge_common(ev: dict) -> None:
    for n in ev["graph"]:
        if n["lambda_"]:
            where = ("gm.code calls it as `" + _callee(ev["code"], n["name"]) + "`" if n["op"] == "call_function"
                     else "a call_module target must be a submodule name, so recompile() and lint() reject it")
            raise CheckFailed(f"{n['op']} node '{n['name']}' targets a lambda; {where}, so nobody reading the "
                              "code (or searching it for the op) can see what the node computes", LAMBDA_HINT)
    if ev["lint"]:
        expect_lint(ev, _run_hint(ev["lint"]))
    if ev["codegen"]:
        raise CheckFailed(f"the returned graph cannot be turned into code: {ev['codegen']}",
                          _run_hint(ev["codegen"]) or RECOMPILE_HINT)
    if ev["graph_code"] != ev["code"]:
        line = _first_changed_line(ev["code"], ev["graph_code"])
        raise CheckFailed("the graph was changed but gm.code (and so forward) is out of date"
                          + (f": the graph now says `{line}`, which gm.code does not contain" if line else ""),
                          RECOMPILE_HINT)


def _judge_ran(ev: dict) -> None:
    if ev["run_error"]:
        raise CheckFailed(f"the returned GraphModule raised {ev['run_error']['error']} when run",
                          ev["run_error"]["hint"])


def _judge_outputs(got: list, expected: list, what: str, hint: str | None, *, rtol=1e-5, atol=1e-5) -> None:
    for i, (g, e) in enumerate(zip(got, expected)):
        gs, es = flat_outputs(g), flat_outputs(e)
        if len(gs) != len(es):
            raise CheckFailed(f"{what} on input {i}: {len(gs)} output tensor(s), expected {len(es)}", hint)
        for j, (a, b) in enumerate(zip(gs, es)):
            label = f"{what} on input {i}" + (f", output {j}" if len(es) > 1 else "")
            expect_close(a, b, label, rtol=rtol, atol=atol, hint=hint)


def _judge_original(ev: dict, model: nn.Module, inputs: list) -> None:
    if ev["original_error"]:
        raise CheckFailed(f"the original model raises after your pass: {ev['original_error']['error']}",
                          ORIGINAL_HINT)
    _judge_outputs(ev["original_outputs"], _eager(model, inputs), "the original model's output after your pass",
                   ORIGINAL_HINT, rtol=1e-5, atol=1e-6)


def _fresh(case: Case):
    args = case.make()
    stash = args[0].__dict__[STASH]
    return args[0], stash["model"], stash["inputs"]


def _count(graph: list[dict], pred) -> int:
    return sum(1 for n in graph if pred(n))


# ---------------------------------------------------------------------------------- swap_function

def _swap_cases(hidden: bool) -> list[Case]:
    def case(label, make, old, new, eager, *, keywords=False):
        if keywords:
            return Case(label, lambda: (make(),), kwargs=lambda: {"old": old, "new": new},
                        data={"old": old, "new": new, "eager": eager})
        return Case(label, lambda: (make(), old, new), data={"old": old, "new": new, "eager": eager})

    tiny = lambda: _prepare(TinyNet, (5, 4), seed=0)  # noqa: E731
    if not hidden:
        return [case("TinyNet, torch.relu -> torch.sigmoid", tiny, torch.relu, torch.sigmoid,
                     [(torch.relu, torch.sigmoid)])]
    swap = lambda: _prepare(SwapNet, (4, 5), seed=1)  # noqa: E731
    return [
        case("SwapNet, torch.relu -> torch.tanh (F.relu, also named 'relu', must stay)", swap, torch.relu,
             torch.tanh, [(torch.relu, torch.tanh)]),
        case("SwapNet, F.relu -> F.silu (torch.relu must stay)", swap, F.relu, F.silu, [(F.relu, F.silu)]),
        case("SwapNet, torch.sigmoid -> torch.tanh given as keywords (the .sigmoid() method must stay)", swap,
             torch.sigmoid, torch.tanh, [(torch.sigmoid, torch.tanh)], keywords=True),
        case("SwapNet, operator.add -> operator.sub", swap, operator.add, operator.sub,
             [(torch.Tensor.add, torch.Tensor.sub)]),
        case("TinyNet, torch.tanh -> torch.sigmoid (no node targets old)", tiny, torch.tanh, torch.sigmoid, []),
        case("random model seed 31, torch.relu -> torch.sigmoid",
             lambda: _prepare(lambda: random_mlp(31, width=6, steps=("residual", "relu_fn", "linear", "residual")),
                              (3, 6), seed=31),
             torch.relu, torch.sigmoid, [(torch.relu, torch.sigmoid)]),
    ]


def _swap_evidence(result, args):
    return _evidence("swap_function", result, args)


@_one_thread
def _swap_judge(case: Case, ev: dict) -> None:
    gm0, model, inputs = _fresh(case)
    old, new = qualified(case.data["old"]), qualified(case.data["new"])
    _judge_common(ev)
    graph = ev["graph"]
    before = describe_graph(gm0)
    left = [n for n in graph if n["op"] == "call_function" and n["target"] == old]
    if left:
        swapped = _count(graph, lambda n: n["op"] == "call_function" and n["target"] == new) > _count(
            before, lambda n: n["op"] == "call_function" and n["target"] == new)
        orphans = [n for n in graph if n["op"] == "call_function" and n["target"] == new and not n["users"]]
        if orphans:
            hint = (f"your new node '{orphans[0]['name']}' has no users: call old_node.replace_all_uses_with("
                    "new_node), then graph.erase_node(old_node)")
        elif swapped:
            hint = "replace every node that targets `old`, not only the first one"
        else:
            hint = "set node.target = new on every call_function node whose target is old (compare with `is`)"
        raise CheckFailed(f"call_function node '{left[0]['name']}' still targets {old}", hint)
    expected = [(n["op"], new if n["op"] == "call_function" and n["target"] == old else n["target"])
                for n in before]
    got = [(n["op"], n["target"]) for n in graph]
    if len(got) != len(expected):
        raise CheckFailed(f"the graph has {len(got)} nodes, expected {len(expected)}: swap_function only changes "
                          "targets", "retarget nodes in place (node.target = new); if you insert new nodes, erase "
                                     "the old ones")
    for i, (g, e) in enumerate(zip(got, expected)):
        if g != e:
            name, was = graph[i]["name"], before[i]["target"]
            hint = ("compare targets by identity (node.target is old): different functions can share a "
                    "__name__, such as torch.relu and F.relu") if g[1] == new else (
                "only call_function nodes whose target is `old` change; leave every other node as it is")
            now = f"now {g[0]} {g[1]}" if g[0] != e[0] else f"now calls {g[1]}"
            raise CheckFailed(f"{e[0]} node '{name}' ({was}) should have stayed as it was, since {was} is not "
                              f"`old` ({old}); it is {now}", hint)
    _judge_ran(ev)
    _judge_outputs(ev["outputs"], _eager(model, inputs, case.data["eager"]),
                   f"output (compared with the eager model calling {new} where it called {old})",
                   "every call_function node that targeted old must target new, with the same args and kwargs")
    _judge_original(ev, model, inputs)


# ---------------------------------------------------------------------------------- relu_to_clamp

def _clamp_cases(hidden: bool) -> list[Case]:
    def case(label, make, max_value, *, keyword=False):
        data = {"max_value": max_value}
        if keyword:
            return Case(label, lambda: (make(),), kwargs=lambda: {"max_value": max_value}, data=data)
        return Case(label, lambda: (make(), max_value), data=data)

    if not hidden:
        return [case("TinyNet, max_value=1.0", lambda: _prepare(TinyNet, (6, 4), seed=0), 1.0)]
    return [
        case("two torch.relu calls and an F.relu (F.relu must stay), max_value=0.5",
             lambda: _prepare(ClampFunctionNet, (5, 6), seed=2), 0.5),
        case("a torch.relu whose value is returned too, next to .relu(), max_value=6.0 by keyword",
             lambda: _prepare(ReluOutputNet, (4, 5), seed=3), 6.0, keyword=True),
        case("ThreeReluNet (no torch.relu: nothing changes), max_value=1.0",
             lambda: _prepare(ThreeReluNet, (3, 8), seed=4), 1.0),
        case("ReluLikeNet: F.relu6, F.leaky_relu, nn.ReLU6, nn.LeakyReLU must stay, max_value=0.75",
             lambda: _prepare(ReluLikeNet, (4, 6), seed=42), 0.75),
        case("KeywordReluNet: torch.relu(input=h), its input by keyword, max_value=0.5",
             lambda: _prepare(KeywordReluNet, (4, 6), seed=43), 0.5),
        case("random model seed 41, max_value=2 (an int)",
             lambda: _prepare(lambda: random_mlp(41, width=6, steps=("residual", "relu_fn", "relu_mod",
                                                                     "residual", "relu_method")), (5, 6),
                              seed=41), 2),
    ]


def _clamp_evidence(result, args):
    return _evidence("relu_to_clamp", result, args)


def _is_torch_relu(n: dict) -> bool:
    return n["op"] == "call_function" and n["kind"] == "torch.relu"


@_one_thread
def _clamp_judge(case: Case, ev: dict) -> None:
    gm0, model, inputs = _fresh(case)
    max_value = case.data["max_value"]
    _judge_common(ev)
    graph, before = ev["graph"], _facts(gm0, model)
    left = [n for n in graph if _is_torch_relu(n)]
    if left:
        fed = [n for n in graph if n["clamp"] and {"node": left[0]["name"]} in n["args"]]
        hint = ("replace the relu node itself: a clamp after the relu still leaves torch.relu in the graph"
                if fed else "set node.target = torch.clamp on every torch.relu node, with min=0 and max=max_value")
        raise CheckFailed(f"call_function node '{left[0]['name']}' still calls torch.relu", hint)
    kinds = lambda g: sorted(n["kind"] for n in g if n["relu"] and n["kind"] != "torch.relu")  # noqa: E731
    if kinds(graph) != kinds(before):
        gone = sorted(set(kinds(before)) - set(kinds(graph))) or kinds(before)
        raise CheckFailed(f"the ReLU calls that are not torch.relu changed ({', '.join(gone)} before, now "
                          f"{', '.join(kinds(graph)) or 'none'}); relu_to_clamp converts torch.relu calls only",
                          "only torch.relu changes: test node.target is torch.relu (F.relu, nn.ReLU and .relu() "
                          "are other functions and stay as they are)")
    want = _count(before, _is_torch_relu) + _count(before, lambda n: n["clamp"])
    got = _count(graph, lambda n: n["clamp"])
    if got != want:
        raise CheckFailed(f"expected {want} call_function node(s) calling torch.clamp (one per torch.relu), "
                          f"found {got}", "use torch.clamp itself (not torch.clip, F.hardtanh or x.clamp()) as "
                                          "the target of a call_function node")
    _judge_ran(ev)
    if want and "clamp" not in ev["code"]:
        raise CheckFailed("gm.code does not mention clamp", RECOMPILE_HINT)
    expected = _eager(model, inputs, [(torch.relu, lambda *a, **k: torch.clamp(_input_of(a, k), min=0,
                                                                             max=max_value))])
    hint = f"every torch.relu(x) must become torch.clamp(x, min=0, max=max_value), here max_value={max_value!r}"
    try:
        _judge_outputs(ev["outputs"], expected, "output", hint)
    except CheckFailed as exc:
        clamps = [n for n in graph if n["clamp"]]
        if clamps and not any(isinstance(a, (int, float)) and a == 0 for n in clamps
                              for a in [*n["args"][1:2], n["kwargs"].get("min")]):
            raise CheckFailed(exc.message, "negative values must become 0: torch.clamp needs min=0 as well as "
                                           "max=max_value") from None
        raise
    _judge_original(ev, model, inputs)


# ----------------------------------------------------------------------------------- relu_to_gelu

FORM_HINTS = {
    "nn.ReLU": "nn.ReLU is a call_module node: find it with isinstance(gm.get_submodule(node.target), nn.ReLU)",
    "Tensor.relu": "x.relu() is a call_method node whose target is the string 'relu' (x.relu_() is 'relu_')",
    "Tensor.relu_": "x.relu_() is a call_method node whose target is the string 'relu_'",
    "torch.relu_": "torch.relu_ (the in-place relu, also F.relu_) is a function of its own: match it too",
    "torch.nn.functional.relu": "torch.relu and F.relu are different functions: match both (F.relu may carry "
                                "inplace=True in its kwargs)",
    "torch.relu": "torch.relu and F.relu are different functions: match both",
}


def _gelu_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [Case("ThreeReluNet (F.relu, nn.ReLU and .relu())", lambda: (_prepare(ThreeReluNet, (4, 8)),))]
    return [
        Case("in-place ReLUs: torch.relu_, F.relu(inplace=True), nn.ReLU(inplace=True), .relu_()",
             lambda: (_prepare(InplaceReluNet, (5, 6), seed=5),)),
        Case("one nn.ReLU called twice, another nested in a Sequential",
             lambda: (_prepare(SharedReluNet, (4, 4), seed=6),)),
        Case("a torch.relu whose value is returned too",
             lambda: (_prepare(ReluOutputNet, (3, 5), seed=7),)),
        Case("random model seed 51 (ReLU modules in a ModuleDict)",
             lambda: (_prepare(lambda: random_mlp(51, width=6, steps=("relu_mod", "linear", "relu_method",
                                                                      "relu_mod", "residual", "relu_fn")),
                               (4, 6), seed=51),)),
        Case("TinyNet (torch.relu only)", lambda: (_prepare(TinyNet, (6, 4), seed=8),)),
        Case("ReluLikeNet: F.relu6, F.leaky_relu, nn.ReLU6, nn.LeakyReLU must stay",
             lambda: (_prepare(ReluLikeNet, (4, 6), seed=52),)),
        Case("KeywordReluNet: torch.relu(input=h), its input by keyword",
             lambda: (_prepare(KeywordReluNet, (4, 6), seed=53),)),
    ]


def _gelu_evidence(result, args):
    return _evidence("relu_to_gelu", result, args)


@_one_thread
def _gelu_judge(case: Case, ev: dict) -> None:
    gm0, model, inputs = _fresh(case)
    _judge_common(ev)
    graph, before = ev["graph"], _facts(gm0, model)
    left = [n for n in graph if n["relu"]]
    if left:
        n = left[0]
        what = {"call_module": f"calls nn.ReLU '{n['target']}'", "call_method": f"calls .{n['target']}()"}.get(
            n["op"], f"calls {n['target']}")
        raise CheckFailed(f"{n['op']} node '{n['name']}' still {what}: no node may compute a ReLU",
                          "ReLU comes in three forms; " + FORM_HINTS.get(
                              n["kind"], "match every function, method and module that computes a ReLU"))
    approx = [n for n in graph if n["gelu"] not in (None, "none")]
    if approx:
        raise CheckFailed(f"node '{approx[0]['name']}' computes GELU with approximate={approx[0]['gelu']!r}",
                          "exact GELU means approximate='none', the default of F.gelu and nn.GELU")
    want = _count(before, lambda n: n["relu"]) + _count(before, lambda n: n["gelu"] is not None)
    got = _count(graph, lambda n: n["gelu"] is not None)
    if got < want:
        raise CheckFailed(f"expected {want} GELU node(s), one in place of each ReLU, found {got}",
                          "replace each ReLU node by a node computing exact GELU: F.gelu or an nn.GELU() submodule")
    _judge_ran(ev)
    _judge_outputs(ev["outputs"], _eager(model, inputs, RELU_TO_GELU),
                   "output (compared with the eager model computing exact GELU where it computed ReLU)",
                   "each ReLU must become exact GELU of the same input; every other node stays as it is")
    _judge_original(ev, model, inputs)


# ------------------------------------------------------------------------------- linear_to_matmul

def _matmul_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [Case("TinyNet", lambda: (_prepare(TinyNet, (5, 4)),))]
    return [
        Case("ThreeReluNet (fc2 has no bias)", lambda: (_prepare(ThreeReluNet, (4, 8), seed=9),)),
        Case("LinearChain 6->12->5 without biases (targets 'layers.0', 'layers.1')",
             lambda: (_prepare(lambda: LinearChain((6, 12, 5), bias=False), (3, 6), seed=10),)),
        Case("one Linear called twice, on 3-d inputs",
             lambda: (_prepare(SharedLinearNet, (2, 3, 6), seed=11),)),
        Case("random model seed 61 (ModuleDict names, a chain, a Linear called twice)",
             lambda: (_prepare(lambda: random_mlp(61, width=6, steps=("chain", "shared", "relu_fn", "linear")),
                               (4, 6), seed=61),)),
        Case("Net (with an nn.ReLU that must stay)", lambda: (_prepare(Net, (3, 8), seed=12),)),
    ]


def _matmul_evidence(result, args):
    return _evidence("linear_to_matmul", result, args, step=True)


@_one_thread
def _matmul_judge(case: Case, ev: dict) -> None:
    gm0, model, inputs = _fresh(case)
    _judge_common(ev)
    graph, before = ev["graph"], _facts(gm0, model)
    calls = [n for n in before if n["op"] == "call_module" and n["linear"]]
    for n in graph:
        if n["op"] == "call_module" and n["linear"]:
            sites = sum(1 for c in calls if c["target"] == n["target"])
            if "." in n["target"]:
                hint = ("getattr(gm, 'layers.0') does not follow dotted names: use gm.get_submodule(node.target) "
                        "and graph.get_attr(f'{node.target}.weight')")
            elif sites > 1:
                hint = "a Linear can be called from more than one node: replace every call_module node, not one per module"
            else:
                hint = "replace every call_module node whose module is an nn.Linear"
            raise CheckFailed(f"call_module node '{n['name']}' still calls nn.Linear '{n['target']}'", hint)
        if n["linear"]:
            raise CheckFailed(f"node '{n['name']}' calls {n['target']}, which is nn.Linear in disguise",
                              "build x @ W.T + b from a matmul and an add; F.linear and torch.addmm are what this "
                              "exercise takes apart")
    got = _count(graph, lambda n: n["matmul"])
    if got < len(calls):
        raise CheckFailed(f"found {got} matmul node(s) for {len(calls)} former nn.Linear call(s)",
                          "each former Linear call becomes a matmul of its input with W.T (torch.matmul or @)")
    read = set()
    for n in graph:
        info = n["reads"]
        if not info:
            continue
        if info["kind"] == "None":
            raise CheckFailed(f"get_attr node '{n['name']}' reads {n['target']}, which is None",
                              "this nn.Linear has no bias (bias=None): leave the add out for it")
        if info["kind"] == "missing":
            raise CheckFailed(f"get_attr node '{n['name']}' reads {n['target']}, which does not exist: "
                              f"{info['error']}", _run_hint("has no attribute"))
        if info["kind"] in ("Parameter", "Tensor"):
            if info["param_of"] is None:
                how = (f"a new {info['kind']} on the same memory as '{info['storage_of']}', not that parameter "
                       "itself" if info["storage_of"] else f"a {info['kind']} that is not a parameter of the "
                                                          "original model (a copy?)")
                raise CheckFailed(f"get_attr node '{n['name']}' ({n['target']}) reads {how}", SHARED_HINT)
            read.add(info["param_of"])
    for c in calls:
        lin = model.get_submodule(c["target"])
        for pname in ("weight", "bias"):
            if getattr(lin, pname) is not None and f"{c['target']}.{pname}" not in read:
                raise CheckFailed(f"no get_attr node reads the {pname} of nn.Linear '{c['target']}'", SHARED_HINT)
    _judge_ran(ev)
    _judge_outputs(ev["outputs"], _eager(model, inputs), "output",
                   "nn.Linear computes x @ W.T + b, with W of shape (out_features, in_features)")
    _judge_original(ev, model, inputs)
    if ev["stepped_error"]:
        raise CheckFailed(f"after an SGD step on the original model the result raised {ev['stepped_error']['error']}",
                          SHARED_HINT)
    _sgd_step(model)
    _judge_outputs(ev["stepped_outputs"], _eager(model, inputs),
                   "output after one SGD step on the original model's parameters", SHARED_HINT)


CHECKS = {
    "swap_function": Check("swap_function", _swap_cases, _swap_evidence, _swap_judge),
    "relu_to_clamp": Check("relu_to_clamp", _clamp_cases, _clamp_evidence, _clamp_judge),
    "relu_to_gelu": Check("relu_to_gelu", _gelu_cases, _gelu_evidence, _gelu_judge),
    "linear_to_matmul": Check("linear_to_matmul", _matmul_cases, _matmul_evidence, _matmul_judge),
}
