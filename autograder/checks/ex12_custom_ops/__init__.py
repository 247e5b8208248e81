"""Checks of ex12_custom_ops: register_scaled_gelu, count_op_nodes, replace_with_op.

Every case of register_scaled_gelu hands out a namespace the process has not used (defining a name again would
replace the operator); the other checks use the check library's own operators (models.operators()), registered
once per process on first use.

This module is the worker's side of the checks (`PARTS`: cases, evidence, `unchanged`); the judges, the
references and `CHECKS` are in `judging`, loaded on first use of any other name (the jailed worker never does).
"""
from __future__ import annotations

from autograder.checks.framework import Part
from autograder.checks.keyring import forward
from autograder.checks.ex12_custom_ops.cases import _count_cases, _register_cases, _replace_cases
from autograder.checks.ex12_custom_ops.evidence import _count_evidence, _register_evidence, _replace_evidence

__all__ = ["PARTS"]

PARTS = {
    "register_scaled_gelu": Part("register_scaled_gelu", _register_cases, _register_evidence),
    "count_op_nodes": Part("count_op_nodes", _count_cases, _count_evidence),
    "replace_with_op": Part("replace_with_op", _replace_cases, _replace_evidence),
}


__getattr__ = forward(__name__)
