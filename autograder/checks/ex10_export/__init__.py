"""Checks of ex10_export: export_dynamic_batch, aten_histogram, parameter_placeholders, node_shapes, swap_aten_op.

Exporting costs a fraction of a second per model, so each process exports each case's model once (`_program`)
and hands every case a deep copy: a learner's pass that edits its program never reaches the next case. The
references read the copy the judge builds (graph signature, `node.meta["val"]`), and the numbers come from
the eager models.

This module is the worker's side of the checks (`PARTS`: cases, evidence, `unchanged`); the judges, the
references and `CHECKS` are in `judging`, loaded on first use of any other name (the jailed worker never does).
"""
from __future__ import annotations

from autograder.checks.framework import Part
from autograder.checks.keyring import forward
from autograder.checks.ex10_export.cases import _ep_cases, _export_cases, _swap_cases
from autograder.checks.ex10_export.evidence import (
    _export_evidence, _histogram_evidence, _params_evidence, _shapes_evidence, _swap_evidence,
)

__all__ = ["PARTS"]

PARTS = {
    "export_dynamic_batch": Part("export_dynamic_batch", _export_cases, _export_evidence, "always"),
    "aten_histogram": Part("aten_histogram", _ep_cases, _histogram_evidence),
    "parameter_placeholders": Part("parameter_placeholders", _ep_cases, _params_evidence),
    "node_shapes": Part("node_shapes", _ep_cases, _shapes_evidence),
    "swap_aten_op": Part("swap_aten_op", _swap_cases, _swap_evidence),
}


__getattr__ = forward(__name__)
