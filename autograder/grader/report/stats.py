"""The report's numbers: each assignment's scores, tests, late and missing submissions; the quiz item analysis;
the class's common mistakes. Plain data (dicts and lists), written as CSV, JSON and HTML by render.py."""
from __future__ import annotations

import ast
import math
from collections import Counter
from typing import Any

from autograder.coursedata.sections import section
from autograder.grader.report.data import Assignment, ClassData

__all__ = ["assignment_summary", "item_analysis", "common_mistakes", "point_biserial", "upper_lower",
           "NEAR_ZERO", "anonymised"]

NEAR_ZERO = 0.1     # |point-biserial| below this, or negative: the question does not tell strong from weak
GROUP = 0.27        # the upper and lower groups of Kelley's discrimination index


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def assignment_summary(a: Assignment, roster: list[str]) -> dict[str, Any]:
    subs = a.submissions
    scores = sorted(s.score for s in subs.values())
    n = len(scores)
    tests = [{"test": t, "max_points": top,
              "passed": sum(1 for s in subs.values() if top > 0 and s.points.get(t, 0.0) >= top - 1e-9),
              "pass_rate": (sum(1 for s in subs.values() if top > 0 and s.points.get(t, 0.0) >= top - 1e-9) / n)
              if n else None} for t, top in a.tests.items()]
    return {"assignment": a.name, "due": a.duedate.isoformat(sep=" ") if a.duedate else None,
            "max_score": a.max_score, "students": len(roster), "submitted": n,
            "missing": sorted(set(roster) - set(subs)), "late": sorted(s.student for s in subs.values() if s.late),
            "scores": scores, "mean": _mean(scores),
            "median": (scores[n // 2] if n % 2 else (scores[n // 2 - 1] + scores[n // 2]) / 2) if n else None,
            "tests": tests}


def point_biserial(right: list[int], rest: list[float]) -> float | None:
    """Pearson's correlation of 0/1 `right` with `rest` (None when either does not vary)."""
    n = len(right)
    if n < 2:
        return None
    mx, my = _mean(right), _mean(rest)
    sxy = sum((x - mx) * (y - my) for x, y in zip(right, rest))
    sxx = sum((x - mx) ** 2 for x in right)
    syy = sum((y - my) ** 2 for y in rest)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None


def upper_lower(right: list[int], total: list[float], students: list[str]) -> float | None:
    """Kelley's index: the share right in the top 27% by total score minus the share in the bottom 27% (groups of
    round(0.27 n) students, at least one; ties broken by student id)."""
    n = len(right)
    if n < 2:
        return None
    g = max(1, round(GROUP * n))
    order = sorted(range(n), key=lambda i: (total[i], students[i]))
    return _mean([right[i] for i in order[-g:]]) - _mean([right[i] for i in order[:g]])


def item_analysis(a: Assignment) -> list[dict[str, Any]]:
    """One row per quiz question: difficulty, discrimination, option counts and flags."""
    students = sorted(a.submissions)
    rows = []
    for q in a.questions:
        qid, key = q["id"], q["key"]
        cell = f"test_quiz_{qid}"
        top = a.tests.get(cell, 1.0)
        chosen = [a.chosen(a.submissions[s], qid) for s in students]
        right = [int(c == key) for c in chosen]
        total = [a.submissions[s].score for s in students]
        rest = [t - a.submissions[s].points.get(cell, top * r) for t, s, r in zip(total, students, right)]
        counts = Counter(c or "no answer" for c in chosen)
        r_pb, d = point_biserial(right, rest), upper_lower(right, total, students)
        flags = []
        if r_pb is not None and r_pb < 0:
            flags.append(f"negative discrimination (r = {r_pb:.2f})")
        elif r_pb is not None and r_pb < NEAR_ZERO:
            flags.append(f"near-zero discrimination (r = {r_pb:.2f})")
        unused = [k for k in q["options"] if k != key and counts.get(k, 0) == 0]
        if students and unused:
            flags.append(f"distractor{'s' if len(unused) > 1 else ''} nobody picks: {', '.join(unused)}")
        rows.append({"assignment": a.name, "question": qid, "text": q["question"], "key": key,
                     "section": q.get("section", ""), "answered": len(students),
                     "difficulty": _mean(right) if students else None, "point_biserial": r_pb, "upper_lower": d,
                     "options": {k: counts.get(k, 0) for k in q["options"]},
                     "no_answer": counts.get("no answer", 0), "flags": flags})
    return rows


def anonymised(source: str) -> str:
    """An answer cell as an example nobody can be recognised by: comments, docstrings and blank lines gone (the
    code as Python reads it), or, where it does not parse, its lines without comments."""
    try:
        tree = ast.parse(source)
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                    and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
        return ast.unparse(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "\n".join(line.split("#", 1)[0].rstrip() for line in source.splitlines() if line.split("#", 1)[0].strip())


def common_mistakes(a: Assignment) -> list[dict[str, Any]]:
    """For each graded function: the confirmed diagnoses of its failures, ranked by how many students hit them."""
    out = []
    n = len(a.submissions)
    for fn in a.functions:
        test = f"test_{fn}"
        groups: dict[str, list[str]] = {}
        for s in sorted(a.submissions):
            f = a.submissions[s].failures.get(test)
            if f is not None:
                groups.setdefault(f.diagnosis, []).append(s)
        ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        mistakes = []
        for diagnosis, who in ranked:
            example_student = min(who, key=lambda s: (len(a.submissions[s].answers.get(fn, "")), s))
            sub = a.submissions[example_student]
            f = sub.failures[test]
            mistakes.append({"diagnosis": diagnosis, "hint": f.hint, "message": f.message, "students": len(who),
                             "share": len(who) / n if n else 0.0,
                             "example": anonymised(sub.answers.get(fn, "")) if fn in sub.answers else ""})
        failed = sum(len(w) for w in groups.values())
        out.append({"assignment": a.name, "function": fn, "section": section(a.name, fn) or "",
                    "submitted": n, "failed": failed, "mistakes": mistakes})
    return out


def class_stats(data: ClassData) -> dict[str, Any]:
    roster = sorted(data.students)
    return {"assignments": [assignment_summary(a, roster) for a in data.assignments],
            "items": [row for a in data.assignments for row in item_analysis(a)],
            "mistakes": [row for a in data.assignments for row in common_mistakes(a)]}
