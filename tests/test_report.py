"""`fxcourse report` on a class whose truth is known (autograder/grader/report/synthetic.py): answers taken from
the course's solutions, alternatives and mutants (their verdicts the course's checks give, run here), planted
common mistakes, quiz answers of a known model, copied pairs with renamed variables, moved statements and changed
comments, and independent pairs alike only because the task forces it. Also: item statistics against values
worked out by hand, the LMS CSVs read back, the page opened in chromium, the command's errors."""
from __future__ import annotations

import csv
import json
import os
import re
from datetime import datetime
from pathlib import Path

import pytest

from autograder.cli import main
from autograder.coursedata.exercises import EXERCISES
from autograder.coursedata.sections import SECTIONS
from autograder.grader.classroom.gradebook import submission_scores
from autograder.grader.report import build
from autograder.grader.report.data import Assignment, Submission
from autograder.grader.report.lms import CANVAS_COLUMNS, MOODLE_COLUMNS
from autograder.grader.report.progress import Progress
from autograder.grader.report.similarity import fingerprints
from autograder.grader.report.stats import item_analysis, point_biserial, upper_lower
from autograder.grader.report.synthetic import make_class, pair_quality

from conftest import ROOT

ASSIGNMENTS = ["ex01_tracing", "ex02_nodes", "ex03_replacing", "ex05_inserting", "ex06_fusing"]
REAL = ("ex01_tracing", "ex02_nodes")  # verdicts run through the course's checks (a second or two each)


@pytest.fixture(scope="module")
def known(tmp_path_factory):
    """A class of 60 (3 copied pairs, 3 forced pairs) over five assignments, and its report made by the command."""
    root = tmp_path_factory.mktemp("class") / "course"
    truth = make_class(ROOT, root, ASSIGNMENTS, 60, seed=1, real_verdicts=REAL)
    out = root / "report"
    cwd = os.getcwd()
    os.chdir(root)
    try:
        code = main(["report", "--course", str(root), "--out", str(out)])
    finally:
        os.chdir(cwd)
    assert code == 0
    return truth, out, json.loads((out / "report.json").read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------------- item statistics by hand

def _quiz_assignment(choices: dict[str, str], other: dict[str, float], key: str = "B") -> Assignment:
    """One question (key `key`, options A-D, worth 1 point) and the rest of each student's score in `other`."""
    subs = {}
    for s, letter in choices.items():
        right = 1.0 if letter == key else 0.0
        subs[s] = Submission(s, score=right + other[s], points={"test_quiz_q1": right, "test_f": other[s]},
                             answers={"quiz_q1": f'q1 = "{letter}"\n'})
    q = {"id": "q1", "question": "?", "options": {k: k for k in "ABCD"}, "key": key, "section": "Lesson 01"}
    return Assignment("exq", None, 1.0 + max(other.values()), {"test_f": 9.0, "test_quiz_q1": 1.0}, [], [q], {}, subs)


def test_item_statistics_match_values_worked_out_by_hand():
    # s1..s5 chose B B A B C (key B): right 1 1 0 1 0; totals 5 4 3 2 1, so the rest of the score is 4 3 3 1 1.
    a = _quiz_assignment({"s1": "B", "s2": "B", "s3": "A", "s4": "B", "s5": "C"},
                         {"s1": 4, "s2": 3, "s3": 3, "s4": 1, "s5": 1})
    (row,) = item_analysis(a)
    assert row["difficulty"] == pytest.approx(3 / 5)
    # point-biserial = (M1 - M0) / s * sqrt(p q): M1 = (4+3+1)/3, M0 = (3+1)/2, s = sqrt(7.2/5) = 1.2, p q = 0.24
    assert row["point_biserial"] == pytest.approx((8 / 3 - 2) / 1.2 * 0.24 ** 0.5)
    assert row["point_biserial"] == pytest.approx(0.272166, abs=1e-6)
    # groups of round(0.27 * 5) = 1: the top (s1, right) minus the bottom (s5, wrong)
    assert row["upper_lower"] == 1.0
    assert row["options"] == {"A": 1, "B": 3, "C": 1, "D": 0} and row["no_answer"] == 0
    assert row["flags"] == ["distractor nobody picks: D"]


def test_a_question_the_weaker_students_get_right_is_flagged_negative():
    # right: s3, s4, s5 (totals 1+3=4? no: rest 3 1 1 -> totals 4 2 2); wrong: s1, s2 (rest 4 3 -> totals 4 3)
    a = _quiz_assignment({"s1": "A", "s2": "C", "s3": "B", "s4": "B", "s5": "B"},
                         {"s1": 4, "s2": 3, "s3": 3, "s4": 1, "s5": 1})
    (row,) = item_analysis(a)
    # rest 4 3 3 1 1, right 0 0 1 1 1: M1 = 5/3, M0 = 7/2, s = 1.2, p q = 0.24 -> r = (5/3 - 7/2) / 1.2 * sqrt(0.24)
    assert row["point_biserial"] == pytest.approx((5 / 3 - 3.5) / 1.2 * 0.24 ** 0.5)
    # totals 4 3 4 2 2; by (total, id) the bottom is s4 (right), the top s3 (right): 1 - 1 = 0
    assert row["upper_lower"] == 0.0
    assert row["flags"][0].startswith("negative discrimination (r = -0.75)")
    assert "distractor nobody picks: D" in row["flags"]


def test_discrimination_is_none_where_nothing_varies():
    assert point_biserial([1, 1, 1], [3.0, 2.0, 1.0]) is None
    assert upper_lower([1], [1.0], ["s"]) is None


def test_report_item_statistics_agree_with_the_planted_answers(known):
    truth, _, rep = known
    for row in rep["items"]:
        chosen = [c[row["question"]] for (s, a), c in truth.choices.items() if a == row["assignment"]]
        assert row["answered"] == len(chosen)
        assert row["difficulty"] == pytest.approx(sum(c == row["key"] for c in chosen) / len(chosen))
        assert row["options"] == {k: chosen.count(k) for k in row["options"]}
    # the last question of each quiz is planted without discrimination and with a distractor nobody picks
    last = {}
    for row in rep["items"]:
        last[row["assignment"]] = row
    for row in last.values():
        assert any(f.startswith("distractor nobody picks") for f in row["flags"]), row


# ------------------------------------------------------------------------------------------- common mistakes

def test_the_planted_common_mistake_is_ranked_first_with_its_hint_and_section(known):
    truth, _, rep = known
    checked = 0
    for m in rep["mistakes"]:
        where = f"{m['assignment']}/{m['function']}"
        if where not in truth.common:
            continue
        first = m["mistakes"][0]
        assert first["hint"] == truth.common[where] or first["diagnosis"] == truth.common[where], (where, first)
        assert first["students"] > m["mistakes"][1]["students"] if len(m["mistakes"]) > 1 else True
        assert m["section"] == SECTIONS[m["assignment"]][m["function"]]
        assert first["example"] and "#" not in first["example"] and not re.search(r"s\d{4}", first["example"])
        checked += 1
    assert checked >= 15


def test_every_graded_function_has_a_lesson_section_that_exists():
    for ex in EXERCISES:
        assert set(SECTIONS[ex.id]) == set(ex.functions), ex.id
        lesson = json.loads((ROOT / "lessons" / f"{ex.lesson}.ipynb").read_text(encoding="utf-8"))
        headings = {line[3:].strip() for c in lesson["cells"] if c["cell_type"] == "markdown"
                    for line in "".join(c["source"]).splitlines() if line.startswith("## ")}
        for fn, where in SECTIONS[ex.id].items():
            m = re.fullmatch(r"Lesson (\d\d), section “(.+)”", where)
            assert m and ex.lesson.startswith(m.group(1)) and m.group(2) in headings, (ex.id, fn, where)


# ---------------------------------------------------------------------------------------- similar submissions

def test_fingerprints_ignore_names_literals_comments_docstrings_and_statement_order():
    a = ('def f(gm, op=None):\n    """Count."""\n    total = 0  # start\n    seen = [0]\n'
         '    for node in gm.graph.nodes:\n        total += 1\n    return total\n')
    b = ('def count(g, kind=None):\n    # another comment\n    seen_nodes = ["x"]\n    n = 5\n'
         '    for x in g.graph.nodes:\n        n += 1\n    return n\n')
    assert fingerprints(a) == fingerprints(b) and fingerprints(a)
    other_api = a.replace("gm.graph.nodes", "gm.modules()")
    assert fingerprints(other_api) != fingerprints(a)
    assert fingerprints("def broken(:\n") == set()


def test_every_planted_copy_is_found_and_no_other_pair_ranks_above_one(known):
    truth, _, rep = known
    from types import SimpleNamespace

    pairs = [SimpleNamespace(**p) for p in rep["similar"]["pairs"]]
    q = pair_quality(truth, pairs)
    print(f"similar pairs: precision {q['precision']:.2f}, recall {q['recall']:.2f} ({q})")
    assert q["recall"] == 1.0 and q["precision"] == 1.0, q
    assert q["highest_other_rank"] > q["lowest_planted_rank"], q
    assert not q["forced_flagged"]
    # the forced pairs: the same normalised code everywhere, and still not flagged
    assert all(p.why and "chance gives" in p.why for p in pairs if p.flagged)


def test_the_report_says_it_only_flags(known):
    _, out, rep = known
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "never reads or changes a grade" in page and "never reads or changes a grade" in rep["similar"]["notice"]


# ------------------------------------------------------------------------------------------- per assignment

def test_late_and_missing_submissions_and_pass_rates_come_from_the_gradebook(known):
    truth, out, rep = known
    rows = list(csv.DictReader(open(out / "scores.csv", encoding="utf-8")))
    for s in rep["assignments"]:
        a = s["assignment"]
        handed = {st for (st, x) in truth.choices if x == a}
        assert s["submitted"] == len(handed) and set(s["missing"]) == set(truth.students) - handed
        assert s["students"] == len(truth.students)
        nb = {st: score for st, score, _ in submission_scores(truth.url, a)}
        assert sorted(nb.values()) == pytest.approx(s["scores"])
        mine = {r["student"]: r for r in rows if r["assignment"] == a}
        assert {st for st, r in mine.items() if r["late"] == "1"} == set(s["late"])
        for t in s["tests"]:
            if t["test"].startswith("test_quiz_"):
                q = t["test"][len("test_quiz_"):]
                key = next(r["key"] for r in rep["items"] if r["assignment"] == a and r["question"] == q)
                right = sum(truth.choices[(st, a)][q] == key for st in handed)
                assert t["passed"] == right, (a, t)
    assert any(s["late"] for s in rep["assignments"]) and any(s["missing"] for s in rep["assignments"])


# ------------------------------------------------------------------------------------------------ LMS exports

def test_canvas_and_moodle_csvs_read_back_with_the_gradebook_scores(known):
    truth, out, _ = known
    nbgrader = {a: {st: score for st, score, _ in submission_scores(truth.url, a)} for a in ASSIGNMENTS}
    with open(out / "canvas.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == CANVAS_COLUMNS + ASSIGNMENTS
    assert rows[1][0].strip() == "Points Possible" and all(float(x) > 0 for x in rows[1][5:])
    canvas = {r[3]: r for r in rows[2:]}
    assert set(canvas) == set(truth.students)
    with open(out / "moodle.csv", newline="", encoding="utf-8") as f:
        moodle = {r["Username"]: r for r in csv.DictReader(f)}
    assert list(next(iter(moodle.values())))[:4] == MOODLE_COLUMNS
    for st in truth.students:
        assert canvas[st][0] == f"Last{st[1:]}, First{st[1:]}" and canvas[st][1] and moodle[st]["Email address"]
        for i, a in enumerate(ASSIGNMENTS):
            want = "" if st not in nbgrader[a] else f"{nbgrader[a][st]:g}"
            assert canvas[st][5 + i] == want and moodle[st][a] == want


# ---------------------------------------------------------------------------------------------- the command

def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, known):
    truth, _, _ = known
    course = truth.root
    assert main(["report", "--course", str(tmp_path), "--db", f"sqlite:///{tmp_path / 'none.db'}"]) == 2
    assert main(["report", "ex99_nothing", "--course", str(course), "--out", str(tmp_path / "o")]) == 2
    assert main(["report", "--course", str(course), "--db", "mysql://x"]) == 2
    empty = make_class(ROOT, tmp_path / "empty", ["ex01_tracing"], 0, copies=0, forced=0)
    assert main(["report", "--course", str(empty.root), "--out", str(tmp_path / "o2")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(line.startswith("fxcourse: error: ") for line in err), err
    assert "no gradebook" in err[0] and "unknown assignment 'ex99_nothing'" in err[1] and "ex01_tracing" in err[1]
    assert "--db" in err[2] and "empty" in err[3]


def test_progress_is_shown_stage_by_stage_and_timed(known, tmp_path, capsys):
    truth, _, _ = known
    progress = Progress(live=False)
    result = build(truth.root, truth.url, ["ex01_tracing"], tmp_path / "one", progress)
    printed = capsys.readouterr().out
    for stage in ("reading the gradebook", "reading the autograded notebooks", "fingerprinting answer cells",
                  "pairing similar submissions", "drawing the plots and the page"):
        assert f"  {stage} (" in printed and f"  {stage}: done (" in printed
        assert stage in result["timings"]
    assert [a.name for a in result["data"].assignments] == ["ex01_tracing"]


def test_a_live_bar_on_a_terminal(tmp_path):
    import io

    from rich.console import Console

    buf = io.StringIO()
    progress = Progress(live=True, console=Console(file=buf, force_terminal=True, width=100))
    progress.stage("reading the autograded notebooks", 3)
    for _ in range(3):
        progress.advance()
    progress.close()
    assert "reading the autograded notebooks" in buf.getvalue() and "3/3" in buf.getvalue()


# ------------------------------------------------------------------------------------------------ in chromium

@pytest.mark.browser
def test_the_page_opens_in_chromium_without_errors(known, request):
    import test_browser

    reason = test_browser._missing()
    if reason:
        if os.environ.get("FXCOURSE_REQUIRE_BROWSER"):
            pytest.fail(f"FXCOURSE_REQUIRE_BROWSER is set but {reason}", pytrace=False)
        pytest.skip(f"browser test skipped: {reason}")
    from playwright.sync_api import sync_playwright

    _, out, rep = known
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(test_browser.CHROMIUM), args=test_browser.CHROMIUM_ARGS,
                                    headless=True)
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 950})
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto((out / "index.html").as_uri())
            assert page.title() == "Class report"
            assert page.locator(".plot img").count() >= len(ASSIGNMENTS) + 2
            sizes = page.eval_on_selector_all(".plot img", "imgs => imgs.map(i => i.complete ? i.naturalWidth : 0)")
            assert all(w > 100 for w in sizes), sizes
            flagged = sum(p["flagged"] for p in rep["similar"]["pairs"])
            assert page.locator("details.evidence").count() == flagged > 0
            page.locator("details.evidence summary").first.click()
            assert page.locator(".side pre").first.is_visible()
            assert errors == []
        finally:
            browser.close()


def test_fingerprinting_in_worker_processes_gives_what_one_process_gives(known, monkeypatch):
    import autograder.grader.report as report

    truth, _, _ = known
    sources = [src for p in (truth.root / "autograded").glob("s000*/ex01_tracing/*.ipynb")
               for c in json.loads(p.read_text(encoding="utf-8"))["cells"]
               if c["cell_type"] == "code" for src in [c["source"] if isinstance(c["source"], str)
                                                       else "".join(c["source"])]]
    here = report.fingerprint_all(sources, Progress(quiet=True))
    monkeypatch.setattr(report, "PARALLEL_FROM", 1)
    assert report.fingerprint_all(sources, Progress(quiet=True)) == here and any(here)


def test_csv_cells_that_a_spreadsheet_would_run_are_quoted(tmp_path):
    from autograder.grader.report.render import _csv

    _csv(tmp_path / "x.csv", ["a", "b"], [["=HYPERLINK(1)", 2.5], ["-x", "ok"]])
    rows = list(csv.reader(open(tmp_path / "x.csv", encoding="utf-8")))
    assert rows[1:] == [["'=HYPERLINK(1)", "2.5"], ["'-x", "ok"]]


def test_the_release_s_own_code_is_left_out_of_the_fingerprints(tmp_path):
    from autograder.grader.report import similarity_of
    from autograder.grader.report.data import ClassData

    stub = ("def f(gm):\n    table = {n.name: [u.name for u in n.users] for n in gm.graph.nodes}\n"
            "    raise NotImplementedError('write f')\n")
    subs = {s: Submission(s, answers={"f": stub if s != "s3" else "def f(gm):\n    return len(gm.graph.nodes)\n"})
            for s in ("s1", "s2", "s3", "s4", "s5", "s6")}

    def pairs(release: dict[str, str]) -> int:
        a = Assignment("exr", None, 1.0, {"test_f": 1.0}, ["f"], [], release, subs)
        sim, _ = similarity_of(ClassData(None, "", {s: {} for s in subs}, [a]), Progress(quiet=True))
        return sim.candidates

    for s in ("s4", "s5", "s6"):
        subs[s].answers["f"] = f"def f(gm):\n    return [n.op for n in gm.graph.nodes]  # {s}\n"
    assert pairs({}) == 4           # s1 and s2 share the stub's rare statements, s4, s5, s6 their own...
    assert pairs({"f": stub}) == 3  # ...which the release holds: left out, only s4, s5, s6's own code pairs
