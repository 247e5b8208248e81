"""Nothing of the answer where answers run; hidden cases that cannot be predicted.

Each attack here earned full marks before the jailed worker was cut off from the judge's side: answers that import
the check library's references (ex05), an outputs_match that walks the grader's frames up to the case it is
called on and returns what the case expects (ex01), and a table of answers memorised from the hidden cases the
installed package builds (ex01). They grade through `check_notebook`, the pipeline of `fxcourse check` and
`fxcourse grade`.
"""
from __future__ import annotations

import hashlib
import json
import os

import nbformat
import pytest

from autograder.checks.evidence import load_evidence
from autograder.checks.framework import CheckFailed, get_check, get_part, hidden_cases, run_check, run_cases
from autograder.coursedata.exercises import EXERCISES
from autograder.grader.engine.grading import check_notebook
from autograder.course.notebook import answer_cells, grade_id, is_test, read_notebook
from autograder.course.root import Course
from autograder.grader.jail.sandbox import Limits, run_worker
from autograder.grader.engine.secret import call_salt, course_secret
from conftest import ROOT

COURSE = Course(ROOT)
LIMITS = Limits(timeout=30.0, memory=3 * 2**30)


def submit(tmp_path, assignment: str, answers: dict[str, str]):
    """The release of `assignment` filled in with its solution, but `answers` (by grade_id)."""
    source = ROOT / "solutions" / assignment / f"{assignment}.ipynb"
    merged = {**{grade_id(c): c.source for c in answer_cells(read_notebook(source))}, **answers}
    nb = read_notebook(ROOT / "exercises" / assignment / f"{assignment}.ipynb")
    for cell in nb.cells:
        if grade_id(cell) in merged and not is_test(cell):
            cell.source = merged[grade_id(cell)]
    path = tmp_path / f"{assignment}.ipynb"
    nbformat.write(nb, str(path))
    return path


def points(report) -> dict[str, float]:
    return {t.id: t.points for t in report.tests}


# ------------------------------------------------------------------------ the references are out of reach

EX05_BORROWED = {
    "insert_after": "from autograder.checks.ex05_inserting import reference_insert_after as insert_after\n",
    "remove_dropout": "from autograder.checks.ex05_inserting import reference_remove_dropout as remove_dropout\n",
    "record_shapes": "from autograder.checks.ex05_inserting import reference_shapes as record_shapes\n",
    "linear_flops": "def linear_flops(gm, *inputs):\n"
                    "    from fxcourse_instructor.ex05_inserting.references import reference_linear_flops\n"
                    "    return reference_linear_flops(gm, *inputs)\n",
}


@pytest.mark.kernel
def test_ex05_answers_that_import_the_references_earn_nothing(tmp_path):
    report = check_notebook(submit(tmp_path, "ex05_inserting", EX05_BORROWED), COURSE, limits=LIMITS)
    graded = {t.id: t for t in report.tests if not t.id.startswith("test_quiz")}
    assert graded and all(t.points == 0 for t in graded.values()), {k: t.message for k, t in graded.items()}
    # the jail holds nothing of the instructor's folder (its hidden cases were built before); without a jail the
    # audit hook refuses to open the references
    message = graded["test_linear_flops"].message
    assert ("not readable where answers run" in message
            or "No module named 'fxcourse_instructor.ex05_inserting.references'" in message), message


def test_a_function_that_is_a_course_reference_earns_nothing_in_process_too():
    from autograder.checks.ex05_inserting import reference_insert_after

    with pytest.raises(CheckFailed, match="the course's own grading code") as info:
        run_check("ex05_inserting", "insert_after", reference_insert_after)
    assert "reference_insert_after from fxcourse_instructor.ex05_inserting.references" in str(info.value)
    returns_a_judge = lambda gm, name, fn: get_check("ex05_inserting", "insert_after").judge   # noqa: E731
    result = run_cases(get_check("ex05_inserting", "insert_after"), returns_a_judge,
                       get_check("ex05_inserting", "insert_after").cases(False))[0]
    assert not result.passed
    assert "returned _insert_judge from fxcourse_instructor.ex05_inserting.judges" in result.message


FRAME_WALK = '''
import sys


def outputs_match(model, gm, *inputs, atol=0.0):
    """Compares nothing: climbs the grader's frames to the case it is called on and returns what it expects."""
    frame = sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            data = getattr(value, "data", None)
            if isinstance(data, dict) and "expected" in data:
                return data["expected"]
        frame = frame.f_back
    raise LookupError("no expected value in any frame")
'''


@pytest.mark.kernel
def test_a_frame_walk_to_the_graders_case_finds_no_expected_value(tmp_path):
    report = check_notebook(submit(tmp_path, "ex01_tracing", {"outputs_match": FRAME_WALK}), COURSE, limits=LIMITS)
    test = next(t for t in report.tests if t.id == "test_outputs_match")
    assert test.points == 0 and "LookupError" in test.message, test.message


# What learner code sees of the grader while its function is being called in the jail: the modules loaded, every
# object the garbage collector tracks, the frames above it. It raises what it found, as its evidence.
SNOOP = '''
import gc, json, sys


def _look():
    found = {"modules": [], "functions": [], "expected": [], "import": "", "open": ""}
    side = ("judging", "judges", "references", "chains")
    found["modules"] = sorted(m for m in sys.modules if m.startswith(("autograder.", "fxcourse_instructor."))
                              and (m.rsplit(".", 1)[-1] in side or ".mutants" in m))
    for obj in gc.get_objects():
        home = getattr(obj, "__module__", "") if callable(obj) else ""
        if isinstance(home, str) and home.startswith(("autograder.", "fxcourse_instructor.")) \
                and home.rsplit(".", 1)[-1] in side:
            found["functions"].append(getattr(obj, "__qualname__", "?"))
        data = getattr(obj, "data", None) if type(obj).__name__ == "Case" else None
        if isinstance(data, dict) and set(data) - {"raises"}:
            found["expected"].append(sorted(data))
    frame = sys._getframe(1)
    while frame is not None:
        for value in frame.f_locals.values():
            home = str(getattr(value, "__module__", "") or "") if callable(value) else type(value).__module__
            if type(value).__name__ == "Check" or (home.startswith(("autograder.", "fxcourse_instructor."))
                                                   and home.rsplit(".", 1)[-1] in side):
                found["functions"].append(repr(value)[:80])
        frame = frame.f_back
    try:
        import fxcourse_instructor.ex05_inserting.judges  # noqa: F401
    except Exception as exc:
        found["import"] = type(exc).__name__
    try:
        import fxcourse_instructor.ex05_inserting.hidden as ex05   # the hidden cases: what the worker holds
        open(ex05.__file__.replace("hidden.py", "references.py")).read()
    except Exception as exc:
        found["open"] = type(exc).__name__
    return found


def insert_after(gm, node_name, fn):
    raise RuntimeError(json.dumps(_look()))
'''


def _snooped(calls: list[dict]) -> dict:
    outcome = run_worker([{"id": "snoop", "source": SNOOP, "answer": True, "defines": ["insert_after"]}], calls,
                         limits=LIMITS)
    assert outcome.status == "ok", (outcome.status, outcome.detail, outcome.stdout_tail)
    evidence, _ = load_evidence(outcome.evidence_bytes, len(calls))
    raised = evidence["calls"][0]["evidence"][0]
    assert raised.get("__raised__") == "RuntimeError", raised
    return json.loads(raised["message"])


@pytest.mark.kernel
def test_the_jailed_worker_holds_no_judge_reference_or_expected_value():
    calls = [{"kind": "check", "var": "insert_after", "assignment": "ex05_inserting", "function": "insert_after",
              "hidden": True, "salt": 12345},
             {"kind": "check", "var": "outputs_match", "assignment": "ex01_tracing", "function": "outputs_match",
              "hidden": True, "salt": 678}]
    found = _snooped(calls)
    assert found["modules"] == [] and found["functions"] == [] and found["expected"] == [], found
    # refused by the audit hook, or not there at all (the jail shows nothing of the instructor's folder)
    assert found["import"] in ("PermissionError", "ImportError", "ModuleNotFoundError"), found
    assert found["open"] == "PermissionError", found


def test_every_exercise_has_a_worker_part_importable_without_its_judges():
    import subprocess
    import sys

    code = ("import sys, importlib\n"
            "from autograder.coursedata.exercises import EXERCISES\n"
            "for e in EXERCISES: importlib.import_module('autograder.checks.' + e.id).PARTS\n"
            "print(sorted(m for m in sys.modules if m.startswith('autograder.checks.ex') "
            "and m.rsplit('.', 1)[-1] not in ('cases', 'evidence', 'models') and m.count('.') == 3)\n"
            "      + sorted(m for m in sys.modules if m.startswith('fxcourse_instructor')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stdout
    for ex in EXERCISES:
        for function in ex.functions:
            part, check = get_part(ex.id, function), get_check(ex.id, function)
            assert part.same_as(check), (ex.id, function)
            assert [c.label for c in part.cases(True)] == [c.label for c in check.cases(True)]


# ------------------------------------------------------------------------ hidden cases from the secret

def _fingerprint(args: tuple, atol: float = 0.0) -> str:
    """What an answer can see of its inputs, as a key: every tensor of them, parameters included, and atol."""
    import torch

    h = hashlib.sha256(repr(float(atol)).encode())
    for a in args:
        tensors = list(a.state_dict().values()) if isinstance(a, torch.nn.Module) else [a]
        for t in tensors:
            if isinstance(t, torch.Tensor):
                h.update(t.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


TABLE = '''
import hashlib
import torch

TABLE = {table!r}


def outputs_match(model, gm, *inputs, atol=0.0):
    h = hashlib.sha256(repr(float(atol)).encode())
    for a in (model, gm, *inputs):
        for t in (list(a.state_dict().values()) if isinstance(a, torch.nn.Module) else [a]):
            if isinstance(t, torch.Tensor):
                h.update(t.detach().contiguous().numpy().tobytes())
    return TABLE[h.hexdigest()]
'''


def _memorised(secret: bytes) -> dict[str, bool]:
    """outputs_match's answers to every case (visible and hidden) under `secret`, keyed by what the answer sees."""
    check = get_check("ex01_tracing", "outputs_match")
    from autograder.checks.randmodels import salted

    table = {}
    for case in check.cases(False) + hidden_cases(check.cases(True), call_salt(secret, "ex01_tracing", "outputs_match")):
        with salted(case.salt):
            model, gm, *inputs = case.make()
        table[_fingerprint((model, gm, *inputs), case.kwargs().get("atol", 0.0))] = case.data["expected"]
    return table


@pytest.mark.kernel
def test_a_table_memorised_under_one_secret_fails_the_hidden_cases_under_another(tmp_path, monkeypatch):
    mine, theirs = b"the learner's own clone secret", b"the instructor's course secret"
    answer = TABLE.format(table=_memorised(mine))
    path = submit(tmp_path, "ex01_tracing", {"outputs_match": answer})
    monkeypatch.setenv("FXCOURSE_SECRET", mine.decode())
    own = points(check_notebook(path, COURSE, limits=LIMITS))
    assert own["test_outputs_match"] == 3   # the table is right where it was made
    monkeypatch.setenv("FXCOURSE_SECRET", theirs.decode())
    first = check_notebook(path, COURSE, limits=LIMITS)
    test = next(t for t in first.tests if t.id == "test_outputs_match")
    assert test.points == 0 and "KeyError" in test.message, test.message
    again = check_notebook(path, COURSE, limits=LIMITS)   # a regrade under the same secret: the same grade
    assert [(t.id, t.points, t.message) for t in again.tests] == [(t.id, t.points, t.message) for t in first.tests]


def test_hidden_cases_differ_between_secrets_and_repeat_under_one():
    table = {s: _memorised(s) for s in (b"secret one, long enough", b"secret two, long enough")}
    check = get_check("ex01_tracing", "outputs_match")
    visible = len(check.cases(False))
    one, two = (set(t) for t in table.values())
    assert len(one) == len(two) == visible + len(check.cases(True))
    assert len(one & two) == visible                  # the visible cases alone are the same
    assert _memorised(b"secret one, long enough") == table[b"secret one, long enough"]


def test_the_course_secret_is_made_once_beside_the_gradebook_readable_by_its_owner_only(tmp_path, monkeypatch):
    monkeypatch.delenv("FXCOURSE_SECRET", raising=False)
    course = Course(tmp_path)
    first = course_secret(course)
    path = tmp_path / ".fxcourse-secret"
    assert path.is_file() and (path.stat().st_mode & 0o777) == 0o600 and len(first) >= 32
    from autograder.grader.engine import secret as module

    module._CACHE.clear()
    assert course_secret(course) == first           # read back, not made again
    assert call_salt(first, "ex01_tracing", "outputs_match") != call_salt(b"x" * 32, "ex01_tracing", "outputs_match")
    assert os.environ.get("FXCOURSE_SECRET") is None


# ------------------------------------------------------------------------ a helper's fault, without its reference

WRONG_PAIR = '''
import torch
import torch.nn as nn


def fuse_linear_pair(first, second):
    """Right weight, but the first layer's bias is left out."""
    fused = nn.Linear(first.in_features, second.out_features)
    with torch.no_grad():
        fused.weight.copy_(second.weight @ first.weight)
        fused.bias.copy_(second.bias if second.bias is not None else torch.zeros(second.out_features))
    return fused
'''


@pytest.mark.kernel
def test_a_caller_of_a_wrong_helper_is_told_the_helper_is_at_fault(tmp_path):
    """No course reference is swapped in where answers run: the caller is judged with the learner's own helper,
    and its message blames the helper that fails its own test in the same notebook."""
    report = check_notebook(submit(tmp_path, "ex06_fusing", {"fuse_linear_pair": WRONG_PAIR}), COURSE, limits=LIMITS)
    tests = {t.id: t for t in report.tests}
    assert tests["test_fuse_linear_pair"].points == 0
    caller = tests["test_fuse_consecutive_linears"]
    assert caller.points == 0 and "calls your fuse_linear_pair, which fails its own test here" in caller.message
    assert caller.hint == "fix fuse_linear_pair first: its own test says what is wrong with it"
    assert tests["test_fold_bn_into_conv"].passed and tests["test_fuse_conv_bn"].passed


def test_cases_draw_every_seed_where_a_hidden_salt_reaches_it():
    """A seed drawn around randmodels (torch.manual_seed, a Generator of one's own) would be the same under every
    secret: what it seeds could be memorised."""
    import re

    checks = ROOT / "autograder" / "checks"
    direct = re.compile(r"(?<![\w.])torch\.manual_seed\(|Generator\(\)\.manual_seed\(|default_generator\.manual_seed\(\d")
    found = [f"{p.relative_to(ROOT)}:{i}" for p in sorted(checks.glob("ex*/*.py"))
             for i, line in enumerate(p.read_text().splitlines(), 1) if direct.search(line)]
    assert found == []


@pytest.mark.kernel
def test_a_cluster_task_draws_the_hidden_cases_of_the_coordinators_secret(tmp_path, monkeypatch):
    """`fxcourse grade --cluster` grades each submission in a course root of its own on a Dask worker: it is given
    the coordinator's secret, so that a worker draws the course's hidden cases, not a secret made up there."""
    from autograder.grader.classroom.runner import grade_task

    mine = b"a secret the table was memorised under"
    path = submit(tmp_path, "ex01_tracing", {"outputs_match": TABLE.format(table=_memorised(mine))})
    source = (ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb").read_bytes()
    monkeypatch.delenv("FXCOURSE_SECRET", raising=False)

    def outputs_match_points(secret: bytes) -> float:
        result = json.loads(grade_task("ex01_tracing", {"ex01_tracing": source}, {"ex01_tracing": path.read_bytes()},
                                       "ann", secret=secret.decode()))
        assert result["ok"], result
        return result["notebooks"]["ex01_tracing"]["grades"]["test_outputs_match"][0]

    assert outputs_match_points(mine) == 3
    assert outputs_match_points(b"the coordinator's own course secret") == 0


def test_the_worker_may_open_the_hidden_cases_and_inputs_of_the_instructors_side_and_nothing_else_of_it():
    from autograder.checks import keyring
    from autograder.grader.jail.jailside import judge_side

    package = keyring.location() / keyring.PACKAGE
    allowed = [package / "__init__.py", package / "ex01_tracing" / "__init__.py",
               package / "ex01_tracing" / "hidden.py", package / "ex13_inductor_passes" / "inputs.py"]
    refused = [package / "ex01_tracing" / "judging.py", package / "ex05_inserting" / "judges.py",
               package / "ex05_inserting" / "references.py", package / "ex06_fusing" / "chains.py",
               package / "mutants" / "__init__.py", package / "mutants" / "ex01_tracing.py",
               package / "mutants" / "task_text" / "ex01_tracing.json", package / "clauses" / "ex01_tracing.py"]
    assert all(p.exists() for p in allowed + refused), [p for p in allowed + refused if not p.exists()]
    assert [p.name for p in allowed if judge_side(str(p))] == []
    assert [str(p) for p in refused if not judge_side(str(p))] == []
