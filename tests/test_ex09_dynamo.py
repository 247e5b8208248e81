"""Does the ex09_dynamo check library pass the solution, fail the stubs, and kill every mutant with its hint?"""
from __future__ import annotations

import warnings

import pytest
import torch
import torch._dynamo

from autograder.checks import ex09_dynamo as checks
from autograder.checks.ex09_dynamo.models import PROBE, scaled_by_item
from autograder.checks.framework import collect_evidence, get_check, judge_evidence
from fxcourse_instructor.mutants import load
from exercise_suite import exercise_tests

A = "ex09_dynamo"
MUTANTS = load(A)[0]

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py

# fixtures nb, solution; the tests every exercise has (tests/exercise_suite.py), evidence of the visible cases
globals().update(exercise_tests(A, quizzes=4, evidence_cases=lambda check: check.cases(False)))


def test_the_pitfalls_of_the_lesson_are_among_the_mutants():
    whys = " | ".join(m.why for m in MUTANTS).lower()
    for needle in ("reset", "lazy", "fullgraph", "number of graphs", "returns", "first graph only"):
        assert needle in whys, needle


def test_no_dynamo_state_leaks_out_of_a_case(solution):
    """After a case, a fresh capture of the same function reaches its backend: the check reset dynamo."""
    check = get_check(A, "compile_with_pass")
    case = check.cases(False)[0]
    assert judge_evidence(check, case, collect_evidence(check, solution["compile_with_pass"], case)).passed
    model, _ = case.make()
    seen = []
    torch.compile(model, backend=lambda gm, ex: seen.append(gm) or gm.forward)(torch.randn(2, 6))
    assert len(seen) == 1


def test_the_warm_case_defeats_an_answer_without_reset(solution):
    """The case compiled eight times before: with reset the backend sees its graph, without it nothing."""
    check = get_check(A, "capture_graphs")
    case = next(c for c in check.cases(True) if c.data.get("warm"))
    fn, x = case.make()
    seen = []
    torch.compile(fn, backend=lambda gm, ex: seen.append(gm) or gm.forward)(x)
    assert seen == []
    assert len(solution["capture_graphs"](*case.make())) == 1


def test_random_models_differ_and_each_breaks_the_graph():
    plans = {tuple(checks.BreakNet(s).plan) for s in (3, 17, 29)}
    assert len(plans) == 3
    assert all(any(step in ("item", "branch") for step in plan) for plan in plans)


def test_the_sigmoid_pass_returns_a_new_module_and_leaves_its_input():
    model = checks.PlainMLP(4)
    graphs = []
    torch.compile(model, backend=lambda gm, ex: graphs.append(gm) or gm.forward)(torch.randn(2, 4))
    before = graphs[0].code
    new = checks.SigmoidPass()(graphs[0])
    assert new is not graphs[0] and graphs[0].code == before and "sigmoid" in new.code and "relu" not in new.code


@pytest.mark.parametrize("compile_it, said", [
    (lambda f: torch.compile(f, backend="eager", fullgraph=True), "fullgraph=True every such graph break"),
    (lambda f: torch.compile(f, backend=lambda gm, ex: None), "must return a callable"),
], ids=["fullgraph", "backend returns None"])
def test_dynamo_errors_get_their_hint(compile_it, said):
    """Dynamo's usual errors, raised by torch itself, each get the hint of their signature."""
    from autograder.checks.errors import hint_for_error

    def branchy(x):
        if x.sum() > 0:
            return x * 2
        return x - 1

    torch._dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as raised:
            compile_it(branchy)(torch.ones(3))
    torch._dynamo.reset()
    hint = hint_for_error(type(raised.value).__name__, str(raised.value))
    assert hint and said in hint, (type(raised.value).__name__, str(raised.value)[:200], hint)


def test_the_second_input_decides_the_graphs():
    """scaled_by_item breaks its graph only when given its scale: an answer passing the first input only sees
    another function, and the checks tell it from one that drops graphs."""
    x, scale = torch.randn(4), torch.randn(3)
    both = torch._dynamo.explain(scaled_by_item)(x, scale)
    alone = torch._dynamo.explain(scaled_by_item)(x)
    torch._dynamo.reset()
    assert (both.graph_count, alone.graph_count) == (2, 1)


def test_the_pass_decides_which_graphs_dynamo_hands_over(solution):
    """GateNet branches on h.mean() > 0 after an activation: once relu is sigmoid the branch goes another way, so
    the graphs a passing backend receives are counted with the pass applied, not from the plain model."""
    from fxcourse_instructor.ex09_dynamo.judges import _reference_graph_count
    check = get_check(A, "compile_with_pass")
    case = next(c for c in check.cases(True) if "float64" in c.label)
    model, _ = case.make()
    plain = []
    compiled = torch.compile(model, backend=lambda gm, ex: plain.append(gm) or gm.forward)
    with torch.no_grad():
        for x in getattr(model, PROBE):
            compiled(x)
    torch._dynamo.reset()
    assert _reference_graph_count(case) == 3 and len(plain) == 2
    assert judge_evidence(check, case, collect_evidence(check, solution["compile_with_pass"], case)).passed


def test_a_case_called_under_no_grad_is_so_called_in_the_jail_too():
    """Case.around reaches the jailed worker's cases, and the framework calls the function inside it: the answer
    is called under torch.no_grad() there, as in pytest."""
    from autograder.grader.jail.jailside import worker_cases

    _, cases = worker_cases([{"kind": "check", "assignment": A, "function": "capture_graphs", "hidden": True}])
    case = next(c for c in cases[(A, "capture_graphs", True, 0)] if "called under torch.no_grad()" in c.label)
    assert case.around is torch.no_grad
    seen = []
    ev = collect_evidence(get_check(A, "capture_graphs"), lambda fn, *inputs: seen.append(torch.is_grad_enabled()),
                          case)
    assert seen == [False] and torch.is_grad_enabled(), ev
