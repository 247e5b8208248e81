"""Progressive hints, kept as data: for each exercise and graded function, hints from a nudge to nearly the answer.

Format (add an exercise by adding one entry; nothing else needs to change)::

    HINTS = {
        "exNN_topic": {                      # the assignment id, as in solutions/exNN_topic/
            "function_name": [               # a graded function of that exercise (a key of its CHECKS)
                "hint 1: a nudge: which object or API to look at",
                "hint 2: the pieces: which attributes, calls or cases matter",
                "hint 3: nearly the answer: the shape of the code, never the full solution",
            ],
        },
    }

Rules:

* Three hints per function, in that order; `hint(fn)` in a notebook and `fxcourse hint NOTEBOOK FN` show the
  next one not yet shown, so each must make sense after the ones before it.
* Plain text, one to three short sentences each. Put code in `backticks`: the notebook shows it as code.
* Quiz questions get no progressive hints: a hint there gives the answer away, and keys live only in
  solutions/.
* Every function named here must be a graded function of its exercise (tests/test_inline.py checks this).

The hints themselves are in each exercise's hint table, `PROGRESSIVE` in autograder/checks/hints/exNN_topic.py,
beside the hints its checks give when an answer fails: one place per exercise. HINTS gathers them.
"""
from __future__ import annotations

import pkgutil

import autograder.checks.hints as _tables

__all__ = ["HINTS"]

HINTS: dict[str, dict[str, list[str]]] = {
    m.name: _tables.progressive(m.name) for m in sorted(pkgutil.iter_modules(_tables.__path__), key=lambda m: m.name)
    if m.name[:2] == "ex" and _tables.progressive(m.name)
}
