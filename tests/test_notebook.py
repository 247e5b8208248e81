"""Reading, restoring and planning notebooks: what the grader does before any code runs."""
from __future__ import annotations

import copy
import json

import nbformat
import pytest

from autograder.course.root import Course
from autograder.course.plan import identify_assignment, parse_test_cell
from autograder.course.notebook import (NotebookError, answer_cells, grade_id, is_test, parse_notebook, read_notebook,
                                 restore, strip_hidden, stub_solution)
from conftest import ROOT

SOURCE = ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb"
RELEASE = ROOT / "exercises" / "ex01_tracing" / "ex01_tracing.ipynb"


@pytest.mark.parametrize("data,message", [
    (b"", "the file is empty"),
    (b"   \n", "the file is empty"),
    (b"{not json", "not valid JSON (line 1, column 2"),
    (b"\xff\xfe\x00garbage", "not UTF-8 text (byte 0xff at offset 0)"),
    (b"[1, 2, 3]", "not a Jupyter notebook"),
    (b'{"cells": "x"}', "not a Jupyter notebook"),
    (b'{"cells": [], "nbformat": 3}', "format 3 is not supported"),
    (b'{"cells": [{"cell_type": "code", "source": 5}], "nbformat": 4}', "cell 0 has a source that is not text"),
    (b'{"cells": [42], "nbformat": 4}', "cell 0 is not a notebook cell"),
])
def test_bad_notebooks_get_one_line_errors(data, message):
    with pytest.raises(NotebookError) as info:
        parse_notebook(data, "sub.ipynb")
    assert message in str(info.value) and "\n" not in str(info.value)


def test_huge_notebook_is_refused_before_parsing(tmp_path):
    path = tmp_path / "big.ipynb"
    with open(path, "wb") as f:
        f.truncate(21 * 2**20)
    with pytest.raises(NotebookError, match="too large"):
        read_notebook(path)
    with pytest.raises(NotebookError, match="no such file"):
        read_notebook(tmp_path / "missing.ipynb")
    with pytest.raises(NotebookError, match="is a folder"):
        read_notebook(tmp_path)


def test_stub_and_hidden_regions():
    src = "def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n"
    assert stub_solution(src) == "def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()"
    assert stub_solution("q1 = 'A'") == "# YOUR CODE HERE\nraise NotImplementedError()"
    test = "a()\n### BEGIN HIDDEN TESTS\nb()\n### END HIDDEN TESTS\nc()"
    assert strip_hidden(test) == "a()\nc()"


def _answers(nb):
    return {grade_id(c): c.source for c in answer_cells(nb)}


def test_restore_takes_only_answer_cells_from_the_submission():
    source, release = read_notebook(SOURCE), read_notebook(RELEASE)
    sub = copy.deepcopy(release)
    for cell in sub.cells:
        if grade_id(cell) == "node_summary":
            cell.source = "def node_summary(gm):\n    return 'mine'"
        if is_test(cell):
            cell.source = "pass  # tests switched off"
    sub.cells.append(nbformat.v4.new_code_cell("import autograder.checks.framework as c\nc.run_check = print"))
    r = restore(source, sub)
    assert _answers(r.notebook)["node_summary"].endswith("return 'mine'")
    tests = {grade_id(c): c.source for c in r.notebook.cells if is_test(c)}
    assert all("BEGIN HIDDEN TESTS" in s for s in tests.values())  # the source's tests, hidden included
    assert any("was edited" in n for n in r.notes) and any("added by the learner" in n for n in r.notes)
    assert len(r.notebook.cells) == len(source.cells)


def test_restore_repairs_deleted_duplicated_and_stripped_cells():
    source = read_notebook(SOURCE)
    sub = copy.deepcopy(read_notebook(RELEASE))
    for cell in sub.cells:
        if grade_id(cell) == "count_nodes":
            cell.source = "def count_nodes(gm, op=None):\n    return 7"
        if grade_id(cell) == "outputs_match":
            cell.source = "def outputs_match(model, gm, *inputs, atol=0.0):\n    return True"
    sub.cells = [c for c in sub.cells if grade_id(c) != "test_count_nodes"]  # deleted test
    dup = next(c for c in sub.cells if grade_id(c) == "test_outputs_match")
    sub.cells.append(copy.deepcopy(dup))                                        # duplicated test
    for cell in sub.cells:                                                      # stripped metadata
        cell.metadata.pop("nbgrader", None)
    r = restore(source, sub)
    answers = _answers(r.notebook)
    assert answers["count_nodes"].endswith("return 7") and answers["outputs_match"].endswith("return True")
    assert [grade_id(c) for c in r.notebook.cells] == [grade_id(c) for c in source.cells]
    assert sum("no grading metadata" in n for n in r.notes) >= 2


def test_restore_treats_missing_answers_as_unanswered():
    source = read_notebook(SOURCE)
    sub = nbformat.v4.new_notebook()
    r = restore(source, sub)
    assert all(v is None for v in r.answers.values())
    assert all("BEGIN SOLUTION" not in c.source for c in answer_cells(r.notebook))
    assert all("NotImplementedError" in c.source for c in answer_cells(r.notebook))


def test_parse_test_cell_reads_checks_without_running_them():
    calls = parse_test_cell('from autograder.checks import run_check\nrun_check("ex01_tracing", "count_nodes", '
                            'count_nodes)\n### BEGIN HIDDEN TESTS\nrun_check("ex01_tracing", "count_nodes", '
                            'count_nodes, hidden=True)\n### END HIDDEN TESTS')
    assert [(c.kind, c.function, c.var, c.hidden) for c in calls] == [
        ("check", "count_nodes", "count_nodes", False), ("check", "count_nodes", "count_nodes", True)]
    quiz = parse_test_cell('check_quiz("q1", q1, key="B", choices="ABCD")')
    assert quiz[0].key == "B" and quiz[0].choices == "ABCD" and quiz[0].var == "q1"
    assert parse_test_cell("print('All tests passed')") == []
    with pytest.raises(ValueError):
        parse_test_cell('run_check("ex01_tracing", "f", make_fn())')


def test_identify_assignment_by_name_and_by_content(tmp_path):
    course = Course(ROOT)
    nb = read_notebook(RELEASE)
    assert identify_assignment(nb, "ex01_tracing.ipynb", course) == "ex01_tracing"
    assert identify_assignment(nb, "my copy (2).ipynb", course) == "ex01_tracing"
    with pytest.raises(NotebookError, match="unknown assignment 'notes'"):
        identify_assignment(nbformat.v4.new_notebook(), "notes.ipynb", course)
    others = [a for a in course.assignments() if a != "ex01_tracing"]
    if others:
        with pytest.raises(NotebookError, match="belong to assignment 'ex01_tracing'"):
            identify_assignment(nb, f"{others[0]}.ipynb", course)
