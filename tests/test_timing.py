"""How make test runs the suite: tests/_timing.py's per-file times under pytest-xdist; tests/_xdist.py's groups,
each run whole on one worker; and a run that selects no test fails (pytest's exit code 5 stays 5 under xdist),
so CI cannot pass on an empty selection."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FILES = {
    "test_slow.py": "import time\n\ndef test_waits():\n    time.sleep(0.6)\n\ndef test_waits_too():\n    time.sleep(0.6)\n",
    "test_quick.py": ("import subprocess, sys, pytest\n\n@pytest.mark.parametrize('n', range(3))\ndef test_n(n):\n"
                      "    assert n < 3\n\ndef test_spins():\n    subprocess.run([sys.executable, '-c', "
                      "'import time\\nend = time.process_time() + 0.4\\nwhile time.process_time() < end: pass'])\n"),
}


def _pytest(folder: Path, files: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """pytest run in `folder` on `files` (written there), with tests/ importable and none of this run's settings."""
    for name, text in files.items():
        (folder / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}
    env["PYTHONPATH"] = str(HERE)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return _pytest(folder, FILES, "-p", "_timing", *args)


def _table(folder: Path) -> dict[str, tuple[float, float, int]]:
    lines = (folder / "build" / "test-times.txt").read_text().splitlines()
    assert lines[0].startswith("# pytest run of ") and lines[1].split()[0] == "file"
    rows = {}
    for line in lines[2:lines.index("")]:
        *name, busy, span, tests = line.split()
        rows[" ".join(name)] = (float(busy), float(span), int(tests))
    return rows


def test_every_file_gets_its_time_and_test_count_slowest_first_under_xdist(tmp_path):
    r = _run(tmp_path, "-n", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    rows = _table(tmp_path)
    # The order is by time, which a busy machine can change (the spinning test takes longer), so it is checked
    # as an order, not as a list of names.
    assert sorted(rows) == ["all files", "test_quick.py", "test_slow.py"] and list(rows)[-1] == "all files", rows
    files = [rows[name][0] for name in list(rows)[:-1]]
    assert files == sorted(files, reverse=True), rows  # slowest first
    assert rows["test_slow.py"][2] == 2 and rows["test_quick.py"][2] == 4 and rows["all files"][2] == 6
    assert rows["test_slow.py"][0] >= 1.2  # both sleeps counted, from whichever worker ran them
    assert "slowest test files" in r.stdout and "test_slow.py" in r.stdout.split("slowest test files")[1]
    text = (tmp_path / "build" / "test-times.txt").read_text()
    assert "2 worker(s)" in text
    tests = text.split("\n\n", 1)[1].splitlines()  # below the files: the slowest tests, slowest first
    assert tests[0].split() == ["s", "set-up", "CPU", "s", "test", "(set-up", "+", "call", "+", "tear-down)"]
    assert len(tests) == 1 + 6
    table = {row.split()[3]: [float(x) for x in row.split()[:3]] for row in tests[1:]}  # test -> wall, set-up, CPU
    walls = [wall for wall, _, _ in table.values()]
    assert walls == sorted(walls, reverse=True), tests  # slowest first
    for name in ("test_slow.py::test_waits", "test_slow.py::test_waits_too"):
        wall, _, cpu = table[name]
        assert wall >= 0.6 and 0 <= cpu < 0.5, (name, table)  # a sleep takes its time and costs no CPU
    assert table["test_quick.py::test_spins"][2] >= 0.3, table  # the CPU of a process it started and waited for
    assert tests[-1].split()[3].startswith("test_quick.py::test_n[")


def test_a_run_that_selects_no_test_fails_with_exit_code_5(tmp_path):
    r = _run(tmp_path, "-n", "2", "--dist", "loadgroup", "-k", "no_such_test")
    assert r.returncode == 5, r.stdout + r.stderr


GROUPED = {
    "conftest.py": ("import _xdist\n\nGROUPS = {'test_a.py': 'a', 'test_b.py::test_paired': 'b'}\n\n"
                    "def pytest_xdist_make_scheduler(config, log):\n"
                    "    return _xdist.scheduler(config, log, GROUPS)\n"),
    "test_a.py": ("import os, time, pytest\n\n@pytest.mark.parametrize('n', range(4))\ndef test_a(n):\n"
                  "    time.sleep(0.2)\n    print(n, os.environ['PYTEST_XDIST_WORKER'], file=open('a.log', 'a'))\n"),
    "test_b.py": ("import os, pytest\n\n@pytest.mark.parametrize('n', range(3))\ndef test_paired(n):\n"
                  "    print(n, os.environ['PYTEST_XDIST_WORKER'], file=open('b.log', 'a'))\n\n"
                  "@pytest.mark.parametrize('n', range(6))\ndef test_free(n):\n"
                  "    print(n, os.environ['PYTEST_XDIST_WORKER'], file=open('free.log', 'a'))\n"),
}


def test_each_group_runs_whole_on_one_worker(tmp_path):
    r = _pytest(tmp_path, GROUPED, "-n", "2", "--dist", "loadgroup")
    assert r.returncode == 0, r.stdout + r.stderr
    ran = {log: [line.split() for line in (tmp_path / f"{log}.log").read_text().splitlines()]
           for log in ("a", "b", "free")}
    assert sorted(int(n) for n, _ in ran["a"]) == [0, 1, 2, 3] and len({w for _, w in ran["a"]}) == 1, ran
    assert sorted(int(n) for n, _ in ran["b"]) == [0, 1, 2] and len({w for _, w in ran["b"]}) == 1, ran
    assert len(ran["free"]) == 6


ORDERED = {
    "conftest.py": ("import _xdist\n\nGROUPS = {'test_a.py': 'a'}\nFIRST = ('test_c.py::test_late', 'a')\n\n"
                    "def pytest_xdist_make_scheduler(config, log):\n"
                    "    return _xdist.scheduler(config, log, GROUPS, FIRST)\n"),
    "test_a.py": ("import pytest\n\n@pytest.mark.parametrize('n', range(2))\ndef test_a(n):\n"
                  "    print(f'a{n}', file=open('order.log', 'a'))\n"),
    "test_c.py": ("def test_early():\n    print('early', file=open('order.log', 'a'))\n\n"
                  "def test_late():\n    print('late', file=open('order.log', 'a'))\n"),
}


def test_the_units_named_first_go_first_in_their_order(tmp_path):
    """conftest's XDIST_FIRST: a test named there goes before a group (which would otherwise go first, having
    more tests), and the group before the tests not named; one worker runs them in the order they were sent."""
    r = _pytest(tmp_path, ORDERED, "-n", "1", "--dist", "loadgroup")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "order.log").read_text().split() == ["late", "a0", "a1", "early"]


def test_a_group_key_names_a_module_a_test_or_the_parameters_a_test_id_begins_with():
    from _xdist import group_of

    groups = {"test_c.py": "c", "test_c.py::test_q": "q", "test_c.py::test_p[ex01": "ex01",
              "test_c.py::test_p[ex01_tracing.f": "f"}
    assert group_of("tests/test_c.py::test_p[ex01_tracing]", groups) == "ex01"
    assert group_of("tests/test_c.py::test_p[ex01_tracing.f: a clause]", groups) == "f"  # the most precise key
    assert group_of("tests/test_c.py::test_p[ex02_nodes]", groups) == "c"
    assert group_of("tests/test_c.py::test_q[ex01_tracing]", groups) == "q"
    assert group_of("tests/test_c.py::test_r", groups) == "c"
    assert group_of("tests/test_d.py::test_p[ex01_tracing]", groups) is None
