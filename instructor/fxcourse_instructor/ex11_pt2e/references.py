"""The references of ex11_pt2e, used by its judges only (never imported where learner code runs)."""
from __future__ import annotations

from typing import Any, Callable

from autograder.checks.framework import Case
from autograder.checks.evidence import cached_reference
from autograder.checks.ex11_pt2e.cases import _CACHE, _prepare_ref
from autograder.checks.ex11_pt2e.evidence import _prep_evidence


def _prep_reference(case: Case) -> dict:
    model, example_inputs = case.make()
    return _prep_evidence(_prepare_ref(model, example_inputs), (model, example_inputs))


def _reference(function: str, case: Case, build: Callable[[Case], Any]) -> Any:
    """The reference of a case, computed once per process (deterministic, seeded)."""
    return cached_reference(_CACHE, function, case, build)
