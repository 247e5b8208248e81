"""What a submission is and what its test cells ask: which assignment a notebook belongs to, and which checks
each test cell calls, read from its source without running it."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nbformat.notebooknode import NotebookNode

from autograder.course.notebook import (NotebookError, answer_cells, defined_names, grade_id, is_answer, is_test,
                                        read_notebook)
from autograder.course.root import Course

__all__ = ["Call", "QUIZ_CHOICES", "parse_test_cell", "identify_assignment"]

QUIZ_CHOICES = "ABCDE"  # autograder.checks.framework.QUIZ_CHOICES: the grading process never imports torch


@dataclass(frozen=True)
class Call:
    """One check a test cell makes: run_check(assignment, function, var, hidden) or check_quiz(var, ...)."""

    kind: str                     # "check" or "quiz"
    var: str
    assignment: str = ""
    function: str = ""
    hidden: bool = False
    key: str | None = None
    choices: str = QUIZ_CHOICES
    section: str | None = None       # the lesson section a wrong quiz answer points to
    explanation: str | None = None   # shown after a right answer (it gives the key away: never sent to a worker)



# ------------------------------------------------------------------------------------------- plan

def _literal(node: ast.AST, what: str) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise ValueError(f"{what} must be a literal") from None


def parse_test_cell(source: str) -> list[Call]:
    """The checks a test cell calls, read from its source without running it."""
    calls = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute))):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
        kw = {k.arg: k.value for k in node.keywords}
        if name == "run_check":
            if len(node.args) < 3 or not isinstance(node.args[2], ast.Name):
                raise ValueError("run_check needs (assignment, function, name_of_the_function)")
            hidden = _literal(kw["hidden"], "hidden") if "hidden" in kw else (
                _literal(node.args[3], "hidden") if len(node.args) > 3 else False)
            calls.append(Call("check", node.args[2].id, _literal(node.args[0], "assignment"),
                              _literal(node.args[1], "function"), bool(hidden)))
        elif name == "check_quiz":
            if len(node.args) < 2 or not isinstance(node.args[1], ast.Name):
                raise ValueError("check_quiz needs (question, variable)")
            key = _literal(kw["key"], "key") if "key" in kw else (
                _literal(node.args[2], "key") if len(node.args) > 2 else None)
            choices = _literal(kw["choices"], "choices") if "choices" in kw else QUIZ_CHOICES
            section = _literal(kw["section"], "section") if "section" in kw else None
            explanation = _literal(kw["explanation"], "explanation") if "explanation" in kw else None
            calls.append(Call("quiz", node.args[1].id, key=key, choices=choices, section=section,
                              explanation=explanation))
    return calls


# ------------------------------------------------------------------------------------- identify

def _signature(nb: NotebookNode) -> set[str]:
    ids = {grade_id(c) for c in nb.cells if is_answer(c) and grade_id(c)}
    names = set()
    for c in nb.cells:
        if c.cell_type == "code" and not is_test(c):
            names |= defined_names(c.source)
    return ids | {f"name:{n}" for n in names}


def _source_signature(nb: NotebookNode) -> set[str]:
    ids = {grade_id(c) for c in answer_cells(nb)}
    return ids | {f"name:{g[5:] if g.startswith('quiz_') else g}" for g in ids}


def identify_assignment(nb: NotebookNode | None, path: str | Path, course: Course) -> str:
    """Which assignment a submission is: the one place that decides it, for the grader and the learner's tools.

    Its file name if that fits (unless its answers belong to another assignment), else the best match of its
    answers; `nb` None (a file that cannot be read as a notebook): its file or folder name alone."""
    known = course.assignments()
    if not known:
        raise NotebookError(f"no assignments found in {course.root} (expected solutions/ or exercises/)")
    stem = Path(path).stem
    if nb is None:
        name = next((n for n in (stem, Path(path).parent.name) if n in known), None)
        if name is None:
            raise NotebookError(f"{path}: unknown assignment {stem!r}; expected one of {', '.join(known)}")
        return name
    sig = _signature(nb)
    scores = {}
    for a in known:
        src, _ = course.source_notebook(a)
        own = {x for x in _source_signature(read_notebook(src)) if not x.startswith("name:quiz") and
               not x.startswith("quiz_") and x not in ("name:q1", "name:q2", "name:q3", "name:q4", "name:q5")}
        scores[a] = len(sig & own)
    best = max(known, key=lambda a: scores[a])
    if stem in known:
        if scores[stem] == 0 and scores[best] > 0:
            raise NotebookError(f"{path}: this notebook's answers belong to assignment {best!r}, not {stem!r}")
        return stem
    if scores[best] > 0:
        return best
    raise NotebookError(f"{path}: unknown assignment {stem!r}; expected one of {', '.join(known)}")
