"""The report written out: index.html (plots inline as PNG, every student text escaped), the same numbers as
CSV files and one report.json, and the LMS gradebooks (lms.py)."""
from __future__ import annotations

import base64
import csv
import html
import io
import json
from pathlib import Path
from typing import Any

from autograder.grader.report.data import ClassData
from autograder.grader.report.similarity import Similarity

__all__ = ["write_all", "FILES", "NOTICE"]

NOTICE = ("Similar submissions are flags for a conversation, not findings: the report never reads or changes a "
          "grade, and a pair may be alike for reasons the fingerprints cannot see.")
FILES = {"index.html": "this report", "report.json": "every number below", "assignments.csv": "one row per "
         "assignment", "scores.csv": "one row per student and assignment", "tests.csv": "each test's pass rate",
         "items.csv": "quiz item analysis", "mistakes.csv": "common mistakes", "similar.csv": "similar pairs",
         "canvas.csv": "totals for Canvas (Grades > Import)", "moodle.csv": "totals for Moodle (Grades > Import > "
         "CSV file)"}

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;padding:0 1em;max-width:1200px;color:#222;line-height:1.4}
h1{margin-bottom:.2em} h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.8em 0;font-size:.92em} th,td{border:1px solid #ccc;padding:.25em .5em;
vertical-align:top;text-align:left} th{background:#f3f3f3} td.n{text-align:right;font-variant-numeric:tabular-nums}
.flag{color:#a40000;font-weight:600} .note{background:#fff7d6;border-left:4px solid #e0b000;padding:.6em 1em}
pre{background:#f6f8fa;padding:.5em;overflow-x:auto;font-size:.85em;margin:0;max-height:22em}
.side{display:grid;grid-template-columns:1fr 1fr;gap:.6em;margin:.4em 0 1em}
.plot img{max-width:100%;height:auto} details{margin:.3em 0} summary{cursor:pointer}
nav a{margin-right:1em}
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _f(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _png(fig, alt: str) -> str:
    """The figure as an inline PNG image (a few times faster to draw than SVG, for a class's dozens of plots)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    return f"<img alt='{_e(alt)}' src='data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}'>"


def _figure(w: float, h: float, cols: int = 1):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h))
    return fig, [fig.add_subplot(1, cols, i + 1) for i in range(cols)]


def _assignment_plot(s: dict[str, Any]) -> str:
    fig, (left, right) = _figure(10, 3.2, 2)
    top = s["max_score"] or 1
    left.hist(s["scores"], bins=min(20, max(5, int(top) + 1)), range=(0, top), color="#4878a8")
    left.set_xlabel("score")
    left.set_ylabel("students")
    left.set_title(f"{s['assignment']}: scores of {s['submitted']} submissions")
    names = [t["test"] for t in s["tests"]]
    rates = [100 * (t["pass_rate"] or 0) for t in s["tests"]]
    right.barh(range(len(names)), rates, color="#58a858")
    right.set_yticks(range(len(names)), names, fontsize=7)
    right.invert_yaxis()
    right.set_xlim(0, 100)
    right.set_xlabel("% passed")
    right.set_title("each test's pass rate")
    return _png(fig, f"{s['assignment']}: score distribution and each test's pass rate")


def _items_plot(items: list[dict[str, Any]]) -> str:
    fig, (ax,) = _figure(7, 4)
    for row in items:
        if row["difficulty"] is None or row["point_biserial"] is None:
            continue
        bad = bool(row["flags"])
        ax.scatter(row["difficulty"], row["point_biserial"], color="#c03030" if bad else "#4878a8", s=22)
        if bad:
            ax.annotate(f"{row['assignment'][:4]} {row['question']}", (row["difficulty"], row["point_biserial"]),
                        fontsize=7)
    ax.axhline(0.1, color="#999", lw=0.8, ls="--")
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("difficulty (proportion right)")
    ax.set_ylabel("point-biserial r with the rest of the score")
    ax.set_title("quiz questions (red: flagged)")
    return _png(fig, "quiz questions: difficulty against discrimination")


def _similarity_plot(sim: Similarity, scores: list[float]) -> str:
    fig, (ax,) = _figure(7, 3)
    if scores:
        ax.hist(scores, bins=40, color="#4878a8", log=True)
    ax.axvline(sim.threshold, color="#c03030", lw=1, label="beyond chance: flagged")
    ax.set_xlabel("score (nats) of the pairs that share anything rare")
    ax.set_ylabel("pairs")
    ax.legend(fontsize=8)
    return _png(fig, "similar submissions: the score of each pair sharing anything rare")


def _table(columns: list[str], rows: list[list[str]], numeric: set[int] = frozenset()) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td class='n'>{c}</td>" if i in numeric else f"<td>{c}</td>"
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell(value: Any) -> Any:
    """A CSV cell; text that a spreadsheet would run as a formula (a verdict message can quote what a learner's
    function returned) starts with an apostrophe."""
    return "'" + value if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def _csv(path: Path, columns: list[str], rows: list[list[Any]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(columns)
        w.writerows([_cell(c) for c in row] for row in rows)


def _pairs_json(sim: Similarity) -> list[dict[str, Any]]:
    return [{"rank": i, "a": p.a, "b": p.b, "flagged": p.flagged, "score": p.score, "code": p.code,
             "diagnoses": p.diagnoses, "functions": p.functions,
             "shared_diagnoses": [list(x) for x in p.shared_diagnoses], "why": p.why}
            for i, p in enumerate(sim.pairs, 1)]


def write_csvs(out: Path, data: ClassData, stats: dict[str, Any], sim: Similarity) -> None:
    _csv(out / "assignments.csv", ["assignment", "due", "max_score", "students", "submitted", "missing", "late",
                                   "mean", "median"],
         [[s["assignment"], s["due"] or "", s["max_score"], s["students"], s["submitted"], len(s["missing"]),
           len(s["late"]), round(s["mean"], 4), s["median"] if s["median"] is not None else ""]
          for s in stats["assignments"]])
    _csv(out / "scores.csv", ["student", "assignment", "submitted", "score", "max_score", "late"],
         [[sid, a.name, int(sid in a.submissions), f"{a.submissions[sid].score:g}" if sid in a.submissions else "",
           f"{a.max_score:g}", int(sid in a.submissions and a.submissions[sid].late)]
          for a in data.assignments for sid in sorted(data.students)])
    _csv(out / "tests.csv", ["assignment", "test", "max_points", "passed", "pass_rate"],
         [[s["assignment"], t["test"], t["max_points"], t["passed"], "" if t["pass_rate"] is None
           else round(t["pass_rate"], 4)] for s in stats["assignments"] for t in s["tests"]])
    letters = sorted({k for row in stats["items"] for k in row["options"]})
    _csv(out / "items.csv", ["assignment", "question", "key", "answered", "difficulty", "point_biserial",
                             "upper_lower", *[f"chose_{k}" for k in letters], "no_answer", "flags"],
         [[r["assignment"], r["question"], r["key"], r["answered"], _round(r["difficulty"]),
           _round(r["point_biserial"]), _round(r["upper_lower"]), *[r["options"].get(k, "") for k in letters],
           r["no_answer"], "; ".join(r["flags"])] for r in stats["items"]])
    _csv(out / "mistakes.csv", ["assignment", "function", "rank", "students", "share", "diagnosis", "hint",
                                "section"],
         [[m["assignment"], m["function"], i, x["students"], round(x["share"], 4), x["diagnosis"], x["hint"] or "",
           m["section"]] for m in stats["mistakes"] for i, x in enumerate(m["mistakes"], 1)])
    _csv(out / "similar.csv", ["rank", "student_a", "student_b", "flagged", "score", "code", "diagnoses",
                               "answer_cells", "why"],
         [[p["rank"], p["a"], p["b"], int(p["flagged"]), round(p["score"], 3), round(p["code"], 3),
           round(p["diagnoses"], 3), " ".join(sorted(p["functions"])), p["why"]] for p in _pairs_json(sim)])


def _round(x: float | None) -> str | float:
    return "" if x is None else round(x, 4)


def _assignments_html(stats: dict[str, Any]) -> str:
    parts = [_table(["assignment", "due", "submitted", "missing", "late", "mean", "median", "max"],
                    [[_e(s["assignment"]), _e(s["due"] or "—"), f"{s['submitted']} / {s['students']}",
                      str(len(s["missing"])), str(len(s["late"])), _f(s["mean"]), _f(s["median"]),
                      f"{s['max_score']:g}"] for s in stats["assignments"]], numeric={2, 3, 4, 5, 6, 7})]
    for s in stats["assignments"]:
        parts.append(f"<h3 id='a-{_e(s['assignment'])}'>{_e(s['assignment'])}</h3>")
        parts.append(f"<div class='plot'>{_assignment_plot(s)}</div>" if s["submitted"] else
                     "<p>No submissions.</p>")
        for what in ("missing", "late"):
            if s[what]:
                parts.append(f"<details><summary>{len(s[what])} {what}</summary><p>"
                             f"{_e(', '.join(s[what]))}</p></details>")
    return "\n".join(parts)


def _items_html(stats: dict[str, Any]) -> str:
    items = stats["items"]
    if not items:
        return "<p>No quiz questions in these assignments.</p>"
    rows = []
    for r in items:
        opts = " ".join(f"<b>{_e(k)}</b>:{n}" if k == r["key"] else f"{_e(k)}:{n}" for k, n in r["options"].items())
        flags = "<br>".join(f"<span class='flag'>{_e(f)}</span>" for f in r["flags"])
        rows.append([_e(r["assignment"]), _e(r["question"]), _e(r["text"]), _f(r["difficulty"]),
                     _f(r["point_biserial"]), _f(r["upper_lower"]), opts + (f" none:{r['no_answer']}"
                                                                           if r["no_answer"] else ""), flags])
    return (f"<div class='plot'>{_items_plot(items)}</div>"
            "<p>Difficulty: the proportion who chose the key (bold). Discrimination: the point-biserial correlation "
            "of being right with the rest of the assignment's score, and the share right in the top 27% by score "
            "minus that in the bottom 27%. Flagged: discrimination negative or below 0.1, or a distractor nobody "
            "picks.</p>"
            + _table(["assignment", "question", "text", "difficulty", "r (rest)", "upper − lower", "chosen",
                      "flags"], rows, numeric={3, 4, 5}))


def _mistakes_html(stats: dict[str, Any]) -> str:
    parts = []
    for m in stats["mistakes"]:
        if not m["mistakes"]:
            continue
        parts.append(f"<h3>{_e(m['assignment'])} · <code>{_e(m['function'])}</code>: {m['failed']} of "
                     f"{m['submitted']} failed</h3><p>Reteach: {_e(m['section'] or 'the lesson of ' + m['assignment'])}"
                     "</p><ol>")
        for x in m["mistakes"]:
            parts.append(f"<li><b>{x['students']} students ({100 * x['share']:.0f}%)</b>: {_e(x['diagnosis'])}"
                         f"<br><small>message: {_e(x['message'])}</small>"
                         f"<details><summary>an anonymised example</summary><pre>{_e(x['example'])}</pre></details>"
                         "</li>")
        parts.append("</ol>")
    return "\n".join(parts) or "<p>No failed tests.</p>"


def _similar_html(data: ClassData, sim: Similarity) -> str:
    answers = {(a.name, s): sub.answers for a in data.assignments for s, sub in a.submissions.items()}
    flagged = [p for p in sim.pairs if p.flagged]
    parts = [f"<p class='note'>{_e(NOTICE)}</p>",
             f"<details><summary>How pairs are found</summary><p>{_e(sim.method)}</p></details>",
             f"<p>{sim.documents} answer cells fingerprinted; {sim.candidates} pairs share something rare; "
             f"<b>{len(flagged)} flagged</b>: a score above {sim.threshold:.1f} nats (random pairings score "
             f"{sim.chance[0]:.1f} ± {sim.chance[1]:.1f}), in at least two answer cells.</p>"]
    parts.append(_table(["rank", "students", "flagged", "score", "code", "diagnoses", "why"],
                        [[str(i), f"{_e(p.a)} · {_e(p.b)}", "yes" if p.flagged else "no", _f(p.score, 1),
                          _f(p.code, 1), _f(p.diagnoses, 1), _e(p.why)] for i, p in enumerate(sim.pairs, 1)],
                        numeric={0, 3, 4, 5}))
    for i, p in enumerate(flagged, 1):
        parts.append(f"<details class='evidence'><summary>#{i}: {_e(p.a)} and {_e(p.b)}: evidence</summary>")
        for where, w in sorted(p.functions.items(), key=lambda kv: -kv[1])[:3]:
            assignment, _, fn = where.partition("/")
            left = answers.get((assignment, p.a), {}).get(fn, "")
            right = answers.get((assignment, p.b), {}).get(fn, "")
            parts.append(f"<p><code>{_e(where)}</code>: {w:.1f} nats shared</p><div class='side'>"
                         f"<pre>{_e(left)}</pre><pre>{_e(right)}</pre></div>")
        if p.shared_diagnoses:
            parts.append("<ul>" + "".join(f"<li><code>{_e(w)}</code>: {_e(d)} ({n} students)</li>"
                                          for w, d, n, _ in p.shared_diagnoses) + "</ul>")
        parts.append("</details>")
    return "\n".join(parts)


def write_all(out: Path, data: ClassData, stats: dict[str, Any], sim: Similarity, pair_scores: list[float],
              progress) -> None:
    """Write every file of the report into `out`."""
    from autograder.grader.report.lms import write_canvas, write_moodle

    out.mkdir(parents=True, exist_ok=True)
    progress.stage("writing CSV and JSON", 1)
    write_csvs(out, data, stats, sim)
    write_canvas(data, out / "canvas.csv")
    write_moodle(data, out / "moodle.csv")
    (out / "report.json").write_text(json.dumps({
        "students": len(data.students), **stats, "similar": {
            "notice": NOTICE, "method": sim.method, "threshold": sim.threshold, "chance": sim.chance,
            "candidates": sim.candidates, "updates": sim.updates, "cells": sim.documents,
            "pairs": _pairs_json(sim)}},
        indent=1, default=str), encoding="utf-8")
    progress.stage("drawing the plots and the page", len(stats["assignments"]) + 2)
    body = [f"<h1>Class report</h1><p>{len(data.students)} students, {len(data.assignments)} assignment"
            f"{'s' if len(data.assignments) != 1 else ''}: {_e(', '.join(a.name for a in data.assignments))}.</p>",
            "<nav><a href='#assignments'>Assignments</a><a href='#items'>Quiz items</a><a href='#mistakes'>Common "
            "mistakes</a><a href='#similar'>Similar submissions</a><a href='#files'>Files</a></nav>",
            "<h2 id='assignments'>Assignments</h2>", _assignments_html(stats),
            "<h2 id='items'>Quiz item analysis</h2>", _items_html(stats),
            "<h2 id='mistakes'>Common mistakes</h2>", _mistakes_html(stats),
            "<h2 id='similar'>Similar submissions</h2>", _similar_html(data, sim),
            f"<div class='plot'>{_similarity_plot(sim, pair_scores)}</div>",
            "<h2 id='files'>Files</h2><ul>" + "".join(f"<li><a href='{_e(n)}'>{_e(n)}</a>: {_e(w)}</li>"
                                                      for n, w in FILES.items()) + "</ul>"]
    progress.advance(len(stats["assignments"]) + 2)
    (out / "index.html").write_text("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Class report"
                                    f"</title><style>{_CSS}</style></head><body>{''.join(body)}</body></html>",
                                    encoding="utf-8")
