"""Nothing a student can read is worth a point: the course as a JupyterHub installs it for students holds no answer.

docs/jupyterhub.md step 1 installs a copy of the checkout (not -e) into the hub's venv. That install is built here
the same way (`pip install --no-deps --no-build-isolation --target DIR`, offline, from a copy of the checkout with
its instructor/ and solutions/ in it) and every file in it is searched for what would hand over a grade:

* every solution line of 30 or more characters (comments aside) of the solution regions of solutions/*/*.ipynb
  (but those a lesson or the release notebook already shows, and the few LEARNER_NEEDS lists with its reasons);
* the name of every reference function and judge the instructor's package (fxcourse_instructor) defines;
* the label of every hidden case;
* the anchor text of every mutant (each line of 30 or more characters of the solution text its edits replace);
* the quiz keys: solutions/quizzes.json (the file itself) and each of its explanations.

Then a Python whose only course package is that install finds no instructor's side (keyring.KeyMissing), while the
worker's side of every exercise (`PARTS`, its visible cases) imports and builds; in an instructor's course folder,
or told it, the same install finds the course's instructor/.

Before the instructor's side moved out, this search found in that install 129 of the 153 solution lines, all 78
reference and judge names, 295 of the 332 hidden labels (the others are built by f-strings) and all 131 mutant
anchors.
"""
from __future__ import annotations

import ast
import functools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.checks import keyring
from autograder.checks.framework import get_check
from autograder.coursedata.exercises import EXERCISES

from conftest import ROOT

INSTRUCTOR = keyring.location() / keyring.PACKAGE
LONG = 30   # a solution line this long (comments aside) is an answer, not an idiom
SKIP = {".git", ".venv", "build", "dist", "node_modules", "__pycache__", ".pytest_cache", ".ipynb_checkpoints"}
IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


def _code(line: str) -> str:
    """`line` without its comment (a `#` after two spaces, or a whole comment line) and outer blanks."""
    line = line.strip()
    return "" if line.startswith("#") else line.split("  #", 1)[0].rstrip()


@functools.cache
def solution_lines() -> set[str]:
    """The code lines of LONG or more characters between ### BEGIN SOLUTION and ### END SOLUTION."""
    found = set()
    for path in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            inside = False
            for line in "".join(cell["source"]).splitlines():
                if line.strip() in ("### BEGIN SOLUTION", "### END SOLUTION"):
                    inside = line.strip() == "### BEGIN SOLUTION"
                elif inside and len(_code(line)) >= LONG:
                    found.add(_code(line))
    return found


def judge_and_reference_names() -> set[str]:
    """The names of the judge's side's references (every function of a references module, every function named
    for a reference) and judges (every function named for a judge), as each exercise defines them at its top."""
    names = set()
    for path in sorted(INSTRUCTOR.glob("ex*/*.py")):
        if path.stem in ("judging", "judges", "references", "chains"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names |= {node.name for node in tree.body if isinstance(node, ast.FunctionDef)
                      and (path.stem == "references" or "reference" in node.name or "judge" in node.name)}
    return names


@functools.cache
def hidden_labels() -> set[str]:
    """The label of every hidden case, but those that are also a visible case's (the learner's already)."""
    hidden, visible = set(), set()
    for ex in EXERCISES:
        for function in ex.functions:
            check = get_check(ex.id, function)
            hidden |= {case.label for case in check.cases(True)}
            visible |= {case.label for case in check.cases(False)}
    return hidden - visible


@functools.cache
def anchor_lines() -> set[str]:
    """Each line of LONG or more characters of the solution text every mutant's edits replace."""
    mutants = keyring.instructor("mutants")
    found = set()
    for ex in EXERCISES:
        wrong, _ = mutants.load(ex.id)
        for mutant in wrong:
            for old, _new in mutant.edits:
                found |= {_code(line) for line in old.splitlines() if len(_code(line)) >= LONG}
    return found


def quiz_explanations() -> set[str]:
    data = json.loads((ROOT / "solutions" / "quizzes.json").read_text(encoding="utf-8"))
    return {q["explanation"] for quiz in data.values() for q in quiz["questions"] if q.get("explanation")}


# What the learner's part holds of a solution line on purpose, and why that is worth no point. Each is code the
# learner's own check runs on the learner's own result (or hands over as an input), an idiom of the lesson's API.
LEARNER_NEEDS = {
    "if not isinstance(result, fx.GraphModule):": (
        {"autograder/checks/ex03_replacing/evidence.py", "autograder/checks/ex12_custom_ops/evidence.py"},
        "the evidence names what the learner's function returned when it is not a GraphModule"),
    'if node.op == "call_function" and node.target is torch.relu:': (
        {"autograder/checks/ex08_pipeline/cases.py"},
        "a pass the cases hand to run_pipeline (a call found by its target, the idiom of lesson 03)"),
    "count = pattern_pass.apply(gm)": (
        {"autograder/checks/ex13_inductor_passes/evidence.py"},
        "the evidence of make_pattern_pass applies the learner's own pass, the one way a pass is applied"),
}


@functools.cache
def public_text() -> str:
    """What every student reads anyway: the lessons and the release notebooks (exercises/), their cells' sources."""
    sources = []
    for path in sorted([*(ROOT / "lessons").rglob("*.ipynb"), *(ROOT / "exercises").rglob("*.ipynb")]):
        sources += ["".join(cell["source"]) for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]]
    return "\n".join(sources)


@functools.cache
def needles() -> dict[str, set[str]]:
    """{kind: the texts that must not be in a student's install} (a solution line or mutant anchor that a lesson or
    the release already shows, or one of LEARNER_NEEDS, is not among them)."""
    public = public_text()
    shown = {text for text in solution_lines() | anchor_lines() if text in public} | set(LEARNER_NEEDS)
    return {"solution line": solution_lines() - shown, "judge or reference name": judge_and_reference_names(),
            "hidden case label": hidden_labels(), "mutant anchor": anchor_lines() - shown,
            "quiz explanation": quiz_explanations()}


def search(install: Path, wanted: dict[str, set[str]]) -> dict[str, dict[str, list[str]]]:
    """{kind: {text: the install's files holding it}} (names as whole identifiers, the rest as text), plus
    "quiz key file": the files that are solutions/quizzes.json, by name or content."""
    quizzes = (ROOT / "solutions" / "quizzes.json").read_bytes()
    hits: dict[str, dict[str, list[str]]] = {kind: {} for kind in [*wanted, "quiz key file"]}
    for path in sorted(p for p in install.rglob("*") if p.is_file()):
        data = path.read_bytes()
        where = str(path.relative_to(install))
        if path.name == "quizzes.json" or data == quizzes:
            hits["quiz key file"].setdefault("solutions/quizzes.json", []).append(where)
        identifiers = set(IDENTIFIER.findall(data))
        for kind, texts in wanted.items():
            for text in texts:
                encoded = text.encode()
                if (encoded in identifiers) if kind == "judge or reference name" else (encoded in data):
                    hits[kind].setdefault(text, []).append(where)
    return hits


def build_student_install(checkout: Path, into: Path) -> Path:
    """The course as docs/jupyterhub.md installs it for students: a copy of `checkout`, installed (not -e)."""
    copy = into / "src"
    shutil.copytree(checkout, copy, ignore=lambda folder, names: [n for n in names if n in SKIP
                                                                 or n.endswith(".egg-info")])
    target = into / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                    "--quiet", "--disable-pip-version-check", "--target", str(target), str(copy)],
                   check=True, capture_output=True, cwd=into, timeout=600)
    return target


@pytest.fixture(scope="module")
def student_install(tmp_path_factory) -> Path:
    return build_student_install(ROOT, tmp_path_factory.mktemp("student-install"))


def test_the_search_finds_what_it_looks_for_where_it_lives():
    """The needles are many of each kind, and the same search finds them in the instructor's package and the
    solutions (so that finding nothing in the install means something)."""
    wanted = needles()
    assert all(len(texts) >= 10 for texts in wanted.values()), {kind: len(t) for kind, t in wanted.items()}
    found = search(INSTRUCTOR, {k: wanted[k] for k in ("judge or reference name", "mutant anchor")})
    assert found["judge or reference name"].keys() == wanted["judge or reference name"]
    assert len(found["mutant anchor"]) >= 0.9 * len(wanted["mutant anchor"])
    labels = search(INSTRUCTOR, {"hidden case label": wanted["hidden case label"]})["hidden case label"]
    assert len(labels) >= 0.5 * len(wanted["hidden case label"])
    explanations = search(ROOT / "solutions", {"quiz explanation": wanted["quiz explanation"]})
    assert explanations["quiz key file"]
    assert len(explanations["quiz explanation"]) >= 0.9 * len(wanted["quiz explanation"])


def test_a_students_install_holds_no_answer(student_install):
    assert (student_install / "autograder" / "checks" / "keyring.py").is_file()
    assert not (student_install / keyring.PACKAGE).exists() and not (student_install / "instructor").exists()
    found = search(student_install, needles())
    assert not any(found.values()), {kind: dict(list(hits.items())[:5]) for kind, hits in found.items() if hits}


def test_what_the_learners_part_shows_of_a_solution_is_only_where_it_is_listed(student_install):
    """LEARNER_NEEDS stays true: each is still a solution line, and shows in its own files only."""
    lines = solution_lines()
    found = search(student_install, {"listed": set(LEARNER_NEEDS)})["listed"]
    for text, (files, why) in LEARNER_NEEDS.items():
        assert text in lines, f"no longer a solution line, drop it from LEARNER_NEEDS: {text!r}"
        assert {f for f in found.get(text, []) if not f.endswith(".pyc")} <= files, (text, why, found.get(text))


# Run by a Python whose only course package is the student's install: argv[1] the install, [2] a folder outside any
# course, [3] an instructor's course folder (holding instructor/), [4] the code a started process runs.
PROBE = """
import json, os, subprocess, sys
import autograder
from autograder.checks import keyring
from autograder.checks.framework import get_part
from autograder.coursedata.exercises import EXERCISES

install, elsewhere, course, child = sys.argv[1:5]
out = {"autograder": autograder.__file__}
os.chdir(elsewhere)
for name, get in (("judging", keyring.judging), ("hidden", keyring.hidden)):
    try:
        get("ex01_tracing")
        out[name] = ""
    except keyring.KeyMissing as exc:
        out[name] = str(exc)
out["built"] = {ex.id: sum(len(get_part(ex.id, f).cases(False)) for f in ex.functions) for ex in EXERCISES}
out["loaded"] = sorted(m for m in sys.modules if m.startswith("fxcourse_instructor"))
os.chdir(os.path.join(course, "exercises"))   # an instructor's kernel in the course folder
out["walk"] = str(keyring.location())
os.chdir(elsewhere)                            # a grading run that names the course
keyring.use(course)
out["used"] = keyring.instructor("ex01_tracing").__file__
out["child"] = subprocess.run([sys.executable, "-I", "-S", "-c", child], capture_output=True, text=True, cwd="/",
                              env=os.environ).stdout.strip()   # a process the run starts: judge, fork server, worker
print(json.dumps(out))
"""
CHILD = """
from autograder.checks import keyring
print(keyring.instructor("ex01_tracing").__file__)
"""


@pytest.fixture(scope="module")
def probe(student_install, tmp_path_factory) -> dict:
    """What a Python finds whose only course package is the student's install: no checkout reachable (sys.path is
    the install and the interpreter's own folders, no .pth file, so no editable install of a checkout; no
    $FXCOURSE_INSTRUCTOR_SIDE), from a folder outside any course, then in and for an instructor's course folder."""
    tmp = tmp_path_factory.mktemp("probe")
    course, elsewhere = tmp / "course", tmp / "elsewhere"
    shutil.copytree(INSTRUCTOR.parent, course / "instructor", ignore=shutil.ignore_patterns("__pycache__"))
    (course / "exercises").mkdir()
    elsewhere.mkdir()
    paths = [str(student_install)] + [p for p in sys.path if p and Path(p).is_dir()
                                      and ("site-packages" in p or Path(p).resolve().is_relative_to(
                                          Path(sys.base_prefix).resolve()))]
    prelude = f"import sys; sys.path[:] = {paths!r}\n"
    env = {k: v for k, v in os.environ.items() if k not in (keyring.ENV, "PYTHONPATH", "FXCOURSE_ROOT")}
    out = subprocess.run([sys.executable, "-I", "-S", "-c", prelude + PROBE, str(student_install), str(elsewhere),
                          str(course), prelude + CHILD], capture_output=True, text=True, cwd=elsewhere, env=env,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "course": course}


def test_a_python_with_only_the_students_install_has_no_key_and_a_working_worker_side(probe, student_install):
    assert probe["autograder"].startswith(str(student_install))
    assert "instructor's side of ex01_tracing" in probe["judging"] and "not reachable" in probe["judging"]
    assert "hidden cases of ex01_tracing" in probe["hidden"]
    assert probe["loaded"] == []
    assert set(probe["built"]) == {ex.id for ex in EXERCISES} and all(probe["built"].values()), probe["built"]


def test_under_a_copy_install_the_instructor_finds_the_key_in_the_course_folder(probe):
    """An instructor's kernel inside the course folder finds its instructor/ above its working directory; a grading
    run that names the course (keyring.use) finds it, and so do the processes it starts."""
    package = probe["course"] / "instructor" / keyring.PACKAGE / "ex01_tracing" / "__init__.py"
    assert probe["walk"] == str(probe["course"] / "instructor")
    assert probe["used"] == str(package) and probe["child"] == str(package), probe
