"""The judges of ex05_inserting: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

import math

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import describe_graph, expect, expect_close, expect_fresh, expect_lint, qualified
from autograder.checks.ex05_inserting.cases import (
    _reference_outputs, reference_insert_after, reference_linear_flops, reference_shapes,
)


# Kept for the mutants of this exercise, which test it: the framework always judges expected errors.
EXPECTED_ERRORS = True
DROPOUT_MODULES = (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout)
DROPOUT_FUNCTIONS = (F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout, F.feature_alpha_dropout,
                     torch.dropout)
DROPOUT_FUNCTION_NAMES = frozenset(qualified(f) for f in DROPOUT_FUNCTIONS)
RECOMPILE_HINT = "call gm.recompile() after changing the graph, so gm.code and forward are regenerated"


def _judge_numbers(ev: dict, reference: list, hint: str | None = None) -> None:
    run = ev["run"]
    if "error" in run:
        raise CheckFailed(f"the returned GraphModule raised {run['error']} when run",
                          hint or "run graph.lint() and print gm.code to see which line is wrong")
    got = run["outputs"]
    expect(len(got) == len(reference), f"the returned GraphModule gives {len(got)} outputs, expected "
                                        f"{len(reference)}", hint)
    for i, (g, e) in enumerate(zip(got, reference)):
        expect_close(g, e, f"output {i} on a seeded input", rtol=1e-5, atol=1e-6, hint=hint)


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
    expect_fresh(ev["stale"], RECOMPILE_HINT)
    torch.manual_seed(case.data["seed"])
    eager = case.data["make"]().eval()
    _judge_numbers(ev, _reference_outputs(eager, inputs), RECOMPILE_HINT)


def _values_by_name(gm: fx.GraphModule, *inputs: torch.Tensor) -> dict[str, object]:
    interp = fx.Interpreter(gm, garbage_collect_values=False)
    with torch.no_grad():
        interp.run(*inputs)
    return {n.name: v for n, v in interp.env.items()}


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
