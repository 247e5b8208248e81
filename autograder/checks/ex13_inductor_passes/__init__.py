"""Checks of ex13_inductor_passes: make_pattern_pass, apply_pattern_pass, compile_with_post_grad_pass.

The references are the course's own passes (`models.reference_pass`), applied to ATen graphs traced as inductor
receives them. compile_with_post_grad_pass is handed a pass that records each of its runs, so the judge knows
whether inductor ran it, how often and with how many replacements; the cases restore inductor's config and reset
dynamo after each compile.

This module is the worker's side of the checks (`PARTS`: cases, evidence, `unchanged`); the judges, the
references and `CHECKS` are in `judging`, loaded on first use of any other name (the jailed worker never does).
"""
from __future__ import annotations

from autograder.checks.framework import Part
from autograder.checks.keyring import forward
from autograder.checks.ex13_inductor_passes.cases import _apply_cases, _compile_cases, _make_cases
from autograder.checks.ex13_inductor_passes.evidence import _apply_evidence, _compile_evidence, _make_evidence

__all__ = ["PARTS"]

PARTS = {
    "make_pattern_pass": Part("make_pattern_pass", _make_cases, _make_evidence),
    "apply_pattern_pass": Part("apply_pattern_pass", _apply_cases, _apply_evidence),
    "compile_with_post_grad_pass": Part("compile_with_post_grad_pass", _compile_cases, _compile_evidence, "always"),
}


__getattr__ = forward(__name__)
