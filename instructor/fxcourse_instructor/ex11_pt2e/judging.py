"""Checks of ex11_pt2e: prepare_pt2e_qat, pt2e_fake_quant_count, pt2e_finetune, to_qdq, qdq_counts.

The reference flow is the one of lesson 11: `torch.export.export(model.train(), example_inputs).module()`, an
`X86InductorQuantizer` set to `get_default_x86_inductor_quantization_config(is_qat=True)`, `prepare_qat_pt2e`,
training, `move_exported_model_to_eval`, `convert_pt2e`, all from torchao's `torchao.quantization.pt2e`.

Exporting and preparing cost tenths of a second, moving a model to eval a second or more (it pattern-matches
with export), so the models are small linear nets without batch norm (whose QAT folding makes `convert_pt2e`
take tens of seconds), every prepared model is built once per process and deep-copied for each case
(`_fresh`), and every reference is computed once per case (`_reference`). The functions that receive a
prepared model (`pt2e_fake_quant_count`, `pt2e_finetune`, `to_qdq`) receive one prepared by the reference,
never by the learner's `prepare_pt2e_qat`, so each test charges for its own function only.

torch and torchao print deprecation and other warnings here; `run_check` silences learner code and `_silent()`
the references, so a warning never decides a verdict. No check compiles with inductor.
"""
from __future__ import annotations

from autograder.checks.framework import Check
from autograder.checks.ex11_pt2e.models import FakeQuantizeBase, ObserverBase
from autograder.checks.ex11_pt2e.cases import (
    _CACHE, _count_cases, _count_qdq_cases, _ft_cases, _prep_cases, _prepared, _qdq_cases,
)
from autograder.checks.ex11_pt2e.evidence import (
    _count_evidence, _ft_evidence, _prep_evidence, _qdq_count_evidence, _qdq_evidence, _reads,
)
from fxcourse_instructor.ex11_pt2e.judges import (
    _count_judge, _ft_judge, _ft_raise, _prep_judge, _qdq_count_judge, _qdq_judge, _qdq_raise,
)

__all__ = ["CHECKS", "FakeQuantizeBase", "ObserverBase", "_CACHE", "_count_judge", "_prepared", "_qdq_count_judge",
           "_reads"]


CHECKS = {
    "prepare_pt2e_qat": Check("prepare_pt2e_qat", _prep_cases, _prep_evidence, _prep_judge, unchanged="weights"),
    "pt2e_fake_quant_count": Check("pt2e_fake_quant_count", _count_cases, _count_evidence, _count_judge,
                                   unchanged="always"),
    "pt2e_finetune": Check("pt2e_finetune", _ft_cases, _ft_evidence, _ft_judge, explain_raise=_ft_raise),
    "to_qdq": Check("to_qdq", _qdq_cases, _qdq_evidence, _qdq_judge, explain_raise=_qdq_raise),
    "qdq_counts": Check("qdq_counts", _count_qdq_cases, _qdq_count_evidence, _qdq_count_judge, unchanged="always"),
}
