"""Where the instructor's side of the checks is found: each exercise's judges, references and `CHECKS`.

Every use of an exercise's judge side goes through `judging(assignment)`. Where that side cannot be reached
(a student's install), it raises `KeyMissing`, and the caller says so instead of judging.
"""
from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["KeyMissing", "judging", "forward"]


class KeyMissing(ImportError):
    """The instructor's side of an exercise's checks (its judges, references, hidden cases) is not reachable."""


def judging(assignment: str) -> ModuleType:
    """The judge's side of exercise `assignment`: its module holding `CHECKS`, judges and references."""
    name = f"autograder.checks.{assignment}.judging"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        raise KeyMissing(f"the instructor's side of {assignment} (its judges and references) is not installed "
                         "here") from exc
    except PermissionError as exc:  # installed, but closed to this user (the instructor's folder)
        raise KeyMissing(f"the instructor's side of {assignment} (its judges and references) is not readable "
                         "here") from exc


def forward(package: str):
    """The module `__getattr__` of an exercise's check package: any name beyond its worker's side (`CHECKS`,
    judges, references) is the judge's side, loaded on first use (the jailed worker never asks)."""
    assignment = package.rsplit(".", 1)[-1]

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(judging(assignment), name)

    return __getattr__
