"""Checks of ex09_dynamo: capture_graphs, graph_break_count, compile_with_pass.

Every case starts from `torch._dynamo.reset()`, so no compiled code of one case (or of the learner's notebook)
is reused by the next. The references compile with recording backends of this module (never inductor): what
dynamo hands a backend, `torch._dynamo.explain` for the breaks, and the eager model for the numbers. Models are
drawn from seeds (`BreakNet`), so an answer that fits the notebook's examples only is caught.
"""
from __future__ import annotations

from autograder.checks.framework import Check
from autograder.checks.ex09_dynamo.models import BreakNet, PlainMLP, SigmoidPass
from autograder.checks.ex09_dynamo.cases import _breaks_cases, _capture_cases, _pass_cases
from autograder.checks.ex09_dynamo.evidence import _breaks_evidence, _capture_evidence, _pass_evidence
from fxcourse_instructor.ex09_dynamo.judges import _breaks_judge, _capture_judge, _pass_judge, _pass_raise

__all__ = ["CHECKS", "BreakNet", "PlainMLP", "SigmoidPass"]


CHECKS = {
    "capture_graphs": Check("capture_graphs", _capture_cases, _capture_evidence, _capture_judge),
    "graph_break_count": Check("graph_break_count", _breaks_cases, _breaks_evidence, _breaks_judge,
                               unchanged="always"),
    "compile_with_pass": Check("compile_with_pass", _pass_cases, _pass_evidence, _pass_judge, unchanged="always",
                               explain_raise=_pass_raise),
}
