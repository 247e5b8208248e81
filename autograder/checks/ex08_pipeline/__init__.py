"""Checks of ex08_pipeline: run_pipeline, optimize_for_inference.

run_pipeline is run on *probe* passes built by each case: small, deterministic passes that record every call
(its name and the size of the graph it received) in a plain log. The log is read back in evidence(), so the
judge can compare the rounds and calls with those of a reference pipeline run on fresh probes.
Cases whose data has "raises" expect run_pipeline to raise (see autograder.checks.framework.Case).

optimize_for_inference is judged on numbers (outputs against model.eval() on seeded inputs, rtol=1e-4,
atol=1e-5) and on structure, read from the returned graph: no dropout, no BatchNorm2d right after a Conv2d
that could be folded, no Linear -> Linear chain that could be fused, no dead node, no unused submodule, every
module in eval mode, and the model passed in left unchanged.

This module is the worker's side of the checks (`PARTS`: cases, evidence, `unchanged`); the judges, the
references and `CHECKS` are in `judging`, loaded on first use of any other name (the jailed worker never does).
"""
from __future__ import annotations

from autograder.checks.framework import Part
from autograder.checks.keyring import forward
from autograder.checks.ex08_pipeline.cases import _opt_cases, _pipeline_cases
from autograder.checks.ex08_pipeline.evidence import _opt_evidence, _pipeline_evidence

__all__ = ["PARTS"]

PARTS = {
    "run_pipeline": Part("run_pipeline", _pipeline_cases, _pipeline_evidence),
    "optimize_for_inference": Part("optimize_for_inference", _opt_cases, _opt_evidence, "weights"),
}


__getattr__ = forward(__name__)
