"""The checks tell right from wrong: every mutant loses points with its intended hint; every alternative passes;
a mutant that no longer applies to its solution fails loudly."""
from __future__ import annotations

import pytest

from autograder.coursedata.exercises import EXERCISES
from autograder.coursedata.mutants import Mutant, MutantError, load
from autograder.grader.validate import evaluate
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


def test_a_mutant_without_edits_is_refused():
    with pytest.raises(MutantError, match="no edits"):
        Mutant("count_nodes", "nothing", hint="x", edits=()).cell(SOLUTION)


@pytest.mark.parametrize("assignment", [e.id for e in EXERCISES])
def test_every_mutant_applies_to_its_solution_and_names_a_hint_and_a_reason(assignment):
    from autograder.grader.notebook import read_notebook
    from autograder.grader.validate import mutant_cell

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
