"""Grade a notebook: restore it on the source, run each test cell's checks in a jailed worker, judge here.

The pipeline, in order (each step needs the one before):
1. read    - parse the submission with clear errors (autograder.course.notebook.read_notebook);
2. assign  - decide which assignment it is (autograder.course.plan.identify_assignment);
3. restore - rebuild it on the instructor source, taking only answer cells (autograder.course.notebook.restore);
4. plan    - read which checks each source test cell calls (autograder.course.plan.parse_test_cell);
5. probe   - run the setup and answer cells and call the functions in a worker (autograder.grader.jail.sandbox);
6. judge   - load the evidence and compare it with the references (autograder.checks.framework.judge_evidence) in a judge
             process of the grader's own, under its own CPU-time and memory limits (_Judge); learner code never
             runs there, and evidence that breaks a limit fails its test, not the grader.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
import unicodedata
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from nbformat.notebooknode import NotebookNode

from autograder.checks import keyring
from autograder.checks.hints import hint_of
from autograder.checks.verdict import Verdict
from autograder.course.root import Course, package_first
from autograder.course.notebook import (NotebookError, defined_names, grade_id, is_answer, is_test, nbgrader_meta,
                                        read_notebook, restore)
from autograder.grader.jail import forkserver
from autograder.course.plan import Call, identify_assignment, parse_test_cell
from autograder.grader.jail.sandbox import Limits, WorkerOutcome, isolation_level, run_worker
from autograder.grader.engine.helperblame import blame, first_failure
from autograder.grader.engine.secret import call_salt, course_secret
from autograder.grader.jail.worker import SCRATCH_FULL_EXIT

__all__ = ["TestResult", "Verdict", "Report", "grade_restored", "check_notebook", "clean_text", "MAX_MESSAGE"]

MAX_MESSAGE = 2000  # characters of one test's message (and of its hint) as shown to anyone


def clean_text(text: Any, limit: int = MAX_MESSAGE) -> str:
    """Text from (or built from) learner input, safe to show in a terminal or an HTML page: control and
    format characters (CR, ESC, backspace, bidi overrides, newlines...) written as escapes, and at most
    `limit` characters, with a note saying how much was cut."""
    text = str(text)
    cut = 0
    if len(text) > 4 * limit:  # escaping can only lengthen it: cut the raw text first
        cut, text = len(text) - 4 * limit, text[:4 * limit]
    out = []
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co"):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(ch)
    escaped = "".join(out)
    if len(escaped) > limit:
        cut += len(escaped) - limit
        escaped = escaped[:limit]
    return escaped + (f" [... {cut} more characters cut]" if cut else "")


TestResult = Verdict   # a test cell's verdict, scored: autograder/checks/verdict.py


@dataclass
class Report:
    notebook: str
    score: float
    max_score: float
    tests: list[Verdict]
    notes: list[str] = field(default_factory=list)
    isolation: str = ""
    full_tests: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"notebook": self.notebook, "score": self.score, "max_score": self.max_score,
                "tests": [{"id": t.id, "points": t.points, "max_points": t.max_points, "passed": t.passed,
                           "message": t.line} for t in self.tests],
                "notes": self.notes, "isolation": self.isolation, "hidden_tests_applied": self.full_tests}


# ---------------------------------------------------------------------------------- probe + judge

_CRASH_HINTS = {"timeout": "shared.look_endless_loop_work_grows",
                "crashed": "shared.answers_must_not_exit_interpreter",
                "scratch-full": "shared.write_fewer_smaller_files_every",
                "bad-evidence": "shared.answers_must_not_exit_interpreter_2"}


def too_long() -> str:
    """Why a submission whose grading went past its limit is not graded."""
    seconds = Limits.from_env().submission_wall()
    return f"grading took longer than {seconds:g} s and was stopped (FXCOURSE_SUBMISSION_TIMEOUT)"


@dataclass(frozen=True)
class _Until(Limits):
    """`Limits` whose wall-clock limit also ends at `until` (a time.monotonic()): what is left of one submission's
    time, so that a worker that sleeps is stopped there rather than at its own, longer limit."""

    until: float = float("inf")

    @property
    def wall(self) -> float:
        return max(0.0, min(super().wall, self.until - time.monotonic()))


def _name_a_full_scratch(outcome: WorkerOutcome, limits: Limits) -> None:
    """A worker that stopped because the answers' files filled its scratch folder (worker.SCRATCH_FULL_EXIT) is
    said to have done so, with the limit."""
    if outcome.status == "crashed" and outcome.detail == f"the process exited with code {SCRATCH_FULL_EXIT}":
        outcome.status = "scratch-full"
        outcome.detail = f"the files it wrote filled the scratch folder ({limits.scratch / 2**20:g} MiB in all)"


def _worker_calls(calls: list[Call], secret: bytes = b"") -> list[dict]:
    """What the worker is told to call: never a quiz key (the learner's code can read its job), never the course
    secret: a hidden call's salt alone (secret.call_salt), which its cases are built under."""
    return [{**asdict(c), "key": None, "explanation": None,
             "salt": call_salt(secret, c.assignment, c.function) if c.hidden and c.kind == "check" else 0}
            for c in calls]


def _message_for_missing(var: str, outcome: WorkerOutcome) -> str | None:
    for err in (outcome.evidence or {}).get("cell_errors", []):
        if err["cell"] == var or var in err.get("defines", []):
            return f"the cell defining {var} raised {err['error']}"
    return None


def _judge_cell(test_id: str, calls: list[Call], outcome: WorkerOutcome, secret: bytes = b"",
                helper_failed=None) -> Verdict:
    """The verdict on one test cell from its worker's outcome (hidden cases under `secret`;
    `helper_failed`: helperblame.blame's)."""
    from autograder.checks.framework import get_check, hidden_cases, judge_evidence  # torch: in the judge only
    from autograder.coursedata.quizzes import judge as judge_quiz
    if outcome.status != "ok":
        where = ""
        if outcome.last_step.startswith("case "):
            fn, _, label = outcome.last_step[5:].partition("|")
            where = f" while checking {fn} on {label}"
        elif outcome.last_step.startswith("cell "):
            where = f" while running cell {outcome.last_step[5:]!r}"
        return Verdict(test_id, False, f"{outcome.detail}{where}", _CRASH_HINTS.get(outcome.status), 0)
    ev = outcome.evidence
    if ev.get("tampered"):
        names = ", ".join(ev["tampered"][:5])
        return Verdict(test_id, False, f"the answer cells changed what the grader relies on ({names}); results "
                       "are not trusted", "shared.answers_must_not_patch")
    cases, quiz_message = 0, "answered"
    rejected = ev.get("rejected", {})
    for i, (call, got) in enumerate(zip(calls, ev["calls"])):
        if i in rejected:
            return Verdict(test_id, False, f"{call.function or call.var}: the grader refused this evidence: "
                           f"{rejected[i]}", "shared.answers_must_not_write_grader_files", cases)
        evidence_list = got.get("evidence", []) if isinstance(got, dict) else []
        if call.kind == "quiz":
            result = judge_quiz(call.var, evidence_list[0] if evidence_list else None, call.key, call.choices,
                                call.section, call.explanation)
            cases += 1
            if not result.passed:
                return Verdict(test_id, False, result.message, result.hint, cases)
            if call.key is not None:
                quiz_message = result.message
            continue
        check = get_check(call.assignment, call.function)
        expected_cases = hidden_cases(check.cases(True), call_salt(secret, call.assignment, call.function)) \
            if call.hidden else check.cases(False)
        if len(evidence_list) != len(expected_cases):
            return Verdict(test_id, False, f"{call.function}: the grader received {len(evidence_list)} results for "
                           f"{len(expected_cases)} cases", None, cases)
        for case, evidence in zip(expected_cases, evidence_list):
            cases += 1
            if isinstance(evidence, dict) and "__missing__" in evidence:
                msg = _message_for_missing(call.var, outcome)
                if msg:
                    return Verdict(test_id, False, msg, hint_of("shared.fix_error_cell_defines", var=call.var), cases)
            result = judge_evidence(check, case, evidence)
            if not result.passed:
                message, hint = blame(check, call, result.message, helper_failed) or (result.message, result.hint)
                return Verdict(test_id, False, message, hint, cases)
    if all(c.kind == "quiz" for c in calls):
        return Verdict(test_id, True, quiz_message, None, cases)
    return Verdict(test_id, True, f"passed ({cases} case{'s' if cases != 1 else ''})", None, cases)


JUDGE_CPU_FLOOR = 5  # CPU seconds a judge request gets at least, whatever the per-test limit


class _Judge:
    """The judge process: loads a worker's evidence (autograder.checks.evidence.load_evidence) and judges test cells
    (_judge_cell), under an address-space limit and a CPU-time limit per request, with a wall-clock limit on
    every answer. It gets bytes and returns plain JSON verdicts. A request that hits a limit fails the tests it
    was for, with a message saying so; the process is then replaced and the batch goes on.

    One per grading thread, started on first use; each takes its requests one at a time (torch.fx tracing patches
    module globals, so one judge process judges one thing at a time)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.lock = threading.RLock()
        self.loaded: tuple[WorkerOutcome, int] | None = None  # (outcome, calls expected) whose evidence it holds

    def start(self, limits: Limits) -> None:
        with self.lock:
            if self.proc is not None and self.proc.poll() is None:
                return
            # forked (its imports done), else fresh; in "/", which no one removes (dynamo and export ask for the cwd)
            self.proc = forkserver.spawn_judge(limits.memory) or subprocess.Popen(
                [sys.executable, "-s", "-m", "autograder.grader.engine.grading", "--judge", str(limits.memory)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd="/",
                env={**os.environ, "PYTHONPATH": package_first(os.getenv("PYTHONPATH"))})
            self.loaded = None

    def _ask(self, header: dict, payload: bytes, limits: Limits, again: bool = True) -> tuple[dict | None, str]:
        """Send one request; (answer, "") or (None, why the judge gave none). A judge cut short because its fork
        server went away (killed, or out of memory) is replaced, given the evidence it held, and asked once more."""
        held = self.loaded
        self.start(limits)
        if held is not None and self.loaded is None and header["op"] != "load":  # replaced since: it went away
            answer, _ = self._ask({"op": "load", "expected": held[1]}, held[0].evidence_bytes, limits, again=False)
            self.loaded = held if (answer or {}).get("ok") else None
        proc = self.proc
        header = {**header, "cpu": max(JUDGE_CPU_FLOOR, int(limits.timeout)), "size": len(payload)}
        deadline = time.monotonic() + limits.wall + 60  # the first request also waits for the imports
        try:
            proc.stdin.write(json.dumps(header).encode() + b"\n" + payload)
            proc.stdin.flush()
            line = b""
            while not line.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
                    raise TimeoutError
                chunk = os.read(proc.stdout.fileno(), 2**20)
                if not chunk:
                    raise EOFError
                line += chunk
                if len(line) > 16 * 2**20:
                    raise ValueError("answer too long")
            return json.loads(line), ""
        except TimeoutError:
            why = f"the judge took longer than {limits.wall + 60:g} s of wall-clock time"
        except (EOFError, BrokenPipeError, OSError, ValueError):
            code = proc.wait(timeout=30) if proc.poll() is None else proc.returncode
            why = f"the judge went over its limit of {max(JUDGE_CPU_FLOOR, int(limits.timeout))} s of CPU time" \
                if code in (-signal.SIGXCPU, -signal.SIGKILL) else \
                f"the judge went over its memory limit of {limits.memory / 2**30:g} GiB or stopped (exit code {code})"
            if getattr(proc, "lost", False):
                why = "the fork server the judge was forked from went away, twice"
                if again:
                    self.stop()
                    self.loaded = held  # for the next process to load first
                    return self._ask(header, payload, limits, again=False)
        self.stop()
        return None, why

    def stop(self) -> None:
        with self.lock:
            if self.proc is not None:
                if self.proc.poll() is None:
                    self.proc.kill()
                    self.proc.wait()
                for stream in (self.proc.stdin, self.proc.stdout):
                    with contextlib.suppress(OSError):
                        stream.close()
            self.proc, self.loaded = None, None

    def load(self, outcome: WorkerOutcome, expected: int, limits: Limits) -> dict:
        """Load `outcome`'s evidence: {"ok": True, "calls": n, "complete": bool} or {"ok": False, "error": why}."""
        with self.lock:
            if outcome.evidence_bytes is None:
                return {"ok": False, "error": outcome.evidence_error or "the worker left no evidence",
                        "refused": "refused" in outcome.evidence_error}
            answer, why = self._ask({"op": "load", "expected": expected}, outcome.evidence_bytes, limits)
            if answer is None:
                return {"ok": False, "error": f"its evidence could not be loaded: {why}", "refused": True}
            if answer.get("ok"):
                self.loaded = (outcome, expected)
            else:
                answer["refused"] = True
            return answer

    def judge(self, tid: str, calls: list[Call], start: int, outcome: WorkerOutcome, expected: int,
              limits: Limits, secret: bytes = b"", plan: list[Call] = ()) -> Verdict:
        """Judge one test cell whose calls are `start`.. of `outcome`'s evidence (loaded again if the process
        was replaced after an earlier test hit a limit); `plan`: every call of that evidence, in order."""
        with self.lock:
            if self.loaded is None or self.loaded[0] is not outcome:
                summary = self.load(outcome, expected, limits)
                if not summary.get("ok"):
                    return Verdict(tid, False, summary.get("error", "the evidence could not be loaded"))
            answer, why = self._ask({"op": "judge", "tid": tid, "calls": [asdict(c) for c in calls],
                                     "start": start, "last_step": outcome.last_step, "secret": secret.hex(),
                                     "plan": [asdict(c) for c in plan]},
                                    b"", limits)
            if answer is None:
                return Verdict(tid, False, f"judging this test stopped: {why}",
                               "shared.answers_must_not_write_grader_files")
            if "error" in answer:
                return Verdict(tid, False, f"the grader could not judge this test: {answer['error']}")
            return Verdict.from_json(answer)


_JUDGES = threading.local()  # a judge process per grading thread: `fxcourse grade --jobs N` judges N at a time


def _judge() -> _Judge:
    """This thread's judge (made on first use; its process ends with the thread's last reference to it)."""
    judge = getattr(_JUDGES, "judge", None)
    if judge is None:  # with the course's judge service behind it where the judge side is missing here
        from autograder.grader.engine.judgeclient import with_service
        judge = _JUDGES.judge = with_service(_Judge)()
    return judge


def _judge_server(memory: int) -> int:
    """The judge process's loop (python -m autograder.grader.engine.grading --judge MEMORY): one JSON line per request
    (plus its payload) on stdin, one JSON line per answer on stdout."""
    import resource

    from autograder.checks.evidence import EvidenceError, load_evidence
    from autograder.grader.engine.judgeprotocol import judge_cases
    from autograder.grader.jail.worker import address_space_limit

    limit = address_space_limit(memory)  # `memory` beyond what the imports mapped
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nothing a check prints can corrupt the answers
    stdin = sys.stdin.buffer
    ev: dict | None = None
    while True:
        line = stdin.readline()
        if not line:
            return 0
        req = json.loads(line)
        payload = stdin.read(req["size"]) if req["size"] else b""
        usage = resource.getrusage(resource.RUSAGE_SELF)
        used = int(usage.ru_utime + usage.ru_stime) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (used + req["cpu"], resource.RLIM_INFINITY))
        try:
            if req["op"] == "load":
                ev = None
                try:
                    loaded, rejected = load_evidence(payload, req["expected"])
                except EvidenceError as exc:
                    answer = {"ok": False, "error": f"the grader refused the evidence: {exc}"}
                else:
                    loaded["rejected"] = rejected
                    ev = loaded
                    answer = {"ok": True, "calls": len(ev["calls"]), "complete": ev["complete"]}
            elif ev is None:
                answer = {"error": "no evidence is loaded"}
            elif req["op"] == "cases":  # the judge service's verdicts on named visible cases
                answer = judge_cases(ev, req)
            else:
                calls = [Call(**c) for c in req["calls"]]
                start, n = req["start"], len(calls)
                part = {**ev, "calls": ev["calls"][start:start + n],
                        "rejected": {i - start: r for i, r in ev["rejected"].items() if start <= i < start + n}}
                secret, plan = bytes.fromhex(req.get("secret", "")), [Call(**c) for c in req.get("plan", [])]
                helper_failed = functools.partial(first_failure, _judge_cell, ev, plan, secret)
                answer = _judge_cell(req["tid"], calls, WorkerOutcome(part, "ok", "", req["last_step"]), secret,
                                     helper_failed).to_json()
        except (MemoryError, RecursionError) as exc:
            answer = {"error": f"{type(exc).__name__} while judging (over the judge's limits)"}
        except Exception as exc:
            answer = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        out.write(json.dumps(answer).encode() + b"\n")
        out.flush()


def grade_restored(nb: NotebookNode, course: Course | None = None, *, limits: Limits | None = None,
                   hardened: bool = False,
                   notes: list[str] | None = None) -> list[Verdict]:
    """Grade a restored notebook (its test cells are the source's).

    One worker runs the checks of every test cell in order, saving its evidence after each. If it dies or runs
    out of time, the test it was in fails alone (or, when an answer cell's top-level code stopped it, the tests
    of that cell), and a new worker goes on with the rest, without that cell. `hardened` (nbgrader autograde,
    fxcourse grade) refuses to run without the whole jail (sandbox.IsolationError) unless the instructor
    opted out; otherwise the best isolation the machine has is used and `notes` says what was missing.
    Hardened, the whole grading has one submission's time (Limits.submission_wall): past it, NotebookError.
    """
    limits = limits or Limits.from_env()
    until = time.monotonic() + Limits.from_env().submission_wall() if hardened else float("inf")
    if hardened:
        limits = _Until(**{f.name: getattr(limits, f.name) for f in fields(Limits)}, until=until)

    def in_time() -> None:
        if time.monotonic() >= until:
            raise NotebookError(too_long())

    if course:
        keyring.use(course.root)   # its instructor's side, for the judge and the worker too
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
            results[tid] = Verdict(tid, False, f"the grader cannot read test cell {tid!r}: {exc}", max_points=points)
            continue
        if not calls:
            results[tid] = Verdict(tid, False, f"test cell {tid!r} calls no check the grader knows", max_points=points)
            continue
        plans.append((tid, points, calls))
    secret = course_secret(course) if any(c.hidden for _, _, calls in plans for c in calls) else b""  # hidden: salts

    def judged(tid: str, points: float, calls: list[Call], outcome: WorkerOutcome, start: int = 0,
               expected: int = 0, plan: list[Call] = ()) -> Verdict:
        if outcome.status == "ok":  # evidence to judge: in the judge process, under its limits
            verdict = _judge().judge(tid, calls, start, outcome, expected, limits, secret, plan)
        else:
            verdict = _judge_cell(tid, calls, outcome)
        return verdict.scored(points, clean_text)

    if plans:
        forkserver.prestart()
    pending, skipped = list(plans), []
    for _ in range(len(plans) + len(cells) + 1):
        if not pending:
            break
        flat = [call for _, _, calls in pending for call in calls]
        in_time()
        outcome = run_worker([c for c in cells if c["id"] not in skipped], _worker_calls(flat, secret),
                             limits=limits, hide=hide, require=hardened)
        in_time()
        _name_a_full_scratch(outcome, limits)
        if notes is not None:
            notes.extend(n for n in outcome.notes if n not in notes)
        summary = _judge().load(outcome, len(flat), limits)
        if summary.get("ok"):
            outcome.evidence = {"calls": [None] * summary["calls"]}  # what is known here: how many calls
        if outcome.status == "ok" and not (summary.get("ok") and summary["complete"]
                                           and summary["calls"] == len(flat)):
            outcome.status = "bad-evidence"
            outcome.detail = summary.get("error") or \
                "the worker stopped before it finished (did the answers exit the interpreter?)"
        elif outcome.status != "ok" and not summary.get("ok") and summary.get("refused"):
            outcome.detail += f"; {summary['error']}"
        done = summary["calls"] if summary.get("ok") else 0
        start, rest = 0, []
        for tid, points, calls in pending:
            n = len(calls)
            if start + n <= done:
                saved_status, outcome.status = outcome.status, "ok"  # this part of the evidence is there
                try:
                    results[tid] = judged(tid, points, calls, outcome, start, len(flat), flat)
                finally:
                    outcome.status = saved_status
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
                results[tid] = Verdict(tid, False, f"the cell {culprit!r} stopped the grader: {outcome.detail}",
                                       _CRASH_HINTS.get(outcome.status)).scored(points, clean_text)
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
    in_time()
    order = [grade_id(c) or "test" for c in nb.cells if is_test(c)]
    return [results[t] for t in order if t in results]


def check_notebook(path: str | Path, course: Course, *, visible_only: bool = False,
                   limits: Limits | None = None) -> Report:
    """Grade one filled-in notebook with the course's full test set (visible only without solutions/)."""
    forkserver.prestart()  # its imports overlap with reading and restoring the notebook
    submitted = read_notebook(path)
    assignment = identify_assignment(submitted, path, course)
    source_path, full = course.source_notebook(assignment)
    if visible_only and full:
        source_path, full = course.exercises / assignment / f"{assignment}.ipynb", False
    restored = restore(read_notebook(source_path), submitted)
    notes = list(restored.notes)
    tests = grade_restored(restored.notebook, course, limits=limits, notes=notes)
    return Report(assignment, sum(t.points for t in tests), sum(t.max_points for t in tests), tests,
                  notes, isolation_level(), full)


if __name__ == "__main__" and sys.argv[1:2] == ["--judge"]:
    sys.exit(_judge_server(int(sys.argv[2])))
