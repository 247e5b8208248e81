"""Checks of ex12_custom_ops: register_scaled_gelu, count_op_nodes, replace_with_op.

Every case of register_scaled_gelu hands out a namespace the process has not used (defining a name again would
replace the operator); the other checks use the check library's own operators (models.operators()), registered
once per process on first use.
"""
from __future__ import annotations

from autograder.checks.framework import Check
from autograder.checks.ex12_custom_ops.cases import _count_cases, _register_cases, _replace_cases, fresh_namespace
from autograder.checks.ex12_custom_ops.evidence import _count_evidence, _register_evidence, _replace_evidence
from fxcourse_instructor.ex12_custom_ops.judges import _count_judge, _register_judge, _replace_judge, _replace_raise
from autograder.checks.ex12_custom_ops.models import operators

__all__ = ["CHECKS", "fresh_namespace", "operators"]


CHECKS = {
    "register_scaled_gelu": Check("register_scaled_gelu", _register_cases, _register_evidence, _register_judge),
    "count_op_nodes": Check("count_op_nodes", _count_cases, _count_evidence, _count_judge),
    "replace_with_op": Check("replace_with_op", _replace_cases, _replace_evidence, _replace_judge,
                             explain_raise=_replace_raise),
}
