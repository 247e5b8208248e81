"""ex03_replacing: the solution passes, the released stubs score zero, every mutant is caught with its hint,
every alternative passes, and the checks' own machinery (eager oracle, stash, evidence) does what it claims."""
from __future__ import annotations

import io

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from autograder.checks import ex03_replacing as checks
from autograder.checks.framework import collect_evidence, get_check, judge_evidence
from autograder.coursedata.exercises import functions
from exercise_suite import exercise_tests
from fxplayground import ThreeReluNet, TinyNet

A = "ex03_replacing"
FUNCTIONS = functions(A)

# fixtures nb, solution; the tests every exercise has (tests/exercise_suite.py)
globals().update(exercise_tests(A))


def test_every_function_has_visible_and_hidden_cases():
    for function in FUNCTIONS:
        check = get_check(A, function)
        assert len(check.cases(False)) >= 1 and len(check.cases(True)) >= 4, function


# ---------------------------------------------------------------------------- the checks' own machinery

class _HandGelu(ThreeReluNet):
    """ThreeReluNet with GELU written by hand: what the TorchFunctionMode oracle must reproduce."""

    def forward(self, x):
        h = F.gelu(self.fc1(x))
        h = F.gelu(self.fc2(h)) + x
        return self.head(F.gelu(h))


def test_eager_oracle_swaps_every_relu_form():
    torch.manual_seed(0)
    model = ThreeReluNet().eval()
    hand = _HandGelu().eval()
    hand.load_state_dict(model.state_dict())
    x = torch.randn(6, 8)
    (got,) = checks._eager(model, [x], checks.RELU_TO_GELU)
    with torch.no_grad():
        assert torch.equal(got, hand(x))
        assert not torch.allclose(got, model(x))  # the mode really changed something


def test_eager_oracle_leaves_other_relu_forms_alone_for_clamp():
    class Mixed(nn.Module):
        def forward(self, x):
            return torch.relu(x) + F.relu(x) + x.relu()

    x = torch.linspace(-3, 3, 13)
    (got,) = checks._eager(Mixed(), [x], [(torch.relu, lambda t: torch.clamp(t, min=0, max=1.0))])
    assert torch.equal(got, x.clamp(0, 1) + 2 * x.relu())


def test_evidence_is_plain_and_survives_a_process_boundary(solution):
    """Judge a round-tripped copy of the evidence, as the hardened grader does."""
    for function in FUNCTIONS:
        check = get_check(A, function)
        for case in check.cases(True)[:2]:
            ev = collect_evidence(check, solution[function], case)
            assert not (isinstance(ev, dict) and next(iter(ev)).startswith("__")), ev
            buf = io.BytesIO()
            torch.save(ev, buf)
            buf.seek(0)
            copy = torch.load(buf, weights_only=True)
            assert judge_evidence(check, case, copy).passed, (function, case.label)


def test_cases_are_deterministic():
    for function in FUNCTIONS:
        for case in get_check(A, function).cases(True):
            a, b = case.make()[0], case.make()[0]
            sa, sb = a.__dict__[checks.STASH], b.__dict__[checks.STASH]
            assert all(torch.equal(x, y) for x, y in zip(sa["inputs"], sb["inputs"]))
            assert all(torch.equal(p, q) for p, q in zip(sa["model"].parameters(), sb["model"].parameters()))


def _clamp_with_lambda(gm, max_value):
    # defined in a file, so inspect can read its source and recompile() can name the lambda
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.relu:
            node.target = lambda z: torch.clamp(z, 0, max_value)
    gm.recompile()
    return gm


def test_lambda_target_that_recompiles_is_still_caught():
    gm = _clamp_with_lambda(fx.symbolic_trace(TinyNet()), 1.0)
    assert "clamp" not in gm.code  # the trap itself, as the lesson shows it
    check = get_check(A, "relu_to_clamp")
    case = check.cases(False)[0]
    result = judge_evidence(check, case, collect_evidence(check, _clamp_with_lambda, case))
    assert not result.passed
    assert "lambda" in result.message and "generated name" in result.hint


def test_original_model_must_not_change():
    def relu_to_gelu_by_mutation(gm):
        # numbers and structure of gm are right, but the shared nn.ReLU module is turned into a GELU in place
        for node in gm.graph.nodes:
            if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.ReLU):
                module = gm.get_submodule(node.target)
                module.__class__, module.approximate = nn.GELU, "none"
        return gm

    check = get_check(A, "relu_to_gelu")
    case = check.cases(True)[1]  # SharedReluNet: only nn.ReLU modules
    result = judge_evidence(check, case, collect_evidence(check, relu_to_gelu_by_mutation, case))
    assert not result.passed and "original model" in result.message


def test_shared_parameters_checked_by_training_the_original(solution):
    """Identity of the parameters is checked, and so is the behaviour: a step on the original moves gm."""
    check = get_check(A, "linear_to_matmul")
    case = check.cases(False)[0]
    ev = collect_evidence(check, solution["linear_to_matmul"], case)
    assert not all(torch.equal(a, b) for a, b in zip(ev["outputs"], ev["stepped_outputs"]))
    ev["stepped_outputs"] = ev["outputs"]  # what a pass with copied weights would report
    result = judge_evidence(check, case, ev)
    assert not result.passed and "shared" in result.hint
