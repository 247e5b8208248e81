"""Reading notebooks safely, telling their cells apart, and rebuilding a submission from the source.

"Restore, don't trust": the notebook that is graded is always the instructor source, with only the
learner's answer cells put in. Tests, points, order and setup code come from the source, whatever the
submission did to them.
"""
from __future__ import annotations

import ast
import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from nbformat.notebooknode import NotebookNode

__all__ = [
    "NotebookError", "MAX_NOTEBOOK_BYTES", "read_notebook", "parse_notebook", "nbgrader_meta", "grade_id",
    "is_answer", "is_test", "answer_cells", "test_cells", "defined_names", "stub_solution", "strip_hidden",
    "Restored", "restore", "answer_namespace",
]

MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024
SOLUTION_BEGIN, SOLUTION_END = "### BEGIN SOLUTION", "### END SOLUTION"
HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
STUB = "# YOUR CODE HERE\nraise NotImplementedError()"


class NotebookError(Exception):
    """A notebook that cannot be graded; the message is one line saying what is wrong and what was expected."""


# ----------------------------------------------------------------------------------------- reading

MAX_JSON_DEPTH = 64   # a notebook nests about 6 levels deep (cells, outputs, data, metadata)


def _json_depth_ok(raw: Any, limit: int) -> bool:
    """Is `raw` (parsed JSON) nested at most `limit` levels? Iterative: any depth is measured safely."""
    stack = [(raw, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth >= limit:
                return False
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return True


def parse_notebook(data: bytes, name: str = "notebook") -> NotebookNode:
    """Parse notebook bytes, with a one-line error for each way they can be wrong."""
    try:
        return _parse_notebook(data, name)
    except (RecursionError, MemoryError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else "too large"
        raise NotebookError(f"{name}: cannot be graded: {why} to read ({type(exc).__name__}); expected a Jupyter "
                            "notebook (.ipynb JSON)") from None


def _parse_notebook(data: bytes, name: str) -> NotebookNode:
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise NotebookError(f"{name}: {len(data) / 2**20:.1f} MiB is too large; a notebook may be at most "
                            f"{MAX_NOTEBOOK_BYTES // 2**20} MiB (clear large outputs and try again)")
    if not data.strip():
        raise NotebookError(f"{name}: the file is empty; expected a Jupyter notebook (.ipynb JSON)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotebookError(f"{name}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                            "expected a Jupyter notebook (.ipynb JSON)") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"{name}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                            "expected a Jupyter notebook (.ipynb JSON)") from None
    except RecursionError:
        raise NotebookError(f"{name}: cannot be graded: its JSON is nested too deeply to read (a notebook nests "
                            f"a few levels; at most {MAX_JSON_DEPTH} are accepted)") from None
    if not _json_depth_ok(raw, MAX_JSON_DEPTH):
        raise NotebookError(f"{name}: cannot be graded: its JSON is nested more than {MAX_JSON_DEPTH} levels deep "
                            "(a notebook nests a few levels)")
    if not isinstance(raw, dict) or "cells" not in raw or not isinstance(raw.get("cells"), list):
        raise NotebookError(f"{name}: valid JSON but not a Jupyter notebook (no list of 'cells')")
    if raw.get("nbformat") != 4:
        raise NotebookError(f"{name}: notebook format {repr(raw.get('nbformat'))[:20]} is not supported; "
                            "expected format 4")
    for i, cell in enumerate(raw["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            raise NotebookError(f"{name}: cell {i} is not a notebook cell (expected a code, markdown or raw cell)")
        src = cell.get("source", "")
        if isinstance(src, list):
            if not all(isinstance(s, str) for s in src):
                raise NotebookError(f"{name}: cell {i} has a source that is not text")
            cell["source"] = "".join(src)
        elif not isinstance(src, str):
            raise NotebookError(f"{name}: cell {i} has a source that is not text")
        if not isinstance(cell.get("metadata", {}), dict):
            cell["metadata"] = {}
        if cell["cell_type"] == "code":
            _check_parse_depth(cell["source"], f"{name}: cell {i}")
    return nbformat.from_dict(raw)


def _check_parse_depth(source: str, where: str) -> None:
    """Code Python cannot even parse for its depth (a generated expression thousands of terms long) makes a
    notebook ungradable, the same way in every command: a one-line error, not a traceback."""
    try:
        ast.parse(_without_magics(source))
    except (SyntaxError, ValueError):
        pass  # an ordinary syntax error is the learner's to fix: the cell is graded and fails
    except (RecursionError, MemoryError) as exc:
        raise NotebookError(f"{where}: cannot be graded: its code is nested too deeply for Python to parse "
                            f"({type(exc).__name__}); split long generated expressions") from None


def read_notebook(path: str | Path) -> NotebookNode:
    """Read a notebook file; raise NotebookError with a clear one-line message when it cannot be used.

    At most MAX_NOTEBOOK_BYTES + 1 bytes are ever read, whatever the path is: a symlink is followed to what it
    names, and a named pipe, socket or device is refused without blocking (opened non-blocking, then fstat)."""
    import os
    import stat

    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise NotebookError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise NotebookError(f"{path}: is a folder; expected a notebook file (.ipynb)") from None
    except OSError as exc:
        raise NotebookError(f"{path}: cannot be opened ({exc.strerror}); expected a notebook file (.ipynb)") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise NotebookError(f"{path}: is a folder; expected a notebook file (.ipynb)")
        if not stat.S_ISREG(info.st_mode):
            kind = "a named pipe" if stat.S_ISFIFO(info.st_mode) else "a device" if (
                stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)) else "a socket" if stat.S_ISSOCK(
                info.st_mode) else "not a regular file"
            raise NotebookError(f"{path}: is {kind}, not a regular file; expected a notebook file (.ipynb)")
        if info.st_size > MAX_NOTEBOOK_BYTES:
            raise NotebookError(f"{path}: {info.st_size / 2**20:.1f} MiB is too large; a notebook may be at most "
                                f"{MAX_NOTEBOOK_BYTES // 2**20} MiB (clear large outputs and try again)")
        chunks, size = [], 0
        while size <= MAX_NOTEBOOK_BYTES:
            try:
                chunk = os.read(fd, min(2**20, MAX_NOTEBOOK_BYTES + 1 - size))
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return parse_notebook(b"".join(chunks), str(path))


# ------------------------------------------------------------------------------------------- cells

def nbgrader_meta(cell: NotebookNode) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def grade_id(cell: NotebookNode) -> str | None:
    gid = nbgrader_meta(cell).get("grade_id")
    return gid if isinstance(gid, str) else None


def is_answer(cell: NotebookNode) -> bool:
    m = nbgrader_meta(cell)
    return cell.cell_type == "code" and bool(m.get("solution")) and not m.get("grade")


def is_test(cell: NotebookNode) -> bool:
    m = nbgrader_meta(cell)
    return cell.cell_type == "code" and bool(m.get("grade")) and not m.get("solution")


def answer_cells(nb: NotebookNode) -> list[NotebookNode]:
    return [c for c in nb.cells if is_answer(c)]


def test_cells(nb: NotebookNode) -> list[NotebookNode]:
    return [c for c in nb.cells if is_test(c)]


def defined_names(source: str) -> set[str]:
    """Top-level functions, classes and assigned names a cell defines (regex fallback if it does not parse)."""
    try:
        tree = ast.parse(_without_magics(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set(re.findall(r"^def\s+([A-Za-z_]\w*)", source, re.M)) | set(
            re.findall(r"^([A-Za-z_]\w*)\s*=", source, re.M))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _without_magics(source: str) -> str:
    return "\n".join("pass  # " + line if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())


def _answer_name(cell: NotebookNode) -> str:
    gid = grade_id(cell) or ""
    return gid[len("quiz_"):] if gid.startswith("quiz_") else gid


def stub_solution(source: str) -> str:
    """The released form of an answer cell: each solution region becomes the stub, indented in place."""
    out, inside = [], False
    for line in source.splitlines():
        if line.strip() == SOLUTION_BEGIN:
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out.extend(indent + s for s in STUB.splitlines())
        elif line.strip() == SOLUTION_END:
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out) if any(l.strip() == SOLUTION_BEGIN for l in source.splitlines()) else STUB


def strip_hidden(source: str) -> str:
    """A test cell's source without its hidden-tests regions (what the release shows)."""
    out, inside = [], False
    for line in source.splitlines():
        if line.strip() == HIDDEN_BEGIN:
            inside = True
        elif line.strip() == HIDDEN_END:
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


# ----------------------------------------------------------------------------------------- restore

@dataclass
class Restored:
    """The notebook to grade, the learner's answer per grade_id, and what was found amiss."""

    notebook: NotebookNode
    answers: dict[str, str | None]
    notes: list[str] = field(default_factory=list)


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def restore(source: NotebookNode, submitted: NotebookNode) -> Restored:
    """Rebuild `submitted` on the structure of `source`: only answer cells are taken from the submission.

    Answer cells are matched by grade_id; when metadata was stripped or changed, by the name the cell
    defines (the function, or qN for a quiz). Missing answers become the released stub.
    """
    notes: list[str] = []
    sub_answers: dict[str, list[NotebookNode]] = {}
    for cell in submitted.cells:
        if is_answer(cell) and grade_id(cell):
            sub_answers.setdefault(grade_id(cell), []).append(cell)
    sub_tests: dict[str, list[NotebookNode]] = {}
    for cell in submitted.cells:
        if grade_id(cell):
            sub_tests.setdefault(grade_id(cell), []).append(cell)

    out = copy.deepcopy(source)
    answers: dict[str, str | None] = {}
    used: set[int] = set()
    for i, cell in enumerate(out.cells):
        gid = grade_id(cell)
        if is_answer(cell):
            found = sub_answers.get(gid, [])
            if len(found) > 1:
                notes.append(f"answer cell {gid!r} appears {len(found)} times; the last one is graded")
            chosen = found[-1] if found else None
            if chosen is None:
                name = _answer_name(cell)
                candidates = [c for c in submitted.cells if c.cell_type == "code" and id(c) not in used
                              and name in defined_names(c.source) and not (is_test(c))]
                if candidates:
                    chosen = candidates[-1]
                    notes.append(f"answer cell {gid!r} had no grading metadata; matched by the name {name!r}")
            if chosen is not None:
                used.add(id(chosen))
                cell.source = chosen.source
                answers[gid] = chosen.source
            else:
                cell.source = stub_solution(cell.source)
                answers[gid] = None
                notes.append(f"answer cell {gid!r} is missing; graded as unanswered")
        elif is_test(cell):
            copies = sub_tests.get(gid, [])
            if not copies:
                notes.append(f"test cell {gid!r} was deleted or its metadata changed; the original is used")
            elif len(copies) > 1:
                notes.append(f"test cell {gid!r} appears {len(copies)} times; the original is used once")
            elif _norm(strip_hidden(copies[0].source)) != _norm(strip_hidden(cell.source)):
                notes.append(f"test cell {gid!r} was edited; the original is used")
            elif nbgrader_meta(copies[0]).get("points") != nbgrader_meta(cell).get("points"):
                notes.append(f"test cell {gid!r} had its points changed; the original points are used")
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    known = {grade_id(c) for c in source.cells if grade_id(c)}
    plain_sources = {_norm(c.source) for c in source.cells if c.cell_type == "code" and not grade_id(c)}
    extra = [c for c in submitted.cells if c.cell_type == "code" and id(c) not in used
             and grade_id(c) not in known and c.source.strip() and _norm(c.source) not in plain_sources]
    if extra:
        notes.append(f"{len(extra)} code cell(s) added by the learner are not graded")
    return Restored(out, answers, notes)


# ------------------------------------------------------------------------------- in-process loading

def answer_namespace(nb: NotebookNode | str | Path, overrides: dict[str, str] | None = None) -> dict[str, Any]:
    """Run a notebook's code cells except test cells in a fresh namespace (no kernel) and return it.

    `overrides` replaces the source of answer cells by grade_id (or appends code when the id is new):
    this is how pytest runs the solutions, the mutants and the alternative answers in-process.
    """
    import contextlib
    import hashlib
    import io
    import linecache
    import warnings

    if not isinstance(nb, NotebookNode):
        nb = read_notebook(nb)
    overrides = dict(overrides or {})
    ns: dict[str, Any] = {"__name__": "__main__"}
    sources = []
    for cell in nb.cells:
        if cell.cell_type != "code" or is_test(cell):
            continue
        gid = grade_id(cell)
        sources.append(overrides.pop(gid) if gid in overrides else cell.source)
    sources.extend(overrides.values())
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        import matplotlib
        matplotlib.use("Agg", force=True)
        for i, src in enumerate(sources):
            code = _without_magics(src)
            name = f"<cell {i}: {hashlib.sha1(code.encode()).hexdigest()[:12]}>"
            # as IPython does: the source in linecache, so a traceback (and a check's "where") shows the line
            linecache.cache[name] = (len(code), None, code.splitlines(keepends=True), name)
            exec(compile(code, name, "exec"), ns)  # noqa: S102 (course code, not submissions)
    return ns
