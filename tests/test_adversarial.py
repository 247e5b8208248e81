"""An adversarial battery: hostile or broken submissions, each with the exact score it must get.

Exercise ex01_tracing has 10 points: node_summary 2, count_nodes 2, outputs_match 3, q1..q3 1 each.
Cases marked `namespaces` need the jail (autograder.grader.jail.sandbox.jail_support() empty); the others hold everywhere.
Every case grades through `check_notebook` (restore from source, jailed workers, judge in this process),
the same pipeline as `fxcourse check`, `fxcourse grade` and the course's `nbgrader autograde`.
"""
from __future__ import annotations

import copy
import dataclasses
import json
import os
import socket
import tempfile
import threading

import nbformat
import pytest

from autograder.course.root import Course
from autograder.grader.engine.grading import check_notebook
from autograder.course.notebook import answer_cells, grade_id, is_test, read_notebook
from autograder.grader.jail.sandbox import Limits, isolation_level, process_cap_available
from autograder.grader.jail.worker import address_space_limit
from conftest import ROOT

pytestmark = pytest.mark.kernel
A = "ex01_tracing"
SOURCE = ROOT / "solutions" / A / f"{A}.ipynb"
RELEASE = ROOT / "exercises" / A / f"{A}.ipynb"
COURSE = Course(ROOT)
LIMITS = Limits(timeout=15.0, memory=3 * 2**30, output=4 * 2**20)
# for the answers that loop until they are stopped: the CPU-time limit they meet, no longer than it must be
LOOP_LIMITS = dataclasses.replace(LIMITS, timeout=5.0)
CORRECT = {grade_id(c): c.source for c in answer_cells(read_notebook(SOURCE))}
POINTS = {"test_node_summary": 2.0, "test_count_nodes": 2.0, "test_outputs_match": 3.0,
          "test_quiz_q1": 1.0, "test_quiz_q2": 1.0, "test_quiz_q3": 1.0}
namespaces = pytest.mark.skipif(isolation_level() != "jail",
                                reason="needs the jail (Linux, root, unshare, tmpfs, proc)")


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


def grade(path, limits: Limits = LIMITS):
    report = check_notebook(path, COURSE, limits=limits)
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
    cheat = ("import autograder.checks.framework as core\ncore.judge_evidence = lambda *a, **k: None\n"
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


def test_an_answer_kept_from_an_earlier_call_fails_in_the_jail_with_its_hint(tmp_path):
    """A case given again (framework.given_again) is given again in the jailed worker too: count_nodes behind
    functools.lru_cache answers for the graph it was first handed, not for the graph a pass changed since."""
    cached = "import functools\n" + CORRECT["count_nodes"].replace(
        "def count_nodes", "@functools.lru_cache(maxsize=None)\ndef count_nodes")
    assert cached.count("lru_cache") == 1
    report, scores = grade(submit(tmp_path, {"count_nodes": cached}))
    expect(scores, {"test_count_nodes": 0.0})
    (test,) = [t for t in report.tests if t.id == "test_count_nodes"]
    assert "that is what count_nodes gave back the first time" in test.message, test.message
    assert test.hint_id == "shared.answer_for_objects_as_they_are_now", (test.hint_id, test.hint)


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



def test_a_quiz_answer_whose_class_name_exits_fails_that_quiz_alone(tmp_path):
    # The worker saves a run of quizzes' evidence once, after the last: reading an answer's evidence must run none
    # of its code, or an exit there would leave the quizzes before it without evidence (and blame the first).
    evil = ("import os\nclass Meta(type):\n    @property\n    def __name__(cls):\n        os._exit(3)\n"
            "class Answer(metaclass=Meta):\n    pass\nq2 = Answer()\n")
    report, scores = grade(submit(tmp_path, {"quiz_q2": evil}))
    expect(scores, {"test_quiz_q2": 0.0})
    assert "got Answer" in next(t.message for t in report.tests if t.id == "test_quiz_q2")


def test_a_name_whose_lookup_exits_costs_only_its_quiz(tmp_path):
    # A key of the learner's own in the namespace, equal in hash to "q3", makes looking q3 up run its __eq__: the
    # worker then saves each quiz's evidence as it goes, and the quizzes before q3 keep theirs.
    evil = ("import os\nclass Key:\n    armed = False\n    def __hash__(self):\n        return hash('q3')\n"
            "    def __eq__(self, other):\n        if Key.armed:\n            os._exit(3)\n        return False\n"
            "globals()[Key()] = 1\nq3 = 'A'\nKey.armed = True\n")  # Key first: a lookup of q3 meets it first
    _, scores = grade(submit(tmp_path, {"quiz_q3": evil}))
    expect(scores, {"test_quiz_q3": 0.0})

def test_os_exit_at_the_top_of_an_answer_cell_costs_only_that_cell(tmp_path):
    report, scores = grade(submit(tmp_path, {"count_nodes": "import os\nos._exit(1)\n" + CORRECT["count_nodes"]}))
    expect(scores, {"test_count_nodes": 0.0})


def test_an_endless_loop_times_out_that_test_alone(tmp_path):
    loop = "def outputs_match(model, gm, *inputs, atol=0.0):\n    while True:\n        pass\n"
    report, scores = grade(submit(tmp_path, {"outputs_match": loop}), LOOP_LIMITS)
    expect(scores, {"test_outputs_match": 0.0})
    assert "CPU time" in next(t.message for t in report.tests if t.id == "test_outputs_match")


def test_a_loop_that_swallows_keyboard_interrupt_times_out_that_test_alone(tmp_path):
    loop = ("def node_summary(gm):\n    while True:\n        try:\n            pass\n"
            "        except KeyboardInterrupt:\n            pass\n")
    _, scores = grade(submit(tmp_path, {"node_summary": loop}), LOOP_LIMITS)
    expect(scores, {"test_node_summary": 0.0})


def test_allocating_8_gib_fails_that_test_alone(tmp_path):
    hog = "import torch\ndef count_nodes(gm, op=None):\n    x = torch.ones(2**31, dtype=torch.float32)\n    return 1"
    report, scores = grade(submit(tmp_path, {"count_nodes": hog}))
    expect(scores, {"test_count_nodes": 0.0})
    assert "MemoryError" in next(t.message for t in report.tests if t.id == "test_count_nodes") or \
        "memory" in next(t.message for t in report.tests if t.id == "test_count_nodes")


def _mapped() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))


def test_the_memory_limit_is_room_beyond_what_is_mapped_already():
    # torch's CUDA build maps about 3 GiB on import, its CPU build about 0.6: the limit leaves the same room on both
    before = _mapped()
    limit = address_space_limit(2**30)
    assert before + 2**30 <= limit <= _mapped() + 2**30


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
    probe = CORRECT["quiz_q1"] + (f"\nimport socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), "
                                  "timeout=2)\n    q1 = 'CONNECTED'\nexcept OSError:\n    pass\n")
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
             f"for path in [{str(SOURCE)!r}, {str(ROOT / 'solutions')!r}, {str(ROOT / 'solutions' / 'quizzes.json')!r},"
             " 'job.json']:\n"
             "    try:\n        text = open(path).read() if os.path.isfile(path) else str(os.listdir(path))\n"
             "        m = re.search(r'key\\W{1,4}([A-E])', text)\n        found = m.group(1) if m else found\n"
             "    except OSError:\n        pass\n"
             "q1 = found\nq2 = q1\nq3 = q1\n")  # nothing found: 'none', which no quiz accepts
    report, scores = grade(submit(tmp_path, {"quiz_q1": thief, "quiz_q2": "pass", "quiz_q3": "pass"}))
    expect(scores, {"test_quiz_q1": 0.0, "test_quiz_q2": 0.0, "test_quiz_q3": 0.0})


@namespaces
def test_student_code_cannot_write_outside_its_scratch_folder(tmp_path):
    target = tmp_path / "gradebook.db"
    target.write_text("precious")
    readme = (ROOT / "README.md").read_bytes()
    vandal = (f"try:\n    open({str(target)!r}, 'w').write('gone')\nexcept OSError:\n    pass\n"
              f"try:\n    open({str(ROOT / 'README.md')!r}, 'a').write('gone')\nexcept OSError:\n    pass\n"
              + CORRECT["node_summary"])
    _, scores = grade(submit(tmp_path, {"node_summary": vandal}))
    expect(scores, {})
    assert target.read_text() == "precious"
    assert (ROOT / "README.md").read_bytes() == readme


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


# ------------------------------------------------------------------ the jail: files, processes, cgroups
# Each hostile cell below reports through a quiz answer: it keeps the right answer only when the attack failed,
# so a lost quiz point is a hole in the jail (and the host-side assertions check the same from outside).

def _flag_if(attack: str, quiz: str = "quiz_q1") -> dict[str, str]:
    """Answers whose `quiz` keeps its right answer unless `attack` (code setting `broke = True`) succeeded."""
    var = quiz[len("quiz_"):]
    return {quiz: CORRECT[quiz] + "\nbroke = False\n" + attack + f"\nif broke:\n    {var} = 'broke'\n"}


def _open_each(targets: list) -> str:
    """Attack code: open each (path, mode) and close it at once; any that opens is a hole (nothing written)."""
    return (f"import os\nfor path, mode in {targets!r}:\n    try:\n        open(path, mode).close()\n"
            "        broke = True\n    except OSError:\n        pass\n")


def _graded_creating_nothing(tmp_path, attack: str, created: str) -> None:
    """Grade the attack: full marks (every open failed), and `created` not made (removed if it was)."""
    try:
        _, scores = grade(submit(tmp_path, _flag_if(attack)))
        assert not os.path.exists(created)
    finally:
        if os.path.exists(created):
            os.unlink(created)
    expect(scores, {})


@namespaces
def test_writing_into_site_packages_or_torch_is_refused(tmp_path):
    import torch
    target = os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), f"fxcourse_probe_{os.getpid()}.pth")
    _graded_creating_nothing(tmp_path, _open_each([(target, "w"), (torch.__file__, "a")]), target)


@namespaces
def test_writing_into_the_autograder_sources_is_refused(tmp_path):
    target = str(ROOT / "autograder" / "checks" / f"evil_{os.getpid()}.py")
    sources = [str(ROOT / "autograder" / "checks" / f"{A}.py"), str(ROOT / "autograder" / "core.py"),
               str(ROOT / "fxplayground" / "__init__.py")]
    _graded_creating_nothing(tmp_path, _open_each([(p, "a") for p in sources] + [(target, "w")]), target)



def _nothing_broke(tmp_path, attack: str) -> None:
    """Grade a submission whose quiz answer turns wrong where `attack` worked (`broke = True`): no score may change."""
    _, scores = grade(submit(tmp_path, _flag_if(attack)))
    expect(scores, {})

@namespaces
def test_writing_etc_is_refused(tmp_path):
    target = f"/etc/fxcourse-probe-{os.getpid()}"
    _graded_creating_nothing(tmp_path, _open_each([("/etc/passwd", "a"), ("/etc/hosts", "a"), (target, "w")]),
                             target)


@namespaces
def test_writing_kernel_settings_under_proc_sys_is_refused(tmp_path):
    # writes back the value it read: harmless even where it worked
    attack = ("for path in ['/proc/sys/kernel/core_pattern', '/proc/sys/vm/overcommit_memory',\n"
              "             '/proc/sys/kernel/hostname', '/proc/sysrq-trigger']:\n"
              "    try:\n        with open(path, 'r+') as f:\n            f.write(f.read())\n        broke = True\n"
              "    except OSError:\n        pass\n")
    _nothing_broke(tmp_path, attack)


@namespaces
def test_the_worker_runs_as_an_unprivileged_uid_of_its_own(tmp_path):
    # Without root the worker keeps the grader's supplementary groups (setgroups is denied in an unprivileged
    # user namespace: autograder/SECURITY.md, out of scope); as root it has none.
    groups = "os.getgroups() != []" if os.geteuid() == 0 else "0 in os.getgroups()"
    attack = (f"import os\nbroke = os.getuid() == 0 or os.geteuid() == 0 or {groups}\n"
              "caps = [l for l in open('/proc/self/status') if l.startswith(('CapEff', 'CapPrm'))]\n"
              "broke = broke or any(int(l.split()[1], 16) for l in caps)\n")
    _nothing_broke(tmp_path, attack)


@namespaces
def test_proc_shows_only_the_workers_own_processes(tmp_path):
    # the grader (this pytest) and any other worker would show in a shared /proc
    attack = ("import os\nfor pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n    try:\n"
              "        cmd = open(f'/proc/{pid}/cmdline', 'rb').read()\n    except OSError:\n        continue\n"
              "    if b'pytest' in cmd or (b'autograder.grader.jail.worker' in cmd and int(pid) != os.getpid()) or int(pid) > 50:\n"
              "        broke = True\n")
    _nothing_broke(tmp_path, attack)


@namespaces
def test_another_workers_job_cannot_be_read_while_both_run(tmp_path):
    # An honest submission is graded at the same time; the thief looks for its job file (every answer cell)
    # through /proc and in every scratch folder, and would copy the answers it found.
    honest_dir, thief_dir = tmp_path / "honest", tmp_path / "thief"
    honest_dir.mkdir(), thief_dir.mkdir()
    honest = submit(honest_dir)
    # the thief looks for 10 s: the honest submission beside it is graded within about 2 (5x that under load)
    steal = ("import os, glob, time, json\nstolen = None\nend = time.time() + 10\n"
             "while stolen is None and time.time() < end:\n"
             "    paths = glob.glob('/proc/[0-9]*/cwd/job.json')\n"
             "    paths += glob.glob('/proc/[0-9]*/root/tmp/fxcourse-worker-*/job.json')\n"
             "    paths += glob.glob('/tmp/fxcourse-worker-*/job.json') + glob.glob('/proc/[0-9]*/fd/*')\n"
             "    for path in paths:\n        try:\n            text = open(path).read()\n"
             "        except (OSError, UnicodeDecodeError):\n            continue\n"
             "        if 'def count_nodes' in text:\n            stolen = text\n            break\n"
             "    time.sleep(0.2)\n"
             "if stolen:\n    for cell in json.loads(stolen)['cells']:\n        exec(cell['source'])\n")
    stubs = {k: "# YOUR CODE HERE\nraise NotImplementedError()" for k in CORRECT if not k.startswith("quiz")}
    thief = submit(thief_dir, {**stubs, "node_summary": "import torch\n" + steal})
    out = {}
    worker = threading.Thread(target=lambda: out.update(honest=grade(honest)[1]))
    worker.start()
    _, scores = grade(thief)
    worker.join()
    assert out["honest"] == POINTS
    expect(scores, {"test_node_summary": 0.0, "test_count_nodes": 0.0, "test_outputs_match": 0.0})


@namespaces
@pytest.mark.skipif(not process_cap_available(), reason="needs a pids cgroup (cgroup file system, root)")
def test_writing_its_own_pids_max_is_refused(tmp_path):
    attack = ("import os\nfor line in open('/proc/self/cgroup'):\n    path = line.strip().split(':', 2)[2]\n"
              "    for root in ('/sys/fs/cgroup/pids', '/sys/fs/cgroup'):\n"
              "        for name in ('pids.max', 'cgroup.procs'):\n"
              "            try:\n                open(os.path.join(root + path, name), 'w').write('max')\n"
              "                broke = True\n            except OSError:\n                pass\n")
    _nothing_broke(tmp_path, attack)


@namespaces
def test_filling_scratch_stops_at_its_total_cap_and_scratch_is_removed(tmp_path):
    # RLIMIT_FSIZE caps one file; the tmpfs caps them all together (Limits.scratch, 256 MiB)
    attack = ("import os\nwritten = 0\nblock = b'x' * 2**20\ntry:\n    for i in range(1024):\n"
              "        with open(f'fill-{i}', 'wb') as f:\n            for _ in range(8):\n"
              "                f.write(block)\n                written += len(block)\nexcept OSError:\n    pass\n"
              "broke = written > 300 * 2**20\nfor i in range(1024):\n    try:\n        os.unlink(f'fill-{i}')\n"
              "    except OSError:\n        pass\n")
    _nothing_broke(tmp_path, attack)
    mine = f"fxcourse-worker-{os.getpid()}-"
    assert mine not in open("/proc/self/mountinfo").read()   # unmounted...
    assert not [p for p in os.listdir(tempfile.gettempdir()) if p.startswith(mine)]  # ...and removed


@namespaces
def test_top_level_code_that_fills_scratch_costs_only_its_own_tests(tmp_path):
    # The worker's own files (progress, evidence) share the scratch tmpfs: a cell that leaves it full is stopped
    # there and named with the limit; the other answers, quizzes included, keep their points.
    fill = ("import os\nblock = b'x' * 2**20\ntry:\n    for i in range(1024):\n"
            "        with open(f'fill-{i}', 'wb') as f:\n            f.write(block)\n            f.write(block)\n"
            "except OSError:\n    pass\n")
    report, scores = grade(submit(tmp_path, {"count_nodes": fill + CORRECT["count_nodes"]}))
    expect(scores, {"test_count_nodes": 0.0})
    message = next(t.message for t in report.tests if t.id == "test_count_nodes")
    assert "the cell 'count_nodes'" in message and "scratch folder (256 MiB" in message, message


def test_a_thread_that_never_ends_does_not_hold_the_worker(tmp_path):
    # Before: the interpreter waited for the thread at exit, until the wall-clock limit failed every test.
    forever = ("import threading, time\n"
               "threading.Thread(target=lambda: [time.sleep(1) for _ in iter(int, 1)]).start()\n")
    report, scores = grade(submit(tmp_path, {"node_summary": forever + CORRECT["node_summary"]}))
    expect(scores, {})


# ------------------------------------------------------------------ the judge: hostile evidence files
# The learner's code patches os.replace, which the worker uses to put each evidence checkpoint in place:
# the file it leaves is then whatever the learner wrote.

def _replace_evidence(make: str) -> str:
    """Answer-cell code that swaps every evidence checkpoint for the file `make` (code writing to `path`)."""
    return ("import os, torch\n_real_replace = os.replace\n"
            "def _swap(src, dst, *a, **k):\n    _real_replace(src, dst, *a, **k)\n"
            "    if str(dst).endswith('evidence.pt'):\n        path = str(dst)\n"
            + "".join(f"        {line}\n" for line in make.splitlines()) +
            "os.replace = _swap\n")


def _forged(calls: str) -> str:
    return (f"torch.save({{'calls': {calls}, 'cell_errors': [], 'tampered': [], 'complete': True}}, path)")


@namespaces
def test_evidence_replaced_by_a_deeply_shared_structure_fails_without_hanging_the_judge(tmp_path):
    make = "bomb = []\nfor _ in range(40):\n    bomb = [bomb, bomb]\n" + _forged("[{'evidence': [bomb]}] * 12")
    report, scores = grade(submit(tmp_path, {"node_summary": _replace_evidence(make) + CORRECT["node_summary"]}))
    assert report.score == 0
    assert any("more than" in t.message and "values" in t.message for t in report.tests)


@namespaces
def test_evidence_replaced_by_a_deflate_bomb_is_refused_before_loading(tmp_path):
    # 256 MiB of zeros deflated, made once and written at every checkpoint: compressing it again each time
    # spends the worker's CPU time, and on a slow machine the time limit would end it before the judge looks
    make = ("global _BOMB\nif '_BOMB' not in globals():\n    import io, zipfile\n    buf = io.BytesIO()\n"
            "    with zipfile.ZipFile(buf, 'w', zipfile.ZIP_DEFLATED) as z:\n"
            "        with z.open('archive/data.pkl', 'w') as f:\n            for _ in range(256):\n"
            "                f.write(bytes(2**20))\n    _BOMB = buf.getvalue()\n"
            "with open(path, 'wb') as f:\n    f.write(_BOMB)\n")
    report, _ = grade(submit(tmp_path, {"node_summary": _replace_evidence(make) + CORRECT["node_summary"]}))
    assert report.score == 0
    assert all("compressed" in t.message for t in report.tests)


@namespaces
def test_evidence_with_a_tensor_view_of_a_billion_elements_is_refused(tmp_path):
    # a 4-byte storage viewed as 2**30 elements: tiny on disk, 8 GiB the moment the judge touches it
    make = _forged("[{'evidence': [{'outputs': [torch.zeros(1).expand(2**30)]}]}] * 12")
    report, _ = grade(submit(tmp_path, {"node_summary": _replace_evidence(make) + CORRECT["node_summary"]}))
    assert report.score == 0
    assert any("elements" in t.message for t in report.tests)


@namespaces
def test_evidence_replaced_by_a_symlink_is_refused(tmp_path):
    make = "os.unlink(path)\nos.symlink('/etc/shadow', path)"
    report, _ = grade(submit(tmp_path, {"node_summary": _replace_evidence(make) + CORRECT["node_summary"]}))
    assert report.score == 0
    assert all("root:" not in t.message for t in report.tests)


@namespaces
def test_a_forged_two_megabyte_message_is_capped_with_a_note(tmp_path):
    # two strings of a million characters each (one string may have up to 2**20): 2 MB in the message
    big = ("{'__raised__': 'ValueError', 'message': 'x' * 1_000_000, 'where': 'y' * 1_000_000, "
           "'bases': ['ValueError']}")
    make = (f"ev = torch.load(path, weights_only=True)\nif ev['calls'] and ev['calls'][0]['evidence']:\n"
            f"    ev['calls'][0]['evidence'][0] = {big}\ntorch.save(ev, path)")
    report, _ = grade(submit(tmp_path, {"node_summary": _replace_evidence(make) + CORRECT["node_summary"]}))
    message = report.tests[0].message
    assert report.tests[0].points == 0
    assert len(message) < 2200 and "more characters cut]" in message


def test_cr_and_ansi_escapes_in_a_message_reach_no_terminal(tmp_path):
    fake = "\\r\\x1b[2K\\x1b[32m  \u2714 test_count_nodes  2/2  passed\\x1b[0m\\n"
    evil = f"def count_nodes(gm, op=None):\n    raise ValueError({fake!r})\n"
    report, scores = grade(submit(tmp_path, {"count_nodes": evil}))
    expect(scores, {"test_count_nodes": 0.0})
    message = next(t.message for t in report.tests if t.id == "test_count_nodes")
    assert "\\x1b[32m" in message and "\\r" in message
    assert not any(ord(ch) < 32 or ord(ch) == 127 for ch in message)


# ---------------------------------------------------------------------------- inputs that are too much

def test_a_huge_generated_expression_is_a_one_line_error(tmp_path):
    from autograder.course.notebook import NotebookError
    path = submit(tmp_path, {"count_nodes": "x = " + "+".join(["1"] * 100_000) + "\n" + CORRECT["count_nodes"]})
    with pytest.raises(NotebookError, match="cannot be graded: its code is nested too deeply"):
        grade(path)


def test_a_notebook_nested_100000_levels_deep_is_a_one_line_error(tmp_path):
    from autograder.course.notebook import NotebookError
    path = tmp_path / f"{A}.ipynb"
    path.write_text('{"cells": ' + "[" * 100_000 + "]" * 100_000 + ', "nbformat": 4}')
    with pytest.raises(NotebookError, match="cannot be graded: its JSON is nested"):
        grade(path)


def test_a_fifo_as_the_notebook_is_refused_without_blocking(tmp_path):
    from autograder.course.notebook import NotebookError
    path = tmp_path / f"{A}.ipynb"
    os.mkfifo(path)  # nobody ever writes to it: a plain open() would wait for ever
    with pytest.raises(NotebookError, match="is a named pipe, not a regular file"):
        grade(path)


def test_a_first_call_that_wrecks_its_arguments_fails_the_case_given_again_and_the_worker_goes_on(tmp_path):
    """The change between the two calls of a case given again runs on what the first call left: a count_nodes that
    swaps gm's graph for an empty one (no output node) leaves nothing to change, and that case fails with a
    message, not a crashed worker."""
    wreck = ("import torch.fx\n"
             "def count_nodes(gm, op=None):\n"
             "    n = sum(1 for node in gm.graph.nodes if op is None or node.op == op)\n"
             "    gm.graph = torch.fx.Graph()\n"
             "    return n\n")
    report, scores = grade(submit(tmp_path, {"count_nodes": wreck}))
    expect(scores, {"test_count_nodes": 0.0})   # node_summary, outputs_match and the quiz keep their points
    (test,) = [t for t in report.tests if t.id == "test_count_nodes"]
    # the first failing case is named, as for any answer that changes its input: no crashed worker
    assert "must leave its inputs as they were" in test.message and "exited" not in test.message, test.message
