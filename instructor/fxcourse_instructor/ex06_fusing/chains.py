"""The judge of ex06's fuse_consecutive_linears: which Linear chains the graph holds, which the answer fused, and
what a wrongly fused or skipped chain does to the numbers."""
from __future__ import annotations

import re
from collections import Counter

import torch
import torch.fx as fx
import torch.nn as nn

from autograder.checks.hints import hint_of
from autograder.checks.framework import Case, CheckFailed
from autograder.checks.ex06_fusing.evidence import _input_kind, _module_of, _probe
from fxcourse_instructor.ex06_fusing.judges import (
    _close, _common_graph_checks, _expect_originals_kept, _expect_output, _few, _float32_of, _shared_changed, _sites,
)


def _links(gm: fx.GraphModule) -> list[tuple[fx.Node, fx.Node]]:
    """(a, b) for every Linear call a whose only user is a Linear call b reading a, both modules called once.

    A module called from two call sites is left alone (the rule of fuse_conv_bn too): fusing it would give
    one call site a layer the other does not have. So is a Linear called with its input by keyword.
    """
    sites = _sites(gm)
    out = []
    for n in gm.graph.nodes:
        if (isinstance(_module_of(gm, n), nn.Linear) and len(n.users) == 1 and sites[n.target] == 1
                and len(n.args) == 1 and not n.kwargs):
            u = next(iter(n.users))
            if (isinstance(_module_of(gm, u), nn.Linear) and len(u.args) == 1 and u.args[0] is n and not u.kwargs
                    and sites[u.target] == 1):
                out.append((n, u))
    return out


def _expected_linears(gm: fx.GraphModule) -> Counter:
    """(in, out, what feeds it) of every Linear call once each chain is one layer."""
    nxt = dict(_links(gm))
    tails = set(nxt.values())
    out: Counter = Counter()
    for n in gm.graph.nodes:
        mod = _module_of(gm, n)
        if not isinstance(mod, nn.Linear) or n in tails:
            continue
        last = n
        while last in nxt:
            last = nxt[last]
        out[(mod.in_features, _module_of(gm, last).out_features,
             _input_kind(gm, n.args[0] if n.args else n.kwargs.get("input")))] += 1
    return out


def _lin_text(c: Counter) -> str:
    return ", ".join(f"Linear({i}->{o}) fed by {k}" + (f" x{v}" if v > 1 else "")
                     for (i, o, k), v in sorted(c.items())) or "none"


def _chains_judge(case: Case, ev: dict) -> None:
    gm, = case.make()
    original_targets = {n.target for n in gm.graph.nodes if isinstance(_module_of(gm, n), nn.Linear)}
    _common_graph_checks(ev, gm, (nn.Linear,), "fuse_consecutive_linears")
    calls = ev["calls"]
    by_name = {c["name"]: c for c in calls}
    n_links = len(_links(gm))
    dead = [c for c in calls if not c["users"]]
    if dead:
        raise CheckFailed(f"node '{dead[0]['name']}' (Linear '{dead[0]['target']}') is still in the graph "
                          f"but nothing uses it", "ex06.erase_old_nodes_chain_after")
    shared = {t for t, k in _sites(gm).items() if k > 1 and t in original_targets}
    for t in sorted(shared):
        left = sum(1 for c in calls if c["target"] == t)
        if left < _sites(gm)[t]:
            raise CheckFailed(f"Linear '{t}' is called from {_sites(gm)[t]} sites in the original graph, but from "
                              f"{left} after your pass: a module called from two call sites is left alone",
                              "ex06.count_call_sites_each_linear")
    result_sites = Counter(c["target"] for c in calls)
    for c in calls:
        if (len(c["users"]) == 1 and c["users"][0] in by_name and by_name[c["users"][0]]["input_name"] == c["name"]
                and not c.get("by_keyword") and not by_name[c["users"][0]].get("by_keyword")
                and result_sites[c["target"]] == 1 and result_sites[by_name[c["users"][0]]["target"]] == 1):
            _unfused(gm, c, by_name[c["users"][0]], result_sites)
    _shared_changed(gm, ev, nn.Linear, "Linear")
    odd = next((c for c in calls if c.get("shape") and c["shape"] != [c["out"], c["in"]]), None)
    if odd:
        raise CheckFailed(f"node '{odd['name']}' calls Linear '{odd['target']}' with in_features={odd['in']} and "
                          f"out_features={odd['out']}, but its weight has shape {tuple(odd['shape'])}",
                          "ex06.features_out_features_must_match")
    for c in calls:   # a fused layer registered under the name of one of the original Linears
        was = gm.get_submodule(c["target"]) if c["target"] in original_targets else None
        now = ev["weights"].get(c["target"])
        if was is not None and now is not None and not (
                [c["out"], c["in"]] == list(was.weight.shape) and torch.equal(now["weight"], was.weight.detach())):
            raise CheckFailed(f"node '{c['name']}' calls '{c['target']}', the name of an original Linear, but that "
                              "name now holds another layer",
                              "ex06.register_each_fused_layer_new")
    expected = _expected_linears(gm)
    got = Counter((c["in"], c["out"], c["input"]) for c in calls)
    if got != expected:
        message = (f"after fusion the graph should call {sum(expected.values())} Linear(s): "
                   f"{_lin_text(expected)}; it calls {sum(got.values())}: {_lin_text(got)}")
        fork = _fused_through_fork(gm, calls, original_targets, expected, got)
        if fork:
            raise CheckFailed(f"{message}; a new Linear reads '{fork.args[0].name}', the input of '{fork.target}', "
                              f"whose output has {len(fork.users)} users",
                              "ex06.chain_ends_at_linear_whose")
        keyword = sorted({n.target for n in gm.graph.nodes if isinstance(_module_of(gm, n), nn.Linear)
                          and (n.kwargs or len(n.args) != 1)} - {c["target"] for c in calls})
        if keyword:
            raise CheckFailed(f"{message}; '{keyword[0]}', called with its input by keyword, is no longer called",
                              hint_of("ex06.linear_called_input_keyword_input_2", target=keyword[0]))
        raise CheckFailed(message, None if n_links else "ex06.there_was_nothing_fuse_here")
    x = _probe(gm)
    with torch.no_grad():
        expected_out = gm(*x)
        neutral = "ex06.chain_s_fused_layer_computes"
        hint = neutral
        if isinstance(ev["output"], torch.Tensor) and not _close(ev["output"], expected_out):
            hint = _chain_weights_diagnosis(gm, calls, original_targets, ev["weights"]) or neutral
    _expect_output(ev["output"], expected_out, "the fused module's output compared with the original's", hint,
                   ev["weights"], diagnosed=hint is not neutral, float32=lambda: _float32_of(gm, *x))
    _expect_originals_kept(ev, "fuse_consecutive_linears")


def _chains_of(gm: fx.GraphModule) -> list[list[fx.Node]]:
    """The Linear chains of the original graph that a right pass fuses, each as its list of call nodes."""
    nxt = dict(_links(gm))
    tails = set(nxt.values())
    chains = []
    for n in nxt:
        if n in tails:
            continue
        chain = [n]
        while chain[-1] in nxt:
            chain.append(nxt[chain[-1]])
        chains.append(chain)
    return chains


def _chain_weights_diagnosis(gm: fx.GraphModule, calls: list[dict], original_targets: set,
                             weights: dict) -> str | None:
    """What the fused layers' own tensors show about a wrong fusion: for the fused layer of each chain (the new
    Linear that reads the chain's input, with its widths), whether its weight is the product the other way
    round, or its weight right and its bias not. None when no fused layer shows anything sure."""
    for chain in _chains_of(gm):
        mods = [_module_of(gm, n) for n in chain]
        source = chain[0].args[0]
        c = next((c for c in calls if c["target"] not in original_targets and c["target"] in weights
                  and c["input_name"] == getattr(source, "name", None)
                  and (c["in"], c["out"]) == (mods[0].in_features, mods[-1].out_features)), None)
        if c is None:
            continue
        got_w, got_b = weights[c["target"]]["weight"], weights[c["target"]]["bias"]
        w = mods[0].weight.detach()
        b = mods[0].bias.detach() if mods[0].bias is not None else torch.zeros(w.shape[0], dtype=w.dtype)
        for m in mods[1:]:
            b = m.weight.detach() @ b + (m.bias.detach() if m.bias is not None else 0.0)
            w = m.weight.detach() @ w
        names = " -> ".join(f"'{n.target}'" for n in chain)
        square = all(m.in_features == m.out_features for m in mods)
        if square:   # only square weights can be multiplied the other way round: W_first @ ... @ W_last
            reversed_w = mods[0].weight.detach()
            for m in mods[1:]:
                reversed_w = reversed_w @ m.weight.detach()
            if _close(got_w, reversed_w) and not _close(got_w, w):
                return hint_of("ex06.fused_layer_chain_has_weights", target=c['target'], names=names)
        if _close(got_w, w) and not _close(torch.zeros_like(b) if got_b is None else got_b, b):
            return hint_of("ex06.fused_layer_chain_has_right", target=c['target'], names=names, few=_few(b),
                           yours=_few(got_b))
    return None


def _linear_kind(gm: fx.GraphModule, n: fx.Node) -> tuple:
    """What makes two Linear calls alike apart from their names: widths, bias, and what feeds them."""
    mod = _module_of(gm, n)
    return mod.in_features, mod.out_features, mod.bias is not None, _input_kind(gm, n.args[0])


def _unfused(gm: fx.GraphModule, c: dict, u: dict, result_sites: Counter) -> None:
    """Fail for the link c -> u of the result, which should have been fused, with the hint the evidence
    confirms: a link alike but for its names was fused (so names decided); the chain was fused part of the
    way (a fused layer feeds the chain's next Linear); else the rule, without a diagnosis."""
    where = (f"node '{c['name']}' (Linear '{c['target']}') feeds only node '{u['name']}' (Linear "
             f"'{u['target']}'), but the two were not fused")
    orig = {n.target: n for n in gm.graph.nodes if isinstance(_module_of(gm, n), nn.Linear)}
    links = _links(gm)
    if c["target"] in orig and u["target"] in orig:
        a, b = orig[c["target"]], orig[u["target"]]
        twin = next(((p, q) for p, q in links if not result_sites[p.target] and not result_sites[q.target]
                     and _linear_kind(gm, p) == _linear_kind(gm, a) and _linear_kind(gm, q) == _linear_kind(gm, b)),
                    None)
        if twin:
            raise CheckFailed(f"{where}, while '{twin[0].target}' -> '{twin[1].target}', alike but for the names, "
                              "was fused",
                              "ex06.find_linear_calls_module_type")
    if c["target"] not in orig and u["target"] in orig and any(q.target == u["target"] for _, q in links):
        raise CheckFailed(f"{where}; '{c['target']}' is a fused layer, and '{u['target']}' continues its chain",
                          "ex06.chains_any_length_become_one")
    raise CheckFailed(where, "ex06.expected_linear_call_whose_only")


def _fused_through_fork(gm: fx.GraphModule, calls: list[dict], original_targets: set, expected: Counter,
                        got: Counter) -> fx.Node | None:
    """An original Linear call with two or more users, one a Linear, whose input a new (fused) Linear of its
    width reads, where the result has more such Linears than expected: the chain was fused through the fork.
    None otherwise."""
    for n in gm.graph.nodes:
        mod = _module_of(gm, n)
        if not isinstance(mod, nn.Linear) or len(n.users) < 2 or not n.args or not isinstance(n.args[0], fx.Node):
            continue
        if not any(isinstance(_module_of(gm, u), nn.Linear) for u in n.users):
            continue
        for c in calls:
            if (c["target"] not in original_targets and c["input_name"] == n.args[0].name
                    and c["in"] == mod.in_features
                    and got[(c["in"], c["out"], c["input"])] > expected[(c["in"], c["out"], c["input"])]):
                return n
    return None


def _chains_raise(case: Case, raised: dict) -> str | None:
    """An IndexError reading node.args[0] of a Linear called with its input by keyword; a lint error for a get_attr
    node whose module the pass deleted."""
    gm, = case.make()
    if raised["__raised__"] == "KeyError" and "already exists" in raised["message"]:   # add_submodule's refusal
        return "ex06.register_each_fused_layer_new"
    gone = re.search(r"Node (\w+) target ([\w.]+) references nonexistent attribute", raised["message"])
    if gone:
        return hint_of("ex06.graph_still_reads_deleted_module", node=gone.group(1), target=gone.group(2))
    erased = re.match(r"Tried to erase Node (\w+) but it still had \d+ users", raised["message"])
    forks = [n for n in gm.graph.nodes if erased and n.name == erased.group(1) and len(n.users) > 1]
    if forks and isinstance(_module_of(gm, forks[0]), nn.Linear):
        return hint_of("ex06.has_users_chain_ends_at", name=forks[0].name, users=len(forks[0].users))
    keyword = [n for n in gm.graph.nodes if isinstance(_module_of(gm, n), nn.Linear) and not n.args]
    if raised["__raised__"] == "IndexError" and keyword and ".args[" in (raised.get("where") or ".args["):
        return hint_of("ex06.linear_called_input_keyword_input", target=keyword[0].target)
    return None
