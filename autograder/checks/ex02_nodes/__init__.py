"""Checks of ex02_nodes: op_histogram, called_modules, consumers, graph_depth.

These four functions read a graph without changing it, so each check compares plain data (a dict, a list of
names, an int) with a reference computed here from a fresh copy of the case's graph. The hidden cases are
built so that the easy wrong answer passes the visible ones: nested submodules (qualified names such as
"layers.0" differ from node names such as "layers_0"), a module called twice, a node used twice by one user,
users recorded out of graph order, skip connections, get_attr chains, several placeholders, dead code.

The unknown-node case of `consumers` expects a KeyError: it sets `Case.data["raises"]`, so the judge sees the
raised error (type and message) instead of the case failing outright.

This module is the worker's side of the checks (`PARTS`: cases, evidence, `unchanged`); the judges, the
references and `CHECKS` are in `judging`, loaded on first use of any other name (the jailed worker never does).
"""
from __future__ import annotations

from autograder.checks.framework import Part
from autograder.checks.keyring import forward
from autograder.checks.ex02_nodes.cases import _called_cases, _cons_cases, _depth_cases, _hist_cases
from autograder.checks.ex02_nodes.evidence import _called_evidence, _cons_evidence, _depth_evidence, _hist_evidence

__all__ = ["PARTS"]

PARTS = {
    "op_histogram": Part("op_histogram", _hist_cases, _hist_evidence, "always"),
    "called_modules": Part("called_modules", _called_cases, _called_evidence, "always"),
    "consumers": Part("consumers", _cons_cases, _cons_evidence, "always"),
    "graph_depth": Part("graph_depth", _depth_cases, _depth_evidence, "always"),
}


__getattr__ = forward(__name__)
