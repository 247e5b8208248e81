"""The course's own steps in nbgrader's pipelines that stand in for nbgrader's (autograder/nbgrader_config.py)."""
from __future__ import annotations

import nbformat
import pytest
from nbgrader.nbgraderformat import common
from nbgrader.preprocessors import CheckCellMetadata as NbgraderCheckCellMetadata

from autograder.grader.engine.preprocessors import CheckCellMetadata
from conftest import ROOT

SOLUTION = ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb"


def _notebook(how: str | None):
    """The ex01 source, its nbgrader metadata broken `how` (None: as it is)."""
    nb = nbformat.read(SOLUTION, as_version=4)
    graded = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    meta = graded[0].metadata.nbgrader
    if how == "points as text":
        meta["points"] = "two"
    elif how == "no grade_id":
        del meta["grade_id"]
    elif how == "a grade id twice":
        meta["grade_id"] = graded[1].metadata.nbgrader["grade_id"]
    elif how == "an unknown key":
        meta["weight"] = 2
    elif how in ("schema version 2", "schema version 4"):
        meta["schema_version"] = int(how[-1])
    elif how == "a code cell marked as a task":
        meta["task"] = True
    return nb


def _outcome(step, nb) -> str:
    try:
        step.preprocess(nb, {})
    except Exception as exc:  # noqa: BLE001  (which error is what is compared)
        return type(exc).__name__
    return "valid"


@pytest.mark.parametrize("how", [None, "points as text", "no grade_id", "a grade id twice", "an unknown key",
                                 "schema version 2", "schema version 4", "a code cell marked as a task"])
def test_the_metadata_check_decides_every_notebook_as_nbgrader_s_own_does(how):
    ours, theirs = _outcome(CheckCellMetadata(), _notebook(how)), _outcome(NbgraderCheckCellMetadata(), _notebook(how))
    assert ours == theirs, how
    assert (ours == "valid") == (how is None), (how, ours)


def test_the_metadata_check_compiles_the_schema_once_not_once_a_cell(monkeypatch):
    """nbgrader's own check validates every cell with jsonschema.validate (the schema checked again each time);
    the course's never calls it for metadata of the current schema."""
    calls = []
    validate = common.jsonschema.validate
    monkeypatch.setattr(common.jsonschema, "validate", lambda *a, **k: calls.append(1) or validate(*a, **k))
    for _ in range(2):
        CheckCellMetadata().preprocess(_notebook(None), {})
    assert calls == []
    NbgraderCheckCellMetadata().preprocess(_notebook(None), {})
    assert len(calls) > 5
