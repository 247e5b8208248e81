"""Property-based cases: the solutions' passes of ex03, ex05, ex06 and ex08 on random models drawn by Hypothesis,
judged against the eager model; the check library's runner and shared helpers on drawn cases and tensors.
Derandomized (a fixed seed): a failure reproduces on every machine and in CI."""
from __future__ import annotations

import copy
import itertools
import warnings
from collections import Counter

import pytest
import torch
import torch.fx as fx
import torch.nn as nn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.checks import run_check
from autograder.checks.evidence import flat_outputs, unravel, worst_difference
from autograder.checks.ex03_replacing import RELU_TO_GELU, _EagerSwap
from autograder.checks.framework import Case, Check, CheckFailed, get_check, run_cases
from autograder.course.notebook import answer_namespace, read_notebook
from conftest import ROOT
from strategies import convnets, mlps

SETTINGS = settings(derandomize=True, max_examples=25, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
_SOLUTIONS: dict = {}


def solution(assignment: str) -> dict:
    if assignment not in _SOLUTIONS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _SOLUTIONS[assignment] = answer_namespace(read_notebook(ROOT / "solutions" / assignment /
                                                                    f"{assignment}.ipynb"))
    return _SOLUTIONS[assignment]


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


def assert_same(got, expected) -> None:
    """Equal within the tolerance of the dtype: tight for float64, float32's otherwise."""
    got, expected = flat_outputs(got), flat_outputs(expected)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        tol = dict(rtol=1e-9, atol=1e-11) if e.dtype == torch.float64 else dict(rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(g, e, **tol)


def run(module, x):
    with torch.no_grad():
        return module(x)


def sites(gm: fx.GraphModule) -> Counter:
    return Counter(n.target for n in gm.graph.nodes if n.op == "call_module")


def calls_of(gm: fx.GraphModule, kind: type) -> int:
    return sum(1 for n in gm.graph.nodes if n.op == "call_module" and isinstance(gm.get_submodule(n.target), kind))


# --------------------------------------------------------------------------------------------- ex03

@SETTINGS
@given(mlps())
def test_ex03_linear_to_matmul_matches_the_eager_model(drawn):
    model, x = drawn
    model.eval()
    gm = solution("ex03_replacing")["linear_to_matmul"](fx.symbolic_trace(model))
    assert calls_of(gm, nn.Linear) == 0
    assert_same(run(gm, x), run(model, x))


@SETTINGS
@given(mlps())
def test_ex03_relu_to_gelu_matches_the_eager_model_computing_gelu(drawn):
    model, x = drawn
    model.eval()
    gm = solution("ex03_replacing")["relu_to_gelu"](fx.symbolic_trace(model))
    assert calls_of(gm, nn.ReLU) == 0
    with _EagerSwap(RELU_TO_GELU):
        expected = run(model, x)
    assert_same(run(gm, x), expected)


# --------------------------------------------------------------------------------------------- ex05

@SETTINGS
@given(mlps())
def test_ex05_remove_dropout_of_a_training_trace_matches_eval_mode(drawn):
    model, x = drawn
    gm = solution("ex05_inserting")["remove_dropout"](fx.symbolic_trace(model.train()))
    assert calls_of(gm, nn.Dropout) == 0
    assert not any(n.op == "call_function" and "dropout" in str(n.target) for n in gm.graph.nodes)
    gm.eval()
    assert_same(run(gm, x), run(model.eval(), x))


@SETTINGS
@given(mlps())
def test_ex05_insert_after_an_identity_changes_nothing(drawn):
    model, x = drawn
    model.eval()
    gm = fx.symbolic_trace(model)
    name = [n.name for n in gm.graph.nodes if n.op != "output"][-1]
    gm = solution("ex05_inserting")["insert_after"](gm, name, torch.clone)
    gm.graph.lint()
    assert_same(run(gm, x), run(model, x))


# --------------------------------------------------------------------------------------------- ex06

@SETTINGS
@given(mlps(kinds=("linear", "chain", "shared", "relu_fn", "residual", "branch")))
def test_ex06_fuse_consecutive_linears_matches_and_leaves_shared_modules_alone(drawn):
    model, x = drawn
    model.eval()
    gm0 = fx.symbolic_trace(model)
    shared = {t for t, k in sites(gm0).items() if k > 1}
    before = {t: copy.deepcopy(gm0.get_submodule(t).state_dict()) for t in shared}
    gm = solution("ex06_fusing")["fuse_consecutive_linears"](fx.symbolic_trace(model))
    for t in shared:   # a module called from two call sites is left alone: still called from every site
        assert sites(gm)[t] == sites(gm0)[t]
        after = gm.get_submodule(t).state_dict()
        assert all(torch.equal(before[t][k], after[k]) for k in after)
    assert_same(run(gm, x), run(model, x))


@SETTINGS
@given(convnets())
def test_ex06_fuse_conv_bn_matches_the_eager_model_in_eval_mode(drawn):
    model, x = drawn
    model.eval()
    gm = solution("ex06_fusing")["fuse_conv_bn"](fx.symbolic_trace(model))
    # every block's BatchNorm folds; the tail's stay when the tail conv is called from two sites
    assert calls_of(gm, nn.BatchNorm2d) == (2 if model.shared_tail else 0)
    assert_same(run(gm, x), run(model, x))


# --------------------------------------------------------------------------------------------- ex08

@SETTINGS
@given(mlps())
def test_ex08_optimize_for_inference_of_a_training_model_matches_eval(drawn):
    model, x = drawn
    model.train()
    state = copy.deepcopy(model.state_dict())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm = solution("ex08_pipeline")["optimize_for_inference"](model, (x,))
    assert all(torch.equal(state[k], v) for k, v in model.state_dict().items())   # the caller's model
    assert calls_of(gm, nn.Dropout) == 0
    assert_same(run(gm, x), run(model.eval(), x))


@SETTINGS
@given(convnets())
def test_ex08_optimize_for_inference_of_a_convnet_matches_eval(drawn):
    model, x = drawn
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm = solution("ex08_pipeline")["optimize_for_inference"](model.train(), (x,))
    assert calls_of(gm, nn.BatchNorm2d) == (2 if model.shared_tail else 0)
    assert_same(run(gm, x), run(model.eval(), x))


def test_the_properties_find_a_model_that_breaks_a_wrong_pass():
    """The strategies reach the models that matter: Hypothesis finds one on which fusing a shared Linear shows."""
    from hypothesis import find

    wrong = dict(solution("ex06_fusing"))
    exec(compile(_SHARED_FUSER, "<wrong>", "exec"), wrong)  # noqa: S102 (a wrong answer written for this test)

    def breaks(drawn):
        model, x = drawn
        model.eval()
        gm0 = fx.symbolic_trace(model)
        gm = wrong["fuse_consecutive_linears"](fx.symbolic_trace(model))
        return any(sites(gm)[t] != k for t, k in sites(gm0).items() if k > 1)

    model, _ = find(mlps(kinds=("linear", "shared", "relu_fn")), breaks,
                    settings=settings(derandomize=True, database=None, max_examples=200, deadline=None))
    assert any(kind == "shared" for kind, _b, _m in model.plan)


_SHARED_FUSER = """
def fuse_consecutive_linears(gm):
    for node in list(gm.graph.nodes):
        if node.op != "call_module" or not isinstance(gm.get_submodule(node.target), nn.Linear):
            continue
        if len(node.users) != 1:
            continue
        user = next(iter(node.users))
        if user.op == "call_module" and isinstance(gm.get_submodule(user.target), nn.Linear):
            name = "fused_" + node.target.replace(".", "_") + "_" + user.name
            gm.add_submodule(name, fuse_linear_pair(gm.get_submodule(node.target), gm.get_submodule(user.target)))
            with gm.graph.inserting_after(user):
                new = gm.graph.call_module(name, node.args)
            user.replace_all_uses_with(new)
            gm.graph.erase_node(user)
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    return gm
"""


# ------------------------------------------------------------------------------ the runner and the helpers

def _verdict_check(verdicts: list[bool]) -> Check:
    """A check whose case i passes exactly when verdicts[i] (the judge reads it from the case's data)."""
    def judge(case, ev):
        if not case.data["ok"]:
            raise CheckFailed(f"case {case.label} is wrong, expected {ev * 2}", "a hint")

    cases = [Case(str(i), lambda i=i: (i,), data={"ok": ok}) for i, ok in enumerate(verdicts)]
    return Check("double", lambda hidden: cases, lambda result, args: result, judge)


@SETTINGS
@given(st.lists(st.booleans(), min_size=1, max_size=8))
def test_run_cases_judges_every_case_in_order_or_stops_at_the_first_failure(verdicts):
    check = _verdict_check(verdicts)
    every = run_cases(check, lambda i: i, check.cases(False), stop_at_first=False)
    assert [r.label for r in every] == [str(i) for i in range(len(verdicts))]
    assert [r.passed for r in every] == verdicts
    first = run_cases(check, lambda i: i, check.cases(False))
    end = verdicts.index(False) + 1 if False in verdicts else len(verdicts)
    assert first == every[:end]
    for r in every:
        assert r.text == (r.message if r.passed else f"double on {r.label}: case {r.label} is wrong, "
                          f"expected {int(r.label) * 2}\nHint: a hint")


@SETTINGS
@given(st.lists(st.booleans(), min_size=1, max_size=8))
def test_run_cases_stops_after_a_released_stub_and_says_a_broken_case_is_the_checks_fault(verdicts):
    check = _verdict_check(verdicts)

    def stub(i):
        raise NotImplementedError()

    (only,) = run_cases(check, stub, check.cases(False), stop_at_first=False)
    assert not only.passed and "not implemented yet" in only.message

    def broken():
        raise ValueError("no inputs")

    results = run_cases(check, lambda i: i, [Case("broken", broken)] + check.cases(False), stop_at_first=False)
    assert results[0].message == "the check itself failed on broken: ValueError: no inputs"
    assert [r.passed for r in results[1:]] == verdicts


def test_a_check_s_explain_raise_names_the_cause_of_an_unexpected_raise_else_the_error_signature_does():
    from dataclasses import replace

    def gives_up(i):
        raise RuntimeError(f"gave up on {i}")

    check = _verdict_check([True, True])
    plain = run_cases(check, gives_up, check.cases(False))[0]
    assert not plain.passed and "raised RuntimeError on 0" in plain.message

    def explain(case, raised):
        return f"case {case.label} is fine: {raised['message']}" if raised["__raised__"] == "RuntimeError" else None

    told = run_cases(replace(check, explain_raise=explain), gives_up, check.cases(False))[0]
    assert told.message == plain.message and told.hint == "case 0 is fine: gave up on 0"

    def broken(case, raised):
        raise KeyError("the explanation itself failed")

    fallback = run_cases(replace(check, explain_raise=broken), gives_up, check.cases(False))[0]
    assert fallback == plain  # an explanation that fails leaves the error-signature hint, never a crash


def test_run_check_raises_the_message_run_cases_gives():
    def wrong(gm, op=None):
        return 0

    check = get_check("ex01_tracing", "count_nodes")
    first = next(r for r in run_cases(check, wrong, check.cases(False)) if not r.passed)
    with pytest.raises(CheckFailed) as failed:
        run_check("ex01_tracing", "count_nodes", wrong)
    assert str(failed.value) == first.text


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_worst_difference_names_the_largest_difference_and_its_index(shape, data):
    cells = list(itertools.product(*map(range, shape)))
    flat = data.draw(st.integers(0, len(cells) - 1))
    assert unravel(flat, tuple(shape)) == cells[flat]
    expected = torch.randn(*shape, generator=torch.Generator().manual_seed(flat), dtype=torch.float64)
    got = expected + 0.25 * torch.rand(*shape, generator=torch.Generator().manual_seed(flat + 1), dtype=torch.float64)
    got[cells[flat]] = expected[cells[flat]] + 3.0
    text = worst_difference(got, expected)
    assert text.startswith(f"differs by up to 3 at index {cells[flat]} ")
    assert f"expected {float(expected[cells[flat]]):.6g})" in text
