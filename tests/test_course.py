"""The course as a whole: the one list of exercises and what each graded function needs (a check, three hints,
mutants, an alternative, clauses), every notebook running, generated copies in step, scores."""
from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fxcourse_instructor import clauses, mutants
from autograder.coursedata.exercises import EXERCISES, exercise
from autograder.coursedata.hints import HINTS
from autograder.course.root import Course
from autograder.grader.engine.grading import check_notebook
from autograder.course.notebook import answer_cells, grade_id, is_test, nbgrader_meta, read_notebook
from conftest import ROOT, assignments, lessons

COURSE = Course(ROOT)


@pytest.mark.parametrize("assignment", assignments())
def test_exercise_follows_the_cell_contract(assignment):
    nb = read_notebook(ROOT / "solutions" / assignment / f"{assignment}.ipynb")
    answers = [grade_id(c) for c in answer_cells(nb)]
    tests = [grade_id(c) for c in nb.cells if is_test(c)]
    for fn in exercise(assignment).functions:
        assert answers.count(fn) == 1, f"{assignment}: no single answer cell with grade_id {fn!r}"
        assert any(t.startswith(f"test_{fn}") for t in tests), f"{assignment}: no test cell for {fn}"
    quizzes = [a for a in answers if re.fullmatch(r"quiz_q\d+", a)]
    assert len(quizzes) >= 3, f"{assignment}: {len(quizzes)} quiz questions, at least 3 expected"
    for q in quizzes:
        assert f"test_{q}" in tests
    for cell in nb.cells:
        if is_test(cell):
            assert nbgrader_meta(cell).get("points", 0) > 0 and nbgrader_meta(cell).get("locked")
    assert (ROOT / "lessons" / f"{exercise(assignment).lesson}.ipynb").is_file()


def test_the_list_of_exercises_is_the_solutions_folder():
    """EXERCISES names every solutions/<id>/<id>.ipynb once, in course order, and nothing else."""
    ids = [e.id for e in EXERCISES]
    assert sorted(ids) == assignments() and len(set(ids)) == len(ids)
    assert ids == sorted(ids, key=lambda i: int(i[2:4])), "EXERCISES is not in course order"


@pytest.mark.parametrize("assignment", assignments())
def test_the_listed_functions_are_the_notebook_s_answer_cells_in_order(assignment):
    nb = read_notebook(ROOT / "solutions" / assignment / f"{assignment}.ipynb")
    graded = [grade_id(c) for c in answer_cells(nb) if not re.fullmatch(r"quiz_q\d+", grade_id(c))]
    assert graded == list(exercise(assignment).functions)


def _names(read) -> list[str]:
    """The function names one source lists (none when the exercise's module of that source does not exist)."""
    try:
        return read()
    except ModuleNotFoundError:
        return []


# What every graded function needs, each from its own source: {what: (names per function, at least, exactly)}.
def _needs(assignment: str) -> dict[str, tuple[list[str], int, int | None]]:
    return {
        "a check in CHECKS": (
            _names(lambda: list(importlib.import_module(f"autograder.checks.{assignment}").CHECKS)), 1, 1),
        "progressive hints in coursedata/hints.py": (
            [fn for fn, hints in HINTS.get(assignment, {}).items() for _ in hints], 3, 3),
        "mutants": (_names(lambda: [m.function for m in mutants.load(assignment)[0]]), 5, None),
        "alternatives": (_names(lambda: [a.function for a in mutants.load(assignment)[1]]), 1, None),
        "clauses": (_names(lambda: [c.function for c in clauses.load(assignment)]), 3, None),
    }


def missing_and_unknown(assignment: str) -> list[str]:
    """What a graded function of `assignment` lacks, and what names a function EXERCISES does not list."""
    listed = exercise(assignment).functions
    problems = []
    for what, (names, least, most) in _needs(assignment).items():
        for fn in listed:
            n = names.count(fn)
            if n < least or (most is not None and n > most):
                want = f"exactly {least}" if least == most else f"at least {least}"
                problems.append(f"{assignment}.{fn}: {n} {what}, {want} expected")
        problems += [f"{assignment}: {what} for {fn!r}, which EXERCISES does not list as a graded function"
                     for fn in sorted(set(names) - set(listed))]
    return problems


@pytest.mark.parametrize("assignment", assignments())
def test_every_graded_function_has_a_check_three_hints_five_mutants_an_alternative_and_clauses(assignment):
    problems = missing_and_unknown(assignment)
    assert not problems, "\n".join(problems)


def _break(monkeypatch, what: str) -> None:
    """Take away (or add) one entry of one source of ex01_tracing, as a careless edit would."""
    checks = importlib.import_module("autograder.checks.ex01_tracing")
    mutants_of, alternatives_of = mutants.load("ex01_tracing")
    if what == "no check":
        monkeypatch.setattr(checks, "CHECKS", {k: v for k, v in checks.CHECKS.items() if k != "count_nodes"})
    elif what == "a check of an unlisted function":
        monkeypatch.setattr(checks, "CHECKS", {**checks.CHECKS, "count_edges": checks.CHECKS["count_nodes"]})
    elif what == "two hints":
        monkeypatch.setitem(HINTS, "ex01_tracing", {**HINTS["ex01_tracing"], "count_nodes":
                                                    HINTS["ex01_tracing"]["count_nodes"][:2]})
    elif what == "hints of an unlisted function":
        monkeypatch.setitem(HINTS, "ex01_tracing", {**HINTS["ex01_tracing"], "count_edges": ["a", "b", "c"]})
    elif what in ("four mutants", "a mutant of an unlisted function", "no alternative"):
        if what == "four mutants":
            drop = [m for m in mutants_of if m.function == "count_nodes"][4:]
            mutants_of = [m for m in mutants_of if m not in drop]
        elif what == "a mutant of an unlisted function":
            mutants_of = mutants_of + [mutants.Mutant("count_edges", "x", hint="x", edits=(("a", "b"),))]
        else:
            alternatives_of = [a for a in alternatives_of if a.function != "count_nodes"]
        monkeypatch.setattr(mutants, "load", lambda assignment: (mutants_of, alternatives_of))
    elif what == "two clauses":
        kept = [c for c in clauses.load("ex01_tracing") if c.function == "count_nodes"][:2]
        rest = [c for c in clauses.load("ex01_tracing") if c.function != "count_nodes"]
        monkeypatch.setattr(clauses, "load", lambda assignment: rest + kept)
    else:
        raise AssertionError(what)


@pytest.mark.parametrize("what,said", [
    ("no check", "ex01_tracing.count_nodes: 0 a check in CHECKS, exactly 1 expected"),
    ("a check of an unlisted function", "a check in CHECKS for 'count_edges', which EXERCISES does not list"),
    ("two hints", "ex01_tracing.count_nodes: 2 progressive hints in coursedata/hints.py, exactly 3 expected"),
    ("hints of an unlisted function", "progressive hints in coursedata/hints.py for 'count_edges'"),
    ("four mutants", "ex01_tracing.count_nodes: 4 mutants, at least 5 expected"),
    ("a mutant of an unlisted function", "mutants for 'count_edges', which EXERCISES does not list"),
    ("no alternative", "ex01_tracing.count_nodes: 0 alternatives, at least 1 expected"),
    ("two clauses", "ex01_tracing.count_nodes: 2 clauses, at least 3 expected"),
])
def test_a_missing_or_unknown_entry_is_reported_by_name(monkeypatch, what, said):
    assert missing_and_unknown("ex01_tracing") == []
    _break(monkeypatch, what)
    assert said in "\n".join(missing_and_unknown("ex01_tracing"))


def test_hints_name_only_listed_exercises():
    assert set(HINTS) <= {e.id for e in EXERCISES}, sorted(set(HINTS) - {e.id for e in EXERCISES})


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
def test_solution_notebook_runs_in_a_fresh_kernel_with_every_test_cell_passing(assignment, solution_run):
    nb = solution_run(assignment)  # run once per test run; the exercise's own test-cell test reads it too
    for cell in nb.cells:
        if is_test(cell):
            errors = [o for o in cell.outputs if o.output_type == "error"]
            stderr = [o for o in cell.outputs if o.output_type == "stream" and o.name == "stderr"]
            assert not errors and not stderr, f"{grade_id(cell)}: {errors or stderr}"


# torch's log format (W1204 16:47:28.837000 11029 torch/...) and a Python warning's first line (file:line: ...Warning)
TORCH_LOG_LINE = re.compile(r"^[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ ")
LIBRARY_WARNING = re.compile(r"^(/\S+?\.py):\d+: \w*Warning\b")


def output_noise(nb, install: tuple[str, ...] = (sys.prefix, sys.base_prefix)) -> list[str]:
    """The lines of an executed lesson's outputs that are installer or log noise, not lesson content: torchao's
    "Failed to load" lines, anything the first code cell (the imports) writes to stderr, and torch log lines or
    Python warnings that name a file of the installed packages or of Python itself (`install`), that is of the
    machine that ran the lesson. A lesson's own warnings and tracebacks (a graph break, a failing call) remain."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    found = []
    for i, cell in enumerate(code):
        for out in cell.outputs:
            if out.output_type != "stream":
                continue
            for line in out.text.splitlines():
                warning = LIBRARY_WARNING.match(line)
                if ("Failed to load" in line or (i == 0 and out.name == "stderr" and line.strip())
                        or (TORCH_LOG_LINE.match(line) and any(p in line for p in install))
                        or (warning and warning.group(1).startswith(install))):
                    found.append(f"cell {cell.get('id')}: {line[:160]}")
    return found


def test_output_noise_finds_install_and_log_lines_and_leaves_lesson_output():
    import nbformat

    prefix = "/opt/py/lib/python3.11/site-packages"
    noisy = [f"Failed to load {prefix}/torchao/_C_mxfp8.so: Could not load this library",
             "W1204 16:47:28.837000 11029 torch/utils/_pytree.py:630] <enum 'K'> is an Enum subclass",
             "/opt/py/lib/python3.11/copyreg.py:105: FutureWarning: `isinstance(treespec, LeafSpec)` is deprecated",
             f'V1204 16:57:10.672000 19737 torch/_dynamo/symbolic_convert.py:5124] [0/0]   File "{prefix}/x.py"']
    lesson = ["W1204 16:46:47.953000 10016 torch/_dynamo/variables/tensor.py:1759] [1/0] Graph break from .item()",
              '  File "/tmp/ipykernel_1/2.py", line 4, in f', f'  File "{prefix}/torch/fx/graph_module.py", line 493',
              "/tmp/ipykernel_1/3.py:2: UserWarning: a warning of the lesson's own code"]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import torch"), nbformat.v4.new_code_cell("...")]
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", name="stderr", text=noisy[1] + "\n"),
                           nbformat.v4.new_output("stream", name="stdout", text="torch 2.13.0\n")]
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stderr", text="\n".join(noisy[::2] + lesson)),
                           nbformat.v4.new_output("stream", name="stderr", text=noisy[3])]
    found = output_noise(nb, install=("/opt/py",))
    assert [line.split(": ", 1)[1] for line in found] == [noisy[1][:160], noisy[0], noisy[2], noisy[3][:160]]


@pytest.mark.kernel
@pytest.mark.parametrize("lesson", lessons(), ids=[p.stem for p in lessons()])
def test_lesson_runs_top_to_bottom_in_a_fresh_kernel(lesson: Path, site_build):
    nb = site_build.executed_lesson(lesson)  # run once per test run, by the site's build (conftest)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    noise = output_noise(nb)
    assert not noise, f"{lesson.name} shows installer or log noise (filter it in the lesson):\n" + "\n".join(noise)


@pytest.mark.parametrize("lesson", lessons(), ids=[p.stem for p in lessons()])
def test_lesson_is_committed_without_outputs_and_opens_with_goals(lesson: Path):
    nb = json.loads(lesson.read_text())
    assert all(c.get("outputs", []) == [] for c in nb["cells"] if c["cell_type"] == "code")
    first = "".join(nb["cells"][0]["source"]).lower()
    assert "able to" in first or "you will" in first or "goals" in first, "a lesson opens with its goals"
    last = "".join(nb["cells"][-1]["source"]) + "".join(nb["cells"][-2]["source"])
    assert "exercises/ex" in last, "a lesson closes with a pointer to its exercise"
