"""Does the ex13_inductor_passes check library pass the solution, fail the stubs and kill every mutant with its
hint, with every compile case leaving inductor's config and dynamo as it found them? Plus the torch behaviour
lesson 13 and the statement rely on.
"""
from __future__ import annotations

import pytest
import torch

from autograder.checks.errors import hint_for_error
from autograder.checks.ex13_inductor_passes import cases, models
from autograder.checks.ex13_inductor_passes.evidence import applied, targets
from autograder.checks.framework import collect_evidence, get_check, judge_evidence
from autograder.coursedata.exercises import exercise, functions
from fxcourse_instructor.mutants import load
from exercise_suite import assert_cell_contract, exercise_tests

A = "ex13_inductor_passes"
MUTANTS = load(A)[0]

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py

# fixtures nb, solution; the tests every exercise has (tests/exercise_suite.py), evidence of the visible cases
globals().update(exercise_tests(A, contract=False, quizzes=4, evidence_cases=lambda check: check.cases(False)))


def test_the_notebook_follows_the_cell_contract_and_the_curriculum_names(nb):
    assert functions(A) == ("make_pattern_pass", "apply_pattern_pass", "compile_with_post_grad_pass")
    assert exercise(A).part == 3 and exercise(A).lesson == "13_inductor_passes"
    assert_cell_contract(nb, A, quizzes=4)


def test_the_pitfalls_of_the_lesson_are_among_the_mutants():
    whys = " | ".join(m.why for m in MUTANTS).lower()
    for needle in ("module level", "swapped", "joint_fwd_bwd", "no recompile", "config.patch around",
                   "for good", "pre_grad", "aot_eager"):
        assert needle in whys, needle


@pytest.mark.parametrize("graph, name, count", [
    ("mlp", cases.MM_RELU, 3), ("shared", cases.MM_RELU, 1), ("mixed", cases.MUL_ADD, 2),
    ("mixed", cases.MM_RELU, 1), ("convnet", cases.CONV_BN, 2), ("mlp", cases.MUL_ADD, 0),
    ("relus", cases.RELU_RELU, 2), ("linears", cases.MM_T_RELU, 2), ("mlp", cases.MM_T_RELU, 0),
])
def test_the_graphs_hold_what_the_cases_claim(graph, name, count):
    """The course's pass finds as many matches as the case labels say, and the graph computes the same after it."""
    got = applied(models.reference_pass(name), graph)
    gm, inputs = models.aten_graph(graph)
    assert got["count"] == count
    assert torch.allclose(got["output"], models.run_graph(gm, inputs), rtol=1e-4, atol=1e-5)


def test_a_second_apply_finds_what_the_first_one_made_in_the_chain_of_relus():
    """What the fixed-point mutant rests on: one apply replaces two relu(relu) pairs, a second apply one more."""
    gm, _ = models.aten_graph("relus")
    pattern_pass = models.reference_pass(cases.RELU_RELU)
    assert [pattern_pass.apply(gm), pattern_pass.apply(gm), pattern_pass.apply(gm)] == [2, 1, 0]


def test_the_hidden_compiled_model_s_output_depends_on_the_weight_its_case_changes():
    """The eager ConvBN of the hidden compile case gives nonzero numbers, and others once c1.weight is negated (an
    output of zeros after the last relu would hide both a wrong fold and a compiled copy)."""
    model, inputs = models.compiled_model("ConvBN (unseen)", 1)
    with torch.no_grad():
        before = model(inputs[0])
        models.change_weight(model, "c1.weight")
        after = model(inputs[0])
    assert before.abs().sum() > 1 and (before - after).abs().max() > 1e-2


def test_the_random_graphs_differ_by_seed_and_hold_matches():
    assert targets(models.aten_graph("random 4")[0]) != targets(models.aten_graph("random 9")[0])
    assert applied(models.reference_pass(cases.MM_RELU), "random 4")["count"] > 0
    assert applied(models.reference_pass(cases.MUL_ADD), "random 9")["count"] > 0


def test_apply_changes_the_graph_but_not_the_code():
    """What the recompile mutant and quiz question 1 rest on: PatternMatcherPass.apply leaves gm.code stale."""
    gm, _ = models.aten_graph("mlp")
    code = gm.code
    assert models.reference_pass(cases.MM_RELU).apply(gm) == 3
    assert gm.code == code and "clamp_min" in gm.graph.python_code("self").src


def _real_mode_graph():
    from torch._inductor.decomposition import select_decomp_table
    from torch.fx.experimental.proxy_tensor import make_fx
    fn, inputs = models._graph_inputs("mlp", 0)
    models.reference_pass(cases.MM_RELU).apply(make_fx(fn, select_decomp_table())(*inputs))


def _register_twice():
    from torch._inductor.pattern_matcher import fwd_only, register_replacement
    pattern_pass = models.reference_pass(cases.MM_RELU)
    search, replace, inputs = models.replacement(cases.MM_RELU)
    register_replacement(search, replace, inputs, fwd_only, pattern_pass)


@pytest.mark.parametrize("make, said", [
    (_real_mode_graph, "tracing_mode=\"fake\""),
    (_register_twice, "new PatternMatcherPass in each call"),
], ids=["real-mode graph", "registered twice"])
def test_pattern_matcher_errors_get_their_hint(make, said):
    """The errors torch raises around the pattern matcher, raised by torch itself, each get their hint."""
    with pytest.raises(Exception) as raised:
        make()
    hint = hint_for_error(type(raised.value).__name__, str(raised.value))
    assert hint and said in hint, (type(raised.value).__name__, str(raised.value)[:200], hint)


def test_a_pass_object_handed_to_inductor_gets_its_hint():
    message = "TypeError: 'RecordingPatternMatcherPass' object is not callable"
    assert "pattern_pass.apply" in hint_for_error("InductorError", message)


def test_an_answer_that_sets_inductor_s_config_for_good_is_failed_and_its_setting_undone():
    """The compile case records the leak, then restores inductor's config: no later compile runs the pass."""
    import torch._inductor.config as config
    check = get_check(A, "compile_with_post_grad_pass")
    case = check.cases(False)[0]

    def for_good(model, pattern_pass):
        config.post_grad_custom_post_pass = pattern_pass.apply
        return torch.compile(model)

    try:
        result = judge_evidence(check, case, collect_evidence(check, for_good, case))
        assert not result.passed and "post_grad_custom_post_pass is still set" in result.message
        assert config.post_grad_custom_post_pass is None
    finally:
        cases.restore_config()


class _LibrarysPass:
    """A pass object another library set in inductor's config before grading (torchao's x86 quantizer sets
    pre_grad_custom_pass when it is imported): like it, a copy of it equals nothing."""

    def __call__(self, graph):
        pass


def test_a_pass_another_library_set_before_the_answer_is_no_change_of_the_answer_s_but_replacing_it_is():
    import torch._inductor.config as config
    check = get_check(A, "compile_with_post_grad_pass")
    case = check.cases(False)[0]

    def right(model, pattern_pass):
        return torch.compile(model, options={"post_grad_custom_post_pass": pattern_pass.apply})

    def replaces(model, pattern_pass):
        config.pre_grad_custom_pass = _LibrarysPass()
        return right(model, pattern_pass)

    try:
        for answer, passes in ((right, True), (replaces, False)):
            config.pre_grad_custom_pass = _LibrarysPass()
            result = judge_evidence(check, case, collect_evidence(check, answer, case))
            assert result.passed is passes, (answer.__name__, result.message)
            if not passes:
                assert "pre_grad_custom_pass changed when compile_with_post_grad_pass returned" in result.message
    finally:
        cases.restore_config()


def test_an_answer_that_raises_leaves_inductor_generating_code_again():
    """A compile case turns inductor's fallback_by_default on before the answer runs; when the answer raises there
    is no evidence to collect, and judging the raise turns it off again."""
    import torch._inductor.config as config
    check = get_check(A, "compile_with_post_grad_pass")
    case = check.cases(False)[0]

    def raises(model, pattern_pass):
        raise ValueError("not yet")

    result = judge_evidence(check, case, collect_evidence(check, raises, case))
    assert not result.passed and "not yet" in result.message
    assert config.fallback_by_default is False
