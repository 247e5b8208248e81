"""Does the ex10_export check library pass the solution, fail the stubs, and kill every mutant with its hint?"""
from __future__ import annotations

import io
import warnings
from pathlib import Path

import pytest
import torch
from torch.export import Dim, export

from autograder.checks import ex10_export as checks
from autograder.checks.framework import collect_evidence, get_check, judge_evidence
from autograder.coursedata.exercises import functions
from autograder.coursedata.mutants import load, run_answer
from autograder.grader.validate import judge_alternative, judge_mutant, mutant_cell
from autograder.grader.notebook import answer_cells, answer_namespace, grade_id, read_notebook, stub_solution
from autograder.grader.notebook import test_cells as notebook_test_cells

A = "ex10_export"
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


def test_the_notebook_follows_the_cell_contract(nb):
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


def test_every_test_cell_of_the_solution_passes(nb, solution):
    ns = dict(solution)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cell in notebook_test_cells(nb):
            exec(compile(cell.source, f"<{grade_id(cell)}>", "exec"), ns)  # noqa: S102 (course code)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_released_stub_fails_every_case(nb, function):
    cell = next(c for c in answer_cells(nb) if grade_id(c) == function)
    ns = answer_namespace(nb, {function: stub_solution(cell.source)})
    check = get_check(A, function)
    for hidden in (False, True):
        for case in check.cases(hidden):
            result = judge_evidence(check, case, collect_evidence(check, ns[function], case))
            assert not result.passed and "not implemented" in result.message, case.label


@pytest.mark.parametrize("mutant", MUTANTS, ids=[f"{m.function}: {m.why}" for m in MUTANTS])
def test_mutant_is_killed_with_its_hint(nb, mutant):
    outcome = judge_mutant(A, nb, mutant)
    assert outcome.ok, outcome.detail


@pytest.mark.parametrize("alternative", ALTERNATIVES, ids=[f"{a.function}: {a.why}" for a in ALTERNATIVES])
def test_alternative_passes(nb, alternative):
    outcome = judge_alternative(A, nb, alternative)
    assert outcome.ok, outcome.detail


def test_the_pitfalls_of_the_lesson_are_among_the_mutants():
    whys = " | ".join(m.why for m in MUTANTS).lower()
    for needle in ("no recompile", "module()", "operator packet", "'x'", "core aten"):
        assert needle in whys, needle


def test_evidence_is_plain_data(solution):
    """Evidence crosses a process boundary in hardened grading: it must survive weights_only loading."""
    for function in FUNCTIONS:
        check = get_check(A, function)
        for case in check.cases(False):
            buf = io.BytesIO()
            torch.save(collect_evidence(check, solution[function], case), buf)
            buf.seek(0)
            torch.load(buf, weights_only=True)


def test_each_case_gets_its_own_copy_of_the_program(solution):
    """A pass that edits its program must not reach the next case: the cache hands out deep copies."""
    check = get_check(A, "swap_aten_op")
    case = check.cases(False)[0]
    ep, old, new = case.make()
    solution["swap_aten_op"](ep, old, new)
    again, _, _ = case.make()
    assert str(old) in checks._histogram(again.graph) and str(old) not in checks._histogram(ep.graph)


def test_the_models_have_what_the_cases_claim():
    tagger, _, _ = checks._program("Tagger(8)", dynamic=True)
    sig = tagger.graph_signature
    assert "b_gain" in sig.inputs_to_buffers and "gain" not in tagger.state_dict   # non-persistent
    assert sig.inputs_to_lifted_tensor_constants and list(sig.user_inputs) == ["inp"]
    assert any(isinstance(s, torch.SymInt) for n in tagger.graph.nodes
               if isinstance(n.meta.get("val"), torch.Tensor) for s in n.meta["val"].shape)
    sums = checks._histogram(checks._program("Sums(5)")[0].graph)
    assert sums["aten.sum.default"] == 1 and sums["aten.sum.dim_IntList"] == 1
    cond = checks._histogram(checks._program("CondRouter(4)")[0].graph)
    assert "cond" in cond and "<built-in function getitem>" in cond
    assert checks.RandomStack(5).plan != checks.RandomStack(12).plan


def test_a_program_that_cannot_take_other_batches_is_caught():
    from torch.export import export
    check = get_check(A, "export_dynamic_batch")
    case = check.cases(False)[0]
    result = judge_evidence(check, case, collect_evidence(check, lambda m, x: export(m, (x,)), case))
    assert not result.passed and "dimension 0" in result.message


@pytest.mark.parametrize("make, said", [
    (lambda m, x: m(torch.randn(4, 5)), "must keep the example's size"),
    (lambda m, x: export(m, (x,), dynamic_shapes=({1: Dim("b")},)), "specialised a dimension"),
    (lambda m, x: export(m, (x,), dynamic_shapes={"x": {0: Dim("b")}}), "names of forward's arguments"),
    (lambda m, x: export(m, x), "takes the example inputs as a tuple"),
], ids=["guard failed", "specialised", "dict keys", "args not a tuple"])
def test_export_errors_get_their_hint(make, said):
    """Export's usual errors, raised by torch itself, each get the hint of their signature."""
    from autograder.checks.errors import hint_for_error
    model, x = torch.nn.Linear(3, 2), torch.randn(4, 3)
    if said == "must keep the example's size":
        model = export(model, (x,)).module()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as raised:
            make(model, x)
    hint = hint_for_error(type(raised.value).__name__, str(raised.value))
    assert hint and said in hint, (type(raised.value).__name__, str(raised.value)[:200], hint)
