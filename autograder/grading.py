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

from .core import QUIZ_CHOICES, get_check, judge_evidence
from .quizzes import judge as judge_quiz
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
    section: str | None = None       # the lesson section a wrong quiz answer points to
    explanation: str | None = None   # shown after a right answer (it gives the key away: never sent to a worker)


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
_CRASH_HINTS = {"timeout": "look for an endless loop, or work that grows too fast",
                "crashed": "the answers must not exit the interpreter or use more memory than the limit",
                "bad-evidence": "the answers must not exit the interpreter"}


def _worker_calls(calls: list[Call]) -> list[dict]:
    """What the worker is told to call: never a quiz key (the learner's code can read its job)."""
    return [{**asdict(c), "key": None, "explanation": None} for c in calls]


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
        return False, f"{outcome.detail}{where}", _CRASH_HINTS.get(outcome.status), 0
    ev = outcome.evidence
    if ev.get("tampered"):
        names = ", ".join(ev["tampered"][:5])
        return False, f"the answer cells changed what the grader relies on ({names}); results are not trusted", \
            "answers must not patch torch, builtins or the autograder", 0
    cases, quiz_message = 0, "answered"
    for call, got in zip(calls, ev["calls"]):
        evidence_list = got.get("evidence", []) if isinstance(got, dict) else []
        if call.kind == "quiz":
            result = judge_quiz(call.var, evidence_list[0] if evidence_list else None, call.key, call.choices,
                                call.section, call.explanation)
            cases += 1
            if not result.passed:
                return False, result.message, result.hint, cases
            if call.key is not None:
                quiz_message = result.message
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
        return True, quiz_message, None, cases
    return True, f"passed ({cases} case{'s' if cases != 1 else ''})", None, cases


def grade_restored(nb: NotebookNode, course: Course | None = None, *, limits: Limits | None = None,
                   jobs: int | None = None) -> list[TestResult]:
    """Grade a restored notebook (its test cells are the source's).

    One worker runs the checks of every test cell in order, saving its evidence after each. If it dies or runs
    out of time, the test it was in fails alone (or, when an answer cell's top-level code stopped it, the tests
    of that cell), and a new worker goes on with the rest, without that cell.
    """
    limits = limits or Limits(timeout=float(os.environ.get("FXCOURSE_TIMEOUT", "60")))
    hide = course.secrets() if course else []
    cells = []
    for c in nb.cells:
        if c.cell_type == "code" and not is_test(c):
            cells.append({"id": grade_id(c) or c.get("id", "cell"), "source": c.source,
                          "answer": is_answer(c), "defines": sorted(defined_names(c.source))})
    plans, results = [], {}
    for c in nb.cells:
        if not is_test(c):
            continue
        tid = grade_id(c) or "test"
        points = float(nbgrader_meta(c).get("points", 0) or 0)
        try:
            calls = parse_test_cell(c.source)
        except (SyntaxError, ValueError) as exc:
            results[tid] = TestResult(tid, 0.0, points, False, f"the grader cannot read test cell {tid!r}: {exc}")
            continue
        if not calls:
            results[tid] = TestResult(tid, 0.0, points, False, f"test cell {tid!r} calls no check the grader knows")
            continue
        plans.append((tid, points, calls))

    def judged(tid: str, points: float, calls: list[Call], outcome: WorkerOutcome) -> TestResult:
        with _JUDGE_LOCK:  # torch.fx tracing patches module globals: judge one cell at a time
            passed, message, hint, ncases = _judge_cell(tid, calls, outcome)
        return TestResult(tid, points if passed else 0.0, points, passed, message, hint, ncases)

    pending, skipped = list(plans), []
    for _ in range(len(plans) + len(cells) + 1):
        if not pending:
            break
        flat = [call for _, _, calls in pending for call in calls]
        outcome = run_worker([c for c in cells if c["id"] not in skipped], _worker_calls(flat),
                             limits=limits, hide=hide)
        done = outcome.evidence["calls"] if outcome.evidence else []
        base = dict(outcome.evidence or {"cell_errors": [], "tampered": []})
        start, rest = 0, []
        for tid, points, calls in pending:
            n = len(calls)
            if start + n <= len(done):
                part = WorkerOutcome({**base, "calls": done[start:start + n]}, "ok", "", outcome.last_step)
                results[tid] = judged(tid, points, calls, part)
            else:
                rest.append((tid, points, calls))
            start += n
        if outcome.status == "ok" or not rest:
            break
        step = outcome.last_step
        culprit = step[5:] if step.startswith("cell ") else ""
        cell = next((c for c in cells if c["id"] == culprit), None)
        if cell is not None and cell["answer"] and culprit not in skipped:
            # An answer cell's top-level code stopped the worker: its own tests fail, the others go on without it.
            skipped.append(culprit)
            own = [p for p in rest if any(call.var in cell["defines"] or call.var == culprit for call in p[2])]
            for tid, points, calls in own:
                results[tid] = TestResult(tid, 0.0, points, False, f"the cell {culprit!r} stopped the grader: "
                                          f"{outcome.detail}", _CRASH_HINTS.get(outcome.status))
            pending = [p for p in rest if p not in own]
            continue
        if step.startswith(("case ", "quiz ")) and outcome.evidence is not None:
            # The first test without evidence is the one that was running: it fails alone.
            tid, points, calls = rest[0]
            results[tid] = judged(tid, points, calls, outcome)
            pending = rest[1:]
            continue
        for tid, points, calls in rest:  # a setup cell or the worker itself failed: nothing more can be learned
            results[tid] = judged(tid, points, calls, outcome)
        break
    order = [grade_id(c) or "test" for c in nb.cells if is_test(c)]
    return [results[t] for t in order if t in results]


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
