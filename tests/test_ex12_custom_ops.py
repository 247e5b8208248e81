"""Does the ex12_custom_ops check library pass the solution, fail the stubs and kill every mutant with its hint,
with every case's operator in a namespace of its own? Plus the torch behaviour lesson 12 and the statement rely on.
"""
from __future__ import annotations

import os

import pytest
import torch
import torch.fx as fx

from autograder.checks import ex12_custom_ops as checks
from autograder.checks.errors import hint_for_error
from autograder.checks.ex12_custom_ops import models
from autograder.checks.framework import collect_evidence, get_check, judge_evidence
from autograder.coursedata.exercises import exercise, functions
from fxcourse_instructor.mutants import load
from exercise_suite import assert_cell_contract, exercise_tests

A = "ex12_custom_ops"
MUTANTS = load(A)[0]

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py

# fixtures nb, solution; the tests every exercise has (tests/exercise_suite.py), evidence of the visible cases
globals().update(exercise_tests(A, contract=False, quizzes=4, evidence_cases=lambda check: check.cases(False)))


def test_the_notebook_follows_the_cell_contract_and_the_curriculum_names(nb):
    assert functions(A) == ("register_scaled_gelu", "count_op_nodes", "replace_with_op")
    assert exercise(A).part == 3 and exercise(A).lesson == "12_custom_ops"
    assert_cell_contract(nb, A, quizzes=4)


def test_the_pitfalls_of_the_lesson_are_among_the_mutants():
    whys = " | ".join(m.why for m in MUTANTS).lower()
    for needle in ("no fake kernel", "no register_autograd", "mutates_args", "is_wrapped", "a packet", "__name__"):
        assert needle in whys, needle


def test_every_case_of_register_scaled_gelu_gets_a_namespace_of_its_own(solution):
    """Each make() hands out another namespace, with this process's pid in it (a forked worker's differ from its
    parent's); the solution defines an operator in each, and both stay callable side by side."""
    check = get_check(A, "register_scaled_gelu")
    names = [case.make()[0] for case in check.all_cases(True) for _ in range(2)]
    assert len(set(names)) == len(names) and all(f"_{os.getpid()}_" in n for n in names)
    first, second = (solution["register_scaled_gelu"](n) for n in names[:2])
    x = torch.randn(3)
    assert torch.allclose(first(x, 2.0), second(x, 2.0)) and first._opoverload is not second._opoverload


def test_a_name_defined_again_replaces_the_operator(solution):
    """What the lesson says and the fresh namespaces guard against: custom_op on a name already defined replaces
    the operator, and its fake kernel with it."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    name = checks.fresh_namespace("again")
    solution["register_scaled_gelu"](name)

    @torch.library.custom_op(f"{name}::scaled_gelu", mutates_args=())
    def plain(x: torch.Tensor, scale: float) -> torch.Tensor:
        return x * scale

    op = getattr(torch.ops, name).scaled_gelu
    assert torch.equal(op(torch.ones(2), 3.0), torch.full((2,), 3.0))
    with pytest.raises(RuntimeError, match="no fake impl"), FakeTensorMode() as mode:
        op(mode.from_tensor(torch.ones(2)), 3.0)


def test_a_forked_process_has_the_check_library_s_operators_and_namespaces_of_its_own():
    """The grader's workers are forked: a child keeps the operators its parent registered, and its namespaces
    (with its own pid) never repeat its parent's."""
    ops = checks.operators()
    assert checks.operators() is ops
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            ok = torch.equal(ops["shift"](torch.zeros(2), 1.0), torch.ones(2))
            os.write(write, f"{int(ok)} {checks.fresh_namespace('p')}".encode())
        finally:
            os._exit(0)
    os.close(write)
    said = os.read(read, 200).decode()
    os.close(read)
    os.waitpid(pid, 0)
    ok, child = said.split()
    assert ok == "1" and child.split("_")[2] == str(pid) != str(os.getpid())


def test_a_retargeted_node_that_stays_marked_wrapped_breaks_later_traces_but_not_the_next_case():
    """The pitfall of the is_wrapped mutant, as torch has it: left marked, the operator's dotted name is wrapped at
    every later trace (KeyError); the cases forget such stale names before they trace."""
    gm, _ = models.traced_model("GeluBlock(6)")
    op = checks.operators()["scaled_gelu"]
    for node in gm.graph.nodes:
        if node.target is models.scaled_gelu:
            node.target = op
    gm.recompile()
    with pytest.raises(KeyError, match="torch.ops.fxc12.scaled_gelu"):
        fx.symbolic_trace(torch.nn.Linear(2, 2))
    again, x = models.traced_model("GeluBlock(6)")
    assert again(x).shape == (3, 3)
    fx.symbolic_trace(torch.nn.Linear(2, 2))


def test_the_models_have_what_the_cases_claim():
    from torch.export import export
    ops = checks.operators()
    model, x = models.exported_model("Shifts(4)")
    targets = [str(n.target) for n in export(model, (x,)).graph.nodes if n.op == "call_function"]
    assert targets.count("fxc12.shift.default") == 2 and targets.count("fxc12.shift.Tensor") == 1
    model, x = models.exported_model("Decoys(5)")
    targets = {n.target for n in export(model, (x,)).graph.nodes if n.op == "call_function"}
    assert {ops["scaled_gelu"].default, ops["other scaled_gelu"].default, ops["scaled_gelu_fast"].default} <= targets
    gm, _ = models.traced_model("SameName(5)")
    fns = [n.target for n in gm.graph.nodes if n.op == "call_function" and callable(n.target)
           and getattr(n.target, "__name__", "") == "scaled_gelu"]
    assert models.scaled_gelu in fns and models.other_scaled_gelu in fns
    assert models.RandomOps(3).plan != models.RandomOps(8).plan
    model, x = models.exported_model("CondOps(4)")
    ep = export(model, (x,))
    top = [n for n in ep.graph.nodes if n.op == "call_function" and n.target == ops["scaled_gelu"].default]
    inner = [n for m in ep.graph_module.children() if isinstance(m, fx.GraphModule) for n in m.graph.nodes
             if n.op == "call_function" and n.target == ops["scaled_gelu"].default]
    assert len(top) == 1 and len(inner) == 1   # one call in ep.graph, one in a branch of torch.cond


@pytest.mark.parametrize("make, said", [
    (lambda: _on_fake(_no_fake()), "register_fake"),
    (lambda: _no_fake()(torch.ones(2, requires_grad=True), 1.0).sum().backward(), "register_autograd"),
    (lambda: _define_twice(checks.fresh_namespace("twice")), "defined once"),
    (lambda: torch.library.custom_op(checks.fresh_namespace("e") + "::f", mutates_args=())(lambda x, s: x),
     "from the annotations"),
    (lambda: __import__("operator").getitem.overloadpacket, "not every call_function target is an operator"),
], ids=["no fake kernel", "no autograd", "define twice", "no annotations", "getitem has no packet"])
def test_custom_op_errors_get_their_hint(make, said):
    """The errors torch raises around custom operators, raised by torch itself, each get the hint of their
    signature."""
    with pytest.raises(Exception) as raised:
        make()
    hint = hint_for_error(type(raised.value).__name__, str(raised.value))
    assert hint and said in hint, (type(raised.value).__name__, str(raised.value)[:200], hint)


_KEPT: list = []


def _define_twice(namespace):
    for _ in range(2):
        lib = torch.library.Library(namespace, "FRAGMENT")
        _KEPT.append(lib)   # a Library that is garbage collected takes its operators with it
        lib.define("f(Tensor x) -> Tensor")


def _on_fake(op):
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode() as mode:
        return op(mode.from_tensor(torch.ones(2)), 1.0)


def _no_fake():
    @torch.library.custom_op(checks.fresh_namespace("nofake") + "::f", mutates_args=())
    def f(x: torch.Tensor, scale: float) -> torch.Tensor:
        return x * scale
    return f


def test_a_wrong_op_gets_the_schema_named(solution):
    """An operator that takes scale as an int is told what the schema says and what it should say."""
    check = get_check(A, "register_scaled_gelu")
    case = check.cases(False)[0]

    def as_int(namespace):
        @torch.library.custom_op(f"{namespace}::scaled_gelu", mutates_args=())
        def op(x: torch.Tensor, scale: int) -> torch.Tensor:
            return scale * torch.nn.functional.gelu(x)
        return op

    result = judge_evidence(check, case, collect_evidence(check, as_int, case))
    assert not result.passed and "SymInt scale" in result.message and "float" in (result.hint or "")
