"""Grading a class through nbgrader: `fxcourse grade`, one nbgrader process per group of submissions.

Each grader is its own nbgrader process (the hardened `nbgrader autograde` of autograder/nbgrader_config.py),
kept for the whole run (`Session`: one `autograde` command after another, so nbgrader's start-up and imports are
paid once per grader, not per assignment or per student) and forked by one process that imported nbgrader once
for them all (autograder.grader.nbfork, so they are paid once per run); each submission runs in its own jailed
worker: side by side they cannot affect each other's scores, and time limits count CPU seconds, so a busy machine
fails no one. A group of submissions is one command, and its log says how each went (`BatchLog`); a submission that
goes past its own time limit stops the command and is reported not graded, and the rest of the group goes on in a
new command; whatever a command did not get to otherwise is graded again one student per process. `--cluster` hands the work to autograder.grader.cluster
instead.
"""
from __future__ import annotations

import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

from autograder.grader.console import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, deferred_interrupt, err
from autograder.grader.grade_progress import AssignmentProgress, GradeProgress, print_summary
from autograder.grader.grading import too_long
from autograder.grader.nbfork import Child, Forker
from autograder.grader.nbgrader import Session, command as nbgrader_command, generate_into, known_assignments, why
from autograder.grader.root import Course, find_course
from autograder.grader.sandbox import IsolationError, Limits, require_isolation

__all__ = ["Graders", "Sessions", "BatchLog", "grading_order", "autograde_one", "grade_alone", "grade_batch",
           "ensure_assignment", "grade"]

_STARTS = re.compile(r"Creating/updating student with ID '(.*)': ")
# nbgrader's two ways of failing one submission and going on with the next (its convert_notebooks)
_FAILED_ONE = re.compile(r"There was an error processing assignment: |While processing assignment .*, the kernel")
_SUMMARY = re.compile(r"There was an error processing assignment '(.*)' for student '(.*)'$")
_GRACE = 30.0  # seconds an nbgrader command gets beyond a submission's own limit before it is killed from outside


class Graders:
    """The nbgrader processes `fxcourse grade` has running, so that an interrupt can stop them all."""

    def __init__(self, db: str | None = None) -> None:
        self.stopping = threading.Event()
        self.db = db  # --db: the gradebook every nbgrader started here writes to (None: the configured one)
        self._procs: set[subprocess.Popen | Child] = set()
        self._lock = threading.Lock()
        self.forker = Forker()  # the kept nbgrader processes' fork process (nbfork), started with the first

    def start(self, cmd: list[str], env: dict[str, str] | None, cwd: Path, stdin=subprocess.DEVNULL,
              **kw) -> subprocess.Popen | None:
        """Start one nbgrader (None once stopping)."""
        with self._lock:
            if self.stopping.is_set():
                return None
            proc = subprocess.Popen(cmd, cwd=cwd, env=env, text=True, errors="replace", stdin=stdin, **kw)
            self._procs.add(proc)
            return proc

    def start_kept(self, cmd: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen | Child | None:
        """Start one kept nbgrader process (nbgrader.Session's), forked by the run's nbgrader fork process where
        it can be (None once stopping)."""
        with self._lock:
            if self.stopping.is_set():
                return None
            proc = self.forker.fork(cmd, env, cwd) or subprocess.Popen(
                cmd, cwd=cwd, env=env, text=True, errors="replace", stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT)
            self._procs.add(proc)
            return proc

    def finished(self, proc: subprocess.Popen | Child) -> None:
        with self._lock:
            self._procs.discard(proc)

    def close(self) -> None:
        """The run is over: the nbgrader fork process ends (once the sessions it forked have)."""
        self.forker.close()

    def stop(self, grace: float = 20.0) -> None:
        """SIGINT to every running nbgrader (it stops its jailed worker and removes the submission it was
        writing), SIGKILL to any still running after `grace` seconds; start no new one."""
        with self._lock:
            self.stopping.set()
            procs = list(self._procs)
        for proc in procs:
            try:
                proc.send_signal(signal.SIGINT)
            except OSError:
                pass
        deadline = time.monotonic() + grace
        for proc in procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class Sessions:
    """The kept nbgrader processes of one `fxcourse grade` run: a grader thread takes a free one (or starts
    one) for each group of submissions and gives it back, so a run with `--jobs N` keeps at most N."""

    def __init__(self, course: Course, graders: Graders) -> None:
        self.course, self.graders = course, graders
        self._free: queue.SimpleQueue[Session] = queue.SimpleQueue()
        self._all: list[Session] = []
        self._lock = threading.Lock()

    def _add(self) -> Session:
        """A new kept session, counted for close(); its process starts on Session.start or its first command."""
        with self._lock:
            session = Session(self.course, self.graders)
            self._all.append(session)
            return session

    def take(self) -> Session:
        try:
            return self._free.get_nowait()
        except queue.Empty:
            return self._add()

    def prestart(self, n: int) -> None:
        """Start `n` kept processes now, free for the graders to take: their start-up (Python, nbgrader's imports)
        then overlaps with what the run does before its first group."""
        for _ in range(n):
            session = self._add()
            session.start()
            self._free.put(session)

    def give_back(self, session: Session) -> None:
        self._free.put(session)

    def close(self) -> None:
        with self._lock:
            sessions = list(self._all)
        for session in sessions:  # all told first, so that they end side by side
            session.end_input()
        for session in sessions:
            session.close()


def autograde_one(course: Course, name: str, student: str,
                  graders: Graders) -> tuple[subprocess.CompletedProcess | None, float]:
    """One student's submission through the hardened `nbgrader autograde` (None: stopped before it ran).
    Graders running side by side share the gradebook (SQLite): a write that meets another's lock fails as a
    whole, so it is retried."""
    start = time.monotonic()
    r = None
    for attempt in range(4):
        cmd, env = nbgrader_command(course, "autograde", name, f"--student={student}", "--create", "--force",
                                    db=graders.db)
        proc = graders.start(cmd, env, course.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if proc is None:
            return None, time.monotonic() - start
        try:
            out, errors = proc.communicate(timeout=Limits.from_env().submission_wall() + _GRACE)
        except subprocess.TimeoutExpired:  # bounded: a hung grader is stopped and reported, the batch goes on
            proc.kill()
            out, errors = proc.communicate()
            errors += f"\nERROR: {too_long()}\n"
        graders.finished(proc)
        r = subprocess.CompletedProcess(cmd, proc.returncode, out, errors)
        if r.returncode == 0 or "database is locked" not in r.stdout + r.stderr or graders.stopping.is_set():
            break
        time.sleep(0.5 + attempt)
    return r, time.monotonic() - start


def grade_alone(course: Course, name: str, students: list[str], progress: GradeProgress | AssignmentProgress,
                graders: Graders) -> None:
    """Each of `students` in an nbgrader process of its own, one after another."""
    for student in students:
        r, took = autograde_one(course, name, student, graders)
        if r is None or graders.stopping.is_set():
            return
        progress.report(student, r.returncode == 0, took, why((r.stdout + r.stderr).splitlines()))


class BatchLog:
    """Reads the log of one nbgrader process grading `group`, line by line: a student whose grading ended
    without nbgrader's error line is reported graded at once; one that failed is kept (with its reason) until
    the process is known to have gone through the whole group (`went_through`). Each submission has its own
    time (`deadline`): one that goes past it is stopped alone (`stopped`)."""

    def __init__(self, group: list[str], progress: GradeProgress | AssignmentProgress) -> None:
        self.group, self.progress = set(group), progress
        self.wall = Limits.from_env().submission_wall()
        self.finished: set[str] = set()      # reported to `progress`
        self.failures: dict[str, tuple[float, str]] = {}
        self.summarized = False              # nbgrader printed its closing list of failures
        self._current: str | None = None
        self._failed, self._lines, self._start = False, [], time.monotonic()

    def read(self, line: str) -> None:
        m = _STARTS.search(line)
        if m and m.group(1) in self.group:
            self._close()
            self._current, self._failed, self._lines, self._start = m.group(1), False, [], time.monotonic()
        elif _SUMMARY.search(line.rstrip()):
            self._close()
            self.summarized = True
        else:
            self._lines.append(line)
            self._failed = self._failed or bool(_FAILED_ONE.search(line))

    def _close(self) -> None:
        if self._current is not None and not self._failed:
            self.progress.report(self._current, True, time.monotonic() - self._start)
            self.finished.add(self._current)
        elif self._current is not None:
            self.failures[self._current] = (time.monotonic() - self._start, why(self._lines))
        self._current = None

    def deadline(self) -> float:
        """The time.monotonic() by which the command must be done with the submission it is on (or, before the
        first, with its start): one submission's limit after it began, and a grace. The grading stops itself at
        that limit (grading.grade_restored: nbgrader then reports the submission and goes on); this deadline
        stops what cannot stop itself (nbgrader stuck outside the grading)."""
        return self._start + self.wall + _GRACE

    def stopped(self) -> None:
        """The command was stopped at `deadline`: the submission it was on is reported not graded (it is not
        tried again); the others it had not finished are left to be graded again."""
        if self._current is not None:
            self.progress.report(self._current, False, time.monotonic() - self._start, too_long())
            self.finished.add(self._current)
            self._current = None

    def went_through(self) -> None:
        """The process graded its whole group: the last student and the failures are reported too, but for a
        failure to write to a locked gradebook (another grader's write), which is left to be graded again."""
        self._close()
        for student, (took, reason) in self.failures.items():
            if "database is locked" in reason:
                continue
            self.progress.report(student, False, took, reason)
            self.finished.add(student)


def grade_batch(course: Course, name: str, group: list[str], everyone: list[str],
                progress: GradeProgress | AssignmentProgress,
                graders: Graders | None = None, sessions: Sessions | None = None) -> None:
    """Grade `group` (of `everyone` who submitted `name`) as ONE nbgrader command, in a kept nbgrader process
    of `sessions` (one of its own when None); nbgrader isolates each submission's failure. A submission whose
    grading goes past its own limit (FXCOURSE_SUBMISSION_TIMEOUT) stops the command: it is reported not graded,
    once, and the rest of the group goes on in a new command. Whatever a command did not get to otherwise (its
    process died, or the gradebook stayed locked) is graded again one student per process."""
    own_graders = graders is None
    graders = graders or Graders()
    own = sessions is None
    sessions = sessions or Sessions(course, graders)
    try:
        if any(set(s) & set(",*?[]") for s in everyone):  # not expressible as nbgrader's exclude list
            grade_alone(course, name, group, progress, graders)
            return
        left = list(group)
        while left:
            others = [s for s in everyone if s not in left]
            argv = ["autograde", name, f"--student={left[0]}" if len(left) == 1 else "--student=*", "--create",
                    "--force"]
            if len(left) > 1 and others:
                argv.append(f"--CourseDirectory.student_id_exclude={','.join(others)}")
            log = BatchLog(left, progress)
            session = sessions.take()
            try:
                code = session.run(argv, log.read, log.deadline)
            finally:
                sessions.give_back(session)
            if graders.stopping.is_set():  # interrupted: what was graded is reported, nothing more is started
                return
            if code == 0 or log.summarized:
                log.went_through()
            elif session.timed_out:
                log.stopped()
            rest = [s for s in left if s not in log.finished]
            if session.timed_out and len(rest) < len(left):
                left = rest  # one submission went past its limit: the others in a new command
                continue
            # The command stopped early: the student it was on, and those it never reached, are graded alone.
            grade_alone(course, name, rest, progress, graders)
            return
    finally:
        if own:
            sessions.close()
        if own_graders:
            graders.close()


def ensure_assignment(course: Course, name: str, db: str) -> str | None:
    """Make sure the gradebook knows the assignment's notebooks and cells (a new PostgreSQL gradebook does not):
    nbgrader's generate_assignment writes them, into a temporary release folder. None, or what went wrong."""
    from autograder.grader.gradebook import knows_assignment

    if knows_assignment(db, name):
        return None
    with tempfile.TemporaryDirectory(prefix="fxcourse-release-") as tmp:
        r = generate_into(course, name, tmp, db=db)
    if r.returncode != 0:
        return f"nbgrader could not add {name} to the gradebook: {why((r.stdout + r.stderr).splitlines())}"
    return None


# -------------------------------------------------------------------------------------- the command

def grade(assignment: str | None = None, student: list[str] | None = None, jobs: int = 1, cluster: str | None = None,
          regrade: bool = False, db: str | None = None, course: str | None = None) -> int:
    """`fxcourse grade`: autograde submitted/<student>/<assignment>/ into the gradebook, `jobs` at a time here
    (hardened: refused where the jail is missing) or on the Dask cluster `cluster`."""
    from autograder.grader.cluster import parse_cluster
    from autograder.grader.gradebook import GradebookError, gradebook_url, parse_db_url

    found = find_course(Path.cwd(), course)
    names = known_assignments(found, [assignment] if assignment else [])
    if names is None:
        return EXIT_USAGE
    for flag, value, parse in (("--cluster", cluster, parse_cluster), ("--db", db, parse_db_url)):
        try:
            if value:
                parse(value)
        except ValueError as exc:
            return err(f"{flag}: {exc}")
    if cluster and jobs != 1:
        return err("--jobs and --cluster do not go together: --cluster local:N starts N workers, a scheduler "
                   "decides for tcp://HOST:PORT")
    submitted = found.root / "submitted"
    if not submitted.is_dir():
        return err(f"no submissions: {submitted} does not exist (expected submitted/<student>/<assignment>/)")
    if assignment and student:
        missing = [s for s in student if not (submitted / s / assignment).is_dir()]
        if missing:
            return err(f"no submission from student {missing[0]!r} for {assignment}: expected a folder "
                       f"{submitted / missing[0] / assignment}")
    if not cluster:  # hardened grading here: refuse, naming what is missing, unless opted out
        from autograder.grader import forkserver

        # One fork server for the whole run (every nbgrader process started here shares it), started first: its
        # imports overlap with the jail's trial. Refused, the run stops it before it has forked anything.
        forkserver.prestart()
        try:
            require_isolation()
        except IsolationError as exc:
            forkserver.stop()
            return err(str(exc))
    work = []
    for name in names:
        everyone = sorted(p.parent.name for p in submitted.glob(f"*/{name}") if p.is_dir())
        students = [s for s in everyone if s in student] if student else everyone
        if students:
            work.append((name, students, everyone))
    graders = Graders(parse_db_url(db) if db else None)
    sessions = Sessions(found, graders)  # nbgrader started once per grader for the whole run
    try:
        if not cluster:  # started now, they get ready while the gradebook is read below
            sessions.prestart(min(jobs, len(grading_order(work, jobs))))
        url = gradebook_url(found, db)
        try:
            for name, _, _ in work:
                problem = ensure_assignment(found, name, url)
                if problem:
                    return err(problem) and EXIT_FAILED
        except GradebookError as exc:
            return err(str(exc)) and EXIT_FAILED
        if cluster:
            from autograder.grader.cluster import grade_class

            return grade_class(found, [(n, s) for n, s, _ in work], url, cluster, regrade)
        if jobs > 1:  # the graders shared across the assignments
            return _grade_work(found, work, jobs, graders, url, sessions)
        status = EXIT_OK
        for item in work:  # one at a time: each assignment's lines and summary before the next
            status = max(status, _grade_work(found, [item], jobs, graders, url, sessions))
            if status == EXIT_INTERRUPTED:
                return status
        return status
    finally:
        sessions.close()
        graders.close()


def grading_order(work: list[tuple[str, list[str], list[str]]], jobs: int) -> list[tuple[str, list[str], list[str]]]:
    """(assignment, group, everyone) of each group of submissions, up to `jobs` groups per assignment, in the order
    the graders take them: the longest first, so that no long one is left to run alone at the end. That is the
    largest groups, and of groups alike the later assignments (a course's later exercises build on the earlier
    ones and check more)."""
    units = []
    for position, (name, students, everyone) in enumerate(work):
        k = min(jobs, len(students))
        units += [(position, name, students[i::k], everyone) for i in range(k)]
    return [u[1:] for u in sorted(units, key=lambda u: (-len(u[2]), -u[0]))]


def _grade_work(course: Course, work: list[tuple[str, list[str], list[str]]], jobs: int, graders: Graders,
                url: str, sessions: Sessions) -> int:
    """The (assignment, students, everyone) of `work` with `jobs` graders side by side: each assignment's
    submissions in up to `jobs` groups, and the next group (of this assignment or the next) starts as soon as a
    grader is free, so that a course with few students per assignment keeps every grader busy too. With several
    assignments each line names its own; the summaries follow, in course order. The exit code."""
    total = sum(len(students) for _, students, _ in work)
    if len(work) == 1:
        name, students, _ = work[0]
        at_once = min(jobs, len(students))
        print(f"grading {name}: {total} submission(s)" + (f", {at_once} at a time" if at_once > 1 else ""), flush=True)
    else:
        print(f"grading {len(work)} assignments: {total} submission(s), {jobs} at a time", flush=True)
    run = GradeProgress(total)
    shares: dict = {work[0][0]: run} if len(work) == 1 else {name: AssignmentProgress(run, name) for name, _, _ in work}
    units = grading_order(work, jobs)
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        with deferred_interrupt() as check:  # a Ctrl-C is raised here, never inside a future's locked wait
            pending = {pool.submit(grade_batch, course, name, group, everyone, shares[name], graders, sessions)
                       for name, group, everyone in units}
            while pending:
                check()
                done, pending = wait(pending, timeout=0.1)
                for future in done:
                    future.result()
    except KeyboardInterrupt:
        graders.stop()
        pool.shutdown(wait=True, cancel_futures=True)
        run.close()
        of = f" of {work[0][0]}" if len(work) == 1 else ""
        print(f"fxcourse: interrupted: {run.done} of {total} submission(s){of} graded; the others keep the grades "
              "they had (run the command again to finish)", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED
    pool.shutdown(wait=True)
    run.close()
    for name, _, _ in work:
        print_summary(name, shares[name], url)
    return EXIT_FAILED if run.failed else EXIT_OK
