"""The verdict: one record from the judge to the report.

A judge makes it (`framework.judge_evidence`, for one case; `grading._judge_cell`, for one test cell, in the judge
process), the judge process answers with its JSON (`to_json`; the grader reads it back with `from_json`), the grader
gives it the test cell's points (`scored`), and every view renders it: `fxcourse check`'s report and `--json`, the
test cell's output nbgrader keeps (and feedback and the class report read), `fxcourse progress`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from autograder.checks.hints import Hint, resolve

__all__ = ["Verdict"]


@dataclass
class Verdict:
    """Passed or not, and the words for it: `id` is the case's label (a case's verdict) or the test cell's id (a
    test's); `hint` is named by its id in the hint tables or given as the text `hint_of` made (a `Hint`, which
    keeps its id: `hint_id`); `cases` how many cases were judged; `points` of `max_points` once scored."""

    id: str
    passed: bool
    message: str
    hint: str | None = None
    cases: int = 0
    points: float = 0.0
    max_points: float = 0.0

    def __post_init__(self) -> None:
        self.hint = resolve(self.hint)   # a hint named by its id: its text

    @property
    def label(self) -> str:
        """A case's label (the id of a case's verdict)."""
        return self.id

    @property
    def hint_id(self) -> str | None:
        return getattr(self.hint, "id", None)

    @property
    def text(self) -> str:
        """The message with its hint on a line of its own, as CheckFailed and a test cell's output show them."""
        return self.message + (f"\nHint: {self.hint}" if self.hint else "")

    @property
    def line(self) -> str:
        """The message with a failed test's hint on the same line, as `fxcourse check --json` gives it."""
        return self.message + (f" Hint: {self.hint}" if self.hint and not self.passed else "")

    def scored(self, max_points: float, clean: Any = str) -> "Verdict":
        """This verdict as a test cell's worth `max_points`: all of them when it passed, none when not; its
        message and hint passed through `clean` (the grader's grading.clean_text), the hint keeping its id."""
        hint = None if self.hint is None else Hint(clean(self.hint), self.hint_id)
        return replace(self, message=clean(self.message), hint=hint, max_points=float(max_points),
                       points=float(max_points) if self.passed else 0.0)

    def to_json(self) -> dict[str, Any]:
        """The plain JSON of the verdict (what the judge process answers)."""
        return {"id": self.id, "passed": self.passed, "message": str(self.message),
                "hint": None if self.hint is None else str(self.hint), "hint_id": self.hint_id,
                "cases": self.cases, "points": self.points, "max_points": self.max_points}

    @property
    def diagnosis(self) -> str:
        """The one confirmed diagnosis a failed test carries: its hint, else its message (the class report's)."""
        return self.hint or self.message

    @classmethod
    def from_text(cls, test_id: str, text: str, passed: bool = False) -> "Verdict":
        """The verdict a test cell's output shows as `text` ("message\\nHint: hint", as `text` writes it)."""
        message, sep, hint = text.partition("\nHint: ")
        return cls(test_id, passed, message.strip(), Hint(hint.strip()) if sep else None)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Verdict":
        """The verdict `to_json` wrote (types checked: the answer crossed a process boundary)."""
        hint = data.get("hint")
        return cls(str(data["id"]), bool(data["passed"]), str(data["message"]),
                   None if hint is None else Hint(str(hint), data.get("hint_id")), int(data.get("cases", 0)),
                   float(data.get("points", 0.0)), float(data.get("max_points", 0.0)))
