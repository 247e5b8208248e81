"""ex08_pipeline: the solution passes every check, the stubs pass none, mutants die with their hint,
alternatives pass, and the evidence is plain data that survives a process boundary."""
from __future__ import annotations

import io

import pytest
import torch
import torch.fx as fx

from autograder.checks import ex08_pipeline as checks
from autograder.checks.framework import Case, Check, CheckFailed, collect_evidence, get_check, judge_evidence
from autograder.coursedata.exercises import functions
from autograder.grader.quality.validate import solution_cells
from exercise_suite import exercise_tests

A = "ex08_pipeline"
FUNCTIONS = functions(A)

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py

# fixtures nb, solution; the tests every exercise has (tests/exercise_suite.py)
globals().update(exercise_tests(A, stub_says="not implemented yet"))


# ------------------------------------------------------------------------------------------------ core

def test_core_hands_expected_errors_to_the_judge():
    """Cases with data["raises"] need autograder.checks.framework to pass the raised evidence to judge() (see the report)."""
    seen = []
    check = Check("f", lambda hidden: [], lambda result, args: result, lambda case, ev: seen.append(ev))
    case = Case("raises on purpose", lambda: (), data={"raises": "RuntimeError"})

    def raising():
        raise RuntimeError("pass 'p' broke the graph")

    result = judge_evidence(check, case, collect_evidence(check, raising, case))
    assert result.passed, result.message
    assert seen and seen[0]["__raised__"] == "RuntimeError"


# ----------------------------------------------------------------------------------- the checks

@pytest.mark.parametrize("function", FUNCTIONS)
def test_evidence_is_plain_and_survives_a_process_boundary(solution, function):
    check = get_check(A, function)
    for hidden in (False, True):
        for case in check.cases(hidden):
            ev = collect_evidence(check, solution[function], case)
            buf = io.BytesIO()
            torch.save(ev, buf)
            buf.seek(0)
            again = torch.load(buf, weights_only=True)
            assert judge_evidence(check, case, again).passed, case.label


@pytest.mark.parametrize("function", FUNCTIONS)
def test_cases_are_deterministic(function):
    check = get_check(A, function)
    for hidden in (False, True):
        for a, b in zip(check.cases(hidden), check.cases(hidden)):
            first, second = a.make(), b.make()
            if function == "run_pipeline":
                assert first[0].code == second[0].code
                assert [getattr(p, "__name__", type(p).__name__) for p in first[1]] == \
                       [getattr(p, "__name__", type(p).__name__) for p in second[1]]
            else:
                sa, sb = first[0].state_dict(), second[0].state_dict()
                assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa), a.label
                assert all(torch.equal(x, y) for x, y in zip(first[1], second[1]))


def test_visible_pipeline_case_needs_four_rounds():
    """The probes of the first visible case: one double negation per call, three of them, plus one quiet round."""
    case = get_check(A, "run_pipeline").cases(False)[0]
    gm, passes = case.make()
    checks._reference_pipeline(gm, passes)
    names = [c[0] for c in gm._fxcourse_log.calls]
    assert names == ["cancel_double_neg", "drop_mul_one"] * 4


def test_a_pipeline_that_returns_instead_of_raising_is_told_so(solution):
    check = get_check(A, "run_pipeline")
    case = next(c for c in check.cases(False) if "raises" in c.data)

    def no_lint(gm, passes, max_rounds=10):
        for p in passes:
            gm = p(gm)
        return gm

    result = judge_evidence(check, case, collect_evidence(check, no_lint, case))
    assert not result.passed and "returned normally, expected a RuntimeError" in result.message
    assert "lint" in (result.hint or "")


def test_raised_error_must_be_a_runtime_error(solution):
    check = get_check(A, "run_pipeline")
    case = next(c for c in check.cases(False) if "raises" in c.data)
    ev = {"__raised__": "ValueError", "message": "pass 'misplace_neg' broke the graph", "where": "",
          "bases": ["ValueError", "Exception", "BaseException", "object"]}
    with pytest.raises(CheckFailed, match="expected a RuntimeError"):
        check.judge(case, ev)
    ev = dict(ev, __raised__="GraphBroken", bases=["GraphBroken", "RuntimeError", "Exception"])
    check.judge(case, ev)  # a subclass of RuntimeError is fine


def test_optimize_leaves_the_callers_model_alone(solution):
    check = get_check(A, "optimize_for_inference")
    case = check.cases(False)[1]  # ConvBNNet
    model, example = case.make()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    gm = solution["optimize_for_inference"](model, example)
    assert isinstance(gm, fx.GraphModule)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_structure_judge_names_the_chain():
    check = get_check(A, "optimize_for_inference")
    case = check.cases(False)[2]  # LinearChain: an untouched trace leaves the whole chain

    def trace_only(model, example_inputs):
        return fx.symbolic_trace(model.eval()).eval()

    result = judge_evidence(check, case, collect_evidence(check, trace_only, case))
    assert not result.passed
    assert "Linear -> Linear chain can be fused" in result.message and "layers.0" in result.message


def test_a_wrong_run_pipeline_costs_points_in_its_own_test_only(nb, solution):
    """optimize_for_inference calls the learner's run_pipeline: when only that one is wrong, optimize_for_inference
    passes, saying that with the course's run_pipeline it does, and its failure belongs to run_pipeline's test."""
    from autograder.course.notebook import answer_namespace
    cell = next(c for c in solution_cells(nb) if c == "run_pipeline")
    once = "def run_pipeline(gm, passes, max_rounds=10):\n    raise NotImplementedError('not yet')\n"
    ns = answer_namespace(nb, {cell: once})
    check = get_check(A, "optimize_for_inference")
    case = check.cases(False)[2]  # LinearChain
    result = judge_evidence(check, case, collect_evidence(check, ns["optimize_for_inference"], case))
    assert result.passed, result.message
    assert "with the course's run_pipeline" in result.message and "run_pipeline" in (result.hint or "")
