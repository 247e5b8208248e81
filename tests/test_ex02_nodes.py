"""Does the ex02_nodes check library pass the solution, fail the stubs, and kill every mutant with its hint?"""
from __future__ import annotations

from autograder.checks.framework import Case, collect_evidence, get_check, judge_evidence
from autograder.coursedata.exercises import functions
from autograder.course.notebook import answer_namespace
from exercise_suite import exercise_tests

A = "ex02_nodes"
FUNCTIONS = functions(A)

# fixtures nb, solution; the tests every exercise has (tests/exercise_suite.py)
globals().update(exercise_tests(A))


# ------------------------------------------------------------------- what is special in these checks

def test_expected_keyerror_reaches_the_judge(solution):
    """An unknown node name must raise KeyError: the core passes the raised error to the judge.

    This needs autograder.checks.framework.judge_evidence to hand `{"__raised__": ...}` evidence to the judge when the
    case has data["raises"]; without that, every answer (the solution too) fails the unknown-name case.
    """
    check = get_check(A, "consumers")
    case = next(c for c in check.cases(False) if "raises" in c.data)
    evidence = collect_evidence(check, solution["consumers"], case)
    raised = evidence["__value__"]   # consumers must leave gm unchanged: the error comes wrapped with its snapshots
    assert raised["__raised__"] == "KeyError" and case.data["node"] in raised["message"]
    assert judge_evidence(check, case, evidence).passed

    def wrong_error(gm, node_name):
        raise ValueError(node_name)

    result = judge_evidence(check, case, collect_evidence(check, wrong_error, case))
    assert not result.passed and "expected KeyError" in result.message


def test_an_unexpected_keyerror_still_fails(solution):
    """Only cases marked data["raises"] accept an error: a KeyError on a known node is a failure."""
    check = get_check(A, "consumers")
    case = next(c for c in check.cases(False) if "raises" not in c.data)

    def always_keyerror(gm, node_name):
        raise KeyError(node_name)

    result = judge_evidence(check, case, collect_evidence(check, always_keyerror, case))
    assert not result.passed and "raised KeyError" in result.message


def test_evidence_is_plain_data(solution):
    """Evidence crosses a process boundary in hardened grading: no Node, GraphModule or Counter in it."""
    import collections

    check = get_check(A, "op_histogram")
    case = check.cases(False)[0]
    ev = collect_evidence(check, lambda gm: collections.Counter(n.op for n in gm.graph.nodes), case)["__value__"]
    counts, left = ev["counts"], ev["left"]
    assert type(counts) is dict and all(type(k) is str and type(v) is int for k, v in counts.items())
    assert type(left) is list and all(type(name) is str for name in left)
    for function in FUNCTIONS:
        check = get_check(A, function)
        for hidden in (False, True):
            for c in check.cases(hidden):
                ev = collect_evidence(check, solution[function], c)
                assert type(ev) in (dict, list, int), (function, c.label, type(ev))


def test_hidden_cases_are_not_passed_by_the_easy_answers(nb):
    """The node.name, dedupe and node.users answers pass every visible case but fail a hidden one."""
    easy = {
        "called_modules": ("def called_modules(gm):\n"
                           "    return [n.name for n in gm.graph.nodes if n.op == 'call_module']\n"),
        "consumers": ("def consumers(gm, node_name):\n"
                      "    node = {n.name: n for n in gm.graph.nodes}[node_name]\n"
                      "    return [u.name for u in node.users]\n"),
        "graph_depth": "def graph_depth(gm):\n    return len(gm.graph.nodes) - 1\n",
    }
    for function, source in easy.items():
        fn = answer_namespace(nb, {function: source})[function]
        check = get_check(A, function)
        visible = [judge_evidence(check, c, collect_evidence(check, fn, c)).passed for c in check.cases(False)]
        hidden = [judge_evidence(check, c, collect_evidence(check, fn, c)).passed for c in check.cases(True)]
        assert all(visible) and not all(hidden), function


def test_cases_are_deterministic():
    """judge() rebuilds the case with case.make(): two calls must describe the same graph."""
    for function in FUNCTIONS:
        for hidden in (False, True):
            for case in get_check(A, function).cases(hidden):
                first, second = case.make(), case.make()
                assert str(first[0].graph) == str(second[0].graph), case.label
                assert first[1:] == second[1:]
                assert isinstance(case, Case)
