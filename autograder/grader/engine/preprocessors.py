"""nbgrader preprocessors that make the instructor's `nbgrader autograde` and feedback hardened.

Configured in autograder/nbgrader_config.py (the order of each list is explained there):
- RestoreFromSource: rebuild the submission on the instructor source, keeping only the answer cells;
- HardenedExecute: replaces nbgrader's Execute; grades through the jailed worker and writes the verdict of
  each test cell as its output (an error output when it fails), so nbgrader's SaveAutoGrades scores it;
- ScrubFeedback: removes hidden tests and tracebacks from the feedback a student receives;
- CheckCellMetadata: nbgrader's check of every cell's nbgrader metadata, with the schema compiled once per process;
- BoundedNotebookExporter: nbgrader's reader of submissions, replaced by the course's bounded one
  (autograder.course.notebook.read_notebook): a pipe, a device, a 100,000-level JSON or code too deep to parse is a
  one-line "cannot be graded" error for that submission, and the batch goes on.

Verdict messages come from the judge already escaped and capped (autograder.grader.engine.grading.clean_text), so neither
the terminal nor the HTML feedback ever shows a learner's control characters raw.
"""
from __future__ import annotations

from pathlib import Path

import datetime
import os

import nbformat
from nbconvert.exporters import NotebookExporter
from nbconvert.exporters.exporter import ResourcesDict
from nbgrader.coursedir import CourseDirectory
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.nbgraderformat.common import BaseMetadataValidator
from nbgrader.preprocessors import CheckCellMetadata as _NbgraderCheckCellMetadata, NbGraderPreprocessor

from autograder.course.root import Course
from autograder.course.notebook import HIDDEN_BEGIN, grade_id, is_test, read_notebook, restore, strip_hidden

__all__ = ["RestoreFromSource", "HardenedExecute", "ScrubFeedback", "BoundedNotebookExporter", "CheckCellMetadata"]


_SCHEMAS: dict[int, object] = {}  # schema version -> its jsonschema validator, the schema checked once


class _SchemaOnce(BaseMetadataValidator):
    """Metadata of this validator's own schema version validated by a validator built once per process: nbgrader's
    `jsonschema.validate` checks the schema against its meta-schema again for every cell (34 ms a notebook graded,
    in the grading thread). Other metadata (none, or another version) takes nbgrader's own path and errors."""

    def validate_cell(self, cell) -> None:
        meta = cell.metadata.get("nbgrader")
        if meta is None or meta.get("schema_version", 0) != self.schema_version:
            return super().validate_cell(cell)
        if self.schema_version not in _SCHEMAS:
            import jsonschema

            kind = jsonschema.validators.validator_for(self.schema)
            kind.check_schema(self.schema)
            _SCHEMAS[self.schema_version] = kind(self.schema)
        _SCHEMAS[self.schema_version].validate(meta)


class _MetadataValidator(MetadataValidator, _SchemaOnce):
    """nbgrader's validator (its rules beyond the schema: grade ids, cell types), over _SchemaOnce."""


class CheckCellMetadata(_NbgraderCheckCellMetadata):
    """nbgrader's CheckCellMetadata, the same checks and errors, with the schema compiled once (_SchemaOnce)."""

    def preprocess(self, nb, resources):
        try:
            _MetadataValidator().validate_nb(nb)
        except ValidationError as exc:
            raise ValidationError(f"the notebook's nbgrader metadata does not validate: {exc.message}") from None
        return nb, resources


class BoundedNotebookExporter(NotebookExporter):
    """nbgrader's NotebookExporter, reading the file with read_notebook's limits and one-line errors."""

    def from_filename(self, filename, resources=None, **kw):
        resources = resources if resources is not None else ResourcesDict()
        if "metadata" not in resources or resources["metadata"] == "":
            resources["metadata"] = ResourcesDict()
        path, basename = os.path.split(filename)
        resources["metadata"]["name"] = os.path.splitext(basename)[0]
        resources["metadata"]["path"] = path
        try:
            modified = datetime.datetime.fromtimestamp(os.path.getmtime(filename), tz=datetime.timezone.utc)
            resources["metadata"]["modified_date"] = modified.strftime("%B %-d, %Y")
        except OSError:
            pass
        return self.from_notebook_node(read_notebook(filename), resources=resources, **kw)


def _coursedir(pp: NbGraderPreprocessor) -> CourseDirectory:
    return CourseDirectory(config=pp.config)


class RestoreFromSource(NbGraderPreprocessor):
    """Take only the answer cells from the submission; everything else from the source notebook."""

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader", {})
        cd = _coursedir(self)
        source = Path(cd.format_path(cd.source_directory, ".", info["assignment"])) / f"{info['notebook']}.ipynb"
        restored = restore(read_notebook(source), nb)
        for note in restored.notes:
            self.log.warning("%s/%s: %s", info.get("student", "?"), info["notebook"], note)
        restored.notebook.metadata.setdefault("fxcourse", {})["notes"] = restored.notes
        return restored.notebook, resources


class HardenedExecute(NbGraderPreprocessor):
    """Grade the (restored) notebook in jailed workers and record each test cell's verdict as its output."""

    def preprocess(self, nb, resources):
        from autograder.grader.engine.grading import grade_restored

        course = Course(Path(_coursedir(self).root).resolve())
        results = {r.id: r for r in grade_restored(nb, course, hardened=True)}
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            cell.outputs = []
            if not is_test(cell):
                continue
            r = results.get(grade_id(cell))
            if r is None:
                continue
            if r.passed:
                cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=f"\u2714 {r.message}\n"))
            else:
                text = r.text   # "message\nHint: hint": what feedback shows and report/data.py reads back
                cell.outputs.append(nbformat.v4.new_output("error", ename="CheckFailed", evalue=text,
                                                           traceback=[f"CheckFailed: {text}"]))
        return nb, resources


class ScrubFeedback(NbGraderPreprocessor):
    """Feedback shows the visible part of each test and the check's message, never hidden tests or keys."""

    def preprocess(self, nb, resources):
        for cell in nb.cells:
            if cell.cell_type != "code" or not is_test(cell):
                continue
            if HIDDEN_BEGIN in cell.source:
                cell.source = strip_hidden(cell.source) + "\n# (more tests, not shown, were run by the grader)"
            for out in cell.get("outputs", []):
                if out.get("output_type") == "error":
                    last = out.get("evalue", "")
                    out["traceback"] = [f"{out.get('ename', 'Error')}: {last}"]
        return nb, resources
