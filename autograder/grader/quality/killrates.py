"""`fxcourse validate`: how many mutants (hand-written and automatic) the checks catch, how many alternatives pass.

The hand-written mutants and alternatives (instructor/fxcourse_instructor/mutants/) are judged by
autograder.grader.quality.validate; the automatic ones are made and judged by autograder.grader.quality.automutants,
and a survivor must be listed as equivalent (instructor/fxcourse_instructor/mutants/equivalent.py).
"""
from __future__ import annotations

import json
from pathlib import Path

from autograder.course.console import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from autograder.grader.ops.nbgrader import known_assignments
from autograder.course.root import find_course

__all__ = ["validate"]


def validate(assignment: list[str], as_json: bool = False, hand_only: bool = False, course: str | None = None) -> int:
    """`fxcourse validate`: one row per exercise (`as_json`: a JSON list); exit 1 when a mutant survives or an
    alternative fails (`hand_only`: without the automatic mutants)."""
    from autograder.grader.quality.validate import evaluate

    found = find_course(Path.cwd(), course)
    names = known_assignments(found, assignment)
    if names is None:
        return EXIT_USAGE
    auto = not hand_only
    rows, bad = [], []
    for name in names:
        try:
            outcomes = evaluate(name, found.solutions)
        except ModuleNotFoundError:
            rows.append({"assignment": name, "mutants_killed": 0, "mutants": 0, "alternatives_passed": 0,
                         "alternatives": 0})
            bad.append(f"{name}: no mutants module instructor/fxcourse_instructor/mutants/{name}.py")
            continue
        mutants = [o for o in outcomes if o.kind == "mutant"]
        alts = [o for o in outcomes if o.kind == "alternative"]
        row = {"assignment": name, "mutants_killed": sum(o.ok for o in mutants), "mutants": len(mutants),
               "alternatives_passed": sum(o.ok for o in alts), "alternatives": len(alts)}
        bad += [f"{name}: {o.kind} of {o.function} ({o.why}): {o.detail.splitlines()[0][:200]}"
                for o in outcomes if not o.ok]
        if auto:
            row.update(_validate_auto(name, found.solutions, bad))
        rows.append(row)
    if as_json:
        print(json.dumps(rows))
    else:
        _print_table(rows, auto)
        for line in bad:
            print(f"  not ok: {line}")
    return EXIT_OK if not bad else EXIT_FAILED


def _rate(k: int, n: int) -> str:
    return f"{100 * k / n:.0f}%" if n else "-"


def _print_table(rows: list[dict], auto: bool) -> None:
    head = f"{'exercise':<16} {'hand-written killed':>20} {'rate':>6}"
    if auto:
        head += f" {'automatic killed':>17} {'equivalent':>11} {'rate':>6}"
    print(head + f" {'alternatives':>14}")
    total = {k: sum(r.get(k, 0) for r in rows) for k in
             ("mutants_killed", "mutants", "alternatives_passed", "alternatives", "auto_killed", "auto",
              "auto_equivalent")}
    for r in rows + [dict(total, assignment="all")]:
        line = (f"{r['assignment']:<16} {str(r['mutants_killed']) + '/' + str(r['mutants']):>20} "
                f"{_rate(r['mutants_killed'], r['mutants']):>6}")
        if auto:
            n = r.get("auto", 0) - r.get("auto_equivalent", 0)
            line += (f" {str(r.get('auto_killed', 0)) + '/' + str(n):>17} {r.get('auto_equivalent', 0):>11} "
                     f"{_rate(r.get('auto_killed', 0), n):>6}")
        line += f" {str(r['alternatives_passed']) + '/' + str(r['alternatives']) + ' pass':>14}"
        print(line)


def _validate_auto(name: str, solutions: Path, bad: list) -> dict:
    """Automatic mutants of one exercise: killed, generated, listed as equivalent; problems appended to `bad`."""
    from autograder.checks.keyring import instructor
    from autograder.grader.quality.automutants import evaluate_auto

    listed = instructor("mutants.equivalent").EQUIVALENT.get(name, {})
    outcomes = evaluate_auto(name, solutions)
    equivalent = [o for o in outcomes if not o.killed and o.mutant.key in listed]
    bad += [f"{name}: automatic mutant of {o.mutant.function} survives: {o.mutant.key}"
            for o in outcomes if not o.killed and o.mutant.key not in listed]
    bad += [f"{name}: automatic mutant listed as equivalent is caught: {o.mutant.key}"
            for o in outcomes if o.killed and o.mutant.key in listed]
    return {"auto_killed": sum(o.killed for o in outcomes), "auto": len(outcomes),
            "auto_equivalent": len(equivalent)}
