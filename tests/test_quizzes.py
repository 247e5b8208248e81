"""The quizzes of ex01-ex08: only understanding earns a point, every key is true on the pinned torch, and the
verdicts say what they must (explanation after a right answer, lesson section after a wrong one, never the key)."""
from __future__ import annotations

import ast
import contextlib
import io
import json
import linecache
import re
import traceback
import warnings

import pytest

from autograder import inline
from autograder.coursedata import quizzes
from autograder.grader.engine import grading
from autograder.course import plan
from autograder.checks.framework import CheckFailed
from autograder.course.notebook import grade_id, read_notebook
from conftest import ROOT

DATA = quizzes.load(ROOT)
QUESTIONS = quizzes.questions(DATA)
IDS = [f"{a}-{q['id']}" for a, q in QUESTIONS]
WITH_CODE = [(a, q) for a, q in QUESTIONS if q.get("code")]
LIMIT = 0.35


# ------------------------------------------------------------------------------------- guessing

def test_no_guessing_strategy_scores_above_35_percent():
    scores = quizzes.guess_scores(DATA)
    assert set(scores) == {"always A", "always B", "always C", "always D", "longest option", "shortest option",
                           "most words of the question"}
    too_high = {name: f"{hit}/{total}" for name, (hit, total) in scores.items() if hit > LIMIT * total}
    assert not too_high, f"guessing strategies above {LIMIT:.0%}: {too_high}"


def test_the_readme_states_the_guessing_figures():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name, (hit, total) in quizzes.guess_scores(DATA).items():
        row = f"| {name} | {hit}/{total} ({100 * hit / total:.0f}%) |"
        assert row in readme, f"README lacks the row {row!r}"
    keys = quizzes.key_counts(DATA)
    spread = ", ".join(f"{k} {keys[k]}" for k in "ABCD")
    assert f"({spread})" in readme, f"README lacks the key spread ({spread})"


def test_the_strategies_catch_a_skewed_quiz():
    # A quiz whose key is always B and always the longest option, as the course's quizzes once were.
    skewed = {"ex": {"questions": [{"id": f"q{i}", "question": "What does tracing record?", "key": "B",
                                    "options": {"A": "x", "B": "tracing records the operations of forward",
                                                "C": "y", "D": "z"}} for i in range(1, 5)]}}
    scores = quizzes.guess_scores(skewed)
    assert scores["always B"] == scores["longest option"] == (4, 4)
    assert scores["most words of the question"] == (4, 4) and scores["always A"] == (0, 4)


# ------------------------------------------------------------------------------------- the rules

@pytest.mark.parametrize("assignment", sorted(DATA))
def test_each_exercise_has_three_questions_and_at_least_half_ask_to_predict(assignment):
    qs = DATA[assignment]["questions"]
    assert len(qs) >= 3
    assert 2 * sum(bool(q["predict"]) for q in qs) >= len(qs), f"{assignment}: fewer than half ask to predict"
    for q in qs:
        if q.get("code"):
            assert q["predict"], f"{assignment} {q['id']}: a question showing code asks what it does"


@pytest.mark.parametrize("assignment, q", QUESTIONS, ids=IDS)
def test_options_are_parallel_and_the_key_carries_no_explanation(assignment, q):
    opts = q["options"]
    assert list(opts) == list("ABCD"), f"{assignment} {q['id']}: four options A-D"
    lengths = sorted(len(v) for v in opts.values())
    assert lengths[-1] <= 2 * lengths[0] + 12, f"{assignment} {q['id']}: options of very different lengths {lengths}"
    assert len(set(opts.values())) == 4
    # The explanation is kept out of every option (it goes to the feedback after a right answer).
    for text in opts.values():
        assert text.strip() not in q["explanation"] or len(text) < 30
    assert not re.search(r"\b(answer|option|key)\s+(is\s+)?[A-D]\b", q["explanation"])  # no "the answer is B"


# --------------------------------------------------------------------------- notebooks follow the data

@pytest.mark.parametrize("assignment", sorted(DATA))
def test_the_notebooks_quiz_cells_are_the_data(assignment):
    nb = read_notebook(ROOT / "solutions" / assignment / f"{assignment}.ipynb")
    cells = {grade_id(c): (i, c) for i, c in enumerate(nb.cells) if grade_id(c)}
    in_notebook = sorted(g[5:] for g in cells if re.fullmatch(r"quiz_q\d+", g))
    assert in_notebook == sorted(q["id"] for q in DATA[assignment]["questions"])
    for q in DATA[assignment]["questions"]:
        i, answer = cells[f"quiz_{q['id']}"]
        assert nb.cells[i - 1].source == quizzes.question_markdown(q), \
            f"{assignment} {q['id']}: run `python -m autograder.coursedata.quizzes` to rewrite the quiz cells"
        assert answer.source == quizzes.answer_source(q)
        assert cells[f"test_quiz_{q['id']}"][1].source == quizzes.test_source(q)


@pytest.mark.parametrize("assignment", sorted(DATA))
def test_the_release_carries_no_key_and_no_explanation(assignment):
    text = (ROOT / "exercises" / assignment / f"{assignment}.ipynb").read_text(encoding="utf-8")
    release = json.loads(text)
    sources = ["".join(c["source"]) for c in release["cells"]]
    for q in DATA[assignment]["questions"]:
        assert q["explanation"] not in "\n".join(sources)
        test = next(s for s in sources if f'check_quiz("{q["id"]}"' in s)
        assert "key=" not in test and "explanation" not in test
        assert json.dumps(q["section"], ensure_ascii=False) in test  # the section, as the Python literal
        answer = next(s for c, s in zip(release["cells"], sources)
                      if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == f"quiz_{q['id']}")
        assert f'"{q["key"]}"' not in answer
    assert not (ROOT / "exercises" / "quizzes.json").exists()


# --------------------------------------------------------------------------- keys checked by running

SETUP = """
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.fx as fx
from fxplayground import *
from torch.ao.quantization import default_qat_qconfig, get_default_qat_qconfig_mapping
from torch.ao.quantization.fake_quantize import FakeQuantizeBase
from torch.ao.quantization.quantize_fx import convert_fx, prepare_qat_fx
from torch.fx.experimental.optimization import fuse
torch.manual_seed(0)
"""


def dropout_survivors(gm):
    """Which dropouts of a DropoutNet graph still drop values: run it node by node and compare."""
    import torch
    import torch.fx as fx

    changed = {}

    class Watch(fx.Interpreter):
        def run_node(self, n):
            out = super().run_node(n)
            is_module = n.op == "call_module" and isinstance(self.module.get_submodule(n.target), torch.nn.Dropout)
            is_function = n.op == "call_function" and "dropout" in getattr(n.target, "__name__", "")
            if is_module or is_function:
                changed["module" if is_module else "function"] = not torch.equal(out, self.env[n.args[0]])
            return out

    Watch(gm).run(torch.rand(64, 6) + 1)
    dropping = {k for k, v in changed.items() if v}
    return {frozenset(): "neither", frozenset({"module"}): "module", frozenset({"function"}): "function",
            frozenset({"module", "function"}): "both"}[frozenset(dropping)]


def export_outcome(error, result):
    if error is None:
        text = str(result.graph)
        return "cond" if "cond" in text else "one-branch"
    if type(error).__name__ == "TraceError":
        return "TraceError"
    return "data-dependent-error" if "data-dependent" in str(error) else type(error).__name__


def count_fake_quant(prepared):
    from torch.ao.quantization.fake_quantize import FakeQuantizeBase

    return sum(1 for n in prepared.graph.nodes
               if n.op == "call_module" and isinstance(prepared.get_submodule(n.target), FakeQuantizeBase))


def first_quantize_op(q):
    x = next(n for n in q.graph.nodes if n.op == "placeholder")
    return next(iter(x.users)).op  # the node that turns the float input into int8 reads the input


def scale_outcome(prepared, scales_before, raised):
    import torch
    from torch.ao.quantization.fake_quantize import FakeQuantizeBase

    if raised:
        return "raised"
    after = [m.scale for m in prepared.modules() if isinstance(m, FakeQuantizeBase)]
    if all(torch.equal(a, b) for a, b in zip(after, scales_before)):
        return "unchanged"
    return "reset" if all(torch.all(a == 1.0) for a in after) else "updated"


def run_snippet(q: dict) -> str:
    """What the question's snippet really does: its printed text, or where and what it raised, as `outcome`."""
    ns: dict = {"__name__": "__quiz__", "dropout_survivors": dropout_survivors, "export_outcome": export_outcome,
                "count_fake_quant": count_fake_quant,
                "first_quantize_op": first_quantize_op, "scale_outcome": scale_outcome}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(SETUP, ns)
        if q.get("setup"):
            exec(compile(q["setup"], "<quiz setup>", "exec"), ns)
        tree = ast.parse(q["code"])
        if tree.body and isinstance(tree.body[-1], ast.Expr):  # the value of a last expression is kept
            last = tree.body[-1]
            tree.body[-1] = ast.copy_location(ast.Assign([ast.Name("result", ast.Store())], last.value), last)
            ast.fix_missing_locations(tree)
        out, error, line = io.StringIO(), None, None
        ns["result"] = None
        # Like a notebook cell, the snippet's source can be read back (FX names a lambda from it).
        linecache.cache["<quiz>"] = (len(q["code"]), None, q["code"].splitlines(True), "<quiz>")
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(tree, "<quiz>", "exec"), ns)
        except Exception as exc:  # the snippet's own failure is what the question is about
            error = exc
            line = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<quiz>"][-1]
        ns.update(printed=out.getvalue().strip(), raised=type(error).__name__ if error else None, error=error,
                  raised_line=f"line {line}" if error else None)
        if q.get("verify"):
            exec(q["verify"], ns)
        else:
            ns["outcome"] = ns["raised"] or ns["printed"]
    return str(ns["outcome"])


@pytest.mark.parametrize("assignment, q", WITH_CODE, ids=[f"{a}-{q['id']}" for a, q in WITH_CODE])
def test_the_key_says_what_the_snippet_really_does(assignment, q):
    outcomes = q.get("outcomes")
    assert outcomes and set(outcomes) == set(q["options"]), f"{assignment} {q['id']}: every option needs an outcome"
    assert len(set(outcomes.values())) == len(outcomes), f"{assignment} {q['id']}: two options claim one outcome"
    got = run_snippet(q)
    claimed = [k for k, v in outcomes.items() if v == got]
    assert claimed == [q["key"]], f"{assignment} {q['id']}: the snippet gives {got!r}, which is option " \
                                  f"{claimed or 'none'}; the key is {q['key']}"


def test_a_wrong_key_is_caught_by_running_the_snippet():
    a, q = next((a, q) for a, q in WITH_CODE if a == "ex01_tracing" and q["id"] == "q2")
    wrong = {**q, "key": "B"}
    got = run_snippet(wrong)
    assert got == q["outcomes"][q["key"]] != wrong["outcomes"]["B"]


# ----------------------------------------------------------------------------------- the verdicts

def _one(assignment="ex01_tracing", var="q1"):
    return next(q for q in DATA[assignment]["questions"] if q["id"] == var)


def test_a_right_answer_shows_the_explanation_and_a_wrong_one_the_section_never_the_key():
    q = _one()
    wrong = next(k for k in q["options"] if k != q["key"])
    ok = quizzes.judge("q1", q["key"], q["key"], "ABCD", q["section"], q["explanation"])
    assert ok.passed and q["explanation"] in ok.message
    bad = quizzes.judge("q1", wrong, q["key"], "ABCD", q["section"], q["explanation"])
    assert not bad.passed and "not the right answer" in bad.message and q["section"] in bad.hint
    said = bad.message + " " + bad.hint
    assert f"'{q['key']}'" not in said and f'"{q["key"]}"' not in said and q["explanation"] not in said
    with pytest.raises(CheckFailed) as raised:
        quizzes.check_quiz("q1", wrong, key=q["key"], choices="ABCD", section=q["section"],
                           explanation=q["explanation"])
    assert q["explanation"] not in str(raised.value) and f"'{q['key']}'" not in str(raised.value)


def test_the_grader_reads_section_and_explanation_and_never_sends_them_to_the_worker():
    q = _one()
    calls = plan.parse_test_cell(quizzes.test_source(q))
    hidden = [c for c in calls if c.key]
    assert len(calls) == 2 and hidden[0].explanation == q["explanation"] and hidden[0].section == q["section"]
    assert all(c["key"] is None and c["explanation"] is None for c in grading._worker_calls(calls))


def test_check_in_the_notebook_judges_with_the_key_where_the_course_has_it():
    q1, q2 = _one(var="q1"), _one(var="q2")
    wrong = next(k for k in q2["options"] if k != q2["key"])
    report = inline.check("q1", "q2", namespace={"q1": q1["key"], "q2": wrong}, assignment="ex01_tracing")
    rows = {r.name: r for r in report.rows}
    assert rows["q1"].passed and q1["explanation"] in rows["q1"].message
    assert not rows["q2"].passed and q2["section"] in rows["q2"].hint
    assert q2["explanation"] not in str(report) and f"'{q2['key']}'" not in rows["q2"].message + rows["q2"].hint


def test_check_in_a_release_without_keys_checks_format_and_names_the_section(tmp_path):
    import shutil

    release = tmp_path / "exercises" / "ex01_tracing"
    release.mkdir(parents=True)
    shutil.copy(ROOT / "exercises" / "ex01_tracing" / "ex01_tracing.ipynb", release)
    ns = {"__session__": str(release / "ex01_tracing.ipynb"), "q1": "A"}
    row = inline.check("q1", namespace=ns, assignment="ex01_tracing").rows[0]
    assert row.passed and "format only" in row.message and _one()["section"] in row.message


@pytest.mark.parametrize("assignment", sorted(DATA))
def test_every_section_a_question_points_to_is_a_heading_of_its_lesson(assignment):
    lesson = ROOT / DATA[assignment]["lesson"]
    cells = json.loads(lesson.read_text(encoding="utf-8"))["cells"]
    headings = {line.lstrip("#").strip() for c in cells if c["cell_type"] == "markdown"
                for line in "".join(c["source"]).splitlines() if line.startswith("#")}
    number = lesson.name[:2]
    for q in DATA[assignment]["questions"]:
        found = re.fullmatch(r"Lesson (\d\d), section \u201c(.+)\u201d", q["section"])
        assert found, f"{assignment} {q['id']}: section {q['section']!r} is not 'Lesson NN, section \u201c...\u201d'"
        assert found.group(1) == number and found.group(2) in headings, \
            f"{assignment} {q['id']}: {lesson.name} has no heading {found.group(2)!r}"


@pytest.mark.kernel
def test_the_grader_shows_the_explanation_for_a_right_answer_and_the_section_for_a_wrong_one(tmp_path):
    from autograder.course.root import Course
    from autograder.grader.engine.grading import check_notebook

    q1, q2 = _one(var="q1"), _one(var="q2")
    wrong = next(k for k in q1["options"] if k != q1["key"])
    nb = json.loads((ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb").read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "quiz_q1":
            cell["source"] = f'q1 = "{wrong}"\n'
    path = tmp_path / "ex01_tracing.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    report = check_notebook(path, Course(ROOT))
    tests = {t["id"]: t for t in report.to_json()["tests"]}
    assert not tests["test_quiz_q1"]["passed"] and q1["section"] in tests["test_quiz_q1"]["message"]
    said = tests["test_quiz_q1"]["message"]
    assert f"'{q1['key']}'" not in said and q1["explanation"] not in said
    assert tests["test_quiz_q2"]["passed"] and q2["explanation"] in tests["test_quiz_q2"]["message"]


def test_feedback_keeps_the_explanation_and_drops_the_key():
    import nbformat

    from autograder.grader.engine.preprocessors import ScrubFeedback

    q = _one(var="q2")
    cell = nbformat.v4.new_code_cell(quizzes.test_source(q))
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "test_quiz_q2", "points": 1}
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"\u2714 correct. {q['explanation']}\n")]
    nb = nbformat.v4.new_notebook()
    nb.cells = [cell]
    scrubbed, _ = ScrubFeedback().preprocess(nb, {})
    shown = scrubbed.cells[0]
    assert "key=" not in shown.source and "explanation=" not in shown.source
    assert q["explanation"] in shown.outputs[0]["text"]
