"""Does the ex01_tracing check library pass the solution, fail the stubs, and kill every mutant with its hint?"""
from __future__ import annotations

import torch

from autograder.checks.framework import collect_evidence, get_check, judge_evidence
from exercise_suite import exercise_tests

A = "ex01_tracing"

# fixtures nb, solution; the tests every exercise has (tests/exercise_suite.py)
globals().update(exercise_tests(A, evidence_cases=lambda check: check.all_cases(True), evidence_unwrapped=True))


# ------------------------------------------------------------------- what is special in these checks

def _first_failure(function: str, source: str) -> str:
    ns = {"torch": torch, "fx": torch.fx}
    exec(source, ns)  # noqa: S102 (test code)
    check = get_check(A, function)
    for case in check.all_cases(True):
        result = judge_evidence(check, case, collect_evidence(check, ns[function], case))
        if not result.passed:
            return result.text
    return ""


def test_outputs_match_sees_which_comparison_the_answer_called():
    """The hints about torch.equal and rtol fire on what the answer called, not on which case failed."""
    allclose = ("def outputs_match(model, gm, *inputs, atol=0.0):\n"
                "    with torch.no_grad():\n"
                "        a, b = model(*inputs), gm(*inputs)\n"
                "    return a.shape == b.shape and torch.allclose(a, b, atol=atol)\n")
    assert "use torch.equal" in _first_failure("outputs_match", allclose)
    # exact with torch.equal when atol == 0, but its default atol is not 0: told the default, not torch.equal
    default = allclose.replace("atol=0.0):", "atol=1e-5):").replace(
        "torch.allclose(a, b, atol=atol)", "(torch.equal(a, b) if atol == 0 else torch.allclose(a, b, rtol=0, atol=atol))")
    text = _first_failure("outputs_match", default)
    assert "atol defaults to 0.0" in text and "use torch.equal" not in text


def test_outputs_match_blames_no_grad_only_for_a_module_run_with_autograd_on():
    sabotaged = ("def outputs_match(model, gm, *inputs, atol=0.0):\n"
                 "    with torch.no_grad():\n"
                 "        a, b = model(*inputs), gm(*inputs)\n"
                 "    return a.shape == b.shape and (bool((a - b).abs().max() <= atol) or a.shape == (3, 2))\n")
    text = _first_failure("outputs_match", sabotaged)
    assert text and "ran with autograd on" not in text and "Hint" not in text
    forgot = sabotaged.replace("    with torch.no_grad():\n        a, b", "    if True:\n        a, b").replace(
        " or a.shape == (3, 2)", "")
    assert "model and gm ran with autograd on" in _first_failure("outputs_match", forgot)
