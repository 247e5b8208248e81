"""`fxcourse report`: what an instructor needs after grading to teach the next week.

From the gradebook (SQLite or PostgreSQL, read in SQL: data.py) and the autograded notebooks it writes, into
one folder: index.html with plots, the same numbers as CSV and report.json, and the totals as Canvas and Moodle
gradebook CSVs (lms.py). The parts:

- data.py        the gradebook and the autograded notebooks, read
- stats.py       per assignment (scores, tests' pass rates, late and missing), quiz item analysis, common mistakes
- similarity.py  pairs of students alike beyond chance (fingerprints of normalised code, rare shared diagnoses)
- render.py      the HTML page, its plots, the CSV and JSON files
- lms.py         the Canvas and Moodle CSVs
- progress.py    what it prints while it works
- synthetic.py   a class whose truth is known (planted mistakes, copies), for the tests and the benchmark

It only reads: no grade is changed, and similar pairs are flags for an instructor to look at, never a verdict.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from autograder.grader.console import EXIT_OK, err
from autograder.grader.gradebook import GradebookError, gradebook_url
from autograder.grader.report.progress import Progress
from autograder.grader.root import find_course

# the rest (torch comes with the quiz data's judge) is imported when a report is made: `fxcourse` starts light

__all__ = ["report", "build", "similarity_of"]


def similarity_of(data, progress: Progress):
    """(Similarity, each pair's code score): every answer cell of a graded function fingerprinted (the release's
    own code left out), then paired."""
    from autograder.grader.report.similarity import fingerprints, similar_pairs

    cells: dict[str, dict[str, set[int]]] = {}
    diagnoses: dict[str, dict[str, str]] = {}
    sizes: dict[str, int] = {}
    progress.stage("fingerprinting answer cells", sum(len(a.submissions) for a in data.assignments))
    for a in data.assignments:
        release = {fn: fingerprints(a.release.get(fn, "")) for fn in a.functions}
        for fn in a.functions:
            where = f"{a.name}/{fn}"
            sizes[where] = len(a.submissions)
            cells[where], diagnoses[where] = {}, {}
        for student, sub in a.submissions.items():
            for fn in a.functions:
                where = f"{a.name}/{fn}"
                if fn in sub.answers:
                    cells[where][student] = fingerprints(sub.answers[fn]) - release[fn]
                failure = sub.failures.get(f"test_{fn}")
                if failure is not None:
                    diagnoses[where][student] = failure.diagnosis
            progress.advance()
    progress.stage("pairing similar submissions", 1)
    sim = similar_pairs(cells, diagnoses, sizes)
    progress.advance()
    return sim, sim.scores


def build(course_root: Path, url: str, assignments: list[str] | None, out: Path,
          progress: Progress) -> dict[str, Any]:
    """Read, compute and write the whole report; what it found, for the caller to print or test."""
    from autograder.grader.report.data import read_class
    from autograder.grader.report.render import write_all
    from autograder.grader.report.stats import class_stats
    from autograder.grader.root import Course

    data = read_class(Course(course_root), url, assignments or None, progress)
    progress.stage("item statistics and common mistakes", len(data.assignments))
    stats = class_stats(data)
    progress.advance(len(data.assignments))
    sim, scores = similarity_of(data, progress)
    write_all(out, data, stats, sim, scores, progress)
    progress.close()
    return {"data": data, "stats": stats, "similarity": sim, "timings": dict(progress.timings)}


def report(assignment: list[str] | None = None, db: str | None = None, out: str = "report",
           course: str | None = None, progress: Progress | None = None) -> int:
    """`fxcourse report [ASSIGNMENT ...] [--db URL] [--out DIR]`."""
    start = time.perf_counter()
    try:
        found = find_course(Path.cwd(), course)
        url = gradebook_url(found, db)
    except ValueError as exc:
        return err(f"--db: {exc}")
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).is_file():
        return err(f"no gradebook at {url[len('sqlite:///'):]}: grade the class first (fxcourse grade), or name "
                   "the gradebook with --db")
    target = Path(out).resolve()
    if target.exists() and not target.is_dir():
        return err(f"--out {out}: not a folder")
    from autograder.grader.report.data import ReportError

    progress = progress or Progress()
    try:
        result = build(found.root, url, list(assignment or []), target, progress)
    except (ReportError, GradebookError) as exc:
        progress.close()
        return err(str(exc))
    sim = result["similarity"]
    flagged = sum(p.flagged for p in sim.pairs)
    print(f"report written to {target / 'index.html'} ({len(result['data'].students)} students, "
          f"{len(result['data'].assignments)} assignments, {flagged} similar pair{'s' if flagged != 1 else ''} "
          f"flagged for a look; no grade changed) in {time.perf_counter() - start:.1f} s")
    print(f"  for the LMS: {target / 'canvas.csv'}, {target / 'moodle.csv'}")
    return EXIT_OK
