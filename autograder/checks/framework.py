"""The check framework: a check is cases + evidence + judge, run in-process or across a process boundary.

A `Check` describes how to test one graded function once, and every entry point uses it:

* nbgrader test cells and pytest call `run_check`, which calls the learner's function in this process;
* the hardened grader calls the function in a jailed worker (`autograder.grader.jail.worker`), which returns only
  the plain *evidence* of each case, and judges that evidence here, where learner code never runs.

`cases(hidden)` builds fresh, seeded inputs (the same ones in the worker and in the judge);
`evidence(result, args)` turns what the learner's function returned into plain data (numbers, strings,
lists, dicts, tensors) and may raise `CheckFailed` when the result has the wrong type;
`judge(case, evidence)` compares the evidence with the reference and raises `CheckFailed` with a message
that says what was expected, what was found and where.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import json
import re
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import torch

from autograder.checks.argstate import args_state, state_change
from autograder.checks.keyring import judging as judging_side
from autograder.checks.errors import hint_for_error
from autograder.checks.randmodels import salted
from autograder.checks.hints import Hint, hint_of, resolve
from autograder.checks.secrecy import grading_object, hidden_cases
from autograder.checks.verdict import Verdict

__all__ = [
    "CheckFailed", "Case", "Check", "Part", "CaseResult", "Verdict", "run_cases", "run_check", "check_quiz", "get_check",
    "get_part",
    "collect_evidence", "judge_evidence", "plain", "QUIZ_CHOICES", "hidden_cases", "grading_object",
]

QUIZ_CHOICES = "ABCDE"


class CheckFailed(AssertionError):
    """A check did not pass: `message` says what was expected and found; `hint` what to try, by its id in the
    hint tables (autograder/checks/hints) or as the text `hint_of` made of it."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        hint = resolve(hint)
        super().__init__(message + (f"\nHint: {hint}" if hint else ""))
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class Case:
    """One call of the learner's function: a label for messages and a factory of fresh arguments."""

    label: str
    make: Callable[[], tuple]
    kwargs: Callable[[], dict] = field(default=dict)
    data: dict = field(default_factory=dict)  # anything the judge wants to know about the case
    # data["raises"] = "ValueError": the function must raise; its error evidence
    # ({"__raised__": type name, "message", "where", "bases"}) then goes to judge() instead of failing the case.
    salt: int = 0  # a hidden case's salt (hidden_cases): its inputs are built, run and judged under it (randmodels)
    around: Callable[[], Any] = contextlib.nullcontext  # the context it is called in: torch.no_grad, say
    # (build, change) of a case given again (given_again): the function is called on build()'s objects, then on the
    # same objects once change(*args) changed them in place; the second call is judged, against make()'s.
    again: tuple[Callable[[], tuple], Callable[..., None]] | None = None


def given_again(label: str, build: Callable[[], tuple], change: Callable[..., None], **fields: Any) -> Case:
    """A case that hands the function the same objects twice, changed in place between the calls (as by a pass):
    an answer kept from the first call, say in a cache keyed by the object or its id, is out of date."""
    def make() -> tuple:
        args = build()
        change(*args)
        return args
    return Case(label, make, again=(build, change), **fields)


@dataclass(frozen=True)
class Check:
    """How to test one graded function: its cases, how to describe a result, how to judge it."""

    function: str
    cases: Callable[[bool], list[Case]]
    evidence: Callable[[Any, tuple], Any]
    judge: Callable[[Case, Any], None]
    # "always": the function must leave its arguments as they were (modules' parameters, buffers, training
    # flags and graphs); "weights": the same except training flags (switching a model to eval mode is fine);
    # "on_raise": when it raises, it must raise before changing them; "" checks neither.
    unchanged: str = ""
    # Other graded functions this one may call, with a trusted reference of each: when a case fails with the
    # learner's own helper but passes with the reference, the failure belongs to the helper's test, not this one.
    helpers: dict = field(default_factory=dict)
    # explain_raise(case, raised) -> hint or None: what a raise on a case that must not raise says about the
    # answer, where the check knows the case better than an error's signature does (None: errors.hint_for_error).
    # `raised` is the evidence of the raise: {"__raised__": type name, "message", "where", "bases"}.
    explain_raise: Callable[[Case, dict], str | None] | None = None

    def all_cases(self, hidden: bool) -> list[Case]:
        """The visible cases, then (with `hidden`) the hidden ones: what check(hidden=True) and validation run."""
        return list(self.cases(False)) + (list(self.cases(True)) if hidden else [])


@dataclass(frozen=True)
class Part:
    """The part of a check that runs where learner code runs (the jailed worker): how to build each case's
    inputs, how to turn a result into plain evidence, what the function must leave unchanged. No judge, no
    reference, nothing the judge wants to know about a case (`Case.data` is the judge's: the worker drops it).
    An exercise's package lists its parts in `PARTS`, importable without its judges (ARCHITECTURE.md)."""

    function: str
    cases: Callable[[bool], list[Case]]
    evidence: Callable[[Any, tuple], Any]
    unchanged: str = ""

    def same_as(self, check: Check) -> bool:
        """The part is the check's own: the same cases, evidence and `unchanged` (the judge's `Check.cases` may
        add what it knows of a case to the part's, under the same labels)."""
        return self.evidence is check.evidence and self.unchanged == check.unchanged and self.function == check.function


CaseResult = Verdict   # the verdict on one case: autograder/checks/verdict.py


# ----------------------------------------------------------------------------------------- registry

def get_check(assignment: str, function: str) -> Check:
    """The check of `function` in exercise `assignment` (module autograder.checks.<assignment>)."""
    if not re.fullmatch(r"ex\d\d_[a-z0-9_]+", assignment):
        raise KeyError(f"unknown assignment {assignment!r}: expected a name like 'ex01_tracing'")
    try:
        importlib.import_module(f"autograder.checks.{assignment}")
    except ModuleNotFoundError as exc:
        raise KeyError(f"unknown assignment {assignment!r}: no check module autograder.checks.{assignment}") from exc
    checks: dict[str, Check] = judging_side(assignment).CHECKS  # KeyMissing on a student's install
    if function not in checks:
        raise KeyError(f"assignment {assignment!r} has no check for {function!r}; "
                       f"it checks {', '.join(sorted(checks))}")
    return checks[function]


def get_part(assignment: str, function: str) -> Part:
    """The worker's part of `function`'s check in exercise `assignment` (autograder.checks.<assignment>.PARTS):
    imports the exercise's models, cases and evidence, never its judges or references."""
    if not re.fullmatch(r"ex\d\d_[a-z0-9_]+", assignment):
        raise KeyError(f"unknown assignment {assignment!r}: expected a name like 'ex01_tracing'")
    parts: dict[str, Part] = importlib.import_module(f"autograder.checks.{assignment}").PARTS
    if function not in parts:
        raise KeyError(f"assignment {assignment!r} has no check for {function!r}; it checks {', '.join(sorted(parts))}")
    return parts[function]


# ------------------------------------------------------------------------------------ plain evidence

_PLAIN_SCALARS = (type(None), bool, int, float, str)


def plain(value: Any, where: str = "evidence") -> Any:
    """Check that `value` is plain data (scalars, str, lists, tuples, str-keyed dicts, dense tensors)."""
    if type(value) in _PLAIN_SCALARS:
        return value
    if type(value) is torch.Tensor or type(value) is torch.nn.Parameter:
        return value.detach().clone().contiguous() if type(value) is torch.Tensor else value.detach().clone()
    if type(value) in (list, tuple):
        return type(value)(plain(v, f"{where}[{i}]") for i, v in enumerate(value))
    if type(value) is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                raise TypeError(f"{where}: dict keys must be str, got {type(k).__name__}")
            out[k] = plain(v, f"{where}[{k!r}]")
        return out
    raise TypeError(f"{where}: {type(value).__name__} is not plain data")


def _learner_frame(filename: str) -> bool:
    """A frame of the learner's code: a cell (IPython's <ipython-input-...>, the grader's <cell ...>) or a cell
    of a Jupyter kernel (ipykernel writes each cell to /tmp/ipykernel_PID/NNN.py)."""
    return filename.startswith("<") or "/ipykernel_" in filename


def _raised(exc: BaseException) -> dict:
    tb = traceback.extract_tb(exc.__traceback__)
    line = next((f"line {fr.lineno}" + (f": {fr.line}" if fr.line else "")
                 for fr in reversed(tb) if _learner_frame(fr.filename)), "")
    return {"__raised__": type(exc).__name__, "message": str(exc)[:2000], "where": line[:300],
            "bases": [c.__name__ for c in type(exc).__mro__]}


@contextlib.contextmanager
def _quiet() -> Iterable[io.StringIO]:
    """Capture stdout, stderr and warnings of learner code: output is data, never a verdict.

    Checks run on one thread: their tensors are tiny, and on a busy machine more threads only wait.
    """
    buf = io.StringIO()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            warnings.simplefilter("ignore")
            yield buf
    finally:
        torch.set_num_threads(threads)


def collect_evidence(check: Check, fn: Any, case: Case) -> Any:
    """Call the learner's `fn` on a fresh copy of the case's inputs and return plain evidence.

    For a check with `unchanged`, the evidence is {"__value__": evidence, "__before__": args_state(args) taken
    before the call, "__after__": the same after it}; judge_evidence compares the two. For a check with
    `helpers` that the learner's namespace defines, the function runs twice, with the learner's helpers and
    with the check's references: {"__helpers__": names, "own": evidence, "reference": evidence}.
    """
    if not callable(fn):
        return {"__missing__": f"{check.function} is {type(fn).__name__}, not a function"}
    course = grading_object(fn)
    if course is not None:
        return _borrowed(check.function, f"{check.function} is {course}")
    with salted(case.salt):
        evidence = _collect_unchanged(check, fn, case)
    helpers = getattr(check, "helpers", {})   # a worker's Part has none: no reference is where learner code runs
    names = [n for n in helpers if callable(getattr(fn, "__globals__", {}).get(n))]
    if not names or _is_todo(evidence):
        return evidence
    space = fn.__globals__
    own = {n: space[n] for n in names}
    try:
        space.update({n: helpers[n] for n in names})
        with salted(case.salt):
            with_reference = _collect_unchanged(check, fn, case)
    finally:
        space.update(own)
    return {"__helpers__": names, "own": evidence, "reference": with_reference}


def _is_todo(evidence: Any) -> bool:
    return isinstance(evidence, dict) and "__todo__" in evidence


def _collect_unchanged(check: Check, fn: Any, case: Case) -> Any:
    evidence, args, before = _collect(check, fn, case)
    if _is_todo(evidence):   # the released stub: nothing ran, nothing to compare (and callers stop at the first)
        return evidence
    if check.unchanged in ("always", "weights") or (check.unchanged == "on_raise" and isinstance(evidence, dict)
                                       and "__raised__" in evidence and "raises" in case.data):
        with _quiet():
            try:
                after = plain(args_state(args))
            except Exception as exc:
                after = f"{type(exc).__name__}: {exc}"[:300]
        return {"__value__": evidence, "__before__": before, "__after__": after}
    return evidence


def _collect(check: Check, fn: Any, case: Case) -> tuple[Any, tuple, Any]:
    """(evidence, the arguments the function was called with, their args_state before the call or None)."""
    with _quiet():
        args = case.make() if case.again is None else case.again[0]()
        kwargs, first, returned = case.kwargs(), None, None   # given again: the first call's value and result
        for turn in range(1 if case.again is None else 2):
            if turn:   # given again: the same objects, changed in place, a second time (the call judged)
                try:
                    case.again[1](*args)
                except Exception as exc:   # the first call left them so that the change cannot be made
                    return {"__failed__": f"{check.function}'s first call left its arguments so that the grader "
                                          f"could not change them for the second ({type(exc).__name__}): it must "
                                          "leave them as they were", "hint": None}, args, before
            try:
                before = plain(args_state(args)) if check.unchanged else None
            except Exception:   # arguments the snapshot cannot describe: nothing to compare, never a crash
                before = None
            try:
                with case.around():
                    result = fn(*args, **kwargs)
            except NotImplementedError as exc:  # the released stub raises it bare; torch raises it with a message
                return (_raised(exc) if str(exc) else {"__todo__": ""}), args, before
            except BaseException as exc:  # the learner's error (even SystemExit) is evidence, not a crash
                return _raised(exc), args, before
            course = grading_object(result)
            if course is not None:
                return _borrowed(check.function, f"{check.function} returned {course}"), args, before
            evidence, value = _evidence_of(check, result, args), _as_text(result) if case.again else None
            if not turn:
                first, returned = value, result
        if case.again is None:
            return evidence, args, before
        again = (first is not None and first == value) or (   # the same value, or the very object again
            returned is result and not any(result is a for a in args))
        return {"__again__": again, "__second__": evidence}, args, before


def _as_text(result: Any) -> str | None:
    """A value the function returned as JSON text, taken at once (a cache may hand back the same list, changed
    later), or None where it holds what JSON cannot hold (tensors, modules)."""
    try:
        return json.dumps(plain(result), sort_keys=True)
    except Exception:
        return None


def _evidence_of(check: Check, result: Any, args: tuple) -> Any:
    try:
        return plain(check.evidence(result, args))
    except CheckFailed as exc:
        return {"__failed__": exc.message, "hint": None if exc.hint is None else str(exc.hint),
                "hint_id": getattr(exc.hint, "id", None)}
    except Exception as exc:
        return {"__failed__": f"could not inspect what {check.function} returned: "
                              f"{type(exc).__name__}: {str(exc)[:500]}", "hint": None}


def _borrowed(function: str, what: str) -> dict:
    """The evidence of an answer that hands over the course's own grading code: it earns nothing."""
    return {"__failed__": f"{what}, the course's own grading code: an answer that is, or hands back, the grader's "
                          "own functions or records earns nothing", "hint": f"write {function} yourself"}


def _signature_hint(name: str, raised: dict) -> str | None:
    """The hint for a graded function whose own signature refused a call the task text allows (a renamed or
    keyword-only parameter): Python's TypeError then names the function itself."""
    if raised["__raised__"] == "TypeError" and re.match(
            rf"{re.escape(name)}\(\) (takes \d+ positional|got an unexpected keyword argument|missing \d+ required)",
            raised["message"]):
        return hint_of("shared.keep_signature_task_text_gives", name=name)
    return None


def judge_evidence(check: Check, case: Case, evidence: Any) -> CaseResult:
    """Judge one case's evidence, under the case's salt; never runs learner code."""
    with salted(case.salt):
        return _judge_evidence(check, case, evidence)


def _judge_evidence(check: Check, case: Case, evidence: Any) -> CaseResult:
    name, label = check.function, case.label
    if isinstance(evidence, dict) and "__again__" in evidence and "__second__" in evidence:
        result = _judge_evidence(check, case, evidence["__second__"])
        if result.passed or evidence["__again__"] is not True:   # True: the same value as from the first call
            return result
        return CaseResult(label, False, f"{result.message}; and that is what {name} gave back the first time, "
                                        "before the objects were changed", "shared.answer_for_objects_as_they_are_now")
    if isinstance(evidence, dict) and "__helpers__" in evidence and "own" in evidence:
        own = _judge_evidence(check, case, evidence["own"])
        if own.passed:
            return own
        reference = _judge_evidence(check, case, evidence["reference"])
        if not reference.passed:
            return reference   # wrong even with the course's helpers: that failure is this function's own
        helpers = " and ".join(str(h) for h in evidence["__helpers__"])
        return CaseResult(label, True, f"passed with the course's {helpers}; with yours, {name} fails on {label}: "
                                       f"{own.message} (that costs points in the test of {helpers} only)",
                          hint_of("shared.fix_first_own_test_says", helpers=helpers))
    if isinstance(evidence, dict) and "__value__" in evidence and "__after__" in evidence:
        result = _judge_evidence(check, case, evidence["__value__"])
        with _quiet():
            try:
                change = None if evidence["__before__"] is None else state_change(
                    evidence["__before__"], evidence["__after__"], modes=check.unchanged != "weights")
            except Exception as exc:
                change = f"the grader could not compare the arguments before and after ({type(exc).__name__})"
        if change is None:
            return result
        if not result.passed:
            return result
        if isinstance(evidence["__value__"], dict) and "__raised__" in evidence["__value__"]:
            return CaseResult(label, False, f"{name} on {label}: it raised as it should, but only after changing "
                                            f"its input: {change}",
                              "shared.check_everything_makes_call_invalid")
        return CaseResult(label, False, f"{name} on {label}: {name} must leave its inputs as they were, but "
                                        f"{change}",
                          "shared.do_not_switch_caller_s" if "the mode of" in change else
                          "shared.remove_every_hook_you_register" if "hooks were left" in change else
                          "shared.leave_requires_grad_caller_s" if "requires grad" in change else
                          "shared.leave_recompile_to_caller" if "generated code" in change else
                          "shared.work_copy_copy_deepcopy_only")
    if isinstance(evidence, dict) and len(evidence) and next(iter(evidence)).startswith("__"):
        kind = next(iter(evidence))
        if kind == "__missing__":
            return CaseResult(label, False, f"{name} is not defined: {evidence[kind]}",
                              hint_of("shared.run_cell_defines_keep_name", name=name))
        if kind == "__todo__":
            return CaseResult(label, False, f"{name} is not implemented yet (it raises NotImplementedError)",
                              hint_of("shared.replace_raise_notimplementederror_your_code", name=name))
        if kind == "__raised__" and "raises" not in case.data:
            where = f" ({evidence['where']})" if evidence.get("where") else ""
            msg = f"{name} raised {evidence['__raised__']} on {label}{where}: {evidence['message']}"
            hint = None
            if check.explain_raise is not None:
                try:
                    hint = check.explain_raise(case, evidence)
                except Exception:
                    hint = None
            return CaseResult(label, False, msg, hint or _signature_hint(name, evidence) or hint_for_error(
                evidence["__raised__"], evidence["message"], evidence.get("where") or None))
        if kind == "__failed__":
            hint = evidence.get("hint")   # its text, made where the answer ran: never read as an id
            return CaseResult(label, False, f"{name} on {label}: {evidence['__failed__']}",
                              Hint(str(hint), evidence.get("hint_id")) if hint is not None else None)
        if kind == "__crashed__":
            return CaseResult(label, False, f"{name} on {label}: {evidence['__crashed__']}", None)
    try:
        with _quiet():
            check.judge(case, evidence)
    except CheckFailed as exc:
        return CaseResult(label, False, f"{name} on {label}: {exc.message}", exc.hint)
    except Exception as exc:  # evidence of an unexpected shape: a failed case, never a crashed grader
        return CaseResult(label, False, f"{name} on {label}: the grader could not make sense of what "
                                        f"{name} returned ({type(exc).__name__})", None)
    return CaseResult(label, True, "passed")


# ------------------------------------------------------------------------------------ in-process runs

class CheckResults(list):
    """The case results of one run_check; shows nothing when it is a cell's last value (the ✔ line says it)."""

    def _ipython_display_(self) -> None:
        pass


def run_cases(check: Check, fn: Any, cases: Iterable[Case], *, stop_at_first: bool = True) -> list[CaseResult]:
    """Call the learner's `fn` on each case in this process and judge it: the one in-process runner, used by
    test cells (`run_check`), `check()` in a notebook and the validation of mutants and alternatives.

    With `stop_at_first`, the run ends at the first failing case. A released stub (NotImplementedError) always
    ends it: the other cases would say the same. A fault of the check itself (building a case's inputs, or a
    bug in its judge) is a failed case that says so, never a traceback in the learner's notebook.
    """
    results = []
    for case in cases:
        evidence: Any = None
        try:
            evidence = collect_evidence(check, fn, case)
            result = judge_evidence(check, case, evidence)
        except Exception as exc:
            result = CaseResult(case.label, False, f"the check itself failed on {case.label}: "
                                                   f"{type(exc).__name__}: {exc}", None)
        results.append(result)
        if (stop_at_first and not result.passed) or _is_todo(evidence):
            break
    return results


def run_check(assignment: str, function: str, fn: Any, hidden: bool = False) -> CheckResults:
    """Check the learner's `fn` in this process; raise CheckFailed on the first failing case.

    This is what nbgrader test cells call. `hidden=True` runs the hidden cases instead of the visible ones.
    """
    __tracebackhide__ = True
    check = get_check(assignment, function)
    results = CheckResults(run_cases(check, fn, check.cases(hidden)))
    failed = next((r for r in results if not r.passed), None)
    if failed is not None:
        raise CheckFailed(failed.message, failed.hint)
    kind = "hidden" if hidden else "visible"
    print(f"\u2714 {function}: {len(results)} {kind} case(s) passed")
    return results


def check_quiz(question: str, answer: Any, key: str | None = None, choices: str = QUIZ_CHOICES) -> None:
    """Check a quiz answer: one capital letter among `choices`; with `key`, the right one.

    Messages never contain the key.
    """
    __tracebackhide__ = True
    result = judge_quiz(question, quiz_evidence(answer), key, choices)
    if not result.passed:
        raise CheckFailed(result.message, result.hint)
    print(f"\u2714 {question}: " + ("correct" if key else "answered"))


def quiz_evidence(answer: Any) -> Any:
    """Plain evidence of a quiz answer: the string itself, or the name of its type. Runs none of the answer's code
    (the name is read past any metaclass property), so the grader's worker saves the quizzes' evidence at once."""
    if type(answer) is str:
        return answer[:20]
    return {"__type__": _TYPE_NAME(type(answer))}


_TYPE_NAME = type.__dict__["__name__"].__get__  # a class's own name, whatever its metaclass defines


def judge_quiz(question: str, evidence: Any, key: str | None, choices: str = QUIZ_CHOICES) -> CaseResult:
    if isinstance(evidence, dict):
        kind = evidence.get("__type__", "nothing")
        if kind == "NotImplementedError":
            return CaseResult(question, False, f"{question} is not answered yet",
                              hint_of("shared.assign_one_capital_letter_example", question=question))
        return CaseResult(question, False, f"{question} must be one capital letter in a string, got {kind}",
                          hint_of("shared.write_quotes_using_one", question=question, choices=", ".join(choices)))
    if evidence not in tuple(choices):
        return CaseResult(question, False, f"{question} = {evidence!r} is not one of {', '.join(choices)}",
                          "shared.answer_one_capital_letter_quotes")
    if key is not None and evidence != key:
        return CaseResult(question, False, f"{question} = {evidence!r} is not the right answer",
                          "shared.reread_lesson_section_question_about")
    return CaseResult(question, True, "passed")
