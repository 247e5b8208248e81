"""Does the ex11_pt2e check library pass the solution, fail the stubs and never let a torch or torchao warning
decide a verdict? Plus the torchao 0.18 behaviour lesson 11 and the statement rely on.

Each mutant and alternative runs here as its own test (tests/test_mutants.py then skips this exercise).
"""
from __future__ import annotations

import io
import warnings
from pathlib import Path

import pytest
import torch

from autograder.checks import ex11_pt2e as checks
from autograder.checks.framework import collect_evidence, get_check, judge_evidence, run_check
from autograder.coursedata.exercises import exercise, functions
from autograder.coursedata.mutants import load, run_answer
from autograder.grader.validate import judge_alternative, judge_mutant
from autograder.grader.notebook import answer_cells, answer_namespace, grade_id, read_notebook, stub_solution
from autograder.grader.notebook import test_cells as notebook_test_cells

A = "ex11_pt2e"
ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions" / A / f"{A}.ipynb"
FUNCTIONS = functions(A)
MUTANTS, ALTERNATIVES = load(A)

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


@pytest.fixture(scope="module")
def nb():
    return read_notebook(SOLUTION)


@pytest.fixture(scope="module")
def solution(nb):
    return answer_namespace(nb)


# ------------------------------------------------------------------------------------------- contract

def test_the_notebook_follows_the_cell_contract_and_the_curriculum_names(nb):
    assert FUNCTIONS == ("prepare_pt2e_qat", "pt2e_fake_quant_count", "pt2e_finetune", "to_qdq", "qdq_counts")
    assert exercise(A).part == 2 and exercise(A).lesson == "11_pt2e_qat"
    answers = [grade_id(c) for c in answer_cells(nb)]
    tests = [grade_id(c) for c in notebook_test_cells(nb)]
    assert [a for a in answers if not a.startswith("quiz_")] == list(FUNCTIONS)
    assert [t for t in tests if not t.startswith("test_quiz_")] == [f"test_{f}" for f in FUNCTIONS]
    quizzes = [a for a in answers if a.startswith("quiz_")]
    assert len(quizzes) >= 4 and [f"test_{q}" for q in quizzes] == [t for t in tests if t.startswith("test_quiz_")]
    ids = [c.id for c in nb.cells]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("function", FUNCTIONS)
def test_solution_passes_visible_and_hidden_cases(solution, function):
    passed, text = run_answer(A, function, solution)
    assert passed, text


@pytest.mark.parametrize("function", FUNCTIONS)
def test_released_stub_fails_every_case(nb, function):
    """The stub raises NotImplementedError, and every case (visible and hidden) says so."""
    cell = next(c for c in answer_cells(nb) if grade_id(c) == function)
    ns = answer_namespace(nb, {function: stub_solution(cell.source)})
    check = get_check(A, function)
    for hidden in (False, True):
        for case in check.cases(hidden):
            result = judge_evidence(check, case, collect_evidence(check, ns[function], case))
            assert not result.passed, f"the stub passes {case.label}"
            assert "not implemented" in result.message


def test_every_function_has_five_mutants_and_an_alternative():
    mutants, alternatives = load(A)
    for function in FUNCTIONS:
        assert sum(m.function == function for m in mutants) >= 5, function
        assert any(a.function == function for a in alternatives), function
        assert all(m.edits for m in mutants if m.function == function), "mutants state edits"


@pytest.mark.parametrize("mutant", MUTANTS, ids=[f"{m.function}: {m.why}" for m in MUTANTS])
def test_mutant_is_killed_with_its_hint(nb, mutant):
    outcome = judge_mutant(A, nb, mutant)
    assert outcome.ok, outcome.detail


@pytest.mark.parametrize("alternative", ALTERNATIVES, ids=[f"{a.function}: {a.why}" for a in ALTERNATIVES])
def test_alternative_passes(nb, alternative):
    outcome = judge_alternative(A, nb, alternative)
    assert outcome.ok, outcome.detail


# ----------------------------------------------------------------------------- warnings never decide

@pytest.mark.parametrize("function", ("prepare_pt2e_qat", "to_qdq"))
def test_warnings_never_fail_a_check(solution, function):
    """With every warning turned into an error, the solution still passes."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        results = run_check(A, function, solution[function], hidden=True)
    assert all(r.passed for r in results)


# ------------------------------------------------------------------------------------ the checks themselves

def test_evidence_is_plain_data(solution):
    """Evidence crosses a process boundary in hardened grading: it must survive weights_only loading."""
    for function in FUNCTIONS:
        check = get_check(A, function)
        for case in check.cases(False):
            ev = collect_evidence(check, solution[function], case)
            if check.unchanged:
                assert set(ev) == {"__value__", "__before__", "__after__"}, set(ev)
                ev = ev["__value__"]
            assert not (isinstance(ev, dict) and any(str(k).startswith("__") for k in ev)), ev
            buf = io.BytesIO()
            torch.save(ev, buf)
            buf.seek(0)
            torch.load(buf, weights_only=True)


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
    counts = checks._CACHE[("pt2e_fake_quant_count", case.label)]
    assert counts["expected"] == 7 and len(set(counts.values())) == len(counts), counts
    case = get_check(A, "qdq_counts").cases(False)[1]
    with pytest.raises(AssertionError):
        checks._qdq_count_judge(case, [-1, -1])
    counts = checks._CACHE[("qdq_counts", case.label)]
    assert counts["expected"] == [4, 5] and len({tuple(v) for v in counts.values()}) == len(counts), counts


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
