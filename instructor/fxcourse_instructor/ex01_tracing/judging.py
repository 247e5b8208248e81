"""The judges of ex01_tracing: node_summary, count_nodes, outputs_match (the judge's side)."""
from __future__ import annotations

import dataclasses

from autograder.checks.hints import hint_of
from autograder.checks.framework import Case, Check, CheckFailed
from autograder.checks.evidence import cached_reference, expect, expect_equal, removed_nodes_hint, sole_hint
from autograder.checks.ex01_tracing.cases import _count_cases, _graph_cases, _match_cases
from autograder.checks.ex01_tracing.evidence import _count_evidence, _match_evidence, _summary_evidence


OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")
_TRACED: dict = {}  # each case's traced module, read and never changed by the judges: traced once per judge process


def _traced(case):
    return cached_reference(_TRACED, "traced", case, lambda c: c.make()[0])


def _summary_judge(case, ev):
    gm = _traced(case)
    expected = [(n.op, n.name) for n in gm.graph.nodes]
    got = [tuple(r) for r in ev["rows"]]
    swapped = [(name, op) for op, name in got]
    if got != expected and got and set(swapped) <= set(expected) and all(second in OPS for _, second in got):
        raise CheckFailed("the pairs are (name, op), expected (op, name)", "ex01.put_node_op_first_then")
    if sorted(got) == sorted(expected) and got != expected:
        raise CheckFailed("the right nodes in the wrong order", "ex01.walk_gm_graph_nodes_already")
    missing = [row for row in expected if row not in got]
    hint = None
    unused = {n.name for n in gm.graph.nodes if not n.users and n.op != "output"}
    targets = [(n.op, str(n.target)) for n in gm.graph.nodes]
    if missing and [row for row in expected if row in got] == got:   # a part of the nodes, nothing else
        ops = list(dict.fromkeys(op for op, _ in missing))
        hint = removed_nodes_hint(gm, ev.get("left", []))
        if hint is None and not [name for op, name in missing if name in gm.code or op in ("placeholder", "output")]:
            hint = "ex01.read_graph_not_code"   # every node it left out is missing from gm.code only
        elif hint is None and {name for _, name in missing} <= unused:
            hint = hint_of("ex01.node_nobody_uses_node_too", unused=', '.join(name for _, name in missing[:3]))
        elif hint is None:
            hint = ("ex01.placeholder_output_nodes_count_too" if set(ops) <= {"placeholder", "output"} else
                    hint_of("ex01.every_node_counts_nodes_too", ops=' and '.join(ops)))
    elif got == targets:
        hint = "ex01.second_item_node_name_not"
    elif len(got) == len(expected):
        hint = _renamed_hint(list(gm.graph.nodes), got)
    where = f" (missing {', '.join(name for _, name in missing[:4])})" if missing and len(got) < len(expected) else ""
    expect_equal(got, expected, "(op, name) pairs" + where, hint)
    expect(ev["tuples"], "items must be tuples, not lists", "ex01.return_node_op_node_name")


def _renamed_hint(nodes, got):
    """The hint for an answer whose rows differ from the nodes' only in names: each given name is the node's
    target (a placeholder's argument name, 'output'), or the name a new trace would give (its function's name)."""
    wrong = [(n, name) for n, (op, name) in zip(nodes, got) if op == n.op and name != n.name]
    if not wrong or len(wrong) != sum(1 for n, row in zip(nodes, got) if row != (n.op, n.name)):
        return None
    node, name = wrong[0]
    if all(name == str(n.target) for n, name in wrong):
        return hint_of("ex01.name_is_not_target", node=node.name, op=node.op, target=str(node.target))
    if all(name == getattr(n.target, "__name__", None) for n, name in wrong):
        return hint_of("ex01.names_are_the_graphs_own", node=node.name, got=name)
    return None


def _count_judge(case, ev):
    got = ev["count"]
    gm = _traced(case)
    op = case.data["op"]
    expected = sum(1 for n in gm.graph.nodes if op is None or n.op == op)
    nodes = list(gm.graph.nodes)
    # what the known mistakes count on this case, each with its hint; a hint fires when it alone predicts `got`
    mistakes = []
    if op is None:
        mistakes += [(sum(1 for n in nodes if n.op not in ("placeholder", "output")),
                      "ex01.placeholder_output_are_nodes_too"),
                     (0, "ex01.op_none_means_count_every")]
    elif op == "" and "truth" in (ev.get("op_used") or ()):   # it tested `not op` (or `if op`)
        mistakes += [(len(nodes), "ex01.only_op_none_means_every")]
    elif op == "all":   # a word some APIs take for "every": here only None means that
        mistakes += [(len(nodes), "ex01.only_op_none_means_every")]
    elif "==" not in (ev.get("op_used") or ()) and ev.get("op_used") is not None:   # it never compared op
        mistakes += [(len(nodes), "ex01.when_op_given_count_only")]
    if op and any(n.name == op and n.op != op for n in nodes):
        mistakes += [(sum(1 for n in nodes if n.op == op or n.name == op),
                      hint_of("ex01.node_s_name_not_opcode", op=op, next=next(n.op for n in nodes if n.name == op)))]
    if op and not any(n.op == op for n in nodes):   # an op no node has, which some node's op contains or folds to
        mistakes += [(sum(1 for n in nodes if op in n.op), hint_of("ex01.op_equals_not_contains", op=op)),
                     (sum(1 for n in nodes if n.op.lower() == op.strip().lower()),
                      hint_of("ex01.op_compared_as_it_is", op=op))]
    left = ev.get("left") or []
    removed = removed_nodes_hint(gm, left)
    if removed is not None:
        mistakes += [(sum(1 for n in nodes if n.name in left and (op is None or n.op == op)), removed)]
    which = "every node" if op is None else f"nodes with op={op!r}"
    if got != expected and ev["asked"]:   # it listed gm's modules: what it counted is not the nodes
        raise CheckFailed(f"counted {got} nodes, expected {expected} ({which})",
                          hint_of("ex01.count_nodes_gm_graph_not", method=ev['asked'][0]))
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
    if why in ("grad", "grad_at_run") and with_grad:
        hint = hint_of("ex01.ran_autograd_run_both_modules", which=' and '.join(dict.fromkeys(with_grad)))
    elif why == "shape":
        hint = (("ex01.outputs_different_shapes_do_not" if atol else "ex01.outputs_different_shapes_do_not_2"))
    elif why == "exact" and used & {"allclose", "isclose"} and "equal" not in used:
        tolerances = [c.get("atol") for c in compared if c["fn"] != "equal"]
        hint = (hint_of("ex01.atol_defaults_0_0_but", atol=tolerances[0])
                if tolerances and tolerances[0] not in (None, 0, 0.0)
                and "atol" not in case.kwargs() else
                "ex01.atol_0_outputs_must_exactly")
    elif why == "rtol" and loose:
        hint = "ex01.tolerance_atol_alone_torch_allclose"
    elif why in ("tolerance", "edge") and "equal" in used and not used & {"allclose", "isclose"}:
        hint = hint_of("ex01.atol_tolerance_compare_torch_allclose", atol=atol)
    elif why == "edge" and not used & {"allclose", "isclose"}:
        hint = hint_of("ex01.within_atol_includes_atol", atol=atol)
    elif why == "one_far" and not used & {"allclose", "isclose", "equal"}:
        hint = hint_of("ex01.every_element_within_atol", atol=atol)
    elif why == "tiny" and used & {"allclose", "isclose"}:
        tolerances = [c.get("atol") for c in compared if c["fn"] != "equal" and c.get("atol")]
        hint = (hint_of("ex01.atol_0_no_tolerance_at_all", atol=tolerances[0]) if tolerances else
                "ex01.atol_0_outputs_must_exactly")
    elif why == "inf" and "equal" not in used:
        hint = "ex01.inf_minus_inf_is_nan"
    elif why == "nan":
        hint = "ex01.nan_matches_nothing"
    elif why == "dropout":
        hint = "ex01.run_both_in_their_mode"
    elif why == "complex":
        hint = "ex01.compare_outputs_as_they_are"
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
    "one_far": "one output column differs by 0.5, more than atol=0.3 (the mean difference, 0.25, is not what counts)",
    "edge": "every output differs by exactly atol=0.25, which is within atol (|a - b| <= atol)",
    "tiny": "with atol == 0 the outputs must be exactly equal, and these, near 1e-3, differ by about 1e-9",
    "inf": "the outputs are exactly equal, -inf in the same places included (torch.equal(a, b) is True)",
    "complex": "the outputs are complex and their imaginary parts differ (gm's are negated)",
    "nan": "the outputs hold nan, which matches nothing, not even nan (torch.equal and torch.allclose say False)",
    "grad_at_run": "gm reads the grad mode each time it runs, as the model does: under torch.no_grad() both compute "
                   "the same",
    "negated": "a pass changed gm in place since the first call: it returns its output negated now",
    "dropout": "both are in training mode, where each run of a Dropout drops other values, so the outputs differ",
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
    "TinyNet with one output column off by 0.5 (the mean difference 0.25), atol=0.3": (False, "one_far"),
    "outputs off by exactly atol=0.25": (True, "edge"),
    "TinyNet with outputs near 1e-3, off by about 1e-9, atol=0 (exact)": (False, "tiny"),
    "outputs of shapes (1, 4) and (4, 1) holding one value, atol=0.1": (False, "shape"),
    "outputs holding -inf at the same places (log of 0)": (True, "inf"),
    "complex outputs whose imaginary parts differ (rfft, and its conjugate)": (False, "complex"),
    "outputs holding nan at the same places (log of a negative number)": (False, "nan"),
    "outputs holding nan at the same places (log of a negative number), atol=1e-3": (False, "nan"),
    "a GraphModule that reads the grad mode each time it runs, and the model it computes": (True, "grad_at_run"),
    "a model with a Dropout and its trace, both in training mode (each run drops other values), atol=1e-3":
        (False, "dropout"),
    "TinyNet and its trace given again, after a pass put torch.neg after the trace's output in place":
        (False, "negated"),
}


def _match_judged(hidden: bool) -> list[Case]:
    """The cases of outputs_match with what the judge knows of each: the expected answer and why."""
    out = []
    for case in _match_cases(hidden):
        expected, why = _MATCH[case.label]
        out.append(dataclasses.replace(case, data={**case.data, "expected": expected, "why": why}))
    return out


CHECKS = {
    "node_summary": Check("node_summary", _graph_cases, _summary_evidence, _summary_judge, unchanged="always"),
    "count_nodes": Check("count_nodes", _count_cases, _count_evidence, _count_judge, unchanged="always"),
    "outputs_match": Check("outputs_match", _match_judged, _match_evidence, _match_judge, unchanged="always"),
}
