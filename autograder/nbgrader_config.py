"""nbgrader configuration of the course: solutions/ is the source, exercises/ the release.

nbgrader reads this through the nbgrader_config.py at the repository root. The autograde and feedback
pipelines are the course's hardened ones (see autograder/SECURITY.md); the order of each list is explained
beside it.
"""
c = get_config()  # noqa: F821  (provided by traitlets when nbgrader loads this file)

c.CourseDirectory.course_id = "fxcourse"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".*"]

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
# No c.Execute settings: nbgrader's Execute never runs here (HardenedExecute below replaces it); the grader's
# limits are autograder.grader.jail.sandbox.Limits (FXCOURSE_TIMEOUT, FXCOURSE_SUBMISSION_TIMEOUT).

from autograder.grader.ops.collect import HardenedCollect  # noqa: E402
from autograder.grader.engine.preprocessors import (BoundedNotebookExporter, CheckCellMetadata,  # noqa: E402
                                                   HardenedExecute, RestoreFromSource, ScrubFeedback)
from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import (AssignLatePenalties, ClearOutput,  # noqa: E402
                                    GetGrades, LimitOutput, OverwriteCells, OverwriteKernelspec,
                                    SaveAutoGrades)

# Submissions are read with the course's limits (a pipe, a device or a 100,000-level JSON is a one-line error).
c.Autograde.exporter_class = BoundedNotebookExporter

# Sanitize: outputs are dropped first; then the notebook is rebuilt from the instructor source with only the
# learner's answer cells put in (this also repairs deleted, duplicated or re-typed cells and stripped
# metadata, so it must come before nbgrader's own OverwriteCells/CheckCellMetadata, which would reject them).
# CheckCellMetadata is nbgrader's check with its schema compiled once (autograder.grader.engine.preprocessors).
c.Autograde.sanitize_preprocessors = [
    ClearOutput, RestoreFromSource, OverwriteKernelspec, OverwriteCells, CheckCellMetadata,
]
# Autograde: the hardened runner replaces nbgrader's Execute: answers run in a jailed worker, the checks are
# judged here and written as outputs of the test cells; then nbgrader's own steps record grades from them.
c.Autograde.autograde_preprocessors = [
    HardenedExecute, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades, AssignLatePenalties,
    CheckCellMetadata,
]
# Collect: the students write the exchange, so their submissions are copied out by the course's hardened
# collect (regular files of the submitting student only, within limits; the time from the exchange, not from
# the student's timestamp.txt): `fxcourse collect`, `nbgrader collect` and the formgrader's Collect button.
c.ExchangeFactory.collect = HardenedCollect
# Feedback: grades first (they need the hidden tests' outcome), then hidden tests and tracebacks are scrubbed.
c.GenerateFeedback.preprocessors = [GetGrades, ScrubFeedback, CSSHTMLHeaderPreprocessor]
