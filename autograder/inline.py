"""Check your answers from inside an exercise notebook: `check()`, `hint()` and `progress()`.

    from autograder.inline import check, hint
    check()                  # every graded function and quiz question of this notebook
    check("node_summary")    # one function; check("q1") one quiz question
    hint("node_summary")     # the next hint for it: one more each time you ask

`check` runs the course's own checks (autograder.checks.framework: get_check, run_cases; quiz answers through
autograder.coursedata.quizzes), the ones `fxcourse check` and the graders use, on the functions this kernel has defined. It runs
here, in the notebook's kernel: it is quick, and it is not hardened (an endless loop needs Kernel > Interrupt).
It applies the visible cases; `fxcourse check` runs the notebook in a jailed worker with the hidden tests too,
and its score is the one that counts. Quiz answers are judged where the course carries its answer keys
(solutions/quizzes.json, as `fxcourse check` uses solutions/): a right answer shows the explanation, a wrong one
says so and names the lesson section to reread, never the key. The released course has no keys: there, quiz
answers are checked for their format only, and the lesson section is named all the same.
"""
from __future__ import annotations

import ast
import html
import json
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from autograder.checks.framework import QUIZ_CHOICES, get_check, quiz_evidence
from autograder.checks.keyring import KeyMissing
from autograder.coursedata.exercises import EXERCISES
from autograder.coursedata.quizzes import judge as _judge_quiz, lookup as _quiz_lookup
from autograder.learner.hints import HintView, code_html, hints_for, next_hint

__all__ = ["check", "hint", "progress", "function_index", "assignment_of", "quiz_questions", "hints_for",
           "CheckRow", "InlineReport", "HintView", "reset_hints"]

# The cells every exercise notebook ends with (before its summary), in solutions/ and so in the release: a plain
# markdown cell and a plain code cell, without nbgrader metadata. The grader's worker skips check() (_in_grader).
CHECK_CELL_MARKDOWN = """## Check your work

Run the cell below at any time. It checks every function and quiz answer you have run so far, here in this
kernel: the visible cases, and the quiz answers for their format only. `check("name")` checks one function,
`hint("name")` gives its next hint (one more each time you ask). The score that counts comes from
`fxcourse check`, which also runs the hidden tests."""
CHECK_CELL_CODE = """from autograder.inline import check, hint

check()"""
_QUIZ_VAR = re.compile(r"q\d+")
_MISSING = object()


# ----------------------------------------------------------------------------------- which exercise

def function_index() -> dict[str, tuple[str, ...]]:
    """{assignment: its graded functions, in notebook order}, from autograder/coursedata/exercises.py."""
    return {e.id: e.functions for e in EXERCISES}


def assignment_of(function: str) -> str | None:
    """The exercise that grades `function`, or None."""
    return next((a for a, fns in function_index().items() if function in fns), None)


def _user_namespace(namespace: dict | None = None) -> dict:
    """The namespace the learner's cells run in: IPython's user_ns, else __main__'s globals."""
    if namespace is not None:
        return namespace
    try:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None:
            return shell.user_ns
    except ImportError:
        pass
    import __main__

    return vars(__main__)


def _session_notebook(ns: dict) -> Path | None:
    """The notebook this kernel runs, when the front end says so (JupyterLab/Notebook 7, VS Code)."""
    for value in (ns.get("__session__"), ns.get("__vsc_ipynb_file__"), os.environ.get("JPY_SESSION_NAME")):
        if isinstance(value, str) and value.endswith(".ipynb"):
            return Path(value)
    return None


def _resolve_assignment(ns: dict, names: Iterable[str] = (), explicit: str | None = None) -> str:
    index = function_index()
    if explicit:
        if explicit not in index:
            raise LookupError(f"unknown exercise {explicit!r}; expected one of {', '.join(index)}")
        return explicit
    for name in names:
        for assignment, functions in index.items():
            if name in functions:
                return assignment
    session = _session_notebook(ns)
    if session is not None and session.stem in index:
        return session.stem
    # The exercise whose graded functions this kernel defines: stubs count, so running the cells is enough.
    scores = {a: sum(callable(ns.get(f)) for f in fns) for a, fns in index.items()}
    ranked = sorted(scores.values(), reverse=True)
    if ranked and ranked[0] > 0 and (len(ranked) == 1 or ranked[0] > ranked[1]):
        return max(scores, key=scores.__getitem__)
    raise LookupError("cannot tell which exercise this notebook is: run its cells first, or name it, "
                      "for example check(assignment='ex01_tracing')")


def _release_notebook(assignment: str, ns: dict) -> Path | None:
    """The learner's copy of the exercise (its test cells say which quiz questions there are and their choices)."""
    from autograder.course.root import find_course

    session = _session_notebook(ns)
    candidates = []
    if session is not None and session.is_absolute():
        candidates.append(session)
    candidates.append(find_course(Path.cwd()).exercises / assignment / f"{assignment}.ipynb")
    for path in candidates:
        # Only released notebooks: the instructor source under solutions/ carries the keys.
        if path.is_file() and path.stem == assignment and "solutions" not in path.resolve().parts:
            return path
    return None


def _nbgrader(cell: dict) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {}) if isinstance(cell.get("metadata"), dict) else {}
    return meta if isinstance(meta, dict) else {}


def _strip_hidden(source: str) -> str:
    """A test cell without its hidden-tests regions (as autograder.course.notebook.strip_hidden, without importing
    nbformat: its import can take seconds, and a kernel should not pay that for check())."""
    out, inside = [], False
    for line in source.splitlines():
        if line.strip() == "### BEGIN HIDDEN TESTS":
            inside = True
        elif line.strip() == "### END HIDDEN TESTS":
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


def _quiz_calls(source: str) -> list[tuple[str, str]]:
    """(variable, choices) of each check_quiz(...) call of a test cell, hidden regions left out, keys never read."""
    return [(var, letters) for var, letters, _ in _quiz_call_details(source)]


def _quiz_call_details(source: str) -> list[tuple[str, str, str | None]]:
    """(variable, choices, lesson section) of each visible check_quiz(...) call of a test cell."""
    try:
        tree = ast.parse(_strip_hidden(source))
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None))
                == "check_quiz" and len(node.args) >= 2 and isinstance(node.args[1], ast.Name)):
            continue
        choices = next((k.value for k in node.keywords if k.arg == "choices"), None)
        try:
            letters = ast.literal_eval(choices) if choices is not None else QUIZ_CHOICES
        except ValueError:
            letters = QUIZ_CHOICES
        section = next((k.value.value for k in node.keywords if k.arg == "section"
                        and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)), None)
        found.append((node.args[1].id, letters if isinstance(letters, str) else QUIZ_CHOICES, section))
    return found


def quiz_sections(assignment: str, namespace: dict | None = None) -> dict[str, str]:
    """{variable: the lesson section its question is about}, from the released notebook's test cells."""
    path = _release_notebook(assignment, _user_namespace(namespace))
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", []) if path is not None else []
    except (OSError, ValueError, AttributeError):
        cells = []
    out: dict[str, str] = {}
    for cell in cells if isinstance(cells, list) else []:
        if isinstance(cell, dict) and cell.get("cell_type") == "code" and _nbgrader(cell).get("grade"):
            source = cell.get("source", "")
            for var, _, section in _quiz_call_details("".join(source) if isinstance(source, list) else str(source)):
                if section:
                    out[var] = section
    return out


def _course_root(ns: dict) -> Path:
    from autograder.course.root import find_course

    session = _session_notebook(ns)
    return find_course(session if session is not None and session.is_absolute() else Path.cwd()).root


def quiz_questions(assignment: str, namespace: dict | None = None) -> list[tuple[str, str]]:
    """(variable, allowed letters) of each quiz question of the exercise, in order.

    Read from the released notebook's test cells (plain JSON, hidden regions stripped, keys never read);
    without it, from the kernel's variables q1, q2, ...
    """
    ns = _user_namespace(namespace)
    path = _release_notebook(assignment, ns)
    found: dict[str, str] = {}
    cells = []
    if path is not None:
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError, AttributeError):
            cells = []
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        meta, source = _nbgrader(cell), cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        gid = meta.get("grade_id") if isinstance(meta.get("grade_id"), str) else ""
        if meta.get("grade") and not meta.get("solution"):
            for var, letters in _quiz_calls(source):
                if _QUIZ_VAR.fullmatch(var):
                    found[var] = letters  # the test cell knows the allowed letters
        elif meta.get("solution") and gid.startswith("quiz_") and _QUIZ_VAR.fullmatch(gid[5:]):
            found.setdefault(gid[5:], QUIZ_CHOICES)
    if not found:
        found = {k: QUIZ_CHOICES for k in ns if _QUIZ_VAR.fullmatch(k)}
    return sorted(found.items(), key=lambda kv: int(kv[0][1:]))


# -------------------------------------------------------------------------------------------- hints

_SHOWN: dict[tuple[str, str], int] = {}  # (assignment, function) -> hints shown in this kernel session


def reset_hints() -> None:
    """Forget which hints this kernel session has shown."""
    _SHOWN.clear()


def hint(function: str | None = None, *, assignment: str | None = None, namespace: dict | None = None) -> HintView:
    """The next hint for `function`, one more each call; without a name, for the first function that fails."""
    ns = _user_namespace(namespace)
    try:
        assignment = _resolve_assignment(ns, [function] if function else [], assignment)
    except LookupError as exc:
        return HintView("", function or "", 0, 0, str(exc))
    functions = function_index().get(assignment, ())
    if function is None:
        failing = [row.name for row in _check_rows(assignment, functions, [], ns, hidden=False) if not row.passed]
        if not failing:
            return HintView(assignment, "", 0, 0,
                            f"Every function of {assignment} passes its visible checks: no hint needed.")
        function = failing[0]
    elif function not in functions:
        return HintView(assignment, function, 0, 0,
                        f"{assignment} has no graded function {function!r}; hints exist for "
                        f"{', '.join(functions)}")
    key = (assignment, function)
    view = next_hint(assignment, function, _SHOWN.get(key, 0))
    if view.total:
        _SHOWN[key] = min(_SHOWN.get(key, 0) + 1, view.total)
    return view


# -------------------------------------------------------------------------------------------- check

@dataclass
class CheckRow:
    """The result of one graded function or quiz question, checked in this kernel."""

    name: str
    kind: str              # "function" or "quiz"
    passed: bool
    cases_passed: int
    cases: int
    message: str
    hint: str | None = None
    seconds: float = 0.0
    more_hints: int = 0    # progressive hints not yet shown in this kernel session


@dataclass
class InlineReport:
    """What `check()` found: one row per function and quiz question; shown as a table in Jupyter, text elsewhere."""

    assignment: str
    rows: list[CheckRow]
    hidden: bool = False
    note: str = ""         # set when nothing was checked, saying why

    @property
    def passed(self) -> bool:
        return bool(self.rows) and all(r.passed for r in self.rows)

    def __bool__(self) -> bool:
        return self.passed

    def _headline(self) -> str:
        ok = sum(r.passed for r in self.rows)
        cases = "visible and hidden cases" if self.hidden else "visible cases"
        return (f"{self.assignment}: {ok} of {len(self.rows)} checks pass ({cases}, run in this kernel; "
                f"the score that counts comes from `fxcourse check`)")

    def __str__(self) -> str:
        if self.note:
            return self.note
        width = max((len(r.name) for r in self.rows), default=4)
        out = [self._headline()]
        for r in self.rows:
            mark = "\u2714" if r.passed else "\u2718"
            cases = f"{r.cases_passed}/{r.cases} cases" if r.kind == "function" else "quiz"
            out.append(f"  {mark} {r.name:<{width}}  {cases:<11}  {r.message}")
            pad = " " * (width + 19)
            if not r.passed and r.hint:
                out.append(f"{pad}Try: {r.hint}")
            if not r.passed and r.more_hints:
                out.append(f"{pad}Stuck? hint({r.name!r}) gives a hint ({r.more_hints} left)")
        return "\n".join(out)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        if self.note:
            return f"<div class='fxcourse-check' data-passed='false'>{code_html(self.note)}</div>"
        rows = []
        for r in self.rows:
            color = "#2e7d32" if r.passed else "#c62828"
            mark = "\u2714" if r.passed else "\u2718"
            cases = f"{r.cases_passed}/{r.cases}" if r.kind == "function" else "quiz"
            extra = ""
            if not r.passed and r.hint:
                extra += f"<div><i>Try:</i> {code_html(r.hint)}</div>"
            if not r.passed and r.more_hints:
                extra += (f"<div style='opacity:.75'>Stuck? <code>hint({html.escape(repr(r.name))})</code> "
                          f"gives a hint ({r.more_hints} left)</div>")
            rows.append(
                f"<tr class='fxcourse-row' data-check='{html.escape(r.name)}' "
                f"data-passed='{str(r.passed).lower()}'>"
                f"<td style='color:{color};font-weight:bold;text-align:center'>{mark}</td>"
                f"<td style='text-align:left'><code>{html.escape(r.name)}</code></td>"
                f"<td style='text-align:right'>{cases}</td>"
                f"<td style='text-align:left'>{code_html(r.message)}{extra}</td></tr>")
        return (f"<div class='fxcourse-check' data-assignment='{html.escape(self.assignment)}' "
                f"data-passed='{str(self.passed).lower()}'>"
                f"<p style='margin:2px 0'><b>{html.escape(self._headline().split(':')[0])}</b>:"
                f"{code_html(self._headline().split(':', 1)[1])}</p>"
                "<table><thead><tr><th></th><th style='text-align:left'>check</th><th>cases</th>"
                "<th style='text-align:left'>result</th></tr></thead><tbody>"
                + "".join(rows) + "</tbody></table></div>")


def _run_function(assignment: str, function: str, fn: Any, hidden: bool) -> CheckRow:
    start = time.perf_counter()
    left = len(hints_for(assignment, function)) - _SHOWN.get((assignment, function), 0)
    try:
        check_ = get_check(assignment, function)
    except KeyMissing:  # a student's install: the course's judge service judges the visible cases
        return _run_remote(assignment, function, fn, hidden, left)
    cases = check_.all_cases(hidden)
    if fn is _MISSING:
        return CheckRow(function, "function", False, 0, len(cases), f"{function} is not defined in this kernel yet",
                        f"run the cell that defines {function} (and the setup cell above it)", 0.0, left)
    from autograder.checks.framework import run_cases
    results = run_cases(check_, fn, cases, stop_at_first=False)
    return _row(function, len(cases), results, time.perf_counter() - start, left)


def _run_remote(assignment: str, function: str, fn: Any, hidden: bool, left: int) -> CheckRow:
    """_run_function where this install has no judge side: the visible cases run here, the service judges them."""
    from autograder.checks import remote
    from autograder.checks.framework import get_part

    start = time.perf_counter()
    cases = len(get_part(assignment, function).cases(False))
    if fn is _MISSING:
        return CheckRow(function, "function", False, 0, cases, f"{function} is not defined in this kernel yet",
                        f"run the cell that defines {function} (and the setup cell above it)", 0.0, left)
    if hidden:
        return CheckRow(function, "function", False, 0, cases, "hidden cases are judged only by the instructor's "
                        "grader, and this install has no judge side", "run check() without hidden=True", 0.0, left)
    if not remote.configured():
        return CheckRow(function, "function", False, 0, cases, f"{function} cannot be checked here: "
                        f"{remote.unreachable(assignment)}", f"ask the course's staff: set {remote.URL_ENV} to the "
                        "course's judge service", 0.0, left)
    try:
        results = remote.run_cases(assignment, function, fn, stop_at_first=False)
    except remote.ServiceError as exc:
        return CheckRow(function, "function", False, 0, cases, f"{function} could not be checked: {exc}",
                        "try again; if it persists, tell the course's staff", 0.0, left)
    return _row(function, cases, results, time.perf_counter() - start, left)


def _row(function: str, cases: int, results: list, seconds: float, left: int) -> CheckRow:
    passed = sum(r.passed for r in results)
    first = next((r for r in results if not r.passed), None)
    if first is None:
        return CheckRow(function, "function", True, passed, cases,
                        f"passed ({cases} case{'s' if cases != 1 else ''})", None, seconds, left)
    return CheckRow(function, "function", False, passed, cases, first.message, first.hint, seconds, left)


def _run_quiz(var: str, choices: str, ns: dict, assignment: str = "", sections: dict | None = None) -> CheckRow:
    # An unanswered quiz cell raises NotImplementedError and leaves its variable undefined: same message.
    evidence = quiz_evidence(ns[var]) if var in ns else {"__type__": "NotImplementedError"}
    data = _quiz_lookup(_course_root(ns), assignment, var) if assignment else None
    if data is not None:  # the course carries its keys (solutions/): judged as the grader judges it
        result = _judge_quiz(var, evidence, data["key"], choices, data["section"], data["explanation"])
        return CheckRow(var, "quiz", result.passed, int(result.passed), 1, result.message, result.hint)
    result = _judge_quiz(var, evidence, None, choices)  # no key here: format only
    section = (sections or {}).get(var)
    message = "answered (format only: this copy of the course has no answer key; the grader knows it" + (
        f"; the question is about {section})" if section else ")")
    return CheckRow(var, "quiz", result.passed, int(result.passed), 1,
                    message if result.passed else result.message, result.hint)


def _check_rows(assignment: str, functions: Iterable[str], quiz: list[tuple[str, str]], ns: dict,
                hidden: bool) -> list[CheckRow]:
    rows = [_run_function(assignment, f, ns.get(f, _MISSING), hidden) for f in functions]
    sections = quiz_sections(assignment, ns) if quiz else {}
    rows += [_run_quiz(var, choices, ns, assignment, sections) for var, choices in quiz]
    return rows


def _in_grader() -> bool:
    """True inside the grader's jailed worker, which runs every code cell of a notebook: a check() cell there
    would only repeat, unhardened, what the grader does. The worker says so in its environment before the first
    cell, whether the fork server forked it or it started fresh (where __main__ is the fork server's module, or
    IPython's, its name tells nothing)."""
    return os.environ.get("FXCOURSE_GRADING") == "1"  # autograder.grader.jail.worker.GRADING_ENV


def check(*names: str, assignment: str | None = None, hidden: bool = False,
          namespace: dict | None = None) -> InlineReport:
    """Check graded functions and quiz answers of this notebook, here in the kernel, and show the result.

    `check()` checks every graded function and quiz question; `check("node_summary", "q1")` only those.
    `hidden=True` also runs the cases the grader adds. The exercise is found from the function names, the
    notebook's name or the functions this kernel defines; `assignment="ex01_tracing"` names it.
    """
    if namespace is None and _in_grader():
        return InlineReport(assignment or "", [], hidden, "check() does nothing while grading: the grader runs "
                                                          "the test cells itself")
    ns = _user_namespace(namespace)
    try:
        assignment = _resolve_assignment(ns, names, assignment)
    except LookupError as exc:
        return InlineReport("", [], hidden, str(exc))
    functions = function_index()[assignment]
    if not names:
        return InlineReport(assignment, _check_rows(assignment, functions, quiz_questions(assignment, ns), ns,
                                                    hidden), hidden)
    quiz = dict(quiz_questions(assignment, ns))
    rows = []
    for name in names:
        if name in functions:
            rows += _check_rows(assignment, [name], [], ns, hidden)
        elif _QUIZ_VAR.fullmatch(name):
            rows += _check_rows(assignment, [], [(name, quiz.get(name, QUIZ_CHOICES))], ns, hidden)
        else:
            known = ", ".join([*functions, *quiz]) or "(none)"
            rows.append(CheckRow(name, "function", False, 0, 0,
                                 f"{assignment} has no graded function or quiz question {name!r}; it has {known}"))
    return InlineReport(assignment, rows, hidden)


# ----------------------------------------------------------------------------------------- progress

def progress(course: str | Path | None = None, *, visible_only: bool = False, quiet: bool = False):
    """Grade every exercise working copy of the course (a jailed worker each, about 5-10 s per notebook)
    and show the result as a picture and a table."""
    from autograder.course.root import find_course
    from autograder.learner.progress import ProgressView, collect

    ns = _user_namespace()
    session = _session_notebook(ns)
    start = session if session is not None and session.is_absolute() else Path.cwd()
    found = find_course(start, course)
    report = collect(found, visible_only=visible_only, log=None if quiet else print)
    return ProgressView(report)

