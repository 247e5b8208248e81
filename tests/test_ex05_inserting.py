"""ex05_inserting: the solution passes every case, every mutant is killed with its hint, every alternative
passes, the released stubs score nothing, and the checks themselves notice what they claim to notice."""
from __future__ import annotations

import pytest
import torch
import torch.fx as fx

from autograder.checks import ex05_inserting as checks
from autograder.coursedata.exercises import functions
from autograder.course.notebook import answer_cells, grade_id, stub_solution
from exercise_suite import exercise_tests
from fxplayground import DropoutNet, ThreeReluNet, TinyNet

A = "ex05_inserting"
FUNCTIONS = functions(A)

# fixtures nb, solution; the tests every exercise has (tests/exercise_suite.py) (near misses included)
globals().update(exercise_tests(A))


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_function_has_visible_and_hidden_cases(function):
    check = checks.CHECKS[function]
    assert check.cases(False) and len(check.cases(True)) >= 3


def test_stub_keeps_the_dropout_tuples(nb):
    cell = next(c for c in answer_cells(nb) if grade_id(c) == "remove_dropout")
    stub = stub_solution(cell.source)
    assert "DROPOUT_MODULES = (" in stub and "NotImplementedError" in stub


def test_solution_raises_keyerror_naming_the_node(solution):
    with pytest.raises(KeyError, match="fc9"):
        solution["insert_after"](fx.symbolic_trace(TinyNet()), "fc9", torch.tanh)


def test_insert_after_on_the_input_rewires_both_users(solution):
    gm = solution["insert_after"](fx.symbolic_trace(ThreeReluNet()), "x", torch.tanh)
    x = next(n for n in gm.graph.nodes if n.op == "placeholder")
    assert [u.target for u in x.users] == [torch.tanh]
    new = next(iter(x.users))
    assert {u.name for u in new.users} == {"fc1", "add"}


def test_remove_dropout_result_matches_eval_model(solution):
    torch.manual_seed(0)
    model = DropoutNet()  # train mode: F.dropout is traced with training=True
    gm = solution["remove_dropout"](fx.symbolic_trace(model))
    x = torch.randn(5, 6)
    assert torch.allclose(gm(x), model.eval()(x))
    assert not any(isinstance(m, torch.nn.Dropout) for m in gm.modules())


def test_reference_answers_agree_with_the_solution(solution):
    model = checks.ShapeZoo()
    x = torch.randn(5, 4)
    assert solution["record_shapes"](fx.symbolic_trace(model), x) == checks.reference_shapes(
        fx.symbolic_trace(model), x)
    reshaped = checks.ReshapeNet()
    y = torch.randn(2, 12)
    # fc: rows 2*3, 4 -> 5; out: rows 2, 15 -> 3
    assert checks.reference_linear_flops(fx.symbolic_trace(reshaped), y) == 2 * 6 * 4 * 5 + 2 * 2 * 15 * 3
    assert solution["linear_flops"](fx.symbolic_trace(reshaped), y) == 420


def test_record_shapes_excludes_non_tensors_and_output():
    gm = fx.symbolic_trace(checks.ShapeZoo())
    shapes = checks.reference_shapes(gm, torch.randn(5, 4))
    assert "output" not in shapes and "size" not in shapes and "chunk" not in shapes
    assert shapes["x"] == (5, 4) and shapes["scale"] == (3,) and shapes["sum_1"] == ()


def test_evidence_is_plain_data():
    from autograder.checks.framework import plain
    for function in FUNCTIONS:
        check = checks.CHECKS[function]
        for case in check.cases(True)[:2]:
            args = case.make()
            ref = {"insert_after": lambda a: checks.reference_insert_after(*a),
                   "remove_dropout": lambda a: checks.reference_remove_dropout(*a),
                   "record_shapes": lambda a: checks.reference_shapes(*a),
                   "linear_flops": lambda a: checks.reference_linear_flops(*a)}[function](args)
            plain(check.evidence(ref, args))


def test_stale_code_is_detected():
    gm = fx.symbolic_trace(TinyNet())
    relu = next(n for n in gm.graph.nodes if n.target is torch.relu)
    relu.target = torch.sigmoid
    assert checks._stale(gm)
    gm.recompile()
    assert not checks._stale(gm)


def test_no_case_expects_an_error_unless_the_framework_supports_it():
    raising = [c for f in FUNCTIONS for h in (False, True) for c in checks.CHECKS[f].cases(h) if "raises" in c.data]
    assert bool(raising) == checks.EXPECTED_ERRORS

