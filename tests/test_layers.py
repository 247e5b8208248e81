"""The autograder's layers import downwards only and never in a circle; the check library stays light.

Every import counts, also one inside a function (imported late is still a dependency). The order below is the
one autograder/ARCHITECTURE.md draws: a module may import its own layer and the layers under it.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.coursedata.exercises import EXERCISES

from conftest import ROOT

# Highest first. Within a layer, modules may import each other (no cycles still).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("autograder.cli", "autograder.inline"),           # the command line; check()/hint()/progress() in notebooks
    ("autograder.learner",),                           # the learner's tools
    ("autograder.grader", "autograder.nbgrader_config"),  # the hardened grader and nbgrader's configuration of it
    ("autograder.course",),                            # what learner tools and grader share: root, notebooks, plan
    ("fxcourse_instructor",),                          # the instructor's side (instructor/): judges, references,
                                                       # hidden cases, mutants, clauses; reached through keyring only
    ("autograder.coursedata",),                        # exercises, hints, quizzes
    ("autograder.checks",),                            # the check library
    ("fxplayground",),                                 # the course's playground models and tools
    ("autograder",),                                   # the package's own __init__ only (every module above runs it)
)
# what `import autograder.checks` must leave out of a fresh interpreter
NOT_IN_THE_CHECK_LIBRARY = ("nbformat", "nbgrader", "subprocess", "matplotlib")


PACKAGES = ("autograder", "fxplayground", "fxcourse_instructor")
HOMES = {"fxcourse_instructor": "instructor"}   # a package's folder under the root, where it is not the root


def modules(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """{dotted module name: file} of every module of `packages` under `root` (the instructor's under instructor/)."""
    found = {}
    for package in packages:
        home = root / HOMES.get(package, "")
        for path in sorted((home / package).rglob("*.py")):
            parts = path.relative_to(home).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported_names(path: Path, module: str) -> set[str]:
    """Every dotted name `path` imports, at the top or inside a function or class (relative imports resolved;
    `from a import b` gives both a.b and a)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            names.add(base)
            names |= {f"{base}.{alias.name}" for alias in node.names}
    return names


def graph(root: Path) -> dict[str, set[str]]:
    """{module: the modules of the course it imports} (a name resolves to the longest module it names)."""
    known = modules(root)
    edges: dict[str, set[str]] = {}
    for module, path in known.items():
        targets = set()
        for name in imported_names(path, module):
            parts = name.split(".")
            hit = next((".".join(parts[:k]) for k in range(len(parts), 0, -1) if ".".join(parts[:k]) in known), None)
            if hit is not None and hit != module:
                targets.add(hit)
        edges[module] = targets
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def layer_of(module: str) -> int:
    """The index in LAYERS of the most specific prefix naming `module` (0 is the top)."""
    best = None
    for i, layer in enumerate(LAYERS):
        for prefix in layer:
            # a prefix names itself and what is under it; "autograder" names the package's __init__ alone
            if module == prefix or (module.startswith(prefix + ".") and prefix != "autograder"):
                if best is None or len(prefix) > len(best[1]):
                    best = (i, prefix)
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return best[0]


def upward(edges: dict[str, set[str]]) -> list[str]:
    """Each import from a lower layer into a higher one, as 'a (layer) imports b (layer)'."""
    return sorted(f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
                  for a, targets in edges.items() for b in targets if layer_of(b) < layer_of(a))


# ------------------------------------------------------------------------------------- the course itself

# The fork server imports the grader's modules it preloads and serves (sandbox, grading), which start it: the
# one cycle left, for the fork server to resolve; every other module is held to none at all.
def test_no_import_cycles():
    assert cycles(graph(ROOT)) == []


def test_imports_go_down_the_layers_only():
    assert upward(graph(ROOT)) == []


def test_the_instructors_side_is_reached_through_keyring_only():
    """No module of the installed packages imports fxcourse_instructor (autograder.checks.keyring loads it by name,
    where it finds it), and the instructor's side imports the check library, the course data and the playground
    only (with itself): the learner's part installs and runs without it."""
    edges = graph(ROOT)
    inward = sorted(f"{a} imports {b}" for a, targets in edges.items() if not a.startswith("fxcourse_instructor")
                    for b in targets if b.startswith("fxcourse_instructor"))
    assert inward == []
    allowed = ("fxcourse_instructor", "autograder.checks", "autograder.coursedata", "fxplayground")
    outward = sorted(f"{a} imports {b}" for a, targets in edges.items() if a.startswith("fxcourse_instructor")
                     for b in targets if not b.startswith(allowed))
    assert outward == []
    assert "fxcourse_instructor" in edges and any(m.endswith(".hidden") for m in edges)


def test_every_module_is_in_a_layer():
    for module in modules(ROOT):
        layer_of(module)


# "no module over ~500 lines": a little over is a module near its split, more is one that needs splitting
MAX_MODULE_LINES = 520


def test_every_module_opens_with_its_job_and_stays_small():
    """Each module of the package opens with a docstring saying its job, and none outgrows MAX_MODULE_LINES."""
    problems = []
    for module, path in modules(ROOT).items():
        text = path.read_text(encoding="utf-8")
        if path.name != "__init__.py" or text.strip():
            if ast.get_docstring(ast.parse(text)) is None:
                problems.append(f"{module}: no docstring saying its job")
        if text.count("\n") > MAX_MODULE_LINES:
            problems.append(f"{module}: {text.count(chr(10))} lines (at most {MAX_MODULE_LINES})")
    assert problems == []


def test_benchmarks_import_the_grader_never_the_command_line():
    offenders = []
    for path in sorted((ROOT / "benchmarks").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        names = imported_names(path, module)
        if "autograder.cli" in names:
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_the_check_library_names_none_of_the_graders_modules():
    """Static: no module under autograder/checks/ imports them, not even inside a function."""
    found = {f"{module} imports {name}" for module, path in modules(ROOT, ("autograder",)).items()
             if module.startswith("autograder.checks")
             for name in imported_names(path, module) if name.split(".")[0] in NOT_IN_THE_CHECK_LIBRARY}
    assert sorted(found) == []


@pytest.mark.parametrize("name", NOT_IN_THE_CHECK_LIBRARY)
def test_importing_the_check_library_leaves_out(name, check_library_modules):
    """A fresh interpreter: the check library with every exercise's checks loads none of them.

    `import torch` itself imports subprocess (torch._utils_internal -> torch._strobelight); what is asked of the
    check library is that it adds none: a name torch already loads is judged against torch's own import.
    """
    loaded, torch_alone = check_library_modules
    assert not {m for m in loaded - torch_alone if m.split(".")[0] == name}, f"the check library loads {name}"
    if name != "subprocess":
        assert name not in loaded


@pytest.fixture(scope="module")
def check_library_modules() -> tuple[set[str], set[str]]:
    """sys.modules of a fresh interpreter after importing the check library and every exercise's checks, and
    after `import torch, fxplayground` alone."""
    def loaded(code: str) -> set[str]:
        code = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert r.returncode == 0, r.stderr
        return set(json.loads(r.stdout.splitlines()[-1]))

    every = "; ".join(f"import autograder.checks.{ex.id}" for ex in EXERCISES)
    return loaded(f"import autograder.checks; {every}"), loaded("import torch, fxplayground")


# -------------------------------------------------------------------------- the analysis, on a planted tree

def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in {"autograder/__init__.py": "", "fxplayground/__init__.py": "", **files}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_the_analysis_sees_a_cycle_through_a_late_import(tmp_path):
    root = _tree(tmp_path, {
        "autograder/grader/__init__.py": "",
        "autograder/grader/a.py": "from autograder.grader import b\n",
        "autograder/grader/b.py": "def f():\n    from . import a\n",
    })
    assert cycles(graph(root)) == [["autograder.grader.a", "autograder.grader.b"]]


def test_the_analysis_sees_an_upward_import_inside_a_function(tmp_path):
    root = _tree(tmp_path, {
        "autograder/cli.py": "",
        "autograder/checks/__init__.py": "",
        "autograder/checks/framework.py": "def f():\n    from autograder import cli\n",
    })
    assert upward(graph(root)) == ["autograder.checks.framework (autograder.checks) imports autograder.cli "
                                   "(autograder.cli)"]


def test_the_command_line_leaves_torch_to_the_fork_server():
    """`fxcourse grade` starts its fork server (which imports torch) right away; the command's own imports must
    not import torch too, or every run waits for it twice before the first submission is graded."""
    code = ("import sys, autograder.cli, autograder.grader.classroom.batch, autograder.grader.classroom.runner, "
            "autograder.course.root; print(sorted(m for m in sys.modules if m.split('.')[0] == 'torch')[:3])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd="/")
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "[]", f"the command line imports {r.stdout.strip()}"
