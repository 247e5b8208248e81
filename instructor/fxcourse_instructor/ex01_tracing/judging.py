"""The judges of ex01_tracing: node_summary, count_nodes, outputs_match (the judge's side)."""
from __future__ import annotations

from autograder.checks.framework import Case, Check, CheckFailed
from autograder.checks.evidence import expect, expect_equal, removed_nodes_hint, sole_hint
from autograder.checks.ex01_tracing.cases import _count_cases, _graph_cases, _match_cases
from autograder.checks.ex01_tracing.evidence import _count_evidence, _match_evidence, _summary_evidence


OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")


def _summary_judge(case, ev):
    gm, = case.make()
    expected = [(n.op, n.name) for n in gm.graph.nodes]
    got = [tuple(r) for r in ev["rows"]]
    swapped = [(name, op) for op, name in got]
    if got != expected and got and set(swapped) <= set(expected) and all(second in OPS for _, second in got):
        raise CheckFailed("the pairs are (name, op), expected (op, name)", "put node.op first, then node.name")
    if sorted(got) == sorted(expected) and got != expected:
        raise CheckFailed("the right nodes in the wrong order", "walk gm.graph.nodes: it is already in graph order")
    missing = [row for row in expected if row not in got]
    hint = None
    unused = {n.name for n in gm.graph.nodes if not n.users and n.op != "output"}
    targets = [(n.op, str(n.target)) for n in gm.graph.nodes]
    if missing and [row for row in expected if row in got] == got:   # a part of the nodes, nothing else
        ops = list(dict.fromkeys(op for op, _ in missing))
        hint = removed_nodes_hint(gm, ev.get("left", []))
        if hint is None and {name for _, name in missing} <= unused:
            hint = (f"a node nobody uses is a node too: list {', '.join(name for _, name in missing[:3])} "
                    "(dead nodes are nodes of gm.graph like any other)")
        elif hint is None:
            hint = ("placeholder and output nodes count too" if set(ops) <= {"placeholder", "output"} else
                    f"every node counts, {' and '.join(ops)} nodes too")
    elif got == targets:
        hint = "the second item is node.name, not node.target (a target is a module path or a function)"
    where = f" (missing {', '.join(name for _, name in missing[:4])})" if missing and len(got) < len(expected) else ""
    expect_equal(got, expected, "(op, name) pairs" + where, hint)
    expect(ev["tuples"], "items must be tuples, not lists", "return (node.op, node.name) with parentheses")


def _count_judge(case, ev):
    got = ev["count"]
    gm = case.make()[0]
    op = case.data["op"]
    expected = sum(1 for n in gm.graph.nodes if op is None or n.op == op)
    nodes = list(gm.graph.nodes)
    # what the known mistakes count on this case, each with its hint; a hint fires when it alone predicts `got`
    mistakes = []
    if op is None:
        mistakes += [(sum(1 for n in nodes if n.op not in ("placeholder", "output")),
                      "placeholder and output are nodes too"),
                     (0, "op=None means: count every node")]
    elif op == "" and "truth" in (ev.get("op_used") or ()):   # it tested `not op` (or `if op`)
        mistakes += [(len(nodes), "only op=None means every node: test `op is None`, not `not op` (an empty string "
                                  "is an op no node has)")]
    elif "==" not in (ev.get("op_used") or ()) and ev.get("op_used") is not None:   # it never compared op
        mistakes += [(len(nodes), "when op is given, count only nodes whose node.op equals it")]
    if op and any(n.name == op and n.op != op for n in nodes):
        mistakes += [(sum(1 for n in nodes if n.op == op or n.name == op),
                      f"a node's name is not its opcode: the node named {op!r} is a "
                      f"{next(n.op for n in nodes if n.name == op)} node; count only nodes whose node.op equals op")]
    left = ev.get("left") or []
    removed = removed_nodes_hint(gm, left)
    if removed is not None:
        mistakes += [(sum(1 for n in nodes if n.name in left and (op is None or n.op == op)), removed)]
    which = "every node" if op is None else f"nodes with op={op!r}"
    if got != expected and ev["asked"]:   # it listed gm's modules: what it counted is not the nodes
        raise CheckFailed(f"counted {got} nodes, expected {expected} ({which})",
                          f"count the nodes of gm.graph, not the modules of gm (your answer called gm.{ev['asked'][0]}())")
    expect(got == expected, f"counted {got} nodes, expected {expected} ({which})",
           sole_hint(got, expected, mistakes))


def _match_judge(case, ev):
    expected, atol = case.data["expected"], case.data["atol"]
    got = ev["result"]
    if got == expected:
        return
    runs, compared = ev["runs"], ev["compared"]
    with_grad = [r["who"] for r in runs if r["grad"]]
    used = {c["fn"] for c in compared}
    loose = [c for c in compared if c["fn"] != "equal" and c.get("rtol") not in (0, 0.0)]
    why = case.data["why"]
    hint = None
    if why == "grad" and with_grad:
        hint = (f"{' and '.join(dict.fromkeys(with_grad))} ran with autograd on: run both modules inside "
                "`with torch.no_grad():`")
    elif why == "shape":
        hint = ("outputs of different shapes do not match, even when they broadcast: "
                + ("compare shapes first, also when atol > 0 (torch.allclose broadcasts)" if atol else
                   "compare shapes too"))
    elif why == "exact" and used & {"allclose", "isclose"} and "equal" not in used:
        tolerances = [c.get("atol") for c in compared if c["fn"] != "equal"]
        hint = (f"atol defaults to 0.0, but with no atol given your answer compared with atol={tolerances[0]!r}: "
                "keep the signature's default, atol=0.0" if tolerances and tolerances[0] not in (None, 0, 0.0)
                and "atol" not in case.kwargs() else
                "with atol == 0 the outputs must be exactly equal: use torch.equal (allclose has tolerances of its own)")
    elif why == "rtol" and loose:
        hint = ("the tolerance is atol alone: torch.allclose(a, b, rtol=0, atol=atol) (its default rtol=1e-5 adds "
                "1e-5 * |b|, which is 0.1 for outputs near 1e4)")
    elif why == "tolerance" and "equal" in used and not used & {"allclose", "isclose"}:
        hint = f"atol={atol!r} is a tolerance: compare with torch.allclose(a, b, rtol=0, atol=atol), not torch.equal"
    expect(False, f"returned {got}, expected {expected}" + (f": {_WHY[why]}" if why in _WHY else ""), hint)


_WHY = {
    "exact": "with atol == 0 (the default) the outputs must be exactly equal, and these differ by about 1e-7",
    "tolerance": "the outputs differ by less than atol, so they match",
    "far": "the outputs differ by more than atol",
    "rtol": "the outputs, near 1e4, differ by 0.05, more than atol=1e-3",
    "shape": "the outputs have different shapes",
    "grad": "the model's output depends on whether autograd is on, and under torch.no_grad() the two differ",
    "changed": "gm's fc2 bias was changed, so the outputs differ",
    "same": "gm is a trace of the model, so their outputs are equal",
}


# outputs_match: what each case must return, and why (the judge's alone: the worker's cases carry inputs only)
_MATCH = {
    "TinyNet and its trace": (True, "same"),
    "TinyNet and a trace with a changed bias": (False, "changed"),
    "TinyNet off by 1e-7, atol=0 (exact)": (False, "exact"),
    "TinyNet off by 1e-7, atol=1e-3": (True, "tolerance"),
    "TinyNet off by 0.1, atol=1e-3": (False, "far"),
    "TinyNet with outputs near 1e4, off by 0.05, atol=1e-3 (no relative tolerance)": (False, "rtol"),
    "a model with two inputs and its trace": (True, "same"),
    "outputs of shapes (1, 2) and (2,) that broadcast": (False, "shape"),
    "a model whose output shows whether no_grad was on": (False, "grad"),
    "outputs of shapes (1, 2) and (2,) that broadcast, atol=1e-3": (False, "shape"),
    "TinyNet off by 0.5, atol=1.0": (True, "tolerance"),
}


def _match_judged(hidden: bool) -> list[Case]:
    """The cases of outputs_match with what the judge knows of each: the expected answer and why."""
    out = []
    for case in _match_cases(hidden):
        expected, why = _MATCH[case.label]
        out.append(Case(case.label, case.make, case.kwargs, {**case.data, "expected": expected, "why": why}))
    return out


CHECKS = {
    "node_summary": Check("node_summary", _graph_cases, _summary_evidence, _summary_judge, unchanged="always"),
    "count_nodes": Check("count_nodes", _count_cases, _count_evidence, _count_judge, unchanged="always"),
    "outputs_match": Check("outputs_match", _match_judged, _match_evidence, _match_judge, unchanged="always"),
}
