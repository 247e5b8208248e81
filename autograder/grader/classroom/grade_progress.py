"""What grading a class prints: one line (or a live bar) per submission, then each student's score."""
from __future__ import annotations

import sys
import threading

__all__ = ["GradeProgress", "AssignmentProgress", "print_summary"]


class GradeProgress:
    """What a batch has done. On a terminal: a live bar (rich) with graded, failed and remaining counts and an
    ETA, failures printed above it. Otherwise: one `[k/n] student: graded (s)` line per submission."""

    def __init__(self, total: int, live: bool | None = None, console=None) -> None:
        self.total, self.done, self.graded = total, 0, 0
        self.not_graded: set[str] = set()
        self.reasons: dict[str, str] = {}
        self._lock = threading.Lock()
        self._bar = None
        live = sys.stdout.isatty() if live is None else live
        if live and total:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                 TextColumn("[green]graded {task.fields[graded]}[/]  [red]failed "
                                            "{task.fields[failed]}[/]  remaining {task.fields[remaining]}"),
                                 TextColumn("ETA"), TimeRemainingColumn(), TimeElapsedColumn(),
                                 console=console or Console(), transient=False)
            self._task = self._bar.add_task("grading", total=total, graded=0, failed=0, remaining=total)
            self._bar.start()

    @property
    def failed(self) -> bool:
        return bool(self.not_graded)

    def report(self, student: str, ok: bool, took: float, why: str = "") -> None:
        with self._lock:
            self.done += 1
            if ok:
                self.graded += 1
                line = f"  [{self.done}/{self.total}] {student}: graded ({took:.1f} s)"
            else:
                self.not_graded.add(student)
                self.reasons[student] = why
                line = f"  [{self.done}/{self.total}] {student}: NOT GRADED ({took:.1f} s): {why}"
            if self._bar is None:
                print(line, flush=True)
                return
            if not ok:
                self._bar.console.print(line, markup=False, highlight=False)
            self._bar.update(self._task, advance=1, graded=self.graded, failed=len(self.not_graded),
                             remaining=self.total - self.done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


class AssignmentProgress:
    """One assignment's share of a run that grades several side by side: its lines (on the run's one
    GradeProgress) name the assignment, and it keeps which of its own submissions were not graded."""

    def __init__(self, run: GradeProgress, assignment: str) -> None:
        self.run, self.assignment = run, assignment
        self.not_graded: set[str] = set()

    @property
    def failed(self) -> bool:
        return bool(self.not_graded)

    def report(self, student: str, ok: bool, took: float, why: str = "") -> None:
        if not ok:
            self.not_graded.add(student)
        self.run.report(f"{self.assignment}, {student}", ok, took, why)


def print_summary(assignment: str, progress: GradeProgress | AssignmentProgress, db: str) -> None:
    """Each student's score of `assignment` in the gradebook at `db`; a submission this run could not grade is
    marked NOT GRADED."""
    from autograder.grader.classroom.gradebook import submission_scores

    scores = submission_scores(db, assignment)
    print(f"summary of {assignment}:")
    for student, score, max_score in scores:
        if student in progress.not_graded:
            print(f"  {student:<20} NOT GRADED (see above; the gradebook holds {score:g} / {max_score:g})")
        else:
            print(f"  {student:<20} {score:g} / {max_score:g}")
