"""Tests that an exercise's near-miss mutants prove something, written once: each tests/test_exNN_*.py that has
near misses installs them with

    globals().update(near_miss_tests("exNN_topic"))

A near miss is a mutant with not_hints: a wrong answer that does right what some hint says. The tests assert
that every graded function has one, and that the not_hints check can fail: a near miss told that a piece of the
hint it is really shown is a wrong one fails validation.
"""
from __future__ import annotations

import dataclasses

import pytest

from autograder.coursedata.exercises import functions
from fxcourse_instructor.mutants import load
from autograder.grader.quality.validate import judge_mutant, run_mutant


def shown_window(text: str, hint: str) -> str:
    """30 characters of the hint a failure shows (its message when it has none) that the mutant's own hint
    neither contains nor is contained in."""
    shown = text.split("\nHint: ", 1)[1] if "\nHint: " in text else text
    for start in range(max(1, len(shown) - 29)):
        window = shown[start:start + 30]
        if window.lower() not in hint.lower() and hint.lower() not in window.lower():
            return window
    raise AssertionError(f"no part of {shown!r} is apart from the hint {hint!r}")


_RUNS: dict = {}


def ran(assignment: str, nb, mutant) -> tuple[bool, str]:
    """What run_mutant gives for `mutant`, once per test process (its test and its near-miss test share it)."""
    key = (assignment, mutant)
    if key not in _RUNS:
        _RUNS[key] = run_mutant(assignment, nb, mutant)
    return _RUNS[key]


def near_miss_tests(assignment: str) -> dict:
    """The two near-miss tests of `assignment`, by name (they use the fixture `nb` of exercise_tests)."""
    near = [m for m in load(assignment)[0] if m.not_hints]

    def test_every_graded_function_has_a_near_miss():
        """Each graded function has a wrong answer that does right what some hint says (and is not shown it)."""
        assert {m.function for m in near} == set(functions(assignment))

    @pytest.mark.parametrize("mutant", near, ids=[f"{m.function}: {m.why}" for m in near])
    def test_a_near_miss_would_fail_validation_if_shown_its_own_hint_as_a_wrong_one(nb, mutant):
        """The not_hints check can fail: named a piece of the hint the mutant is really shown, validation fails it."""
        passed, text = ran(assignment, nb, mutant)
        assert not passed
        told = dataclasses.replace(mutant, not_hints=(shown_window(text, mutant.hint),))
        outcome = judge_mutant(assignment, nb, told, ran=(passed, text))
        assert not outcome.ok and "blames what it does right" in outcome.detail, outcome.detail

    return {
        "test_every_graded_function_has_a_near_miss": test_every_graded_function_has_a_near_miss,
        "test_a_near_miss_would_fail_validation_if_shown_its_own_hint_as_a_wrong_one":
            test_a_near_miss_would_fail_validation_if_shown_its_own_hint_as_a_wrong_one,
    }
