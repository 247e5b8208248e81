"""Checks of ex11_pt2e: prepare_pt2e_qat, pt2e_fake_quant_count, pt2e_finetune, to_qdq, qdq_counts.

The reference flow is the one of lesson 11: `torch.export.export(model.train(), example_inputs).module()`, an
`X86InductorQuantizer` set to `get_default_x86_inductor_quantization_config(is_qat=True)`, `prepare_qat_pt2e`,
training, `move_exported_model_to_eval`, `convert_pt2e`, all from torchao's `torchao.quantization.pt2e`.

Exporting and preparing cost tenths of a second, moving a model to eval a second or more (it pattern-matches
with export), so the models are small linear nets without batch norm (whose QAT folding makes `convert_pt2e`
take tens of seconds), every prepared model is built once per process and deep-copied for each case
(`_fresh`), and every reference is computed once per case (on the judge's side). The functions that receive a
prepared model (`pt2e_fake_quant_count`, `pt2e_finetune`, `to_qdq`) receive one prepared by the reference,
never by the learner's `prepare_pt2e_qat`, so each test charges for its own function only.

torch and torchao print deprecation and other warnings here; `run_check` silences learner code and `_silent()`
the references, so a warning never decides a verdict. No check compiles with inductor.

This module is the worker's side of the checks (`PARTS`: cases, evidence, `unchanged`); the judges, the
references and `CHECKS` are in `judging`, loaded on first use of any other name (the jailed worker never does).
"""
from __future__ import annotations

from autograder.checks.framework import Part
from autograder.checks.keyring import forward
from autograder.checks.ex11_pt2e.cases import _count_cases, _count_qdq_cases, _ft_cases, _prep_cases, _qdq_cases
from autograder.checks.ex11_pt2e.evidence import (
    _count_evidence, _ft_evidence, _prep_evidence, _qdq_count_evidence, _qdq_evidence,
)

__all__ = ["PARTS"]

PARTS = {
    "prepare_pt2e_qat": Part("prepare_pt2e_qat", _prep_cases, _prep_evidence, "weights"),
    "pt2e_fake_quant_count": Part("pt2e_fake_quant_count", _count_cases, _count_evidence, "always"),
    "pt2e_finetune": Part("pt2e_finetune", _ft_cases, _ft_evidence),
    "to_qdq": Part("to_qdq", _qdq_cases, _qdq_evidence),
    "qdq_counts": Part("qdq_counts", _count_qdq_cases, _qdq_count_evidence, "always"),
}


__getattr__ = forward(__name__)
