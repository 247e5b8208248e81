"""Checks of ex13_inductor_passes: make_pattern_pass, apply_pattern_pass, compile_with_post_grad_pass.

The references are the course's own passes (`models.reference_pass`), applied to ATen graphs traced as inductor
receives them. compile_with_post_grad_pass is handed a pass that records each of its runs, so the judge knows
whether inductor ran it, how often and with how many replacements; the cases restore inductor's config and reset
dynamo after each compile.
"""
from __future__ import annotations

from autograder.checks.framework import Check
from autograder.checks.ex13_inductor_passes.cases import _apply_cases, _compile_cases, _make_cases
from autograder.checks.ex13_inductor_passes.evidence import _apply_evidence, _compile_evidence, _make_evidence
from fxcourse_instructor.ex13_inductor_passes.judges import (_apply_judge, _compile_judge, _make_judge, explain_compile_raise,
                                                           explain_make_raise)

__all__ = ["CHECKS"]


CHECKS = {
    "make_pattern_pass": Check("make_pattern_pass", _make_cases, _make_evidence, _make_judge,
                               explain_raise=explain_make_raise),
    "apply_pattern_pass": Check("apply_pattern_pass", _apply_cases, _apply_evidence, _apply_judge),
    "compile_with_post_grad_pass": Check("compile_with_post_grad_pass", _compile_cases, _compile_evidence,
                                         _compile_judge, unchanged="always", explain_raise=explain_compile_raise),
}
