"""Does the ex11_pt2e check library pass the solution, fail the stubs and never let a torch or torchao warning
decide a verdict? Plus the torchao 0.18 behaviour lesson 11 and the statement rely on.

Each mutant and alternative runs here as its own test (tests/test_mutants.py then skips this exercise).
"""
from __future__ import annotations

import warnings

import pytest
import torch

from autograder.checks import ex11_pt2e as checks
from autograder.checks.framework import collect_evidence, get_check, judge_evidence, run_check
from autograder.coursedata.exercises import exercise, functions
from fxcourse_instructor.mutants import load
from exercise_suite import assert_cell_contract, exercise_tests

A = "ex11_pt2e"
FUNCTIONS = functions(A)

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py

# fixtures nb, solution; the tests every exercise has (tests/exercise_suite.py) but the contract, asserted below
# with the curriculum's names; evidence of the visible cases, each answer's own evidence unwrapped
globals().update(exercise_tests(A, contract=False, evidence_unwrapped=True,
                                evidence_cases=lambda check: check.cases(False)))


# ------------------------------------------------------------------------------------------- contract

def test_the_notebook_follows_the_cell_contract_and_the_curriculum_names(nb):
    assert FUNCTIONS == ("prepare_pt2e_qat", "pt2e_fake_quant_count", "pt2e_finetune", "to_qdq", "qdq_counts")
    assert exercise(A).part == 2 and exercise(A).lesson == "11_pt2e_qat"
    assert_cell_contract(nb, A, quizzes=4)


def test_every_function_has_five_mutants_and_an_alternative():
    mutants, alternatives = load(A)
    for function in FUNCTIONS:
        assert sum(m.function == function for m in mutants) >= 5, function
        assert any(a.function == function for a in alternatives), function
        assert all(m.edits or m.source for m in mutants if m.function == function), "mutants state their answer"


# ----------------------------------------------------------------------------- warnings never decide

@pytest.mark.parametrize("function", ("prepare_pt2e_qat", "to_qdq"))
def test_warnings_never_fail_a_check(solution, function):
    """With every warning turned into an error, the solution still passes."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        results = run_check(A, function, solution[function], hidden=True)
    assert all(r.passed for r in results)


# ------------------------------------------------------------------------------------ the checks themselves

@pytest.mark.parametrize("function", FUNCTIONS)
def test_cases_are_deterministic(function):
    """The worker and the judge each call case.make(): both must build the same weights and data."""
    check = get_check(A, function)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in check.cases(False) + check.cases(True):
            a, b = case.make(), case.make()
            for x, y in zip(a, b):
                if isinstance(x, torch.nn.Module):
                    sa, sb = x.state_dict(), y.state_dict()
                    assert sa.keys() == sb.keys(), case.label
                    assert all(torch.equal(sa[k], sb[k]) for k in sa if isinstance(sa[k], torch.Tensor)), case.label
                    if isinstance(x, torch.fx.GraphModule):
                        assert str(x.graph) == str(y.graph), case.label


def test_a_prepared_copy_refuses_train_and_eval_as_the_learner_s_own_does():
    """GraphModule's deepcopy drops torchao's guards; the cases put them back, so `.train()` fails as it would."""
    (prepared,) = get_check(A, "to_qdq").cases(False)[0].make()
    for method in (prepared.train, prepared.eval):
        with pytest.raises(NotImplementedError, match="move_exported_model_to_train"):
            method()


def test_the_diagnostic_graphs_give_every_usual_mistake_its_own_count():
    """Each wrong way of counting gives a number no other way gives, so the hint can name the mistake."""
    case = get_check(A, "pt2e_fake_quant_count").cases(False)[0]
    with pytest.raises(AssertionError):
        checks._count_judge(case, -1)
    counts = dict(checks._CACHE[("pt2e_fake_quant_count", case.label, case.salt)])
    # every target is the root's here: getattr finds them all; the nested graph tells that mistake apart
    assert counts.pop("root_only") == counts["expected"]
    assert counts["expected"] == 7 and len(set(counts.values())) == len(counts), counts
    case = get_check(A, "qdq_counts").cases(False)[1]
    with pytest.raises(AssertionError):
        checks._qdq_count_judge(case, [-1, -1])
    counts = dict(checks._CACHE[("qdq_counts", case.label, case.salt)])   # a copy: the cache serves the judge too
    # no ATen quantize here: '.quantize_per' in the text is right; the graph with aten_ops tells it apart
    assert counts.pop("dotted_text") == counts["expected"]
    # distinct targets give per-tensor-only's count here: the converted QATNet, checked first, tells them apart
    unique = counts.pop("unique")
    assert counts["expected"] == [4, 5] and len({tuple(v) for v in counts.values()}) == len(counts), counts
    assert unique == counts["per_tensor_only"]
    case = get_check(A, "qdq_counts").cases(False)[0]
    with pytest.raises(AssertionError):
        checks._qdq_count_judge(case, [-1, -1])
    counts = checks._CACHE[("qdq_counts", case.label, case.salt)]
    assert [v for v in counts.values() if v == counts["unique"]] == [counts["unique"]], counts


def test_the_nested_and_the_aten_graphs_give_their_mistake_a_count_of_its_own():
    """getattr(prepared, target) and '.quantize_per' in the target's text each give a count no other mistake
    gives on the hidden graph made for them."""
    hidden = {c.label: c for c in get_check(A, "pt2e_fake_quant_count").all_cases(True)}
    case = next(c for label, c in hidden.items() if "'blk.fq'" in label)
    with pytest.raises(AssertionError):
        checks._count_judge(case, -1)
    counts = checks._CACHE[("pt2e_fake_quant_count", case.label, case.salt)]
    assert (counts["expected"], counts["root_only"]) == (3, 1)
    assert [k for k, v in counts.items() if v == 1] == ["root_only"], counts
    hidden = {c.label: c for c in get_check(A, "qdq_counts").all_cases(True)}
    case = next(c for label, c in hidden.items() if "aten.quantize_per_tensor.default" in label)
    with pytest.raises(AssertionError):
        checks._qdq_count_judge(case, [-1, -1])
    counts = checks._CACHE[("qdq_counts", case.label, case.salt)]
    assert counts["expected"] == [4, 5] and counts["dotted_text"] == [5, 5]
    assert [k for k, v in counts.items() if v == [5, 5]] == ["dotted_text"], counts


def test_a_prepared_model_returned_as_is_is_not_converted():
    check = get_check(A, "to_qdq")
    case = check.cases(False)[0]
    result = judge_evidence(check, case, collect_evidence(check, lambda p: p, case))
    assert not result.passed and "fake-quantize" in result.message and "convert_pt2e" in result.hint


# ---------------------------------------------------------------------- torchao facts the lesson relies on

def test_torchao_s_fake_quant_class_is_not_torch_ao_s():
    assert checks.FakeQuantizeBase is not torch.ao.quantization.FakeQuantizeBase


def test_a_quantizer_without_is_qat_inserts_observers_and_a_qat_one_fake_quants_on_weights_too():
    (ptq,) = get_check(A, "pt2e_fake_quant_count").cases(True)[2].make()
    kinds = [type(ptq.get_submodule(n.target)) for n in ptq.graph.nodes if n.op == "call_module"]
    assert not any(issubclass(k, checks.FakeQuantizeBase) for k in kinds)
    assert any(issubclass(k, checks.ObserverBase) for k in kinds)
    qat = checks._prepared("QATNet")
    reads = [checks._reads(n) for n in qat.graph.nodes if n.op == "call_module"
             and isinstance(qat.get_submodule(n.target), checks.FakeQuantizeBase)]
    assert sum(r.startswith("the weight ") for r in reads) == 3 and len(reads) == 6, reads
