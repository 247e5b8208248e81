"""Section 6: seconds to run each lesson top to bottom in a fresh kernel (autograder.grader.jail.headless.execute), as a learner
or `fxcourse lab --headless` would. Each lesson runs in a temporary working folder, so nothing it writes lands
in the checkout."""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from .common import ROOT, Config, Section, Skip, Table, Target, children_cpu

TITLE = "Lessons: run time top to bottom"


LESSON_SECONDS = 90  # each lesson top to bottom, headless


def run(cfg: Config) -> Section:
    from autograder.grader.jail.headless import execute

    lessons = sorted((ROOT / "lessons").glob("*.ipynb"))
    if cfg.smoke:
        lessons = lessons[:1]
    if not lessons:
        raise Skip("no lessons/*.ipynb present")
    sec = Section("lessons", TITLE)
    results, rows = [], []
    for path in lessons:
        cwd = Path(tempfile.mkdtemp(prefix="fxcourse-bench-lesson-"))
        c0, start = children_cpu(), time.perf_counter()
        try:
            nb = execute(path, timeout=cfg.lesson_timeout, cwd=cwd)
            status = "ok"
            cells = sum(1 for c in nb.cells if c.cell_type == "code")
        except Exception as exc:  # a failing lesson is reported with the time it ran, and the run goes on
            lines = [l for l in str(exc).strip().splitlines() if l.strip()]
            status = f"failed: {type(exc).__name__}: {(lines[-1] if lines else '')[:160]}"
            cells = None
        finally:
            shutil.rmtree(cwd, ignore_errors=True)
        wall, cpu = time.perf_counter() - start, children_cpu() - c0
        print(f"      {path.stem}: {wall:.0f} s, {status}", flush=True)
        results.append({"lesson": path.stem, "wall": wall, "kernel_cpu": cpu, "status": status, "code_cells": cells})
        rows.append([path.stem, f"{wall:.1f}", f"{cpu:.1f}", "—" if cells is None else str(cells), status])
    total = sum(r["wall"] for r in results)
    rows.append(["**all lessons**", f"**{total:.1f}**", f"**{sum(r['kernel_cpu'] for r in results):.1f}**", "", ""])
    sec.tables.append(Table(
        "fresh python3 kernel per lesson, including kernel start; CPU s is the kernel's (counted when it exits)",
        ["lesson", "wall s", "kernel CPU s", "code cells", "status"], rows))
    ok = sum(r["status"] == "ok" for r in results)
    slowest = max(results, key=lambda r: r["wall"])
    sec.targets.append(Target(f"lessons, top to bottom in a fresh kernel, on {os.cpu_count()} cores",
                              f"each runs without error in under {LESSON_SECONDS} s",
                              f"{ok} of {len(results)} ran cleanly, {total:.0f} s in all; the slowest, "
                              f"{slowest['lesson']}, {slowest['wall']:.0f} s",
                              ok == len(results) and slowest["wall"] < LESSON_SECONDS))
    if cfg.smoke:
        sec.notes.append(f"--smoke: only {lessons[0].stem}.")
    sec.data = {"lessons": results}
    return sec


def plot(sec: Section, path: str) -> None:
    import matplotlib.pyplot as plt

    res = sec.data["lessons"]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(res) + 1.4))
    ys = list(range(len(res)))
    ax.barh(ys, [r["wall"] for r in res], color=["#4c72b0" if r["status"] == "ok" else "#d62728" for r in res],
            label="wall")
    ax.barh(ys, [r["kernel_cpu"] for r in res], height=0.3, color="black", alpha=0.5, label="kernel CPU")
    for y, r in zip(ys, res):
        ax.text(r["wall"], y, f" {r['wall']:.1f} s" + ("" if r["status"] == "ok" else " (failed)"), va="center",
                fontsize=8)
    ax.set_yticks(ys)
    ax.set_yticklabels([r["lesson"] for r in res], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds, top to bottom in a fresh kernel")
    ax.set_xlim(0, max(r["wall"] for r in res) * 1.25)
    ax.set_title(f"lessons: {sum(r['wall'] for r in res):.0f} s in all", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
