"""One verdict record from the judge to the report (autograder/checks/verdict.py): what a judge makes is what
the judge process answers, what the grader scores and what every view renders."""
from __future__ import annotations

import json

from autograder.checks.framework import CaseResult, CheckFailed, get_check, judge_evidence
from autograder.checks.verdict import Verdict
from autograder.grader.engine import grading
from autograder.grader.report.data import split_verdict


def test_a_case_verdict_names_its_hint_by_id_and_keeps_it_through_json():
    check = get_check("ex01_tracing", "count_nodes")
    case = check.cases(False)[0]
    verdict = judge_evidence(check, case, {"__todo__": ""})
    assert type(verdict) is Verdict and CaseResult is Verdict
    assert verdict.hint == "replace `raise NotImplementedError()` in count_nodes with your code"
    assert verdict.hint_id == "shared.replace_raise_notimplementederror_your_code"
    back = Verdict.from_json(json.loads(json.dumps(verdict.to_json())))
    assert back == verdict and back.hint_id == verdict.hint_id


def test_scoring_keeps_the_words_and_gives_all_or_nothing():
    failed = Verdict("test_count_nodes", False, "count_nodes on a model: counted 3, expected 4",
                     "shared.call_gm_recompile_after_changing", cases=2).scored(3, grading.clean_text)
    assert (failed.points, failed.max_points, failed.cases) == (0.0, 3.0, 2)
    assert failed.hint_id == "shared.call_gm_recompile_after_changing"
    assert Verdict("t", True, "passed (2 cases)").scored(3).points == 3.0
    cut = Verdict("t", False, "x\r" * 3000, "shared.call_gm_recompile_after_changing").scored(1, grading.clean_text)
    assert "\r" not in cut.message and cut.message.endswith("more characters cut]")


def test_the_views_render_the_same_record():
    verdict = Verdict("test_f", False, "f on a case: wrong", "shared.answers_must_not_patch", points=0, max_points=2)
    # the test cell's output (what feedback shows and the class report reads back)
    assert verdict.text == "f on a case: wrong\nHint: answers must not patch torch, builtins or the autograder"
    read = split_verdict(verdict.text, "test_f")
    assert (read.id, read.message, read.hint, read.passed) == ("test_f", verdict.message, verdict.hint, False)
    assert read.diagnosis == verdict.hint
    # fxcourse check --json: the format the curriculum states, the hint after the message
    report = grading.Report("ex01_tracing", 0.0, 2.0, [verdict])
    assert report.to_json()["tests"] == [{"id": "test_f", "points": 0, "max_points": 2, "passed": False,
                                          "message": verdict.message + " Hint: " + verdict.hint}]
    assert Verdict("test_g", True, "passed (1 case)", "shared.answers_must_not_patch").line == "passed (1 case)"


def test_check_failed_and_the_verdict_say_the_same():
    failed = CheckFailed("wrong", "shared.answers_must_not_patch")
    assert str(failed) == Verdict("c", False, "wrong", failed.hint).text
