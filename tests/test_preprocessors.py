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


def test_the_fork_server_s_preload_leaves_no_schema_for_a_forked_command_s_first_notebook_to_compile():
    """cli.preload (what the fork server imports and compiles for the commands it forks) compiles nbgrader's
    metadata schema and nbformat's notebook schema: a forked grade's first notebook compiles neither again."""
    import subprocess
    import sys

    solution = ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb"
    code = ("import json, sys, fastjsonschema, nbformat\n"
            "from autograder import cli\n"
            "from autograder.grader.engine import preprocessors\n"
            "if sys.argv[1] == 'preload':\n"
            "    cli.preload()\n"
            "def refuse(*a, **k):\n"
            "    raise AssertionError('compiled again')\n"
            "fastjsonschema.compile = refuse\n"
            "compiled = dict(preprocessors._SCHEMAS)\n"
            f"nb = nbformat.from_dict(json.load(open({str(solution)!r})))\n"
            "try:\n"
            "    nbformat.validate(nb)\n"
            "    preprocessors.CheckCellMetadata().preprocess(nb, {})\n"
            "    assert preprocessors._SCHEMAS == compiled, 'compiled again'\n"
            "except AssertionError as exc:\n"
            "    print(exc)\n"
            "else:\n"
            "    print('nothing compiled')\n")
    out = {how: subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, cwd=ROOT,
                               timeout=300) for how in ("preload", "none")}
    assert out["preload"].stdout.strip() == "nothing compiled", out["preload"].stdout + out["preload"].stderr
    assert out["none"].stdout.strip() == "compiled again", out["none"].stdout + out["none"].stderr
