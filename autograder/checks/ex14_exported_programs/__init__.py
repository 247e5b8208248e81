"""Checks of ex14_exported_programs: save_and_reload, module_of_nodes, decompose_except, unflatten_module.

Exporting costs a fraction of a second per model, so each process exports each case's model once
(models.program) and hands every case a deep copy. save_and_reload's cases write under the temporary folder,
which in the grader's worker is its private scratch folder (cases.case_folder).

This module is the worker's side of the checks (`PARTS`: cases, evidence, `unchanged`); the judges, the
references and `CHECKS` are in `judging`, loaded on first use of any other name (the jailed worker never does).
"""
from __future__ import annotations

from autograder.checks.framework import Part
from autograder.checks.keyring import forward
from autograder.checks.ex14_exported_programs.cases import (
    _decompose_cases, _module_cases, _save_cases, _unflatten_cases,
)
from autograder.checks.ex14_exported_programs.evidence import (
    _decompose_evidence, _module_evidence, _save_evidence, _unflatten_evidence,
)

__all__ = ["PARTS"]

PARTS = {
    "save_and_reload": Part("save_and_reload", _save_cases, _save_evidence),
    "module_of_nodes": Part("module_of_nodes", _module_cases, _module_evidence),
    "decompose_except": Part("decompose_except", _decompose_cases, _decompose_evidence),
    "unflatten_module": Part("unflatten_module", _unflatten_cases, _unflatten_evidence),
}


__getattr__ = forward(__name__)
