"""The judges of ex05_inserting: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

import math

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from autograder.checks.randmodels import manual_seed
from autograder.checks.hints import hint_of
from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import (
    deleted_while_called_hint, describe_graph, expect, expect_close, expect_fresh, expect_lint, qualified,
)
from fxcourse_instructor.ex05_inserting.references import (
    _meta_shapes, _reference_outputs, _stale_flops, reference_insert_after, reference_linear_flops, reference_shapes,
)


# Kept for the mutants of this exercise, which test it: the framework always judges expected errors.
EXPECTED_ERRORS = True
DROPOUT_MODULES = (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout)
DROPOUT_FUNCTIONS = (F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout, F.feature_alpha_dropout,
                     torch.dropout)
DROPOUT_FUNCTION_NAMES = frozenset(qualified(f) for f in DROPOUT_FUNCTIONS)
RECOMPILE_HINT = "shared.call_gm_recompile_after_changing"


def _judge_numbers(ev: dict, reference: list) -> None:
    """The outputs against the reference. Called after the structure and freshness checks, so a difference here
    has no known cause: the message says what differs, and guesses nothing."""
    run = ev["run"]
    if "error" in run:
        raise CheckFailed(f"the returned GraphModule raised {run['error']} when run",
                          "ex05.run_graph_lint_print_gm")
    got = run["outputs"]
    expect(len(got) == len(reference), f"the returned GraphModule gives {len(got)} outputs, expected "
                                        f"{len(reference)}")
    for i, (g, e) in enumerate(zip(got, reference)):
        expect_close(g, e, f"output {i} on a seeded input", rtol=1e-5, atol=1e-6)


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
    return bool(_positions(arg, name, ""))


def _positions(arg, name: str, path: str) -> list[str]:
    """Where the described args/kwargs `arg` read node `name`: "args[1]", "args[0][0]", "kwargs['other']"."""
    if isinstance(arg, dict) and set(arg) == {"node"}:
        return [path] if arg["node"] == name else []
    if isinstance(arg, list):
        return [p for i, a in enumerate(arg) for p in _positions(a, name, f"{path}[{i}]")]
    if isinstance(arg, dict):
        return [p for k, v in arg.items() for p in _positions(v, name, f"{path}[{k!r}]")]
    return []


def _uses_of(node: dict, name: str) -> list[str]:
    return _positions(node["args"], name, "args") + _positions(node["kwargs"], name, "kwargs")


def _top_level(position: str) -> bool:
    """A plain positional argument (args[i]), not one inside a list or tuple, nor a keyword argument."""
    return position.startswith("args[") and position.count("[") == 1


SELF_USE_HINT = "ex05.after_inserting_consumer_node_node"
REWIRE_ALL = "node.replace_all_uses_with(new, delete_user_cb=lambda user: user is not new)"


def _stale_uses(before: list[dict], got: list[dict], name: str, new: str) -> None:
    """Fail when a former user of `name` still reads it, with the hint the pattern of rewired and stale uses
    confirms: users skipped while others were rewired, uses inside lists or keywords missed while plain
    arguments were rewired, one of two uses in a node missed, nothing rewired at all; else no diagnosis."""
    mine = _index(got)
    users = [(n["name"], _uses_of(mine[n["name"]], name), _uses_of(mine[n["name"]], new))
             for n in before if n["name"] != name and _reads(n["args"], name) | _reads(n["kwargs"], name)
             and n["name"] in mine]
    stale = [(u, old, fresh) for u, old, fresh in users if old]
    if not stale:
        return
    rewired = [(u, fresh) for u, old, fresh in users if fresh]
    skipped = [(u, old) for u, old, fresh in stale if not fresh and any(_top_level(p) for p in old)]
    nested = [(u, old) for u, old, fresh in stale if fresh and not any(_top_level(p) for p in old)]
    twice = [(u, old) for u, old, fresh in stale if fresh and any(_top_level(p) for p in old)]
    top_rewired = any(_top_level(p) for _, fresh in rewired for p in fresh)
    if not rewired:
        (user, where), hint = (stale[0][0], stale[0][1]), (
            hint_of("ex05.nothing_reads_new_node_make", new=new, name=name))
    elif skipped and any(not old for u, old, fresh in users):
        (user, where), hint = skipped[0], "ex05.rewire_every_user_node_not"
    elif nested and top_rewired:
        (user, where), hint = nested[0], "ex05.uses_inside_lists_tuples_keyword"
    elif twice:
        (user, where), hint = twice[0], (
            hint_of("ex05.node_reads_twice_must_read", name=name))
    else:
        (user, where), hint = (stale[0][0], stale[0][1]), "ex05.expected_every_use_rewired_node"
    others = [u for u, _, _ in stale if u != user]
    raise CheckFailed(f"node '{user}' still reads '{name}' ({', '.join(where)})"
                      + (f", and so do {', '.join(repr(o) for o in others)}" if others else "")
                      + f"; every former user of '{name}' must read '{new}'", hint)


def _judge_nothing_added(ev: dict, before: list[dict], name: str) -> None:
    """No node was added: say what the evidence shows happened to it (made then removed, made in gm while
    another GraphModule was returned, never made)."""
    old = {n["name"] for n in before}
    present = {n["name"] for n in ev["graph"]}
    gone = [n for n in ev.get("names_made", []) if n not in old and n not in present]
    grew = [n for n in ev.get("given_nodes", []) if n not in old]
    if gone:
        raise CheckFailed(f"no node was added to the returned graph: node(s) {', '.join(repr(g) for g in gone)} "
                          "were created in it and are gone again (erased, or removed by eliminate_dead_code "
                          "because nothing read them)",
                          hint_of("ex05.after_creating_node_make_users", name=name))
    if grew and not ev.get("same_gm", True):
        raise CheckFailed(f"the GraphModule you were given has the new node(s) {', '.join(repr(g) for g in grew)}, "
                          "but the one returned is another GraphModule, without it",
                          "ex05.return_gm_graphmodule_whose_graph")
    raise CheckFailed(f"no node was added to the graph (it still has {len(ev['graph'])} nodes), and none was "
                      "created in it",
                      "ex05.graph_inserting_after_node_only")


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
    expect(not removed, f"no node is named {', '.join(repr(n['name']) for n in removed)} any more; insert_after "
                        "only adds one node", "ex05.keep_original_nodes_only_add")
    if not added:
        _judge_nothing_added(ev, before, name)
    expect(len(added) == 1, f"{len(added)} nodes were added ({', '.join(n['name'] for n in added)}), expected one",
           "ex05.add_exactly_one_call_function")
    new = added[0]
    expect(new["op"] == "call_function",
           f"the added node '{new['name']}' is {new['op']} {new['target']}, expected call_function {target}",
           "ex05.create_graph_call_function_fn")
    expect(new["target"] == target,
           f"the added node '{new['name']}' is call_function {new['target']}, expected call_function {target}",
           "ex05.new_node_s_target_fn")
    if new["args"] == [{"node": new["name"]}]:
        raise CheckFailed(f"the new node '{new['name']}' reads itself (args ({new['name']},)), so "
                          f"'{name}' feeds nothing", SELF_USE_HINT)
    expect(new["args"] == [{"node": name}] and not new["kwargs"],
           f"the new node '{new['name']}' has args {new['args']} kwargs {new['kwargs']}, expected exactly "
           f"('{name}',)", "ex05.new_node_s_only_argument")
    order = [n["name"] for n in got]
    expect(order.index(new["name"]) > order.index(name),
           f"the new node '{new['name']}' comes before '{name}' in the graph, expected right after it",
           "ex05.new_nodes_go_where_insertion")
    _stale_uses(before, got, name, new["name"])
    for n in before:
        if n["name"] == name:
            continue
        mine = _index(got)[n["name"]]
        want_args = _renamed(n["args"], name, new["name"])
        want_kwargs = _renamed(n["kwargs"], name, new["name"])
        expect(mine["op"] == n["op"] and mine["target"] == n["target"]
               and mine["args"] == want_args and mine["kwargs"] == want_kwargs,
               f"node '{n['name']}' changed: {mine['op']} {mine['target']} args {mine['args']}, expected "
               f"{n['op']} {n['target']} args {want_args}", "ex05.change_nothing_but_uses_node")
    users = _index(got)[name]["users"]
    expect(users == [new["name"]], f"'{name}' is read by {users}, expected only by the new node '{new['name']}'")
    if ev["lint"] is not None:
        early = [u for u in new["users"] if u in order and order.index(u) < order.index(new["name"])]
        expect(not early, f"graph.lint() fails: the new node '{new['name']}' comes after its user(s) "
                          f"{', '.join(repr(u) for u in early)} ({ev['lint']})",
               "ex05.create_node_inside_graph_inserting")
        expect_lint(ev)
    between = order[order.index(name) + 1:order.index(new["name"])]
    expect(not between, f"the new node '{new['name']}' comes after {', '.join(repr(b) for b in between)}, expected "
                        f"right after '{name}'", hint_of("ex05.insert_right_after_node", name=name))
    expect_fresh(ev["stale"], RECOMPILE_HINT)
    expect(new["name"] in ev["code"], f"gm.code does not call the new node '{new['name']}'")
    reference = reference_insert_after(gm, name, fn)
    _judge_numbers(ev, _reference_outputs(reference, inputs))


def _judge_raised(case: Case, ev) -> None:
    expected = case.data["raises"]
    if isinstance(ev, dict) and "__raised__" in ev:
        expect(expected in ev.get("bases", [ev["__raised__"]]),  # a subclass of the expected error is fine
               f"raised {ev['__raised__']} for an unknown node name, expected {expected}",
               hint_of("ex05.raise_node_name_when_no", expected=expected))
        expect(case.data["name"] in ev["message"],
               f"the {expected} message {ev['message']!r} does not name the missing node '{case.data['name']}'",
               hint_of("ex05.raise_node_name_so_learner", expected=expected))
        return
    raise CheckFailed(f"returned normally for the unknown node name '{case.data['name']}', expected {expected}",
                      hint_of("ex05.raise_node_name_when_no", expected=expected))


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


DROPOUT_DEFINITION = "ex05.dropout_module_instance_nn_dropout"
FUNCTIONAL_DEFINITION = ("call_function nodes whose target is F.dropout, torch.dropout, F.dropout1d/2d/3d, "
                         "F.alpha_dropout or F.feature_alpha_dropout")


def _kept_module(gm: fx.GraphModule, kept: list[str], removed: list[str]) -> CheckFailed:
    """The failure for dropout modules still called, with the hint the removed ones confirm: one of the same
    class was removed (so names decided), one of a base class was removed (so the type was compared exactly)."""
    cls = {t: type(gm.get_submodule(t)) for t in kept + removed}

    def twin_of(t):
        return next((r for r in removed if cls[r] is cls[t]), None)

    def base_of(t):
        return next((r for r in removed if issubclass(cls[t], cls[r]) and cls[t] is not cls[r]), None)

    t = next((k for k in kept if twin_of(k)), None) or next((k for k in kept if base_of(k)), None) or kept[0]
    twin, base = twin_of(t), base_of(t)
    what = f"the {cls[t].__name__} module '{t}' is still called"
    if twin:
        return CheckFailed(f"{what}, while '{twin}', also a {cls[t].__name__}, was removed: the two differ only in "
                           "their names", "ex05.find_dropout_modules_type_isinstance")
    if base:
        return CheckFailed(f"{what}, while '{base}', a {cls[base].__name__}, was removed: {cls[t].__name__} is a "
                           f"subclass of {cls[base].__name__}",
                           "ex05.subclasses_count_too_isinstance_module")
    gone = f" (removed: {', '.join(f'{r!r} ({cls[r].__name__})' for r in removed)})" if removed else \
        " (no dropout module was removed)"
    return CheckFailed(what + gone, DROPOUT_DEFINITION)


def _drop_judge(case: Case, ev) -> None:
    gm, = case.make()
    inputs = gm.example_inputs
    dropout_targets = {n.target: type(gm.get_submodule(n.target)).__name__
                       for n in gm.graph.nodes if n.op == "call_module" and _is_dropout_node(n, gm)}
    dropout_functions = {n.name: qualified(n.target) for n in gm.graph.nodes
                         if n.op == "call_function" and _is_dropout_node(n, gm)}
    other_targets = sorted({n.target for n in gm.graph.nodes if n.op == "call_module"} - set(dropout_targets))
    got = ev["graph"]
    kinds = {n.target: f"{type(m).__module__}.{type(m).__qualname__}" for n in gm.graph.nodes
             if n.op == "call_module" and n.target in dropout_targets for m in [gm.get_submodule(n.target)]}
    called = {n["target"] for n in got if n["op"] == "call_module"}
    still = {n["target"] for n in got if n["op"] == "call_module" and n["target"] in kinds
             and n.get("module_type") == kinds[n["target"]]}
    for n in got:
        if n["op"] == "call_module" and n["target"] in dropout_targets and (n.get("module_type") or "").endswith(
                "Identity"):
            raise CheckFailed(f"node '{n['name']}' calls '{n['target']}', now an nn.Identity: the dropout "
                              "node must be erased, not replaced",
                              "ex05.make_users_read_dropout_s")
    kept = [t for t in dropout_targets if t in still]
    if kept:
        raise _kept_module(gm, kept, [t for t in dropout_targets if t not in called])
    for n in got:
        if n["op"] == "call_module" and any(n.get("module_type", "") == f"{c.__module__}.{c.__qualname__}"
                                            for c in DROPOUT_MODULES):
            raise CheckFailed(f"node '{n['name']}' calls a dropout module '{n['target']}', which the original "
                              "graph did not call", DROPOUT_DEFINITION)
    present = {n["name"]: n for n in got}
    kept_fn = [n for n in got if n["op"] == "call_function" and n["target"] in DROPOUT_FUNCTION_NAMES]
    if kept_fn:
        n = kept_fn[0]
        removed = {dropout_functions[k] for k in dropout_functions if k not in present}
        if all(k["kwargs"].get("training") is False or (len(k["args"]) > 2 and k["args"][2] is False)
               for k in kept_fn):
            raise CheckFailed(f"node '{n['name']}' still calls {n['target']} (with training=False)",
                              "ex05.dropout_call_goes_even_training")
        if not removed:
            raise CheckFailed(f"node '{n['name']}' still calls {n['target']} (no dropout function was removed)",
                              "ex05.functional_dropout_counts_too_call")
        raise CheckFailed(f"node '{n['name']}' still calls {n['target']}, while the calls of "
                          f"{', '.join(sorted(removed))} were removed",
                          hint_of("ex05.every_dropout_function_counts_too", function=n['target'].rsplit('.', 1)[-1]))
    reference = describe_graph(reference_remove_dropout(case.make()[0]))
    ref_keys = sorted((n["op"], n["target"]) for n in reference)
    got_keys = sorted((n["op"], n["target"]) for n in got)
    if got_keys != ref_keys:
        extra = [f"{op} {t}" for op, t in got_keys if (op, t) not in ref_keys]
        missing = [f"{op} {t}" for op, t in ref_keys if (op, t) not in got_keys]
        unread = [n.name for n in gm.graph.nodes if not n.users and n.op != "output" and not _is_dropout_node(n, gm)
                  and f"{n.op} {qualified(n.target)}" in missing]
        raise CheckFailed("the graph has other nodes than the original minus its dropouts: "
                          + (f"unexpected {', '.join(extra)}" if extra else "")
                          + ("; " if extra and missing else "")
                          + (f"missing {', '.join(missing)}" if missing else ""),
                          hint_of("ex05.unread_nodes_stay", names=", ".join(repr(u) for u in unread))
                          if missing and not extra and len(unread) == len(missing) else
                          "ex05.expected_every_node_original_graph")
    expect_lint(ev)
    leftovers = [name for name in dropout_targets if name in ev["modules"]]
    inside = {name: t for name, _ in gm.named_modules() for t in sorted(called) if name.startswith(t + ".")}
    if not leftovers:  # a dropout inside a module the graph calls belongs to that module: it stays
        leftovers = [name for name, kind in ev["modules"].items() if name not in inside
                     and any(kind == f"{c.__module__}.{c.__qualname__}" for c in DROPOUT_MODULES)]
    expect(not leftovers, f"the dropout submodule(s) {', '.join(repr(n) for n in leftovers)} are still registered "
                          "on the returned GraphModule",
           "ex05.after_erasing_nodes_call_gm")
    lost = [t for t in other_targets if t not in ev["modules"]]
    expect(not lost, f"submodule(s) {', '.join(repr(t) for t in lost)} were deleted but the graph still calls them",
           "ex05.delete_only_dropout_submodules_delete")
    gutted = [name for name in inside if name not in ev["modules"]]
    if gutted:
        owner = inside[gutted[0]]
        raise CheckFailed(f"submodule(s) {', '.join(repr(g) for g in gutted)} were deleted, but the graph still calls "
                          f"'{owner}', whose forward uses them",
                          hint_of("ex05.submodules_of_called_module_stay", owner=owner))
    expect_fresh(ev["stale"], RECOMPILE_HINT)
    manual_seed(case.data["seed"])
    eager = case.data["make"]().eval()
    _judge_numbers(ev, _reference_outputs(eager, inputs))


def _values_by_name(gm: fx.GraphModule, *inputs: torch.Tensor) -> dict[str, object]:
    interp = fx.Interpreter(gm, garbage_collect_values=False)
    with torch.no_grad():
        interp.run(*inputs)
    return {n.name: v for n, v in interp.env.items()}


def _shape_judge(case: Case, ev) -> None:
    gm, *inputs = case.make()
    stale = _meta_shapes(gm)   # before the reference runs ShapeProp over them
    expected = reference_shapes(gm, *inputs)
    values = _values_by_name(gm, *inputs)
    nodes = {n.name: n for n in gm.graph.nodes}
    got = ev["shapes"]
    extra = [k for k in got if k not in expected]
    missing = [k for k in expected if k not in got]
    if "output" in extra:
        raise CheckFailed("the output node is included; it is never recorded (its value is another node's)",
                          "ex05.skip_node_whose_op_output")
    unknown = [k for k in extra if k not in nodes]
    if unknown:
        targets = {str(n.target): n.name for n in gm.graph.nodes}
        as_target = [k for k in unknown if k in targets and targets[k] != k]
        raise CheckFailed(f"key(s) {', '.join(repr(k) for k in unknown)} are not node names of the graph"
                          + (f"; {as_target[0]!r} is the target of node '{targets[as_target[0]]}'" if as_target
                             else ""),
                          "ex05.key_dict_node_name_node"
                          if as_target else "ex05.key_dict_node_name")
    if extra:
        k = extra[0]
        raise CheckFailed(f"node '{k}' is included, but its value is of type {type(values.get(k)).__name__}, "
                          "not a tensor", "ex05.record_only_nodes_whose_value")
    if missing:
        ops = {nodes[k].op for k in missing}
        buffers = _buffer_reads(gm)
        hint = ("ex05.placeholders_are_tensor_valued_nodes" if ops == {"placeholder"} else
                hint_of("ex05.buffer_is_tensor_too", targets=", ".join(map(repr, buffers.values())))
                if all(k in buffers for k in missing) else
                "ex05.record_every_tensor_valued_node")
        raise CheckFailed(f"missing node(s) {', '.join(repr(k) for k in missing)} "
                          f"({', '.join(sorted(ops))})", hint)
    for name, shape in expected.items():
        if got[name] is None:
            raise CheckFailed(f"node '{name}': the value is a {ev['kinds'][name]}, expected a tuple of ints",
                              "ex05.convert_tuple_tensor_shape")
        if ev["kinds"][name] == "list":
            raise CheckFailed(f"node '{name}': the shape is a list, expected a tuple of ints",
                              "ex05.convert_tuple_tensor_shape")
        final = values.get(name)
        expect(tuple(got[name]) == shape, f"node '{name}': shape {tuple(got[name])}, expected {shape}, the "
                                          "shape of its value when gm runs on the inputs given",
               "ex05.run_gm_on_the_inputs_given" if stale.get(name) == tuple(got[name]) else
               "ex05.shape_when_the_node_ran" if isinstance(final, torch.Tensor)
               and tuple(final.shape) == tuple(got[name]) else None)


def _buffer_reads(gm: fx.GraphModule) -> dict[str, str]:
    """The get_attr nodes that read a buffer (a tensor, but no nn.Parameter): node name -> target."""
    buffers = {name for name, _ in gm.named_buffers()}
    return {n.name: n.target for n in gm.graph.nodes if n.op == "get_attr" and n.target in buffers}


def _flops_variants(gm: fx.GraphModule, *inputs: torch.Tensor) -> dict[str, int]:
    """What the usual wrong answers compute, to name the mistake in the message."""
    out: dict[str, int | None] = {"no2": 0, "first_dim": 0, "graph_input": 0, "unique": 0, "functional": 0,
                                  "exact": 0, "inner": 0}
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

    def hook(module, args):
        if args and isinstance(args[0], torch.Tensor):
            out["inner"] += 2 * math.prod(args[0].shape[:-1]) * module.in_features * module.out_features

    with torch.no_grad():
        Spy(gm).run(*inputs)
        handles = [m.register_forward_pre_hook(hook) for m in gm.modules() if isinstance(m, nn.Linear)]
        try:
            gm(*inputs)   # every Linear's forward, those inside a module the graph calls as one node too
        finally:
            for h in handles:
                h.remove()
    for module, shape in calls:
        io = module.in_features * module.out_features
        out["exact"] += 2 * math.prod(shape[:-1]) * io if type(module) is nn.Linear else 0
        out["no2"] += math.prod(shape[:-1]) * io
        out["first_dim"] += 2 * (shape[0] if len(shape) > 1 else 1) * io
        out["graph_input"] += 2 * lead * io
    once = {id(m): m for m, _ in calls}
    # counting modules instead of calls (with the rows of the model's input) differs from counting calls with those
    # rows only when a Linear is called twice; else it is the "graph_input" mistake, not this one
    out["unique"] = (sum(2 * lead * m.in_features * m.out_features for m in once.values())
                     if len(once) < len(calls) else None)
    out["functional"] = reference_linear_flops(gm, *inputs) + sum(2 * r * i * o for r, i, o in fcalls)
    return out


def _flops_judge(case: Case, got) -> None:
    gm, *inputs = case.make()
    stale = _meta_shapes(gm)   # before the reference runs ShapeProp over them
    expected = reference_linear_flops(gm, *inputs)
    if got == expected:
        return
    if stale and got == _stale_flops(gm, stale):
        raise CheckFailed(f"counted {got} FLOPs, expected {expected}: the count of the shapes node.meta held "
                          "before the call", "ex05.run_gm_on_the_inputs_given")
    variants = _flops_variants(*case.make())
    called = {n.target for n in gm.graph.nodes if n.op == "call_module"}
    subclass = next((f"'{t}' is a {type(m).__name__}" for t in sorted(called) for m in [gm.get_submodule(t)]
                     if isinstance(m, nn.Linear) and type(m) is not nn.Linear), "")
    owner = next((t for t in sorted(called) for m in [gm.get_submodule(t)] if not isinstance(m, nn.Linear)
                  and any(isinstance(c, nn.Linear) for c in m.modules())), "")
    hints = [
        ("no2", "ex05.each_multiply_add_counts_2"),
        ("graph_input", "ex05.use_shape_tensor_each_linear"),
        ("unique", "ex05.count_every_nn_linear_call"),
        ("functional", "ex05.only_call_module_nodes_whose"),
        ("first_dim", "ex05.rows_product_all_leading_dimensions"),
        ("exact", hint_of("ex05.linear_subclasses_count_too", which=subclass)),
        ("inner", hint_of("ex05.linears_inside_called_module", owner=owner)),
    ]
    # a mistake is named only when the count is what that mistake gives and what no other listed mistake gives
    matches = [h for key, h in hints if variants[key] == got and variants[key] != expected]
    if len(matches) == 1:
        raise CheckFailed(f"counted {got} FLOPs, expected {expected}", matches[0])
    deep = any(x.dim() > 3 for x in inputs)   # rows from some leading dimensions only shows on such inputs
    raise CheckFailed(f"counted {got} FLOPs, expected {expected}: the sum of 2 * rows * in_features * "
                      "out_features over the nn.Linear calls, rows from the input each call receives",
                      "ex05.rows_product_all_leading_dimensions" if deep else None)


def _insert_raise(case: Case, raised: dict) -> str | None:
    """A KeyError for a node name the graph has: the answer looked the node up by something else."""
    if raised["__raised__"] != "KeyError":
        return None
    gm, name, _ = case.make()
    if isinstance(name, str) and repr(name) in raised["message"] and any(n.name == name for n in gm.graph.nodes):
        return hint_of("ex05.node_named_exists_look_up", name=name)
    return None


def _drop_raise(case: Case, raised: dict) -> str | None:
    return deleted_while_called_hint(case.make()[0], raised["message"])


def _shape_raise(case: Case, raised: dict) -> str | None:
    """A raise while reading a buffer as a parameter (gm.get_parameter, or a dict of named_parameters)."""
    buffers = _buffer_reads(case.make()[0])
    if buffers and ("is not an nn.Parameter" in raised["message"]
                    or any(repr(t) in raised["message"] for t in buffers.values())):
        return hint_of("ex05.buffer_is_tensor_too", targets=", ".join(map(repr, buffers.values())))
    return None
