"""The hint texts of the checks, kept as data: one table per exercise (`exNN_topic.py`: `HINTS`, the texts its
judges name, and `PROGRESSIVE`, the three hints per graded function `fxcourse hint` shows) and one table of the
hints every exercise shares (`shared.py`: the check framework's, the error signatures of errors.py, the wrong
training loops, the grader's crash hints).

A judge names a hint by its id, never by its text: `CheckFailed(message, "ex05.recompile")`, or, for a hint
that names a node or a value, `hint_of("ex05.nothing_reads_new_node", new=new, name=name)`, whose table entry
is a `str.format` template. An id is `<table>.<name>`: the table is `shared` or an exercise's number (`ex05`).
The learner sees the same text either way: `CheckFailed`, the verdict and `hint_of` turn an id into its text.
tests/test_hint_tables.py holds every judge and grader module to ids, and every id named to a text.
"""
from __future__ import annotations

import importlib
import pkgutil
import re
from typing import Any

__all__ = ["Hint", "HINT_ID", "hint_of", "resolve", "table", "all_hints", "progressive"]

HINT_ID = re.compile(r"(shared|ex\d\d)\.[a-z][a-z0-9_]{3,}")


class Hint(str):
    """A hint's text that remembers its id (`.id`): a str everywhere a text is expected."""

    id: str | None = None

    def __new__(cls, text: str, hint_id: str | None = None) -> "Hint":
        self = super().__new__(cls, text)
        self.id = hint_id
        return self


def _module_for(name: str) -> str | None:
    """The table module of `name` ("shared", "ex05"): shared.py or the exNN_topic.py of that exercise."""
    if name == "shared":
        return f"{__name__}.shared"
    found = [m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith(name + "_")]
    return f"{__name__}.{found[0]}" if len(found) == 1 else None


_TABLES: dict[str, dict[str, str]] = {}


def table(name: str) -> dict[str, str]:
    """The hint table `name` ("shared" or "ex05"): {id: text or template}; {} for an unknown name."""
    if name not in _TABLES:
        module = _module_for(name)
        _TABLES[name] = dict(importlib.import_module(module).HINTS) if module else {}
    return _TABLES[name]


def all_hints() -> dict[str, str]:
    """Every table's hints, {id: text or template}."""
    out = dict(table("shared"))
    for m in pkgutil.iter_modules(__path__):
        if re.fullmatch(r"ex\d\d_\w+", m.name):
            out.update(table(m.name[:4]))
    return out


def hint_of(hint_id: str, **values: Any) -> Hint:
    """The text of hint `hint_id`, its template filled with `values`; KeyError for an id with no text. A hint
    already made (a `Hint`) is returned as it is."""
    if isinstance(hint_id, Hint) and not values:
        return hint_id
    text = table(hint_id.split(".", 1)[0]).get(hint_id)
    if text is None:
        raise KeyError(f"no hint has the id {hint_id!r}")
    return Hint(text.format(**values) if values else text, hint_id)


def resolve(hint: Any) -> Any:
    """A hint given as an id becomes its text (a `Hint`); a text, a `Hint` or None stays as it is."""
    if type(hint) is str and HINT_ID.fullmatch(hint):
        return hint_of(hint)
    return hint


def progressive(assignment: str) -> dict[str, list[str]]:
    """The progressive hints of exercise `assignment` ("ex05_inserting"): {function: [hint 1, 2, 3]}."""
    try:
        return dict(importlib.import_module(f"{__name__}.{assignment}").PROGRESSIVE)
    except ModuleNotFoundError:
        return {}
