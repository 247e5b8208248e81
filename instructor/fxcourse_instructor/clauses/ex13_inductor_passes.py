"""Clauses of ex13_inductor_passes: make_pattern_pass, apply_pattern_pass, compile_with_post_grad_pass."""
from fxcourse_instructor.clauses import Clause

# The hidden case every clause of compile_with_post_grad_pass names: one inductor compile, which costs seconds.
CONVBN = "ConvBN with trained statistics"

CLAUSES = [
    Clause("make_pattern_pass", "a new pass in each call", ("x * y + z -> addcmul", "relu(mm) again"),
           mutant="one pass kept at module level: every call adds its replacement to it"),
    Clause("make_pattern_pass", "search_fn's subgraphs become replace_fn's",
           ("relu(mm) -> clamp_min(mm)", "x * y + z on random graphs"),
           mutant="search and replace swapped: the pass looks for the replacement"),
    Clause("make_pattern_pass", "traced for graphs after grad (fwd_only)",
           ("relu(mm) -> clamp_min(mm)", "batch_norm(conv) -> folded conv"),
           mutant="traced with joint_fwd_bwd, for training graphs"),
    Clause("make_pattern_pass", "returns the pass", ("relu(mm) -> clamp_min(mm)", "x * y + z on random graphs"),
           mutant="returns what register_replacement returns, not the pass"),
    Clause("make_pattern_pass", "uses the example inputs it is given", ("batch_norm(conv) -> folded conv",),
           patch=("list(example_inputs)", "[torch.randn(2, 2) for _ in example_inputs]")),
    Clause("make_pattern_pass", "a pass of its own, even when called twice with the same functions",
           ("relu(mm) -> clamp_min(mm)", "relu(mm) again"),
           mutant="a pass per pair of functions, kept in a cache: a second call with the same functions returns the "
                  "first call's pass"),
    Clause("make_pattern_pass", "traced on the example inputs it is given, whatever their shapes",
           ("relu(x @ w.t())",),
           mutant="two 2-D example inputs replaced by the shapes of the notebook's example, (2, 3) and (3, 4)"),
    Clause("apply_pattern_pass", "in place, in the graph gm holds", ("an MLP, relu(mm)", "a random graph, seed 4"),
           mutant="applies the pass to a copy of gm, then hands gm the copy's graph"),
    Clause("apply_pattern_pass", "applied once, not again until it finds nothing", ("four relus after an mm",),
           mutant="applies the pass again until it finds nothing, and returns the total"),
    Clause("apply_pattern_pass", "in place, on gm itself", ("an MLP, relu(mm)", "a random graph, seed 4"),
           mutant="applies the pass to a copy of gm"),
    Clause("apply_pattern_pass", "returns the number of replacements", ("an MLP, relu(mm)", "two conv -> batch_norm"),
           mutant="counts the nodes the pass removed, not its replacements"),
    Clause("apply_pattern_pass", "an int", ("an MLP, relu(mm)", "an MLP, x * y + z: nothing to replace"),
           mutant="returns whether anything was replaced: a bool"),
    Clause("apply_pattern_pass", "gm.code is what the graph says", ("an MLP, relu(mm)", "a random graph, seed 9"),
           mutant="no recompile: gm.code still shows the graph before the pass"),
    Clause("apply_pattern_pass", "the pass applied once", ("an MLP, relu(mm)", "an mm read by a relu and by an add"),
           mutant="applies the pass twice and returns the second count"),
    Clause("compile_with_post_grad_pass", "compiled by inductor", (CONVBN,),
           mutant="compiles with aot_eager: no inductor, so no inductor pass"),
    Clause("compile_with_post_grad_pass", "inductor runs the pass", (CONVBN,),
           mutant="compiles without the pass"),
    Clause("compile_with_post_grad_pass", "the pass runs when the model first compiles, at its first call",
           (CONVBN,), mutant="sets the pass in a config.patch around torch.compile(...) only"),
    Clause("compile_with_post_grad_pass", "after grad, on ATen graphs", (CONVBN,),
           mutant="runs the pass before grad, as pre_grad_custom_pass"),
    Clause("compile_with_post_grad_pass", "leaves torch._inductor.config as it found it", (CONVBN,),
           mutant="sets torch._inductor.config for good"),
    Clause("compile_with_post_grad_pass", "torch.compile of model itself: a weight changed later shows", (CONVBN,),
           mutant="compiles a deep copy of the model"),
    Clause("compile_with_post_grad_pass", "the eager model's numbers", (CONVBN,),
           patch=("return torch.compile(model,", "return torch.compile(model.train(),"),
           hint="the model you are given, as it is (its mode too)"),
]

# The task text, sentence by sentence: the rules of the clauses that check it, or why it is no rule.
TASK_TEXT = {
    '*': {
        "After lesson 13 you can write a replacement as two small functions, turn it into a pattern pass with "
        "inductor's pattern matcher, apply it to an ATen graph, and have inductor run it inside `torch.compile`.":
            "what the lesson taught, the motivation",
        'Here you write the three tools of that workflow:':
            "introduces the list of functions",
        '`make_pattern_pass`: a `PatternMatcherPass` holding one replacement;':
            "a summary of make_pattern_pass, whose rules its section states",
        '`apply_pattern_pass`: apply it to an ATen-level graph in place, and say how many replacements it made;':
            "a summary of apply_pattern_pass, whose rules its section states",
        '`compile_with_post_grad_pass`: `torch.compile` with inductor running the pass after grad.':
            "a summary of compile_with_post_grad_pass, whose rules its section states",
    },
    'make_pattern_pass': {
        '## 1. `make_pattern_pass(search_fn, replace_fn, example_inputs) -> PatternMatcherPass`':
            ("returns the pass",),
        'Make a new `PatternMatcherPass` and register **one** replacement in it with `register_replacement`: every '
        'subgraph that computes what `search_fn` computes becomes what `replace_fn` computes.':
            ("a new pass in each call", "search_fn's subgraphs become replace_fn's"),
        'Both functions take the same tensors; `example_inputs` (a list) are tensors to trace them with.':
            ("uses the example inputs it is given",
             "traced on the example inputs it is given, whatever their shapes"),
        'The pass will run on graphs after grad (inference graphs, as `torch.compile` makes them under '
        '`torch.no_grad()`), so trace with `fwd_only`.':
            ("traced for graphs after grad (fwd_only)",),
        'Return the pass.':
            ("returns the pass",),
        'Each call returns a pass of its own, holding only its own replacement, even when it is called twice with '
        'the same functions.':
            ("a new pass in each call", "a pass of its own, even when called twice with the same functions"),
        "A new PatternMatcherPass holding one replacement: search_fn's subgraphs become replace_fn's.":
            ("a new pass in each call", "search_fn's subgraphs become replace_fn's"),
    },
    'apply_pattern_pass': {
        '## 2. `apply_pattern_pass(gm, pattern_pass) -> int`':
            ("returns the number of replacements", "an int"),
        '`gm` is an ATen-level graph as inductor receives it (decomposed, its nodes\' `meta["val"]` from one fake '
        'mode, like `gm` above).':
            "what the grader's gm is (built as the setup cell's gm), so that the pass can match in it; what the "
            "function does with it is the next sentences' rules",
        'Apply the pass to `gm` itself, in place, once (as inductor runs it), and return the number of replacements '
        'it made (an `int`).':
            ("in place, on gm itself", "in place, in the graph gm holds", "returns the number of replacements",
             "an int", "the pass applied once", "applied once, not again until it finds nothing"),
        'Then `gm.code` must be what the graph says now.':
            ("gm.code is what the graph says",),
        'Apply the pass to gm in place; the number of replacements.':
            ("in place, on gm itself", "returns the number of replacements"),
    },
    'compile_with_post_grad_pass': {
        '## 3. `compile_with_post_grad_pass(model, pattern_pass) -> Callable`':
            ("compiled by inductor",),
        'Return `torch.compile` of `model` with **inductor** running the pass after grad, on the ATen graphs it '
        'compiles (`post_grad_custom_post_pass`).':
            ("compiled by inductor", "inductor runs the pass", "after grad, on ATen graphs",
             "the pass runs when the model first compiles, at its first call",
             "torch.compile of model itself: a weight changed later shows"),
        "Calling the result gives the eager model's numbers.":
            ("the eager model's numbers", "torch.compile of model itself: a weight changed later shows"),
        'Leave `torch._inductor.config` as you found it: after your function returns, no later `torch.compile` of '
        'the process may run the pass.':
            ("leaves torch._inductor.config as it found it",),
        'The grader calls the result under `torch.no_grad()`.':
            "how the grader calls the result (so inductor compiles an inference graph, the one the pattern is "
            "found in): the context of the call, no rule of what the function does",
        'torch.compile(model) with inductor running pattern_pass after grad.':
            ("compiled by inductor", "inductor runs the pass", "after grad, on ATen graphs"),
    },
}
