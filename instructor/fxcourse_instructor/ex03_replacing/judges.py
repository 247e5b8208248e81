"""The judges of ex03_replacing: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

import difflib
import re

import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import (
    deleted_while_called_hint, describe_graph, expect_close, expect_lint, flat_outputs, qualified,
)
from autograder.checks.ex03_replacing.models import _EagerSwap
from autograder.checks.ex03_replacing.cases import STASH
from autograder.checks.ex03_replacing.evidence import (
    _facts, _run_hint, _sgd_step, RELU_FUNCTIONS, untransposed_weights,
)


LAMBDA_HINT = ("give node.target a real function such as torch.clamp and put its extra arguments in node.args/"
               "node.kwargs; a lambda hides what the node computes: gm.code calls it under a generated name")
RECOMPILE_HINT = "call gm.recompile() after changing the graph, so gm.code and forward are regenerated"
SHARED_HINT = ("parameters must stay shared with the original model: read the original nn.Parameter with a "
               "get_attr node (for example 'fc1.weight'); do not clone it or wrap its data in a new nn.Parameter")
ORIGINAL_HINT = ("the original model changed: gm shares its submodules and parameters with the model it was "
                 "traced from, so read them but do not modify them in place")


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
        expect_lint(ev, _run_hint(ev["lint"], ev["graph"]))
    if ev["codegen"]:   # recompile() would fail the same way: the graph itself is at fault
        raise CheckFailed(f"the returned graph cannot be turned into code: {ev['codegen']}",
                          _run_hint(ev["codegen"], ev["graph"]))
    if ev["graph_code"] != ev["code"]:
        line = _first_changed_line(ev["code"], ev["graph_code"])
        raise CheckFailed("the graph was changed but gm.code (and so forward) is out of date"
                          + (f": the graph now says `{line}`, which gm.code does not contain" if line else ""),
                          RECOMPILE_HINT)


def _judge_ran(ev: dict) -> None:
    if ev["run_error"]:
        hint = ev["run_error"]["hint"]
        empty = [n["name"] for n in ev["graph"] if n["op"].startswith("call_") and (
            (n["args"] and n["args"][0] is None) or (not n["args"] and n["kwargs"].get("input", 0) is None))]
        if hint is None and empty:
            hint = (f"node '{empty[0]}' has None as its input: take the old node's input from node.args[0], or "
                    "from node.kwargs['input'] when it was passed by keyword")
        raise CheckFailed(f"the returned GraphModule raised {ev['run_error']['error']} when run", hint)


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
            was_old = [i for i, n in enumerate(before) if n["op"] == "call_function" and n["target"] == old]
            still = [i for i in was_old if graph[i]["target"] == old] if len(graph) == len(before) else []
            first_only = still and len(was_old) - len(still) == 1 and was_old[0] not in still
            hint = ("replace every node that targets `old`, not only the first one" if first_only else
                    f"replace every node that targets `old`: {len(left)} of them still do")
        else:
            hint = "set node.target = new on every call_function node whose target is old"
        raise CheckFailed(f"call_function node '{left[0]['name']}' still targets {old}", hint)
    expected = [(n["op"], new if n["op"] == "call_function" and n["target"] == old else n["target"])
                for n in before]
    got = [(n["op"], n["target"]) for n in graph]
    if len(got) != len(expected):
        raise CheckFailed(f"the graph has {len(got)} nodes, expected {len(expected)}: swap_function only changes "
                          "targets", "retarget nodes in place (node.target = new); if you insert new nodes, erase "
                                     "the old ones" if len(got) > len(expected) else
                          "retarget nodes in place (node.target = new): no node is removed")
    for i, (g, e) in enumerate(zip(got, expected)):
        if g != e:
            name, was = graph[i]["name"], before[i]["target"]
            same_name = g[1] == new and was.rsplit(".", 1)[-1] == old.rsplit(".", 1)[-1]
            hint = ("compare targets by identity (node.target is old): different functions can share a "
                    "__name__, such as torch.relu and F.relu") if same_name and e[0] == "call_function" else (
                f"only call_function nodes change: a {e[0]} node named like `old` ({_short(was)!r}) does not call "
                "the function `old`") if same_name else (
                "only call_function nodes whose target is `old` change; leave every other node as it is")
            now = f"now {g[0]} {g[1]}" if g[0] != e[0] else f"now calls {g[1]}"
            raise CheckFailed(f"{e[0]} node '{name}' ({was}) should have stayed as it was, since {was} is not "
                              f"`old` ({old}); it is {now}", hint)
    _judge_ran(ev)
    changed = [n["name"] for n, b in zip(graph, before) if (n["args"], n["kwargs"]) != (b["args"], b["kwargs"])]
    _judge_outputs(ev["outputs"], _eager(model, inputs, case.data["eager"]),
                   f"output (compared with the eager model calling {new} where it called {old})",
                   f"node '{changed[0]}' has other args or kwargs than before: swap_function changes targets only, "
                   "each node keeps its args and kwargs" if changed else None)
    _judge_original(ev, model, inputs)


def _short(target: str) -> str:
    return str(target).rsplit(".", 1)[-1]


def _bound(n: dict, position: int, key: str):
    """A clamp node's min (position 1) or max (position 2) bound, given by position or keyword."""
    return n["args"][position] if len(n["args"]) > position else n["kwargs"].get(key)


def _is_torch_relu(n: dict) -> bool:
    return n["op"] == "call_function" and n["kind"] == "torch.relu"


def _clamp_judge(case: Case, ev: dict) -> None:
    gm0, model, inputs = _fresh(case)
    max_value = case.data["max_value"]
    _judge_common(ev)
    graph, before = ev["graph"], _facts(gm0, model)
    left = [n for n in graph if _is_torch_relu(n)]
    if left:
        fed = [n for n in graph if n["clamp"] and {"node": left[0]["name"]} in n["args"]]
        hint = ("replace the relu node itself: a clamp after the relu still leaves torch.relu in the graph"
                if fed else "set node.target = torch.clamp on every torch.relu node, with min=0 and max=max_value"
                + (", not only the first" if any(n["clamp"] for n in graph) else ""))
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
        lookalikes = [n for n in graph if _short(n["target"]) in ("clip", "hardtanh", "clamp", "relu6")
                      and not n["clamp"]]
        raise CheckFailed(f"expected {want} call_function node(s) calling torch.clamp (one per torch.relu), "
                          f"found {got}" + (f"; node '{lookalikes[0]['name']}' calls {lookalikes[0]['target']}"
                                            if lookalikes else ""),
                          f"use torch.clamp itself, not {lookalikes[0]['target']}, as the target of a call_function "
                          "node" if lookalikes else None)
    _judge_ran(ev)
    if want and "clamp" not in ev["code"]:
        raise CheckFailed("gm.code does not mention clamp", RECOMPILE_HINT)
    expected = _eager(model, inputs, [(torch.relu, lambda *a, **k: torch.clamp(_input_of(a, k), min=0,
                                                                             max=max_value))])
    clamps = [n for n in graph if n["clamp"]]
    swapped = [n for n in clamps if _bound(n, 1, "min") == max_value != 0 and _bound(n, 2, "max") == 0]
    no_floor = [n for n in clamps if _bound(n, 1, "min") != 0]
    off = [n for n in clamps if _bound(n, 2, "max") != max_value]
    want = f"every torch.relu(x) must become torch.clamp(x, min=0, max=max_value), here max_value={max_value!r}"
    hint = (f"node '{swapped[0]['name']}' clamps with min={max_value!r} and max=0, the bounds swapped: {want}"
            if swapped else
            f"node '{no_floor[0]['name']}' has min={_bound(no_floor[0], 1, 'min')!r}: negative values must become 0, "
            "so torch.clamp needs min=0 as well as max=max_value" if no_floor else
            f"node '{off[0]['name']}' clamps with max={_bound(off[0], 2, 'max')!r}: {want}" if off else None)
    _judge_outputs(ev["outputs"], expected, "output", hint)
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
    for n in graph:   # in graph order: the first node that cannot run as GELU
        extra = sorted(set(n["kwargs"]) - {"input", "approximate"}) if n["gelu"] is not None else []
        if n["op"] == "call_function" and extra:
            raise CheckFailed(f"node '{n['name']}' calls F.gelu with {extra[0]}={n['kwargs'][extra[0]]!r}, which "
                              "F.gelu does not take", "F.gelu takes no `inplace` argument: give the new node only the "
                              "ReLU's input, not the old node's kwargs")
        if n["op"] == "call_method" and n["target"] == "gelu":
            raise CheckFailed(f"call_method node '{n['name']}' calls .gelu(), a method tensors do not have",
                              "tensors have no .gelu() method: make the node a call_function of F.gelu")
    want = _count(before, lambda n: n["relu"]) + _count(before, lambda n: n["gelu"] is not None)
    got = _count(graph, lambda n: n["gelu"] is not None)
    if got < want:
        raise CheckFailed(f"expected {want} GELU node(s), one in place of each ReLU, found {got}",
                          "replace each ReLU node by a node computing exact GELU: F.gelu or an nn.GELU() submodule")
    _judge_ran(ev)
    names = {n["name"] for n in graph}
    gone = [n for n in before if n["op"] in ("call_function", "call_method", "call_module") and not n["relu"]
            and n["gelu"] is None and n["name"] not in names]
    _judge_outputs(ev["outputs"], _eager(model, inputs, RELU_TO_GELU),
                   "output (compared with the eager model computing exact GELU where it computed ReLU)",
                   f"node '{gone[0]['name']}' ({gone[0]['target']}) was replaced, but it computes no ReLU: only "
                   "ReLU changes; match ReLU exactly (its functions by identity, isinstance(module, nn.ReLU)), not "
                   "every name that contains 'relu'" if gone else
                   "each ReLU must become exact GELU of the same input; every other node stays as it is")
    _judge_original(ev, model, inputs)


def _matmul_judge(case: Case, ev: dict) -> None:
    gm0, model, inputs = _fresh(case)
    _judge_common(ev)
    graph, before = ev["graph"], _facts(gm0, model)
    calls = [n for n in before if n["op"] == "call_module" and n["linear"]]
    for n in graph:
        if n["op"] == "call_module" and n["linear"]:
            sites = sum(1 for c in calls if c["target"] == n["target"])
            left = sum(1 for m in graph if m["op"] == "call_module" and m["target"] == n["target"])
            replaced = {c["target"] for c in calls} - {m["target"] for m in graph if m["op"] == "call_module"}
            if "." in n["target"] and any("." not in t for t in replaced):
                hint = ("getattr(gm, 'layers.0') does not follow dotted names: use gm.get_submodule(node.target) "
                        "and graph.get_attr(f'{node.target}.weight')")
            elif sites > 1 and left < sites:
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
                # copies were caught above: nothing reads this parameter at all
                raise CheckFailed(f"no get_attr node reads the {pname} of nn.Linear '{c['target']}'",
                                  f"nn.Linear computes x @ W.T + b: read its {pname} with a get_attr node "
                                  f"(graph.get_attr(f'{{node.target}}.{pname}'))"
                                  + (" and add it to the product" if pname == "bias" else ""))
    _judge_ran(ev)
    flat = untransposed_weights(graph)
    _judge_outputs(ev["outputs"], _eager(model, inputs), "output (expected x @ W.T + b for each former Linear)",
                   f"matmul node '{flat[0]}' multiplies by the weight as it is: nn.Linear computes x @ W.T + b, with "
                   "W of shape (out_features, in_features)" if flat else None)
    _judge_original(ev, model, inputs)
    if ev["stepped_error"]:
        raise CheckFailed(f"after an SGD step on the original model the result raised {ev['stepped_error']['error']}",
                          SHARED_HINT)
    _sgd_step(model)
    _judge_outputs(ev["stepped_outputs"], _eager(model, inputs),
                   "output after one SGD step on the original model's parameters", SHARED_HINT)



def _gelu_raise(case: Case, raised: dict) -> str | None:
    return deleted_while_called_hint(case.make()[0], raised["message"])
