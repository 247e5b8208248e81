"""Checks of ex06_fusing: fuse_linear_pair, fuse_consecutive_linears, fold_bn_into_conv, fuse_conv_bn.

The judge never fuses anything itself: the eager model is the oracle for numbers, and the expected
structure (which Linear calls remain, which BatchNorm2d calls remain) comes from the fusion rules
applied to the original graph.
"""
from __future__ import annotations

from autograder.checks.framework import Check
from autograder.checks.ex06_fusing.cases import _chains_cases, _fold_cases, _fuse_cases, _pair_cases
from fxcourse_instructor.ex06_fusing.references import _reference_fold_bn_into_conv, _reference_fuse_linear_pair
from autograder.checks.ex06_fusing.evidence import (
    _chains_evidence, _fold_evidence, _fuse_evidence, _pair_evidence, _probe,
)
from fxcourse_instructor.ex06_fusing.chains import _chains_judge, _chains_raise
from fxcourse_instructor.ex06_fusing.judges import (
    _fold_judge, _fold_raise, _fuse_judge, _fuse_raise, _pair_judge, _randomize_bn,
)

__all__ = ["CHECKS", "_probe", "_randomize_bn"]


CHECKS = {
    "fuse_linear_pair": Check("fuse_linear_pair", _pair_cases, _pair_evidence, _pair_judge, unchanged="always"),
    "fuse_consecutive_linears": Check("fuse_consecutive_linears", _chains_cases, _chains_evidence, _chains_judge,
                                      helpers={"fuse_linear_pair": _reference_fuse_linear_pair},
                                      explain_raise=_chains_raise),
    "fold_bn_into_conv": Check("fold_bn_into_conv", _fold_cases, _fold_evidence, _fold_judge, unchanged="always",
                               explain_raise=_fold_raise),
    "fuse_conv_bn": Check("fuse_conv_bn", _fuse_cases, _fuse_evidence, _fuse_judge, unchanged="on_raise",
                          helpers={"fold_bn_into_conv": _reference_fold_bn_into_conv}, explain_raise=_fuse_raise),
}
