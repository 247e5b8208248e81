"""What keeps a grade from being had without the work: hidden cases drawn from a course secret, and answers
that hand over the course's own grading code.

* `hidden_cases`: a graded function's hidden cases are built, run and judged under salts drawn from the course's
  secret (autograder.grader.engine.secret.call_salt: the secret, the assignment and the function) and the case; every
  seed they draw through autograder.checks.randmodels then becomes another. Without the secret their inputs
  cannot be known, so a table of memorised answers fails; with the same secret they are the same, so a regrade
  gives the same grade.
* `grading_object`: a learner's function that is, or returns, a function or record of the grading code
  (a reference, a judge, a case) earns nothing (framework.collect_evidence says why).
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import types
from typing import Any, Iterable

__all__ = ["hidden_cases", "grading_object", "GRADING_HOMES"]

# the packages of the course's grading code: the autograder, and the instructor's side (autograder.checks.keyring)
GRADING_HOMES = ("autograder.", "fxcourse_instructor.")


def hidden_cases(cases: Iterable[Any], salt: int) -> list[Any]:
    """`cases` (a function's hidden ones) salted: case i under a salt drawn from `salt` and i, so that every seed
    it draws is another (randmodels.seed_of); the cases of one model that is given again (their data["kept"], the
    same for each) share one salt, drawn from `salt` and that name. Salt 0 leaves them as written (pytest,
    validation, run_check)."""
    cases = list(cases)
    if not salt:
        return cases
    return [dataclasses.replace(c, salt=int.from_bytes(hashlib.sha256(
        f"{salt}:{c.data.get('kept') or i}".encode()).digest()[:8], "big") | 1) for i, c in enumerate(cases)]


_GRADING_KINDS = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.ModuleType, type,
                  functools.partial)


def grading_object(value: Any) -> str | None:
    """What `value` is when it is (or, one level down, holds) a function, class, module or record of the course's
    own grading code (autograder.*, fxcourse_instructor.*): "<its name> from fxcourse_instructor.<exercise>.references".
    The models a case hands over are not: only what computes, judges or describes a case is."""
    items = [value] + (list(value)[:50] if type(value) in (list, tuple) else
                       list(value.values())[:50] if type(value) is dict else [])
    for item in items:
        inner = item
        for _ in range(5):   # through partials and bound methods
            inner = inner.func if isinstance(inner, functools.partial) else \
                inner.__func__ if isinstance(inner, types.MethodType) else inner
        kinds = isinstance(inner, _GRADING_KINDS)
        home = (getattr(inner, "__module__", None) or getattr(inner, "__name__", "")) if kinds else \
            type(inner).__module__
        if not isinstance(home, str) or not home.startswith(GRADING_HOMES) or _is_model_home(home):
            continue
        if not kinds and home not in ("autograder.checks.framework", "autograder.checks.verdict"):  # a Case, Verdict...
            continue
        return f"{getattr(inner, '__qualname__', type(inner).__name__)} from {home}"
    return None


def _is_model_home(module: str) -> bool:
    """The modules whose objects are a case's inputs, not grading code: an exercise's models, random models."""
    return module == "autograder.checks.randmodels" or (module.startswith("autograder.checks.ex")
                                                        and module.endswith(".models"))
