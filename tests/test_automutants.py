"""Automatic mutants of every solution function: each one that changes behaviour is caught by the checks,
and each one that cannot is listed in instructor/fxcourse_instructor/mutants/equivalent.py with its reason."""
from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

import pytest

from autograder.coursedata.exercises import functions as graded
from autograder.grader.quality.automutants import OPERATORS, evaluate_auto, generate, mutants_of
from fxcourse_instructor.mutants.equivalent import EQUIVALENT
from conftest import ROOT, assignments

SAMPLE = '''
def f(gm, xs, limit=3):
    """A docstring is never deleted."""
    total = 0
    while total < limit and xs:
        total += 1
    for i in range(2):
        if gm is None or i == 0:
            continue
    m = copy.deepcopy(gm).eval()
    t = torch.zeros(2, dtype=torch.float32)
    return sorted(xs, reverse=True)
'''


def test_every_operator_applies_where_it_should():
    mutants = mutants_of("f", SAMPLE)
    ops = {m.operator for m in mutants}
    assert ops == set(OPERATORS), set(OPERATORS) - ops
    keys = [m.key for m in mutants]
    assert len(keys) == len(set(keys)), "keys must be unique"
    assert not any("docstring" in k for k in keys)
    for m in mutants:
        ast.parse(m.source)                      # every mutant is valid Python
        assert m.source.strip() != ast.unparse(ast.parse(SAMPLE)).strip(), m.key   # and differs
    once = [m for m in mutants if m.operator == "once"]
    assert len(once) == 2 and any("if total < limit" in m.source for m in once)
    assert any("reverse=" not in m.source for m in mutants if m.operator == "drop-kwarg")
    assert any("torch.float64" in m.source for m in mutants if m.operator == "dtype")
    assert any("m = gm.eval()" in m.source for m in mutants if m.operator == "skip-call")


def test_mutants_are_generated_the_same_way_every_time():
    a, b = mutants_of("f", SAMPLE), mutants_of("f", SAMPLE)
    assert [(m.key, m.source) for m in a] == [(m.key, m.source) for m in b]


@pytest.mark.parametrize("assignment", assignments())
def test_every_graded_function_has_automatic_mutants(assignment):
    functions = {m.function for m in generate(assignment, ROOT / "solutions")}
    assert functions == set(graded(assignment))


@pytest.mark.parametrize("assignment", assignments())
def test_every_automatic_mutant_is_caught_or_listed_as_equivalent(assignment):
    outcomes = evaluate_auto(assignment, ROOT / "solutions")
    listed = EQUIVALENT.get(assignment, {})
    keys = {o.mutant.key for o in outcomes}
    survivors = [o for o in outcomes if not o.killed and o.mutant.key not in listed]
    caught_but_listed = [o for o in outcomes if o.killed and o.mutant.key in listed]
    stale = sorted(set(listed) - keys)
    problems = [f"survives, not listed as equivalent: {o.mutant.function}: {o.mutant.key}" for o in survivors]
    problems += [f"listed as equivalent but caught ({o.detail[:150]}): {o.mutant.key}" for o in caught_but_listed]
    problems += [f"listed as equivalent but no longer generated: {k}" for k in stale]
    assert not problems, "\n".join(problems)
    assert all(reason.strip() and "\n" not in reason for reason in listed.values())


def test_no_mutant_runs_unless_the_answer_it_was_mutated_from_passes(monkeypatch):
    """The unmutated answer runs first: were it failing, every mutant would count as caught."""
    from autograder.checks import keyring
    from autograder.grader.quality import automutants

    real = keyring.instructor

    class Failing:
        def __init__(self, purpose):
            self.key = real(purpose)

        def __getattr__(self, name):
            return getattr(self.key, name)

        def run_answer(self, assignment, function, ns):
            return False, f"{function} failed on purpose"

    ran = []
    monkeypatch.setattr(keyring, "instructor", Failing)
    monkeypatch.setattr(automutants, "run_mutant", lambda *args: ran.append(args))
    with pytest.raises(AssertionError, match="ex01_tracing's solution fails .* before any mutant"):
        automutants.evaluate_auto("ex01_tracing", ROOT / "solutions")
    assert ran == []


def test_validate_reports_the_automatic_kill_rate_beside_the_hand_written_one(capsys, monkeypatch):
    import functools
    import json

    from autograder.cli import main
    from autograder.grader.quality import automutants, validate

    # The three reports are of the same mutants of the same solution: the first runs them, the others report
    # what it found (each mutant is run once here; the test is of the report, and of which reports count what)
    monkeypatch.setattr(validate, "evaluate", functools.cache(validate.evaluate))
    monkeypatch.setattr(automutants, "evaluate_auto", functools.cache(automutants.evaluate_auto))
    assert main(["validate", "ex01_tracing", "--json", "--course", str(ROOT)]) == 0
    row, = json.loads(capsys.readouterr().out)
    assert row["mutants_killed"] == row["mutants"] >= 5
    assert row["auto"] > row["auto_equivalent"] == len(EQUIVALENT["ex01_tracing"])
    assert row["auto_killed"] == row["auto"] - row["auto_equivalent"]
    assert main(["validate", "ex01_tracing", "--course", str(ROOT)]) == 0
    table = capsys.readouterr().out
    assert "automatic killed" in table and "hand-written killed" in table
    assert main(["validate", "ex01_tracing", "--hand-only", "--json", "--course", str(ROOT)]) == 0
    assert "auto" not in json.loads(capsys.readouterr().out)[0]


@pytest.mark.parametrize("clock", ["_clock(0.2)", "_clock(60, cpu_seconds=0.2)"])
def test_a_mutant_that_loops_forever_is_stopped_even_when_its_first_time_out_is_swallowed(clock):
    """The check library records any exception an answer raises as evidence, a time-out included: the clock
    has to ring again for the next case. Run in a child process, bounded, so that a regression fails here
    instead of hanging the suite."""
    code = textwrap.dedent("""
        from autograder.grader.quality import automutants
        cases = 0
        try:
            with automutants.CLOCK as rang:
                for case in range(3):  # what run_answer does: one case after another
                    try:
                        while True:
                            pass
                    except BaseException:  # what the check library does with the answer's error
                        cases += 1
        except automutants._TimedOut:
            pass
        print(cases, bool(rang))
        """).replace("CLOCK", clock)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["3", "True"]

