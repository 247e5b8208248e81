"""Checks of ex08_pipeline: run_pipeline, optimize_for_inference.

run_pipeline is run on *probe* passes built by each case: small, deterministic passes that record every call
(its name and the size of the graph it received) in a plain log. The log is read back in evidence(), so the
judge can compare the rounds and calls with those of a reference pipeline run on fresh probes.
Cases whose data has "raises" expect run_pipeline to raise (see autograder.checks.framework.Case).

optimize_for_inference is judged on numbers (outputs against model.eval() on seeded inputs, rtol=1e-4,
atol=1e-5) and on structure, read from the returned graph: no dropout, no BatchNorm2d right after a Conv2d
that could be folded, no Linear -> Linear chain that could be fused, no dead node, no unused submodule, every
module in eval mode, and the model passed in left unchanged.
"""
from __future__ import annotations

from autograder.checks.framework import Check
from autograder.checks.ex08_pipeline.cases import _opt_cases, _pipeline_cases, explain_raise
from fxcourse_instructor.ex08_pipeline.references import _reference_pipeline
from autograder.checks.ex08_pipeline.evidence import _opt_evidence, _pipeline_evidence
from fxcourse_instructor.ex08_pipeline.judges import _opt_judge, _opt_raise, _pipeline_judge

__all__ = ["CHECKS", "_reference_pipeline"]


CHECKS = {
    "run_pipeline": Check("run_pipeline", _pipeline_cases, _pipeline_evidence, _pipeline_judge,
                          explain_raise=explain_raise),
    # optimize_for_inference calls the learner's run_pipeline: a failure that the course's run_pipeline does not
    # have costs points in run_pipeline's test only
    "optimize_for_inference": Check("optimize_for_inference", _opt_cases, _opt_evidence, _opt_judge, unchanged="weights",
                                    helpers={"run_pipeline": _reference_pipeline}, explain_raise=_opt_raise),
}
