"""The judge's side: evidence schema and limits, the judge process's own limits, and the text it lets out.

These need no jail: the evidence files here are written by the test, as a hostile worker would write them.
"""
from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import pytest
import torch

from autograder.checks.evidence import EvidenceError, EvidenceLimits, check_archive, check_plain, load_evidence
from autograder.grader.engine.grading import _judge, clean_text
from autograder.course.plan import Call
from autograder.grader.jail.sandbox import Limits, WorkerOutcome


def saved(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def worker_file(calls: list, **extra) -> bytes:
    return saved({"calls": calls, "cell_errors": [], "tampered": [], "complete": True, **extra})


# ------------------------------------------------------------------------------------- before loading

def test_a_compressed_entry_is_refused_before_anything_is_unpacked():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("archive/data.pkl", bytes(64 * 2**20))  # 64 MiB of zeros: about 64 KiB compressed
    assert len(buf.getvalue()) < 2**20
    with pytest.raises(EvidenceError, match="compressed"):
        check_archive(buf.getvalue())


def test_entries_that_unpack_to_more_than_the_limit_are_refused():
    data = worker_file([{"evidence": [torch.zeros(2**20)]} for _ in range(3)])  # three stored 4 MiB tensors
    check_archive(data)
    with pytest.raises(EvidenceError, match="unpacks to more than"):
        check_archive(data, EvidenceLimits(bytes_unpacked=8 * 2**20))
    with pytest.raises(EvidenceError, match="over the limit"):
        check_archive(data, EvidenceLimits(bytes_on_disk=2**20))


@pytest.mark.parametrize("data, match", [(b"\x80\x04K\x01.", "not a torch.save archive"),
                                         (b"PK\x03\x04" + bytes(100), "damaged")])
def test_what_is_not_a_torch_save_archive_is_refused(data, match):
    with pytest.raises(EvidenceError, match=match):
        check_archive(data)


# -------------------------------------------------------------------------------------- after loading

def test_a_deeply_shared_structure_is_refused_quickly_by_counting_every_use():
    bomb: list = []
    for _ in range(40):  # 2**40 values when walked: a handful of objects in memory and on disk
        bomb = [bomb, bomb]
    with pytest.raises(EvidenceError, match="more than 1000 values"):
        check_plain(bomb, EvidenceLimits(items=1000))


def test_nesting_100000_deep_is_refused_without_recursion():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(EvidenceError, match="nested more than 64 levels"):
        check_plain(deep)


@pytest.mark.parametrize("value, match", [
    (torch.zeros(1).expand(2**30), "tensor of 1073741824 elements"),
    ({1: "a"}, "dict key of type int"),
    ([torch.Size([2])], "holds a Size"),
    ("x" * (2**20 + 1), "string of"),
    (2**5000, "integer of"),
])
def test_values_outside_the_schema_are_refused(value, match):
    with pytest.raises(EvidenceError, match=match):
        check_plain(value)


def test_plain_evidence_passes():
    check_plain({"graph": [{"op": "call_module", "args": [{"node": "x"}], "users": []}],
                 "outputs": [torch.randn(4, 3)], "lint": None, "flag": True, "n": 3, "f": 0.5})


def test_one_calls_bad_evidence_is_rejected_alone():
    data = worker_file([{"evidence": [1, 2]}, {"evidence": [torch.zeros(1).expand(2**30)]}, {"evidence": ["ok"]}])
    ev, rejected = load_evidence(data, 3)
    assert list(rejected) == [1] and "elements" in rejected[1]
    assert ev["calls"][0] == {"evidence": [1, 2]} and ev["calls"][2] == {"evidence": ["ok"]}


@pytest.mark.parametrize("obj, match", [
    ({"calls": []}, "the worker's shape"),
    ({"calls": [{"evidence": []}] * 5, "cell_errors": [], "tampered": [], "complete": True}, "5 calls for 2"),
    ({"calls": [], "cell_errors": [{"cell": 1}], "tampered": [], "complete": True}, "cell errors"),
    ({"calls": [], "cell_errors": [], "tampered": [3], "complete": True}, "patched names"),
    ([1, 2, 3], "the worker's shape"),
])
def test_the_top_level_schema_is_enforced(obj, match):
    with pytest.raises(EvidenceError, match=match):
        load_evidence(saved(obj), 2)


# ---------------------------------------------------------------------------------- the judge process

def outcome(data: bytes) -> WorkerOutcome:
    return WorkerOutcome(None, "ok", "", "", evidence_bytes=data)


QUIZ = [Call("quiz", "q1", key="D", choices="ABCD")]


def test_evidence_that_takes_too_long_to_load_fails_with_a_message_and_the_judge_goes_on(monkeypatch):
    from autograder.grader.engine import grading

    monkeypatch.setattr(grading, "JUDGE_CPU_FLOOR", 1)  # the judge gets max(floor, timeout) CPU seconds per request
    limits = Limits(timeout=1.0)
    slow = worker_file([{"evidence": [[i % 200 for i in range(15_000_000)]]}])  # ~30 MiB, seconds to unpickle
    summary = _judge().load(outcome(slow), 1, limits)
    assert not summary["ok"] and "over its limit of 1 s of CPU time" in summary["error"], summary
    honest = outcome(worker_file([{"evidence": ["D"]}]))  # a fresh judge takes the next submission
    assert _judge().load(honest, 1, limits)["ok"]
    verdict = _judge().judge("test_quiz_q1", QUIZ, 0, honest, 1, limits)
    assert verdict.passed, verdict.message


def test_refused_evidence_names_the_limit():
    summary = _judge().load(outcome(worker_file([{"evidence": []}], extra_key=1)), 1, Limits(timeout=5.0))
    assert not summary["ok"] and "the grader refused the evidence" in summary["error"]


def test_a_rejected_call_fails_its_test_and_the_next_one_is_judged():
    deep: list = []
    for _ in range(100):
        deep = [deep]
    data = worker_file([{"evidence": [deep]}, {"evidence": ["D"]}])
    o = outcome(data)
    assert _judge().load(o, 2, Limits())["ok"]
    verdict = _judge().judge("test_quiz_q1", QUIZ, 0, o, 2, Limits())
    assert verdict.passed is False and "the grader refused this evidence" in verdict.message
    # the judge process's answer is the verdict's JSON: the hint keeps its id across the process boundary
    assert verdict.hint == "answers must not write the grader's files"
    assert verdict.hint_id == "shared.answers_must_not_write_grader_files"
    verdict = _judge().judge("test_quiz_q1", QUIZ, 1, o, 2, Limits())
    assert verdict.passed, verdict.message


# ---------------------------------------------------------------------------------- text that leaves

def test_control_characters_are_escaped_and_long_text_is_cut_with_a_note():
    assert clean_text("a\rb\x1b[31mc\u202ed\n") == "a\\x0db\\x1b[31mc\\u202ed\\x0a"
    long = clean_text("y" * 2_000_000)
    assert long.startswith("y" * 2000) and long.endswith("[... 1998000 more characters cut]")
    assert clean_text("plain text, ✔ and é stay") == "plain text, ✔ and é stay"


def test_each_grading_limit_has_one_default_and_one_variable(monkeypatch):
    """The CPU limit of a worker is read in one place (Limits.from_env: FXCOURSE_TIMEOUT, else the default), and the
    submission's wall-clock limit follows it unless FXCOURSE_SUBMISSION_TIMEOUT sets its own."""
    from autograder.grader.jail.sandbox import Limits

    monkeypatch.delenv("FXCOURSE_TIMEOUT", raising=False)
    monkeypatch.delenv("FXCOURSE_SUBMISSION_TIMEOUT", raising=False)
    assert Limits.from_env() == Limits() and Limits.from_env().submission_wall() == 6 * Limits().wall
    monkeypatch.setenv("FXCOURSE_TIMEOUT", "7")
    assert Limits.from_env().timeout == 7 and Limits.from_env().submission_wall() == 6 * (7 * Limits().wall_factor + 60)
    monkeypatch.setenv("FXCOURSE_SUBMISSION_TIMEOUT", "30")
    assert Limits.from_env().submission_wall() == 30


@pytest.mark.parametrize("var", ["FXCOURSE_TIMEOUT", "FXCOURSE_SUBMISSION_TIMEOUT"])
@pytest.mark.parametrize("bad", ["abc", "0", "-5", "inf", "nan"])
def test_a_limit_that_is_not_seconds_is_named_and_refused(monkeypatch, var, bad):
    from autograder.grader.jail.sandbox import LimitError, Limits

    monkeypatch.delenv("FXCOURSE_TIMEOUT", raising=False)
    monkeypatch.delenv("FXCOURSE_SUBMISSION_TIMEOUT", raising=False)
    monkeypatch.setenv(var, bad)
    with pytest.raises(LimitError) as caught:
        Limits.from_env().submission_wall()
    assert str(caught.value) == f"{var} must be a number of seconds above 0, got {bad!r}"


def test_check_and_grade_refuse_a_limit_that_is_not_seconds_in_one_line(tmp_path):
    """Before anything is graded: exit 2 and the variable named, not a traceback from a grading thread."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "FXCOURSE_TIMEOUT": "ten"}
    for args in (["check", str(root / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb")],
                 ["grade", "ex01_tracing", "--course", str(root)]):
        r = subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True, env=env,
                           cwd=tmp_path, timeout=300)
        assert r.returncode == 2 and "FXCOURSE_TIMEOUT must be a number of seconds above 0, got 'ten'" in r.stderr, \
            (args, r.returncode, r.stderr[-2000:])
        assert "Traceback" not in r.stderr
