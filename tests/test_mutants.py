"""The checks tell right from wrong: every mutant loses points with its intended hint; every alternative passes;
a mutant that no longer applies to its solution fails loudly."""
from __future__ import annotations

import pytest

from autograder.coursedata.exercises import EXERCISES
from fxcourse_instructor.mutants import Mutant, MutantError, load
from autograder.grader.quality.validate import evaluate
from conftest import ROOT

SOLUTION = '''def count_nodes(gm: fx.GraphModule, op: str | None = None) -> int:
    """Number of nodes in gm's graph, or of those whose op equals `op`."""
    ### BEGIN SOLUTION
    return sum(1 for node in gm.graph.nodes if op is None or node.op == op)
    ### END SOLUTION
'''
IGNORES_OP = Mutant("count_nodes", "ignores op", hint="count only nodes whose node.op equals it", edits=(
    ("    return sum(1 for node in gm.graph.nodes if op is None or node.op == op)",
     "    return len(gm.graph.nodes)"),))


def test_a_mutant_is_its_solution_with_the_edits_applied_and_the_markers_removed():
    assert IGNORES_OP.cell(SOLUTION) == ('def count_nodes(gm: fx.GraphModule, op: str | None = None) -> int:\n'
                                         '    """Number of nodes in gm\'s graph, or of those whose op equals `op`."""\n'
                                         '    return len(gm.graph.nodes)\n')


@pytest.mark.parametrize("changed", [SOLUTION.replace("node.op == op", "node.op is op"),
                                     SOLUTION.replace("    return", "    return 0 if gm is None else"),
                                     SOLUTION + SOLUTION.splitlines(keepends=True)[3]])
def test_a_mutant_whose_text_no_longer_occurs_once_fails_loudly_naming_itself_the_text_and_the_remedy(changed):
    with pytest.raises(MutantError) as raised:
        IGNORES_OP.cell(changed)
    message = str(raised.value)
    assert "count_nodes" in message and "ignores op" in message            # which mutant
    assert "return sum(1 for node in gm.graph.nodes" in message           # which text
    assert ("0 times" in message or "2 times" in message) and "update this edit" in message   # what to do


def test_a_mutant_without_edits_or_source_is_refused_and_so_is_one_with_both():
    with pytest.raises(MutantError, match="not neither"):
        Mutant("count_nodes", "nothing", hint="x", edits=())
    with pytest.raises(MutantError, match="not both"):
        Mutant("count_nodes", "both", hint="x", edits=(("a", "b"),), source="def count_nodes(gm, op=None): ...")


def test_a_mutant_written_whole_is_its_own_answer_cell():
    cell = "def count_nodes(gm, op=None):\n    return 0\n"
    assert Mutant("count_nodes", "always zero", hint="x", source=cell).cell(SOLUTION) == cell


@pytest.mark.parametrize("assignment", [e.id for e in EXERCISES])
def test_every_mutant_applies_to_its_solution_and_names_a_hint_and_a_reason(assignment):
    from autograder.course.notebook import read_notebook
    from autograder.grader.quality.validate import mutant_cell

    nb = read_notebook(ROOT / "solutions" / assignment / f"{assignment}.ipynb")
    for m in load(assignment)[0]:
        assert m.hint.strip() and m.why.strip(), f"{assignment}.{m.function}: a mutant without hint or reason"
        compile(mutant_cell(nb, m), f"<mutant {m.function}: {m.why}>", "exec")


@pytest.mark.parametrize("assignment", [e.id for e in EXERCISES])
def test_all_mutants_killed_with_their_hint_and_all_alternatives_pass(assignment):
    if (ROOT / "tests" / f"test_{assignment}.py").exists():
        pytest.skip(f"tests/test_{assignment}.py runs each mutant and alternative of {assignment} as its own test")
    outcomes = evaluate(assignment, ROOT / "solutions")
    failures = [f"{o.kind} {o.function} ({o.why}): {o.detail[:300]}" for o in outcomes if not o.ok]
    assert not failures, "\n".join(failures)


def test_a_mutant_shown_a_hint_it_must_not_see_is_not_killed():
    """`not_hints`: a wrong answer that does right what a hint says must not be shown that hint."""
    from dataclasses import replace

    from autograder.course.notebook import read_notebook
    from autograder.grader.quality.validate import judge_mutant

    nb = read_notebook(ROOT / "solutions" / "ex01_tracing" / "ex01_tracing.ipynb")
    mutant = next(m for m in load("ex01_tracing")[0] if m.function == "count_nodes")
    assert judge_mutant("ex01_tracing", nb, mutant).ok
    shown = judge_mutant("ex01_tracing", nb, replace(mutant, hint="\u0000never shown")).detail
    said = shown.split(": ", 1)[1]                       # the failure text the learner saw
    piece = next(w for w in said.split() if len(w) > 4 and w.lower() not in mutant.hint.lower())
    blamed = judge_mutant("ex01_tracing", nb, replace(mutant, not_hints=(piece,)))
    assert not blamed.ok and "blames what it does right" in blamed.detail and piece in blamed.detail
    assert judge_mutant("ex01_tracing", nb, replace(mutant, not_hints=("no such text anywhere",))).ok


def test_not_hints_must_be_a_tuple_apart_from_the_mutant_s_own_hint():
    with pytest.raises(TypeError, match="tuple of hint texts"):
        Mutant("count_nodes", "x", hint="count only", edits=(("a", "b"),), not_hints="follow every input")
    with pytest.raises(MutantError, match="overlap its own hint"):
        Mutant("count_nodes", "x", hint="count only nodes", edits=(("a", "b"),), not_hints=("count only",))
