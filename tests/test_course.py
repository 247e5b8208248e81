"""The course as a whole: the contract's names, every notebook running, generated copies in step, scores."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.grader.root import Course
from autograder.grader.grading import check_notebook
from autograder.grader.notebook import answer_cells, grade_id, is_test, nbgrader_meta, read_notebook
from autograder.grader.headless import execute
from conftest import ROOT, assignments, lessons

# The public names of CURRICULUM.md: outside test batteries call them.
CONTRACT = {
    "ex01_tracing": ["node_summary", "count_nodes", "outputs_match"],
    "ex02_nodes": ["op_histogram", "called_modules", "consumers", "graph_depth"],
    "ex03_replacing": ["swap_function", "relu_to_clamp", "relu_to_gelu", "linear_to_matmul"],
    "ex04_wrapping": ["trace_gated", "trace_with_leaves", "trace_specialized"],
    "ex05_inserting": ["insert_after", "remove_dropout", "record_shapes", "linear_flops"],
    "ex06_fusing": ["fuse_linear_pair", "fuse_consecutive_linears", "fold_bn_into_conv", "fuse_conv_bn"],
    "ex07_qat": ["prepare_for_qat", "fake_quant_count", "qat_finetune", "to_int8", "state_dict_bytes"],
    "ex08_pipeline": ["run_pipeline", "optimize_for_inference"],
}
LESSONS = {"ex01_tracing": "01_tracing", "ex02_nodes": "02_nodes", "ex03_replacing": "03_replacing",
           "ex04_wrapping": "04_wrapping", "ex05_inserting": "05_inserting", "ex06_fusing": "06_fusing",
           "ex07_qat": "07_qat", "ex08_pipeline": "08_pipeline"}
COURSE = Course(ROOT)


@pytest.mark.parametrize("assignment", assignments())
def test_exercise_follows_the_cell_contract(assignment):
    nb = read_notebook(ROOT / "solutions" / assignment / f"{assignment}.ipynb")
    answers = [grade_id(c) for c in answer_cells(nb)]
    tests = [grade_id(c) for c in nb.cells if is_test(c)]
    for fn in CONTRACT[assignment]:
        assert answers.count(fn) == 1, f"{assignment}: no single answer cell with grade_id {fn!r}"
        assert any(t.startswith(f"test_{fn}") for t in tests), f"{assignment}: no test cell for {fn}"
    quizzes = [a for a in answers if re.fullmatch(r"quiz_q\d+", a)]
    assert len(quizzes) >= 3, f"{assignment}: {len(quizzes)} quiz questions, at least 3 expected"
    for q in quizzes:
        assert f"test_{q}" in tests
    for cell in nb.cells:
        if is_test(cell):
            assert nbgrader_meta(cell).get("points", 0) > 0 and nbgrader_meta(cell).get("locked")
    assert (ROOT / "lessons" / f"{LESSONS[assignment]}.ipynb").is_file()


def test_every_curriculum_exercise_exists():
    assert sorted(CONTRACT) == assignments()


@pytest.mark.parametrize("assignment", assignments())
def test_release_hides_solutions_hidden_tests_and_keys(assignment):
    text = (ROOT / "exercises" / assignment / f"{assignment}.ipynb").read_text()
    for secret in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "key=", "hidden=True"):
        assert secret not in text, f"exercises/{assignment} contains {secret!r}"
    nb = json.loads(text)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, \
                f"exercises/{assignment}: a code cell carries outputs"


def test_generated_exercises_are_in_step_with_solutions():
    r = subprocess.run([sys.executable, "-m", "autograder.cli", "generate", "--check", "--course", str(ROOT)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.kernel
@pytest.mark.parametrize("assignment", assignments())
def test_instructor_source_scores_full_marks_and_release_scores_zero(assignment):
    full = check_notebook(ROOT / "solutions" / assignment / f"{assignment}.ipynb", COURSE)
    failed = [f"{t.id}: {t.message}" for t in full.tests if not t.passed]
    assert full.score == full.max_score > 0, failed
    assert full.full_tests
    empty = check_notebook(ROOT / "exercises" / assignment / f"{assignment}.ipynb", COURSE)
    assert empty.max_score == full.max_score
    assert [t.points for t in empty.tests] == [0.0] * len(empty.tests), \
        [f"{t.id}: {t.message}" for t in empty.tests if t.points]
    assert all(t.message for t in empty.tests)


@pytest.mark.kernel
@pytest.mark.parametrize("assignment", assignments())
def test_solution_notebook_runs_in_a_fresh_kernel_with_every_test_cell_passing(assignment):
    path = ROOT / "solutions" / assignment / f"{assignment}.ipynb"
    nb = execute(path, timeout=600)
    for cell in nb.cells:
        if is_test(cell):
            errors = [o for o in cell.outputs if o.output_type == "error"]
            stderr = [o for o in cell.outputs if o.output_type == "stream" and o.name == "stderr"]
            assert not errors and not stderr, f"{grade_id(cell)}: {errors or stderr}"


@pytest.mark.kernel
@pytest.mark.parametrize("lesson", lessons(), ids=[p.stem for p in lessons()])
def test_lesson_runs_top_to_bottom_in_a_fresh_kernel(lesson: Path, site_build):
    nb = site_build.executed_lesson(lesson)  # run once per test run, by the site's build (conftest)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors


@pytest.mark.parametrize("lesson", lessons(), ids=[p.stem for p in lessons()])
def test_lesson_is_committed_without_outputs_and_opens_with_goals(lesson: Path):
    nb = json.loads(lesson.read_text())
    assert all(c.get("outputs", []) == [] for c in nb["cells"] if c["cell_type"] == "code")
    first = "".join(nb["cells"][0]["source"]).lower()
    assert "able to" in first or "you will" in first or "goals" in first, "a lesson opens with its goals"
    last = "".join(nb["cells"][-1]["source"]) + "".join(nb["cells"][-2]["source"])
    assert "exercises/ex" in last, "a lesson closes with a pointer to its exercise"
