"""Does a fresh machine get set up by the README's commands (tools/venv.sh), and does it stay quiet?

tools/venv.sh runs here against a copy of the project's pyproject.toml, with a stand-in `pip` inside a venv made
without one, so each test sees exactly which installs the script asks for without downloading anything.
"""
from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
# The interpreter this test run's venv was made from (Debian's /usr/bin/python3 in CI).
BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)


def _copy_setup_files(folder: Path) -> None:
    """The files tools/venv.sh reads, copied into `folder`."""
    (folder / "tools").mkdir()
    shutil.copy(ROOT / "tools" / "venv.sh", folder / "tools" / "venv.sh")
    shutil.copy(ROOT / "pyproject.toml", folder / "pyproject.toml")


def _logging_pip(venv: Path, log: Path) -> None:
    """Put a `pip` into `venv` (made without one) that only logs what it is asked to `log`. Asked to install uv,
    it puts a stand-in `uv` into the venv's bin/ that logs as `uv ...` (FAKE_UV_FAILS set: and then fails to
    install the course; FAKE_UV_FAILS_TORCH: to install torch);
    FAKE_NO_UV makes that install fail, FAKE_PIP_CONFIG is what `pip config list` prints. The stand-in uv logs
    the options it is handed (SSL_CERT_FILE first where that is set), leaving out those it is always given.
    Asked to download torch, it puts a stand-in wheel into --dest (FAKE_NO_DOWNLOAD set: fails instead); the
    logs name a wheel by its file name only."""
    site = Path(subprocess.check_output([str(venv / "bin" / "python"), "-c",
                                         "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip())
    (site / "pip").mkdir()
    (site / "pip" / "__init__.py").write_text("")
    (site / "pip" / "__main__.py").write_text(textwrap.dedent(f"""\
        import os, sys
        args = [a for a in sys.argv[1:] if not a.startswith("--")]
        if args[:2] == ["config", "list"]:
            print(os.environ.get("FAKE_PIP_CONFIG", ""))
            sys.exit(0)
        if args[:1] == ["download"]:
            dest = sys.argv[sys.argv.index("--dest") + 1]
            args.remove(dest)
        with open({str(log)!r}, "a") as log:
            log.write(" ".join(args) + "\\n")
        if args[:1] == ["download"]:
            if os.environ.get("FAKE_NO_DOWNLOAD"):
                sys.exit(1)
            version = args[-1].split("==")[1] if "==" in args[-1] else "0"
            open(os.path.join(dest, "torch-" + version + "-py3-none-any.whl"), "w").close()
        if args == ["install", "uv"]:
            if os.environ.get("FAKE_NO_UV"):
                sys.exit(1)
            uv = os.path.join(os.path.dirname(sys.executable), "uv")
            with open(uv, "w") as f:
                f.write("#!" + sys.executable + "\\nimport os, sys\\n"
                        "args = sys.argv[1:]\\n"
                        "del args[args.index('--python'):args.index('--python') + 2]\\n"
                        "args = [os.path.basename(a) if a.endswith('.whl') else a for a in args\\n"
                        "        if a not in ('--quiet', '--native-tls')]\\n"
                        "cert = os.environ.get('SSL_CERT_FILE')\\n"
                        "line = ('SSL_CERT_FILE=' + cert + ' ' if cert else '') + 'uv ' + ' '.join(args)\\n"
                        "open({str(log)!r}, 'a').write(line + '\\\\n')\\n"
                        "course = '-e' in args\\n"
                        "sys.exit(1 if os.environ.get('FAKE_UV_FAILS' if course else 'FAKE_UV_FAILS_TORCH') else 0)\\n")
            os.chmod(uv, 0o755)
        """))


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A copy of the files tools/venv.sh reads, and a venv in it whose `pip` only logs what it was asked."""
    _copy_setup_files(tmp_path)
    subprocess.run([BASE_PYTHON, "-m", "venv", "--without-pip", str(tmp_path / ".venv")], check=True)
    _logging_pip(tmp_path / ".venv", tmp_path / "pip.log")
    return tmp_path


def _setup(project: Path, python: str = BASE_PYTHON, **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in ("TORCH", "EXTRAS", "VENV", "SSL_CERT_FILE")}
    full.update(PYTHON=python, **env)
    return subprocess.run(["sh", str(project / "tools" / "venv.sh")], cwd=project, env=full,
                          capture_output=True, text=True, timeout=120)


def _installs(project: Path) -> list[str]:
    log = project / "pip.log"
    return log.read_text().splitlines() if log.exists() else []


# What a first run installs by default: uv with pip, the torch file pip chooses, then that file with uv, then
# the course (and the rest) with uv, torch kept to that file.
def _first(extras: str = "dev", torch: str = "torch==2.13.0") -> list[str]:
    wheel = f"torch-{torch.split('==')[1]}-py3-none-any.whl"
    return ["install uv", f"download {torch}", f"uv pip install {wheel}", f"uv pip install {wheel} -e .[{extras}]"]


def _with_pip(extras: str = "dev", torch: str = "torch==2.13.0") -> list[str]:
    return [f"install {torch}", f"install -e .[{extras}]"]


def test_first_run_installs_then_a_second_run_installs_nothing(project):
    first = _setup(project, EXTRAS="dev")
    assert first.returncode == 0, first.stderr
    assert _installs(project) == _first()
    second = _setup(project, EXTRAS="dev")
    assert second.returncode == 0, second.stderr
    assert "up to date" in second.stdout
    assert len(_installs(project)) == len(_first()), "the second run installed again although nothing changed"
    # `make lab` asks for no extras: what `make test` installed already covers it.
    assert "up to date" in _setup(project, EXTRAS="").stdout
    assert len(_installs(project)) == len(_first())


def test_the_installed_packages_are_compiled_unless_fxcourse_compile_is_0(project):
    site = Path(subprocess.check_output([str(project / ".venv" / "bin" / "python"), "-c",
                                         "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip())
    (site / "fxcourse_probe_module.py").write_text("x = 1\n")
    bare = _setup(project, EXTRAS="dev", FXCOURSE_COMPILE="0")  # the second CI pass's venv: imported once
    assert bare.returncode == 0, bare.stderr
    assert "compiling" not in bare.stdout and not list(site.glob("__pycache__/fxcourse_probe_module.*.pyc"))
    (project / ".venv" / ".fxcourse-stamp").unlink()
    compiled = _setup(project, EXTRAS="dev")
    assert compiled.returncode == 0, compiled.stderr
    assert "compiling" in compiled.stdout and list(site.glob("__pycache__/fxcourse_probe_module.*.pyc"))


def test_a_venv_made_from_another_interpreter_is_made_anew_even_without_a_stamp(project):
    """A run stopped before it wrote the stamp leaves a venv without one: the venv itself says what it was made
    from, and one made from another interpreter is made anew from PYTHON (here a stand-in that makes its venvs
    with the logging pip)."""
    elsewhere = "/opt/elsewhere/bin/python3.11"
    fake = project / ".venv" / "bin" / "python"
    fake.unlink()
    fake.write_text(f"#!/bin/sh\necho {elsewhere}\n")  # runs, and was made from another interpreter
    fake.chmod(0o755)
    maker = project / "make_venv.py"
    maker.write_text("import subprocess, sys, textwrap\nfrom pathlib import Path\n\n" + inspect.getsource(_logging_pip)
                     + textwrap.dedent(f"""
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", sys.argv[1]], check=True)
        _logging_pip(Path(sys.argv[1]), Path({str(project / 'pip.log')!r}))
        """))
    python = project / "python3"
    python.write_text(f'#!/bin/sh\nif [ "$1" = -m ] && [ "$2" = venv ]; then exec {BASE_PYTHON} {maker} "$3"; fi\n'
                      f'exec {BASE_PYTHON} "$@"\n')
    python.chmod(0o755)
    r = _setup(project, python=str(python), EXTRAS="dev")
    base = os.path.realpath(BASE_PYTHON)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f".venv was made from {elsewhere}; making it anew from {base}" in r.stdout, r.stdout
    assert _installs(project) == _first()
    assert "up to date" in _setup(project, python=str(python), EXTRAS="dev").stdout  # made from the right one now
    assert "up to date" in _setup(project, EXTRAS="dev").stdout  # PYTHON=the interpreter itself: the same base


def test_a_failed_install_is_named_and_the_next_run_tries_again(project):
    """The course's own package fails to install, with uv and then with pip (after torch): the set-up says so,
    writes no stamp, and the next run installs again."""
    site = next((project / ".venv" / "lib").glob("python3*/site-packages"))
    logger = (site / "pip" / "__main__.py").read_text()
    (site / "pip" / "__main__.py").write_text(logger + "if '-e' in sys.argv:\n    sys.exit(3)\n")
    r = _setup(project, EXTRAS="dev", FAKE_UV_FAILS="1")
    assert r.returncode == 1 and "installing fxcourse (.[dev]) into .venv failed" in r.stderr, r.stderr
    assert "uv could not install fxcourse (.[dev])" in r.stdout and "installing with pip" in r.stdout, r.stdout
    assert _installs(project) == _first() + _with_pip()
    assert not (project / ".venv" / ".fxcourse-stamp").exists()
    (site / "pip" / "__main__.py").write_text(logger)
    again = _setup(project, EXTRAS="dev")
    assert again.returncode == 0, again.stderr
    assert _installs(project)[len(_first() + _with_pip()):] == _first()
    assert "up to date" in _setup(project, EXTRAS="dev").stdout


@pytest.mark.parametrize("why", ["asked for pip", "pip has a proxy", "uv cannot be had",
                                 "torch cannot be fetched", "uv fails on torch", "uv fails"])
def test_the_course_is_installed_with_pip_where_uv_is_not_the_way(project, why):
    """uv installs torch (the file pip fetched) and everything else unless FXCOURSE_INSTALLER=pip asks for pip,
    pip is configured with a way to the network uv is not handed (a proxy), uv cannot be installed, pip cannot
    fetch the torch file, or uv fails (on torch or on the rest): then pip installs both, saying why."""
    env, said = {
        "asked for pip": ({"FXCOURSE_INSTALLER": "pip"}, None),
        "pip has a proxy": ({"FAKE_PIP_CONFIG": "global.index-url='https://mirror.example/simple'\n"
                                                "global.proxy='http://proxy.example:3128'"},
                            "pip is configured with proxy, which uv is not handed: installing with pip"),
        "uv cannot be had": ({"FAKE_NO_UV": "1"}, "uv could not be installed: installing with pip"),
        "torch cannot be fetched": ({"FAKE_NO_DOWNLOAD": "1"},
                                    "pip could not fetch torch==2.13.0 as a wheel: installing with pip"),
        "uv fails on torch": ({"FAKE_UV_FAILS_TORCH": "1"}, "uv could not install torch==2.13.0 (its message is "
                                                            "above); installing with pip"),
        "uv fails": ({"FAKE_UV_FAILS": "1"}, "uv could not install fxcourse (.[dev]) (its message is above); "
                                             "installing with pip"),
    }[why]
    r = _setup(project, EXTRAS="dev", **env)
    assert r.returncode == 0, r.stdout + r.stderr
    if said:
        assert f"setup: {said}" in r.stdout, r.stdout
    tried_uv = {"asked for pip": [], "pip has a proxy": [], "uv cannot be had": ["install uv"],
                "torch cannot be fetched": _first()[:2], "uv fails on torch": _first()[:3], "uv fails": _first()}[why]
    assert _installs(project) == [*tried_uv, *_with_pip()]
    assert (project / ".venv" / ".fxcourse-stamp").exists()


# What `pip config list` prints, and the options uv is handed for it: pip's own precedence (an environment
# variable over the install section over global), every extra index, folder and constraints file, and pip's
# newest-from-anywhere choice wherever there is more than one place to look.
PIP_CONFIGS = {
    "local indexes and wheels beside PyPI": (
        ":env:.find-links='/opt/wheels'\nglobal.find-links='/elsewhere/wheels'\n"
        "global.extra-index-url='file:///opt/pypi/simple file:///opt/pypi-more/simple'\n"
        "global.constraint='/etc/xdg/pip/constraints.txt'\nglobal.cert='/etc/ssl/ca.crt'\nglobal.default-timeout='180'",
        "SSL_CERT_FILE=/etc/ssl/ca.crt ",
        "--extra-index-url file:///opt/pypi/simple --extra-index-url file:///opt/pypi-more/simple "
        "--find-links /opt/wheels --constraints /etc/xdg/pip/constraints.txt --index-strategy unsafe-best-match"),
    "a mirror": ("global.index-url='https://other.example/simple'\ninstall.index-url='https://mirror.example/simple'",
                 "", "--index-url https://mirror.example/simple"),
    "no index, one folder": (":env:.no-index='true'\nglobal.find_links='/opt/wheels'", "",
                             "--find-links /opt/wheels --no-index"),
}


@pytest.mark.parametrize("config", list(PIP_CONFIGS))
def test_uv_looks_where_pip_is_configured_to_look(project, config):
    """uv reads none of pip's configuration: a machine whose pip finds torch's dependencies in a local index or
    folder (a CUDA build needs a dozen CUDA packages) would otherwise have uv fetch them from PyPI."""
    printed, cert, sources = PIP_CONFIGS[config]
    r = _setup(project, EXTRAS="dev", FAKE_PIP_CONFIG=printed)
    assert r.returncode == 0, r.stdout + r.stderr
    first = _first()
    assert _installs(project) == [*first[:2], f"{cert}{first[2]} {sources}", f"{cert}{first[3]} {sources}"]


def test_an_unknown_installer_is_refused_before_anything_is_installed(project):
    r = _setup(project, EXTRAS="dev", FXCOURSE_INSTALLER="conda")
    assert r.returncode == 1 and "FXCOURSE_INSTALLER=conda" in r.stderr and "expected uv (the default) or pip" in r.stderr
    assert _installs(project) == []


@pytest.mark.parametrize("change", ["pyproject", "torch", "extra"])
def test_a_changed_pyproject_torch_pin_or_extra_installs_again(project, change):
    assert _setup(project, EXTRAS="dev").returncode == 0
    env = {"EXTRAS": "dev"}
    if change == "pyproject":
        with open(project / "pyproject.toml", "a") as f:
            f.write("\n# a new dependency\n")
    elif change == "torch":
        env["TORCH"] = "torch==2.14.1"
    else:
        env["EXTRAS"] = "browser"
    again = _setup(project, **env)
    assert again.returncode == 0, again.stderr
    assert "up to date" not in again.stdout
    extras = {"pyproject": "dev", "torch": "dev", "extra": "dev,browser"}[change]
    assert _installs(project)[len(_first()):] == _first(extras, env.get("TORCH", "torch==2.13.0"))


def test_lab_after_test_with_a_changed_pyproject_keeps_the_test_extras(project):
    assert _setup(project, EXTRAS="dev,browser").returncode == 0
    with open(project / "pyproject.toml", "a") as f:
        f.write("\n# a new dependency\n")
    assert _setup(project, EXTRAS="").returncode == 0  # make lab
    assert _installs(project)[-1] == "uv pip install torch-2.13.0-py3-none-any.whl -e .[dev,browser]"
    assert "up to date" in _setup(project, EXTRAS="dev,browser").stdout  # make test: nothing to do


def _fake_python(tmp_path: Path, sitecustomize: str, files: dict[str, str] | None = None) -> str:
    """An interpreter that behaves like BASE_PYTHON with `sitecustomize` (and extra modules) loaded first."""
    lib = tmp_path / "fakelib"
    lib.mkdir()
    (lib / "sitecustomize.py").write_text(sitecustomize)
    for name, text in (files or {}).items():
        (lib / name).parent.mkdir(parents=True, exist_ok=True)
        (lib / name).write_text(text)
    exe = tmp_path / "python3"
    exe.write_text(f"#!/bin/sh\nPYTHONPATH={lib} exec {BASE_PYTHON} \"$@\"\n")
    exe.chmod(0o755)
    return str(exe)


def test_missing_venv_module_names_the_package_to_install(tmp_path):
    _copy_setup_files(tmp_path)
    # What Debian's python3 is like without python3-venv: no ensurepip.
    python = _fake_python(tmp_path, "", {"ensurepip/__init__.py": "raise ImportError('ensurepip is not available')\n"})
    out = _setup(tmp_path, python)
    assert out.returncode != 0
    assert "python3-venv" in out.stderr and "venv module" in out.stderr
    assert not (tmp_path / ".venv").exists()


def test_an_interpreter_older_than_the_package_needs_is_named(tmp_path):
    """Python 3.10, which nbgrader 0.9.6 refuses, is refused at once, naming the version needed."""
    _copy_setup_files(tmp_path)
    python = _fake_python(tmp_path, "import sys\nsys.version_info = (3, 10, 14, 'final', 0)\n")
    out = _setup(tmp_path, python)
    assert out.returncode != 0
    assert "needs Python 3.11 or newer" in out.stderr and "Python 3.10" in out.stderr
    assert not (tmp_path / ".venv").exists()


def test_a_missing_interpreter_is_named(tmp_path):
    _copy_setup_files(tmp_path)
    out = _setup(tmp_path, "python3.99-nowhere")
    assert out.returncode != 0 and "python3.99-nowhere" in out.stderr


def test_ci_runs_the_test_command_with_the_externally_managed_system_python():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "PYTHON=/usr/bin/python3" in ci and "make test" in ci
    assert ".venv/" in (ROOT / ".gitignore").read_text().splitlines()


def test_headless_lessons_print_only_the_course_output(tmp_path):
    """`make lab ARGS=--headless` runs kernels over IPC: no 'running over TCP without encryption' warning."""
    # The second cell writes to the kernel process's own stderr, below Python, as C++ libraries do (the
    # profiler's "USDT ... profiler_start" lines): not cell output, and not for a newcomer's terminal.
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('hello from the kernel')"),
                                         nbformat.v4.new_code_cell("import os; os.write(2, b'USDT: noise\\n')")])
    (tmp_path / "lessons").mkdir()
    nbformat.write(nb, tmp_path / "lessons" / "01_tiny.ipynb")
    (tmp_path / "exercises").mkdir()
    out = subprocess.run([sys.executable, "-m", "autograder.cli", "lab", "--headless", "--course", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok     01_tiny.ipynb")
    assert out.stderr.strip() == "", f"the headless run printed more than the course's output: {out.stderr!r}"
    assert not [p for p in (tmp_path / "lessons").iterdir() if p.name != "01_tiny.ipynb"], "kernel files left behind"


def test_a_failing_lesson_shows_the_kernels_own_log(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import os; os.write(2, b'native library says why\\n'); raise ValueError('broken lesson')")])
    (tmp_path / "lessons").mkdir()
    nbformat.write(nb, tmp_path / "lessons" / "01_broken.ipynb")
    (tmp_path / "exercises").mkdir()
    out = subprocess.run([sys.executable, "-m", "autograder.cli", "lab", "--headless", "--course", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1
    assert "FAILED 01_broken.ipynb" in out.stdout and "broken lesson" in out.stdout
    assert "native library says why" in out.stderr


def test_each_deps_script_does_the_part_it_is_asked(tmp_path):
    """`make test` runs the deps scripts' system part beside the venv's making and their Python part after it:
    the Python part touches no system package, and a part they do not know is refused by name."""
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 9.9\n")  # any package asked about is 'present' in version 9.9
    python.chmod(0o755)
    env = {**os.environ, "PYTHON": str(python)}
    ci = ROOT / ".ci"
    said = {}
    for name in ("browser", "hub", "postgres"):
        r = subprocess.run(["bash", str(ci / f"deps-{name}.sh"), "python"], env=env, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        said[name] = r.stdout.splitlines()
    assert said == {"browser": ["browser-deps: playwright present: 9.9"], "hub": [],
                    "postgres": ["deps-postgres: psycopg present: 9.9"]}
    r = subprocess.run(["bash", str(ci / "deps.sh"), "python"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.splitlines() == said["browser"] + said["postgres"], r.stdout + r.stderr
    for argv in (["deps-browser.sh", "apt"], ["deps.sh"], ["deps.sh", "both"]):
        r = subprocess.run(["bash", str(ci / argv[0]), *argv[1:]], env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and ("unknown part 'apt'" in r.stderr or "expected system or python" in r.stderr), \
            (argv, r.stderr)


def test_make_test_installs_the_system_pieces_beside_the_venv_as_root():
    """The test command's set-up: as root, the system part of the deps runs in the background while
    tools/venv.sh makes the venv, and is waited for before the tests; then the Python part, in the venv."""
    recipe = subprocess.run(["make", "-n", "test", "PYTHON=python3"], cwd=ROOT, capture_output=True, text=True,
                            timeout=60).stdout
    lines = [line for line in recipe.replace("\\\n", " ").splitlines() if line.strip()]
    setup = next(line for line in lines if "tools/venv.sh" in line)
    assert "bash .ci/deps.sh system > build/system-deps.log 2>&1 & deps=$!" in setup
    assert setup.index("& deps=$!") < setup.index("sh tools/venv.sh; made=$?") < setup.index("wait $deps")
    later = lines[lines.index(setup) + 1:]
    assert "bash .ci/deps.sh python" in later[0] and "pytest -n 3" in later[1], later
