"""Do the benchmarks still run? `python -m benchmarks --smoke` end to end, checking the shape of what it reports.

Never a timed assertion: how fast anything is belongs in BENCHMARKS.md, not in a test.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SECTIONS = ["fusion", "convbn", "qat", "pipeline", "grading", "cluster", "lessons", "pt2e"]  # benchmarks.SECTIONS, in order

pytestmark = pytest.mark.kernel  # runs notebooks, kernels and graders (about a minute)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict, Path]:
    out = tmp_path_factory.mktemp("bench")
    r = subprocess.run([sys.executable, "-m", "benchmarks", "--smoke", "--out", str(out / "B.md"),
                        "--json", str(out / "results.json")], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r, json.loads((out / "results.json").read_text()), out


def test_every_section_ran_or_says_why_not(smoke):
    _, result, _ = smoke
    assert [s["key"] for s in result["sections"]] == SECTIONS
    for sec in result["sections"]:
        assert sec["status"] in ("ok", "skipped"), f"{sec['key']}: {sec['status']}: {sec['reason']}"
        if sec["status"] == "skipped":
            assert sec["reason"].startswith("solutions/") or "not present" in sec["reason"]


def test_sections_whose_inputs_exist_ran(smoke):
    _, result, _ = smoke
    status = {s["key"]: s["status"] for s in result["sections"]}
    needs = {"fusion": "ex06_fusing", "convbn": "ex06_fusing", "qat": "ex07_qat", "pipeline": "ex08_pipeline",
             "grading": "ex01_tracing", "cluster": "ex01_tracing", "pt2e": "ex11_pt2e"}
    for key, assignment in needs.items():
        if (ROOT / "solutions" / assignment / f"{assignment}.ipynb").is_file():
            assert status[key] == "ok", key
    assert status["lessons"] == "ok"


def test_results_carry_machine_tables_targets_and_plots(smoke):
    _, result, out = smoke
    for key in ("date", "command", "cpu", "cores", "torch", "python"):
        assert result["env"][key], key
    assert "--smoke" in result["env"]["command"]
    for sec in result["sections"]:
        if sec["status"] != "ok":
            continue
        assert sec["tables"], sec["key"]
        for table in sec["tables"]:
            assert table["rows"] and all(len(row) == len(table["columns"]) for row in table["rows"]), sec["key"]
        for target in sec["targets"]:
            assert target["met"] in (True, False, None) and target["measured"], sec["key"]
        assert sec["plot"] and Path(sec["plot"]).is_file() and Path(sec["plot"]).stat().st_size > 1000
        assert Path(sec["plot"]).parent == out / "plots"


def test_numbers_are_sane_not_fast(smoke):
    _, result, _ = smoke
    secs = {s["key"]: s for s in result["sections"] if s["status"] == "ok"}
    if "fusion" in secs:
        for shape in secs["fusion"]["data"]["shapes"]:
            assert shape["linears_after"] == 1 and shape["max_abs_diff"] < 1e-3
            assert shape["speedup"] > 0 and shape["flop_ratio"] > 0
    if "convbn" in secs:
        for r in secs["convbn"]["data"]["results"]:
            assert max(r["max_abs_diff"].values()) < 1e-3
    if "qat" in secs:
        for r in secs["qat"]["data"]["results"]:
            assert 0 < r["bytes_int8"] and 0 <= r["acc_int8"] <= 1 and set(r["latency"]) == {"1", "2"}
        sweep = secs["qat"]["data"]["sweep"]
        assert [r["hidden"] for r in sweep] == sorted(r["hidden"] for r in sweep) and len(sweep) >= 2
        assert sweep[-1]["size_ratio"] > sweep[0]["size_ratio"] > 1  # fixed costs amortize as the layers grow
    if "pt2e" in secs:
        for r in secs["pt2e"]["data"]["results"]:
            assert r["qdq"][0] > 0 and r["qdq"][1] >= r["qdq"][0] and all(0 <= a <= 1 for a in r["accuracy"].values())
            assert r["bytes"]["pt2e_lean"] < r["bytes"]["pt2e"]  # the unread float weights are gone
    if "grading" in secs:
        d = secs["grading"]["data"]
        assert d["throughput"]["sequential"]["students"] == 1 and "parallel" not in d["throughput"]
        assert d["assignments"] == ["ex01_tracing"]  # --smoke grades ex01 only, one student
        row = d["per_assignment"][0]
        for how in ("check", "grade", "plain"):
            assert row[how][0] > 0
            assert row["scores"][how] is not None and row["scores"][how][0] == row["scores"][how][1], how
        assert d["phases"] and all(p["wall"] > 0 for p in d["phases"])
    if "cluster" in secs:
        d = secs["cluster"]["data"]
        assert set(d["runs"]) == {"jobs1", "jobs2", "cluster"} and d["students"] == 2
        assert all(not r["not_full"] and r["exit"] == 0 for r in d["runs"].values()), d["runs"]
        assert d["overhead"]["per_task_batch"] > 0 and [p["machines"] for p in d["projection"]] == [1, 4, 16]
    lessons = secs["lessons"]["data"]["lessons"]
    assert len(lessons) == 1 and lessons[0]["status"] == "ok"


def test_markdown_report_has_a_table_per_section(smoke):
    _, result, out = smoke
    text = (out / "B.md").read_text()
    assert "python -m benchmarks --smoke" in text and result["env"]["torch"] in text
    for i, sec in enumerate(result["sections"], 1):
        assert f"## {i}. {sec['title']}" in text
    assert "](plots/" in text


def test_unknown_section_is_a_usage_error():
    r = subprocess.run([sys.executable, "-m", "benchmarks", "--smoke", "--only", "nope"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "unknown section 'nope'" in r.stderr


def test_smoke_writes_no_file_without_out():
    def snapshot() -> dict[str, float]:
        paths = [ROOT / "BENCHMARKS.md", *(ROOT / "benchmarks" / "plots").glob("*")]
        return {str(p): p.stat().st_mtime for p in paths if p.exists()}

    before = snapshot()
    r = subprocess.run([sys.executable, "-m", "benchmarks", "--smoke", "--only", "pipeline"], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "wrote" not in r.stdout
    assert snapshot() == before
