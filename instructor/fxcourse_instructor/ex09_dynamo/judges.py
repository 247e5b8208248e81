"""The judges of ex09_dynamo: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

import copy
from collections import Counter
from typing import Callable

import torch

from autograder.checks.randmodels import current_salt
from autograder.checks.hints import hint_of
from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import expect
from autograder.checks.ex09_dynamo.models import FAILED, GRAD, PROBE, STEP, _recording_backend, _reset, weight_step
from autograder.checks.ex09_dynamo.evidence import _graph_summary


_CACHE: dict = {}


def _called_as(fn, inputs: list, variant: str | None) -> tuple:
    """The case's function and inputs as a wrong answer hands them to the compiled function: "clone" (copies of
    the inputs), "detach" (detached inputs), "eval" (the model switched to eval mode); as they are otherwise."""
    if variant == "clone":
        return fn, [t.clone() for t in inputs]
    if variant == "detach":
        return fn, [t.detach() for t in inputs]
    if variant == "eval":
        fn.eval()
    return fn, inputs


def _reference_capture(label: str, make: Callable[[], tuple], grad: bool = False,
                       variant: str | None = None) -> list[dict]:
    """What a recording backend receives when the case's function is compiled and called once, from a reset
    (`grad`: with grad enabled, as the answer is called; `variant`: called the way a wrong answer calls it, see
    _called_as, "no_grad": under torch.no_grad(), or "enable_grad": with grad enabled whatever `grad` says)."""
    key = ("capture", label, current_salt(), grad, variant)
    if key not in _CACHE:
        fn, *inputs = make()
        fn, inputs = _called_as(fn, inputs, variant)
        _reset()
        graphs: list = []
        with torch.set_grad_enabled({"no_grad": False, "enable_grad": True}.get(variant, grad)):
            torch.compile(fn, backend=_recording_backend(graphs))(*inputs)
        _reset()
        _CACHE[key] = [_graph_summary(g) for g in graphs]
    return _CACHE[key]


def _reference_breaks(label: str, make: Callable[[], tuple], grad: bool = False) -> tuple[int, int, int, int]:
    """(graph breaks, graphs, entries of break_reasons, kinds of reason among them) as torch._dynamo.explain
    reports them, from a reset (`grad`: with grad enabled, as the answer is called)."""
    import torch._dynamo
    key = ("explain", label, current_salt(), grad)
    if key not in _CACHE:
        fn, *inputs = make()
        _reset()
        with torch.set_grad_enabled(grad):
            report = torch._dynamo.explain(fn)(*inputs)
        _reset()
        kinds = {str(r.reason).splitlines()[0] for r in report.break_reasons}
        _CACHE[key] = (int(report.graph_break_count), int(report.graph_count), len(report.break_reasons), len(kinds))
    return _CACHE[key]


def _inputs_grad(case: Case) -> list[bool]:
    """requires_grad of each tensor input of a capture case, as the case hands them over (from its cold maker: a
    warm case's own make compiles fn first)."""
    key = ("inputs_grad", case.label, current_salt())
    if key not in _CACHE:
        _, *inputs = case.data.get("cold", case.make)()
        _CACHE[key] = [t.requires_grad for t in inputs if isinstance(t, torch.Tensor)]
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


LAZY = "ex09.torch_compile_lazy_nothing_captured"


RESET = "ex09.start_torch_dynamo_reset_dynamo"


def _flat(graphs: list[dict]) -> list[str]:
    return [c for g in graphs for c in g.get("calls", [])]


# how a wrong answer called fn, in words, and the hint that says what to do instead
_CALLED_AS = {
    "no_grad": ("fn called under torch.no_grad(), where it takes another path (it reads torch.is_grad_enabled()); "
                "called as the caller calls it, with grad enabled", "ex09.call_in_caller_s_grad_mode"),
    "enable_grad": ("fn called with grad enabled, where it takes another path (it reads torch.is_grad_enabled()); "
                    "called as the caller calls it, under torch.no_grad()", "ex09.keep_caller_s_no_grad"),
    "clone": ("fn called on new tensors made from the inputs (clone() or detach() makes them), which are two "
              "tensors; given one tensor as both inputs, dynamo sees one input",
              "ex09.pass_inputs_themselves_not_copies"),
    "detach": ("fn called on detached inputs, which do not require grad (and fn branches on x.requires_grad); "
               "called on the input itself, which requires grad", "ex09.pass_inputs_not_detached"),
    "eval": ("the model in eval mode; in training mode, as the caller handed it over (BatchNorm then counts the "
             "batch and normalises with its statistics)", "ex09.capture_model_in_its_own_mode"),
}


def _capture_judge(case: Case, ev: dict) -> None:
    grad = bool(case.data.get("grad"))
    expected = _reference_capture(case.label, case.data.get("cold", case.make), grad)
    got = [{k: v for k, v in g.items() if k != "dynamo_meta"} for g in ev["graphs"]]
    for i, g in enumerate(got):
        expect("type" not in g, f"item {i} of the list is a {g.get('type')}, expected an fx.GraphModule",
               "ex09.append_gm_first_argument_dynamo")
    changed = [i + 1 for i, (before, after) in enumerate(zip(_inputs_grad(case), ev.get("inputs_grad", [])))
               if before != after]
    expect(not changed, f"capture_graphs changed requires_grad of the caller's input {changed[0] if changed else 0}",
           "ex09.pass_inputs_themselves_not_copies")
    expect(not case.data.get("train") or ev.get("training") is not False,
           "capture_graphs left the caller's model in eval mode; it was handed over in training mode",
           "ex09.capture_model_in_its_own_mode")
    for variant in case.data.get("variants", ()):
        if got != expected and got == _reference_capture(case.label, case.make, grad, variant):
            what, hint = _CALLED_AS[variant]
            raise CheckFailed(f"returned {len(got)} graph(s) with {[g['placeholders'] for g in got]} placeholder(s), "
                              f"those of {what}, fn gives dynamo {len(expected)} graph(s) with "
                              f"{[e['placeholders'] for e in expected]} placeholder(s)", hint)
    if not got and expected:
        raise CheckFailed(f"no graph captured; dynamo hands a backend {len(expected)} graph(s) for this function",
                          RESET if case.data.get("warm") else LAZY)
    first_only = case.data.get("first_only")
    if first_only is not None and got != expected and got == _reference_capture(case.label + " (first input only)",
                                                                              first_only):
        raise CheckFailed(f"returned the {len(got)} graph(s) of fn called on its first input alone; called on all "
                          f"{len(case.make()) - 1} inputs, it gives dynamo {len(expected)} graph(s) to hand over",
                          "ex09.pass_every_input_compiled_inputs")
    if len(got) < len(expected) and got and Counter(_flat(expected)) <= Counter(_flat(got)):
        raise CheckFailed(f"returned {len(got)} graph(s) holding every call of the {len(expected)} graphs dynamo "
                          "hands the backend with torch.compile's defaults: the graph breaks were compiled away",
                          "ex09.compile_torch_compile_s_defaults")
    if len(got) < len(expected) and got and all(g in expected for g in got):
        raise CheckFailed(f"returned {len(got)} of the {len(expected)} graphs dynamo hands the backend for this "
                          "function (a graph break makes several)",
                          "ex09.keep_every_graph_append_each")
    if len(got) != len(expected):
        more = len(got) < len(expected)
        raise CheckFailed(
            f"returned {len(got)} graph(s), but dynamo hands the backend {len(expected)} for this function "
            f"{' (graph breaks make several)' if len(got) < len(expected) else ''}",
            "ex09.keep_every_graph_append_each_2" if more else "ex09.call_compiled_function_once_return")
    retraced = [i + 1 for i, g in enumerate(ev["graphs"]) if g.get("dynamo_meta") is False]
    expect(got != expected or not retraced,
           f"graph {retraced[0] if retraced else 0} is not the GraphModule dynamo handed the backend: its nodes carry "
           "none of the example values dynamo traced with (a retrace, or a graph built anew)",
           "ex09.return_each_graph_exactly_dynamo")
    for i, (g, e) in enumerate(zip(got, expected)):
        if g != e:
            order = [x for x in expected if x == g]
            if any(c.startswith("call_function torch.ops.aten.") for c in g["calls"]) and \
                    not any(c.startswith("call_function torch.ops.aten.") for c in e["calls"]):
                raise CheckFailed(f"graph {i + 1} of {len(expected)} is an ATen graph (it calls "
                                  f"{g['calls'][:3]}...), not the graph dynamo hands the backend "
                                  f"(which calls {e['calls'][:3]}...)",
                                  "ex09.keep_gm_dynamo_hands_your")
            raise CheckFailed(
                f"graph {i + 1} of {len(expected)} has {g['placeholders']} placeholders and calls "
                f"{g['calls'][:6]}{'...' if len(g['calls']) > 6 else ''}, expected {e['placeholders']} placeholders "
                f"and {e['calls'][:6]}{'...' if len(e['calls']) > 6 else ''}",
                "ex09.return_graphs_order_backend_received" if order else
                "ex09.return_each_graph_exactly_dynamo")


def _breaks_judge(case: Case, got: int) -> None:
    grad = bool(case.data.get("grad"))
    breaks, graphs, reasons, kinds = _reference_breaks(case.label, case.make, grad)
    if got == breaks:
        return
    first_only = case.data.get("first_only")
    if "no_grad" in case.data.get("variants", ()) and got == _reference_breaks(case.label, case.make)[0]:
        raise CheckFailed(f"returned {got}, the count of fn under torch.no_grad(), where it takes another path (it "
                          f"reads torch.is_grad_enabled()); called as the caller calls it, with grad enabled, it "
                          f"causes {breaks} graph break(s) ({graphs} graph(s))", "ex09.explain_in_caller_s_grad_mode")
    if "enable_grad" in case.data.get("variants", ()) and got == _reference_breaks(case.label, case.make, True)[0]:
        raise CheckFailed(f"returned {got}, the count of fn with grad enabled, where it takes another path (it reads "
                          f"torch.is_grad_enabled()); called as the caller calls it, under torch.no_grad(), it causes "
                          f"{breaks} graph break(s) ({graphs} graph(s))", "ex09.explain_under_caller_s_no_grad")
    if first_only is not None and got == _reference_breaks(case.label + " (first input only)", first_only)[0]:
        hint = hint_of("ex09.count_fn_called_first_input", inputs=len(case.make()) - 1)
    elif got == kinds and kinds != reasons:
        hint = "ex09.number_different_kinds_break_distinct"
    elif got == reasons:
        hint = "ex09.number_entries_explain_s_break" if kinds == reasons else "ex09.number_entries_explain_s_break_2"
    elif got > graphs:
        hint = "ex09.more_breaks_than_this_one"
    elif got == graphs and graphs != breaks:
        hint = "ex09.number_graphs_each_graph_break"
    elif got == 0 and _compiles_whole(case.label, case.make):
        hint = "ex09.n0_where_dynamo_breaks_graph"
    elif got < breaks:
        hint = "ex09.count_every_break_not_whether"
    else:
        hint = "ex09.torch_dynamo_explain_fn_inputs"
    raise CheckFailed(f"returned {got}, but compiling this function for these inputs causes {breaks} graph "
                      f"break(s) ({graphs} graph(s))", hint)


def _pass_judge(case: Case, ev: dict) -> None:
    model, _ = case.make()
    _reset()
    reference = case.data["factory"]("sigmoid").to(case.data["dtype"]).eval()
    reference.load_state_dict(model.state_dict())
    inputs = getattr(model, PROBE)
    if case.data.get("pass_raises"):
        raised = ev["outputs"] if isinstance(ev["outputs"], str) else ""
        expect(FAILED in raised, f"the pass raised ValueError({FAILED!r}) on the graph it was given, but calling what "
               f"compile_with_pass returned {'raised ' + raised[:120] if raised else 'gave outputs'}: a pass that "
               "fails must fail the call with its own error, as torch.compile reports a backend's; running the "
               "graph without the pass hides the failure", "ex09.let_failing_pass_raise")
        return
    if isinstance(ev["outputs"], str):
        raised = ev["outputs"]
        if "did not return callable" in raised:
            hint = "ex09.backend_must_return_callable_runs"
        elif "fullgraph" in raised or "Unsupported" in raised:
            hint = "ex09.do_not_use_fullgraph_true"
        elif "__call__()" in raised and "positional argument" in raised:
            hint = "ex09.pass_fn_takes_one_argument"
        elif ev.get("dtype") and ev["dtype"] != str(case.data["dtype"]):
            hint = hint_of("ex09.caller_s_model_was_cast", dtype=ev['dtype'], own=case.data['dtype'])
        else:
            hint = None
        raise CheckFailed(f"calling what compile_with_pass returned raised {raised}", hint)
    expect(not ev["is_model"], "compile_with_pass returned the model itself, not a compiled function",
           "ex09.return_torch_compile_model_backend_2")
    step = bool(getattr(model, STEP, False))
    before = copy.deepcopy(reference)   # the weights the model had before the caller changed them
    expected, unpassed, stale = [], [], []
    with torch.no_grad():
        for i, x in enumerate(inputs):
            if i and step:   # as the evidence does: the caller changes the weights between two calls
                weight_step(reference)
                weight_step(model)
            expected.append(reference(x))
            unpassed.append(model(x))
            stale.append(before(x))
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
                              "ex09.run_model_graphs_their_own")
        if step and i and torch.allclose(got.double(), stale[i].double(), rtol=1e-5, atol=1e-6):
            raise CheckFailed(f"{what}: the output is what the model gave before its weights changed in place (the "
                              "caller changed them after call 1, as an optimizer step does): the compiled function "
                              "runs a copy of the model, not the caller's model", "ex09.compile_caller_s_model_itself")
        if torch.allclose(got.double(), old.double(), rtol=1e-5, atol=1e-6):
            if ev["calls"] == 0:
                hint = "ex09.pass_fn_was_never_called"
            elif ev.get("aten_graphs"):
                hint = "ex09.pass_fn_was_given_aten"
            else:
                hint = "ex09.pass_fn_returns_new_graphmodule"
            raise CheckFailed(f"{what}: the output is the eager model's without the pass (relu where the pass "
                              "puts sigmoid)", hint)
        graphs = _reference_graph_count(case)
        raise CheckFailed(f"{what}: the output differs from the eager model after the pass by up to "
                          f"{float((got.double() - want.double()).abs().max()):.3g}",
                          hint_of("ex09.pass_fn_ran_graphs_dynamo", calls=ev['calls'], graphs=graphs)
                          if ev["calls"] < graphs else
                          "ex09.run_what_pass_fn_returns")
    lost = [i + 1 for i, needs in enumerate(ev.get("requires_grad") or []) if not needs]
    expect(not getattr(model, GRAD, False) or not lost,
           f"call {lost[0] if lost else 0}, with grad enabled: the output does not require grad, but the eager "
           "model's does (its parameters require grad), so backward() cannot train the model through it",
           "ex09.return_compiled_itself_keep_autograd")
    graphs = _reference_graph_count(case)
    expect(ev["calls"] == graphs,
           f"pass_fn ran {ev['calls']} times, but dynamo handed the backend {graphs} graph(s) for these calls: "
           "each of them goes through pass_fn once",
           "ex09.run_pass_fn_once_per")
    if not ev.get("wraps_model", True):
        wraps = ev.get("wraps")
        what, hint = ((f"a {ev.get('returned')}, a wrapper", "ex09.return_compiled_itself_keep_autograd")
                      if wraps == "NoneType" else
                      (f"a compiled {wraps} traced from the model (fx.symbolic_trace, which raises TraceError on "
                       "a model that branches on a tensor's value)", "ex09.torch_compile_needs_no_fx")
                      if wraps == "GraphModule" else
                      (f"a compiled {wraps} that is another object than the caller's model",
                       "ex09.compile_caller_s_model_itself"))
        raise CheckFailed(f"compile_with_pass returned {what}, not what torch.compile(model, ...) returns: an "
                          "OptimizedModule whose _orig_mod is the caller's model itself", hint)
    expect(not ev.get("at_run_time"), f"pass_fn ran {ev.get('at_run_time')} time(s) outside a compile (while the "
           "compiled model ran, or before torch.compile), not in the backend when dynamo handed it the graph: a pass "
           "that fails then fails the caller's call, not the compile", "ex09.run_pass_fn_once_per")


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
        return "ex09.torch_compile_needs_no_fx"
    return None
