"""Checks of ex04_wrapping: trace_gated, trace_with_leaves, trace_specialized.

The models of the exercise notebook live here as source text (`MODELS_SOURCE`): the builder of the notebook
pastes it into the setup cell, and this module runs the same text once into a private namespace (`REF`) to get
the reference classes. One text, two places, no drift (tests/test_ex04_wrapping.py checks they agree).

`trace_gated` is special. Its learner makes the notebook's `gate` a leaf function, either with
`fx.wrap("gate")` at the top level of a cell (which patches the *notebook's globals dict* while tracing) or with
`fx.Tracer(autowrap_functions=(gate,))` (which patches the globals of the traced `forward`s). Both only work on
models whose `forward` looks `gate` up in the notebook's own globals. So the models of its cases are built
here, but their `forward` functions are re-bound to the notebook's namespace (`_bind`); that namespace is the
`__globals__` of the learner's `trace_gated`, found on the call stack (`notebook_namespace`). The judge never
needs it: it rebuilds the same models bound to `REF` and compares.

This module is the worker's side of the checks (`PARTS`: cases, evidence, `unchanged`); the judges, the
references and `CHECKS` are in `judging`, loaded on first use of any other name (the jailed worker never does).
"""
from __future__ import annotations

from autograder.checks.framework import Part
from autograder.checks.keyring import forward
from autograder.checks.ex04_wrapping.cases import _gated_cases, _leaf_cases, _spec_cases
from autograder.checks.ex04_wrapping.evidence import _gated_evidence, _leaf_evidence, _spec_evidence

__all__ = ["PARTS"]

PARTS = {
    "trace_gated": Part("trace_gated", _gated_cases, _gated_evidence, "always"),
    "trace_with_leaves": Part("trace_with_leaves", _leaf_cases, _leaf_evidence, "always"),
    "trace_specialized": Part("trace_specialized", _spec_cases, _spec_evidence, "always"),
}


__getattr__ = forward(__name__)
