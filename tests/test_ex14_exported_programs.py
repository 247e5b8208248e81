"""Does the ex14_exported_programs check library pass the solution, fail the stubs and kill every mutant with its
hint, with save_and_reload's files written under the temporary folder (the worker's private scratch folder) and
removed after? Plus the torch behaviour lesson 14 and the task text rely on.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from autograder.checks.errors import hint_for_error
from autograder.checks.ex14_exported_programs import cases, models
from autograder.checks.framework import collect_evidence, get_check, judge_evidence
from autograder.coursedata.exercises import exercise, functions
from fxcourse_instructor.mutants import load
from exercise_suite import assert_cell_contract, exercise_tests

A = "ex14_exported_programs"
MUTANTS = load(A)[0]

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py

# fixtures nb, solution; the tests every exercise has (tests/exercise_suite.py), evidence of the visible cases
globals().update(exercise_tests(A, contract=False, quizzes=4, evidence_cases=lambda check: check.cases(False)))


def test_the_notebook_follows_the_cell_contract_and_the_curriculum_names(nb):
    assert functions(A) == ("save_and_reload", "module_of_nodes", "decompose_except", "unflatten_module")
    assert exercise(A).part == 3 and exercise(A).lesson == "14_exported_programs"
    assert_cell_contract(nb, A, quizzes=4)


def test_the_pitfalls_of_the_lesson_are_among_the_mutants():
    whys = " | ".join(m.why for m in MUTANTS).lower()
    for needle in ("torch.save", "suffix", "dynamic batch", "stack's key", "innermost", "empty table", "keyerror",
                   "getattr", "ep.module()"):
        assert needle in whys, needle


def test_save_cases_write_under_the_temporary_folder_and_the_evidence_removes_their_folder(solution, tmp_path,
                                                                                           monkeypatch):
    """The worker's TMPDIR is its scratch folder: a case's path lies under tempfile.gettempdir() as it is when the
    case is made, and once the evidence has read the file, the case's folder is gone and nothing else."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    (tmp_path / "keep.txt").write_text("the learner's own file")
    check = get_check(A, "save_and_reload")
    for case in check.all_cases(True):
        ep, path = case.make()
        assert Path(path).resolve().is_relative_to(tmp_path) and not Path(path).name.startswith(cases.FOLDER)
        evidence = check.evidence(solution["save_and_reload"](ep, path), (ep, path))
        assert evidence["file"] and evidence["loads"] == "ok" and not evidence["same"]
        assert not Path(path).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_a_path_not_written_is_named_with_what_the_folder_holds(solution):
    check = get_check(A, "save_and_reload")
    case = check.cases(False)[0]

    def elsewhere(ep, path):
        other = Path(path).with_name("copy.pt2")
        torch.export.save(ep, other)
        return torch.export.load(other)

    result = judge_evidence(check, case, collect_evidence(check, elsewhere, case))
    assert not result.passed and "copy.pt2" in result.message and "no file at the path" in result.message


def test_the_models_have_what_the_cases_claim():
    ep = models.program("Shared(5)", strict=True)
    stacks = [n.meta["nn_module_stack"] for n in ep.graph.nodes if n.op == "call_function"]
    keys = [k for s in stacks for k in s]
    names = {v[0] for s in stacks for v in s.values()}
    assert not set(keys) & (names - {""}), "strict export's stack keys are not the qualified names"
    assert sum(1 for s in stacks if list(s.values())[-1][0] == "fc") == 2
    assert models.RandomTower(3).deepest().count(".") >= 2 and models.RandomTower(9).deepest().count(".") >= 1
    stacks = {n.name: [v[0] for v in n.meta["nn_module_stack"].values()]
              for n in models.program("Borrower(4)", strict=True).graph.nodes if n.op == "call_function"}
    assert stacks["hardswish"] == ["", "blocks.0", "act"] and stacks["hardswish_1"] == ["", "blocks.1", "act"]
    ep = models.program("Prefixed(4)")
    assert [n for n, _ in torch.export.unflatten(ep).named_modules()][1:] == ["head_pre", "head"]
    assert {"aten.rsub.Tensor", "aten.rsub.Scalar"} <= {str(n.target) for n in ep.graph.nodes}
    for name in models.MODELS:   # no sym_size node but Sizes's: no other stack with torch's stand-in entry
        ep = models.program(name, dynamic=True)
        sizes = [n.meta["nn_module_stack"] for n in ep.graph.nodes if str(n.target) == "aten.sym_size.int"]
        assert sizes == [] if name != "Sizes(4)" else \
            [{"_empty_nn_module_stack_from_metadata_hook": ("_empty_nn_module_stack_from_metadata_hook",) * 2}]


def test_unflatten_orders_a_submodule_s_inputs_by_the_flat_graph_unless_its_signature_is_preserved():
    """What lesson 14 and the Pair case rely on: without preserve_module_call_signature the unflattened `mix`
    takes (x, tanh), the order the flat graph first uses them; with it, mix's own (a, b)."""
    m, x = models.model("Pair(4)")
    (a, b), want = models.submodule_io("Pair(4)", "mix", [x])[0]
    plain = torch.export.unflatten(models.program("Pair(4)")).mix
    kept = torch.export.unflatten(models.program("Pair(4)", preserve=("mix",))).mix
    with torch.no_grad():
        assert not torch.allclose(plain(a, b), want) and torch.allclose(plain(b, a), want)
        assert torch.allclose(kept(a, b), want)


def test_an_empty_table_decomposes_nothing_and_the_default_table_reaches_core_aten():
    ep = models.program("Shared(5)")
    before = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert [str(n.target) for n in ep.run_decompositions({}).graph.nodes if n.op == "call_function"] == before
    after = {str(n.target) for n in ep.run_decompositions().graph.nodes if n.op == "call_function"}
    assert "aten.linear.default" in before and "aten.linear.default" not in after


def test_dim_auto_specializes_a_batch_of_one():
    from torch.export import Dim, export
    ep = export(nn.Linear(3, 2), (torch.randn(1, 3),), dynamic_shapes=({0: Dim.AUTO},))
    x = [n for n in ep.graph.nodes if n.op == "placeholder"][-1]
    assert tuple(x.meta["val"].shape) == (1, 3)
    ep = export(nn.Linear(3, 2), (torch.randn(2, 3),), dynamic_shapes=({0: Dim.AUTO},))
    x = [n for n in ep.graph.nodes if n.op == "placeholder"][-1]
    assert isinstance(x.meta["val"].shape[0], torch.SymInt)


@pytest.mark.parametrize("make, said", [
    (lambda: getattr(torch.export.unflatten(models.program("Tower(6)")), "blocks.1"), "get_submodule"),
    (lambda: _del_gelu(), "table.pop(op, None)"),
    (lambda: _pickled(), "torch.export.save(ep, path)"),
], ids=["getattr with dots", "del a missing overload", "torch.save and torch.load"])
def test_exported_program_errors_get_their_hint(make, said):
    with pytest.raises(Exception) as raised:
        make()
    hint = hint_for_error(type(raised.value).__name__, str(raised.value), "line 3:     del table[op]")
    assert hint and said in hint, (type(raised.value).__name__, str(raised.value)[:200], hint)


def _pickled():
    import io
    buffer = io.BytesIO()
    torch.save(models.program("Tower(6)"), buffer)   # pickling works; unpickling the program does not
    buffer.seek(0)
    torch.load(buffer, weights_only=False)


def _del_gelu():
    table = torch.export.default_decompositions()
    del table[torch.ops.aten.gelu.default]


def test_a_case_folder_is_named_after_the_process():
    folder = cases.case_folder()
    try:
        assert folder.name.startswith(f"{cases.FOLDER}{os.getpid()}_") and folder.is_dir()
    finally:
        folder.rmdir()
