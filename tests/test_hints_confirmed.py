"""A hint for a raised error fires only when the learner's failing line confirms its diagnosis."""
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
