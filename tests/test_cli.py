"""The fxcourse command as a learner and a script see it: output contract, messages, exit codes."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT

SOLUTION = ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb"
RELEASE = ROOT / "exercises" / "ex01_tracing" / "ex01_tracing.ipynb"


def fxcourse(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=900)


@pytest.mark.kernel
def test_check_json_contract_on_the_solution_and_the_release():
    full = fxcourse("check", str(SOLUTION), "--json")
    assert full.returncode == 0, full.stderr
    report = json.loads(full.stdout)
    assert set(report) >= {"notebook", "score", "max_score", "tests"}
    assert report["notebook"] == "ex01_tracing" and report["score"] == report["max_score"] == 10.0
    for t in report["tests"]:
        assert set(t) >= {"id", "points", "max_points", "passed", "message"}
        assert t["id"].startswith("test_") and t["passed"] and t["points"] == t["max_points"]
    empty = fxcourse("check", str(RELEASE), "--json")
    assert empty.returncode == 1
    report = json.loads(empty.stdout)
    assert report["score"] == 0.0 and report["max_score"] == 10.0
    assert all(not t["passed"] and t["points"] == 0.0 and t["message"] for t in report["tests"])
    assert any("not implemented yet" in t["message"] for t in report["tests"])


@pytest.mark.kernel
def test_check_text_output_names_each_test_and_a_hint():
    r = fxcourse("check", str(RELEASE))
    assert r.returncode == 1
    assert "ex01_tracing: 0 / 10 points" in r.stdout
    assert "test_node_summary" in r.stdout and "Hint:" in r.stdout


@pytest.mark.parametrize("content,expected", [
    (None, "no such file"),
    (b"", "the file is empty"),
    (b"{oops", "not valid JSON"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "not UTF-8"),
    (b'{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}', "unknown assignment 'notes'"),
])
def test_check_bad_input_is_one_clear_line_and_exit_2(tmp_path, content, expected):
    path = tmp_path / "notes.ipynb"
    if content is not None:
        path.write_bytes(content)
    r = fxcourse("check", str(path))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fxcourse: error:") and expected in lines[0]
    assert r.stdout == ""


def test_generate_and_grade_refuse_unknown_assignments():
    r = fxcourse("generate", "ex99_nothing")
    assert r.returncode == 2 and "unknown assignment 'ex99_nothing'" in r.stderr
    assert "ex01_tracing" in r.stderr


def test_usage_errors_exit_2():
    r = fxcourse("frobnicate")
    assert r.returncode == 2
