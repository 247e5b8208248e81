"""The check library: one package per exercise (`exNN_topic/`), whose `PARTS` (`framework.Part`: cases,
evidence) are all the jailed worker imports, and whose `CHECKS` dict of `framework.Check` objects (judges and
references too, in its `judging` module) the judge, tests and validation use (autograder/ARCHITECTURE.md).

Test cells of the exercise notebooks call `run_check` and `check_quiz`; `check()` in a notebook, mutant
validation, `fxcourse check`/`grade` and pytest use the same `Check` objects and the same runner
(`framework.run_cases`); where an install has no judge side, `run_check` asks the course's judge service
(`remote.py`). Shared helpers for evidence and messages live in `evidence.py`, error-signature
hints in `errors.py`, seeded random models and inputs in `randmodels.py`.
"""
__all__ = ["run_check", "check_quiz"]


def __getattr__(name: str):
    """`run_check` and `check_quiz`, imported on first use: a tool that only needs `keyring` (the command line,
    through autograder.course.root) does not import torch with them."""
    if name == "run_check":
        from autograder.checks.remote import run_check  # framework.run_check, or the judge service where needed

        return run_check
    if name == "check_quiz":
        from autograder.checks.framework import check_quiz

        return check_quiz
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
