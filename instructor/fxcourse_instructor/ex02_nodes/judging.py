"""Checks of ex02_nodes: op_histogram, called_modules, consumers, graph_depth.

These four functions read a graph without changing it, so each check compares plain data (a dict, a list of
names, an int) with a reference computed here from a fresh copy of the case's graph. The hidden cases are
built so that the easy wrong answer passes the visible ones: nested submodules (qualified names such as
"layers.0" differ from node names such as "layers_0"), a module called twice, a node used twice by one user,
users recorded out of graph order, skip connections, get_attr chains, several placeholders, dead code.

The unknown-node case of `consumers` expects a KeyError: it sets `Case.data["raises"]`, so the judge sees the
raised error (type and message) instead of the case failing outright.
"""
from __future__ import annotations

from autograder.checks.framework import Check
from autograder.checks.ex02_nodes.cases import _called_cases, _cons_cases, _depth_cases, _hist_cases
from autograder.checks.ex02_nodes.evidence import _called_evidence, _cons_evidence, _depth_evidence, _hist_evidence
from fxcourse_instructor.ex02_nodes.judges import _called_judge, _cons_judge, _depth_judge, _hist_judge

__all__ = ["CHECKS"]


CHECKS = {
    "op_histogram": Check("op_histogram", _hist_cases, _hist_evidence, _hist_judge, unchanged="always"),
    "called_modules": Check("called_modules", _called_cases, _called_evidence, _called_judge, unchanged="always"),
    "consumers": Check("consumers", _cons_cases, _cons_evidence, _cons_judge, unchanged="always"),
    "graph_depth": Check("graph_depth", _depth_cases, _depth_evidence, _depth_judge, unchanged="always"),
}
