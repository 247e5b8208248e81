"""Checks of ex10_export: export_dynamic_batch, aten_histogram, parameter_placeholders, node_shapes, swap_aten_op.

Exporting costs a fraction of a second per model, so each process exports each case's model once (`_program`)
and hands every case a deep copy: a learner's pass that edits its program never reaches the next case. The
references read the copy the judge builds (graph signature, `node.meta["val"]`), and the numbers come from
the eager models.
"""
from __future__ import annotations

from autograder.checks.framework import Check
from autograder.checks.ex10_export.models import RandomStack
from autograder.checks.ex10_export.cases import _ep_cases, _export_cases, _program, _swap_cases
from autograder.checks.ex10_export.evidence import (
    _export_evidence, _histogram, _histogram_evidence, _params_evidence, _shapes_evidence, _swap_evidence,
)
from fxcourse_instructor.ex10_export.judges import (
    _export_judge, _export_raise, _histogram_judge, _params_judge, _shapes_judge, _swap_judge,
)

__all__ = ["CHECKS", "RandomStack", "_histogram", "_program"]


CHECKS = {
    "export_dynamic_batch": Check("export_dynamic_batch", _export_cases, _export_evidence, _export_judge,
                                  unchanged="always", explain_raise=_export_raise),
    "aten_histogram": Check("aten_histogram", _ep_cases, _histogram_evidence, _histogram_judge),
    "parameter_placeholders": Check("parameter_placeholders", _ep_cases, _params_evidence, _params_judge),
    "node_shapes": Check("node_shapes", _ep_cases, _shapes_evidence, _shapes_judge),
    "swap_aten_op": Check("swap_aten_op", _swap_cases, _swap_evidence, _swap_judge),
}
