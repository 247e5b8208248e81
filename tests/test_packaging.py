"""Is the project installable and described truthfully (pyproject, environment.yml, README, CI)?"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONDA_NAMES = {"torch": "pytorch"}


def _name(spec: str) -> str:
    return re.split(r"[<>=!~ \[]", spec.strip(), maxsplit=1)[0].lower()


def _pyproject_deps() -> dict[str, str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    specs = data["project"]["dependencies"] + data["project"]["optional-dependencies"]["dev"]
    return {CONDA_NAMES.get(_name(s), _name(s)): s.replace(" ", "")[len(_name(s)):] for s in specs}


def _environment_deps(with_python: bool = False) -> dict[str, str]:
    """environment.yml's conda packages: name -> the rest of its spec (`>=3.7`, `=2.13.0=cpu_*`)."""
    deps = {}
    text = (ROOT / "environment.yml").read_text()
    section = text.split("dependencies:", 1)[1]
    for line in section.splitlines():
        m = re.match(r"^\s{2}- ([A-Za-z0-9_.-]+)(\S*)\s*$", line)
        if m and m.group(1) != "pip" and (with_python or m.group(1) != "python"):
            deps[m.group(1).lower()] = m.group(2)
    return deps


def _make_torch_pin() -> str:
    """The version the Makefile's TORCH pins (what `make lab` and `make test` install, and CI runs)."""
    m = re.search(r"^TORCH \?= torch==(\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert m, "the Makefile pins no torch version (TORCH ?= torch==X.Y.Z)"
    return m.group(1)


def _requires_python() -> tuple[int, int]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    m = re.fullmatch(r">=(\d+)\.(\d+)", data["project"]["requires-python"].replace(" ", ""))
    assert m, f"requires-python should be a lower bound (>=3.N), got {data['project']['requires-python']!r}"
    return int(m.group(1)), int(m.group(2))


def test_environment_yml_names_the_same_dependencies_and_versions_as_pyproject():
    py, env = _pyproject_deps(), _environment_deps()
    assert set(py) == set(env), f"only in pyproject: {set(py) - set(env)}; only in environment.yml: {set(env) - set(py)}"
    for name, spec in py.items():
        if name != "pytorch":  # pinned like the Makefile's TORCH instead: test_environment_yml_takes_the_pinned_torch
            assert env[name] == spec, f"{name}: pyproject says {spec!r}, environment.yml says {env[name]!r}"


def test_environment_yml_takes_the_pinned_torch_s_cpu_build_from_conda_forge():
    """The same torch as the pip set-up (the Makefile's TORCH), as conda-forge's CPU build, inside pyproject's range."""
    text = (ROOT / "environment.yml").read_text()
    channels = re.findall(r"^\s{2}- (\S+)$", text.split("channels:", 1)[1].split("dependencies:", 1)[0], re.M)
    assert channels == ["conda-forge"], channels
    pin = _make_torch_pin()
    assert _environment_deps()["pytorch"] == f"={pin}=cpu_*"
    low = _pyproject_deps()["pytorch"].removeprefix(">=")
    assert tuple(map(int, pin.split("."))) >= tuple(map(int, low.split("."))), f"{pin} is below pyproject's >={low}"


def test_environment_yml_s_python_is_one_pyproject_allows():
    python = _environment_deps(with_python=True)["python"]
    assert re.fullmatch(r"=3\.\d+", python), python
    assert (3, int(python.split(".")[1])) >= _requires_python()


def test_requires_python_is_what_every_installed_dependency_accepts():
    """The Python pyproject names as the lowest is one every dependency installed here accepts (nbgrader 0.9.6
    needs 3.11: a lower floor would promise a set-up that cannot install)."""
    from importlib.metadata import PackageNotFoundError, metadata

    from packaging.specifiers import SpecifierSet

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    floor = "%d.%d" % _requires_python()
    refused = {}
    for spec in data["project"]["dependencies"] + data["project"]["optional-dependencies"]["dev"]:
        try:
            needs = metadata(_name(spec)).get("Requires-Python")
        except PackageNotFoundError:
            continue
        if needs and not SpecifierSet(needs).contains(floor + ".0"):
            refused[_name(spec)] = needs
    assert not refused, f"requires-python says >={floor}, but these need more: {refused}"


def test_packages_and_console_script_are_installed():
    import autograder
    import fxplayground

    assert Path(fxplayground.__file__).resolve().parent == ROOT / "fxplayground"
    assert Path(autograder.__file__).resolve().parent == ROOT / "autograder"
    exe = shutil.which("fxcourse")
    assert exe, "the fxcourse console script is not on PATH"
    out = subprocess.run([exe, "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for command in ("lab", "check", "generate", "grade", "feedback", "export"):
        assert command in out.stdout


def test_readme_opens_with_the_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```(?:bash|sh)?\n(.*?)```", readme, re.S)
    assert blocks, "README has no command block"
    first = [l for l in blocks[0].splitlines() if l.strip() and not l.strip().startswith("#")]
    assert len(first) == 2, f"the README's first block should hold exactly two commands, has {first}"
    lab, test = (line.split("#", 1)[0].strip() for line in first)
    assert "lab" in lab and "test" in test
    ci = (ROOT / ".ci" / "run").read_text()
    assert test.strip() in [l.strip() for l in ci.splitlines()], f".ci/run does not call {test!r}"


def test_ci_script_fails_when_no_test_ran():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "set -euo pipefail" in ci or "set -eo pipefail" in ci
    make = (ROOT / "Makefile").read_text()
    assert "pytest" in make


def test_torch_pinned_for_ci_but_range_wide_for_users():
    assert _make_torch_pin() == "2.13.0"
    assert _pyproject_deps()["pytorch"].startswith(">=")


def test_python_version_supported():
    assert sys.version_info >= (3, 10)


def test_the_course_s_processes_skip_jsonschema_s_optional_grammar():
    """jsonschema imports rfc3987_syntax where it is installed (Jupyter's packages pull it in), and that module
    compiles a grammar on import: seconds in every process that reads a notebook. Importing autograder keeps it
    out, so the processes the course starts import autograder before nbformat: this test process (conftest), and
    Sphinx's process of the site build (docs/site/conf.py runs before myst-nb loads). Notebooks still validate."""
    assert sys.modules.get("rfc3987_syntax", "absent") in (None, "absent"), "conftest imported nbformat first"
    code = ("import runpy, sys\n"
            "runpy.run_path(sys.argv[1])\n"
            "import nbformat\n"
            "nbformat.validate(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('x = 1')]))\n"
            "print(repr(sys.modules.get('rfc3987_syntax', 'absent')))\n")
    r = subprocess.run([sys.executable, "-c", code, str(ROOT / "docs" / "site" / "conf.py")], cwd="/",
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() in ("None", "'absent'"), f"Sphinx's process imports rfc3987_syntax: {r.stdout}"
