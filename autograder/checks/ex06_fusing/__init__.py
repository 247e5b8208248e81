"""Checks of ex06_fusing: fuse_linear_pair, fuse_consecutive_linears, fold_bn_into_conv, fuse_conv_bn.

The judge never fuses anything itself: the eager model is the oracle for numbers, and the expected
structure (which Linear calls remain, which BatchNorm2d calls remain) comes from the fusion rules
applied to the original graph.

This module is the worker's side of the checks (`PARTS`: cases, evidence, `unchanged`); the judges, the
references and `CHECKS` are in `judging`, loaded on first use of any other name (the jailed worker never does).
"""
from __future__ import annotations

from autograder.checks.framework import Part
from autograder.checks.keyring import forward
from autograder.checks.ex06_fusing.cases import _chains_cases, _fold_cases, _fuse_cases, _pair_cases
from autograder.checks.ex06_fusing.evidence import _chains_evidence, _fold_evidence, _fuse_evidence, _pair_evidence

__all__ = ["PARTS"]

PARTS = {
    "fuse_linear_pair": Part("fuse_linear_pair", _pair_cases, _pair_evidence, "always"),
    "fuse_consecutive_linears": Part("fuse_consecutive_linears", _chains_cases, _chains_evidence),
    "fold_bn_into_conv": Part("fold_bn_into_conv", _fold_cases, _fold_evidence, "always"),
    "fuse_conv_bn": Part("fuse_conv_bn", _fuse_cases, _fuse_evidence, "on_raise"),
}


__getattr__ = forward(__name__)
