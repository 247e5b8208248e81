"""Every sentence of every task text is audited: a rule the grader checks through a clause, or marked as no rule.

The task text of a graded function is what the learner reads before writing it, in the released notebook
(exercises/, generated from solutions/): the markdown from the function's heading (`## N. \\`name(...)\\``) up to the
next function's heading or the quiz, and the docstrings of the functions in its answer cell. The notebook's
introduction (the markdown before the first function) is audited as the task text of `*`: a rule it states holds
for every function. Each sentence (a heading, a sentence of a paragraph or of a list item, a table row, a code
block) must have an entry in the exercise's `TASK_TEXT` (instructor/fxcourse_instructor/clauses/exNN_topic.py): the rules of
the clauses that check it, or why it is no rule. A clause a rule maps to must name a hidden case, and an answer
that ignores it (tests/test_clauses.py runs that answer on the clause's hidden cases and requires a failure).

Run `python tests/test_task_text_audit.py exNN_topic` to print the entries an exercise still lacks.
"""
from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fxcourse_instructor import clauses as clause_data  # noqa: E402
from autograder.coursedata.exercises import EXERCISES  # noqa: E402

HEADING = re.compile(r"^## \d+\. `(\w+)\(")
QUIZ = re.compile(r"^## Quiz\b|^\*\*Question \d+\.\*\*")
_CODE_SPAN = re.compile(r"`[^`]*`")
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*(\"'\d\x00])")


def split_sentences(text: str) -> list[str]:
    """A paragraph's sentences: split after . ! ? followed by a space and a capital, a code span, a quote or a
    parenthesis, never inside a code span."""
    text = " ".join(text.split())
    spans: list[str] = []

    def keep(m: re.Match) -> str:
        spans.append(m.group(0))
        return f"\x00{len(spans) - 1}\x00"

    masked = _CODE_SPAN.sub(keep, text)
    masked = re.sub(r"\b(e\.g|i\.e)\.", lambda m: m.group(1) + "\x01", masked)
    parts = [p for p in _BOUNDARY.split(masked) if p.strip()]
    restore = re.compile("\x00(\\d+)\x00")
    return [restore.sub(lambda m: spans[int(m.group(1))], p).replace("\x01", ".") for p in parts]


def markdown_units(markdown: str) -> list[str]:
    """Headings, sentences of paragraphs and list items, table rows (not the separator) and code blocks."""
    units: list[str] = []
    lines = markdown.splitlines()
    i = 0
    para: list[str] = []

    def flush() -> None:
        if para:
            units.extend(split_sentences(" ".join(para)))
            para.clear()

    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            units.append("\n".join(lines[i:j + 1]))
            i = j + 1
            continue
        if line.startswith("    ") and not para:
            j = i
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                j += 1
            units.append("\n".join(lines[i:j]).strip("\n"))
            i = j
            continue
        if not line.strip():
            flush()
        elif line.startswith("#"):
            flush()
            units.append(line.strip())
        elif line.startswith("|"):
            flush()
            if not re.fullmatch(r"[|\s:-]+", line):
                units.append(line.strip())
        elif re.match(r"^\s*([-*]|\d+\.) ", line):
            flush()
            para.append(re.sub(r"^\s*([-*]|\d+\.) ", "", line))
        else:
            para.append(line)
        i += 1
    flush()
    return units


def docstring_units(source: str) -> list[str]:
    """The sentences of the docstrings of the functions an answer cell defines."""
    units: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node)
            if doc:
                units.extend(s for block in doc.split("\n\n") for s in split_sentences(block))
    return units


def task_texts(assignment: str, functions: tuple[str, ...]) -> dict[str, list[str]]:
    """`*` (the introduction) and each graded function mapped to the sentences of its task text, in the released
    notebook as the learner sees it."""
    nb = json.loads((ROOT / "exercises" / assignment / f"{assignment}.ipynb").read_text(encoding="utf-8"))
    texts: dict[str, list[str]] = {"*": []}
    current = "*"
    chunk: list[str] = []

    def flush() -> None:
        if chunk:
            texts.setdefault(current, []).extend(markdown_units("\n".join(chunk)))
            chunk.clear()

    done = False
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code":
            gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if gid in functions and not done:
                flush()
                texts.setdefault(gid, []).extend(docstring_units(source))
            continue
        if cell["cell_type"] != "markdown" or done:
            continue
        for line in source.splitlines():
            heading = HEADING.match(line)
            if QUIZ.match(line):
                flush()
                done = True
                break
            if heading and heading.group(1) in functions:
                flush()
                current = heading.group(1)
            chunk.append(line)
        chunk.append("")
    flush()
    return texts


def _common_note(sentence: str) -> str | None:
    for pattern, why in clause_data.COMMON_NOTES:
        if re.fullmatch(pattern, sentence.strip()):
            return why
    return None


def unaudited(assignment: str, texts: dict[str, list[str]], audit: dict) -> list[str]:
    """Sentences of the task text with no audit entry, and audit entries whose sentence the task text no longer
    has (an edited sentence shows as both)."""
    problems = []
    for function, sentences in texts.items():
        entries = audit.get(function, {})
        for s in sentences:
            if s not in entries and not (function == "*" and _common_note(s)):
                problems.append(f"{assignment}.{function}: the sentence {s!r} has no entry in TASK_TEXT "
                                f"(instructor/fxcourse_instructor/clauses/{assignment}.py): map it to the rules of the clauses "
                                "that check it, or say why it is no rule")
    for function, entries in audit.items():
        for s in entries:
            if s not in texts.get(function, ()):
                problems.append(f"{assignment}.{function}: TASK_TEXT has an entry for {s!r}, which the task text "
                                "no longer has")
    return problems


def unmapped(assignment: str, audit: dict, clauses: list) -> list[str]:
    """Rules mapped to no clause or to a clause that does not exist, and notes that give no reason."""
    by_rule = {}
    for c in clauses:
        by_rule.setdefault((c.function, c.rule), []).append(c)
    problems = [f"{assignment}.{f}: two clauses have the rule {r!r}" for (f, r), cs in by_rule.items() if len(cs) > 1]
    for function, entries in audit.items():
        for sentence, mapped in entries.items():
            where = f"{assignment}.{function}: {sentence!r}"
            if isinstance(mapped, str):
                if not mapped.strip():
                    problems.append(f"{where} is marked as no rule without a reason")
                continue
            if not mapped:
                problems.append(f"{where} is a rule mapped to no clause")
            for ref in mapped:
                key = tuple(ref) if isinstance(ref, (tuple, list)) else (function, ref)
                if key[0] == "*" or key not in by_rule:
                    problems.append(f"{where} is mapped to the clause {key[1]!r} of {key[0]}, which does not exist")
    return problems


def clauses_of(audit: dict, clauses: list) -> list:
    """The clauses some rule of the audit maps to."""
    keys = {tuple(r) if isinstance(r, (tuple, list)) else (f, r)
            for f, entries in audit.items() for mapped in entries.values() if not isinstance(mapped, str)
            for r in mapped}
    return [c for c in clauses if (c.function, c.rule) in keys]


def ungraded(assignment: str, clauses: list, solution_cells: dict[str, str], hidden_labels: dict[str, list[str]]) \
        -> list[str]:
    """Clauses that name no hidden case (`hidden_labels`: each function's hidden case labels) or have no answer that
    ignores them. That this answer fails one of those hidden cases is what tests/test_clauses.py proves for every
    clause; it is not run again here."""
    problems = []
    for c in clauses:
        if not any(label.startswith(p) for p in c.cases for label in hidden_labels[c.function]):
            problems.append(f"{assignment}.{c.function}: the clause {c.rule!r} names no hidden case "
                            f"(it names {list(c.cases)})")
        try:
            clause_data.killer_source(assignment, c, solution_cells[c.function])
        except Exception as exc:  # a patch that no longer applies, a mutant that is gone, no answer at all
            problems.append(f"{assignment}.{c.function}: the clause {c.rule!r} has no wrong answer: {exc}")
    return problems


def _hidden_labels(assignment: str, functions) -> dict[str, list[str]]:
    from autograder.checks.framework import get_check
    return {f: [case.label for case in get_check(assignment, f).cases(True)] for f in functions}


def _solution_cells(assignment: str) -> dict[str, str]:
    nb = json.loads((ROOT / "solutions" / assignment / f"{assignment}.ipynb").read_text(encoding="utf-8"))
    return {cell["metadata"]["nbgrader"]["grade_id"]: "".join(cell["source"]) for cell in nb["cells"]
            if cell.get("metadata", {}).get("nbgrader", {}).get("solution")}


def _texts(assignment: str) -> dict[str, list[str]]:
    ex = next(e for e in EXERCISES if e.id == assignment)
    return task_texts(assignment, ex.functions)


ASSIGNMENTS = [e.id for e in EXERCISES]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_sentence_of_the_task_text_is_audited(assignment):
    texts = _texts(assignment)
    ex = next(e for e in EXERCISES if e.id == assignment)
    missing = [f"{assignment}.{f}: no task text found (a `## N. `{f}(...)`` heading)" for f in ex.functions
               if not texts.get(f)]
    problems = missing + unaudited(assignment, texts, clause_data.task_text(assignment))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_rule_of_the_task_text_maps_to_clauses_that_exist(assignment):
    audit = clause_data.task_text(assignment)
    problems = unmapped(assignment, audit, clause_data.load(assignment)) if audit else []
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_clause_a_rule_maps_to_has_a_hidden_case_and_a_wrong_answer(assignment):
    audit = clause_data.task_text(assignment)
    mapped = clauses_of(audit, clause_data.load(assignment)) if audit else []
    problems = ungraded(assignment, mapped, _solution_cells(assignment),
                        _hidden_labels(assignment, {c.function for c in mapped}))
    assert not problems, "\n".join(problems)


def test_the_audit_fails_on_a_new_sentence_an_edited_one_and_a_deleted_clause():
    texts = _texts("ex01_tracing")
    audit = clause_data.task_text("ex01_tracing")
    clauses = clause_data.load("ex01_tracing")
    assert not unaudited("ex01_tracing", texts, audit) and not unmapped("ex01_tracing", audit, clauses)

    added = {f: s + (["An empty graph gives []."] if f == "node_summary" else []) for f, s in texts.items()}
    assert unaudited("ex01_tracing", added, audit) == [
        "ex01_tracing.node_summary: the sentence 'An empty graph gives [].' has no entry in TASK_TEXT "
        "(instructor/fxcourse_instructor/clauses/ex01_tracing.py): map it to the rules of the clauses that check it, or say "
        "why it is no rule"]

    edited = {f: [s.replace("in graph order", "in any order") for s in ss] for f, ss in texts.items()}
    said = "\n".join(unaudited("ex01_tracing", edited, audit))
    assert "'Return `(op, name)` for every node of `gm.graph`, in any order.' has no entry" in said
    assert "'Return `(op, name)` for every node of `gm.graph`, in graph order.', which the task text no longer" in said

    kept = [c for c in clauses if c.rule != "in graph order"]
    said = "\n".join(unmapped("ex01_tracing", audit, kept))
    assert "is mapped to the clause 'in graph order' of node_summary, which does not exist" in said

    ruled = {**audit, "count_nodes": {**audit["count_nodes"], "A new rule.": ()}}
    assert "'A new rule.' is a rule mapped to no clause" in "\n".join(unmapped("ex01_tracing", ruled, clauses))


def test_the_audit_fails_on_a_clause_with_no_hidden_case_or_no_wrong_answer():
    import dataclasses

    clause = next(c for c in clause_data.load("ex01_tracing") if c.rule == "in graph order")
    cells = _solution_cells("ex01_tracing")
    labels = _hidden_labels("ex01_tracing", ("node_summary",))
    assert ungraded("ex01_tracing", [clause], cells, labels) == []
    broken = [dataclasses.replace(clause, cases=("Net",)),   # a visible case only
              dataclasses.replace(clause, mutant="a mutant nobody wrote")]
    said = "\n".join(ungraded("ex01_tracing", broken, cells, labels))
    assert "the clause 'in graph order' names no hidden case (it names ['Net'])" in said
    assert "no hand-written mutant 'a mutant nobody wrote'" in said


def test_sentences_are_split_outside_code_spans():
    assert split_sentences("Count `a.b` nodes. `op` may be `x. y`. Return a Python\n`int`, e.g. 3.") == [
        "Count `a.b` nodes.", "`op` may be `x. y`.", "Return a Python `int`, e.g. 3."]
    assert markdown_units("## 1. `f(x)`\n\nText one. Text two.\n\n- item one;\n  more. Next\n- two\n\n| a | b |\n|---|---|\n"
                          "| c | d |") == ["## 1. `f(x)`", "Text one.", "Text two.", "item one; more.", "Next",
                                           "two", "| a | b |", "| c | d |"]


if __name__ == "__main__":  # print the entries an exercise still lacks, to paste into its TASK_TEXT and fill in
    for name in sys.argv[1:] or ASSIGNMENTS:
        audit = clause_data.task_text(name)
        for function, sentences in _texts(name).items():
            todo = [s for s in sentences if s not in audit.get(function, {}) and not (function == "*" and _common_note(s))]
            if todo:
                print(f"    {function!r}: {{")
                for s in todo:
                    print(f"        {s!r}:\n            (),")
                print("    },")
