"""A class whose truth is known, written as a graded course: a gradebook (nbgrader's schema, through nbgrader's
API for the assignments and in bulk for the class) and autograded notebooks on disk, as `fxcourse grade` leaves
them, without running the grader (a class of 500 x 14 would take hours). The tests and the benchmark of
`fxcourse report` read it.

Every answer is one of the course's own: the solution, a right answer written differently (mutants/
ALTERNATIVES), or a wrong one (mutants/ MUTANTS), chosen at known rates; one mutant of each function is the
planted common mistake. Its verdict is the one the course's checks give that mutant (`real_verdicts`: run
in this process on the mutant's code, as `fxcourse validate` runs it) or, for a large class, the same form
built from the mutant's data (message: what it does wrong; hint: the hint its failure must show).

Each student writes in their own way: their own names for local variables, their own comments, and, in half of
their answers, a statement of their own (a check, a note or a print a student adds: one of len(KINDS) *
len(FORMS)). Copiers take a classmate's answers
and quiz choices, rename the variables, move their statements elsewhere and change the comments; "forced"
pairs are two students who independently write the solution everywhere: alike only because the task forces it.

Quiz answers follow a one-parameter logistic model of each student's ability; in every assignment the last
question has no discrimination (right with probability 0.5 whatever the ability) and one of its distractors is
never chosen.
"""
from __future__ import annotations

import ast
import json
import math
import random
import shutil
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from autograder.checks.keyring import instructor

__all__ = ["Truth", "make_class", "KINDS", "FORMS"]

# a student's own statements: something read from the first argument, kept in a variable, asserted or printed
KINDS = ("_note = {f}", "assert {f} is not None", "print({f})")
_ATTRS = ("__class__", "__module__", "__doc__", "__dict__")
_READS = ["{a}"] + [f"{{a}}.{x}" for x in _ATTRS] + [f"{{a}}.{x}.{y}" for x in _ATTRS for y in _ATTRS]
FORMS = tuple(w.format(r=r) for r in _READS for w in ("{r}", "[{r}]", "({r},)"))
_PREFIXES = ("", "my_", "tmp_", "the_", "a_")
_SUFFIXES = ("", "1", "_x", "_v", "_")
_COMMENTS = ("# walk the graph", "# build the result", "# as the lesson shows", "# TODO tidy up", "# works now",
             "# the main loop", "# step 1", "# first try", "# see the docs", "# keep it simple")


@dataclass
class Truth:
    """What was planted."""

    root: Path
    url: str
    students: list[str]
    assignments: list[str]
    copies: list[tuple[str, str]] = field(default_factory=list)   # (original, copier)
    forced: list[tuple[str, str]] = field(default_factory=list)
    common: dict[str, str] = field(default_factory=dict)          # "assignment/function" -> its planted hint
    choices: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)  # (student, a) -> {qid: letter}


def _solution_cells(nb: dict[str, Any]) -> dict[str, str]:
    out = {}
    for c in nb["cells"]:
        meta = c.get("metadata", {}).get("nbgrader", {})
        if c["cell_type"] == "code" and meta.get("solution"):
            src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            markers = instructor("mutants").SOLUTION_MARKERS
            out[meta["grade_id"]] = "\n".join(l for l in src.splitlines() if l.strip() not in markers) + "\n"
    return out


class _Style(ast.NodeTransformer):
    """One student's names for the local variables of a cell (parameters, globals and attributes stay)."""

    def __init__(self, prefix: str, suffix: str, names: set[str]) -> None:
        self.prefix, self.suffix, self.names = prefix, suffix, names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.names:
            node.id = f"{self.prefix}{node.id}{self.suffix}"
        return node


def _restyle(source: str, prefix: str, suffix: str, habit: str | None, late_habit: bool, comment: str) -> str:
    """The cell in a student's own style: locals renamed, a statement of their own (first in the function, or
    just before its last statement), comments of their own."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    params = {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
              for a in [*n.posonlyargs, *n.args, *n.kwonlyargs, n.vararg, n.kwarg] if a is not None}
    if not any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(tree)):
        stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        _Style(prefix, suffix, stored - params).visit(tree)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if habit and fn is not None and fn.args.args:
        stmt = ast.parse(habit.format(a=fn.args.args[0].arg)).body[0]
        body = fn.body
        first = 1 if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None),
                                                                           ast.Constant) else 0
        body.insert(max(first, len(body) - 1) if late_habit else first, stmt)
    text = ast.unparse(tree)
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines) if line.startswith("def ")), None)
    if at is not None:
        lines.insert(at + 1, "    " + comment)
    return comment + "\n" + "\n".join(lines) + "\n"


def _verdicts(base: str, nb_path: Path, real: bool) -> dict[tuple[str, int], str]:
    """{(function, mutant index): its failure's text, "message\\nHint: hint"}."""
    mutants, _ = instructor("mutants").load(base)
    out = {}
    if real:
        from autograder.course.notebook import read_notebook
        from autograder.grader.quality.validate import run_mutant

        nb = read_notebook(nb_path)
    for i, m in enumerate(mutants):
        if real:
            passed, text = run_mutant(base, nb, m)
            if passed:
                continue
        else:
            text = f"{m.function}: {m.why}\nHint: {m.hint}"
        out[(m.function, i)] = text
    return out


def make_class(course_root: Path, dest: Path, assignments: list[str], students: int = 40, *, seed: int = 0,
               aliases: dict[str, str] | None = None, copies: int = 3, forced: int = 3,
               real_verdicts: bool | tuple[str, ...] = False,
               common_rate: float = 0.3, mistake_rate: float = 0.03, alternative_rate: float = 0.2,
               habit_rate: float = 0.5, missing_rate: float = 0.03, late_rate: float = 0.05,
               url: str | None = None) -> Truth:
    """Write a class at `dest` (solutions/, exercises/ and quizzes of `assignments` copied from `course_root`,
    plus `aliases`: {new assignment: course assignment it copies}) and return what was planted. The verdicts of
    the course's checks are run for `real_verdicts` (True: every assignment; or those named)."""
    from autograder.coursedata.quizzes import judge as judge_quiz

    rng = random.Random(seed)
    dest.mkdir(parents=True, exist_ok=True)
    bases = {a: a for a in assignments} | dict(aliases or {})
    quizzes = json.loads((course_root / "solutions" / "quizzes.json").read_text(encoding="utf-8"))
    mine = {}
    for name, base in bases.items():
        for folder in ("solutions", "exercises"):
            src = course_root / folder / base / f"{base}.ipynb"
            if src.is_file():
                (dest / folder / name).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest / folder / name / f"{name}.ipynb")
        if base in quizzes:
            mine[name] = quizzes[base]
    (dest / "solutions" / "quizzes.json").write_text(json.dumps(mine, indent=1, ensure_ascii=False), encoding="utf-8")
    names = [f"s{i:04d}" for i in range(students)]
    truth = Truth(dest, url or f"sqlite:///{dest / 'gradebook.db'}", names, list(bases))
    ability = {s: rng.gauss(0, 1) for s in names}
    style = {s: (rng.choice(_PREFIXES), rng.choice(_SUFFIXES)) for s in names}
    habits = [kind.format(f=form) for kind in KINDS for form in FORMS]
    pool = names[:]
    rng.shuffle(pool)
    truth.copies = [(pool[2 * i], pool[2 * i + 1]) for i in range(copies)]
    rest = pool[2 * copies:]
    truth.forced = [(rest[2 * i], rest[2 * i + 1]) for i in range(forced)]
    plain = {s for pair in truth.forced for s in pair}
    copier = {b: a for a, b in truth.copies}
    order = [s for s in names if s not in copier] + [s for s in names if s in copier]
    due = datetime(2026, 11, 2, 17, 0)
    plan: dict[tuple[str, str], dict[str, Any]] = {}
    for k, (name, base) in enumerate(bases.items()):
        nb = json.loads((dest / "solutions" / name / f"{name}.ipynb").read_text(encoding="utf-8"))
        solution = _solution_cells(nb)
        mutants, alternatives = instructor("mutants").load(base)
        real = real_verdicts if isinstance(real_verdicts, bool) else base in real_verdicts
        verdicts = _verdicts(base, course_root / "solutions" / base / f"{base}.ipynb", real)
        fns = [g for g in solution if not g.startswith("quiz_") and any(
            c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == f"test_{g}" for c in nb["cells"])]
        for fn in fns:
            caught = [i for i, m in enumerate(mutants) if m.function == fn and (fn, i) in verdicts]
            if caught:
                truth.common[f"{name}/{fn}"] = verdicts[(fn, caught[0])].partition("\nHint: ")[2] or \
                    verdicts[(fn, caught[0])]
        questions = mine.get(name, {}).get("questions", [])
        for s in order:
            if rng.random() < missing_rate and s not in copier and s not in {a for a, _ in truth.copies}:
                continue
            if s in copier and (copier[s], name) not in plan:
                continue
            if s in copier:
                src = plan[(copier[s], name)]
                picks = dict(src["picks"])
                choice = dict(src["choice"])
            else:
                picks, choice = {}, {}
                for fn in fns:
                    caught = [i for i, m in enumerate(mutants) if m.function == fn and (fn, i) in verdicts]
                    alts = [a for a in alternatives if a.function == fn]
                    r = rng.random()
                    if s in plain or not caught:
                        picks[fn] = ("solution", None)
                    elif r < common_rate:
                        picks[fn] = ("mutant", caught[0])
                    elif r < common_rate + mistake_rate * (len(caught) - 1):
                        picks[fn] = ("mutant", rng.choice(caught[1:]))
                    elif alts and r < common_rate + mistake_rate * (len(caught) - 1) + alternative_rate:
                        picks[fn] = ("alternative", rng.randrange(len(alts)))
                    else:
                        picks[fn] = ("solution", None)
                    picks[fn] += (None if s in plain or rng.random() >= habit_rate else rng.choice(habits),)
                for j, q in enumerate(questions):
                    wrong = [o for o in q["options"] if o != q["key"]]
                    if j == len(questions) - 1:  # no discrimination; its last distractor never chosen
                        p_right, weights = 0.5, [1.0] * (len(wrong) - 1) + [0.0]
                    else:
                        b = -1.2 + 2.0 * j / max(1, len(questions) - 1)
                        p_right, weights = 1 / (1 + math.exp(-1.7 * (ability[s] - b))), [3.0, 2.0, 1.0][:len(wrong)]
                    choice[q["id"]] = q["key"] if rng.random() < p_right else rng.choices(wrong, weights)[0]
            cells, failures = {}, {}
            for fn, (kind, index, habit) in picks.items():
                if kind == "mutant":
                    code = mutants[index].cell(solution[fn])
                    failures[fn] = verdicts[(fn, index)]
                elif kind == "alternative":
                    code = [a for a in alternatives if a.function == fn][index].cell(solution[fn])
                else:
                    code = solution[fn]
                cells[fn] = _restyle(code, *style[s], habit, s in copier, rng.choice(_COMMENTS))
            for q in questions:
                cells[f"quiz_{q['id']}"] = f'{q["id"]} = "{choice[q["id"]]}"\n'
            late = rng.random() < late_rate
            stamp = due + (timedelta(hours=rng.uniform(1, 48)) if late else -timedelta(hours=rng.uniform(1, 96)))
            for q in questions:  # the quiz verdicts, as the course's judge words them
                verdict = judge_quiz(q["id"], choice[q["id"]], q["key"], "".join(q["options"]), q["section"],
                                     q["explanation"])
                if not verdict.passed:
                    failures[f"quiz_{q['id']}"] = verdict.text
            plan[(s, name)] = {"picks": picks, "choice": choice, "cells": cells, "failures": failures,
                               "stamp": stamp + timedelta(days=7 * k)}
            truth.choices[(s, name)] = choice
    _write(truth, bases, plan, due)
    return truth


def _write(truth: Truth, bases: dict[str, str], plan: dict[tuple[str, str], dict[str, Any]], due: datetime) -> None:
    """The gradebook and the autograded notebooks of the planned class."""
    from nbgrader import api

    from autograder.grader.classroom.gradebook import schema_revision_in_process

    schema_revision_in_process()
    dest = truth.root
    gb = api.Gradebook(truth.url, "fxcourse")
    try:
        layout: dict[str, dict[str, Any]] = {}
        for k, name in enumerate(bases):
            nb = json.loads((dest / "solutions" / name / f"{name}.ipynb").read_text(encoding="utf-8"))
            gb.update_or_create_assignment(name, duedate=due + timedelta(days=7 * k))
            gb.update_or_create_notebook(name, name)
            tests, solutions = {}, []
            for c in nb["cells"]:
                meta = c.get("metadata", {}).get("nbgrader", {})
                if c["cell_type"] == "code" and meta.get("grade"):
                    cell = gb.update_or_create_grade_cell(meta["grade_id"], name, name,
                                                          max_score=float(meta.get("points") or 0), cell_type="code")
                    tests[meta["grade_id"]] = (cell.id, float(meta.get("points") or 0))
                if c["cell_type"] == "code" and meta.get("solution"):
                    solutions.append(gb.update_or_create_solution_cell(meta["grade_id"], name, name).id)
            layout[name] = {"nb": nb, "tests": tests, "solutions": solutions,
                            "assignment": gb.find_assignment(name).id, "notebook": gb.find_notebook(name, name).id}
        conn = gb.db.connection()
        people = [{"id": s, "first_name": f"First{s[1:]}", "last_name": f"Last{s[1:]}", "email": f"{s}@example.org",
                   "lms_user_id": str(1000 + i)} for i, s in enumerate(truth.students)]
        subs, nbs, grades, comments = [], [], [], []
        for (s, name), p in plan.items():
            lay = layout[name]
            sa, sn = uuid.uuid4().hex, uuid.uuid4().hex
            subs.append({"id": sa, "assignment_id": lay["assignment"], "student_id": s, "timestamp": p["stamp"],
                         "extension": None})
            nbs.append({"id": sn, "assignment_id": sa, "notebook_id": lay["notebook"], "flagged": False,
                        "late_submission_penalty": None})
            for gid, (cell_id, points) in lay["tests"].items():
                grades.append({"id": uuid.uuid4().hex, "notebook_id": sn, "cell_id": cell_id,
                               "auto_score": 0.0 if _failed(gid, p) else points, "manual_score": None,
                               "extra_credit": None, "needs_manual_grade": False})
            comments += [{"id": uuid.uuid4().hex, "notebook_id": sn, "cell_id": c, "auto_comment": None,
                          "manual_comment": None} for c in lay["solutions"]]
        for table, rows in ((api.Student, people), (api.SubmittedAssignment, subs), (api.SubmittedNotebook, nbs), (api.Grade, grades),
                            (api.Comment, comments)):
            for i in range(0, len(rows), 5000):
                conn.execute(table.__table__.insert(), rows[i:i + 5000])
        gb.db.commit()
    finally:
        gb.close()
    for (s, name), p in plan.items():
        nb = layout[name]["nb"]
        cells = []
        for c in nb["cells"]:
            meta = c.get("metadata", {}).get("nbgrader", {})
            gid = meta.get("grade_id")
            if c["cell_type"] == "code" and (meta.get("solution") or meta.get("grade")):
                c = dict(c)
                if meta.get("solution") and gid in p["cells"]:
                    c["source"] = p["cells"][gid]
                c["outputs"] = []
                if meta.get("grade"):
                    why = _failed(gid, p)
                    c["outputs"] = [{"output_type": "error", "ename": "CheckFailed", "evalue": why,
                                     "traceback": [f"CheckFailed: {why}"]} if why else
                                    {"output_type": "stream", "name": "stdout", "text": "\u2714 passed\n"}]
            cells.append(c)
        folder = dest / "autograded" / s / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.ipynb").write_text(json.dumps({**nb, "cells": cells}), encoding="utf-8")


def _failed(test: str, p: dict[str, Any]) -> str:
    """The verdict text of a failed test cell of a planned submission, "" when it passes."""
    return p["failures"].get(test[len("test_"):], "")


def pair_quality(truth: Truth, pairs: list[Any]) -> dict[str, Any]:
    """How the flagged pairs (objects with .a, .b, .flagged, ranked best first) meet the planted copies: precision,
    recall, the rank of the lowest planted copy and of the highest pair that is not one."""
    planted = {tuple(sorted(p)) for p in truth.copies}
    flagged = [tuple(sorted((p.a, p.b))) for p in pairs if p.flagged]
    hits = [p for p in flagged if p in planted]
    ranks = {tuple(sorted((p.a, p.b))): i for i, p in enumerate(pairs, 1)}
    forced = {tuple(sorted(p)) for p in truth.forced}
    return {"planted": len(planted), "flagged": len(flagged), "found": len(hits),
            "precision": len(hits) / len(flagged) if flagged else 1.0,
            "recall": len(hits) / len(planted) if planted else 1.0,
            "lowest_planted_rank": max((ranks.get(p, len(pairs) + 1) for p in planted), default=0),
            "highest_other_rank": min((i for p, i in ranks.items() if p not in planted), default=len(pairs) + 1),
            "forced_flagged": sorted(p for p in flagged if p in forced)}
