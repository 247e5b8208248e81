"""Build exercise and lesson notebooks that follow the course's cell contract (see CURRICULUM.md).

Solution notebooks are written with these helpers and then edited like any notebook; the student
versions in exercises/ are generated from them by nbgrader (`fxcourse generate`).
"""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

import nbformat
from nbformat.notebooknode import NotebookNode

__all__ = ["md", "code", "setup", "answer", "tests", "quiz", "notebook", "write", "test_source"]

_counter = {"n": 0}


def _id(prefix: str) -> str:
    _counter["n"] += 1
    return re.sub(r"[^A-Za-z0-9_-]", "-", f"{prefix}-{_counter['n']:03d}")[:64]


def _nbgrader(grade_id: str, *, grade: bool, solution: bool, locked: bool, points: float | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return meta


def md(text: str) -> NotebookNode:
    """A markdown cell (dedented)."""
    cell = nbformat.v4.new_markdown_cell(textwrap.dedent(text).strip("\n"))
    cell.id = _id("md")
    return cell


def code(src: str) -> NotebookNode:
    """A plain code cell (dedented)."""
    cell = nbformat.v4.new_code_cell(textwrap.dedent(src).strip("\n"))
    cell.id = _id("code")
    return cell


def setup(src: str, grade_id: str = "setup") -> NotebookNode:
    """A read-only code cell (imports, models the exercise uses): restored from the source when grading."""
    cell = code(src)
    cell.metadata["nbgrader"] = _nbgrader(grade_id, grade=False, solution=False, locked=True)
    cell.id = grade_id
    return cell


def answer(function: str, src: str) -> NotebookNode:
    """The answer cell of a graded function (or quiz variable); grade_id is its name.

    Mark the part the learner writes with `### BEGIN SOLUTION` / `### END SOLUTION`.
    """
    body = textwrap.dedent(src).strip("\n")
    if "### BEGIN SOLUTION" not in body:
        raise ValueError(f"answer cell {function!r} has no ### BEGIN SOLUTION region")
    cell = nbformat.v4.new_code_cell(body)
    cell.metadata["nbgrader"] = _nbgrader(function, grade=False, solution=True, locked=False)
    cell.id = function
    return cell


def test_source(assignment: str, function: str, hidden: bool = True) -> str:
    """The source of a test cell: visible cases, then hidden cases inside a hidden-tests region."""
    lines = ["from autograder.checks import run_check", "",
             f'run_check("{assignment}", "{function}", {function})']
    if hidden:
        lines += ["### BEGIN HIDDEN TESTS",
                  f'run_check("{assignment}", "{function}", {function}, hidden=True)',
                  "### END HIDDEN TESTS"]
    return "\n".join(lines)


def tests(assignment: str, function: str, points: float, hidden: bool = True) -> NotebookNode:
    """The autograder-test cell of a graded function (grade_id test_<function>)."""
    cell = nbformat.v4.new_code_cell(test_source(assignment, function, hidden))
    grade_id = f"test_{function}"
    cell.metadata["nbgrader"] = _nbgrader(grade_id, grade=True, solution=False, locked=True, points=points)
    cell.id = grade_id
    return cell


def quiz(n: int, question: str, options: dict[str, str], key: str, points: float = 1.0) -> list[NotebookNode]:
    """A quiz question: the question (markdown), the answer cell (qN = letter) and its test cell."""
    if key not in options:
        raise ValueError(f"quiz q{n}: key {key!r} is not one of the options {sorted(options)}")
    var = f"q{n}"
    text = textwrap.dedent(question).strip("\n")
    opts = "\n".join(f"- **{k}**: {v}" for k, v in options.items())
    choices = "".join(options)
    q = md(f"**Question {n}.** {text}\n\n{opts}\n\nSet `{var}` to one capital letter, for example `{var} = \"A\"`.")
    ans = nbformat.v4.new_code_cell(f'### BEGIN SOLUTION\n{var} = "{key}"\n### END SOLUTION')
    ans.metadata["nbgrader"] = _nbgrader(f"quiz_{var}", grade=False, solution=True, locked=False)
    ans.id = f"quiz_{var}"
    test = nbformat.v4.new_code_cell(
        "from autograder.checks import check_quiz\n\n"
        f'check_quiz("{var}", {var}, choices="{choices}")\n'
        "### BEGIN HIDDEN TESTS\n"
        f'check_quiz("{var}", {var}, key="{key}", choices="{choices}")\n'
        "### END HIDDEN TESTS")
    test.metadata["nbgrader"] = _nbgrader(f"test_quiz_{var}", grade=True, solution=False, locked=True, points=points)
    test.id = f"test_quiz_{var}"
    return [q, ans, test]


def notebook(cells: list[NotebookNode | list[NotebookNode]]) -> NotebookNode:
    """A Python 3 notebook of these cells (lists are flattened)."""
    flat: list[NotebookNode] = []
    for c in cells:
        flat.extend(c if isinstance(c, list) else [c])
    nb = nbformat.v4.new_notebook()
    nb.cells = flat
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    ids = [c.id for c in flat]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise ValueError(f"duplicate cell ids: {sorted(dupes)}")
    return nb


def write(nb: NotebookNode, path: str | Path) -> Path:
    """Validate and write a notebook."""
    nbformat.validate(nb)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path
