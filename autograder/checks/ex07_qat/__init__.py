"""Checks of ex07_qat: prepare_for_qat, fake_quant_count, qat_finetune, to_int8, state_dict_bytes.

Every judge rebuilds the case and runs the reference (the torch.ao.quantization FX flow) on it, then compares
plain evidence with plain evidence: the same `evidence` function describes the learner's result and the
reference's, so the two are compared field by field. References are cached per case label: they are
deterministic, and preparing a model for QAT is not free.

torch 2.13 prints DeprecationWarning/UserWarning/FutureWarning from torch.ao.quantization on every prepare
and convert; `run_check` silences learner code, and `_silent()` silences the references, so a warning never
decides a verdict.

This module is the worker's side of the checks (`PARTS`: cases, evidence, `unchanged`); the judges, the
references and `CHECKS` are in `judging`, loaded on first use of any other name (the jailed worker never does).
"""
from __future__ import annotations

from autograder.checks.framework import Part
from autograder.checks.keyring import forward
from autograder.checks.ex07_qat.cases import _count_cases, _ft_cases, _int8_cases, _prep_cases, _size_cases
from autograder.checks.ex07_qat.evidence import (
    _count_evidence, _ft_evidence, _int8_evidence, _prep_evidence, _size_evidence,
)

__all__ = ["PARTS"]

PARTS = {
    "prepare_for_qat": Part("prepare_for_qat", _prep_cases, _prep_evidence),
    "fake_quant_count": Part("fake_quant_count", _count_cases, _count_evidence, "always"),
    "qat_finetune": Part("qat_finetune", _ft_cases, _ft_evidence),
    "to_int8": Part("to_int8", _int8_cases, _int8_evidence, "always"),
    "state_dict_bytes": Part("state_dict_bytes", _size_cases, _size_evidence, "always"),
}


__getattr__ = forward(__name__)
