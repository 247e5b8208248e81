"""An adversarial battery: hostile or broken submissions, each with the exact score it must get.

Exercise ex01_tracing has 10 points: node_summary 2, count_nodes 2, outputs_match 3, q1..q3 1 each.
Every case grades through `check_notebook` (restore from source, jailed workers, judge in this process),
the same pipeline as `fxcourse check`, `fxcourse grade` and the course's `nbgrader autograde`.
"""
from __future__ import annotations

import copy
import json
import os
import socket
import threading

import nbformat
import pytest

from autograder.course import Course
from autograder.grading import check_notebook
from autograder.notebook import answer_cells, grade_id, is_test, read_notebook
from autograder.sandbox import Limits, isolation_level, process_cap_available
from conftest import ROOT

pytestmark = pytest.mark.kernel
A = "ex01_tracing"
SOURCE = ROOT / "solutions" / A / f"{A}.ipynb"
RELEASE = ROOT / "exercises" / A / f"{A}.ipynb"
COURSE = Course(ROOT)
LIMITS = Limits(timeout=15.0, memory=3 * 2**30, output=4 * 2**20)
CORRECT = {grade_id(c): c.source for c in answer_cells(read_notebook(SOURCE))}
POINTS = {"test_node_summary": 2.0, "test_count_nodes": 2.0, "test_outputs_match": 3.0,
          "test_quiz_q1": 1.0, "test_quiz_q2": 1.0, "test_quiz_q3": 1.0}
namespaces = pytest.mark.skipif(isolation_level() != "namespaces",
                                reason="needs the namespace jail (Linux, root, unshare)")


def submit(tmp_path, answers: dict[str, str] | None = None, edit=None, name: str = f"{A}.ipynb"):
    """A filled-in release: `answers` replace answer cells by grade_id; `edit(nb)` may tamper further."""
    nb = read_notebook(RELEASE)
    merged = {**CORRECT, **(answers or {})}
    for cell in nb.cells:
        if grade_id(cell) in merged and not is_test(cell):
            cell.source = merged[grade_id(cell)]
    if edit:
        nb = edit(nb) or nb
    path = tmp_path / name
    nbformat.write(nb, str(path))
    return path


def grade(path):
    report = check_notebook(path, COURSE, limits=LIMITS)
    return report, {t.id: t.points for t in report.tests}


def expect(scores: dict[str, float], lost: dict[str, float]) -> None:
    """Every test keeps its full points except those in `lost` (test id -> points it must get)."""
    assert scores == {**POINTS, **lost}


# ----------------------------------------------------------------------------- faking a pass

def test_monkeypatching_torch_equal_earns_nothing(tmp_path):
    wrong = "import torch\ntorch.equal = lambda a, b: True\n" + CORRECT["outputs_match"].replace(
        "torch.equal(expected, got)", "torch.equal(expected, expected)")
    report, scores = grade(submit(tmp_path, {"outputs_match": wrong}))
    assert report.score == 0 and all("changed what the grader relies on" in t.message for t in report.tests)


def test_monkeypatching_builtins_earns_nothing(tmp_path):
    cheat = "import builtins\nbuiltins.isinstance = lambda *a: True\n" + CORRECT["count_nodes"]
    report, _ = grade(submit(tmp_path, {"count_nodes": cheat}))
    assert report.score == 0  # the patch either breaks the worker or is reported as tampering


def test_patching_the_check_library_earns_nothing(tmp_path):
    cheat = ("import autograder.core as core\ncore.judge_evidence = lambda *a, **k: None\n"
             "core.plain = lambda value, where='': value\n"
             "def node_summary(gm):\n    return None\n")
    report, _ = grade(submit(tmp_path, {"node_summary": cheat}))
    assert report.score == 0


def test_an_always_equal_object_earns_nothing(tmp_path):
    cheat = ("class Yes(list):\n    def __eq__(self, other):\n        return True\n"
             "    def __ne__(self, other):\n        return False\n"
             "def node_summary(gm):\n    return Yes()\n")
    report, scores = grade(submit(tmp_path, {"node_summary": cheat}))
    expect(scores, {"test_node_summary": 0.0})


def test_a_bool_subclass_that_lies_earns_nothing(tmp_path):
    cheat = ("import torch\nclass Always(int):\n    def __eq__(self, other):\n        return True\n"
             "def outputs_match(model, gm, *inputs, atol=0.0):\n    return Always(1)\n")
    _, scores = grade(submit(tmp_path, {"outputs_match": cheat}))
    expect(scores, {"test_outputs_match": 0.0})


def test_printing_all_tests_passed_earns_nothing(tmp_path):
    cheat = ("import sys\nprint('\u2714 node_summary: 6 hidden case(s) passed')\n"
             "print('All tests passed', file=sys.stderr)\n"
             "def node_summary(gm):\n    print('All tests passed')\n")
    _, scores = grade(submit(tmp_path, {"node_summary": cheat}))
    expect(scores, {"test_node_summary": 0.0})


def test_writing_a_forged_results_file_earns_nothing(tmp_path):
    cheat = ("import torch, os\n"
             "torch.save({'calls': [{'evidence': ['A']}] * 12, 'cell_errors': [], 'tampered': []}, 'evidence.pt')\n"
             "open('progress.txt', 'a').write('done\\n')\n"
             "def node_summary(gm):\n    os._exit(0)\n")
    _, scores = grade(submit(tmp_path, {"node_summary": cheat}))
    expect(scores, {"test_node_summary": 0.0})


def test_evidence_of_a_strange_shape_fails_the_case_not_the_grader(tmp_path):
    cheat = "def node_summary(gm):\n    return [('placeholder', 'x')] * 100000\n"
    _, scores = grade(submit(tmp_path, {"node_summary": cheat}))
    expect(scores, {"test_node_summary": 0.0})


# ------------------------------------------------------------------------------ breaking the run

def test_sys_exit_in_a_function_fails_that_test_alone(tmp_path):
    _, scores = grade(submit(tmp_path, {"count_nodes": "import sys\ndef count_nodes(gm, op=None):\n    sys.exit(3)"}))
    expect(scores, {"test_count_nodes": 0.0})


def test_os_exit_in_a_function_fails_that_test_alone(tmp_path):
    report, scores = grade(submit(tmp_path, {"count_nodes": "import os\ndef count_nodes(gm, op=None):\n    os._exit(0)"}))
    expect(scores, {"test_count_nodes": 0.0})


def test_os_exit_at_the_top_of_an_answer_cell_costs_only_that_cell(tmp_path):
    report, scores = grade(submit(tmp_path, {"count_nodes": "import os\nos._exit(1)\n" + CORRECT["count_nodes"]}))
    expect(scores, {"test_count_nodes": 0.0})


def test_an_endless_loop_times_out_that_test_alone(tmp_path):
    loop = "def outputs_match(model, gm, *inputs, atol=0.0):\n    while True:\n        pass\n"
    report, scores = grade(submit(tmp_path, {"outputs_match": loop}))
    expect(scores, {"test_outputs_match": 0.0})
    assert "CPU time" in next(t.message for t in report.tests if t.id == "test_outputs_match")


def test_a_loop_that_swallows_keyboard_interrupt_times_out_that_test_alone(tmp_path):
    loop = ("def node_summary(gm):\n    while True:\n        try:\n            pass\n"
            "        except KeyboardInterrupt:\n            pass\n")
    _, scores = grade(submit(tmp_path, {"node_summary": loop}))
    expect(scores, {"test_node_summary": 0.0})


def test_allocating_8_gib_fails_that_test_alone(tmp_path):
    hog = "import torch\ndef count_nodes(gm, op=None):\n    x = torch.ones(2**31, dtype=torch.float32)\n    return 1"
    report, scores = grade(submit(tmp_path, {"count_nodes": hog}))
    expect(scores, {"test_count_nodes": 0.0})
    assert "MemoryError" in next(t.message for t in report.tests if t.id == "test_count_nodes") or \
        "memory" in next(t.message for t in report.tests if t.id == "test_count_nodes")


def test_a_segfault_fails_that_test_alone(tmp_path):
    crash = "import ctypes\ndef node_summary(gm):\n    return ctypes.string_at(0)\n"
    report, scores = grade(submit(tmp_path, {"node_summary": crash}))
    expect(scores, {"test_node_summary": 0.0})
    assert "SIGSEGV" in report.tests[0].message


def test_a_flood_of_output_is_capped_and_costs_nothing_else(tmp_path):
    flood = "import sys\nfor _ in range(2000):\n    sys.stdout.write('x' * 10000 + '\\n')\n" + CORRECT["node_summary"]
    _, scores = grade(submit(tmp_path, {"node_summary": flood}))
    expect(scores, {})


@namespaces
@pytest.mark.skipif(not process_cap_available(), reason="needs a pids cgroup (cgroup file system, root)")
def test_a_fork_bomb_is_capped_and_costs_nothing_else(tmp_path):
    # Up to 1000 children that linger: without the cap all of them start and the cell raises before it
    # defines count_nodes; with it, fork fails after about Limits.processes and the cell goes on.
    bomb = ("import os, time\nkids = 0\ntry:\n    for _ in range(1000):\n        if os.fork() == 0:\n"
            "            time.sleep(2)\n            os._exit(0)\n        kids += 1\nexcept OSError:\n    pass\n"
            "if kids >= 1000:\n    raise RuntimeError('no process cap')\n")
    _, scores = grade(submit(tmp_path, {"count_nodes": bomb + CORRECT["count_nodes"]}))
    expect(scores, {})


@namespaces
def test_killing_the_parent_process_fails_only_that_test(tmp_path):
    killer = "import os, signal\ndef node_summary(gm):\n    os.kill(os.getppid(), signal.SIGKILL)\n    os.kill(-1, signal.SIGKILL)\n"
    _, scores = grade(submit(tmp_path, {"node_summary": killer}))
    expect(scores, {"test_node_summary": 0.0})
    assert os.getpid() > 0  # still here


# ----------------------------------------------------------------------------------- reaching out

@namespaces
def test_student_code_cannot_connect_to_a_loopback_port(tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(30)
    port = server.getsockname()[1]
    accepted = []
    threading.Thread(target=lambda: accepted.append(_accept(server)), daemon=True).start()
    probe = (f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
             f"    q1 = 'CONNECTED'\nexcept OSError:\n    q1 = 'A'\n")
    _, scores = grade(submit(tmp_path, {"quiz_q1": probe}))
    expect(scores, {})  # the connection failed, so q1 fell back to the right answer
    server.close()
    assert accepted == [] or accepted == [None]


def _accept(server):
    try:
        return server.accept()
    except OSError:
        return None


@namespaces
def test_student_code_cannot_read_the_source_keys_or_other_submissions(tmp_path):
    thief = ("import re, os, json\nfound = 'none'\n"
             f"for path in [{str(SOURCE)!r}, {str(ROOT / 'solutions')!r}, 'job.json']:\n"
             "    try:\n        text = open(path).read() if os.path.isfile(path) else str(os.listdir(path))\n"
             "        m = re.search(r'key=.(.)', text)\n        found = m.group(1) if m else found\n"
             "    except OSError:\n        pass\n"
             "q1 = found if found != 'none' else 'C'\nq2 = q1\nq3 = q1\n")
    report, scores = grade(submit(tmp_path, {"quiz_q1": thief, "quiz_q2": "pass", "quiz_q3": "pass"}))
    expect(scores, {"test_quiz_q1": 0.0, "test_quiz_q2": 0.0, "test_quiz_q3": 0.0})


@namespaces
def test_student_code_cannot_write_outside_its_scratch_folder(tmp_path):
    target = tmp_path / "gradebook.db"
    target.write_text("precious")
    vandal = (f"try:\n    open({str(target)!r}, 'w').write('gone')\nexcept OSError:\n    pass\n"
              f"try:\n    open({str(ROOT / 'README.md')!r}, 'a').write('gone')\nexcept OSError:\n    pass\n"
              + CORRECT["node_summary"])
    _, scores = grade(submit(tmp_path, {"node_summary": vandal}))
    expect(scores, {})
    assert target.read_text() == "precious"
    assert "gone" not in (ROOT / "README.md").read_text()


# ------------------------------------------------------------------------------------- tampering

def test_deleted_test_cells_are_restored(tmp_path):
    path = submit(tmp_path, edit=lambda nb: setattr(nb, "cells", [c for c in nb.cells if not is_test(c)]))
    report, scores = grade(path)
    expect(scores, {})
    assert any("deleted" in n for n in report.notes)


def test_duplicated_test_cells_count_once(tmp_path):
    def dup(nb):
        nb.cells.extend(copy.deepcopy([c for c in nb.cells if is_test(c)]))
    report, scores = grade(submit(tmp_path, edit=dup))
    expect(scores, {})
    assert report.max_score == 10


def test_edited_test_cells_are_replaced_by_the_original(tmp_path):
    def gut(nb):
        for c in nb.cells:
            if is_test(c):
                c.source = "pass"
    report, scores = grade(submit(tmp_path, {"node_summary": "def node_summary(gm):\n    return []"}, edit=gut))
    expect(scores, {"test_node_summary": 0.0})
    assert any("was edited" in n for n in report.notes)


def test_changed_points_are_ignored(tmp_path):
    def inflate(nb):
        for c in nb.cells:
            if is_test(c):
                c.metadata["nbgrader"]["points"] = 100
    report, _ = grade(submit(tmp_path, edit=inflate))
    assert report.max_score == 10 and report.score == 10


def test_renamed_grade_ids_are_matched_by_the_function_name(tmp_path):
    def rename(nb):
        for c in answer_cells(nb):
            c.metadata["nbgrader"]["grade_id"] = "mine_" + c.metadata["nbgrader"]["grade_id"]
    _, scores = grade(submit(tmp_path, edit=rename))
    expect(scores, {})


def test_stripped_metadata_is_matched_by_the_function_name(tmp_path):
    def strip(nb):
        for c in nb.cells:
            c.metadata = {}
    report, scores = grade(submit(tmp_path, edit=strip))
    expect(scores, {})
    assert any("no grading metadata" in n for n in report.notes)


def test_a_cell_added_to_patch_the_tests_is_ignored(tmp_path):
    def patch(nb):
        nb.cells.append(nbformat.v4.new_code_cell(
            "import autograder.checks as c\nc.run_check = lambda *a, **k: None\nc.check_quiz = lambda *a, **k: None"))
    stubs = {k: "raise NotImplementedError()" for k in CORRECT}
    _, scores = grade(submit(tmp_path, stubs, edit=patch))
    assert sum(scores.values()) == 0


def test_an_answer_cell_turned_into_markdown_counts_as_missing(tmp_path):
    def retype(nb):
        for i, c in enumerate(nb.cells):
            if grade_id(c) == "count_nodes":
                nb.cells[i] = nbformat.v4.new_markdown_cell(c.source)
    report, scores = grade(submit(tmp_path, edit=retype))
    expect(scores, {"test_count_nodes": 0.0})


def test_a_notebook_beyond_repair_scores_zero_with_notes_not_a_crash(tmp_path):
    path = tmp_path / f"{A}.ipynb"
    path.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    report, scores = grade(path)
    assert report.score == 0 and len(report.tests) == 6
    assert any("missing" in n for n in report.notes)


# ------------------------------------------------------------------------------ secrets, warnings

def test_failure_messages_never_reveal_a_quiz_key(tmp_path):
    wrong = {"quiz_q1": 'q1 = "B"', "quiz_q2": 'q2 = "A"', "quiz_q3": 'q3 = "A"'}
    report, scores = grade(submit(tmp_path, wrong))
    for t in report.tests:
        if t.id.startswith("test_quiz"):
            text = t.message + (t.hint or "")
            key = {"test_quiz_q1": "A", "test_quiz_q2": "C", "test_quiz_q3": "B"}[t.id]
            assert f"'{key}'" not in text and f'"{key}"' not in text and "expected" not in text


def test_warnings_and_stderr_do_not_cost_a_correct_answer_points(tmp_path):
    noisy = ("import warnings, sys\nwarnings.warn('old API', DeprecationWarning)\n"
             "def node_summary(gm):\n    warnings.warn('torch.ao.quantization is deprecated', DeprecationWarning)\n"
             "    warnings.warn('reduce_range will be deprecated', UserWarning)\n"
             "    print('some noise', file=sys.stderr)\n"
             "    return [(n.op, n.name) for n in gm.graph.nodes]\n")
    _, scores = grade(submit(tmp_path, {"node_summary": noisy}))
    expect(scores, {})
