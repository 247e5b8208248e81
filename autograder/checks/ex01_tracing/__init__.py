"""Checks of ex01_tracing: node_summary, count_nodes, outputs_match.

This module is the worker's side of the checks (`PARTS`: cases, evidence, `unchanged`); the judges, what each
case must return and `CHECKS` are in `judging`, loaded on first use of any other name (the jailed worker never does).
"""
from __future__ import annotations

from autograder.checks.framework import Part
from autograder.checks.keyring import forward
from autograder.checks.ex01_tracing.cases import _count_cases, _graph_cases, _match_cases
from autograder.checks.ex01_tracing.evidence import _count_evidence, _match_evidence, _summary_evidence

__all__ = ["PARTS"]

PARTS = {
    "node_summary": Part("node_summary", _graph_cases, _summary_evidence, "always"),
    "count_nodes": Part("count_nodes", _count_cases, _count_evidence, "always"),
    "outputs_match": Part("outputs_match", _match_cases, _match_evidence, "always"),
}


__getattr__ = forward(__name__)
