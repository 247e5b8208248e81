"""A hint for a raised error fires only when the error's message, and the learner's failing line where it is
known, confirm its diagnosis."""
from __future__ import annotations

from autograder.checks.errors import ERROR_HINTS, hint_for_error

BIAS = "a layer built with bias=False"


def test_the_missing_bias_hint_needs_a_line_that_reads_a_bias_or_weight():
    message = "'NoneType' object has no attribute 'detach'"
    assert hint_for_error("AttributeError", message, "line 4: b = first.bias.detach()").startswith(BIAS)
    assert hint_for_error("AttributeError", message, "line 9: shape = node.meta['tensor_meta'].shape") is None
    assert hint_for_error("AttributeError", message).startswith(BIAS)   # no line known: the message decides


def test_the_orientation_hint_needs_a_line_with_a_weight_or_a_product():
    message = "mat1 and mat2 shapes cannot be multiplied (4x6 and 5x3)"
    assert "orientation" in hint_for_error("RuntimeError", message, "line 6: w = second.weight @ first.weight")
    assert hint_for_error("RuntimeError", message, "line 2: return model(*inputs)") is None


def test_every_rule_is_well_formed():
    for rule in ERROR_HINTS:
        assert len(rule) in (3, 4) and rule[2].strip()


def test_a_line_number_without_its_text_confirms_nothing_and_refutes_nothing():
    message = "'NoneType' object has no attribute 'detach'"
    assert hint_for_error("AttributeError", message, "line 5").startswith(BIAS)


def test_next_on_an_empty_search_blames_node_target_only_when_the_line_compares_it():
    compares_target = "line 3: n = next(x for x in gm.graph.nodes if x.target == name)"
    compares_name = "line 3: n = next(x for x in gm.graph.nodes if x.name == name)"
    assert "node.name (not node.target)" in hint_for_error("StopIteration", "", compares_target)
    for where in (compares_name, None):
        assert "not node.target" not in hint_for_error("StopIteration", "", where)


def test_a_string_target_naming_nothing_is_not_called_a_module_object():
    for message in ("Node referenced nonexistent target fc3",
                    "Node linear target fc9 references nonexistent attribute fc9 of "):
        hint = hint_for_error("RuntimeError", message)
        assert "does not have" in hint and "module object" not in hint
    assert "not a parameter" in hint_for_error("AttributeError", "`weight` is not an nn.Module")
    assert "module object" in hint_for_error("ValueError", "Node fc target Linear() has type torch.nn.Linear but a "
                                                           "str is expected")


def test_a_partial_or_a_string_without_a_name_is_not_a_call_module_mistake():
    assert "functools.partial" in hint_for_error("AttributeError",
                                                 "'functools.partial' object has no attribute '__name__'")
    assert hint_for_error("AttributeError", "'str' object has no attribute '__name__'") is None
    assert "module object" in hint_for_error("AttributeError", "'Linear' object has no attribute '__name__'")


def test_the_missing_bias_hint_needs_a_none_used_as_a_tensor():
    assert hint_for_error("TypeError", "'NoneType' object is not subscriptable") is None
    assert hint_for_error("AttributeError", "'NoneType' object has no attribute 'meta'") is None
    for message in ("unsupported operand type(s) for +: 'Tensor' and 'NoneType'",
                    "add(): argument 'other' (position 1) must be Tensor, not NoneType"):
        assert hint_for_error("TypeError", message).startswith(BIAS)


def test_graph_ownership_and_order_get_their_own_hints():
    foreign = "Argument 'x' of Node 'relu' does not belong to this Graph, but was used as an argument!"
    assert "node_copy" in hint_for_error("RuntimeError", foreign)
    assert "inserting_after" not in hint_for_error("RuntimeError", foreign)
    order = "Argument 'relu' of Node 'add' was used before it has been defined! Please check that Nodes"
    assert "inserting_after" in hint_for_error("RuntimeError", order)


def test_dynamo_recompiling_is_not_a_missing_gm_recompile():
    assert hint_for_error("RuntimeError", "Recompiling function forward: hit config.recompile_limit (8)") is None
    assert "gm.recompile()" in hint_for_error("RuntimeError", "forward is stale: call recompile() on the module")


def test_an_unsupported_construct_under_export_is_not_told_to_drop_fullgraph():
    exported = hint_for_error("Unsupported", "Data-dependent branching", "line 4: ep = torch.export.export(m, (x,))")
    assert "torch.cond" in exported and "fullgraph" not in exported
    assert "fullgraph" in hint_for_error("Unsupported", "Data-dependent branching", "line 4: out = compiled(x)")



def test_the_failing_line_is_known_wherever_the_learner_s_code_runs():
    """A raise is located on the learner's line in validation (answer cells run by the grader), in the hardened
    worker (IPython cells) and in a notebook's kernel (ipykernel's cell files), so a line-confirmed hint can fire."""
    import nbformat

    from autograder.checks.framework import _learner_frame, _raised
    from autograder.course.notebook import answer_namespace

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "def fold(first):\n    scale = 2\n    return first.bias.detach() * scale\n")])
    ns = answer_namespace(nb)

    class NoBias:
        bias = None

    try:
        ns["fold"](NoBias())
    except AttributeError as exc:
        raised = _raised(exc)
    assert raised["where"] == "line 3: return first.bias.detach() * scale"
    assert hint_for_error(raised["__raised__"], raised["message"], raised["where"]).startswith(BIAS)
    assert _learner_frame("<ipython-input-3-1f2e>") and _learner_frame("/tmp/ipykernel_4242/1234567.py")
    assert not _learner_frame("/usr/lib/python3.11/site-packages/torch/fx/graph.py")
