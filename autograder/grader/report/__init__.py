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

from autograder.course.console import EXIT_OK, err
from autograder.grader.classroom.gradebook import GradebookError, gradebook_url
from autograder.grader.report.progress import Progress
from autograder.course.root import find_course

# the rest (torch comes with the quiz data's judge) is imported when a report is made: `fxcourse` starts light

__all__ = ["report", "build", "similarity_of"]


PARALLEL_FROM = 3000  # answer cells: from this many on, fingerprinting runs in WORKERS processes
WORKERS = 2


def _fingerprint_chunk(sources: list[str]) -> list[set[int]]:
    from autograder.grader.report.similarity import fingerprints

    return [fingerprints(s) for s in sources]


def fingerprint_all(sources: list[str], progress: Progress) -> list[set[int]]:
    """The fingerprint of each source, in order: in WORKERS processes for a large class (parsing is most of the
    report's work), here for a small one."""
    size = max(1, len(sources) // 32)
    chunks = [sources[i:i + size] for i in range(0, len(sources), size)]
    out: list[set[int]] = []
    if len(sources) < PARALLEL_FROM:
        for chunk in chunks:
            out += _fingerprint_chunk(chunk)
            progress.advance(len(chunk))
        return out
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # forked (a spawned worker would import the caller's main module again); a worker only parses text, so the
    # progress bar's thread, which it does not inherit, holds nothing it needs
    with ProcessPoolExecutor(WORKERS, mp_context=multiprocessing.get_context("fork")) as pool:
        for chunk, done in zip(chunks, pool.map(_fingerprint_chunk, chunks)):
            out += done
            progress.advance(len(chunk))
    return out


def similarity_of(data, progress: Progress):
    """(Similarity, each candidate pair's score): every answer cell of a graded function fingerprinted (the
    release's own code left out), then paired."""
    from autograder.grader.report.similarity import fingerprints, similar_pairs

    cells: dict[str, dict[str, set[int]]] = {}
    diagnoses: dict[str, dict[str, str]] = {}
    sizes: dict[str, int] = {}
    jobs: list[tuple[str, str, str]] = []
    for a in data.assignments:
        for fn in a.functions:
            where = f"{a.name}/{fn}"
            sizes[where] = len(a.submissions)
            cells[where], diagnoses[where] = {}, {}
        for student, sub in a.submissions.items():
            for fn in a.functions:
                where = f"{a.name}/{fn}"
                if fn in sub.answers:
                    jobs.append((where, student, sub.answers[fn]))
                failure = sub.failures.get(f"test_{fn}")
                if failure is not None:
                    diagnoses[where][student] = failure.diagnosis
    progress.stage("fingerprinting answer cells", len(jobs))
    release = {f"{a.name}/{fn}": fingerprints(a.release.get(fn, "")) for a in data.assignments for fn in a.functions}
    for (where, student, _), found in zip(jobs, fingerprint_all([j[2] for j in jobs], progress)):
        cells[where][student] = found - release[where]
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
    from autograder.course.root import Course

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
