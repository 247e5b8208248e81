"""Section: `fxcourse report` on a class of 500 students x 14 assignments (the course's own, and copies of its first
ones under new names to make fourteen), built by autograder/grader/report/synthetic.py as a gradebook and autograded notebooks
(answers from the course's solutions, alternatives and mutants; planted copies and forced pairs). The command is
run whole, as an instructor runs it (`python -m autograder.cli report`), a few times; each part's wall-clock and
CPU seconds come from the lines it prints. Also: the similar pairs it flags against the planted copies
(precision, recall), and how many pairs it compared against all pairs of the class.
"""
from __future__ import annotations

import json
import re
import shutil
import statistics
import tempfile
from pathlib import Path

from .common import ROOT, Config, Section, Table, Target, fmt_s, load_average, python, run_cmd

TITLE = "Class report: fxcourse report on 500 students x 14 assignments"
STUDENTS, ROUNDS = 500, 3
def _aliases(course: list[str], total: int = 14) -> dict[str, str]:
    """Made-up assignments, each a copy of one of the course's, that bring the class to `total` assignments."""
    return {f"ex{len(course) + 1 + i:02d}_{base[5:]}_again": base for i, base in enumerate(course[:total - len(course)])}


_DONE = re.compile(r"^  (.+): done \(([\d.]+) s, ([\d.]+) s CPU\)$", re.M)


def run(cfg: Config) -> Section:
    from autograder.coursedata.exercises import EXERCISES
    from autograder.grader.report.synthetic import make_class, pair_quality

    sec = Section("classreport", TITLE)
    students = 30 if cfg.smoke else STUDENTS
    course = [e.id for e in EXERCISES] if not cfg.smoke else ["ex01_tracing"]
    aliases = _aliases(course) if not cfg.smoke else _aliases(course, 2)
    rounds = 1 if cfg.smoke else ROUNDS
    tmp = Path(tempfile.mkdtemp(prefix="fxcourse-bench-report-"))
    try:
        truth = make_class(ROOT, tmp / "course", course, students, aliases=aliases, copies=5, forced=5)
        runs = []
        for _ in range(rounds):
            shutil.rmtree(tmp / "out", ignore_errors=True)
            wall, cpu, r = run_cmd([python(), "-m", "autograder.cli", "report", "--course", str(truth.root),
                                    "--out", str(tmp / "out")], cwd=truth.root, timeout=1800)
            if r.returncode != 0:
                raise RuntimeError(f"fxcourse report failed: {(r.stdout + r.stderr).strip()[-300:]}")
            parts = {m.group(1): (float(m.group(2)), float(m.group(3))) for m in _DONE.finditer(r.stdout)}
            runs.append({"wall": wall, "cpu": cpu, "parts": parts, "load": load_average()})
        rep = json.loads((tmp / "out" / "report.json").read_text(encoding="utf-8"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    class _P:  # the pairs as pair_quality reads them
        def __init__(self, row: dict) -> None:
            self.a, self.b, self.flagged = row["a"], row["b"], row["flagged"]

    quality = pair_quality(truth, [_P(p) for p in rep["similar"]["pairs"]])
    cells = sum(m["submitted"] for m in rep["mistakes"])
    wall = statistics.median(r["wall"] for r in runs)
    cpu = statistics.median(r["cpu"] for r in runs)
    all_pairs = students * (students - 1) // 2
    n_assign = len(course) + len(aliases)
    sec.tables.append(Table("the class and what the report found", ["", ""], [
        ["students x assignments", f"{students} x {n_assign}"],
        ["answer cells of graded functions", str(cells)],
        ["pairs of students", str(all_pairs)],
        ["pairs that share a rare fingerprint or diagnosis", f"{rep['similar']['candidates']} "
         f"({100 * rep['similar']['candidates'] / all_pairs:.1f}% of all pairs)"],
        ["pair updates through the index of rare fingerprints, against a naive comparison of every pair's cells",
         f"{rep['similar']['updates']} against {all_pairs * len(rep['mistakes'])} "
         f"({all_pairs} pairs x {len(rep['mistakes'])} functions)"],
        ["planted copies / flagged / planted among flagged",
         f"{quality['planted']} / {quality['flagged']} / {quality['found']}"],
        ["precision, recall of the flags", f"{quality['precision']:.2f}, {quality['recall']:.2f}"],
        ["forced pairs (independent, alike because the task forces it) flagged", str(len(quality["forced_flagged"]))],
    ]))
    sec.tables.append(Table("the whole command, each round (wall-clock; CPU of it and its workers)",
                            ["round", "wall", "CPU", "load average after (1/5/15 min)"],
                            [[str(i), fmt_s(r["wall"]), fmt_s(r["cpu"]), r["load"]] for i, r in enumerate(runs, 1)]))
    names = list(runs[0]["parts"])
    sec.tables.append(Table("each part (median over rounds)", ["part", "wall", "CPU"], [
        [n, fmt_s(statistics.median(r["parts"][n][0] for r in runs if n in r["parts"])),
         fmt_s(statistics.median(r["parts"][n][1] for r in runs if n in r["parts"]))] for n in names]
        + [["(start-up: imports, the course, torch for the quiz data)",
            fmt_s(wall - sum(statistics.median(r["parts"][n][0] for r in runs if n in r["parts"]) for n in names)),
            ""]]))
    load = runs[-1]["load"]
    sec.targets.append(Target(f"{students} x {n_assign} class reported", "within a minute on two cores",
                              f"{fmt_s(cpu)} CPU of the command and its workers, {fmt_s(wall)} wall-clock at load "
                              f"average {load} (median of {rounds})", (cpu < 60) if not cfg.smoke else None,
                              "judged on CPU seconds: the report runs one process (two while fingerprinting), so on "
                              "two idle cores its wall-clock is at most its CPU time (its files are read from the "
                              "page cache); on a shared machine wall-clock also counts the other processes' work"
                              if not cfg.smoke else "smoke: a class of 30"))
    sec.targets.append(Target("planted copies flagged", "every one, and no other pair above them",
                              f"recall {quality['recall']:.2f}, precision {quality['precision']:.2f}",
                              quality["recall"] == 1.0 and quality["highest_other_rank"] > quality[
                                  "lowest_planted_rank"] if not cfg.smoke else None))
    sec.notes.append("The similarity step compares only the pairs found through an inverted index of rare "
                     "fingerprints (held by at most 5% of the class and at most 20 students) and rare diagnoses, "
                     "never all pairs; chance is measured on random pairings "
                     "(autograder/grader/report/similarity.py).")
    sec.notes.append("Fingerprinting runs in two processes from 3000 answer cells on; the other parts in one. The "
                     "class is built without grading (synthetic.py): its build is not timed.")
    sec.data = {"runs": runs, "quality": quality, "students": students, "assignments": n_assign}
    return sec


def plot(sec: Section, path: str) -> None:
    import matplotlib.pyplot as plt

    runs = sec.data["runs"]
    names = list(runs[0]["parts"])
    walls = [statistics.median(r["parts"][n][0] for r in runs if n in r["parts"]) for n in names]
    cpus = [statistics.median(r["parts"][n][1] for r in runs if n in r["parts"]) for n in names]
    fig, ax = plt.subplots(figsize=(9, 3.8))
    y = range(len(names))
    ax.barh([i - 0.2 for i in y], walls, height=0.4, color="#4c72b0", label="wall-clock")
    ax.barh([i + 0.2 for i in y], cpus, height=0.4, color="#dd8452", label="CPU (all processes)")
    ax.set_yticks(list(y))
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds")
    ax.set_title(f"fxcourse report, {sec.data['students']} students x {sec.data['assignments']} assignments: "
                 "each part", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
