"""The judges of ex02_nodes: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

import collections

import torch.fx as fx

from autograder.checks.framework import CheckFailed
from autograder.checks.evidence import expect, qualified, removed_nodes_hint, sole_hint


OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")


def _hist_judge(case, ev):
    gm, = case.make()
    got = ev["counts"]
    expected = dict(collections.Counter(n.op for n in gm.graph.nodes))
    if got == expected:
        return
    removed = removed_nodes_hint(gm, ev["left"])
    if removed and got == dict(collections.Counter(n.op for n in gm.graph.nodes if n.name in ev["left"])):
        raise CheckFailed(f"counted {got}, expected {expected}: the count lacks nodes the answer removed", removed)
    strangers = sorted(k for k in got if k not in OPS)
    if strangers:
        names = {n.name for n in gm.graph.nodes}
        targets = {str(n.target) for n in gm.graph.nodes} | {qualified(n.target) for n in gm.graph.nodes}
        what = ("node.name" if strangers[0] in names else "node.target" if strangers[0] in targets else None)
        raise CheckFailed(f"{strangers[0]!r} is not an opcode; the keys must be opcodes such as 'call_module'",
                          f"key the dict by node.op, not by {what}" if what else
                          "key the dict by node.op, one of " + ", ".join(OPS))
    zeros = sorted(k for k, v in got.items() if v == 0 and k not in expected)
    if zeros:
        raise CheckFailed(f"{zeros[0]!r} is listed with count 0 but no node has that opcode here",
                          "list only the opcodes that occur in the graph")
    for op in OPS:
        if op in expected and op not in got:
            hint = ("placeholder and output nodes count too" if op in ("placeholder", "output") else
                    f"every node counts, {op} nodes too: key each node by its own node.op")
            raise CheckFailed(f"opcode {op!r} is missing; the graph has {expected[op]} {op} node(s)", hint)
    for op in OPS:
        if got.get(op) != expected.get(op):
            hint = None
            if op == "call_module":
                n_sub = sum(1 for _ in gm.named_modules()) - 1
                n_child = sum(1 for _ in gm.children())
                n_distinct = len({n.target for n in gm.graph.nodes if n.op == op})
                per_module = ("count call_module nodes in gm.graph.nodes: a module called twice is two nodes, and "
                              "containers such as nn.Sequential are never called")
                hint = sole_hint(got.get(op), expected.get(op),
                                 [(n_sub, per_module), (n_child, per_module), (n_distinct, per_module)])
            raise CheckFailed(f"{op}: counted {got.get(op)}, expected {expected.get(op)}", hint)


def _called_judge(case, got):
    gm, = case.make()
    nodes = [n for n in gm.graph.nodes if n.op == "call_module"]
    expected = [n.target for n in nodes]
    if got == expected:
        return
    submodules = [name for name, _ in gm.named_modules() if name]
    leaves = [name for name, m in gm.named_modules() if name and not list(m.children())]
    children = [name for name, _ in gm.named_children()]
    other_calls = {text for n in gm.graph.nodes if n.op in ("call_function", "call_method")
                   for text in (str(n.target), qualified(n.target), getattr(n.target, "__name__", None))}
    hint = None
    if got == [n.name for n in nodes]:
        hint = ("the qualified name is node.target (such as 'layers.0'); node.name is the node's own "
                "identifier (such as 'layers_0'), which need not match")
    elif got == list(dict.fromkeys(expected)):
        hint = ("a module called twice appears twice: keep repeats (one entry per call_module node, "
                "where a list of gm's submodules has one entry per module)")
    elif got in (submodules, leaves, children):
        hint = ("list the graph's call_module nodes, not the submodules of gm: a module can be called twice, "
                "or not at all")
    elif sorted(got) == sorted(expected):
        hint = "keep graph order: walk gm.graph.nodes and do not sort"
    elif got == [t.rsplit(".", 1)[-1] for t in expected]:
        hint = "return the full qualified name ('blocks.0.proj'), not its last part"
    elif any(g in other_calls and g not in expected for g in got):
        hint = "only call_module nodes: functions and methods are not module calls"
    missing = [t for t in dict.fromkeys(expected) if got.count(t) < expected.count(t)]
    extra = [t for t in dict.fromkeys(got) if t not in expected]
    what = "; ".join(part for part in (f"missing {missing}" if missing else "",
                                       f"not called by any call_module node: {extra}" if extra else "") if part)
    raise CheckFailed(f"call_module targets: got {got}, expected {expected}" + (f" ({what})" if what else ""), hint)


def _cons_judge(case, got):
    gm, name = case.make()
    target = case.data["node"]
    if "raises" in case.data:
        wanted = "raise KeyError(node_name) (or KeyError with a message naming it) when no node has that name"
        if isinstance(got, dict) and "__raised__" in got:
            kinds = got.get("bases") or [got["__raised__"]]   # "bases": the error's classes, when recorded
            expect("KeyError" in kinds,
                   f"raised {got['__raised__']} for the unknown node name {target!r}, expected KeyError", wanted)
            expect(target in got.get("message", ""),
                   f"the KeyError does not name the node: its message is {got.get('message')!r}",
                   "name the node in the message, for example raise KeyError(f\"no node named {node_name!r}\")")
            return
        by_target = [n for n in gm.graph.nodes if str(n.target) == target]
        order = {n: i for i, n in enumerate(gm.graph.nodes)}
        found_by_target = by_target and isinstance(got, list) and sorted(got) == sorted(
            u.name for u in by_target[0].users) and got
        hint = (f"look nodes up by node.name: {target!r} is the target of {by_target[0].name!r}, not a node name"
                if found_by_target else wanted)
        raise CheckFailed(f"returned {got!r} for the unknown node name {target!r}, expected a KeyError", hint)
    node = next(n for n in gm.graph.nodes if n.name == target)
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    expected = [u.name for u in sorted(node.users, key=order.__getitem__)]
    if got == expected:
        return
    hint = None
    if len(got) > len(set(got)):
        hint = ("list each consumer once, even when it uses the node in two arguments (h * h): "
                "node.users is a dict with one key per user")
    elif got == [u.name for u in node.users]:
        hint = ("return them in graph order: node.users keeps the order in which the uses were created, "
                "which after inserting nodes is not the order of gm.graph.nodes")
    elif sorted(got) == sorted(expected):
        hint = "return them in graph order (the order of gm.graph.nodes)"
    elif set(got) < set(expected) and set(expected) - set(got) == {"output"}:
        hint = "the output node is a user too: it reads the node it returns"
    elif set(got) < set(expected) and got == [u for u in expected if _in_top_args(gm, u, target)]:
        hint = ("uses inside lists (torch.cat([h, x])) and keyword arguments (other=h) count too: "
                "read node.users (or node.all_input_nodes of each candidate), not only node.args")
    elif got and set(got) == {a.name for a in node.all_input_nodes}:
        hint = "consumers are the nodes that read this node (node.users), not the nodes it reads"
    missing = [u for u in expected if u not in got]
    extra = [u for u in dict.fromkeys(got) if u not in expected]
    what = "; ".join(part for part in (f"missing {missing}" if missing else "",
                                       f"not consumers: {extra}" if extra else "") if part)
    raise CheckFailed(f"consumers of {target!r}: got {got}, expected {expected}" + (f" ({what})" if what else ""),
                      hint)


def _in_top_args(gm: fx.GraphModule, user: str, name: str) -> bool:
    """Does node `user` read node `name` as one of its top-level positional args (not in a list, not a kwarg)?"""
    node = next(n for n in gm.graph.nodes if n.name == user)
    return any(isinstance(a, fx.Node) and a.name == name for a in node.args)


# -------------------------------------------------------------------------------------- graph_depth

def _longest(gm: fx.GraphModule, starts=None, end_at_output=True, any_source=False) -> int | None:
    """Edges on the longest path from a start to the output (or to any node); None when none reaches it."""
    dist: dict[fx.Node, int] = {}
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    starts = placeholders if starts is None else starts
    for n in gm.graph.nodes:
        if n in starts or (any_source and not n.all_input_nodes):
            dist[n] = 0
        reach = [dist[a] + 1 for a in n.all_input_nodes if a in dist]
        if reach:
            dist[n] = max(reach + [dist.get(n, 0)])
    if end_at_output:
        out = next(n for n in gm.graph.nodes if n.op == "output")
        return dist.get(out)
    return max(dist.values(), default=None)


def _shortest(gm: fx.GraphModule) -> int | None:
    dist: dict[fx.Node, int] = {}
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            dist[n] = 0
        reach = [dist[a] + 1 for a in n.all_input_nodes if a in dist]
        if reach:
            dist[n] = min(reach)
    return dist.get(next(n for n in gm.graph.nodes if n.op == "output"))


def _longest_over_args(gm: fx.GraphModule) -> int | None:
    """The longest path when only top-level positional args are followed (no kwargs, nothing inside lists)."""
    dist: dict[fx.Node, int] = {}
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            dist[n] = 0
        reach = [dist[a] + 1 for a in n.args if isinstance(a, fx.Node) and a in dist]
        if reach:
            dist[n] = max(reach)
    return dist.get(next(n for n in gm.graph.nodes if n.op == "output"))


def _first_arg_walk(gm: fx.GraphModule) -> int:
    node, steps = next(n for n in gm.graph.nodes if n.op == "output"), 0
    while node.all_input_nodes and steps < 10_000:
        first = node.args[0] if node.args else None
        while isinstance(first, (list, tuple)) and first:
            first = first[0]
        node = first if isinstance(first, fx.Node) else node.all_input_nodes[0]
        steps += 1
    return steps


def _depth_judge(case, got):
    gm, = case.make()
    expected = _longest(gm)
    if got == expected:
        return
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    wrong = [
        (_first_arg_walk(gm), "follow every input of a node (node.all_input_nodes), not only args[0]"),
        (_longest_over_args(gm), "inputs passed as keyword arguments (other=h) or inside lists count too: follow "
                                 "node.all_input_nodes, not only the Node entries of node.args"),
        (_shortest(gm), "take the longest path, not the shortest: a skip connection is a shortcut, "
                        "the depth goes the long way round"),
        (_longest(gm, any_source=True), "paths start at placeholders only: get_attr nodes and calls without "
                                        "node inputs (torch.ones(3)) are not starts"),
        (_longest(gm, starts=placeholders[:1]), "every placeholder is a start, not only the first one"),
        (_longest(gm, end_at_output=False), "the path must end at the output node: nodes that never reach it "
                                            "(dead code) do not count"),
        (len(gm.graph.nodes) - 1, "the number of nodes is not the depth: branches run side by side, "
                                  "take the longest path through node.all_input_nodes"),
        (expected + 1, "count edges, not nodes: x -> fc -> output has depth 2"),
        (expected - 1, "the edge into the output node counts too"),
    ]
    hint = sole_hint(got, expected, wrong)
    expect(False, f"depth {got}, expected {expected} (edges on the longest path from a placeholder "
                  f"to the output node)", hint)
