"""Progressive hints: the next one to show for a graded function, and `fxcourse hint`, which remembers what it showed.

The hints are written in autograder/coursedata/hints.py, three per graded function. In a notebook,
`autograder.inline.hint()` counts what it showed in the kernel session; on the command line the count is kept
in .fxcourse-hints.json beside the notebook. Imported by every kernel that calls hint(): nothing heavy at the top.
"""
from __future__ import annotations

import html
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from autograder.coursedata.exercises import EXERCISES
from autograder.coursedata.hints import HINTS
from autograder.course.console import EXIT_FAILED, EXIT_OK, err

__all__ = ["HINT_STATE", "HintView", "hints_for", "next_hint", "code_html", "hint"]

HINT_STATE = ".fxcourse-hints.json"


def hints_for(assignment: str, function: str) -> list[str]:
    """The progressive hints written for a function (autograder/coursedata/hints.py), maybe none."""
    return list(HINTS.get(assignment, {}).get(function, []))


def code_html(text: str) -> str:
    """`text` escaped for HTML, with its `backquoted` parts as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


@dataclass
class HintView:
    """One hint to show: number `number` of `total` for a function (number 0: none to show, `text` says why)."""

    assignment: str
    function: str
    number: int
    total: int
    text: str
    earlier: list[str] = field(default_factory=list)

    @property
    def exhausted(self) -> bool:
        return self.total > 0 and self.number > self.total

    def lines(self) -> list[str]:
        if self.number == 0:
            return [self.text]
        if self.exhausted:
            return [f"All {self.total} hints for {self.function} were shown:"] + [
                f"  {i}. {h}" for i, h in enumerate(self.earlier, 1)]
        out = [f"Hint {self.number} of {self.total} for {self.function}: {self.text}"]
        if self.number < self.total:
            out.append(f"(ask again for hint {self.number + 1})")
        else:
            out.append("(that was the last hint)")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        if self.number == 0:
            body = code_html(self.text)
        elif self.exhausted:
            items = "".join(f"<li>{code_html(h)}</li>" for h in self.earlier)
            body = f"<b>All {self.total} hints for <code>{html.escape(self.function)}</code></b><ol>{items}</ol>"
        else:
            more = (f"ask again for hint {self.number + 1}" if self.number < self.total else "that was the last hint")
            body = (f"<b>Hint {self.number} of {self.total} for <code>{html.escape(self.function)}</code>:</b> "
                    f"{code_html(self.text)} <span style='opacity:.7'>({more})</span>")
        return (f"<div class='fxcourse-hint' data-function='{html.escape(self.function)}' "
                f"data-number='{self.number}' style='border-left:4px solid #f9a825;padding:4px 10px;"
                f"background:rgba(249,168,37,.08)'>{body}</div>")


def next_hint(assignment: str, function: str, shown: int) -> HintView:
    """The hint after the `shown` ones already seen (state is the caller's: kernel session or a JSON file)."""
    hints = hints_for(assignment, function)
    if not hints:
        return HintView(assignment, function, 0, 0,
                        f"No hints are written for {function} yet: the message of its failing check says what "
                        f"was expected and what to try.")
    if shown >= len(hints):
        return HintView(assignment, function, len(hints) + 1, len(hints), "", hints)
    return HintView(assignment, function, shown + 1, len(hints), hints[shown], hints[:shown])


def _read_state(file: Path) -> dict:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_state(file: Path, state: dict) -> None:
    partial = file.with_name(file.name + ".tmp")
    partial.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(partial, file)


def hint(notebook: str, function: str | None = None, course: str | None = None) -> int:
    """`fxcourse hint`: exit 0 when a new hint was shown, 1 when none is left (or none is written)."""
    from autograder.course.notebook import NotebookError  # not at the top: a kernel's hint() spares nbformat
    from autograder.course.root import find_course
    from autograder.learner.check import assignment_for

    path = Path(notebook)
    if not path.is_file():
        return err(f"{path}: no such file")
    found = find_course(path, course)
    try:
        assignment = assignment_for(path, found)
    except NotebookError as exc:
        return err(str(exc))
    functions = next((e.functions for e in EXERCISES if e.id == assignment), ())
    state_file = path.parent / HINT_STATE
    state = _read_state(state_file)
    shown: dict = state.get(assignment) if isinstance(state.get(assignment), dict) else {}
    count = lambda f: shown.get(f) if isinstance(shown.get(f), int) else 0  # noqa: E731
    if function is None:
        with_hints = [f for f in functions if hints_for(assignment, f)]
        if not with_hints:
            print(f"No hints are written for {assignment} yet; `fxcourse check {path}` gives a hint per failing test.")
            return EXIT_FAILED
        left = [f for f in with_hints if count(f) < len(hints_for(assignment, f))]
        function = left[0] if left else with_hints[-1]
        print("hints shown so far: " + ", ".join(f"{f} {count(f)}/{len(hints_for(assignment, f))}" for f in with_hints))
        print(f"(name a function for its own hints: fxcourse hint {path} FUNCTION)")
    elif function not in functions:
        return err(f"{assignment} has no graded function {function!r}; expected one of {', '.join(functions)}")
    view = next_hint(assignment, function, count(function))
    print(view)
    if view.total == 0 or view.exhausted:
        return EXIT_FAILED
    shown[function] = view.number
    state[assignment] = shown
    _write_state(state_file, state)
    return EXIT_OK
