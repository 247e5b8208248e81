"""What the cases of ex13_inductor_passes hand over that is a graded function's answer: a pattern pass made as
make_pattern_pass must make it, which the cases of apply_pattern_pass and compile_with_post_grad_pass receive. The worker's side, built
before learner code runs (reached through autograder.checks.keyring.inputs, never installed where learners work)."""
from __future__ import annotations

from autograder.checks.ex13_inductor_passes.models import replacement


def reference_pass(name: str, cls: type | None = None):
    """The course's pass of one replacement (a fresh PatternMatcherPass, or one of class `cls`)."""
    from torch._inductor.pattern_matcher import PatternMatcherPass, fwd_only, register_replacement
    pattern_pass = (cls or PatternMatcherPass)()
    search, replace, inputs = replacement(name)
    register_replacement(search, replace, inputs, fwd_only, pattern_pass)
    return pattern_pass
