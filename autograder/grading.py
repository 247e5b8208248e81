"""Grade a notebook: restore it on the source, run each test cell's checks in a jailed worker, judge here.

The pipeline, in order (each step needs the one before):
1. read    - parse the submission with clear errors (autograder.notebook.read_notebook);
2. assign  - decide which assignment it is (file name, then the grade ids and names it carries);
3. restore - rebuild it on the instructor source, taking only answer cells (autograder.notebook.restore);
4. plan    - read which checks each source test cell calls (parse_test_cell);
5. probe   - run the setup and answer cells and call the functions in a worker (autograder.sandbox);
6. judge   - compare the evidence with the references, in this process (autograder.core.judge_evidence).
"""
from __future__ import annotations

import ast
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from nbformat.notebooknode import NotebookNode

from .core import QUIZ_CHOICES, get_check, judge_evidence, judge_quiz
from .course import Course
from .notebook import (NotebookError, answer_cells, defined_names, grade_id, is_answer, is_test, nbgrader_meta,
                       read_notebook, restore)
from .sandbox import Limits, WorkerOutcome, isolation_level, run_worker

__all__ = ["Call", "TestResult", "Report", "parse_test_cell", "identify_assignment", "grade_restored",
           "check_notebook"]


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


@dataclass
class TestResult:
    id: str
    points: float
    max_points: float
    passed: bool
    message: str
    hint: str | None = None
    cases: int = 0


@dataclass
class Report:
    notebook: str
    score: float
    max_score: float
    tests: list[TestResult]
    notes: list[str] = field(default_factory=list)
    isolation: str = ""
    full_tests: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"notebook": self.notebook, "score": self.score, "max_score": self.max_score,
                "tests": [{"id": t.id, "points": t.points, "max_points": t.max_points, "passed": t.passed,
                           "message": t.message + (f" Hint: {t.hint}" if t.hint and not t.passed else "")}
                          for t in self.tests],
                "notes": self.notes, "isolation": self.isolation, "hidden_tests_applied": self.full_tests}


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
            calls.append(Call("quiz", node.args[1].id, key=key, choices=choices))
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


def identify_assignment(nb: NotebookNode, path: str | Path, course: Course) -> str:
    """Which assignment a submission is: its file name if that fits, else the best match of its answers."""
    known = course.assignments()
    if not known:
        raise NotebookError(f"no assignments found in {course.root} (expected solutions/ or exercises/)")
    stem = Path(path).stem
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


# ---------------------------------------------------------------------------------- probe + judge

_JUDGE_LOCK = threading.Lock()


def _worker_calls(calls: list[Call]) -> list[dict]:
    """What the worker is told to call: never a quiz key (the learner's code can read its job)."""
    return [{**asdict(c), "key": None} for c in calls]


def _message_for_missing(var: str, outcome: WorkerOutcome) -> str | None:
    for err in (outcome.evidence or {}).get("cell_errors", []):
        if err["cell"] == var or var in err.get("defines", []):
            return f"the cell defining {var} raised {err['error']}"
    return None


def _judge_cell(test_id: str, calls: list[Call], outcome: WorkerOutcome) -> tuple[bool, str, str | None, int]:
    """(passed, message, hint, cases) of one test cell from its worker's outcome."""
    if outcome.status != "ok":
        where = ""
        if outcome.last_step.startswith("case "):
            fn, _, label = outcome.last_step[5:].partition("|")
            where = f" while checking {fn} on {label}"
        elif outcome.last_step.startswith("cell "):
            where = f" while running cell {outcome.last_step[5:]!r}"
        hint = {"timeout": "look for an endless loop, or work that grows too fast",
                "crashed": "the answers must not exit the interpreter or use more memory than the limit"}.get(
            outcome.status)
        return False, f"{outcome.detail}{where}", hint, 0
    ev = outcome.evidence
    if ev.get("tampered"):
        names = ", ".join(ev["tampered"][:5])
        return False, f"the answer cells changed what the grader relies on ({names}); results are not trusted", \
            "answers must not patch torch, builtins or the autograder", 0
    cases = 0
    for call, got in zip(calls, ev["calls"]):
        evidence_list = got.get("evidence", []) if isinstance(got, dict) else []
        if call.kind == "quiz":
            result = judge_quiz(call.var, evidence_list[0] if evidence_list else None, call.key, call.choices)
            cases += 1
            if not result.passed:
                return False, result.message, result.hint, cases
            continue
        check = get_check(call.assignment, call.function)
        expected_cases = check.cases(call.hidden)
        if len(evidence_list) != len(expected_cases):
            return False, f"{call.function}: the grader received {len(evidence_list)} results for " \
                          f"{len(expected_cases)} cases", None, cases
        for case, evidence in zip(expected_cases, evidence_list):
            cases += 1
            if isinstance(evidence, dict) and "__missing__" in evidence:
                msg = _message_for_missing(call.var, outcome)
                if msg:
                    return False, msg, f"fix the error in the cell that defines {call.var}, then run it", cases
            result = judge_evidence(check, case, evidence)
            if not result.passed:
                return False, result.message, result.hint, cases
    if all(c.kind == "quiz" for c in calls):
        return True, "correct" if any(c.key for c in calls) else "answered", None, cases
    return True, f"passed ({cases} case{'s' if cases != 1 else ''})", None, cases


def grade_restored(nb: NotebookNode, course: Course | None = None, *, limits: Limits | None = None,
                   jobs: int | None = None) -> list[TestResult]:
    """Grade a restored notebook (its test cells are the source's): one worker per test cell."""
    limits = limits or Limits(timeout=float(os.environ.get("FXCOURSE_TIMEOUT", "60")))
    cells = []
    for c in nb.cells:
        if c.cell_type == "code" and not is_test(c):
            cid = grade_id(c) or c.get("id", "cell")
            cells.append({"id": cid, "source": c.source})
    plans = []
    for c in nb.cells:
        if not is_test(c):
            continue
        tid = grade_id(c) or "test"
        points = float(nbgrader_meta(c).get("points", 0) or 0)
        try:
            calls = parse_test_cell(c.source)
        except (SyntaxError, ValueError) as exc:
            calls, error = [], f"the grader cannot read test cell {tid!r}: {exc}"
        else:
            error = None if calls else f"test cell {tid!r} calls no check the grader knows"
        plans.append((tid, points, calls, error))

    hide = course.secrets() if course else []
    answer_ids = [{"id": grade_id(c)} for c in nb.cells if is_answer(c)]

    def judged(plan, outcome: WorkerOutcome) -> TestResult:
        tid, points, calls, _ = plan
        with _JUDGE_LOCK:  # torch.fx tracing patches module globals: judge one cell at a time
            passed, message, hint, ncases = _judge_cell(tid, calls, outcome)
        return TestResult(tid, points if passed else 0.0, points, passed, message, hint, ncases)

    def alone(plan) -> TestResult:
        tid, points, calls, error = plan
        if error:
            return TestResult(tid, 0.0, points, False, error)
        skipped: list[str] = []
        while True:
            outcome = run_worker([c for c in cells if c["id"] not in skipped], _worker_calls(calls),
                                 limits=limits, hide=hide)
            # A cell of another answer that kills or hangs the worker at its top level must not cost this
            # test its points: run again without that cell.
            culprit = outcome.last_step[5:] if outcome.last_step.startswith("cell ") else ""
            own = {c.var for c in calls}
            if outcome.status == "ok" or not culprit or culprit in own or culprit in skipped \
                    or len(skipped) >= 3 or culprit == "setup" or not any(c["id"] == culprit for c in answer_ids):
                break
            skipped.append(culprit)
        result = judged(plan, outcome)
        if skipped and not result.passed:
            result.message += f" (graded without cell(s) {', '.join(skipped)}, which stopped the grader)"
        return result

    # One worker for all test cells first: a notebook's checks share its setup (and torch's import) cost.
    # If that worker dies or times out, each test cell is run again in a worker of its own, so one
    # broken function costs only its own points.
    runnable = [p for p in plans if not p[3]]
    if runnable:
        together = run_worker(cells, _worker_calls([c for p in runnable for c in p[2]]), limits=limits, hide=hide)
        if together.status == "ok":
            results, start = {}, 0
            for plan in runnable:
                n = len(plan[2])
                part = WorkerOutcome({**together.evidence, "calls": together.evidence["calls"][start:start + n]},
                                     "ok", "", together.last_step, together.seconds)
                results[plan[0]] = judged(plan, part)
                start += n
            return [results[p[0]] if not p[3] else alone(p) for p in plans]
    jobs = jobs or int(os.environ.get("FXCOURSE_JOBS", "0")) or min(2, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(alone, plans))


def check_notebook(path: str | Path, course: Course, *, visible_only: bool = False,
                   limits: Limits | None = None, jobs: int | None = None) -> Report:
    """Grade one filled-in notebook with the course's full test set (visible only without solutions/)."""
    submitted = read_notebook(path)
    assignment = identify_assignment(submitted, path, course)
    source_path, full = course.source_notebook(assignment)
    if visible_only and full:
        source_path, full = course.exercises / assignment / f"{assignment}.ipynb", False
    restored = restore(read_notebook(source_path), submitted)
    tests = grade_restored(restored.notebook, course, limits=limits, jobs=jobs)
    return Report(assignment, sum(t.points for t in tests), sum(t.max_points for t in tests), tests,
                  restored.notes, isolation_level(), full)
