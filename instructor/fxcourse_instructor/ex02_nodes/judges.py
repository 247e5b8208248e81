"""The judges of ex02_nodes: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

import collections

import torch.fx as fx

from autograder.checks.framework import CheckFailed
from autograder.checks.evidence import expect, qualified, removed_nodes_hint, sole_hint
from autograder.checks.hints import hint_of


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
                          hint_of("ex02.key_dict_node_op_not", what=what) if what else
                          hint_of("ex02.key_dict_node_op_one", ops=", ".join(OPS)))
    zeros = sorted(k for k, v in got.items() if v == 0 and k not in expected)
    if zeros:
        raise CheckFailed(f"{zeros[0]!r} is listed with count 0 but no node has that opcode here",
                          "ex02.list_only_opcodes_occur_graph")
    for op in OPS:
        if op in expected and op not in got:
            nodes = [n for n in gm.graph.nodes if n.op == op]
            hint = ("ex02.placeholder_output_nodes_count_too" if op in ("placeholder", "output") else
                    hint_of("ex02.get_attr_through_submodule_stays", name=nodes[0].name, target=nodes[0].target)
                    if op == "get_attr" and got.get("call_module", 0) > expected.get("call_module", 0) else
                    hint_of("ex02.every_node_counts_nodes_too", op=op))
            raise CheckFailed(f"opcode {op!r} is missing; the graph has {expected[op]} {op} node(s): "
                              + ", ".join(f"{n.name} (target {n.target!r})" for n in nodes), hint)
    for op in OPS:
        if got.get(op) != expected.get(op):
            hint = None
            if op == "call_module":
                n_sub = sum(1 for _ in gm.named_modules()) - 1
                n_child = sum(1 for _ in gm.children())
                n_distinct = len({n.target for n in gm.graph.nodes if n.op == op})
                per_module = "ex02.count_call_module_nodes_gm"
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
        hint = "ex02.qualified_name_node_target_such"
    elif got == list(dict.fromkeys(expected)):
        hint = "ex02.module_called_twice_appears_twice"
    elif got in (submodules, leaves, children):
        hint = "ex02.list_graph_s_call_module"
    elif sorted(got) == sorted(expected):
        hint = "ex02.keep_graph_order_walk_gm"
    elif got == [t.rsplit(".", 1)[-1] for t in expected]:
        hint = "ex02.return_full_qualified_name_blocks"
    elif any(g in other_calls and g not in expected for g in got):
        hint = "ex02.only_call_module_nodes_functions"
    elif got == [n.target for n in nodes if n.users]:
        unused = [n.name for n in nodes if not n.users]
        hint = hint_of("ex02.unused_call_still_calls", names=", ".join(map(repr, unused)))
    missing = [t for t in dict.fromkeys(expected) if got.count(t) < expected.count(t)]
    extra = [t for t in dict.fromkeys(got) if t not in expected]
    what = "; ".join(part for part in (f"missing {missing}" if missing else "",
                                       f"not called by any call_module node: {extra}" if extra else "") if part)
    raise CheckFailed(f"call_module targets: got {got}, expected {expected}" + (f" ({what})" if what else ""), hint)


def _cons_judge(case, got):
    gm, name = case.make()
    target = case.data["node"]
    if "raises" in case.data:
        wanted = "ex02.raise_keyerror_node_name_keyerror"
        if isinstance(got, dict) and "__raised__" in got:
            kinds = got.get("bases") or [got["__raised__"]]   # "bases": the error's classes, when recorded
            expect("KeyError" in kinds,
                   f"raised {got['__raised__']} for the unknown node name {target!r}, expected KeyError", wanted)
            expect(target in got.get("message", ""),
                   f"the KeyError does not name the node: its message is {got.get('message')!r}",
                   "ex02.name_node_message_example_raise")
            return
        by_target = [n for n in gm.graph.nodes if str(n.target) == target]
        order = {n: i for i, n in enumerate(gm.graph.nodes)}
        found_by_target = by_target and isinstance(got, list) and sorted(got) == sorted(
            u.name for u in by_target[0].users) and got
        hint = (hint_of("ex02.look_nodes_up_node_name", target=target, name=by_target[0].name)
                if found_by_target else wanted)
        raise CheckFailed(f"returned {got!r} for the unknown node name {target!r}, expected a KeyError", hint)
    node = next(n for n in gm.graph.nodes if n.name == target)
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    expected = [u.name for u in sorted(node.users, key=order.__getitem__)]
    if got == expected:
        return
    hint = None
    if len(got) > len(set(got)):
        hint = "ex02.list_each_consumer_once_even"
    elif got == [u.name for u in node.users]:
        hint = "ex02.return_them_graph_order_node"
    elif sorted(got) == sorted(expected):
        hint = "ex02.return_them_graph_order_order"
    elif set(got) < set(expected) and set(expected) - set(got) == {"output"}:
        hint = "ex02.output_node_user_too_reads"
    elif set(got) < set(expected) and got == [u for u in expected if _in_top_args(gm, u, target)]:
        hint = "ex02.uses_inside_lists_torch_cat"
    elif got and set(got) == {a.name for a in node.all_input_nodes}:
        hint = "ex02.consumers_are_nodes_read_this"
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
        (_first_arg_walk(gm), "ex02.follow_every_input_node_node"),
        (_longest_over_args(gm), "ex02.inputs_passed_keyword_arguments_other"),
        (_shortest(gm), "ex02.take_longest_path_not_shortest"),
        (_longest(gm, any_source=True), "ex02.paths_start_at_placeholders_only"),
        (_longest(gm, starts=placeholders[:1]), "ex02.every_placeholder_start_not_only"),
        (_longest(gm, end_at_output=False), "ex02.path_must_end_at_output"),
        (len(gm.graph.nodes) - 1, "ex02.number_nodes_not_depth_branches"),
        (expected + 1, "ex02.count_edges_not_nodes_x"),
        (expected - 1, "ex02.edge_into_output_node_counts"),
    ]
    hint = sole_hint(got, expected, wrong)
    expect(False, f"depth {got}, expected {expected} (edges on the longest path from a placeholder "
                  f"to the output node)", hint)
