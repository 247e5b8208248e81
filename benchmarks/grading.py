"""Section 5: what grading costs. One correct submission of the whole course graded three ways, side by side
(per assignment, in turn): `fxcourse check`, `fxcourse grade` (the hardened nbgrader autograde) and PLAIN
nbgrader autograde (nbgrader's default preprocessors, tests run in a Jupyter kernel); then a class of
simulated students graded one at a time and two at a time (`--jobs 2`); then where the time goes.

Everything runs on temporary course roots, never this checkout's gradebook:
- hardened root: solutions/ copied, `fxcourse generate` run there (release + gradebook);
- plain root: the same solutions/, exercises/ and gradebook (copied before any grading) and an
  nbgrader_config.py that sets only course_id, source_directory and release_directory; nbgrader runs there
  with JUPYTER_CONFIG_PATH pointing at that root only, so autograder/nbgrader_config.py is never loaded.
A correct submission is the generated release with every answer cell filled in from the solution.
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable

import nbformat

from autograder.grader.jail import forkserver
from autograder.grader.ops.nbgrader import NBGRADER_LAUNCH

from .common import ROOT, Config, Job, Section, Skip, Table, Target, children_cpu, load_average, run_cmd
from .gradingcost import MemorySampler, fork_phases, mib, submission_cpu, watch_recheck, worker_memory

TITLE = "Grading: fxcourse check, hardened grade and plain nbgrader autograde"
PLAIN_CONFIG = '''c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "fxcourse"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
'''
FULL = "full"  # the student who hands in the whole course


def _py(*args: str) -> list[str]:
    return [sys.executable, *args]


def _answers(solution: Path) -> dict[str, str]:
    """grade_id -> the solution's answer code without the BEGIN/END SOLUTION marker lines."""
    from autograder.course.notebook import SOLUTION_BEGIN, SOLUTION_END, answer_cells, grade_id, read_notebook

    out = {}
    for cell in answer_cells(read_notebook(solution)):
        lines = [l for l in cell.source.splitlines() if l.strip() not in (SOLUTION_BEGIN, SOLUTION_END)]
        out[grade_id(cell)] = "\n".join(lines)
    return out


def _submit(release: Path, answers: dict[str, str], dest: Path) -> None:
    from autograder.course.notebook import grade_id

    nb = nbformat.read(str(release), as_version=4)
    for cell in nb.cells:
        if grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
    dest.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(dest))


def _scores(root: Path, assignment: str, students: list[str]) -> dict[str, tuple[float, float] | None]:
    from nbgrader.api import Gradebook, MissingEntry

    out: dict[str, tuple[float, float] | None] = {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "fxcourse") as gb:
        for s in students:
            try:
                sub = gb.find_submission(assignment, s)
                out[s] = (float(sub.score), float(sub.max_score))
            except MissingEntry:
                out[s] = None
    return out


def _why(r: subprocess.CompletedProcess) -> str:
    """The first failed test's message of a `check --json` run, else the last line of output."""
    try:
        rep = json.loads(r.stdout.strip().splitlines()[-1])
        failed = next(t for t in rep["tests"] if not t["passed"])
        return f": {failed['id']}: {failed['message'][:200]}"
    except (ValueError, IndexError, KeyError, StopIteration, TypeError):
        lines = [l for l in (r.stdout + r.stderr).splitlines() if l.strip()]
        return f"; last line: {lines[-1][:200]}" if lines else ""


def _fmt_score(s: tuple[float, float] | None) -> str:
    return "not graded" if s is None else f"{s[0]:g}/{s[1]:g}"


class _Course:
    """The two temporary course roots with their submissions."""

    def __init__(self, tmp: Path, assignments: list[str], class_assignment: str, class_size: int) -> None:
        self.tmp, self.notes, self.memory = tmp, [], {}
        self.hard, self.plain = tmp / "hardened", tmp / "plain"
        (tmp / "jupyter-config").mkdir()
        base = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp / "jupyter-config"), PYTHONWARNINGS="ignore")
        base.pop("JUPYTER_CONFIG_PATH", None)
        # Both pipelines run as an installed Python does, caching the bytecode of what they import (an environment
        # with PYTHONDONTWRITEBYTECODE set would have every command compile the course's modules again).
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        self.hard_env = base
        self.plain_env = dict(base, JUPYTER_CONFIG_PATH=str(self.plain))
        for a in assignments:
            shutil.copytree(ROOT / "solutions" / a, self.hard / "solutions" / a)
        self.assignments = []
        for a in assignments:
            _, _, r = run_cmd(_py("-m", "autograder.cli", "generate", a, "--course", str(self.hard)),
                              cwd=self.hard, env=self.hard_env, timeout=600)
            if r.returncode == 0:
                self.assignments.append(a)
            else:
                tail = (r.stdout + r.stderr).strip().splitlines()[-1:] or [""]
                self.notes.append(f"{a} left out: `fxcourse generate {a}` failed ({tail[0][:160]})")
        if not self.assignments:
            raise Skip("no assignment could be generated: " + "; ".join(self.notes))
        self.students = [f"c{i:02d}" for i in range(1, class_size + 1)]
        for a in self.assignments:
            release = self.hard / "exercises" / a / f"{a}.ipynb"
            answers = _answers(self.hard / "solutions" / a / f"{a}.ipynb")
            _submit(release, answers, self.hard / "submitted" / FULL / a / f"{a}.ipynb")
            if a == class_assignment:
                for s in self.students:
                    _submit(release, answers, self.hard / "submitted" / s / a / f"{a}.ipynb")
        for sub in ("solutions", "exercises", "submitted"):
            shutil.copytree(self.hard / sub, self.plain / sub)
        shutil.copy(self.hard / "gradebook.db", self.plain / "gradebook.db")
        (self.plain / "nbgrader_config.py").write_text(PLAIN_CONFIG)

    def check(self, a: str, keep: str = "0") -> Job:
        """`fxcourse check` of the full-course student's notebook; `keep`: FXCOURSE_FORKSERVER_KEEP ("0": cold,
        no server runs before and its own ends with the command; else a learner's default, which a next check finds
        warm)."""
        if keep == "0":
            forkserver.stop_kept_server()
        notebook = self.hard / "submitted" / FULL / a / f"{a}.ipynb"
        argv = ["-m", "autograder.cli", "check", str(notebook), "--json", "--course", str(self.hard)]
        return Job(_py(*argv), cwd=self.hard, env={**self.hard_env, "FXCOURSE_FORKSERVER_KEEP": keep})

    def grade_course(self, student: str, jobs: int = 1) -> Job:
        """One cold `fxcourse grade` of every assignment `student` handed in: how an instructor grades the course
        (`jobs` graders, shared across the assignments)."""
        forkserver.stop_kept_server()
        return Job(_py("-m", "autograder.cli", "grade", "--student", student, "--jobs", str(jobs), "--regrade",
                       "--course", str(self.hard)), cwd=self.hard,
                   env={**self.hard_env, "FXCOURSE_FORKSERVER_KEEP": "0"})

    def plain_grade_course(self, student: str) -> Job:
        """Plain nbgrader over every assignment in one process (its assignment id is a glob)."""
        return Job(_py("-m", "nbgrader", "autograde", "*", f"--student={student}", "--create", "--force",
                       f"--CourseDirectory.root={self.plain}"), cwd=self.plain, env=self.plain_env)

    def grade(self, a: str, students: list[str], jobs: int = 1, env: dict[str, str] | None = None,
              keep: str = "0") -> Job:
        """`fxcourse grade` of `students`; `keep` as for check ("0": cold, no server runs before and its own ends
        with it; else the user's kept server is joined if it runs, and kept for the next command)."""
        if keep == "0":
            forkserver.stop_kept_server()
        argv = [x for s in students for x in ("--student", s)]
        return Job(_py("-m", "autograder.cli", "grade", a, *argv, "--jobs", str(jobs), "--regrade", "--course",
                   str(self.hard)), cwd=self.hard,
                   env={**self.hard_env, **(env or {}), "FXCOURSE_FORKSERVER_KEEP": keep})

    def watch_cmd(self, notebook: Path) -> list[str]:
        return _py("-m", "autograder.cli", "watch", str(notebook), "--interval", "0.2", "--course", str(self.hard))

    def plain_grade(self, a: str, student: str) -> Job:
        return Job(_py("-m", "nbgrader", "autograde", a, f"--student={student}", "--create", "--force",
                       f"--CourseDirectory.root={self.plain}"), cwd=self.plain, env=self.plain_env)
    def plain_grade_class(self, a: str) -> Job:
        """Plain nbgrader's own batch: every simulated student in one process (the full-course student left out)."""
        return Job(_py("-m", "nbgrader", "autograde", a, "--student=*", f"--CourseDirectory.student_id_exclude={FULL}",
                       "--create", "--force", f"--CourseDirectory.root={self.plain}"), cwd=self.plain,
                   env=self.plain_env)


def _check_score(r: subprocess.CompletedProcess) -> tuple[float, float] | None:
    try:
        rep = json.loads(r.stdout.strip().splitlines()[-1])
        return float(rep["score"]), float(rep["max_score"])
    except (ValueError, IndexError, KeyError):
        return None


def _median_run(fn, repeats: int) -> tuple[float, float]:
    """Median wall and CPU seconds (this process plus finished children) of `fn()` over `repeats` calls."""
    walls, cpus = [], []
    for _ in range(repeats):
        c0, p0, t0 = children_cpu(), time.process_time(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - p0 + children_cpu() - c0)
    return statistics.median(walls), statistics.median(cpus)


def _worker_inputs(course: _Course, a: str) -> tuple[list[dict], list[dict], list[str]]:
    """What a jailed worker is given for the full-course student's `a`: its cells, its calls and what it must not
    read (for sandbox.run_worker)."""
    from autograder.course.root import Course
    from autograder.course.plan import parse_test_cell
    from autograder.course.notebook import grade_id, is_test, read_notebook, restore

    submission = course.hard / "submitted" / FULL / a / f"{a}.ipynb"
    restored = restore(read_notebook(course.hard / "solutions" / a / f"{a}.ipynb"), read_notebook(submission)).notebook
    cells = [{"id": grade_id(c) or "cell", "source": c.source} for c in restored.cells
             if c.cell_type == "code" and not is_test(c)]
    calls = [asdict(call) for c in restored.cells if is_test(c) for call in parse_test_cell(c.source)]
    return cells, calls, Course(course.hard).secrets()


def _phases(course: _Course, a: str, repeats: int, smoke: bool) -> list[dict]:
    """Wall and CPU seconds of the pieces a grading is made of."""
    from autograder.grader.jail.headless import execute
    from autograder.grader.jail.sandbox import run_worker

    env, cwd = course.hard_env, course.hard
    cells, calls, hide = _worker_inputs(course, a)
    scratch = course.tmp / "phases"
    scratch.mkdir(exist_ok=True)
    empty_nb, torch_nb = scratch / "empty.ipynb", scratch / "imports.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("pass")]), str(empty_nb))
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import torch, torch.fx\nimport fxplayground\nfrom autograder.checks import run_check")]), str(torch_nb))

    def sub(*argv: str):
        return lambda: subprocess.run(_py(*argv), cwd=cwd, env=env, capture_output=True, check=True)

    phases = [
        ("python start (`python -c pass`)", "python start", "both", True, sub("-c", "pass")),
        ("`python -c 'import torch'`", "import torch", "both", False, sub("-c", "import torch")),
        ("nbgrader CLI start (`python -m nbgrader --version`)", "nbgrader CLI start", "plain", False,
         sub("-m", "nbgrader", "--version")),
        ("nbgrader CLI start as `fxcourse grade` launches it (after `import autograder`, which skips "
         "jsonschema's optional rfc3987_syntax grammar)", "nbgrader start, fxcourse", "hardened", False,
         sub("-c", NBGRADER_LAUNCH, "--version")),
        ("grader-side imports (`python -c 'import autograder.grader.engine.grading'`: torch, nbformat)", "grader-side imports",
         "hardened", False, sub("-c", "import autograder.grader.engine.grading")),
        ("Jupyter kernel start + one empty cell + shutdown", "kernel start + stop", "plain", True,
         lambda: execute(empty_nb, cwd=scratch)),
        ("the same plus `import torch, fxplayground, autograder.checks` in the kernel", "kernel + imports",
         "plain", False, lambda: execute(torch_nb, cwd=scratch)),
    ]
    out = []
    for name, short, side, keep, fn in phases:
        if smoke and not keep:
            continue
        try:
            wall, cpu = _median_run(fn, repeats)
            out.append({"phase": name, "short": short, "side": side, "wall": wall, "cpu": cpu})
        except Exception as exc:  # a phase that cannot run here is reported, not fatal
            out.append({"phase": name, "short": short, "side": side, "wall": float("nan"), "cpu": float("nan"),
                        "error": f"{type(exc).__name__}: {str(exc)[:120]}"})
    out.extend(fork_phases(cells, calls, hide, a, repeats, _median_run, smoke))
    secret = os.environ.get("FXCOURSE_SECRET")  # grade_task sets the course's, as a grading run's coordinator
    try:
        out.extend(submission_cpu(course.hard, a, FULL, 2 if smoke else 10))
    except Exception as exc:  # reported, not fatal
        out.append({"phase": f"{a}, per submission: CPU by process", "short": "per submission", "side": "hardened",
                    "wall": float("nan"), "cpu": float("nan"), "error": f"{type(exc).__name__}: {str(exc)[:120]}"})
    finally:
        os.environ.pop("FXCOURSE_SECRET", None) if secret is None else os.environ.update(FXCOURSE_SECRET=secret)
    if not smoke:  # one worker's memory, each way (this process's tree sampled while it runs)
        os.environ["FXCOURSE_FORKSERVER"] = "0"
        try:
            course.memory["fresh worker"] = worker_memory(lambda: run_worker(cells, calls, hide=hide))
        finally:
            os.environ.pop("FXCOURSE_FORKSERVER", None)
        run_worker([], [], hide=hide)  # the fork server is up before the sampling starts
        course.memory["forked worker"] = worker_memory(lambda: run_worker(cells, calls, hide=hide))
    return out


def run(cfg: Config) -> Section:
    sec = Section("grading", TITLE)
    from autograder.coursedata.exercises import EXERCISES

    available = [ex.id for ex in EXERCISES]
    if cfg.smoke:
        assignments = [a for a in available if a == "ex01_tracing"]
        class_assignment, class_size, repeats = "ex01_tracing", 0, 1  # the class: the one student above
    else:
        assignments = [a for a in available if a in cfg.assignments] if cfg.assignments else available
        class_assignment, class_size, repeats = cfg.class_assignment, cfg.class_size, 3
    if not assignments:
        raise Skip("solutions/ex01_tracing not present" if cfg.smoke else "no solutions/ present")
    if class_assignment not in assignments:
        class_assignment = assignments[0]
    tmp = Path(tempfile.mkdtemp(prefix="fxcourse-bench-grading-"))
    start_load = load_average()
    try:
        course = _Course(tmp, assignments, class_assignment, class_size)
        sec.notes.extend(course.notes)
        _measure(sec, cfg, course, class_assignment, repeats)
    finally:
        forkserver.stop_kept_server()  # what the section's commands kept
        shutil.rmtree(tmp, ignore_errors=True)
    busy = max(os.getloadavg()[1], float(start_load.split(" / ")[1]) if " / " in start_load else 0.0)
    if busy > (os.cpu_count() or 1):
        sec.notes.append(f"This run shared the machine's {os.cpu_count()} cores with other work: load average "
                         f"(1/5/15 min) {start_load} at the start of the section and {load_average()} at its end. "
                         "Wall-clock times include waiting for a core; the ratios compare commands run one after "
                         "another under that same load, and the CPU seconds beside them are less affected.")
    return sec


def _kept_cpu() -> float:
    """CPU seconds of the user's kept fork server so far, with the managers, workers and judges it has reaped."""
    pid = forkserver.kept_server_pid()
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split() if pid else []
    except OSError:
        fields = []
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


_SPIN = "import time\nt = time.perf_counter()\nfor _ in range(2 * 10**7):\n    pass\nprint(time.perf_counter() - t)"


def two_cores(rounds: int) -> tuple[float, list[float]]:
    """What this machine's cores give two CPU-bound processes at once: the work two of them do side by side
    against one alone in the same time (2.0: two whole cores), per round (one alone, then two at once, in turn),
    and its median. No `--jobs 2` can beat it here; a shared or virtual machine's two cores may give less."""
    def spin(n: int) -> float:
        t0 = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-c", _SPIN], stdout=subprocess.DEVNULL) for _ in range(n)]
        for proc in procs:
            proc.wait()
        return time.perf_counter() - t0
    ratios = [2 * spin(1) / spin(2) for _ in range(rounds)]
    return statistics.median(ratios), ratios


def _warm(start: Callable[[], Job]) -> tuple[float, float, subprocess.CompletedProcess]:
    """Run a command that joins the kept fork server: (wall, its CPU plus what the server spent meanwhile, the
    process), so that the workers and judges forked for it count as a cold command's children do."""
    time.sleep(0.7)  # what the command before left for the server to reap is counted as that command's
    before = _kept_cpu()
    wall, cpu, r = start().result(timeout=7200)
    time.sleep(0.7)  # the server reaps its ended managers at least twice a second
    return wall, cpu + _kept_cpu() - before, r


def _measure(sec: Section, cfg: Config, course: _Course, class_assignment: str, repeats: int) -> Section:
    per, rows = [], []
    totals = {"check": [0.0, 0.0], "warm": [0.0, 0.0], "grade": [0.0, 0.0], "plain": [0.0, 0.0]}
    for a in course.assignments:
        # one after another, so that each has the machine to itself
        # cold (the server ends with the command), then a learner's first check (it keeps its server; --smoke
        # lets the cold one do that), then the next check, forked from that warm server
        c_wall, c_cpu, c_r = course.check(a, keep="300" if cfg.smoke else "0").result()
        if not cfg.smoke:
            course.check(a, keep="300").result()
        w_wall, w_cpu, w_r = _warm(lambda: course.check(a, keep="300"))
        g_wall, g_cpu, g_r = course.grade(a, [FULL]).result()
        p_wall, p_cpu, p_r = course.plain_grade(a, FULL).result()
        c_score, g_score = _check_score(c_r), _scores(course.hard, a, [FULL])[FULL]
        w_score = _check_score(w_r)
        p_score = _scores(course.plain, a, [FULL])[FULL]
        print(f"      {a}: check {c_wall:.0f} s (warm {w_wall:.1f} s), grade {g_wall:.0f} s, plain {p_wall:.0f} s",
              flush=True)
        for key, (w, c) in (("check", (c_wall, c_cpu)), ("warm", (w_wall, w_cpu)), ("grade", (g_wall, g_cpu)),
                            ("plain", (p_wall, p_cpu))):
            totals[key][0] += w
            totals[key][1] += c
        per.append({"assignment": a, "check": [c_wall, c_cpu], "warm": [w_wall, w_cpu], "grade": [g_wall, g_cpu],
                    "plain": [p_wall, p_cpu],
                    "scores": {"check": c_score, "warm": w_score, "grade": g_score, "plain": p_score}})
        rows.append([a, f"{c_wall:.1f} / {c_cpu:.1f}", f"{w_wall:.1f} / {w_cpu:.1f}", f"{g_wall:.1f} / {g_cpu:.1f}",
                     f"{p_wall:.1f} / {p_cpu:.1f}", f"{g_wall / p_wall:.2f}", f"{c_wall / p_wall:.2f}",
                     f"{w_wall / p_wall:.2f}",
                     f"{_fmt_score(c_score)} · {_fmt_score(w_score)} · {_fmt_score(g_score)} · {_fmt_score(p_score)}"])
        for name, score, r in (("fxcourse check", c_score, c_r), ("fxcourse check (warm)", w_score, w_r),
                               ("fxcourse grade", g_score, g_r), ("plain nbgrader", p_score, p_r)):
            if score is None or score[0] != score[1]:
                sec.notes.append(f"{a}: {name} gave {_fmt_score(score)} for the correct submission "
                                 f"(exit {r.returncode}){_why(r)}")
    rows.append(["**sum of the above**", f"**{totals['check'][0]:.1f} / {totals['check'][1]:.1f}**",
                 f"**{totals['warm'][0]:.1f} / {totals['warm'][1]:.1f}**",
                 f"**{totals['grade'][0]:.1f} / {totals['grade'][1]:.1f}**",
                 f"**{totals['plain'][0]:.1f} / {totals['plain'][1]:.1f}**",
                 f"**{totals['grade'][0] / totals['plain'][0]:.2f}**",
                 f"**{totals['check'][0] / totals['plain'][0]:.2f}**",
                 f"**{totals['warm'][0] / totals['plain'][0]:.2f}**", ""])
    # The whole course as each tool grades it in one command: `fxcourse grade` without an assignment (one fork
    # server for the run, one grading thread per grader), with one grader and with two (shared across
    # the assignments); plain nbgrader with the glob "*" as its assignment (one process; it has no parallel mode).
    o_wall, o_cpu, o_r = course.grade_course(FULL).result(timeout=7200)
    o_scores = {a: _scores(course.hard, a, [FULL])[FULL] for a in course.assignments}
    j_wall, j_cpu, j_r = course.grade_course(FULL, jobs=2).result(timeout=7200)
    j_scores = {a: _scores(course.hard, a, [FULL])[FULL] for a in course.assignments}
    q_wall, q_cpu, q_r = course.plain_grade_course(FULL).result(timeout=7200)
    q_scores = {a: _scores(course.plain, a, [FULL])[FULL] for a in course.assignments}
    for name, scores, r in (("one `fxcourse grade`", o_scores, o_r), ("one `fxcourse grade --jobs 2`", j_scores, j_r),
                            ("plain nbgrader autograde '*'", q_scores, q_r)):
        bad = [a for a, v in scores.items() if v is None or v[0] != v[1]]
        if bad or r.returncode:
            sec.notes.append(f"whole course, {name}: {len(bad)} assignment(s) not at full marks (exit "
                             f"{r.returncode}){_why(r)}")
    totals["one_run"], totals["one_run_jobs2"], totals["plain_one_run"] = [o_wall, o_cpu], [j_wall, j_cpu], \
        [q_wall, q_cpu]
    full = lambda *s: "all full marks" if not any(v is None or v[0] != v[1] for x in s for v in x.values()) \
        else "not all full marks"
    rows.append(["**whole course in one command**", "", "", f"**{o_wall:.1f} / {o_cpu:.1f}**",
                 f"**{q_wall:.1f} / {q_cpu:.1f}** (`autograde '*'`)", f"**{o_wall / q_wall:.2f}**", "", "",
                 full(o_scores, q_scores)])
    rows.append(["**whole course in one command, `--jobs 2`**", "", "", f"**{j_wall:.1f} / {j_cpu:.1f}**",
                 f"**{q_wall:.1f} / {q_cpu:.1f}** (`autograde '*'`)", f"**{j_wall / q_wall:.2f}**", "", "",
                 full(j_scores)])
    sec.tables.append(Table(
        "one correct submission, seconds wall / CPU (CPU: the command and all its child processes; warm: with what "
        "the kept fork server spent for it); ratios are wall-clock, < 1 means faster than plain nbgrader. check and "
        "grade: cold (no fork server runs before the command, and its own ends with it); warm: the learner's next "
        "check, forked from the server the previous one kept",
        ["assignment", "fxcourse check", "check, warm", "fxcourse grade (hardened)", "plain nbgrader autograde",
         "hardened / plain", "check / plain", "warm / plain", "score: check · warm · grade · plain"], rows))
    whole = j_wall / q_wall
    sec.targets.append(Target(
        "whole course: hardened `fxcourse grade` vs plain nbgrader autograde", "<= 0.5x",
        f"{whole:.2f}x: `fxcourse grade --jobs 2` of the course {j_wall:.0f} s against plain nbgrader's fastest, "
        f"its one-process `autograde '*'`, {q_wall:.0f} s (plain nbgrader has no way to use the second core), and "
        f"{j_wall / totals['plain'][0]:.2f}x against plain nbgrader run per assignment as its docs show "
        f"({totals['plain'][0]:.0f} s). With one grader (`--jobs 1`): {o_wall:.0f} s, {o_wall / q_wall:.2f}x "
        f"`autograde '*'` and {o_wall / totals['plain'][0]:.2f}x per assignment; CPU seconds, one grader against "
        f"`'*'`: {o_cpu / q_cpu:.2f}x", whole <= 0.5))
    one = next(p for p in per if p["assignment"] == class_assignment)
    one_ratio = one["warm"][0] / one["plain"][0]
    ratios = sorted(p["warm"][0] / p["plain"][0] for p in per)
    sec.targets.append(Target(
        f"`fxcourse check` of one exercise ({class_assignment}) vs plain nbgrader autograde of that notebook",
        "<= 0.3x", f"{one_ratio:.2f}x for the learner's next check, from the kept server ({one['warm'][0]:.1f} s "
        f"vs {one['plain'][0]:.1f} s); over the {len(per)} exercises {ratios[0]:.2f}x to {ratios[-1]:.2f}x; a "
        f"cold first check {one['check'][0] / one['plain'][0]:.2f}x ({one['check'][0]:.1f} s)", one_ratio <= 0.3))
    if not cfg.smoke:  # the same grading with the fork server turned off: before and after, side by side
        b_wall, b_cpu, b_r = course.grade(class_assignment, [FULL], env={"FXCOURSE_FORKSERVER": "0"}).result()
        b_score = _scores(course.hard, class_assignment, [FULL])[FULL]
        sec.notes.append(
            f"Before and after, {class_assignment}, one submission: `fxcourse grade` with fresh worker processes "
            f"(FXCOURSE_FORKSERVER=0) took {b_wall:.1f} s wall / {b_cpu:.1f} s CPU ({b_wall / one['plain'][0]:.2f}x "
            f"plain, score {_fmt_score(b_score)}); with the fork server {one['grade'][0]:.1f} s / "
            f"{one['grade'][1]:.1f} s ({one['grade'][0] / one['plain'][0]:.2f}x plain).")

    # A class of simulated students on one assignment, graded twice: by one `fxcourse grade` process one
    # submission at a time, then again (a regrade, which costs the same) with `--jobs 2`, two at a time. Every
    # `fxcourse grade` keeps the user's fork server for the next command, so the rounds find it running, as every
    # grade but an instructor's first does; one round more is cold (the run starts the server, which ends with it).
    students = course.students
    load = load_average()
    thr_rows, throughput = [], {"assignment": class_assignment, "students": max(len(students), 1)}
    if students:
        ways = [("sequential", "`fxcourse grade` (one at a time)", 1),
                ("parallel", "`fxcourse grade --jobs 2` (two at a time)", 2)]
    else:  # --smoke: the class is the one student graded above
        ways = []
        row = next(p for p in per if p["assignment"] == class_assignment)
        throughput["sequential"] = {"students": 1, "wall": row["grade"][0], "cpu": row["grade"][1],
                                    "not_full": [] if row["scores"]["grade"] and row["scores"]["grade"][0]
                                    == row["scores"]["grade"][1] else [FULL], "failures": 0}
        thr_rows.append(["`fxcourse grade` (one at a time)", "1", f"{row['grade'][0]:.1f}", f"{row['grade'][1]:.1f}",
                         f"{row['grade'][0]:.1f}", f"{60 / row['grade'][0]:.1f}", "—",
                         "full marks" if not throughput["sequential"]["not_full"] else "not at full marks"])
    if ways:
        ways.append(("plain", "plain `nbgrader autograde` (one process, one at a time)", 0))
    def class_job(key: str, jobs: int, keep: str = "300") -> Job:
        return course.plain_grade_class(class_assignment) if key == "plain" else \
            course.grade(class_assignment, students, jobs=jobs, keep=keep)

    alone_warm = float("nan")
    if ways:  # the server the rounds find, kept by a command before them; then one student graded warm
        course.grade(class_assignment, [FULL], keep="300").result()
        alone_warm = _warm(lambda: course.grade(class_assignment, [FULL], keep="300"))[0]

    # Each way timed on its own (the memory sampler reads /proc every 0.2 s, CPU that two graders side by side
    # would miss more than one; the memory comes from a run of its own, below). One at a time and two at a time
    # take turns, `class_rounds` rounds, and each is reported by its median: on a shared machine one run of each can
    # differ by a fifth from the next (on a virtual machine whose host is busy, by half). Plain nbgrader's batch (the
    # slowest, only a note's baseline) runs once.
    rounds: dict[str, list[tuple[float, float, list[str], int]]] = {key: [] for key, _, _ in ways}
    class_rounds = max(repeats, 5) if repeats > 1 else repeats
    # A round's one-at-a-time run is followed by three runs of a forked worker alone (sandbox.run_worker, the
    # server the run kept): the cost per student is weighed against the worker timed in the same minute.
    from autograder.grader.jail.sandbox import run_worker

    (cells, calls, hide), worker_walls = _worker_inputs(course, class_assignment), []
    for turn in range(class_rounds if ways else 0):
        for key, label, jobs in ways:
            if key == "plain" and turn:
                continue
            wall, cpu, r = class_job(key, jobs).result(timeout=7200) if key == "plain" else \
                _warm(lambda: class_job(key, jobs))
            scores = _scores(course.plain if key == "plain" else course.hard, class_assignment, students)
            bad = [s for s, v in scores.items() if v is None or v[0] != v[1]]
            failed = r.stdout.count("NOT GRADED") + r.stderr.count("There was an error processing assignment '") + \
                (r.returncode != 0)
            print(f"      {len(students)} students, {label}: {wall:.0f} s", flush=True)
            rounds[key].append((wall, cpu, bad, failed))
            if key == "sequential":  # what it is weighed against, timed beside it: the forked worker alone
                worker_walls.append(_median_run(lambda: run_worker(cells, calls, hide=hide), 3)[0])
    for key, label, jobs in ways:
        runs = sorted(rounds[key])
        wall, cpu, _, _ = runs[len(runs) // 2]
        bad = sorted({s for run in runs for s in run[2]})
        failed = sum(run[3] for run in runs)
        throughput[key] = {"students": len(students), "wall": wall, "cpu": cpu, "not_full": bad, "failures": failed,
                           "jobs": jobs, "walls": [run[0] for run in rounds[key]]}
        many = f" (median of {len(runs)}: {', '.join(f'{run[0]:.1f}' for run in rounds[key])})" if len(runs) > 1 else ""
        thr_rows.append([label + many, str(len(students)), f"{wall:.1f}", f"{cpu:.1f}", f"{wall / len(students):.1f}",
                         f"{60 * len(students) / wall:.1f}", f"{wall / 60:.1f} min",
                         ("all full marks" if not bad else f"{len(bad)} not at full marks")
                         + (f"; {failed} failure(s) reported" if failed else "")])
    cold = {key: class_job(key, jobs, keep="0").result(timeout=7200)[:2] for key, _, jobs in ways if key != "plain"}
    for key, label, jobs in ways:
        if key in cold:
            thr_rows.append([f"{label}, cold: the run starts the fork server", str(len(students)),
                             f"{cold[key][0]:.1f}", f"{cold[key][1]:.1f}", f"{cold[key][0] / len(students):.1f}",
                             f"{60 * len(students) / cold[key][0]:.1f}", f"{cold[key][0] / 60:.1f} min", ""])
    for key, label, jobs in ways:  # the same runs again, cold (the server in the command's process tree), for memory
        job = class_job(key, jobs, keep="0")
        with MemorySampler(job.proc.pid) as sampler:
            job.result(timeout=7200)
        course.memory[f"class, {label}"] = sampler.summary()
    size = throughput["students"]
    if "parallel" in throughput:
        seq, par = throughput["sequential"], throughput["parallel"]
        # Round by round, as Timing.ratio weighs runs: a round's two runs are taken one after the other, at the
        # machine's speed of that minute; the medians of the two columns may come from different rounds.
        pairs = [a / b for a, b in zip(seq["walls"], par["walls"])]
        speedup = statistics.median(pairs)
        alone = next(p for p in per if p["assignment"] == class_assignment)["grade"][0]
        batch_factor = seq["wall"] / len(students) / alone
        course_s = totals["grade"][0] * batch_factor
        note = (f"`--jobs 2` graded the class {speedup:.2f}x faster than one at a time (ideal on {os.cpu_count()} "
                f"cores: {min(2, os.cpu_count() or 1)}x). In a batch, {class_assignment} cost "
                f"{seq['wall'] / len(students):.1f} s per student against {alone:.1f} s for one submission graded "
                f"alone ({batch_factor:.2f}x: the start-up is paid once per run). Estimated for the whole "
                f"course ({len(course.assignments)} assignments, {totals['grade'][0]:.0f} s alone per student, "
                f"scaled by that factor: the other assignments were not graded as a class): a class of {size} "
                f"takes about {size * course_s / 60:.1f} min one at a time and {size * course_s / speedup / 60:.1f} "
                "min with `--jobs 2`.")
        if "plain" in throughput:
            note += (f" Plain nbgrader's batch took {throughput['plain']['wall']:.0f} s for the same class, "
                     f"{throughput['plain']['wall'] / seq['wall']:.2f}x the time of `fxcourse grade` one at a time.")
        sec.notes.append(note)
        each = f": round by round {', '.join(f'{x:.2f}x' for x in pairs)}" if len(pairs) > 1 else ""
        # the run's start (one submission graded alone, the server running) left out, round by round too
        beyond = statistics.median((a - alone_warm) / max(b - alone_warm, 1e-9)
                                   for a, b in zip(seq["walls"], par["walls"]))
        cold_ratio = cold["sequential"][0] / cold["parallel"][0]
        ceiling, spins = two_cores(class_rounds)
        sec.targets.append(Target(f"class of {size}: `--jobs 2` vs `--jobs 1` throughput", ">= 1.8x",
                                  f"{speedup:.2f}x (the median of {len(pairs)} rounds' ratios, each round's two "
                                  f"runs taken one after the other, each run joining the fork server the command "
                                  f"before it kept{each}; the medians of the times, {seq['wall']:.1f} s vs "
                                  f"{par['wall']:.1f} s: {seq['wall'] / par['wall']:.2f}x; the students beyond the "
                                  f"first, whose grading alone takes "
                                  f"{alone_warm:.1f} s: {beyond:.2f}x; cold, where the run starts the server "
                                  f"itself: {cold_ratio:.2f}x, {cold['sequential'][0]:.1f} s vs "
                                  f"{cold['parallel'][0]:.1f} s; this machine's ceiling, two CPU-bound processes "
                                  f"side by side against one alone: {ceiling:.2f}x, round by round "
                                  f"{', '.join(f'{x:.2f}x' for x in spins)})", speedup >= 1.8))
        sec.targets.append(Target(
            f"class of {size}: every simulated student graded, every way", "all full marks, no failure",
            "; ".join(f"{way}: {len(throughput[way]['not_full'])} not full, {throughput[way]['failures']} "
                      "failure(s)" for way in ("sequential", "parallel", "plain") if way in throughput),
            not any(throughput[w]["not_full"] or throughput[w]["failures"]
                    for w in ("sequential", "parallel", "plain") if w in throughput)))
    else:
        sec.notes.append("--smoke: one student, so no class and no parallel grading.")
    sec.tables.append(Table(
        f"class throughput: {size} simulated student(s), each handing in the correct {class_assignment}, graded "
        f"one at a time, two at a time (each run joining the fork server the command before it kept, as every grade "
        f"but the first does; CPU: with what that server spent for it; the cold rows: the run starts the server), "
        f"and by plain nbgrader's own batch; {os.cpu_count()} cores, load average "
        f"(1/5/15 min) {load} when it started",
        ["how", "students", "wall s", "CPU s", "s per student", "students per minute", "whole class", "scores"],
        thr_rows))

    phases = _phases(course, class_assignment, repeats, cfg.smoke)
    seq_walls = throughput.get("sequential", {}).get("walls", [])
    if "parallel" in throughput and worker_walls and len(worker_walls) == len(seq_walls):
        n = throughput["students"]
        per_round = [wall / n / worker for wall, worker in zip(seq_walls, worker_walls)]
        ratio, worker = statistics.median(per_round), statistics.median(worker_walls)
        per_student = throughput["sequential"]["wall"] / n
        # each student beyond the first (the run's start left out), weighed against that round's worker as well
        beyond_each = [(wall - alone_warm) / max(n - 1, 1) for wall in seq_walls]
        marginal = statistics.median(beyond_each)
        marginal_ratio = statistics.median(b / w for b, w in zip(beyond_each, worker_walls))
        cold_student = cold["sequential"][0] / n
        sec.targets.append(Target(
            f"class of {n}: cost per student (`--jobs 1`) vs a forked worker running {class_assignment}'s answers "
            "and checks alone", "<= 1.5x",
            f"{ratio:.2f}x (the median of {len(per_round)} rounds, each the class's time per student, the run's "
            f"start included, the fork server kept by the command before, against the forked worker timed right "
            f"after it: round by round {', '.join(f'{x:.2f}x' for x in per_round)}; medians {per_student:.2f} s "
            f"per student, {worker:.2f} s the worker; each student beyond the first: {marginal:.2f} s, "
            f"{marginal_ratio:.2f}x; cold, the run starting the server: {cold_student:.2f} s, "
            f"{cold_student / worker:.2f}x)", ratio <= 1.5))
    sec.notes.append("`fxcourse grade` imports nbgrader's preprocessors once, in its own process, after "
                     "`import autograder`, which keeps jsonschema from importing its optional rfc3987_syntax format "
                     "checker (it compiles a grammar on import; no notebook schema uses it); plain nbgrader pays "
                     "that in every process: compare the two nbgrader start rows of the where-the-time-goes table. "
                     "Every submission of the run is graded in that process (`--jobs N`: N grading threads), so "
                     "the start is paid once per run, not per student or per assignment.")
    sec.tables.append(Table(
        f"where the time goes ({class_assignment}), median of {repeats}; seconds wall / CPU (this process and "
        "its children)",
        ["phase", "pipeline", "wall s", "CPU s"],
        [[p["phase"], p["side"], f"{p['wall']:.2f}" if p["wall"] == p["wall"] else p.get("error", "n/a"),
          f"{p['cpu']:.2f}" if p["cpu"] == p["cpu"] else ""] for p in phases]))
    sec.data = {"memory": course.memory, "per_assignment": per, "totals": totals, "throughput": throughput, "phases": phases,
                "assignments": course.assignments, "class_assignment": class_assignment}
    _watch(sec, course, class_assignment, phases, cfg.smoke)
    _memory_table(sec, course)
    return sec


def _watch(sec: Section, course: _Course, a: str, phases: list[dict], smoke: bool) -> None:
    """`fxcourse watch` on a learner's copy: seconds from a save to the new report, against the learner's code."""
    if smoke:
        return
    notebook = course.tmp / "watched" / f"{a}.ipynb"
    notebook.parent.mkdir(exist_ok=True)
    shutil.copy(course.hard / "submitted" / FULL / a / f"{a}.ipynb", notebook)
    try:
        w = watch_recheck(course.watch_cmd(notebook), notebook, course.hard, course.hard_env)
    except RuntimeError as exc:
        sec.notes.append(f"fxcourse watch could not be measured: {exc}")
        return
    code = next((p for p in phases if p["short"] == "learner cells + checks (forked)"), None)
    learner = code["wall"] if code and code["wall"] == code["wall"] else float("nan")
    beyond = w["median"] - learner
    sec.data["watch"] = {**w, "learner": learner}
    sec.targets.append(Target(
        f"`fxcourse watch` ({a}): re-check after a save, beyond running the learner's code", "<= 1 s",
        f"{beyond:.2f} s beyond (save to report {w['median']:.2f} s, median of {len(w['latencies'])}, polling every "
        f"0.2 s included; the learner's cells and checks {learner:.2f} s; first check {w['first']:.1f} s)",
        beyond <= 1.0))


def _memory_table(sec: Section, course: _Course) -> None:
    rows = []
    for what, m in course.memory.items():
        worker, server = m["peak_worker"], m["server"]
        rows.append([what, mib(m["peak_total_pss"]),
                     f"{mib(worker['Rss'])} / {mib(worker['Pss'])} / {mib(worker['private'])}" if worker["Rss"] else "—",
                     f"{mib(server['Rss'])} / {mib(server['Pss'])} / {mib(server['private'])} "
                     f"({server['workers']} worker(s) alive)" if server else "—",
                     ", ".join(f"{k} {v['processes']}: {mib(v['pss'])}" for k, v in m["at_peak"].items())])
    if rows:
        sec.tables.append(Table(
            "memory, MiB (sampled every 0.1-0.2 s from /proc/PID/smaps_rollup): PSS counts a page shared by n "
            "processes as 1/n in each, so the PSS of all processes adds up to the memory really used; a forked "
            "worker's RSS minus its private part is what it shares copy-on-write with the fork server",
            ["run", "peak total PSS", "peak worker RSS / PSS / private", "fork server RSS / PSS / private",
             "PSS by process kind at the peak"], rows))


def plot(sec: Section, path: str) -> None:
    import matplotlib.pyplot as plt

    d = sec.data
    per = d["per_assignment"]
    fig, (ax_a, ax_t, ax_p) = plt.subplots(1, 3, figsize=(16, 4.6), gridspec_kw={"width_ratios": [1.4, 0.6, 1.2]})
    w = 0.27
    series = [("check", "fxcourse check", "#55a868"), ("grade", "fxcourse grade (hardened)", "#4c72b0"),
              ("plain", "plain nbgrader autograde", "#8c8c8c")]
    for k, (key, label, color) in enumerate(series):
        xs = [i + (k - 1) * w for i in range(len(per))]
        ax_a.bar(xs, [p[key][0] for p in per], w, color=color, label=label)
        ax_a.bar(xs, [p[key][1] for p in per], w * 0.35, color="black", alpha=0.45,
                 label="CPU s (all processes)" if k == 2 else None)
    ax_a.set_xticks(range(len(per)))
    ax_a.set_xticklabels([p["assignment"].split("_")[0] for p in per], fontsize=8)
    ax_a.set_ylabel("seconds")
    t = d["totals"]
    whole = (f"\nwhole course in one command: grade {t['one_run'][0]:.0f} s, --jobs 2 {t['one_run_jobs2'][0]:.0f} s, "
             f"plain '*' {t['plain_one_run'][0]:.0f} s" if "one_run_jobs2" in t else "")
    ax_a.set_title(f"one correct submission (wall; dark: CPU)\nwhole course, per assignment: check "
                   f"{t['check'][0]:.0f} s, grade {t['grade'][0]:.0f} s, plain {t['plain'][0]:.0f} s{whole}",
                   fontsize=8)
    ax_a.legend(fontsize=7)
    thr = d["throughput"]
    modes = [m for m in ("sequential", "parallel", "plain") if m in thr]
    rates = [60 * thr[m]["students"] / thr[m]["wall"] for m in modes]
    ax_t.bar(range(len(modes)), rates, color=["#4c72b0", "#dd8452", "#8c8c8c"][: len(modes)])
    for i, r in enumerate(rates):
        ax_t.text(i, r, f"{r:.1f}", ha="center", va="bottom", fontsize=8)
    ax_t.set_xticks(range(len(modes)))
    ax_t.set_xticklabels([{"sequential": "one at a time", "parallel": "--jobs 2", "plain": "plain nbgrader"}[m]
                          for m in modes], fontsize=8)
    ax_t.set_ylabel("students graded per minute")
    ax_t.set_title(f"class of {thr['students']}, {thr['assignment']}", fontsize=9)
    phases = [p for p in d["phases"] if p["wall"] == p["wall"]]
    colors = {"both": "#c7c7c7", "hardened": "#4c72b0", "plain": "#8c8c8c"}
    colors = {p["side"]: colors.get(p["side"], "#c44e52" if "before" in p["side"] else "#55a868") for p in phases}
    ys = list(range(len(phases)))
    ax_p.barh(ys, [p["wall"] for p in phases], color=[colors[p["side"]] for p in phases])
    ax_p.barh(ys, [p["cpu"] for p in phases], height=0.3, color="black", alpha=0.45)
    ax_p.set_yticks(ys)
    ax_p.set_yticklabels([p["short"] for p in phases], fontsize=8)
    ax_p.invert_yaxis()
    ax_p.set_xlabel("seconds (bar: wall, dark: CPU)")
    ax_p.set_title(f"where the time goes ({d['class_assignment']})\nblue: hardened only, grey: plain only, "
                   "light: both", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
