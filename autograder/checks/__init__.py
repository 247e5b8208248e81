"""The check library: one module per exercise (`exNN_topic.py`, or a package `exNN_topic/` of models, cases,
evidence and judges), each with a `CHECKS` dict of `framework.Check` objects.

Test cells of the exercise notebooks call `run_check` and `check_quiz`; `check()` in a notebook, mutant
validation, `fxcourse check`/`grade` and pytest use the same `Check` objects and the same runner
(`framework.run_cases`). Shared helpers for evidence and messages live in `evidence.py`, error-signature
hints in `errors.py`, seeded random models and inputs in `randmodels.py`.
"""
from autograder.checks.framework import check_quiz, run_check

__all__ = ["run_check", "check_quiz"]
