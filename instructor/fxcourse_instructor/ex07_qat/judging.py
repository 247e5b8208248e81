"""Checks of ex07_qat: prepare_for_qat, fake_quant_count, qat_finetune, to_int8, state_dict_bytes.

Every judge rebuilds the case and runs the reference (the torch.ao.quantization FX flow) on it, then compares
plain evidence with plain evidence: the same `evidence` function describes the learner's result and the
reference's, so the two are compared field by field. References are cached per case label: they are
deterministic, and preparing a model for QAT is not free.

torch 2.13 prints DeprecationWarning/UserWarning/FutureWarning from torch.ao.quantization on every prepare
and convert; `run_check` silences learner code, and `_silent()` silences the references, so a warning never
decides a verdict.
"""
from __future__ import annotations

from autograder.checks.evidence import max_difference as _max_diff  # the tests' name for it
from autograder.checks.framework import Check
from autograder.checks.ex07_qat.cases import (
    _count_cases, _ft_cases, _handmade, _int8_cases, _prep_cases, _size_cases,
)
from autograder.checks.ex07_qat.evidence import (
    _count_evidence, _ft_evidence, _int8_evidence, _prep_evidence, _size_evidence,
)
from fxcourse_instructor.ex07_qat.references import _count_reference, _int8_reference
from fxcourse_instructor.ex07_qat.judges import (
    _count_judge, _ft_judge, _int8_judge, _loss, _prep_judge, _size_judge,
)

__all__ = ["CHECKS", "_count_reference", "_handmade", "_int8_reference", "_loss", "_max_diff"]


CHECKS = {
    "prepare_for_qat": Check("prepare_for_qat", _prep_cases, _prep_evidence, _prep_judge),
    "fake_quant_count": Check("fake_quant_count", _count_cases, _count_evidence, _count_judge, unchanged="always"),
    "qat_finetune": Check("qat_finetune", _ft_cases, _ft_evidence, _ft_judge),
    "to_int8": Check("to_int8", _int8_cases, _int8_evidence, _int8_judge, unchanged="always"),
    "state_dict_bytes": Check("state_dict_bytes", _size_cases, _size_evidence, _size_judge, unchanged="always"),
}
