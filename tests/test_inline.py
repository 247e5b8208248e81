"""In-notebook checking, hints and progress, in-process: is what a learner sees in a cell right and readable?"""
from __future__ import annotations

import re

import json
import shutil
import threading
import time
from pathlib import Path

import pytest

from autograder import inline
from autograder.checks.framework import CheckFailed, run_check
from autograder.course.root import Course
from autograder.grader.engine import grading
from autograder.coursedata.hints import HINTS
from autograder.learner.watch import watch_loop
from fxcourse_instructor.mutants import load
from autograder.course.notebook import read_notebook
from autograder.grader.quality.validate import mutant_cell
from autograder.learner.progress import ProgressView, _test_name, _untouched, collect
from conftest import EX01_RIGHT, ROOT

RELEASE = ROOT / "exercises" / "ex01_tracing" / "ex01_tracing.ipynb"
SETUP = "import torch\nimport torch.fx as fx\nimport torch.nn as nn\n"
RIGHT = EX01_RIGHT
STUB = "def {name}(*args, **kwargs):\n    raise NotImplementedError()\n"


def kernel(**sources: str) -> dict:
    """A namespace like a kernel's after running the setup cell and the given answer cells."""
    ns: dict = {"__name__": "__main__"}
    exec(SETUP, ns)
    for src in sources.values():
        exec(src, ns)
    return ns


@pytest.fixture(autouse=True)
def _fresh_hints():
    inline.reset_hints()
    yield
    inline.reset_hints()


# --------------------------------------------------------------------------------------- which exercise

def test_function_index_is_the_exercise_list_and_each_check_module_agrees():
    import importlib

    from autograder.coursedata.exercises import EXERCISES

    index = inline.function_index()
    assert list(index) == [e.id for e in EXERCISES]
    assert index["ex01_tracing"] == ("node_summary", "count_nodes", "outputs_match")
    for assignment, functions in index.items():
        assert functions == tuple(importlib.import_module(f"autograder.checks.{assignment}").CHECKS)
        for fn in functions:
            assert inline.assignment_of(fn) == assignment


def test_the_exercise_is_found_from_names_the_notebook_or_the_kernel():
    ns = kernel(**{f: STUB.format(name=f) for f in RIGHT})
    assert inline.check(namespace=ns).assignment == "ex01_tracing"          # the functions the kernel defines
    assert inline.check("count_nodes", namespace={}).assignment == "ex01_tracing"  # the name alone
    assert inline.check(namespace={"__session__": "/x/ex02_nodes.ipynb"}).assignment == "ex02_nodes"
    assert inline.check(namespace=ns, assignment="ex01_tracing").assignment == "ex01_tracing"
    lost = inline.check(namespace={})
    assert not lost.passed and "cannot tell which exercise" in str(lost) and "assignment=" in str(lost)
    assert "unknown exercise 'ex99_x'" in str(inline.check(namespace=ns, assignment="ex99_x"))


# ------------------------------------------------------------------------------------------------ check

def test_right_answers_pass_and_quiz_answers_are_judged_where_the_course_has_its_keys():
    from autograder.coursedata.quizzes import load

    ns = kernel(**RIGHT)
    ns.update({q["id"]: q["key"] for q in load(ROOT)["ex01_tracing"]["questions"]})  # solutions/ is here
    report = inline.check(namespace=ns)
    assert report.passed, str(report)
    assert [r.name for r in report.rows] == ["node_summary", "count_nodes", "outputs_match", "q1", "q2", "q3"]
    assert all(r.cases_passed == r.cases > 0 for r in report.rows if r.kind == "function")
    assert all(r.message.startswith("correct. ") for r in report.rows if r.kind == "quiz")
    # (without solutions/, as in a release, quiz answers are checked for format only: tests/test_quizzes.py)


def test_the_released_notebook_as_it_is_fails_everything_with_what_to_do():
    ns = kernel(**{f: STUB.format(name=f) for f in RIGHT})  # stubs defined, quiz cells raised: no q1..q3
    report = inline.check(namespace=ns)
    assert not report.passed and not any(r.passed for r in report.rows)
    text = str(report)
    assert text.count("is not implemented yet") == 3 and text.count("is not answered yet") == 3
    assert "Try: replace `raise NotImplementedError()`" in text
    assert "hint('node_summary')" in text   # the way to more help is shown where it exists


def test_quiz_formats_and_choices_come_from_the_released_test_cells():
    assert inline.quiz_questions("ex01_tracing", {}) == [("q1", "ABCD"), ("q2", "ABCD"), ("q3", "ABCD")]
    rows = {r.name: r for r in inline.check("q1", "q2", "q3", namespace={"q1": "E", "q2": "b", "q3": 2},
                                                     assignment="ex01_tracing").rows}
    assert "not one of A, B, C, D" in rows["q1"].message         # E exists elsewhere, not in this question
    assert "not one of" in rows["q2"].message and "capital letter" in rows["q2"].hint
    assert "one capital letter in a string, got int" in rows["q3"].message


def test_quiz_questions_never_read_the_instructor_source(tmp_path):
    # Pointed at solutions/ (which carries the keys), quiz_questions ignores it and reads the release.
    ns = {"__session__": str(ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb")}
    assert inline._release_notebook("ex01_tracing", ns) == ROOT / "exercises" / "ex01_tracing" / "ex01_tracing.ipynb"
    # Hidden regions of a test cell are not even parsed.
    src = 'check_quiz("q1", q1, choices="AB")\n### BEGIN HIDDEN TESTS\ncheck_quiz("q9", q9, key="B")\n' \
          '### END HIDDEN TESTS\n'
    assert inline._quiz_calls(src) == [("q1", "AB")]


def test_wrong_answers_get_the_same_message_as_the_graders_test_cells():
    ns = kernel(node_summary="def node_summary(gm):\n    return [(n.name, n.op) for n in gm.graph.nodes]\n")
    row = inline.check("node_summary", namespace=ns).rows[0]
    with pytest.raises(CheckFailed) as raised:
        run_check("ex01_tracing", "node_summary", ns["node_summary"])
    assert not row.passed and row.message == raised.value.message and row.hint == raised.value.hint
    assert "(name, op)" in row.message


@pytest.mark.parametrize("mutant", load("ex01_tracing")[0], ids=lambda m: f"{m.function}: {m.why}")
def test_with_hidden_cases_every_known_wrong_answer_fails_with_its_hint(mutant):
    ns = kernel(answer=mutant_cell(read_notebook(ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb"), mutant))
    row = inline.check(mutant.function, namespace=ns, hidden=True).rows[0]
    assert not row.passed
    assert mutant.hint in row.message + " " + (row.hint or "")


@pytest.mark.parametrize("alt", load("ex01_tracing")[1], ids=lambda a: f"{a.function}: {a.why}")
def test_right_answers_written_differently_pass_the_hidden_cases_too(alt):
    row = inline.check(alt.function, namespace=kernel(answer=alt.source), hidden=True).rows[0]
    assert row.passed, row.message


def test_missing_functions_unknown_names_and_a_crashing_answer_are_rows_not_tracebacks():
    ns = kernel(count_nodes="def count_nodes(gm, op=None):\n    return 1 / 0\n")
    rows = {r.name: r for r in inline.check("node_summary", "count_nodes", "nope", namespace=ns).rows}
    assert "not defined in this kernel yet" in rows["node_summary"].message
    assert "run the cell that defines node_summary" in rows["node_summary"].hint
    assert "raised ZeroDivisionError" in rows["count_nodes"].message and "line" in rows["count_nodes"].message
    assert "no graded function or quiz question 'nope'" in rows["nope"].message


def test_hidden_true_runs_more_cases():
    ns = kernel(**RIGHT)
    visible = inline.check("count_nodes", namespace=ns).rows[0]
    both = inline.check("count_nodes", namespace=ns, hidden=True).rows[0]
    assert both.passed and both.cases > visible.cases > 0
    assert "visible and hidden cases" in str(inline.check("count_nodes", namespace=ns, hidden=True))


def test_html_table_for_jupyter_and_text_elsewhere():
    ns = kernel(**RIGHT)
    ns["q1"] = "<b>"  # learner text is escaped, never rendered as HTML
    report = inline.check("node_summary", "count_nodes", "q1", namespace=ns)
    page = report._repr_html_()
    assert page.startswith("<div class='fxcourse-check'") and "<table>" in page
    assert "data-check='node_summary' data-passed='true'" in page
    assert "data-check='q1' data-passed='false'" in page
    assert "<b>'" not in page and "&lt;b&gt;" in page
    assert "<code>fxcourse check</code>" in page
    text = repr(report)
    assert "\u2714 node_summary" in text and "\u2718 q1" in text and "<" not in text.splitlines()[1]
    assert bool(report) is False


# ------------------------------------------------------------------------------------------------- hints

def test_hints_data_follows_its_format():
    index = inline.function_index()
    assert set(HINTS["ex01_tracing"]) == set(index["ex01_tracing"])
    for assignment, functions in HINTS.items():
        assert assignment in index, f"hints for unknown exercise {assignment}"
        for fn, hints in functions.items():
            assert fn in index[assignment], f"{assignment}: hints for {fn}, which is not a graded function"
            assert len(hints) == 3 and all(isinstance(h, str) and 20 < len(h) < 400 for h in hints)
            assert not re.fullmatch(r"q\d+", fn)  # quiz questions get no hints


def test_hint_shows_the_next_hint_each_time_then_all_of_them():
    ns = kernel(**RIGHT)
    views = [inline.hint("count_nodes", namespace=ns) for _ in range(4)]
    assert [v.number for v in views[:3]] == [1, 2, 3]
    assert [v.text for v in views[:3]] == HINTS["ex01_tracing"]["count_nodes"]
    assert "Hint 1 of 3 for count_nodes" in str(views[0]) and "ask again for hint 2" in str(views[0])
    assert "that was the last hint" in str(views[2])
    assert views[3].exhausted and "All 3 hints for count_nodes" in str(views[3])
    assert "<code>gm.graph.nodes</code>" in views[0]._repr_html_()
    assert inline.hint("node_summary", namespace=ns).number == 1  # counted per function
    # The check table counts down what is left.
    ns["count_nodes"] = ns["outputs_match"] = lambda *args, **kwargs: 0
    rows = {r.name: r for r in inline.check("count_nodes", "outputs_match", namespace=ns).rows}
    assert rows["count_nodes"].more_hints == 0 and rows["outputs_match"].more_hints == 3
    assert "hint('count_nodes')" not in str(inline.check("count_nodes", namespace=ns))


def test_hint_without_a_name_helps_with_the_first_failing_function():
    ns = kernel(node_summary=RIGHT["node_summary"], count_nodes=STUB.format(name="count_nodes"),
                outputs_match=STUB.format(name="outputs_match"))
    assert inline.hint(namespace=ns).function == "count_nodes"
    assert "no hint needed" in str(inline.hint(namespace=kernel(**RIGHT)))


def test_hint_for_unknown_or_hintless_functions_says_so():
    ns = kernel(**RIGHT)
    assert "has no graded function 'nope'" in str(inline.hint("nope", namespace=ns, assignment="ex01_tracing"))
    # every graded function of every exercise has its three hints
    index = inline.function_index()
    missing = [(a, f) for a, fns in index.items() for f in fns if len(inline.hints_for(a, f)) != 3]
    assert not missing, f"graded functions without three hints: {missing}"


# ---------------------------------------------------------------------------------------------- progress

def test_test_ids_map_to_functions_and_quiz_questions():
    fns = ("fuse_linear_pair", "fuse_conv_bn", "fuse_consecutive_linears")
    assert _test_name("test_quiz_q2", fns) == ("q2", "quiz")
    assert _test_name("test_fuse_conv_bn", fns) == ("fuse_conv_bn", "function")
    assert _test_name("test_fuse_conv_bn_training", fns) == ("fuse_conv_bn", "function")
    assert _test_name("test_other", fns) == ("other", "function")


def test_the_release_counts_as_not_started_and_an_answer_does_not():
    source = read_notebook(ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb")
    release = read_notebook(RELEASE)
    assert _untouched(release, source)
    for cell in release.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "count_nodes":
            cell.source = RIGHT["count_nodes"]
    assert not _untouched(release, source)


def _course(tmp_path: Path, answered: bool) -> Course:
    """A course with ex01's source and a working copy, and ex02's source without a working copy."""
    for a in ("ex01_tracing", "ex02_nodes"):
        shutil.copytree(ROOT / "solutions" / a, tmp_path / "solutions" / a)
    (tmp_path / "exercises" / "ex01_tracing").mkdir(parents=True)
    nb = json.loads(RELEASE.read_text())
    if answered:
        for cell in nb["cells"]:
            if cell["metadata"].get("nbgrader", {}).get("grade_id") == "node_summary":
                cell["source"] = RIGHT["node_summary"]
    (tmp_path / "exercises" / "ex01_tracing" / "ex01_tracing.ipynb").write_text(json.dumps(nb))
    return Course(tmp_path)


def _fake_check(calls: list):
    def check(path, course, *, visible_only=False):
        calls.append((Path(path).name, visible_only))
        tests = [grading.Verdict("test_node_summary", True, "passed (6 cases)", points=2, max_points=2),
                 grading.Verdict("test_count_nodes", False, "count_nodes is not implemented yet", "replace it",
                                 max_points=2),
                 grading.Verdict("test_outputs_match", False, "not implemented", max_points=3),
                 grading.Verdict("test_quiz_q1", True, "correct", points=1, max_points=1),
                 grading.Verdict("test_quiz_q2", False, "q2 is not answered yet", max_points=1),
                 grading.Verdict("test_quiz_q3", False, "q3 is not answered yet", max_points=1)]
        return grading.Report("ex01_tracing", 3.0, 10.0, tests)
    return check


def test_progress_grades_answered_copies_and_reports_the_rest(tmp_path):
    calls: list = []
    lines: list = []
    report = collect(_course(tmp_path, answered=True), visible_only=True, check=_fake_check(calls), log=lines.append)
    assert calls == [("ex01_tracing.ipynb", True)]
    assert "5-10 s per notebook" in lines[0]
    ex01, ex02 = report.exercises
    assert ex01.status == "graded" and (ex01.score, ex01.max_score) == (3.0, 10.0)
    assert ex01.functions == {"node_summary": True, "count_nodes": False, "outputs_match": False}
    assert ex01.quiz == {"q1": True, "q2": False, "q3": False}
    assert ex02.status == "no working copy" and ex02.max_score > 0 and not ex02.complete
    table = report.table()
    assert "\u2714 node_summary" in table and "\u2718 count_nodes" in table and "\u2714 q1" in table
    assert "ex02_nodes" in table and "no working copy" in table and "visible tests only" in table
    data = json.loads(json.dumps(report.to_json()))
    assert data["exercises"][0]["functions"]["node_summary"] is True and data["score"] == 3.0
    view = ProgressView(report)
    assert view.png().startswith(b"\x89PNG") and "<img" in view._repr_html_() and "ex01_tracing" in repr(view)


def test_progress_does_not_run_an_untouched_copy(tmp_path):
    calls: list = []
    report = collect(_course(tmp_path, answered=False), check=_fake_check(calls))
    assert calls == [] and report.exercises[0].status == "not started"
    assert report.exercises[0].score == 0 and report.exercises[0].max_score == 10
    assert {t.name for t in report.exercises[0].tests} >= {"node_summary", "q3"}


def test_progress_figure_is_drawn_without_pyplot(tmp_path):
    import matplotlib.pyplot as plt

    report = collect(_course(tmp_path, answered=True), check=_fake_check([]))
    before = plt.get_fignums()
    fig = report.figure()
    assert plt.get_fignums() == before  # not registered with pyplot: the inline backend shows it only once
    assert len(fig.axes) == 1 and "Course progress: 3 / " in fig.axes[0].get_title("left")


# ------------------------------------------------------------------------------------------------- watch

def test_watch_checks_at_start_then_once_per_save_with_debounce(tmp_path):
    nb = tmp_path / "ex.ipynb"
    nb.write_text("{}")
    runs: list[str] = []
    done = threading.Event()

    def editor():
        while len(runs) < 1:
            time.sleep(0.01)
        for i in range(3):              # one save written in three quick steps: one check
            nb.write_text("{}" + " " * (i + 1))
            time.sleep(0.02)
        while len(runs) < 2:
            time.sleep(0.01)
        time.sleep(0.3)
        nb.write_text("{} saved again")   # a second save: a second check
        done.set()

    thread = threading.Thread(target=editor, daemon=True)
    thread.start()
    said: list[str] = []
    n = watch_loop(nb, lambda: runs.append(nb.read_text()), interval=0.05, settle=0.15, max_runs=3,
                   say=said.append)
    thread.join(5)
    assert n == 3 and done.is_set()
    assert runs == ["{}", "{}   ", "{} saved again"]  # the half-written states were never checked
    assert any("Ctrl-C to stop" in s for s in said)


def test_watch_once_runs_a_single_check(tmp_path):
    nb = tmp_path / "ex.ipynb"
    nb.write_text("{}")
    runs = []
    assert watch_loop(nb, lambda: runs.append(1), interval=0.01, max_runs=1, say=lambda s: None) == 1
    assert runs == [1]


# ------------------------------------------------------------------------------ the proposed check cell

def test_check_does_nothing_inside_the_graders_worker(monkeypatch):
    from autograder.grader.jail.worker import GRADING_ENV

    assert GRADING_ENV == "FXCOURSE_GRADING"  # the name autograder.inline reads
    monkeypatch.setenv(GRADING_ENV, "1")  # what the worker sets before the notebook's first cell
    report = inline.check()
    assert report.rows == [] and "does nothing while grading" in str(report)
    assert inline.check("node_summary", namespace=kernel(**RIGHT)).passed  # an explicit namespace: checked


def _with_check_cell(nb):
    """The notebook with the proposed markdown and code cells before its last cell."""
    import nbformat

    cells = [nbformat.v4.new_markdown_cell(inline.CHECK_CELL_MARKDOWN), nbformat.v4.new_code_cell(inline.CHECK_CELL_CODE)]
    nb.cells[-1:-1] = cells
    return nb


@pytest.mark.kernel
def test_the_proposed_check_cell_runs_in_a_kernel_and_costs_the_grader_nothing(tmp_path):
    import nbformat

    from autograder.grader.engine.grading import check_notebook
    from autograder.grader.jail.headless import execute

    # In a kernel (as a learner runs the notebook), the cell shows the table for the released notebook.
    nb = _with_check_cell(read_notebook(RELEASE))
    path = tmp_path / "exercises" / "ex01_tracing" / "ex01_tracing.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(nb, str(path))
    ran = execute(path, allow_errors=True, cwd=path.parent)
    out = ran.cells[-2].outputs
    html = [o["data"]["text/html"] for o in out if "text/html" in o.get("data", {})]
    assert html and "data-check='node_summary' data-passed='false'" in html[0] and "not implemented yet" in html[0]
    # In the grader (the cell in the source and in the submission), the score is what it was.
    shutil.copytree(ROOT / "solutions" / "ex01_tracing", tmp_path / "solutions" / "ex01_tracing")
    source = tmp_path / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb"
    nbformat.write(_with_check_cell(read_notebook(source)), str(source))
    answered = read_notebook(path)
    for cell in answered.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in RIGHT:
            cell.source = RIGHT[gid]
    nbformat.write(answered, str(path))
    report = check_notebook(path, Course(tmp_path))
    assert report.score == 7.0 and report.max_score == 10.0   # all three functions, no quiz answer
    assert not any("check" in n for n in report.notes)


@pytest.mark.parametrize("forked", [True, False], ids=["forked worker", "fresh worker"])
def test_check_in_a_graded_notebook_does_nothing_in_the_worker(tmp_path, monkeypatch, forked):
    """The grader runs every code cell of a submission, the notebook's check() cell too: in the jailed worker it
    must do nothing (it would run every case of every function again, unhardened), whether the fork server forked
    the worker or it started fresh. An answer cell that asks check() for its rows shows which it did."""
    import nbformat

    from autograder.grader.engine.grading import check_notebook

    if not forked:
        monkeypatch.setenv("FXCOURSE_FORKSERVER", "0")
    shutil.copytree(ROOT / "solutions" / "ex01_tracing", tmp_path / "solutions" / "ex01_tracing")
    path = tmp_path / "exercises" / "ex01_tracing" / "ex01_tracing.ipynb"
    path.parent.mkdir(parents=True)
    answered = read_notebook(RELEASE)
    for cell in answered.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in EX01_RIGHT:
            cell.source = EX01_RIGHT[gid]
        if gid == "count_nodes":
            cell.source = ("from autograder.inline import check as _check\n_rows = _check().rows\n"
                           "assert not _rows, f'check() ran {len(_rows)} checks in the grader'\n" + cell.source)
    nbformat.write(answered, str(path))
    report = check_notebook(path, Course(tmp_path))
    failed = {t.id: t.message for t in report.tests if not t.passed and "count_nodes" in t.id}
    assert not failed, failed


def test_progress_in_a_notebook_is_a_picture_and_a_table(tmp_path):
    view = inline.progress(_course(tmp_path, answered=False).root, quiet=True)  # untouched: nothing to run
    page = view._repr_html_()
    assert page.startswith("<div class='fxcourse-progress'><img") and "data:image/png;base64," in page
    assert "ex01_tracing" in page and "not started" in repr(view)
