"""The judges of ex14_exported_programs: compare a result's evidence with the reference and say what differs.

The references are the judge's own: the eager model's numbers, and the judge's own export (and decomposition)
of the case's model, cached per process.
"""
from __future__ import annotations

import torch

from autograder.checks.randmodels import current_salt
from autograder.checks.hints import hint_of
from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import expect
from autograder.checks.ex14_exported_programs.cases import KEEPS, _fqn
from autograder.checks.ex14_exported_programs.evidence import histogram
from autograder.checks.ex14_exported_programs.models import model, probes, program, submodule_io
from fxcourse_instructor.diffs import dict_diff

_CACHE: dict = {}


STAND_IN = "_empty_nn_module_stack"   # the key (and name) torch gives a node it adds outside any module


def innermost(node) -> str:
    """The qualified name of the innermost module a node came from: the last entry of its nn_module_stack, leaving
    out torch's stand-in entry (a sym_size node's only one): "" where none is left."""
    stack = {k: v for k, v in (node.meta.get("nn_module_stack") or {}).items() if not k.startswith(STAND_IN)}
    return list(stack.values())[-1][0] if stack else ""


def _reference_modules(data: dict) -> dict:
    key = ("modules", data["model"], data["strict"], data["dynamic"], data["seed"], data["decompose"], current_salt())
    if key not in _CACHE:
        ep = program(data["model"], strict=data["strict"], dynamic=data["dynamic"], seed=data["seed"])
        if data["decompose"]:
            ep = ep.run_decompositions()
        _CACHE[key] = ({n.name: innermost(n) for n in ep.graph.nodes if n.op == "call_function"},
                       {n.name: n.meta.get("nn_module_stack") or {} for n in ep.graph.nodes})
    return _CACHE[key]


def _eager(data: dict) -> list:
    m, _ = model(data["model"], data.get("seed", 0))
    with torch.no_grad():
        return [m(x) for x in probes(data["model"], data.get("seed", 0), data["dynamic"])]


def _expect_outputs(got: list, data: dict, what: str, hint: str) -> None:
    for x, out, ref in zip(probes(data["model"], data.get("seed", 0), data["dynamic"]), got, _eager(data)):
        batch = f"on a batch of {x.shape[0]}"
        if isinstance(out, str):
            dynamic = data["dynamic"] and x.shape[0] != probes(data["model"], data.get("seed", 0))[0].shape[0]
            raise CheckFailed(f"{what} raised {out} {batch}",
                              "ex14.keep_program_s_dynamic_batch" if dynamic else hint)
        expect(isinstance(out, torch.Tensor) and out.shape == ref.shape
               and torch.allclose(out, ref, rtol=1e-5, atol=1e-5),
               f"{what} {batch} computes something else than the model", hint)


# ----------------------------------------------------------------------------------------- save_and_reload

def _save_judge(case: Case, ev: dict) -> None:
    data = case.data
    if not ev["file"]:
        others = f" (the folder holds {', '.join(ev['others'])})" if ev["others"] else ""
        raise CheckFailed(f"after save_and_reload there is no file at the path it was given, "
                          f"{data['file']!r}{others}",
                          "ex14.write_path_you_are_given")
    if ev["loads"] != "ok":
        raise CheckFailed(f"the file at the path is no exported program torch.export.load can read: {ev['loads']}",
                          "ex14.write_torch_export_save_ep")
    expect(not ev["same"], "save_and_reload returned the very program it was given, not the one read back",
           "ex14.return_what_torch_export_load")
    key = ("histogram", data["model"], data["strict"], data["dynamic"], data["seed"], current_salt())
    if key not in _CACHE:
        _CACHE[key] = histogram(program(data["model"], strict=data["strict"], dynamic=data["dynamic"],
                                        seed=data["seed"]).graph)
    expected = _CACHE[key]
    expect(not ev["unsaved"], "the program returned carries node meta that no file holds (the case put it on ep's "
           "nodes): it is a copy of ep, not the program torch.export.load read back",
           "ex14.return_what_torch_export_load")
    if ev["histogram"] != expected:
        extra = sorted(set(ev["histogram"]) - set(expected))
        raise CheckFailed("the program read back calls other operators than the one saved"
                          + (f": {', '.join(extra[:3])} appeared" if extra else ""),
                          "ex14.save_ep_no_run_decompositions")
    _expect_outputs(ev["outputs"], data, "the program read back",
                    "ex14.save_ep_itself_return_torch")


# ----------------------------------------------------------------------------------------- module_of_nodes

def _diff(got: dict, expected: dict) -> str:
    return dict_diff(got, expected, 3, "node {key!r} maps to {got!r}, expected {expected!r}")


def _module_judge(case: Case, got: dict) -> None:
    expected, stacks = _reference_modules(case.data)
    if got == expected:
        return
    bad = [k for k, v in got.items() if isinstance(v, dict)]
    if bad:
        k = bad[0]
        raise CheckFailed(f"node {k!r} maps to a {got[k]['type']} ({got[k]['repr']}), expected a module's qualified "
                          "name, a str", "ex14.each_entry_nn_module_stack")
    msg = f"the mapping differs: {_diff(got, expected)}"
    extra = [k for k in got if k not in expected]
    wrong = [k for k in expected if k in got and got[k] != expected[k]]
    if extra and all(k in stacks for k in extra):
        raise CheckFailed(msg, "ex14.call_function_nodes_only_placeholders")
    if extra:
        raise CheckFailed(msg, "ex14.keys_are_names_nodes_ep")
    if [k for k in expected if k not in got]:
        if all(expected[k] == "" for k in expected if k not in got):
            raise CheckFailed(msg, "ex14.node_root_module_maps_innermost")
        raise CheckFailed(msg, "ex14.every_call_function_node_ep")
    k = wrong[0]
    keys, values = list(stacks[k]), [v[0] for v in stacks[k].values()]
    g = got[k]
    if expected[k] == "" and isinstance(g, str) and g.startswith(STAND_IN):
        hint = hint_of("ex14.stand_in_entry_is_no_module", node=k, got=g)
    elif g in keys and g not in values:
        hint = "ex14.stack_s_keys_are_torch"
    elif g in values[:-1] and (len(g) > len(values[-1]) or g.count(".") > values[-1].count(".")):
        hint = hint_of("ex14.innermost_last_entry_not_longest", node=k, got=g, last=values[-1])
    elif g in values[:-1]:
        hint = "ex14.last_entry_nn_module_stack"
    elif values and g == values[-1].split(".")[-1] and g != values[-1]:
        hint = "ex14.whole_qualified_name_parents_path"
    elif values and g == str(list(stacks[k].values())[-1][1]):
        hint = "ex14.qualified_name_element_0_value"
    else:
        hint = "ex14.read_node_meta_nn_module"
    raise CheckFailed(msg, hint)


# ----------------------------------------------------------------------------------------- decompose_except

def _reference_decomposed(data: dict) -> dict:
    key = ("decomposed", data["model"], data["keep"], data["dynamic"], data["strict"], current_salt())
    if key not in _CACHE:
        from torch.export import default_decompositions
        table = default_decompositions()
        for op in KEEPS[data["keep"]]:
            table.pop(op, None)
        ep = program(data["model"], strict=data["strict"], dynamic=data["dynamic"])
        _CACHE[key] = (histogram(ep.graph), histogram(ep.run_decompositions(table).graph))
    return _CACHE[key]


def _decompose_judge(case: Case, ev: dict) -> None:
    data = case.data
    before, expected = _reference_decomposed(data)
    keep = {str(op) for op in KEEPS[data["keep"]]}
    got = ev["histogram"]
    expect(ev["argument"] == before, "the program passed in changed: decompose_except must leave ep as it is",
           "ex14.run_decompositions_returns_new_program")
    if got != expected:
        kept = sorted(t for t in got if t in keep)
        lost = sorted(t for t in keep if t in expected and t not in got)
        undecomposed = sorted(t for t in got if t not in expected and t in before)
        if got == before:
            hint = "ex14.nothing_was_decomposed_ep_run"
        elif lost:
            hint = hint_of("ex14.keep_must_stay_take_torch", op=lost[0])
        elif undecomposed:
            hint = hint_of("ex14.not_keep_yet_stays_keep", op=undecomposed[0])
        else:
            hint = "ex14.ep_run_decompositions_table_where"
        raise CheckFailed(f"the decomposed program calls {_diff(got, expected).replace('node ', 'operator ')}"
                          + (f" (kept: {', '.join(kept)})" if kept else ""), hint)
    _expect_outputs(ev["outputs"], data, "the decomposed program", "ex14.decompositions_compute_same_numbers_change")
    expect(not ev["same"], "decompose_except returned ep itself: the new program is another object, even where "
           "nothing is left to decompose", "ex14.run_decompositions_returns_new_program")


# ----------------------------------------------------------------------------------------- unflatten_module

def _unflatten_judge(case: Case, ev: dict) -> None:
    data = case.data
    fqn = _fqn(data["model"], data["fqn"])
    io = submodule_io(data["model"], fqn, probes(data["model"], 0, data["dynamic"]))
    for (inputs, ref), got in zip(io, ev["outputs"]):
        shapes = ", ".join(str(tuple(a.shape)) for a in inputs)
        what = f"the module returned, called on the inputs {fqn!r} receives ({shapes})"
        if isinstance(got, str):
            if ev["type"] == "UnflattenedModule":
                hint = hint_of("ex14.whole_unflattened_program_return_submodule_2", fqn=fqn)
            elif "forward" in got and "missing" in got:
                hint = "ex14.ep_module_one_flat_graph"
            else:
                hint = "ex14.torch_export_unflatten_ep_get"
            raise CheckFailed(f"{what} raised {got}", hint)
        if got.shape != ref.shape or not torch.allclose(got, ref, rtol=1e-5, atol=1e-5):
            namesakes = [n for n, _ in model(data["model"])[0].named_modules()
                         if n.startswith(fqn) and n != fqn and not n.startswith(fqn + ".")]
            hint = (hint_of("ex14.whole_unflattened_program_return_submodule", fqn=fqn)
                    if ev["type"] == "UnflattenedModule" else
                    hint_of("ex14.name_only_begins_with_fqn", fqn=fqn, other=namesakes[0]) if namesakes else
                    hint_of("ex14.submodule_itself_unflatten_ep_get", fqn=fqn))
            raise CheckFailed(f"{what} computes something else than the model's {fqn!r}", hint)
    expect(ev.get("graph", True), f"the module returned ({ev['type']}) has no graph of its own (no fx.Graph as its "
           ".graph): the unflattened program's submodule has one", hint_of("ex14.submodule_itself_unflatten_ep_get",
                                                                           fqn=fqn))
