"""The judges of ex03_replacing: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

import difflib
import re

import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.checks.hints import hint_of
from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import (
    deleted_while_called_hint, describe_graph, expect, expect_close, expect_lint, flat_outputs, qualified,
)
from autograder.checks.ex03_replacing.models import _EagerSwap
from autograder.checks.ex03_replacing.cases import STASH
from autograder.checks.ex03_replacing.evidence import (
    _facts, _run_hint, _sgd_step, RELU_FUNCTIONS, untransposed_weights,
)


LAMBDA_HINT = "ex03.give_node_target_real_function"
RECOMPILE_HINT = "shared.call_gm_recompile_after_changing"
SHARED_HINT = "ex03.parameters_must_stay_shared_original"
ORIGINAL_HINT = "ex03.original_model_changed_gm_shares"
GIVEN_HINT = "ex03.change_gm_itself_recompile_it"


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


# dead nodes of the cases' models (DeadNodesNet) that none of the passes changes: a torch.tanh nobody reads, and an
# in-place h.add_(1.0) whose own result nobody reads but which changes h
_KEPT_DEAD = (torch.tanh, "add_")


def _judge_common(ev: dict, gm0) -> None:
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
    names = {n["name"] for n in ev["graph"]}
    gone = [n.name for n in gm0.graph.nodes if n.op.startswith("call_") and not n.users and n.target in _KEPT_DEAD
            and n.name not in names]
    expect(not gone, f"node '{gone[0] if gone else ''}', which nobody reads, is gone from the graph: the pass "
           "changes only the nodes it is asked to change", "ex03.keep_dead_nodes")
    if ev.get("given"):   # a new GraphModule returned, the one passed in left with a changed graph and old code
        line = _first_changed_line(ev["given"]["code"], ev["given"]["graph_code"])
        raise CheckFailed("your function returned a new GraphModule, but it changed the graph of the GraphModule "
                          "it was given and never recompiled that one: the caller's gm.code (and so its forward) is "
                          "out of date" + (f": its graph now says `{line}`, which its gm.code does not contain"
                                           if line else ""), GIVEN_HINT)


def _judge_ran(ev: dict) -> None:
    if ev["run_error"]:
        hint = ev["run_error"]["hint"]
        empty = [n["name"] for n in ev["graph"] if n["op"].startswith("call_") and (
            (n["args"] and n["args"][0] is None) or (not n["args"] and n["kwargs"].get("input", 0) is None))]
        if hint is None and empty:
            hint = hint_of("ex03.node_has_none_input_take", node=empty[0])
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


def _fewer(before: list[dict], graph: list[dict], pred) -> list[dict]:
    """The nodes of `before` (those `pred` picks) whose op and target occur fewer times in `graph`."""
    def times(g, n):
        return _count(g, lambda m: (m["op"], m["target"]) == (n["op"], n["target"]))
    return [n for n in before if pred(n) and times(graph, n) < times(before, n)]


def _swap_judge(case: Case, ev: dict) -> None:
    gm0, model, inputs = _fresh(case)
    old, new = qualified(case.data["old"]), qualified(case.data["new"])
    _judge_common(ev, gm0)
    graph = ev["graph"]
    before = describe_graph(gm0)
    left = [n for n in graph if n["op"] == "call_function" and n["target"] == old]
    if left:
        swapped = _count(graph, lambda n: n["op"] == "call_function" and n["target"] == new) > _count(
            before, lambda n: n["op"] == "call_function" and n["target"] == new)
        orphans = [n for n in graph if n["op"] == "call_function" and n["target"] == new and not n["users"]]
        if orphans:
            hint = hint_of("ex03.your_new_node_has_no", name=orphans[0]['name'])
        elif swapped:
            was_old = [i for i, n in enumerate(before) if n["op"] == "call_function" and n["target"] == old]
            still = [i for i in was_old if graph[i]["target"] == old] if len(graph) == len(before) else []
            first_only = still and len(was_old) - len(still) == 1 and was_old[0] not in still
            hint = ("ex03.replace_every_node_targets_old" if first_only else
                    hint_of("ex03.replace_every_node_targets_old_2", left=len(left)))
        else:
            hint = "ex03.set_node_target_new_every"
        raise CheckFailed(f"call_function node '{left[0]['name']}' still targets {old}", hint)
    expected = [(n["op"], new if n["op"] == "call_function" and n["target"] == old else n["target"])
                for n in before]
    got = [(n["op"], n["target"]) for n in graph]
    if len(got) != len(expected):
        raise CheckFailed(f"the graph has {len(got)} nodes, expected {len(expected)}: swap_function only changes "
                          "targets", "ex03.retarget_nodes_place_node_target" if len(got) > len(expected) else
                          "ex03.retarget_nodes_place_node_target_2")
    for i, (g, e) in enumerate(zip(got, expected)):
        if g != e:
            name, was = graph[i]["name"], before[i]["target"]
            same_name = g[1] == new and was.rsplit(".", 1)[-1] == old.rsplit(".", 1)[-1]
            hint = "ex03.compare_targets_identity_node_target" if same_name and e[0] == "call_function" else (
                hint_of("ex03.only_call_function_nodes_change", op=e[0], short=_short(was))) if same_name else (
                "ex03.only_call_function_nodes_whose")
            now = f"now {g[0]} {g[1]}" if g[0] != e[0] else f"now calls {g[1]}"
            raise CheckFailed(f"{e[0]} node '{name}' ({was}) should have stayed as it was, since {was} is not "
                              f"`old` ({old}); it is {now}", hint)
    _judge_ran(ev)
    changed = [n["name"] for n, b in zip(graph, before) if (n["args"], n["kwargs"]) != (b["args"], b["kwargs"])]
    _judge_outputs(ev["outputs"], _eager(model, inputs, case.data["eager"]),
                   f"output (compared with the eager model calling {new} where it called {old})",
                   hint_of("ex03.node_has_other_args_kwargs", node=changed[0]) if changed else None)
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
    _judge_common(ev, gm0)
    graph, before = ev["graph"], _facts(gm0, model)
    left = [n for n in graph if _is_torch_relu(n)]
    if left:
        fed = [n for n in graph if n["clamp"] and {"node": left[0]["name"]} in n["args"]]
        hint = ("ex03.replace_relu_node_itself_clamp"
                if fed else ("ex03.set_node_target_torch_clamp" if any(n["clamp"] for n in graph) else
                             "ex03.set_node_target_torch_clamp_2"))
        raise CheckFailed(f"call_function node '{left[0]['name']}' still calls torch.relu", hint)
    kinds = lambda g: sorted(n["kind"] for n in g if n["relu"] and n["kind"] != "torch.relu")  # noqa: E731
    if kinds(graph) != kinds(before):
        gone = sorted(set(kinds(before)) - set(kinds(graph))) or kinds(before)
        raise CheckFailed(f"the ReLU calls that are not torch.relu changed ({', '.join(gone)} before, now "
                          f"{', '.join(kinds(graph)) or 'none'}); relu_to_clamp converts torch.relu calls only",
                          "ex03.only_torch_relu_changes_test")
    want = _count(before, _is_torch_relu) + _count(before, lambda n: n["clamp"])
    got = _count(graph, lambda n: n["clamp"])
    if got != want:
        lookalikes = [n for n in graph if _short(n["target"]) in ("clip", "hardtanh", "clamp", "relu6")
                      and not n["clamp"]]
        others = lambda n: n["op"] == "call_function" and not n["relu"] and not n["clamp"]  # noqa: E731
        namesakes = _fewer(before, graph, others) if got > want else []   # a function only named relu, clamped
        raise CheckFailed(f"expected {want} call_function node(s) calling torch.clamp (one per torch.relu), "
                          f"found {got}" + (f"; node '{lookalikes[0]['name']}' calls {lookalikes[0]['target']}"
                                            if lookalikes else
                                            f"; node '{namesakes[0]['name']}' called {namesakes[0]['target']}, "
                                            "which is not torch.relu, and now calls torch.clamp" if namesakes
                                            else ""),
                          hint_of("ex03.use_torch_clamp_itself_not", target=lookalikes[0]['target'])
                          if lookalikes else "ex03.only_torch_relu_changes_test" if namesakes else None)
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
    hint = (hint_of("ex03.node_clamps_min_max_0", name=swapped[0]['name'], max_value=max_value, want=want)
            if swapped else
            hint_of("ex03.node_has_min_negative_values", name=no_floor[0]['name'],
                    bound=_bound(no_floor[0], 1, 'min')) if no_floor else
            hint_of("ex03.node_clamps_max", name=off[0]['name'], bound=_bound(off[0], 2, 'max'), want=want)
            if off else None)
    _judge_outputs(ev["outputs"], expected, "output", hint)
    _judge_original(ev, model, inputs)


# ----------------------------------------------------------------------------------- relu_to_gelu

FORM_HINTS = {   # by the kind of ReLU a node still computes
    "nn.ReLU": "ex03.nn_relu_call_module_node",
    "Tensor.relu": "ex03.x_relu_call_method_node",
    "Tensor.relu_": "ex03.x_relu_call_method_node_2",
    "torch.relu_": "ex03.torch_relu_place_relu_also",
    "torch.nn.functional.relu": "ex03.torch_relu_f_relu_are",
    "torch.relu": "ex03.torch_relu_f_relu_are_2",
}


def _gelu_judge(case: Case, ev: dict) -> None:
    gm0, model, inputs = _fresh(case)
    _judge_common(ev, gm0)
    graph, before = ev["graph"], _facts(gm0, model)
    left = [n for n in graph if n["relu"]]
    if left:
        n = left[0]
        what = {"call_module": f"calls nn.ReLU '{n['target']}'", "call_method": f"calls .{n['target']}()"}.get(
            n["op"], f"calls {n['target']}")
        raise CheckFailed(f"{n['op']} node '{n['name']}' still {what}: no node may compute a ReLU",
                          FORM_HINTS.get(n["kind"], "ex03.relu_three_forms_match_every"))
    approx = [n for n in graph if n["gelu"] not in (None, "none")]
    if approx:
        raise CheckFailed(f"node '{approx[0]['name']}' computes GELU with approximate={approx[0]['gelu']!r}",
                          "ex03.exact_gelu_means_approximate_none")
    for n in graph:   # in graph order: the first node that cannot run as GELU
        extra = sorted(set(n["kwargs"]) - {"input", "approximate"}) if n["gelu"] is not None else []
        if n["op"] == "call_function" and extra:
            raise CheckFailed(f"node '{n['name']}' calls F.gelu with {extra[0]}={n['kwargs'][extra[0]]!r}, which "
                              "F.gelu does not take", "ex03.f_gelu_takes_no_inplace")
        if n["op"] == "call_method" and n["target"] == "gelu":
            raise CheckFailed(f"call_method node '{n['name']}' calls .gelu(), a method tensors do not have",
                              "ex03.tensors_have_no_gelu_method")
    want = _count(before, lambda n: n["relu"]) + _count(before, lambda n: n["gelu"] is not None)
    got = _count(graph, lambda n: n["gelu"] is not None)
    if got < want:
        raise CheckFailed(f"expected {want} GELU node(s), one in place of each ReLU, found {got}",
                          "ex03.replace_each_relu_node_node")
    _judge_ran(ev)
    names = {n["name"] for n in graph}
    gone = [n for n in before if n["op"] in ("call_function", "call_method", "call_module") and not n["relu"]
            and n["gelu"] is None and n["name"] not in names]
    _judge_outputs(ev["outputs"], _eager(model, inputs, RELU_TO_GELU),
                   "output (compared with the eager model computing exact GELU where it computed ReLU)",
                   hint_of("ex03.node_was_replaced_but_computes", name=gone[0]['name'], target=gone[0]['target'])
                   if gone else
                   "ex03.each_relu_must_become_exact")
    _judge_original(ev, model, inputs)


LINEAR_TYPE = "torch.nn.modules.linear.Linear"


def _matmul_judge(case: Case, ev: dict) -> None:
    gm0, model, inputs = _fresh(case)
    _judge_common(ev, gm0)
    graph, before = ev["graph"], _facts(gm0, model)
    calls = [n for n in before if n["op"] == "call_module" and n["linear"]]
    for n in graph:
        if n["op"] == "call_module" and n["linear"]:
            sites = sum(1 for c in calls if c["target"] == n["target"])
            left = sum(1 for m in graph if m["op"] == "call_module" and m["target"] == n["target"])
            replaced = {c["target"] for c in calls} - {m["target"] for m in graph if m["op"] == "call_module"}
            if "." in n["target"] and any("." not in t for t in replaced):
                hint = "ex03.getattr_gm_layers_0_does"
            elif sites > 1 and left < sites:
                hint = "ex03.linear_can_called_from_more"
            elif n.get("module_type") != LINEAR_TYPE:
                hint = hint_of("ex03.subclass_nn_linear_is_nn", target=n["target"],
                               cls=_short(n.get("module_type")))
            else:
                hint = "ex03.replace_every_call_module_node"
            kind = "" if n.get("module_type") == LINEAR_TYPE else f" (a {_short(n.get('module_type'))})"
            raise CheckFailed(f"call_module node '{n['name']}' still calls nn.Linear '{n['target']}'{kind}", hint)
        if n["linear"]:
            raise CheckFailed(f"node '{n['name']}' calls {n['target']}, which is nn.Linear in disguise",
                              "ex03.build_x_w_t_b")
    einsum = [n for n in graph if n["op"] == "call_function" and _short(n["target"]) == "einsum"]
    if einsum:
        raise CheckFailed(f"call_function node '{einsum[0]['name']}' calls torch.einsum: take each nn.Linear apart "
                          "into a matmul (torch.matmul or @) of its input with the transposed weight, and an add",
                          "ex03.einsum_is_no_matmul_here")
    got = _count(graph, lambda n: n["matmul"])
    if got < len(calls):
        raise CheckFailed(f"found {got} matmul node(s) for {len(calls)} former nn.Linear call(s)",
                          "ex03.each_former_linear_call_becomes")
    read = set()
    for n in graph:
        info = n["reads"]
        if not info:
            continue
        if info["kind"] == "None":
            raise CheckFailed(f"get_attr node '{n['name']}' reads {n['target']}, which is None",
                              "ex03.this_nn_linear_has_no")
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
                                  (hint_of("ex03.nn_linear_computes_x_w_2", pname=pname) if pname == "bias" else
                                   hint_of("ex03.nn_linear_computes_x_w_3", pname=pname)))
    _judge_ran(ev)
    flat = untransposed_weights(graph)
    dropped = _fewer(before, graph, lambda n: n["op"].startswith("call_") and not n["users"] and not n["linear"])
    _judge_outputs(ev["outputs"], _eager(model, inputs), "output (expected x @ W.T + b for each former Linear)",
                   hint_of("ex03.matmul_node_multiplies_weight_nn", node=flat[0]) if flat else
                   hint_of("ex03.node_whose_result_nobody_reads", name=dropped[0]["name"],
                           target=dropped[0]["target"]) if dropped else None)
    _judge_original(ev, model, inputs)
    if ev["stepped_error"]:
        raise CheckFailed(f"after an SGD step on the original model the result raised {ev['stepped_error']['error']}",
                          SHARED_HINT)
    _sgd_step(model)
    _judge_outputs(ev["stepped_outputs"], _eager(model, inputs),
                   "output after one SGD step on the original model's parameters", SHARED_HINT)



def _gelu_raise(case: Case, raised: dict) -> str | None:
    return deleted_while_called_hint(case.make()[0], raised["message"])
