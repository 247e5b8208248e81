"""Where a course lives: its root, the instructor source (solutions/) and the release (exercises/)."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder.checks import keyring

__all__ = ["Course", "find_course", "PACKAGE_ROOT", "package_first"]

PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def package_first(pythonpath: str | None) -> str:
    """`pythonpath` with this checkout first: what a process started from here needs to import this package."""
    return os.pathsep.join(filter(None, [str(PACKAGE_ROOT), pythonpath]))


@dataclass(frozen=True)
class Course:
    """A course root holding solutions/ (instructor source) and/or exercises/ (the release)."""

    root: Path

    @property
    def solutions(self) -> Path:
        return self.root / "solutions"

    @property
    def exercises(self) -> Path:
        return self.root / "exercises"

    def assignments(self) -> list[str]:
        """Assignment ids found in solutions/ or, failing that, exercises/."""
        found = set()
        for folder in (self.solutions, self.exercises):
            if folder.is_dir():
                found |= {p.name for p in folder.iterdir() if (p / f"{p.name}.ipynb").is_file()}
        return sorted(found)

    def source_notebook(self, assignment: str) -> tuple[Path, bool]:
        """The notebook whose tests apply, and whether it is the full instructor source (with hidden tests)."""
        src = self.solutions / assignment / f"{assignment}.ipynb"
        if src.is_file():
            return src, True
        rel = self.exercises / assignment / f"{assignment}.ipynb"
        if rel.is_file():
            return rel, False
        raise KeyError(assignment)

    def secrets(self) -> list[str]:
        """Paths a grading worker must not see: everything in the course root but the importable packages and
        the virtual environment the grader runs from (`make` puts it in the course root as .venv)."""
        keep = {"autograder", "fxplayground", *_top_folders_within(self.root, sys.prefix, sys.base_prefix)}
        return sorted(str(p) for p in self.root.iterdir() if p.name not in keep) if self.root.is_dir() else []


def _top_folders_within(root: Path, *paths: str) -> set[str]:
    """The first component below `root` of each path that lies inside it (the venv's folder name)."""
    found = set()
    for p in paths:
        try:
            rel = Path(p).resolve().relative_to(root.resolve())
        except ValueError:
            continue
        if rel.parts:
            found.add(rel.parts[0])
    return found


def find_course(start: str | Path | None = None, explicit: str | Path | None = None) -> Course:
    """The course: --course, else $FXCOURSE_ROOT, else the nearest folder above `start` with solutions/ or
    exercises/, else the folder this package was installed from. Its instructor's side (instructor/), where it
    has one, is the one autograder.checks.keyring finds from now on, here and in the processes started here."""
    course = _find(start, explicit)
    keyring.use(course.root)
    return course


def _find(start: str | Path | None, explicit: str | Path | None) -> Course:
    if explicit:
        return Course(Path(explicit).resolve())
    if os.environ.get("FXCOURSE_ROOT"):
        return Course(Path(os.environ["FXCOURSE_ROOT"]).resolve())
    if start is not None:
        here = Path(start).resolve()
        for folder in [here, *here.parents] if here.is_dir() else list(here.parents):
            if (folder / "solutions").is_dir() or (folder / "exercises").is_dir():
                return Course(folder)
    return Course(PACKAGE_ROOT)
