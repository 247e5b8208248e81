"""The gradebook: nbgrader's Gradebook opened with retries, and the ledger of what was graded from which files.

The coordinator of a cluster run writes each submission's grades in ONE transaction (`Gradebook.write`),
together with a ledger row (table `fxcourse_graded`: the digest of what was graded and how many times grades
were written), so a task run twice is written once and a rerun skips what is graded already.

What the coordinator of every run only reads (does the gradebook know an assignment; each student's score) is
asked in SQL, through SQLAlchemy alone, or Python's sqlite3 for an SQLite gradebook (`knows_assignment`,
`submission_scores`): importing and opening nbgrader's
Gradebook costs about 1.3 s of CPU, at the start and at the end of every `fxcourse grade`, while the graders it
starts need that CPU. The score is nbgrader's own (Grade.score summed as SubmittedAssignment.score, and the
assignment's max_score), kept equal to nbgrader's by tests/test_cli.py.
"""
from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Callable

from autograder.course.root import Course

__all__ = ["GradebookError", "Gradebook", "parse_db_url", "gradebook_url", "LEDGER_TABLE", "schema_revision_in_process",
           "knows_assignment", "submission_scores", "read_rows"]

LEDGER_TABLE = "fxcourse_graded"


def schema_revision_in_process() -> None:
    """nbgrader stamps a new gradebook with its schema's alembic revision, which it asks a separate `alembic heads`
    process for: about 2 s of CPU per new gradebook (Python, then nbgrader's imports again). From here on, this
    process reads the same revision from nbgrader's own migration scripts instead, and nbgrader writes it as
    before; should the scripts not name exactly one head, nbgrader's own way is used."""
    import nbgrader.api
    from nbgrader import dbutil

    ask_alembic = nbgrader.api.get_alembic_version
    if getattr(ask_alembic, "in_process", False):
        return

    def head() -> str:
        try:
            from alembic.script import ScriptDirectory

            revision = ScriptDirectory(dbutil.ALEMBIC_DIR).get_current_head()
        except Exception:  # several heads, or scripts alembic cannot read: ask alembic as nbgrader does
            revision = None
        return revision or ask_alembic()

    head.in_process = True  # type: ignore[attr-defined]
    nbgrader.api.get_alembic_version = head


class GradebookError(Exception):
    """The gradebook cannot be opened or keeps refusing a write; the message names it and what to do."""


def parse_db_url(text: str) -> str:
    """A gradebook database URL: sqlite:///PATH or postgresql://USER@HOST:PORT/NAME (SQLAlchemy's form), with
    postgresql:// pinned to the psycopg driver (the `postgres` extra installs it; SQLAlchemy's default driver
    for a bare postgresql:// differs between its versions)."""
    if re.fullmatch(r"sqlite:///.+", text) or re.fullmatch(r"postgresql(\+\w+)?://.+", text):
        return "postgresql+psycopg://" + text[len("postgresql://"):] if text.startswith("postgresql://") else text
    raise ValueError(f"expected sqlite:///PATH or postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE, got {text!r}")


def gradebook_url(course: Course, explicit: str | None = None) -> str:
    """The gradebook: --db, else nbgrader's CourseDirectory.db_url from the course's configuration (the
    course's own nbgrader_config.py over the package's), else sqlite:///<root>/gradebook.db."""
    if explicit:
        return parse_db_url(explicit)
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    # nbgrader reads the package's nbgrader_config.py before the course's, but the package's sets no db_url
    # (tests/test_cli.py holds it to that): only the course's is read here, which spares this process the
    # package config's imports (nbgrader and the preprocessors, about 0.8 s of CPU).
    config = Config()
    if (course.root / "nbgrader_config.py").is_file():
        config.merge(PyFileConfigLoader("nbgrader_config.py", path=str(course.root)).load_config())
    url = config.get("CourseDirectory", {}).get("db_url")
    return parse_db_url(url) if url else f"sqlite:///{course.root / 'gradebook.db'}"


def _redact(url: str) -> str:
    return re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", url)


def _ledger(engine):
    from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table

    table = Table(LEDGER_TABLE, MetaData(), Column("assignment", String(128), primary_key=True),
                  Column("student", String(128), primary_key=True), Column("digest", String(64), nullable=False),
                  Column("writes", Integer, nullable=False), Column("graded_at", DateTime, nullable=False))
    try:
        table.create(engine, checkfirst=True)
    except Exception:  # another grader created it at the same moment
        if LEDGER_TABLE not in __import__("sqlalchemy").inspect(engine).get_table_names():
            raise
    return table


def _no_driver(url: str, exc: ModuleNotFoundError) -> GradebookError:
    return GradebookError(f"cannot open the gradebook {_redact(url)}: its database driver {exc.name!r} is not "
                          "installed (pip install 'fxcourse[postgres]')")


def _retrying(fn: Callable[[], Any], what: str, tries: int = 12, errors: tuple[type[Exception], ...] = ()) -> Any:
    """Run one transaction; again, after a pause, when another grader held a lock or won a race (`errors`: what
    says so; SQLAlchemy's by default)."""
    if not errors:
        from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

        errors = (OperationalError, IntegrityError, DBAPIError)
    for attempt in range(tries):
        try:
            return fn()
        except errors as exc:
            if attempt == tries - 1:
                raise GradebookError(f"{what}: the gradebook refused {tries} times: "
                                     f"{str(exc).splitlines()[0][:200]}") from exc
            time.sleep(min(0.2 * (attempt + 1), 2.0))


# nbgrader's Grade.score (manual score over automatic, plus extra credit), summed over a submission's notebooks,
# and the assignment's max_score (its grade and task cells), as nbgrader.api computes them.
_SCORES = """
SELECT sa.student_id,
       COALESCE((SELECT SUM(CASE WHEN g.manual_score IS NOT NULL THEN g.manual_score + COALESCE(g.extra_credit, 0.0)
                                 WHEN g.auto_score IS NOT NULL THEN g.auto_score + COALESCE(g.extra_credit, 0.0)
                                 ELSE 0.0 END)
                 FROM grade g JOIN submitted_notebook sn ON g.notebook_id = sn.id
                 WHERE sn.assignment_id = sa.id), 0.0),
       (SELECT COALESCE(SUM(c.max_score), 0.0)
          FROM (SELECT max_score, id FROM grade_cells UNION ALL SELECT max_score, id FROM task_cells) c
          JOIN base_cell bc ON c.id = bc.id JOIN notebook n ON bc.notebook_id = n.id
         WHERE n.assignment_id = a.id)
  FROM submitted_assignment sa JOIN assignment a ON sa.assignment_id = a.id
 WHERE a.name = :name
"""
_KNOWS = "SELECT COUNT(*) FROM notebook n JOIN assignment a ON n.assignment_id = a.id WHERE a.name = :name"


def _read(url: str, sql: str, name: str | None = None) -> list[tuple] | None:
    """The rows of `sql` (with `name` as its parameter :name, if given) in the gradebook at `url`; None when it
    has no nbgrader tables yet (a new database, or an SQLite file not made). GradebookError when it cannot be
    read."""
    params = {} if name is None else {"name": name}
    if url.startswith("sqlite:///"):
        return _read_sqlite(url, Path(url[len("sqlite:///"):]), sql, params)
    from sqlalchemy import create_engine, inspect, text

    try:
        engine = create_engine(url)
    except ModuleNotFoundError as exc:
        raise _no_driver(url, exc) from None

    def read() -> list[tuple] | None:
        with engine.connect() as conn:
            if "assignment" not in inspect(conn).get_table_names():
                return None
            return [tuple(row) for row in conn.execute(text(sql), params)]

    try:
        return _retrying(read, f"reading the gradebook {_redact(url)}")
    finally:
        engine.dispose()


def _read_sqlite(url: str, path: Path, sql: str, params: dict[str, str]) -> list[tuple] | None:
    """_read of an SQLite gradebook, through Python's own sqlite3 (what SQLAlchemy would use underneath, without
    its import: a third of a CPU second at the start of every `fxcourse grade`), opened read-only."""
    import sqlite3

    if not path.is_file():
        return None  # connecting would make an empty file

    def read() -> list[tuple] | None:
        try:
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
        except sqlite3.OperationalError as exc:
            raise GradebookError(f"cannot open the gradebook {_redact(url)}: {exc}") from None
        try:
            if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'assignment'").fetchone() \
                    is None:
                return None
            return [tuple(row) for row in conn.execute(sql, params)]
        finally:
            conn.close()

    return _retrying(read, f"reading the gradebook {_redact(url)}", errors=(sqlite3.OperationalError,))


def read_rows(url: str, sql: str) -> list[tuple] | None:
    """Every row of one read-only query without parameters (what `fxcourse report` asks), or None when the
    gradebook has no nbgrader tables yet."""
    return _read(url, sql)


def knows_assignment(url: str, assignment: str) -> bool:
    """Does the gradebook at `url` hold `assignment` with its notebooks (what nbgrader's generate writes)?"""
    rows = _read(url, _KNOWS, assignment)
    return bool(rows and rows[0][0])


def submission_scores(url: str, assignment: str) -> list[tuple[str, float, float]]:
    """(student, score, max score) of each submission of `assignment` in the gradebook at `url`, by student, as
    nbgrader scores them."""
    return sorted((student, float(score), float(top)) for student, score, top in _read(url, _SCORES, assignment) or [])


class Gradebook:
    """nbgrader's Gradebook for one run, with the course's ledger beside it."""

    def __init__(self, url: str, course_id: str = "fxcourse", config=None) -> None:
        """`config`: the course's nbgrader configuration (nbgrader.course_config), whose late-submission rule
        `write` applies; None: nbgrader's defaults (no penalty)."""
        from nbgrader.api import Gradebook as NbGradebook

        self.url = url
        self.config = config
        # A new gradebook asks `alembic` (from PATH) for its schema version: this interpreter's, also where its
        # bin/ is not on PATH.
        here = str(Path(sys.executable).parent)
        if here not in os.environ.get("PATH", "").split(os.pathsep):
            os.environ["PATH"] = here + os.pathsep + os.environ.get("PATH", os.defpath)
        schema_revision_in_process()
        try:
            self.gb = _retrying(lambda: NbGradebook(url, course_id), f"opening the gradebook {_redact(url)}")
        except ModuleNotFoundError as exc:
            raise _no_driver(url, exc) from None
        self.ledger = _ledger(self.gb.engine)

    def close(self) -> None:
        self.gb.close()
        self.gb.engine.dispose()

    def __enter__(self) -> "Gradebook":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def notebooks(self, assignment: str) -> list[str]:
        try:
            return sorted(nb.name for nb in self.gb.find_assignment(assignment).notebooks)
        finally:
            self.gb.db.rollback()

    def digests(self, assignment: str) -> dict[str, tuple[str, int]]:
        """student -> (digest of what was last graded, how many times grades were written) for this assignment,
        counting only students whose submission is in the gradebook."""
        from nbgrader.api import Assignment, SubmittedAssignment
        from sqlalchemy import select

        s = self.gb.db
        try:
            have = {sub.student_id for sub in s.query(SubmittedAssignment).join(Assignment)
                    .filter(Assignment.name == assignment)}
            rows = s.execute(select(self.ledger).where(self.ledger.c.assignment == assignment)).all()
            return {r.student: (r.digest, r.writes) for r in rows if r.student in have}
        finally:
            s.rollback()

    def write(self, assignment: str, student: str, notebooks: dict[str, dict], digest: str,
              timestamp: str | None = None) -> None:
        """Write one submission's grades in one transaction (all of them, or none on any error): the student and
        submission are made if new, every grade and comment of every notebook set, the ledger row updated."""
        _retrying(lambda: self._write(assignment, student, notebooks, digest, timestamp),
                  f"writing the grades of {student}/{assignment}")

    def record_ungraded(self, assignment: str, student: str, timestamp: str | None = None) -> None:
        """A submission that could not be graded: recorded with its time, as nbgrader's autograde leaves it (a
        new one without grades; an earlier one's grades kept)."""
        _retrying(lambda: self._write(assignment, student, None, "", timestamp),
                  f"recording the submission of {student}/{assignment}")

    def _submission(self, assignment: str, student: str, timestamp: str | None):
        """(assignment, submission) rows of `student`, made as nbgrader's add_submission makes them (without its
        commit) when new, with the submission's time set."""
        from nbgrader import utils
        from nbgrader.api import Assignment, Comment, Grade, Student, SubmittedAssignment, SubmittedNotebook

        s = self.gb.db
        a = s.query(Assignment).filter(Assignment.name == assignment).one()
        who = s.query(Student).filter(Student.id == student).one_or_none()
        if who is None:
            who = Student(id=student)
            s.add(who)
        sub = s.query(SubmittedAssignment).filter(SubmittedAssignment.assignment == a,
                                                  SubmittedAssignment.student == who).one_or_none()
        if sub is None:
            with s.no_autoflush:
                sub = SubmittedAssignment(assignment=a, student=who)
                s.add(sub)
                for notebook in a.notebooks:
                    snb = SubmittedNotebook(notebook=notebook, assignment=sub)
                    s.add(snb)
                    for cell in [*notebook.grade_cells, *notebook.task_cells]:
                        s.add(Grade(cell=cell, notebook=snb))
                    for cell in [*notebook.solution_cells, *notebook.task_cells]:
                        s.add(Comment(cell=cell, notebook=snb))
        if timestamp:
            sub.timestamp = utils.parse_utc(timestamp)
        s.flush()
        return a, sub

    def _penalize(self, sub) -> None:
        """nbgrader's late-submission rule (its AssignLatePenalties step, with the course's configured plugin), in
        the same transaction as the grades: each notebook's penalty reset, then set from the plugin when the
        submission is late, kept between 0 and the notebook's score as nbgrader keeps it."""
        from nbgrader.preprocessors import AssignLatePenalties

        step = AssignLatePenalties(config=self.config) if self.config is not None else AssignLatePenalties()
        step.init_plugin()
        self.gb.db.expire(sub)   # its lateness and its notebooks' scores are computed in SQL from what was flushed
        late = sub.total_seconds_late
        for snb in sub.notebooks:
            self.gb.db.expire(snb)
            penalty = None
            if late > 0:
                penalty = step.plugin_inst.late_submission_penalty(sub.student.id, snb.score, late)
                if penalty is not None:
                    penalty = min(max(float(penalty), 0.0), float(snb.score))
            snb.late_submission_penalty = penalty

    def _write(self, assignment, student, notebooks, digest, timestamp) -> None:
        import datetime

        from sqlalchemy import select

        s = self.gb.db
        try:
            a, sub = self._submission(assignment, student, timestamp)
            if notebooks is None:   # not graded: the submission is recorded, as nbgrader records it, with no grades
                s.commit()
                return
            if sorted(snb.notebook.name for snb in sub.notebooks) != sorted(nb.name for nb in a.notebooks):
                raise ValueError(f"the gradebook's submission of {student}/{assignment} does not have the "
                                 "assignment's notebooks")
            for snb in sub.notebooks:
                got = notebooks.get(snb.notebook.name)
                if got is None:
                    raise ValueError(f"the worker returned no grades for notebook {snb.notebook.name!r}")
                if len(snb.grades) != len(snb.notebook.grade_cells) + len(snb.notebook.task_cells):
                    raise ValueError(f"the gradebook's submission of {student}/{assignment} is missing grades")
                for grade in snb.grades:
                    name = grade.cell.name
                    if name not in got["grades"]:
                        raise ValueError(f"the worker returned no grade for cell {name!r} of {snb.notebook.name}")
                    auto, _ = got["grades"][name]
                    most = float(grade.cell.max_score)
                    grade.auto_score = None if auto is None else min(max(float(auto), 0.0), most)
                    grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None
                for comment in snb.comments:
                    comment.auto_comment = got["comments"].get(comment.cell.name)
            s.flush()
            self._penalize(sub)
            now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
            row = s.execute(select(self.ledger).where(self.ledger.c.assignment == assignment,
                                                      self.ledger.c.student == student)).first()
            if row is None:
                s.execute(self.ledger.insert().values(assignment=assignment, student=student, digest=digest,
                                                      writes=1, graded_at=now))
            else:
                s.execute(self.ledger.update().where(self.ledger.c.assignment == assignment,
                                                     self.ledger.c.student == student)
                          .values(digest=digest, writes=row.writes + 1, graded_at=now))
            s.commit()
        except BaseException:
            s.rollback()
            raise
