"""The judges of ex09_dynamo: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

from collections import Counter
from typing import Callable

import torch

from autograder.checks.randmodels import current_salt
from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import expect
from autograder.checks.ex09_dynamo.models import PROBE, _recording_backend, _reset
from autograder.checks.ex09_dynamo.evidence import _graph_summary


_CACHE: dict = {}


def _reference_capture(label: str, make: Callable[[], tuple]) -> list[dict]:
    """What a recording backend receives when the case's function is compiled and called once, from a reset."""
    key = ("capture", label, current_salt())
    if key not in _CACHE:
        fn, *inputs = make()
        _reset()
        graphs: list = []
        with torch.no_grad():
            torch.compile(fn, backend=_recording_backend(graphs))(*inputs)
        _reset()
        _CACHE[key] = [_graph_summary(g) for g in graphs]
    return _CACHE[key]


def _reference_breaks(label: str, make: Callable[[], tuple]) -> tuple[int, int, int, int]:
    """(graph breaks, graphs, entries of break_reasons, kinds of reason among them) as torch._dynamo.explain
    reports them, from a reset."""
    import torch._dynamo
    key = ("explain", label, current_salt())
    if key not in _CACHE:
        fn, *inputs = make()
        _reset()
        with torch.no_grad():
            report = torch._dynamo.explain(fn)(*inputs)
        _reset()
        kinds = {str(r.reason).splitlines()[0] for r in report.break_reasons}
        _CACHE[key] = (int(report.graph_break_count), int(report.graph_count), len(report.break_reasons), len(kinds))
    return _CACHE[key]


def _compiles_whole(label: str, make: Callable[[], tuple]) -> bool:
    """Whether torch.compile(fn, fullgraph=True) compiles and runs the case's function without an error (it
    captures .item() in one graph, though the defaults break there)."""
    key = ("fullgraph", label, current_salt())
    if key not in _CACHE:
        fn, *inputs = make()
        _reset()
        try:
            with torch.no_grad():
                torch.compile(fn, backend="eager", fullgraph=True)(*inputs)
            _CACHE[key] = True
        except Exception:
            _CACHE[key] = False
        _reset()
    return _CACHE[key]


LAZY = ("torch.compile is lazy: nothing is captured until the function it returned is called; call "
        "compiled(*inputs) once (calling fn itself runs it eagerly, without dynamo), and give it your backend: "
        "torch.compile(fn, backend=your_backend)")


RESET = ("start with torch._dynamo.reset(): dynamo keeps compiled code per function, and once a function has "
         "been compiled torch._dynamo.config.recompile_limit times it runs eagerly and calls no backend at all")


def _flat(graphs: list[dict]) -> list[str]:
    return [c for g in graphs for c in g.get("calls", [])]


def _capture_judge(case: Case, ev: dict) -> None:
    expected = _reference_capture(case.label, case.data.get("cold", case.make))
    got = ev["graphs"]
    for i, g in enumerate(got):
        expect("type" not in g, f"item {i} of the list is a {g.get('type')}, expected an fx.GraphModule",
               "append gm, the first argument dynamo passes to the backend (the second is the example inputs)")
    if not got and expected:
        raise CheckFailed(f"no graph captured; dynamo hands a backend {len(expected)} graph(s) for this function",
                          RESET if case.data.get("warm") else LAZY)
    first_only = case.data.get("first_only")
    if first_only is not None and got != expected and got == _reference_capture(case.label + " (first input only)",
                                                                              first_only):
        raise CheckFailed(f"returned the {len(got)} graph(s) of fn called on its first input alone; called on all "
                          f"{len(case.make()) - 1} inputs, it gives dynamo {len(expected)} graph(s) to hand over",
                          "pass every input on: compiled(*inputs), not compiled(inputs[0])")
    if len(got) < len(expected) and got and Counter(_flat(expected)) <= Counter(_flat(got)):
        raise CheckFailed(f"returned {len(got)} graph(s) holding every call of the {len(expected)} graphs dynamo "
                          "hands the backend with torch.compile's defaults: the graph breaks were compiled away",
                          "compile with torch.compile's defaults, without fullgraph=True: dynamo then splits the "
                          "function at each break (fullgraph=True captures .item() and the like in one graph, or "
                          "refuses to compile)")
    if len(got) < len(expected) and got and all(g in expected for g in got):
        raise CheckFailed(f"returned {len(got)} of the {len(expected)} graphs dynamo hands the backend for this "
                          "function (a graph break makes several)",
                          "keep every graph: append each gm the backend receives to a list (a variable that is "
                          "overwritten keeps only the last), and return them all in the order they came")
    if len(got) != len(expected):
        more = len(got) < len(expected)
        raise CheckFailed(
            f"returned {len(got)} graph(s), but dynamo hands the backend {len(expected)} for this function "
            f"{' (graph breaks make several)' if len(got) < len(expected) else ''}",
            "keep every graph: append each gm the backend receives, and return them all in the order they came "
            "(and compile without fullgraph=True, which may squeeze or refuse what dynamo would split)" if more else "call the compiled function once, and return only the graphs of that call")
    for i, (g, e) in enumerate(zip(got, expected)):
        if g != e:
            order = [x for x in expected if x == g]
            if any(c.startswith("call_function torch.ops.aten.") for c in g["calls"]) and \
                    not any(c.startswith("call_function torch.ops.aten.") for c in e["calls"]):
                raise CheckFailed(f"graph {i + 1} of {len(expected)} is an ATen graph (it calls "
                                  f"{g['calls'][:3]}...), not the graph dynamo hands the backend "
                                  f"(which calls {e['calls'][:3]}...)",
                                  "keep the gm dynamo hands your backend itself: a backend wrapped in aot_autograd "
                                  "(or a graph retraced with make_fx) receives AOTAutograd's ATen graphs instead")
            raise CheckFailed(
                f"graph {i + 1} of {len(expected)} has {g['placeholders']} placeholders and calls "
                f"{g['calls'][:6]}{'...' if len(g['calls']) > 6 else ''}, expected {e['placeholders']} placeholders "
                f"and {e['calls'][:6]}{'...' if len(e['calls']) > 6 else ''}",
                "return the graphs in the order the backend received them" if order else
                "return each graph exactly as dynamo handed it to the backend (do not retrace or edit it), and "
                "compile with torch.compile's defaults (dynamic shapes left to dynamo)")


def _breaks_judge(case: Case, got: int) -> None:
    breaks, graphs, reasons, kinds = _reference_breaks(case.label, case.make)
    if got == breaks:
        return
    first_only = case.data.get("first_only")
    if first_only is not None and got == _reference_breaks(case.label + " (first input only)", first_only)[0]:
        hint = (f"that is the count for fn called on its first input alone: pass every input on, "
                f"explain(fn)(*inputs) (fn takes {len(case.make()) - 1} here)")
    elif got == kinds and kinds != reasons:
        hint = ("that is the number of different kinds of break (distinct reasons): two breaks of the same kind, "
                "such as two .item() calls, are two breaks; return explain(fn)(*inputs).graph_break_count")
    elif got == reasons:
        hint = ("that is the number of entries of explain's break_reasons" + (" (and of its kinds)" if kinds == reasons
                                                                            else "") +
                ", which lists only the breaks dynamo records a reason for (a break inside a loop may have none, a "
                "break at the very end one that starts no graph): return explain(fn)(*inputs).graph_break_count")
    elif got > graphs:
        hint = ("more breaks than this one compile has graphs: the number includes other compiles (a counter "
                "such as torch._dynamo.utils.counters keeps counting across them, and reset() does not clear it); "
                "count this call only: torch._dynamo.explain(fn)(*inputs).graph_break_count")
    elif got == graphs and graphs != breaks:
        hint = ("that is the number of graphs: each graph break ends one graph and starts another; "
                "torch._dynamo.explain(fn)(*inputs) reports both, graph_count and graph_break_count")
    elif got == 0 and _compiles_whole(case.label, case.make):
        hint = ("0 where dynamo breaks the graph: that a compile succeeds tells nothing (with fullgraph=True "
                "torch.compile captures this function's breaks in one graph); count the breaks torch.compile's "
                "defaults make: torch._dynamo.explain(fn)(*inputs).graph_break_count")
    elif got < breaks:
        hint = ("count every break, not whether there is one: torch._dynamo.explain(fn)(*inputs) reports "
                "graph_break_count")
    else:
        hint = "torch._dynamo.explain(fn)(*inputs).graph_break_count counts them"
    raise CheckFailed(f"returned {got}, but compiling this function for these inputs causes {breaks} graph "
                      f"break(s) ({graphs} graph(s))", hint)


def _pass_judge(case: Case, ev: dict) -> None:
    model, _ = case.make()
    _reset()
    reference = case.data["factory"]("sigmoid").to(case.data["dtype"]).eval()
    reference.load_state_dict(model.state_dict())
    inputs = getattr(model, PROBE)
    if isinstance(ev["outputs"], str):
        raised = ev["outputs"]
        if "did not return callable" in raised:
            hint = "the backend must return a callable that runs the graph: pass_fn(gm).forward"
        elif "fullgraph" in raised or "Unsupported" in raised:
            hint = ("do not use fullgraph=True: a model with a graph break is several graphs, and the backend is "
                    "called for each")
        elif "__call__()" in raised and "positional argument" in raised:
            hint = ("pass_fn takes one argument, the GraphModule: call pass_fn(gm); the example inputs are the "
                    "backend's second argument, not the pass's")
        elif ev.get("dtype") and ev["dtype"] != str(case.data["dtype"]):
            hint = (f"the caller's model was cast to {ev['dtype']}: compile the model as it is, in its own dtype "
                    f"({case.data['dtype']})")
        else:
            hint = None
        raise CheckFailed(f"calling what compile_with_pass returned raised {raised}", hint)
    expect(not ev["is_model"], "compile_with_pass returned the model itself, not a compiled function",
           "return torch.compile(model, backend=...) with a backend that applies pass_fn")
    with torch.no_grad():
        expected = [reference(x) for x in inputs]
        unpassed = [model(x) for x in inputs]
    for i, (got, want, old) in enumerate(zip(ev["outputs"], expected, unpassed)):
        what = f"call {i + 1} (input of shape {tuple(inputs[i].shape)})"
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            raise CheckFailed(f"{what}: returned {type(got).__name__} "
                              f"{tuple(got.shape) if isinstance(got, torch.Tensor) else ''}, expected a tensor of "
                              f"shape {tuple(want.shape)}")
        close = torch.allclose(got.double(), want.double(), rtol=1e-5, atol=1e-6)
        if close and got.dtype == want.dtype:
            continue
        if close:
            raise CheckFailed(f"{what}: the output is {got.dtype}, the eager model's {want.dtype}",
                              "run the model and the graphs in their own dtype: cast neither the model nor the "
                              "inputs")
        if torch.allclose(got.double(), old.double(), rtol=1e-5, atol=1e-6):
            if ev["calls"] == 0:
                hint = "pass_fn was never called: the backend must call pass_fn(gm) on every graph it receives"
            elif ev.get("aten_graphs"):
                hint = ("pass_fn was given ATen graphs (AOTAutograd's or make_fx's), where a relu is "
                        "aten.relu.default and a pass written for dynamo's graphs finds nothing: hand it the gm "
                        "dynamo gives the backend, with no aot_autograd in between")
            else:
                hint = ("pass_fn returns a new GraphModule and leaves its argument alone: run what pass_fn returns "
                        "(pass_fn(gm).forward), not the gm you gave it")
            raise CheckFailed(f"{what}: the output is the eager model's without the pass (relu where the pass "
                              "puts sigmoid)", hint)
        graphs = _reference_graph_count(case)
        raise CheckFailed(f"{what}: the output differs from the eager model after the pass by up to "
                          f"{float((got.double() - want.double()).abs().max()):.3g}",
                          f"pass_fn ran on {ev['calls']} of the {graphs} graphs dynamo hands the backend: apply it "
                          "to every graph, each time the backend is called (graph breaks and recompiles on a new "
                          "shape bring new graphs), not only to the first" if ev["calls"] < graphs else
                          "run what pass_fn returns on the inputs the compiled function is given, unchanged")
    expect(not ev.get("frozen"), f"compile_with_pass changed the caller's model: its parameters "
                                 f"{', '.join(ev.get('frozen') or [])} no longer require grad",
           "leave the model as it is: torch.compile needs no frozen parameters, and the caller may still train it")
    graphs = _reference_graph_count(case)
    expect(ev["calls"] <= graphs,
           f"pass_fn ran {ev['calls']} times, but dynamo handed the backend {graphs} graph(s) for these calls",
           "run pass_fn once per graph, in the backend when the graph arrives, and return what it made: not again "
           "in the callable the backend returns (that runs at every call), nor twice to look at the result")


def _reference_graph_count(case: Case) -> int:
    """How many graphs dynamo hands a backend that applies the case's pass when the case's model is compiled and
    called on its inputs (the pass decides branches: a relu made sigmoid changes what h.mean() > 0 says)."""
    key = ("graphs", case.label, current_salt())
    if key not in _CACHE:
        model, pass_fn = case.make()
        _reset()
        graphs: list = []

        def backend(gm, example_inputs):
            graphs.append(gm)
            return pass_fn(gm).forward

        compiled = torch.compile(model, backend=backend)
        with torch.no_grad():
            for x in getattr(model, PROBE):
                compiled(x)
        _reset()
        _CACHE[key] = len(graphs)
    return _CACHE[key]


def _pass_raise(case: Case, raised: dict) -> str | None:
    """What a raise of compile_with_pass itself says: fx.symbolic_trace met the model's data-dependent branch."""
    if raised.get("__raised__") == "TraceError" or "symbolically traced" in str(raised.get("message")):
        return ("torch.compile needs no fx.symbolic_trace, which cannot trace a branch on a tensor's value: dynamo "
                "captures the graphs itself (splitting at such a branch); apply pass_fn in the backend, to each "
                "graph dynamo hands it")
    return None
