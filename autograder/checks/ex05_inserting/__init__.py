"""Checks of ex05_inserting: insert_after, remove_dropout, record_shapes, linear_flops.

Every pass is judged on structure (which nodes remain, what they target, who reads whom, graph.lint()) and
on numbers (outputs on seeded inputs against a reference rebuilt here). The two analyses are judged against
an interpreter written here that runs the graph node by node.

This module is the worker's side of the checks (`PARTS`: cases, evidence, `unchanged`); the judges, the
references and `CHECKS` are in `judging`, loaded on first use of any other name (the jailed worker never does).
"""
from __future__ import annotations

from autograder.checks.framework import Part
from autograder.checks.keyring import forward
from autograder.checks.ex05_inserting.cases import _drop_cases, _flops_cases, _insert_cases, _shape_cases
from autograder.checks.ex05_inserting.evidence import _drop_evidence, _flops_evidence, _insert_evidence, _shape_evidence

__all__ = ["PARTS"]

PARTS = {
    "insert_after": Part("insert_after", _insert_cases, _insert_evidence),
    "remove_dropout": Part("remove_dropout", _drop_cases, _drop_evidence),
    "record_shapes": Part("record_shapes", _shape_cases, _shape_evidence, "always"),
    "linear_flops": Part("linear_flops", _flops_cases, _flops_evidence, "always"),
}


__getattr__ = forward(__name__)
