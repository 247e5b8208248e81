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
"""
from __future__ import annotations

from autograder.checks.framework import Check
from autograder.checks.ex04_wrapping.models import MODELS_SOURCE, REF
from autograder.checks.ex04_wrapping.cases import (
    _gated_cases, _leaf_cases, _spec_cases, build_gated, FlagNet, gated_inputs, gated_probe, notebook_namespace,
)
from fxcourse_instructor.ex04_wrapping.references import ReferenceLeafTracer
from autograder.checks.ex04_wrapping.evidence import _gated_evidence, _leaf_evidence, _spec_evidence
from fxcourse_instructor.ex04_wrapping.judges import _gated_judge, _leaf_judge, _spec_judge

__all__ = [
    "CHECKS",
    "FlagNet",
    "MODELS_SOURCE",
    "REF",
    "build_gated",
    "gated_inputs",
    "gated_probe",
    "notebook_namespace",
    "ReferenceLeafTracer",
]


CHECKS = {
    "trace_gated": Check("trace_gated", _gated_cases, _gated_evidence, _gated_judge, unchanged="always"),
    "trace_with_leaves": Check("trace_with_leaves", _leaf_cases, _leaf_evidence, _leaf_judge, unchanged="always"),
    "trace_specialized": Check("trace_specialized", _spec_cases, _spec_evidence, _spec_judge, unchanged="always"),
}
