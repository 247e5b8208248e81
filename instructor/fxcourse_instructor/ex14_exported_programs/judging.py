"""Checks of ex14_exported_programs: save_and_reload, module_of_nodes, decompose_except, unflatten_module.

Exporting costs a fraction of a second per model, so each process exports each case's model once
(models.program) and hands every case a deep copy. save_and_reload's cases write under the temporary folder,
which in the grader's worker is its private scratch folder (cases.case_folder).
"""
from __future__ import annotations

from autograder.checks.framework import Check
from autograder.checks.ex14_exported_programs.cases import (
    _decompose_cases, _module_cases, _save_cases, _unflatten_cases,
)
from autograder.checks.ex14_exported_programs.evidence import (
    _decompose_evidence, _module_evidence, _save_evidence, _unflatten_evidence,
)
from fxcourse_instructor.ex14_exported_programs.judges import (
    _decompose_judge, _module_judge, _save_judge, _unflatten_judge, innermost,
)

__all__ = ["CHECKS", "innermost"]


CHECKS = {
    "save_and_reload": Check("save_and_reload", _save_cases, _save_evidence, _save_judge),
    "module_of_nodes": Check("module_of_nodes", _module_cases, _module_evidence, _module_judge),
    "decompose_except": Check("decompose_except", _decompose_cases, _decompose_evidence, _decompose_judge),
    "unflatten_module": Check("unflatten_module", _unflatten_cases, _unflatten_evidence, _unflatten_judge),
}
