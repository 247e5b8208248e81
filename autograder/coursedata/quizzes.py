"""The course's quiz questions as data, the quiz cells made from them, and how guessable they are.

Every quiz question of ex01-ex08 lives in one file, `solutions/quizzes.json` (instructor side: it holds the
keys, so it is never part of the release, and a grading worker never sees solutions/):

    {"ex01_tracing": {"lesson": "lessons/01_tracing.ipynb", "questions": [
        {"id": "q1", "question": "...", "code": "... (optional: a snippet the question shows)",
         "options": {"A": "...", "B": "...", "C": "...", "D": "..."}, "key": "D", "predict": true,
         "explanation": "shown after a right answer", "section": "the lesson section a wrong answer points to",
         "outcomes": {"A": "...", ...}, "verify": "... (optional)"}]}}

`write_quiz_cells` writes each solution notebook's quiz cells (question, answer, test) from it; tests/test_quizzes.py
checks that the notebooks say what the file says, runs every snippet to check its key (`outcomes` says what each
option claims the snippet does; the snippet, then `verify`, compute what it really does), and scores the
course under the guessing strategies of `STRATEGIES`.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from autograder.checks.hints import hint_of
from autograder.checks.framework import QUIZ_CHOICES, CaseResult, CheckFailed, judge_quiz, quiz_evidence

__all__ = ["QUIZ_FILE", "load", "questions", "lookup", "judge", "check_quiz", "STRATEGIES", "guess_scores",
           "key_counts", "question_markdown", "answer_source", "test_source", "write_quiz_cells"]

QUIZ_FILE = Path("solutions") / "quizzes.json"
LETTERS = "ABCD"


def load(root: str | Path) -> dict[str, Any]:
    """The quiz data of the course at `root` ({} where solutions/quizzes.json is absent, as in a release)."""
    path = Path(root) / QUIZ_FILE
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    for assignment, entry in data.items():
        for n, q in enumerate(entry["questions"], 1):
            where = f"{path}: {assignment} question {n}"
            if q.get("id") != f"q{n}":
                raise ValueError(f"{where}: id {q.get('id')!r}, expected 'q{n}' (questions are numbered in order)")
            if sorted(q.get("options", {})) != sorted(q["options"]) or q.get("key") not in q.get("options", {}):
                raise ValueError(f"{where}: key {q.get('key')!r} is not one of the options {sorted(q['options'])}")
            for field in ("question", "explanation", "section"):
                if not isinstance(q.get(field), str) or not q[field].strip():
                    raise ValueError(f"{where}: {field!r} must be a non-empty string")
    return data


def questions(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(assignment, question) of every question of the course, in course order."""
    return [(a, q) for a in sorted(data) for q in data[a]["questions"]]


def lookup(root: str | Path, assignment: str, var: str) -> dict[str, Any] | None:
    """One question's data, or None where the course carries no quiz data (a release) or no such question."""
    try:
        entry = load(root).get(assignment)
    except (OSError, ValueError):
        return None
    return next((q for q in entry["questions"] if q["id"] == var), None) if entry else None


# ------------------------------------------------------------------------------------------- judging

def judge(question: str, evidence: Any, key: str | None = None, choices: str = QUIZ_CHOICES,
          section: str | None = None, explanation: str | None = None) -> CaseResult:
    """A quiz answer judged: its format always, and with `key` whether it is right.

    Right: the message is "correct" and the explanation. Wrong: it says so and points to the lesson section;
    neither message nor hint ever contains the key or the explanation (which would give the key away).
    """
    result = judge_quiz(question, evidence, key, choices)
    if not result.passed:
        if key is not None and isinstance(evidence, str) and evidence in tuple(choices):
            return CaseResult(question, False, f"{question} = {evidence!r} is not the right answer",
                              hint_of("shared.reread_section", section=section) if section else
                              "shared.reread_lesson_section_question_about")
        return result
    if key is None:
        return CaseResult(question, True, "answered")
    return CaseResult(question, True, f"correct. {explanation}" if explanation else "correct")


def check_quiz(question: str, answer: Any, key: str | None = None, choices: str = QUIZ_CHOICES,
               section: str | None = None, explanation: str | None = None) -> None:
    """What a quiz test cell calls: raise CheckFailed for a wrong or malformed answer, else print the verdict."""
    __tracebackhide__ = True
    result = judge(question, quiz_evidence(answer), key, choices, section, explanation)
    if not result.passed:
        raise CheckFailed(result.message, result.hint)
    print(f"\u2714 {question}: {result.message}")


# ---------------------------------------------------------------------------------- guessing strategies

def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9_]+", text.lower()) if len(w) > 2}


def _pick(options: dict[str, str], score: Callable[[str], float]) -> str:
    """The option with the highest score; a tie goes to the first letter (what a guesser reading down does)."""
    return max(options, key=lambda k: (score(options[k]), -ord(k[0])))


def _most_question_words(q: dict[str, Any]) -> str:
    asked = _words(q["question"] + " " + q.get("code", ""))
    return _pick(q["options"], lambda text: len(_words(text) & asked))


STRATEGIES: dict[str, Callable[[dict[str, Any]], str]] = {
    **{f"always {k}": (lambda q, k=k: k) for k in LETTERS},
    "longest option": lambda q: _pick(q["options"], len),
    "shortest option": lambda q: _pick(q["options"], lambda text: -len(text)),
    "most words of the question": _most_question_words,
}


def guess_scores(data: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """{strategy: (questions it gets right, questions)} over every quiz of the course."""
    qs = [q for _, q in questions(data)]
    return {name: (sum(pick(q) == q["key"] for q in qs), len(qs)) for name, pick in STRATEGIES.items()}


def key_counts(data: dict[str, Any]) -> Counter:
    return Counter(q["key"] for _, q in questions(data))


# ----------------------------------------------------------------------------------------- the cells

def question_markdown(q: dict[str, Any]) -> str:
    n, var = q["id"][1:], q["id"]
    parts = [f"**Question {n}.** {q['question'].strip()}"]
    if q.get("code"):
        parts.append(f"```python\n{q['code'].rstrip()}\n```")
    parts.append("\n".join(f"- **{k}**: {v}" for k, v in q["options"].items()))
    parts.append(f"Set `{var}` to one capital letter, for example `{var} = \"A\"`.")
    return "\n\n".join(parts)


def answer_source(q: dict[str, Any]) -> str:
    return f'### BEGIN SOLUTION\n{q["id"]} = "{q["key"]}"\n### END SOLUTION'


def test_source(q: dict[str, Any]) -> str:
    var, choices = q["id"], "".join(q["options"])
    section = json.dumps(q["section"], ensure_ascii=False)
    explanation = json.dumps(q["explanation"], ensure_ascii=False)
    return ("from autograder.coursedata.quizzes import check_quiz\n\n"
            f'check_quiz("{var}", {var}, choices="{choices}",\n           section={section})\n'
            "### BEGIN HIDDEN TESTS\n"
            f'check_quiz("{var}", {var}, key="{q["key"]}", choices="{choices}",\n           section={section},\n'
            f"           explanation={explanation})\n"
            "### END HIDDEN TESTS")


def write_quiz_cells(root: str | Path, assignment: str) -> bool:
    """Rewrite the quiz cells of one solution notebook from the data; True if the notebook changed.

    Only the quiz cells are touched (the markdown cell before each answer cell quiz_qN, the answer cell and its
    test cell test_quiz_qN); a question the notebook lacks is added after the last quiz test cell.
    """
    import nbformat

    root = Path(root)
    data = load(root)[assignment]
    path = root / "solutions" / assignment / f"{assignment}.ipynb"
    nb = nbformat.read(path, as_version=4)
    before = nbformat.writes(nb)

    def gid(cell):
        return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")

    for q in data["questions"]:
        var = q["id"]
        index = {gid(c): i for i, c in enumerate(nb.cells) if gid(c)}
        if f"quiz_{var}" not in index:
            last = max(i for g, i in index.items() if g.startswith("test_quiz_q"))
            md = nbformat.v4.new_markdown_cell("")
            md.id = f"md-quiz-{var}"
            ans = nbformat.v4.new_code_cell("")
            ans.id = f"quiz_{var}"
            ans.metadata["nbgrader"] = {"grade": False, "grade_id": f"quiz_{var}", "locked": False,
                                        "schema_version": 3, "solution": True, "task": False}
            test = nbformat.v4.new_code_cell("")
            test.id = f"test_quiz_{var}"
            test.metadata["nbgrader"] = {"grade": True, "grade_id": f"test_quiz_{var}", "locked": True,
                                         "points": 1.0, "schema_version": 3, "solution": False, "task": False}
            nb.cells[last + 1:last + 1] = [md, ans, test]
            index = {gid(c): i for i, c in enumerate(nb.cells) if gid(c)}
        i = index[f"quiz_{var}"]
        if nb.cells[i - 1].cell_type != "markdown":
            raise ValueError(f"{path}: the cell before quiz_{var} is not the question's markdown cell")
        nb.cells[i - 1].source = question_markdown(q)
        nb.cells[i].source = answer_source(q)
        nb.cells[index[f"test_quiz_{var}"]].source = test_source(q)
    after = nbformat.writes(nb)
    if after != before:
        path.write_text(after + ("" if after.endswith("\n") else "\n"), encoding="utf-8")
    return after != before


if __name__ == "__main__":  # python -m autograder.coursedata.quizzes: rewrite every quiz cell, then print the guess scores
    import sys

    here = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    course = load(here)
    for a in sorted(course):
        print(f"{a}: {'rewritten' if write_quiz_cells(here, a) else 'unchanged'}")
    for name, (hit, total) in guess_scores(course).items():
        print(f"{name:<28} {hit:>2}/{total} = {100 * hit / total:.0f}%")
