"""`fxcourse`: the course's command line for learners and instructors: argument parsing only.

Each command is one function of the layer below, called with the command's options as keyword arguments:
the learner's tools (autograder/learner/) and the grader (autograder/grader/). Exit codes
(autograder/course/console.py): 0 success (for `check`: full marks), 1 graded or ran but something failed
(for `check`: points lost), 2 bad input or usage (missing file, not a notebook, unknown assignment), 130
interrupted (Ctrl-C).
"""
from __future__ import annotations

import argparse
import gc
import sys
from typing import NoReturn

from autograder.grader.classroom import batch
from autograder.grader.ops import exchange, judgeservice, nbgrader
from autograder.grader.quality import killrates
from autograder.grader import report
from autograder.course.console import EXIT_INTERRUPTED
from autograder.learner import check, hints, lab, progress, reset, watch

_DB_HELP = ("the gradebook: sqlite:///PATH or postgresql://USER@HOST:PORT/DB (default: nbgrader's "
            "CourseDirectory.db_url, else gradebook.db in the course root)")
_EXCHANGE_HELP = "nbgrader exchange directory (default: nbgrader's configured Exchange.root)"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def _lab_and_check(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("lab", help="open the course in JupyterLab (or run every lesson headless)")
    s.add_argument("--no-browser", action="store_true", help="start the server without opening a browser")
    s.add_argument("--headless", action="store_true", help="run every lesson top to bottom, no server")
    s.add_argument("--port", type=int, default=8888)
    s.add_argument("--timeout", type=float, default=600, help="seconds per lesson with --headless")
    s.set_defaults(func=lab.lab)

    s = sub.add_parser("check", help="grade one filled-in exercise notebook")
    s.add_argument("notebook")
    s.add_argument("--json", action="store_true", dest="as_json", help="print one JSON object")
    s.add_argument("--visible-only", action="store_true", help="only the tests a learner can see")
    s.set_defaults(func=check.check)


def _learner_loop(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("progress", help="which exercises and quiz questions pass (grades every working copy)",
                       description="Grade each exercises/exNN_topic/exNN_topic.ipynb with the real grader (a jailed "
                                   "worker per notebook, about 5-10 s each) and show what passes.")
    s.add_argument("--json", action="store_true", dest="as_json", help="print one JSON object")
    s.add_argument("--visible-only", action="store_true", help="only the tests a learner can see")
    s.set_defaults(func=progress.show)

    s = sub.add_parser("watch", help="check a notebook again each time it is saved",
                       description="Check NOTEBOOK now and after every save (polls its modification time). "
                                   "Ctrl-C stops watching.")
    s.add_argument("notebook")
    s.add_argument("--once", action="store_true", help="check once and exit with fxcourse check's exit code")
    s.add_argument("--interval", type=float, default=1.0, help="seconds between looks at the file (default 1)")
    s.add_argument("--visible-only", action="store_true", help="only the tests a learner can see")
    s.set_defaults(func=watch.watch)

    s = sub.add_parser("reset", help="restore an exercise as released (keeps a backup of your copy)",
                       description="Replace NOTEBOOK with the released exercise, after a timestamped backup beside it. "
                                   "Asks first unless --yes.")
    s.add_argument("notebook")
    s.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    s.set_defaults(func=reset.reset)

    s = sub.add_parser("hint", help="the next hint for a function of an exercise",
                       description="Print the next hint not yet shown (without FUNCTION: for the first function "
                                   "with hints left); which ones were shown is kept in "
                                   f"{hints.HINT_STATE} beside the notebook. Exit 0 when a new hint was shown, 1 when "
                                   "none is left.")
    s.add_argument("notebook")
    s.add_argument("function", nargs="?")
    s.set_defaults(func=hints.hint)


def _instructor_commands(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("generate", help="generate exercises/ from solutions/ with nbgrader")
    s.add_argument("assignment", nargs="*")
    s.add_argument("--check", action="store_true", help="fail if exercises/ differs from a fresh generation")
    s.add_argument("--verbose", action="store_true")
    s.set_defaults(func=nbgrader.generate)

    s = sub.add_parser("grade", help="autograde submitted/<student>/<assignment>/ into the gradebook (hardened)")
    s.add_argument("assignment", nargs="?")
    s.add_argument("--student", action="append", help="only this student (repeatable)")
    s.add_argument("--jobs", "-j", type=_positive_int, default=1, metavar="N",
                   help="grade N submissions at a time, across assignments too (default 1; each uses one core while it "
                        "runs)")
    s.add_argument("--cluster", metavar="tcp://HOST:PORT|local:N",
                   help="grade on Dask: one task per submission to a running scheduler, or N local worker "
                        "processes (docs/cluster.md); a rerun grades only what is not graded yet")
    s.add_argument("--regrade", action="store_true",
                   help="grade again the submissions already graded from the same files (without it a rerun "
                        "grades only what changed or is new)")
    s.add_argument("--db", metavar="URL", help=_DB_HELP)
    s.set_defaults(func=batch.grade)

    s = sub.add_parser("validate", help="run every mutant (hand-written and automatic) and alternative answer "
                                        "against the checks")
    s.add_argument("assignment", nargs="*")
    s.add_argument("--json", action="store_true", dest="as_json")
    s.add_argument("--hand-only", action="store_true", help="skip the automatic mutants (they take a few minutes)")
    s.set_defaults(func=killrates.validate)

    s = sub.add_parser("feedback", help="write feedback/ for graded submissions (no hidden tests, no keys)")
    s.add_argument("assignment", nargs="?")
    s.add_argument("--db", metavar="URL", help=_DB_HELP)
    s.set_defaults(func=nbgrader.feedback)

    s = sub.add_parser("export", help="export the gradebook as CSV")
    s.add_argument("--to", default="grades.csv")
    s.add_argument("--db", metavar="URL", help=_DB_HELP)
    s.set_defaults(func=nbgrader.export)

    s = sub.add_parser("report", help="after grading: item statistics, common mistakes, similar submissions, LMS CSVs",
                       description="Read the gradebook and the autograded notebooks and write DIR/index.html (with "
                                   "plots), the same numbers as CSV and JSON, and the totals as Canvas and Moodle "
                                   "gradebook CSVs. Similar submissions are only flagged; no grade is changed.")
    s.add_argument("assignment", nargs="*", help="the assignments to report (default: every one in the gradebook)")
    s.add_argument("--db", metavar="URL", help=_DB_HELP)
    s.add_argument("--out", default="report", metavar="DIR", help="the folder to write (default: report)")
    s.set_defaults(func=report.report)

    s = sub.add_parser("release", help="release an assignment to the students through nbgrader's exchange")
    s.add_argument("assignment")
    s.add_argument("--due", metavar="DATE", help="due date recorded in the gradebook, e.g. '2026-12-08 17:00 UTC'")
    s.add_argument("--force", action="store_true", help="replace a release already in the exchange")
    s.add_argument("--exchange", metavar="PATH", help=_EXCHANGE_HELP)
    s.set_defaults(func=exchange.release)

    s = sub.add_parser("collect", help="collect the students' latest submissions into submitted/ (flags late ones)")
    s.add_argument("assignment")
    s.add_argument("--exchange", metavar="PATH", help=_EXCHANGE_HELP)
    s.set_defaults(func=exchange.collect)

    s = sub.add_parser("judge-service", help="judge students' visible tests for them: the hub's service, run as the "
                                             "instructor in the course folder (docs/jupyterhub.md)")
    s.add_argument("--port", type=int, help="default: the port of JUPYTERHUB_SERVICE_URL, as the hub gives it")
    s.add_argument("--ip", dest="host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--judges", type=_positive_int, default=2, metavar="N",
                   help="judge processes, each judging one request at a time (default 2)")
    s.set_defaults(func=judgeservice.serve)

    s = sub.add_parser("release-feedback", help="put feedback/ of an assignment in the exchange for the students")
    s.add_argument("assignment")
    s.add_argument("--exchange", metavar="PATH", help=_EXCHANGE_HELP)
    s.set_defaults(func=exchange.release_feedback)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fxcourse", description="The torch.fx course: lessons, exercises, grading.")
    sub = p.add_subparsers(dest="command", required=True)
    _lab_and_check(sub)  # in the order `fxcourse --help` lists them
    _instructor_commands(sub)
    _learner_loop(sub)
    for s in sub.choices.values():
        s.add_argument("--course", help="course root (default: found from the notebook or the current folder)")
    return p


def main(argv: list[str] | None = None) -> int:
    options = vars(build_parser().parse_args(argv))
    del options["command"]
    run = options.pop("func")
    try:
        return run(**options)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def run() -> NoReturn:
    """The `fxcourse` program: one command (`main`), then exit with its code. What the command's imports made is
    frozen first (gc.freeze): the interpreter's last collections at exit would walk every one of those objects for
    nothing (about 0.2 s of each command on a slow core; the memory goes back with the process)."""
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    run()
