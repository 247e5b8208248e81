"""Does the ex04_wrapping check library pass the solution, fail the stubs, and kill every mutant with its hint?

Also: is the notebook namespace found the way the checks of trace_gated need it, and does torch.fx.wrap behave
in an exec'd namespace (as answer_namespace and the grader run cells) the way the exercise relies on?
"""
from __future__ import annotations

import pytest
import torch
import torch.fx as fx

from autograder.checks import ex04_wrapping as checks
from autograder.checks.framework import collect_evidence, get_check, judge_evidence
from fxcourse_instructor.mutants import load
from autograder.course.notebook import answer_namespace, grade_id
from exercise_suite import exercise_tests

A = "ex04_wrapping"
MUTANTS, ALTERNATIVES = load(A)

# fixtures nb, solution; the tests every exercise has (tests/exercise_suite.py)
globals().update(exercise_tests(A, stub_says="not implemented yet"))


def test_the_setup_cell_defines_the_models_the_checks_use(nb):
    """One text, two places: the check's reference models are the notebook's own, character for character."""
    setup = next(c for c in nb.cells if grade_id(c) == "setup")
    assert checks.MODELS_SOURCE in setup.source


def test_the_notebook_gatednet_computes_what_the_reference_computes(solution):
    torch.manual_seed(0)
    theirs = solution["GatedNet"]()
    ours = checks.build_gated("GatedNet", 0, checks.REF)
    for inputs in checks.gated_inputs("GatedNet", 0):
        assert torch.equal(theirs(*inputs), ours(*inputs))


# ------------------------------------------------------------------------- trace_gated: the notebook namespace

@pytest.mark.parametrize("hidden", [False, True])
def test_probe_inputs_take_both_branches_of_gate(hidden):
    for case in checks.CHECKS["trace_gated"].cases(hidden):
        inputs, sums = checks.gated_probe(case.data["kind"], case.data["seed"])
        assert len(inputs) == 2 and sums[0] > 0 > sums[1], (case.label, sums)


def test_models_of_the_cases_look_gate_up_in_the_learners_namespace(solution):
    """The forward of every model a case builds has the namespace of the learner's function as globals."""
    fn = solution["trace_gated"]  # noqa: F841 (found on the stack by notebook_namespace)
    for case in checks.CHECKS["trace_gated"].cases(True):
        (model,) = case.make()
        forwards = [type(m).forward for m in model.modules() if "gate" in type(m).forward.__code__.co_names]
        assert forwards and all(f.__globals__ is solution for f in forwards), case.label


def test_without_a_notebook_namespace_the_case_still_builds_a_model():
    """A broken notebook fails its own cases (the model cannot be traced plainly); the grader does not crash."""
    case = checks.CHECKS["trace_gated"].cases(False)[0]
    (model,) = case.make()
    assert type(model).forward.__globals__ is not checks.REF
    with pytest.raises(fx.proxy.TraceError):
        fx.symbolic_trace(model)


def test_the_judge_needs_no_notebook_namespace(solution):
    """Evidence is collected where the learner's code ran; the judge only uses the reference models (REF)."""
    check = get_check(A, "trace_gated")
    evidences = [(case, collect_evidence(check, solution["trace_gated"], case)) for case in check.cases(True)]
    for case, ev in evidences:  # no learner function on the stack here
        assert judge_evidence(check, case, ev).passed, case.label


def test_fx_wrap_in_an_exec_namespace_is_registered_for_that_namespace_only(nb):
    """fx.wrap at the top level of an exec'd cell wraps gate in that dict; a fresh namespace is unaffected."""
    wrap_alt = next(a for a in ALTERNATIVES if a.function == "trace_gated" and "top level" in a.why)
    wrapped = answer_namespace(nb, {"trace_gated": wrap_alt.source})
    gm = wrapped["trace_gated"](wrapped["GatedNet"]())
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [wrapped["gate"]]
    fresh = answer_namespace(nb)
    with pytest.raises(fx.proxy.TraceError):
        fx.symbolic_trace(fresh["GatedNet"]())


def test_fx_wrap_inside_a_function_raises_not_implemented():
    ns = {"__name__": "__main__", "fx": fx}
    exec(compile("def f():\n    fx.wrap('len')\n", "<cell>", "exec"), ns)  # noqa: S102
    with pytest.raises(NotImplementedError, match="top level of a module"):
        ns["f"]()


# ------------------------------------------------------------------- trace_specialized: torch 2.13's guards

def test_concrete_args_leaves_guard_placeholders_with_the_original_default():
    """The behaviour the exercise is built on: if torch changes it, revisit the task text and GUARD_HINT."""
    gm = fx.symbolic_trace(checks.FlagNet(), concrete_args={"use_extra": False})
    placeholders = {n.target: n.args for n in gm.graph.nodes if n.op == "placeholder"}
    assert placeholders == {"x": (), "use_extra_1": (True,), "repeats": (1,)}  # repeats: not fixed, kept as is
    with pytest.raises(AssertionError, match="has been specialized"):
        gm(torch.randn(2, 6))


def test_a_model_given_again_is_the_same_object_under_a_course_secret(solution):
    """The cases that hand the same model over again (data["kept"]) share one salt under a course secret, so the
    learner's function meets the very object it was given before: an answer that caches by model is caught in
    graded runs too, not only where hidden cases are unsalted."""
    from autograder.checks.framework import salted
    from autograder.checks.secrecy import hidden_cases

    fn = solution["trace_gated"]  # noqa: F841 (the notebook namespace, found on the stack by kept())
    for function in ("trace_gated", "trace_with_leaves", "trace_specialized"):
        made: dict = {}
        for case in hidden_cases(checks.CHECKS[function].cases(True), 987654321):
            if case.data.get("kept"):
                with salted(case.salt):
                    model = case.make()[0]
                assert made.setdefault(case.data["kept"], model) is model, (function, case.label)
        assert made, function


def test_a_method_of_fx_tracer_replaced_on_the_class_fails_with_its_hint(solution):
    """An answer that replaces fx.Tracer.is_leaf_module on the class itself (every tracer of the process, later
    ones included) fails, naming the method, even where its own graphs are right; the class is restored here."""
    original = fx.Tracer.__dict__["is_leaf_module"]

    def is_leaf_module(self, m, name):
        return isinstance(m, checks.REF["Block"]) or original(self, m, name)

    check = get_check(A, "trace_with_leaves")
    case = check.cases(False)[1]   # MixerNet with (RowNorm, Block) leaves: the patched rule gives the right graph
    fx.Tracer.is_leaf_module = is_leaf_module
    try:
        result = judge_evidence(check, case, collect_evidence(check, solution["trace_with_leaves"], case))
    finally:
        fx.Tracer.is_leaf_module = original
    assert not result.passed and "torch.fx.Tracer.is_leaf_module is no longer torch's own" in result.message
    assert "subclass fx.Tracer" in result.text
