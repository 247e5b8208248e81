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

SECTIONS = ["fusion", "convbn", "qat", "pipeline", "grading", "cluster", "lessons", "pt2e", "classreport",
            "inductor"]  # benchmarks.SECTIONS, in order

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
             "grading": "ex01_tracing", "cluster": "ex01_tracing", "pt2e": "ex11_pt2e", "inductor": "ex06_fusing"}
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
        check_pt2e_compile_rows(secs["pt2e"])
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


def check_pt2e_compile_rows(sec: dict) -> None:
    """The inductor table has a row per model, each marked skipped in --smoke; the backend table has its three."""
    titles = [t["title"] for t in sec["tables"]]
    lowered = sec["tables"][[i for i, t in enumerate(titles) if t.startswith("lowered by torch.compile")][0]]
    assert [row[0] for row in lowered["rows"]] == [r["model"] for r in sec["data"]["results"]]
    skipped = [row[1] == "—" and row[2].startswith("skipped in smoke run") for row in lowered["rows"]]
    assert all(skipped), lowered["rows"]
    assert all(r["inductor"]["skipped"].startswith("skipped in smoke run") for r in sec["data"]["results"])
    assert any(n.startswith("Inductor rows: skipped in smoke run") for n in sec["notes"])
    backends = sec["tables"][[i for i, t in enumerate(titles) if t.startswith("what a backend costs")][0]]
    assert [row[0] for row in backends["rows"]] == ["no compile", 'torch.compile(backend="eager")',
                                                    "torch.compile(backend=our gm.forward)"]
    b = sec["data"]["backends"]
    assert b["outputs_equal"] and b["graph_nodes"] and all(v > 0 for v in b["first_call_s"].values())
    assert b["first_call_vs_eager"]["no compile"] == 1 and all(v > 0 for v in b["per_call_vs_eager"].values())


def test_pt2e_alone_reports_compile_rows(tmp_path):
    """`--only pt2e --smoke`: the inductor rows are there and marked skipped, the backend rows are measured."""
    if not (ROOT / "solutions" / "ex11_pt2e" / "ex11_pt2e.ipynb").is_file():
        pytest.skip("solutions/ex11_pt2e not present")
    r = subprocess.run([sys.executable, "-m", "benchmarks", "--smoke", "--only", "pt2e", "--out",
                        str(tmp_path / "B.md"), "--json", str(tmp_path / "r.json")], cwd=ROOT, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    (sec,) = json.loads((tmp_path / "r.json").read_text())["sections"]
    assert sec["status"] == "ok", sec["reason"]
    check_pt2e_compile_rows(sec)
    text = (tmp_path / "B.md").read_text()
    assert "skipped in smoke run" in text and "torch.compile(backend=our gm.forward)" in text


def test_pt2e_without_a_compiler_skips_inductor_and_break_even_can_be_never(monkeypatch):
    from benchmarks import pt2e

    monkeypatch.setattr(pt2e.shutil, "which", lambda name: None)
    assert pt2e.cxx_compiler() is None
    reason = pt2e.inductor_skip_reason(False, pt2e.cxx_compiler())
    assert reason.startswith("skipped: no C++ compiler found") and "g++" in reason
    assert pt2e.inductor_skip_reason(True, "g++").startswith("skipped in smoke run")
    assert pt2e.inductor_skip_reason(False, "g++") == ""
    monkeypatch.setattr(pt2e.shutil, "which", lambda name: f"/usr/bin/{name}" if name == "c++" else None)
    assert pt2e.cxx_compiler() == "c++"
    assert pt2e.break_even(10.0, 2e-3, 1e-3) == (10_000.0, "10,000")
    assert pt2e.break_even(10.0, 1e-3, 1e-3)[0] is None and pt2e.break_even(10.0, 1e-3, 2e-3)[1].startswith("never")


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


def test_a_run_of_some_sections_is_merged_into_the_full_report():
    """`--only` puts its sections in place of theirs (numbers kept, summary rows replaced), adds a section the
    report lacks at the end, and leaves the machine table and every other section as they were."""
    from benchmarks.report import merge

    full = ("# Benchmarks\n\n| date | old |\n\n## Summary of targets\n\n| section | what |\n|---|---|\n"
            "| 1. Fusion | a | old |\n| 2. Grading | b | old |\n| 2. Grading | c | old |\n\n"
            "## 1. Fusion\n\nfusion body\n\n## 2. Grading\n\nold grading\n\nWhole run: 9 min.\n")
    fresh = ("# Benchmarks\n\n| date | new |\n\n## Summary of targets\n\n| section | what |\n|---|---|\n"
             "| 1. Grading | b | new |\n| 2. Lessons | d | new |\n\n"
             "## 1. Grading\n\nnew grading\n\n## 2. Lessons\n\nnew lessons\n\nWhole run: 1 min.\n")
    out = merge(full, fresh, "Re-run on its own.")
    assert "| date | old |" in out and "| date | new |" not in out
    assert "| 1. Fusion | a | old |" in out and "fusion body" in out
    assert "| 2. Grading | b | new |" in out and "| 2. Grading | c | old |" not in out
    assert "## 2. Grading\n\nRe-run on its own.\n\nnew grading" in out and "old grading" not in out
    assert "## 3. Lessons\n\nRe-run on its own.\n\nnew lessons" in out and "| 3. Lessons | d | new |" in out
    assert out.index("| 2. Grading | b") < out.index("| 3. Lessons") < out.index("## 1. Fusion")
    assert out.rstrip().endswith("Whole run: 9 min.") and out.count("Whole run:") == 1
