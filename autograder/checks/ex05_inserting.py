"""Checks of ex05_inserting: insert_after, remove_dropout, record_shapes, linear_flops.

Every pass is judged on structure (which nodes remain, what they target, who reads whom, graph.lint()) and
on numbers (outputs on seeded inputs against a reference rebuilt here). The two analyses are judged against
an interpreter written here that runs the graph node by node.
"""
from __future__ import annotations

import math

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from fxplayground import DropoutNet, LinearChain, ThreeReluNet, TinyNet

from autograder.checks.framework import Case, Check, CheckFailed
from autograder.checks.evidence import (
    describe_graph, expect, expect_close, expect_lint, expect_type, flat_outputs, lint_error, qualified, stale_code as _stale,
)
from autograder.checks.randmodels import random_convnet, random_mlp

# Kept for the mutants of this exercise, which test it: the framework always judges expected errors.
EXPECTED_ERRORS = True

DROPOUT_MODULES = (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout)
DROPOUT_FUNCTIONS = (F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout, F.feature_alpha_dropout,
                     torch.dropout)
DROPOUT_FUNCTION_NAMES = frozenset(qualified(f) for f in DROPOUT_FUNCTIONS)


def _x(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _traced(model: nn.Module, *inputs: torch.Tensor) -> fx.GraphModule:
    """Trace `model` and keep seeded example inputs on it, so evidence can run what the learner returned."""
    gm = fx.symbolic_trace(model)
    gm.example_inputs = tuple(inputs)  # a plain attribute: the learner's function does not need it
    return gm


def _inputs_of(args: tuple) -> tuple:
    return getattr(args[0], "example_inputs", ())


RECOMPILE_HINT = "call gm.recompile() after changing the graph, so gm.code and forward are regenerated"


def _run(gm: fx.GraphModule, inputs: tuple) -> dict:
    """Outputs of `gm` on `inputs` (as a list of tensors), or the error it raised, as plain data."""
    try:
        with torch.no_grad():
            out = gm(*inputs)
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:400]}
    return {"outputs": [t.detach().clone() if isinstance(t, torch.Tensor) else t for t in flat_outputs(out)]}


def _pass_evidence(result, args, function: str) -> dict:
    expect_type(result, fx.GraphModule, function, "a torch.fx.GraphModule")
    return {
        "graph": describe_graph(result),
        "code": result.code,
        "stale": _stale(result),
        "lint": lint_error(result),
        "run": _run(result, _inputs_of(args)),
        "modules": {name: f"{type(m).__module__}.{type(m).__qualname__}"
                    for name, m in result.named_modules() if name},
    }


def _judge_numbers(ev: dict, reference: list, hint: str | None = None) -> None:
    run = ev["run"]
    if "error" in run:
        raise CheckFailed(f"the returned GraphModule raised when run: {run['error']}",
                          hint or "run graph.lint() and print gm.code to see which line is wrong")
    got = run["outputs"]
    expect(len(got) == len(reference), f"the returned GraphModule gives {len(got)} outputs, expected "
                                        f"{len(reference)}", hint)
    for i, (g, e) in enumerate(zip(got, reference)):
        expect_close(g, e, f"output {i} on a seeded input", rtol=1e-5, atol=1e-6, hint=hint)


def _reference_outputs(module: nn.Module, inputs: tuple) -> list:
    with torch.no_grad():
        out = module(*inputs)
    return flat_outputs(out)


# ===================================================================================== insert_after

def double(t: torch.Tensor) -> torch.Tensor:
    """A plain Python function to insert: FX calls it like any other function."""
    return t * 2.0


class SharedUse(nn.Module):
    """`h` is read twice by one node and once inside a list argument."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(5, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        return torch.cat([h, h * h], dim=-1)


def _shapes(shapes, model: nn.Module) -> tuple:
    """Input shapes: given, or for a random MLP `(rows, width)` with its own width."""
    return shapes(model) if callable(shapes) else shapes


def _width(rows: int, *lead: int):
    return lambda model: ((*lead, rows, model.width),) if lead else ((rows, model.width),)


def _seeded(make, seed):
    def build():
        torch.manual_seed(seed)
        return make()
    return build


def _insert_case(label: str, make_model, shape: tuple, node: str | None, fn, seed: int = 0,
                 pick: str | None = None) -> Case:
    """A case of insert_after; `pick` chooses the node by a rule when its name depends on the model."""
    def make():
        model = _seeded(make_model, seed)()
        gm = _traced(model, *[_x(*s, seed=seed + i) for i, s in enumerate(_shapes(shape, model))])
        name = node if pick is None else _pick(gm, pick)
        return gm, name, fn
    return Case(label, make, data={"pick": pick})


def _pick(gm: fx.GraphModule, rule: str) -> str:
    nodes = list(gm.graph.nodes)
    if rule == "first call_module":
        return next(n.name for n in nodes if n.op == "call_module")
    if rule == "last before output":
        return nodes[-1].args[0].name
    raise ValueError(rule)


def reference_insert_after(gm: fx.GraphModule, node_name: str, fn) -> fx.GraphModule:
    """The reference answer, used by the judge only."""
    node = next((n for n in gm.graph.nodes if n.name == node_name), None)
    if node is None:
        raise KeyError(node_name)
    with gm.graph.inserting_after(node):
        new = gm.graph.call_function(fn, (node,))
    node.replace_all_uses_with(new, delete_user_cb=lambda user: user is not new)
    gm.graph.lint()
    gm.recompile()
    return gm


def _insert_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [
            _insert_case("TinyNet, tanh after 'relu'", TinyNet, ((3, 4),), "relu", torch.tanh),
            _insert_case("TinyNet, sigmoid after 'fc1'", TinyNet, ((3, 4),), "fc1", torch.sigmoid, seed=1),
        ]
    cases = [
        _insert_case("ThreeReluNet, tanh after the input 'x' (two users: fc1 and the residual add)",
                     ThreeReluNet, ((4, 8),), "x", torch.tanh, seed=2),
        _insert_case("ThreeReluNet, a Python function after 'head' (its user is the output node)",
                     ThreeReluNet, ((4, 8),), "head", double, seed=3),
        _insert_case("a node read twice by one user and once inside a list argument (torch.cat([h, h * h]))",
                     SharedUse, ((2, 5),), "fc", torch.sigmoid, seed=4),
        _insert_case("random model seed 21, after its first call_module (name differs from target)",
                     lambda: random_mlp(21), _width(3), None, torch.neg, pick="first call_module"),
        _insert_case("random model seed 22, after the node that feeds the output",
                     lambda: random_mlp(22), _width(3), None, double, pick="last before output"),
        Case("TinyNet, an unknown node name 'fc9'", lambda: (_traced(TinyNet(), _x(2, 4)), "fc9", torch.tanh),
             data={"raises": "KeyError", "name": "fc9"}),
    ]
    return cases


def _insert_evidence(result, args):
    return _pass_evidence(result, args, "insert_after")


def _index(graph: list[dict]) -> dict[str, dict]:
    return {n["name"]: n for n in graph}


def _renamed(arg, old: str, new: str):
    if isinstance(arg, dict) and set(arg) == {"node"}:
        return {"node": new} if arg["node"] == old else arg
    if isinstance(arg, list):
        return [_renamed(a, old, new) for a in arg]
    if isinstance(arg, dict):
        return {k: _renamed(v, old, new) for k, v in arg.items()}
    return arg


def _reads(arg, name: str) -> bool:
    if isinstance(arg, dict) and set(arg) == {"node"}:
        return arg["node"] == name
    if isinstance(arg, list):
        return any(_reads(a, name) for a in arg)
    if isinstance(arg, dict):
        return any(_reads(v, name) for v in arg.values())
    return False


SELF_USE_HINT = ("after inserting a consumer of `node`, node.replace_all_uses_with(new) also rewires the new node "
                 "to read itself: pass delete_user_cb=lambda user: user is not new, or set new.args after "
                 "replacing")


def _insert_judge(case: Case, ev) -> None:
    if "raises" in case.data:
        _judge_raised(case, ev)
        return
    gm, name, fn = case.make()
    inputs = gm.example_inputs
    before = describe_graph(gm)
    target = qualified(fn)
    old = _index(before)
    got = ev["graph"]
    added = [n for n in got if n["name"] not in old]
    removed = [n for n in before if n["name"] not in _index(got)]
    expect(not removed, f"node(s) {', '.join(repr(n['name']) for n in removed)} were removed; insert_after "
                        "only adds one node", "keep the original nodes: only add the new one and rewire users")
    expect(added, f"no node was added to the graph (it still has {len(got)} nodes)",
           "`with graph.inserting_after(node):` only sets where new nodes go; create the node inside it with "
           "graph.call_function(fn, (node,))")
    expect(len(added) == 1, f"{len(added)} nodes were added ({', '.join(n['name'] for n in added)}), expected one",
           "add exactly one call_function node")
    new = added[0]
    expect(new["op"] == "call_function" and new["target"] == target,
           f"the added node '{new['name']}' is {new['op']} {new['target']}, expected call_function {target}",
           "create it with graph.call_function(fn, (node,))")
    if new["args"] == [{"node": new["name"]}]:
        raise CheckFailed(f"the new node '{new['name']}' reads itself (args ({new['name']},)), so "
                          f"'{name}' feeds nothing", SELF_USE_HINT)
    expect(new["args"] == [{"node": name}] and not new["kwargs"],
           f"the new node '{new['name']}' has args {new['args']} kwargs {new['kwargs']}, expected exactly "
           f"('{name}',)", "the new node's only argument is the node it follows: graph.call_function(fn, (node,))")
    order = [n["name"] for n in got]
    expect(order.index(new["name"]) > order.index(name),
           f"the new node '{new['name']}' comes before '{name}' in the graph, expected after it",
           "use graph.inserting_after(node), not inserting_before")
    for n in before:
        if n["name"] == name:
            continue
        mine = _index(got)[n["name"]]
        want_args = _renamed(n["args"], name, new["name"])
        want_kwargs = _renamed(n["kwargs"], name, new["name"])
        if _reads(mine["args"], name) or _reads(mine["kwargs"], name):
            raise CheckFailed(f"node '{n['name']}' still reads '{name}' (args {mine['args']}); every former user "
                              f"of '{name}' must read '{new['name']}'",
                              "rewire every use with node.replace_all_uses_with(new, ...): it also rewrites uses "
                              "repeated in one node and uses inside lists and kwargs")
        expect(mine["op"] == n["op"] and mine["target"] == n["target"]
               and mine["args"] == want_args and mine["kwargs"] == want_kwargs,
               f"node '{n['name']}' changed: {mine['op']} {mine['target']} args {mine['args']}, expected "
               f"{n['op']} {n['target']} args {want_args}", "change nothing but the uses of the node")
    users = _index(got)[name]["users"]
    expect(users == [new["name"]], f"'{name}' is read by {users}, expected only by the new node '{new['name']}'",
           SELF_USE_HINT)
    expect_lint(ev, "insert the node with graph.inserting_after(node) so that it comes after its input")
    expect(not ev["stale"] and new["name"] in ev["code"], f"gm.code does not call the new node '{new['name']}'",
           RECOMPILE_HINT)
    reference = reference_insert_after(gm, name, fn)
    _judge_numbers(ev, _reference_outputs(reference, inputs), RECOMPILE_HINT)


def _judge_raised(case: Case, ev) -> None:
    expected = case.data["raises"]
    if isinstance(ev, dict) and "__raised__" in ev:
        expect(expected in ev.get("bases", [ev["__raised__"]]),  # a subclass of the expected error is fine
               f"raised {ev['__raised__']} for an unknown node name, expected {expected}",
               f"raise {expected}(node_name) when no node has that name")
        expect(case.data["name"] in ev["message"],
               f"the {expected} message {ev['message']!r} does not name the missing node '{case.data['name']}'",
               f"raise {expected}(node_name) so the learner sees which name was not found")
        return
    raise CheckFailed(f"returned normally for the unknown node name '{case.data['name']}', expected {expected}",
                      f"raise {expected}(node_name) when no node has that name")


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
    """Dropout feeding the output directly, and dropout right on the input, back to back."""

    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Dropout(0.5)
        self.again = nn.Dropout(0.5)
        self.fc = nn.Linear(5, 5)
        self.out = nn.Dropout(0.5)

    def forward(self, x: torch.Tensor):
        h = self.fc(self.again(self.inp(x)))
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
    """The other dropout layers and functions: 2-d, alpha, feature-alpha, and a subclass of nn.Dropout."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.d2 = nn.Dropout2d(0.5)
        self.alpha = nn.AlphaDropout(0.5)
        self.feat = nn.FeatureAlphaDropout(0.5)
        self.mine = MyDropout(0.5)
        self.head = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.d2(self.conv(x))
        h = F.dropout2d(torch.relu(h), 0.5, self.training)
        h = self.feat(h).mean(dim=(2, 3))
        h = F.alpha_dropout(self.alpha(h), 0.5, self.training)
        return self.head(self.mine(h))


def _drop_case(label: str, make_model, shape: tuple, *, train: bool, seed: int = 0) -> Case:
    def make():
        torch.manual_seed(seed)
        model = make_model()
        model.train(train)
        return (_traced(model, *[_x(*s, seed=seed + i) for i, s in enumerate(_shapes(shape, model))]),)
    return Case(label, make, data={"make": make_model, "train": train, "seed": seed, "shape": shape})


def _drop_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [
            _drop_case("DropoutNet traced in train mode", DropoutNet, ((4, 6),), train=True),
            _drop_case("DropoutNet traced in eval mode", DropoutNet, ((4, 6),), train=False, seed=1),
        ]
    return [
        _drop_case("one nn.Dropout module called from two sites", SharedDropNet, ((3, 6),), train=True, seed=2),
        _drop_case("dropout on the input, twice in a row, and dropout feeding the output directly",
                   OutputDropNet, ((3, 5),), train=True, seed=3),
        _drop_case("F.dropout/torch.dropout with training=self.training traced in train mode, one input "
                   "passed by keyword (torch.dropout(input=h, ...))", FunctionalDropNet, ((4, 6),), train=True, seed=4),
        _drop_case("Dropout2d, AlphaDropout, FeatureAlphaDropout, F.dropout2d, F.alpha_dropout and a subclass "
                   "of nn.Dropout", DropoutZooNet, ((2, 3, 5, 5),), train=True, seed=5),
        _drop_case("random model seed 41 with dropout modules named 'layers.d*'",
                   lambda: random_mlp(41, steps=("dropout", "linear", "relu_fn", "dropout", "residual")),
                   _width(3), train=True, seed=6),
        _drop_case("a model with no dropout at all (random model seed 42)",
                   lambda: random_mlp(42, steps=("linear", "relu_mod", "branch")), _width(3), train=False, seed=7),
    ]


def _is_dropout_node(node: fx.Node, gm: fx.GraphModule) -> bool:
    if node.op == "call_module":
        return isinstance(gm.get_submodule(node.target), DROPOUT_MODULES)
    return node.op == "call_function" and node.target in DROPOUT_FUNCTIONS


def reference_remove_dropout(gm: fx.GraphModule) -> fx.GraphModule:
    """The reference answer, used by the judge only."""
    for node in list(gm.graph.nodes):
        if _is_dropout_node(node, gm):
            source = node.args[0] if node.args else node.kwargs["input"]
            node.replace_all_uses_with(source)
            gm.graph.erase_node(node)
    gm.delete_all_unused_submodules()
    gm.graph.lint()
    gm.recompile()
    return gm


def _drop_evidence(result, args):
    return _pass_evidence(result, args, "remove_dropout")


def _drop_judge(case: Case, ev) -> None:
    gm, = case.make()
    inputs = gm.example_inputs
    dropout_targets = {n.target: type(gm.get_submodule(n.target)).__name__
                       for n in gm.graph.nodes if n.op == "call_module" and _is_dropout_node(n, gm)}
    other_targets = sorted({n.target for n in gm.graph.nodes if n.op == "call_module"} - set(dropout_targets))
    got = ev["graph"]
    for n in got:
        if n["op"] == "call_module" and n["target"] in dropout_targets:
            kind = n.get("module_type") or "?"
            if kind.endswith("Identity"):
                raise CheckFailed(f"node '{n['name']}' calls '{n['target']}', now an nn.Identity: the dropout "
                                  "node must be erased, not replaced",
                                  "make its users read the dropout's input (replace_all_uses_with), then "
                                  "graph.erase_node(node)")
            raise CheckFailed(f"node '{n['name']}' still calls the {dropout_targets[n['target']]} module "
                              f"'{n['target']}' ({kind.rsplit('.', 1)[-1]})",
                              "find dropout modules by type with isinstance(module, (nn.Dropout, nn.Dropout1d, "
                              "nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout)), not by "
                              "name; subclasses count too")
        if n["op"] == "call_module" and any(n.get("module_type", "") == f"{c.__module__}.{c.__qualname__}"
                                            for c in DROPOUT_MODULES):
            raise CheckFailed(f"node '{n['name']}' still calls a dropout module '{n['target']}'",
                              "find dropout modules by type with isinstance")
        if n["op"] == "call_function" and n["target"] in DROPOUT_FUNCTION_NAMES:
            raise CheckFailed(f"node '{n['name']}' still calls {n['target']}",
                              "functional dropout counts too: call_function nodes whose target is F.dropout, "
                              "torch.dropout, F.dropout1d/2d/3d, F.alpha_dropout or F.feature_alpha_dropout")
    reference = describe_graph(reference_remove_dropout(case.make()[0]))
    ref_keys = sorted((n["op"], n["target"]) for n in reference)
    got_keys = sorted((n["op"], n["target"]) for n in got)
    if got_keys != ref_keys:
        extra = [f"{op} {t}" for op, t in got_keys if (op, t) not in ref_keys]
        missing = [f"{op} {t}" for op, t in ref_keys if (op, t) not in got_keys]
        hint = ("make the dropout's users read its input with node.replace_all_uses_with(input_node), then "
                "erase the dropout node")
        if any("Identity" in (n.get("module_type") or "") for n in got):
            hint = "the dropout node must be erased, not replaced by an nn.Identity call"
        raise CheckFailed("the graph has other nodes than the original minus its dropouts: "
                          + (f"unexpected {', '.join(extra)}" if extra else "")
                          + ("; " if extra and missing else "")
                          + (f"missing {', '.join(missing)}" if missing else ""), hint)
    expect_lint(ev, "make every user of a dropout read the dropout's input before erasing the dropout node")
    leftovers = [name for name in dropout_targets if name in ev["modules"]]
    if not leftovers:
        leftovers = [name for name, kind in ev["modules"].items()
                     if any(kind == f"{c.__module__}.{c.__qualname__}" for c in DROPOUT_MODULES)]
    expect(not leftovers, f"the dropout submodule(s) {', '.join(repr(n) for n in leftovers)} are still registered "
                          "on the returned GraphModule",
           "after erasing the nodes, call gm.delete_all_unused_submodules() (or gm.delete_submodule(target))")
    lost = [t for t in other_targets if t not in ev["modules"]]
    expect(not lost, f"submodule(s) {', '.join(repr(t) for t in lost)} were deleted but the graph still calls them",
           "delete only the dropout submodules (delete_all_unused_submodules does that)")
    expect(not ev["stale"], "gm.code is out of date: it is not the code of the changed graph", RECOMPILE_HINT)
    torch.manual_seed(case.data["seed"])
    eager = case.data["make"]().eval()
    _judge_numbers(ev, _reference_outputs(eager, inputs), RECOMPILE_HINT)


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


class SingleOut(nn.Module):
    """Returns a single tensor from a function call: the output node's value is a tensor too."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flatten(x, 1).softmax(dim=-1)


def reference_shapes(gm: fx.GraphModule, *inputs: torch.Tensor) -> dict[str, tuple[int, ...]]:
    """Shapes of every tensor-valued node except output, by name, from an interpreter run."""
    shapes: dict[str, tuple[int, ...]] = {}

    class Recorder(fx.Interpreter):
        def run_node(self, n):
            value = super().run_node(n)
            if n.op != "output" and isinstance(value, torch.Tensor):
                shapes[n.name] = tuple(value.shape)
            return value

    with torch.no_grad():
        Recorder(gm).run(*inputs)
    return shapes


def _values_by_name(gm: fx.GraphModule, *inputs: torch.Tensor) -> dict[str, object]:
    interp = fx.Interpreter(gm, garbage_collect_values=False)
    with torch.no_grad():
        interp.run(*inputs)
    return {n.name: v for n, v in interp.env.items()}


def _shape_case(label: str, make_model, shapes: tuple, seed: int = 0) -> Case:
    def make():
        torch.manual_seed(seed)
        model = make_model()
        return (fx.symbolic_trace(model), *[_x(*s, seed=seed + i) for i, s in enumerate(_shapes(shapes, model))])
    return Case(label, make)


def _shape_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [_shape_case("TinyNet on a (3, 4) input", TinyNet, ((3, 4),)),
                _shape_case("DropoutNet (eval) on a (5, 6) input", lambda: DropoutNet().eval(), ((5, 6),), 1)]
    return [
        _shape_case("a model with x.size(0), x.shape, chunk (a node whose value is a tuple of tensors), a "
                    "parameter and a tuple output", ShapeZoo, ((5, 4),), 2),
        _shape_case("two inputs and a 3-D batch", TwoInputs, ((2, 7, 3), (2, 7, 4)), 3),
        _shape_case("a single tensor output from a function call", SingleOut, ((2, 3, 4),), 4),
        _shape_case("random model seed 51", lambda: random_mlp(51), _width(3), 5),
        _shape_case("random conv model seed 52", lambda: random_convnet(52), ((2, 3, 6, 6),), 6),
    ]


def _shape_evidence(result, args):
    expect_type(result, dict, "record_shapes", "a dict from node name to shape tuple")
    shapes, kinds = {}, {}
    for key, value in result.items():
        if not isinstance(key, str):
            raise CheckFailed(f"a key is {type(key).__name__} {key!r}, expected a node name (str)",
                              "key the dict by node.name, not node.target or the node itself")
        kinds[key] = type(value).__name__
        if isinstance(value, tuple) and all(isinstance(d, int) and not isinstance(d, bool) for d in value):
            shapes[key] = [int(d) for d in value]
        elif isinstance(value, list) and all(isinstance(d, int) for d in value):
            shapes[key] = [int(d) for d in value]
        else:
            shapes[key] = None
    return {"shapes": shapes, "kinds": kinds}


def _shape_judge(case: Case, ev) -> None:
    gm, *inputs = case.make()
    expected = reference_shapes(gm, *inputs)
    values = _values_by_name(gm, *inputs)
    nodes = {n.name: n for n in gm.graph.nodes}
    got = ev["shapes"]
    extra = [k for k in got if k not in expected]
    missing = [k for k in expected if k not in got]
    if "output" in extra:
        raise CheckFailed("the output node is included; it is never recorded (its value is another node's)",
                          "skip the node whose op is 'output'")
    unknown = [k for k in extra if k not in nodes]
    if unknown:
        raise CheckFailed(f"key(s) {', '.join(repr(k) for k in unknown)} are not node names of the graph",
                          "key the dict by node.name (node.target differs for call_module and get_attr nodes)")
    if extra:
        k = extra[0]
        raise CheckFailed(f"node '{k}' is included, but its value is of type {type(values.get(k)).__name__}, "
                          "not a tensor", "record only nodes whose value is a torch.Tensor (isinstance(value, "
                                    "torch.Tensor)); ints, torch.Size and tuples are left out")
    if missing:
        ops = {nodes[k].op for k in missing}
        hint = ("placeholders are tensor-valued nodes too" if ops == {"placeholder"} else
                "record every tensor-valued node, whatever its op (placeholder, get_attr, call_*)")
        raise CheckFailed(f"missing node(s) {', '.join(repr(k) for k in missing)} "
                          f"({', '.join(sorted(ops))})", hint)
    for name, shape in expected.items():
        if got[name] is None:
            raise CheckFailed(f"node '{name}': the value is a {ev['kinds'][name]}, expected a tuple of ints",
                              "convert with tuple(tensor.shape)")
        if ev["kinds"][name] == "list":
            raise CheckFailed(f"node '{name}': the shape is a list, expected a tuple of ints",
                              "convert with tuple(tensor.shape)")
        expect(tuple(got[name]) == shape, f"node '{name}': shape {tuple(got[name])}, expected {shape}",
               "record the shape of the node's own value, computed on the inputs given")


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


class FunctionalLinearNet(nn.Module):
    """F.linear with a weight parameter (not an nn.Linear call) beside an nn.Linear called three times."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(6, 6))
        self.fc = nn.Linear(6, 6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc(F.linear(x, self.w)))
        return self.fc(torch.relu(self.fc(h)))


def reference_linear_flops(gm: fx.GraphModule, *inputs: torch.Tensor) -> int:
    """2 * rows * in * out for every nn.Linear call, rows from the input the call receives."""
    total = 0

    class Counter(fx.Interpreter):
        def call_module(self, target, args, kwargs):
            nonlocal total
            module = self.fetch_attr(target)
            if isinstance(module, nn.Linear):
                x = args[0] if args else kwargs["input"]
                total += 2 * math.prod(x.shape[:-1]) * module.in_features * module.out_features
            return super().call_module(target, args, kwargs)

    with torch.no_grad():
        Counter(gm).run(*inputs)
    return total


def _flops_variants(gm: fx.GraphModule, *inputs: torch.Tensor) -> dict[str, int]:
    """What the usual wrong answers compute, to name the mistake in the message."""
    out = {"no2": 0, "first_dim": 0, "graph_input": 0, "unique": 0, "functional": 0}
    lead = math.prod(inputs[0].shape[:-1])
    calls: list[tuple[nn.Linear, torch.Size]] = []
    fcalls: list[tuple[int, int, int]] = []

    class Spy(fx.Interpreter):
        def call_module(self, target, args, kwargs):
            module = self.fetch_attr(target)
            if isinstance(module, nn.Linear):
                calls.append((module, args[0].shape))
            return super().call_module(target, args, kwargs)

        def call_function(self, target, args, kwargs):
            if target is F.linear:
                fcalls.append((math.prod(args[0].shape[:-1]), args[1].shape[1], args[1].shape[0]))
            return super().call_function(target, args, kwargs)

    with torch.no_grad():
        Spy(gm).run(*inputs)
    for module, shape in calls:
        io = module.in_features * module.out_features
        out["no2"] += math.prod(shape[:-1]) * io
        out["first_dim"] += 2 * (shape[0] if len(shape) > 1 else 1) * io
        out["graph_input"] += 2 * lead * io
    out["unique"] = sum(2 * lead * m.in_features * m.out_features for m in {id(m): m for m, _ in calls}.values())
    out["functional"] = reference_linear_flops(gm, *inputs) + sum(2 * r * i * o for r, i, o in fcalls)
    return out


def _flops_case(label: str, make_model, shapes: tuple, seed: int = 0) -> Case:
    return _shape_case(label, make_model, shapes, seed)


def _flops_cases(hidden: bool) -> list[Case]:
    if not hidden:
        return [_flops_case("TinyNet on a (5, 4) input", TinyNet, ((5, 4),)),
                _flops_case("LinearChain (8, 16, 4) on a (3, 8) input", lambda: LinearChain((8, 16, 4)),
                            ((3, 8),), 1)]
    return [
        _flops_case("TinyNet on a 3-D (2, 3, 4) input", TinyNet, ((2, 3, 4),), 2),
        _flops_case("TinyNet on a 1-D (4,) input", TinyNet, ((4,),), 3),
        _flops_case("one nn.Linear called three times, after an F.linear call", FunctionalLinearNet, ((3, 6),), 5),
        _flops_case("a view between the input and the Linear: (2, 12) -> (2, 3, 4)", ReshapeNet, ((2, 12),), 4),
        _flops_case("random model seed 61 (shared and chained linears) on a 3-D input",
                    lambda: random_mlp(61, width=6, steps=("shared", "chain", "branch", "linear")),
                    _width(5, 2), 6),
        _flops_case("random model seed 62", lambda: random_mlp(62), _width(4), 7),
    ]


def _flops_evidence(result, args):
    if isinstance(result, bool) or not isinstance(result, int):
        raise CheckFailed(f"returned {type(result).__name__} {result!r}, expected an int",
                          "FLOPs are a whole number: sum ints (math.prod of a torch.Size is an int)")
    return int(result)


def _flops_judge(case: Case, got) -> None:
    gm, *inputs = case.make()
    expected = reference_linear_flops(gm, *inputs)
    if got == expected:
        return
    variants = _flops_variants(*case.make())
    hints = [
        ("no2", "each multiply-add counts as 2 FLOPs: 2 * rows * in_features * out_features"),
        ("graph_input", "use the shape of the tensor each Linear receives (run the graph with ShapeProp or an "
                        "Interpreter), not the shape of the model's input"),
        ("unique", "count every nn.Linear call in the graph: a Linear called twice counts twice"),
        ("functional", "only call_module nodes whose module is an nn.Linear count; an F.linear call does not"),
        ("first_dim", "rows is the product of ALL leading dimensions of the Linear's input "
                      "(math.prod(x.shape[:-1])), not only the first"),
    ]
    hint = next((h for key, h in hints if variants[key] == got and variants[key] != expected),
                "find each call_module node whose module is an nn.Linear and the shape of its input tensor")
    raise CheckFailed(f"counted {got} FLOPs, expected {expected}", hint)


CHECKS = {
    "insert_after": Check("insert_after", _insert_cases, _insert_evidence, _insert_judge),
    "remove_dropout": Check("remove_dropout", _drop_cases, _drop_evidence, _drop_judge),
    "record_shapes": Check("record_shapes", _shape_cases, _shape_evidence, _shape_judge, unchanged="always"),
    "linear_flops": Check("linear_flops", _flops_cases, _flops_evidence, _flops_judge, unchanged="always"),
}
