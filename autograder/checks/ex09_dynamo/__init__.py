"""Checks of ex09_dynamo: capture_graphs, graph_break_count, compile_with_pass.

Every case starts from `torch._dynamo.reset()`, so no compiled code of one case (or of the learner's notebook)
is reused by the next. The references compile with recording backends of this module (never inductor): what
dynamo hands a backend, `torch._dynamo.explain` for the breaks, and the eager model for the numbers. Models are
drawn from seeds (`BreakNet`), so an answer that fits the notebook's examples only is caught.

This module is the worker's side of the checks (`PARTS`: cases, evidence, `unchanged`); the judges, the
references and `CHECKS` are in `judging`, loaded on first use of any other name (the jailed worker never does).
"""
from __future__ import annotations

from autograder.checks.framework import Part
from autograder.checks.keyring import forward
from autograder.checks.ex09_dynamo.cases import _breaks_cases, _capture_cases, _pass_cases
from autograder.checks.ex09_dynamo.evidence import _breaks_evidence, _capture_evidence, _pass_evidence

__all__ = ["PARTS"]

PARTS = {
    "capture_graphs": Part("capture_graphs", _capture_cases, _capture_evidence),
    "graph_break_count": Part("graph_break_count", _breaks_cases, _breaks_evidence, "always"),
    "compile_with_pass": Part("compile_with_pass", _pass_cases, _pass_evidence, "always"),
}


__getattr__ = forward(__name__)
