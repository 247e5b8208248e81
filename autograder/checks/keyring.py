"""Where the instructor's side of the checks is found: the package `fxcourse_instructor`, outside the install.

The instructor's side is each exercise's judges, references, `CHECKS` and hidden cases, and the mutants and
clauses that measure the checks. It lives in a course folder's `instructor/fxcourse_instructor/` (beside
`solutions/`), never in the package learners install, and this module is the only place that looks for it:

1. the folder `use(course_root)` named (a grading run knows its course: it calls `use`, which also puts the
   folder in $FXCOURSE_INSTRUCTOR_SIDE, so the processes it starts — judge, fork server, worker — find the same one);
2. `instructor/` beside the autograder's source tree (a clone, an editable install, the tests);
3. the nearest folder above the current directory holding `instructor/fxcourse_instructor` (an instructor's
   kernel in the course folder, under a copy install).

Every use of an exercise's judge side goes through `judging(assignment)`, of its hidden cases through
`hidden(assignment)`, of what its cases hand over that is another function's answer through `inputs(assignment)`,
of the mutants and clauses through `instructor("mutants")` / `instructor("clauses")`.
Where the instructor's side cannot be reached (a student's install) or read, they raise `KeyMissing`, naming
what is missing, and the caller says so instead of judging.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["KeyMissing", "judging", "hidden", "inputs", "load_worker_side", "instructor", "package", "use", "location",
           "forward", "PACKAGE", "ENV"]

PACKAGE = "fxcourse_instructor"
ENV = "FXCOURSE_INSTRUCTOR_SIDE"   # the folder holding fxcourse_instructor/, as `use` found it


class KeyMissing(ImportError):
    """The instructor's side of an exercise's checks (its judges, references, hidden cases) is not reachable."""


def use(course_root: str | os.PathLike) -> Path | None:
    """Take the instructor's side from `course_root`/instructor when it holds one (then it is also what the
    processes started from here find, through $FXCOURSE_INSTRUCTOR_SIDE); the folder, or None. A process that has
    loaded one already keeps it: one instructor's side per process."""
    folder = Path(course_root).resolve() / "instructor"
    try:
        found = (folder / PACKAGE / "__init__.py").is_file()
    except OSError:
        found = False
    if found:
        os.environ[ENV] = str(folder)
        return folder
    return None


def _candidates() -> list[Path]:
    """The folders that may hold fxcourse_instructor/, in the order they are tried."""
    import autograder

    found = [Path(os.environ[ENV])] if os.environ.get(ENV) else []
    found.append(Path(autograder.__file__).resolve().parents[1] / "instructor")
    try:
        here = Path.cwd().resolve()
    except OSError:   # the working directory was removed
        return found
    return found + [folder / "instructor" for folder in (here, *here.parents)]


def location() -> Path:
    """The folder holding the instructor's package (`instructor/` of a course folder or a checkout); KeyMissing
    naming where it was looked for, or what could not be read."""
    loaded = sys.modules.get(PACKAGE)
    if loaded is not None and getattr(loaded, "__file__", None):
        return Path(loaded.__file__).resolve().parents[1]
    unreadable = []
    for folder in _candidates():
        package = folder / PACKAGE
        try:
            there = package.is_dir()
        except OSError:
            there = False
            unreadable.append(package)
        if not there:
            continue
        if os.access(package, os.R_OK | os.X_OK) and os.access(package / "__init__.py", os.R_OK):
            return folder
        unreadable.append(package)
    if unreadable:
        raise KeyMissing(f"{unreadable[0]} is not readable by this user")
    import autograder

    raise KeyMissing(f"no {PACKAGE} (a course folder's instructor/) beside "
                     f"{Path(autograder.__file__).resolve().parent}, above the current directory or in ${ENV}")


def package() -> ModuleType:
    """fxcourse_instructor, loaded from `location()` (without adding its folder to sys.path)."""
    loaded = sys.modules.get(PACKAGE)
    if loaded is not None:
        return loaded
    init = location() / PACKAGE / "__init__.py"
    spec = importlib.util.spec_from_file_location(PACKAGE, init, submodule_search_locations=[str(init.parent)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[PACKAGE]
        raise
    return module


def instructor(name: str) -> ModuleType:
    """The module fxcourse_instructor.`name` (e.g. "mutants", "clauses", "ex05_inserting.references")."""
    package()
    full = f"{PACKAGE}.{name}"
    try:
        return importlib.import_module(full)
    except ModuleNotFoundError as exc:
        if exc.name is None or not full.startswith(exc.name):
            raise
        raise KeyMissing(f"{location() / PACKAGE} has no {name}") from exc
    except PermissionError as exc:  # there, but closed to this user (the instructor's folder)
        raise KeyMissing(f"{full} is not readable here") from exc


def judging(assignment: str) -> ModuleType:
    """The judge's side of exercise `assignment`: its module holding `CHECKS`, judges and references."""
    try:
        return instructor(f"{assignment}.judging")
    except KeyMissing as exc:
        raise KeyMissing(f"the instructor's side of {assignment} (its judges and references) is not reachable "
                         f"here: {exc}") from exc


def hidden(assignment: str) -> ModuleType:
    """The hidden cases of exercise `assignment` (its module `hidden`: one function per case function of its
    `cases`, building what that function's hidden cases are)."""
    try:
        return instructor(f"{assignment}.hidden")
    except KeyMissing as exc:
        raise KeyMissing(f"the hidden cases of {assignment} are not reachable here: {exc}") from exc


def inputs(assignment: str) -> ModuleType:
    """What the cases of exercise `assignment` hand over that is another graded function's answer (a model
    prepared as one function must prepare it, a pass made as one must make it): its module `inputs`."""
    try:
        return instructor(f"{assignment}.inputs")
    except KeyMissing as exc:
        raise KeyMissing(f"the inputs of {assignment}'s cases that are another function's answer are not "
                         f"reachable here: {exc}") from exc


def load_worker_side(assignment: str) -> None:
    """Import what the worker may use of the instructor's side of `assignment` (its hidden cases, its `inputs`),
    before learner code runs and a jail hides the folder; nothing where the instructor's side is not reachable."""
    for name in ("hidden", "inputs"):
        try:
            instructor(f"{assignment}.{name}")
        except KeyMissing:
            pass


def forward(package: str):
    """The module `__getattr__` of an exercise's check package: any name beyond its worker's side (`CHECKS`,
    judges, references) is the judge's side, loaded on first use (the jailed worker never asks)."""
    assignment = package.rsplit(".", 1)[-1]

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(judging(assignment), name)

    return __getattr__
