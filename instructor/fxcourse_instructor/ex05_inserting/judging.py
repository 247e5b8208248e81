"""Checks of ex05_inserting: insert_after, remove_dropout, record_shapes, linear_flops.

Every pass is judged on structure (which nodes remain, what they target, who reads whom, graph.lint()) and
on numbers (outputs on seeded inputs against a reference rebuilt here). The two analyses are judged against
an interpreter written here that runs the graph node by node.
"""
from __future__ import annotations

from autograder.checks.framework import Check
from autograder.checks.evidence import stale_code as _stale
from autograder.checks.ex05_inserting.models import ReshapeNet, ShapeZoo
from autograder.checks.ex05_inserting.cases import _drop_cases, _flops_cases, _insert_cases, _shape_cases
from fxcourse_instructor.ex05_inserting.references import reference_insert_after, reference_linear_flops, reference_shapes
from autograder.checks.ex05_inserting.evidence import (
    _drop_evidence, _flops_evidence, _insert_evidence, _shape_evidence,
)
from fxcourse_instructor.ex05_inserting.judges import (
    _drop_judge, _drop_raise, _flops_judge, _insert_judge, _insert_raise, _shape_judge, _shape_raise, EXPECTED_ERRORS,
    reference_remove_dropout,
)

__all__ = [
    "CHECKS",
    "EXPECTED_ERRORS",
    "ReshapeNet",
    "ShapeZoo",
    "_stale",
    "reference_insert_after",
    "reference_linear_flops",
    "reference_remove_dropout",
    "reference_shapes",
]


CHECKS = {
    "insert_after": Check("insert_after", _insert_cases, _insert_evidence, _insert_judge,
                          explain_raise=_insert_raise),
    "remove_dropout": Check("remove_dropout", _drop_cases, _drop_evidence, _drop_judge,
                            explain_raise=_drop_raise),
    "record_shapes": Check("record_shapes", _shape_cases, _shape_evidence, _shape_judge, unchanged="always",
                           explain_raise=_shape_raise),
    "linear_flops": Check("linear_flops", _flops_cases, _flops_evidence, _flops_judge, unchanged="always"),
}
