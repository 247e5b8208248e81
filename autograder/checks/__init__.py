"""The check library: one module per exercise (`exNN_topic.py`), each with a `CHECKS` dict.

Test cells of the exercise notebooks call `run_check` and `check_quiz`; `fxcourse check`/`grade`
and pytest use the same `Check` objects.
"""
from autograder.checks.framework import check_quiz, run_check

__all__ = ["run_check", "check_quiz"]
