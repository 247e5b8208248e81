"""The hints of ex13_inductor_passes: `PROGRESSIVE`, three per graded function from a nudge to nearly the answer
(`fxcourse hint` shows the next one, in the format autograder/coursedata/hints.py describes), and `HINTS`, what its
checks say when an answer fails, by id (a template's {fields} are filled by the judge that names it)."""
from __future__ import annotations

__all__ = ["PROGRESSIVE", "HINTS"]

PROGRESSIVE: dict[str, list[str]] = {
    'make_pattern_pass': [
        "Inductor's pattern matcher lives in `torch._inductor.pattern_matcher`: a `PatternMatcherPass` holds "
        'replacements, and `register_replacement` adds one to it.',
        '`register_replacement(search_fn, replace_fn, example_inputs, trace_fn, pass_dicts)`: search_fn is what is '
        'found, replace_fn what replaces it; `fwd_only` traces both as graphs after grad; the last argument is your '
        'pass.',
        "Make a new `PatternMatcherPass()` inside the function (one kept between calls collects every call's "
        'replacement, and a second registration of the same pattern raises), register, and return the pass.',
    ],
    'apply_pattern_pass': [
        'A `PatternMatcherPass` has `apply(gm)`, which rewrites the graph in place and returns how many '
        'replacements it made.',
        '`apply` changes `gm.graph` but not `gm.code`: recompile afterwards, as after any change of a graph.',
        'Keep the number `apply(gm)` returns, then `gm.graph.lint()`, `gm.recompile()`, and return that number '
        '(apply it once: a second apply finds nothing left).',
    ],
    'compile_with_post_grad_pass': [
        'Inductor runs a pass of yours on the ATen graphs it compiles when its config names it: '
        '`post_grad_custom_post_pass` takes a function of the graph, such as `pattern_pass.apply`.',
        'Setting `torch._inductor.config` for good changes every later compile of the process, and a `config.patch` '
        'around `torch.compile(...)` alone has ended before the first call compiles: give the setting to this '
        'compile only.',
        'One call of `torch.compile` on `model`, returned: inductor as its backend, and an `options` dict whose '
        '`"post_grad_custom_post_pass"` is the pass\'s `apply`.',
    ],
}

HINTS: dict[str, str] = {
    'ex13.leave_example_inputs_as_given':
        'leave the example inputs as you were given them: register_replacement traces with them (fwd_only needs no '
        'gradients), and they are the caller\'s tensors',
    'ex13.apply_pass_to_graph_inductor':
        'apply the pass to the graph inductor hands the hook (post_grad_custom_post_pass gets inductor\'s own '
        'fx.Graph): a pass applied to a copy changes nothing inductor compiles',
    'ex13.pass_runs_once_per_graph':
        'inductor runs post_grad_custom_post_pass once on every graph it compiles, and a model with a graph break '
        'is two graphs: hand the pass over once, as it is (pattern_pass.apply), not to two hooks, nor wrapped to '
        'run only the first time',
    'ex13.return_pass_function_ended_without':
        'return the pass: the function ended without a `return` of it',
    'ex13.return_pass_itself_register_replacement':
        'return the pass itself: register_replacement returns the pattern it registered (or False), not the pass',
    'ex13.return_number_replacements_int_pattern':
        'return the number of replacements, the int that pattern_pass.apply(gm) returns',
    'ex13.return_number_replacements_function_ended':
        'return the number of replacements: the function ended without a `return` of it',
    'ex13.return_what_torch_compile_returns':
        'return what torch.compile returns',
    'ex13.return_compiled_model_function_ended':
        'return the compiled model: the function ended without a `return` of it',
    'ex13.register_replacement_could_not_trace':
        'register_replacement could not trace the pattern: trace with fwd_only for graphs after grad (joint_fwd_bwd '
        'traces a training graph, from inputs that require grad)',
    'ex13.make_new_patternmatcherpass_each_call':
        "make a new PatternMatcherPass in each call: inductor's own passes run in every compile of the process",
    'ex13.apply_pattern_pass_once_change':
        'apply the pattern pass once, and change nothing else',
    'ex13.replacement_computes_what_pattern_computed':
        "the replacement computes what the pattern computed: apply the course's pass as it is",
    'ex13.leave_torch_inductor_config_was':
        "leave torch._inductor.config as it was: hand the pass in torch.compile's options, not by setting "
        'torch._inductor.config',
    'ex13.register_replacement_search_fn_replace':
        'register_replacement(search_fn, replace_fn, example_inputs, fwd_only, pattern_pass): search_fn is what is '
        'found, replace_fn what replaces it, fwd_only traces both as inference graphs after grad',
    'ex13.make_new_patternmatcherpass_each_call_2':
        "make a new PatternMatcherPass in each call: a pass kept between calls collects every call's replacement",
    'ex13.apply_pass_gm_itself_place':
        'apply the pass to gm itself, in place (pattern_pass.apply(gm)), not to a copy',
    'ex13.return_int_pattern_pass_apply':
        'return the int that pattern_pass.apply(gm) returns, the number of replacements (apply it once: a second '
        'apply finds nothing left to replace)',
    'ex13.return_int_pattern_pass_apply_2':
        'return the int that pattern_pass.apply(gm) returns, the number of replacements',
    'ex13.hand_inductor_torch_compile_s':
        'hand it to inductor in torch.compile\'s options: options={"post_grad_custom_post_pass": '
        'pattern_pass.apply}',
    'ex13.hand_inductor_torch_compile_s_2':
        'hand it to inductor in torch.compile\'s options: options={"post_grad_custom_post_pass": '
        'pattern_pass.apply}. torch.compile compiles on the first call, so a config.patch around torch.compile(...) '
        'alone has ended by then',
    'ex13.compile_model_you_are_given':
        "compile the model you are given, as it is (its mode too): the replacement's pattern is in its inference "
        'graph',
    'ex13.pass_replaced_more_than_this':
        'the pass replaced more than this replacement: make a new PatternMatcherPass in each call (a pass kept '
        "between calls collects every call's replacement)",
    'ex13.compile_inductor_torch_compile_s':
        'compile with inductor, torch.compile\'s default backend (backend="inductor"): aot_eager and eager run no '
        'inductor pass',
    'ex13.ran_before_aotautograd_pre_grad':
        'it ran before AOTAutograd (pre_grad_custom_pass): run it after grad, where the graph is ATen, as '
        'post_grad_custom_post_pass',
    'ex13.pass_of_its_own_same_functions':
        'each call returns a pass of its own, even for the same search and replace functions: make a new '
        'PatternMatcherPass in every call and keep none between calls',
    'ex13.trace_with_example_inputs_given':
        'register_replacement traces search_fn and replace_fn on the example inputs: hand it the example_inputs '
        'you are given (here of shapes {shapes}), whatever their shapes',
    'ex13.pass_in_gm_s_own_graph':
        "apply the pass to gm's own graph, in place (pattern_pass.apply(gm)): whoever holds that graph (inductor "
        'hands its post-grad passes the fx.Graph) must see the replacements, not a copy of it',
    'ex13.apply_once_not_until_nothing_left':
        'apply the pass once, as inductor runs it, and return that count: applying it again until it finds nothing '
        'also replaces what the first apply made',
    'ex13.compile_model_itself_not_copy':
        'compile the model itself, not a copy: the compiled model reads the parameters of the model you were given, '
        'so a weight the caller changes shows in its numbers',
    'ex13.compile_model_you_are_given_2':
        'compile the model you are given, as it is, and return what torch.compile returns',
}
