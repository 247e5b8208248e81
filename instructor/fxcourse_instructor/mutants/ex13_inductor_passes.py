"""Mutants and alternatives of ex13_inductor_passes."""
from fxcourse_instructor.mutants import Alternative, Mutant

_REGISTER = "    register_replacement(search_fn, replace_fn, list(example_inputs), fwd_only, pattern_pass)\n"
_COMPILE = ('    return torch.compile(model, backend="inductor",\n'
            '                         options={"post_grad_custom_post_pass": pattern_pass.apply})\n')

_MAKE_MUTANTS = [
    Mutant("make_pattern_pass", "one pass kept at module level: every call adds its replacement to it",
           hint="make a new PatternMatcherPass in each call", not_hints=("search_fn is what is found",), source='''
_PASS = PatternMatcherPass()


def make_pattern_pass(search_fn, replace_fn, example_inputs):
    register_replacement(search_fn, replace_fn, list(example_inputs), fwd_only, _PASS)
    return _PASS
'''),
    Mutant("make_pattern_pass", "search and replace swapped: the pass looks for the replacement",
           hint="search_fn is what is found",
           edits=((_REGISTER, _REGISTER.replace("search_fn, replace_fn", "replace_fn, search_fn")),)),
    Mutant("make_pattern_pass", "returns what register_replacement returns, not the pass",
           hint="return the pass itself",
           edits=((_REGISTER + "    return pattern_pass\n", "    return " + _REGISTER.strip() + "\n"),)),
    Mutant("make_pattern_pass", "traced with joint_fwd_bwd, for training graphs", hint="fwd_only",
           edits=((", fwd_only, pattern_pass)", ", joint_fwd_bwd, pattern_pass)"),
                  ("    pattern_pass = PatternMatcherPass()\n",
                   "    from torch._inductor.pattern_matcher import joint_fwd_bwd\n"
                   "    pattern_pass = PatternMatcherPass()\n"))),
    Mutant("make_pattern_pass", "returns nothing", hint="without a `return`",
           edits=(("    return pattern_pass\n", ""),)),
]

_APPLY_MUTANTS = [
    Mutant("apply_pattern_pass", "no recompile: gm.code still shows the graph before the pass", hint="recompile",
           edits=(("    gm.recompile()\n", ""),)),
    Mutant("apply_pattern_pass", "returns gm, not the count", hint="return the number of replacements",
           edits=(("    return count\n", "    return gm\n"),)),
    Mutant("apply_pattern_pass", "returns whether anything was replaced: a bool", hint="expected an int",
           edits=(("    return count\n", "    return count > 0\n"),)),
    Mutant("apply_pattern_pass", "applies the pass to a copy of gm", hint="in place",
           edits=(("    count = pattern_pass.apply(gm)\n",
                   "    import copy\n    work = copy.deepcopy(gm)\n    count = pattern_pass.apply(work)\n"),)),
    Mutant("apply_pattern_pass", "applies the pass twice and returns the second count",
           hint="a second apply finds nothing left", not_hints=("recompile",),
           edits=(("    count = pattern_pass.apply(gm)\n",
                   "    pattern_pass.apply(gm)\n    count = pattern_pass.apply(gm)\n"),)),
    Mutant("apply_pattern_pass", "counts the nodes the pass removed, not its replacements",
           hint="the int that pattern_pass.apply(gm) returns", not_hints=("recompile",),
           edits=(("    count = pattern_pass.apply(gm)\n",
                   "    before = len(gm.graph.nodes)\n    pattern_pass.apply(gm)\n"
                   "    count = before - len(gm.graph.nodes)\n"),)),
]

_COMPILE_MUTANTS = [
    Mutant("compile_with_post_grad_pass", "compiles with aot_eager: no inductor, so no inductor pass",
           hint='backend="inductor"', edits=(('backend="inductor"', 'backend="aot_eager"'),)),
    Mutant("compile_with_post_grad_pass", "sets the pass in a config.patch around torch.compile(...) only",
           hint="first call", edits=((_COMPILE,
                                      "    with torch._inductor.config.patch(post_grad_custom_post_pass="
                                      "pattern_pass.apply):\n        return torch.compile(model)\n"),)),
    Mutant("compile_with_post_grad_pass", "sets torch._inductor.config for good", hint="leave torch._inductor.config",
           not_hints=("first call",),
           edits=((_COMPILE, "    torch._inductor.config.post_grad_custom_post_pass = pattern_pass.apply\n"
                             "    return torch.compile(model)\n"),)),
    Mutant("compile_with_post_grad_pass", "runs the pass before grad, as pre_grad_custom_pass",
           hint="after grad, where the graph is ATen",
           edits=(('"post_grad_custom_post_pass"', '"pre_grad_custom_pass"'),)),
    Mutant("compile_with_post_grad_pass", "hands inductor the pass object, not a function of the graph",
           hint="pattern_pass.apply", edits=(("pattern_pass.apply}", "pattern_pass}"),)),
    Mutant("compile_with_post_grad_pass", "compiles without the pass", hint='options={"post_grad_custom_post_pass"',
           edits=((_COMPILE, "    return torch.compile(model)\n"),)),
]

# ------------------------------------------ wrong answers that once had full marks: a case the checks lacked

_ONCE_FULL_MARKS = [
    Mutant("make_pattern_pass", "a pass per pair of functions, kept in a cache: a second call with the same "
           "functions returns the first call's pass", hint="a pass of its own, even for the same search and replace",
           source='''
_PASSES = {}


def make_pattern_pass(search_fn, replace_fn, example_inputs):
    key = (search_fn, replace_fn)
    if key not in _PASSES:
        pattern_pass = PatternMatcherPass()
        register_replacement(search_fn, replace_fn, list(example_inputs), fwd_only, pattern_pass)
        _PASSES[key] = pattern_pass
    return _PASSES[key]
'''),
    Mutant("make_pattern_pass", "two 2-D example inputs replaced by the shapes of the notebook's example, (2, 3) "
           "and (3, 4)", hint="hand it the example_inputs you are given",
           edits=(("list(example_inputs), fwd_only",
                   "[torch.randn(2, 3), torch.randn(3, 4)] if len(example_inputs) == 2 and all(t.dim() == 2 for t in "
                   "example_inputs) else list(example_inputs), fwd_only"),)),
    Mutant("apply_pattern_pass", "applies the pass to a copy of gm, then hands gm the copy's graph",
           hint="apply the pass to gm's own graph, in place",
           edits=(("    count = pattern_pass.apply(gm)\n",
                   "    import copy\n    work = copy.deepcopy(gm)\n    count = pattern_pass.apply(work)\n"
                   "    gm.graph = work.graph\n"),)),
    Mutant("apply_pattern_pass", "applies the pass again until it finds nothing, and returns the total",
           hint="apply the pass once, as inductor runs it", not_hints=("recompile",),
           edits=(("    count = pattern_pass.apply(gm)\n",
                   "    count = again = pattern_pass.apply(gm)\n    while again:\n"
                   "        again = pattern_pass.apply(gm)\n        count += again\n"),)),
    Mutant("compile_with_post_grad_pass", "compiles a deep copy of the model",
           hint="compile the model itself, not a copy",
           edits=(("torch.compile(model,", "torch.compile(__import__(\"copy\").deepcopy(model),"),)),
    # written from the task text alone by someone who had not read the checks: no case knew which hook ran the
    # pass, on which graph, how often, or what else of inductor's config changed; none looked at the inputs
    Mutant("compile_with_post_grad_pass", "the pass as both post-grad hooks, pre and post: it runs twice on each graph",
           hint="once on every graph it compiles",
           edits=((_COMPILE, '    return torch.compile(model, backend="inductor",\n'
                             '                         options={"post_grad_custom_pre_pass": pattern_pass.apply,\n'
                             '                                  "post_grad_custom_post_pass": pattern_pass.apply})\n'),)),
    Mutant("compile_with_post_grad_pass", "the pass applied to a copy of the graph inductor hands the hook",
           hint="a copy changes nothing inductor compiles",
           edits=((_COMPILE, "    def on_a_copy(graph):\n"
                             "        pattern_pass.apply(fx.GraphModule(graph.owning_module, "
                             "__import__('copy').deepcopy(graph)))\n\n"
                             '    return torch.compile(model, backend="inductor",\n'
                             '                         options={"post_grad_custom_post_pass": on_a_copy})\n'),)),
    Mutant("compile_with_post_grad_pass", "a wrapper that runs the pass on the first graph only",
           hint="once on every graph it compiles",
           edits=((_COMPILE, "    done = []\n\n    def first_only(graph):\n        if not done:\n"
                             "            done.append(graph)\n            return pattern_pass.apply(graph)\n\n"
                             '    return torch.compile(model, backend="inductor",\n'
                             '                         options={"post_grad_custom_post_pass": first_only})\n'),)),
    Mutant("compile_with_post_grad_pass", "fullgraph=True: a model with a graph break raises",
           hint='options={"post_grad_custom_post_pass"',
           edits=(('backend="inductor",', 'backend="inductor", fullgraph=True,'),)),
    Mutant("compile_with_post_grad_pass", "sets inductor's post-grad hook to None once compiled: a hook the caller had "
           "set is gone", hint="leave torch._inductor.config",
           edits=((_COMPILE, '    compiled = torch.compile(model, backend="inductor",\n'
                             '                             options={"post_grad_custom_post_pass": pattern_pass.apply})\n'
                             "    torch._inductor.config.post_grad_custom_post_pass = None\n"
                             "    return compiled\n"),)),
    Mutant("compile_with_post_grad_pass", "turns inductor's FX graph cache off for good", hint="leave torch._inductor.config",
           edits=((_COMPILE, "    torch._inductor.config.fx_graph_cache = False\n" + _COMPILE),)),
    Mutant("make_pattern_pass", "an extra_check that matches only the example inputs' dtypes: a float64 graph keeps "
           "its calls", hint="register_replacement(search_fn, replace_fn",
           edits=((_REGISTER, "    dtypes = {t.dtype for t in example_inputs}\n\n"
                              "    def same_dtypes(match):\n"
                              "        return all(n.meta['val'].dtype in dtypes for n in match.nodes\n"
                              "                   if isinstance(n.meta.get('val'), torch.Tensor))\n\n"
                              "    register_replacement(search_fn, replace_fn, list(example_inputs), fwd_only, "
                              "pattern_pass,\n                         extra_check=same_dtypes)\n"),)),
    Mutant("make_pattern_pass", "every argument of search_fn exclusive: an mm of a tensor by itself is not matched",
           hint="register_replacement(search_fn, replace_fn",
           edits=((_REGISTER, "    import inspect\n"
                              "    register_replacement(search_fn, replace_fn, list(example_inputs), fwd_only, "
                              "pattern_pass,\n                         exclusive_arg_names=tuple("
                              "inspect.signature(search_fn).parameters))\n"),)),
    Mutant("make_pattern_pass", "makes the example inputs require grad, the caller's tensors", hint="as you were given",
           edits=((_REGISTER, "    for t in example_inputs:\n        t.requires_grad_()\n" + _REGISTER),)),
    Mutant("make_pattern_pass", "a pass per pair of functions in a cache, handed out as copy.copy of it: the copies "
           "share one pattern table", hint="a pass of its own, even for the same search and replace",
           source='''
import copy

_KEPT = {}


def make_pattern_pass(search_fn, replace_fn, example_inputs):
    key = (search_fn, replace_fn)
    if key not in _KEPT:
        pattern_pass = PatternMatcherPass()
        register_replacement(search_fn, replace_fn, list(example_inputs), fwd_only, pattern_pass)
        _KEPT[key] = pattern_pass
    return copy.copy(_KEPT[key])
'''),
]

MUTANTS = _MAKE_MUTANTS + _APPLY_MUTANTS + _COMPILE_MUTANTS + _ONCE_FULL_MARKS

ALTERNATIVES = [
    Alternative("make_pattern_pass", "a named pass, the pass dicts as a list, the inputs as given", '''
def make_pattern_pass(search_fn, replace_fn, example_inputs):
    mine = PatternMatcherPass(pass_name="course_replacement")
    register_replacement(search_fn=search_fn, replace_fn=replace_fn, example_inputs=example_inputs,
                         trace_fn=fwd_only, pass_dicts=[mine])
    return mine
'''),
    Alternative("apply_pattern_pass", "applied to gm.graph, dead code removed, then recompiled", '''
def apply_pattern_pass(gm, pattern_pass):
    replaced = pattern_pass.apply(gm.graph)
    gm.graph.eliminate_dead_code()
    gm.graph.lint()
    gm.recompile()
    return int(replaced)
'''),
    Alternative("apply_pattern_pass", "run by a torch.fx PassManager, which lints after the pass", '''
from torch.fx.passes.infra.pass_base import PassResult
from torch.fx.passes.infra.pass_manager import PassManager


def apply_pattern_pass(gm, pattern_pass):
    counts = []

    def run(module):
        counts.append(pattern_pass.apply(module))
        module.recompile()
        return PassResult(module, counts[-1] > 0)

    PassManager(passes=[run], run_checks_after_each_pass=True)(gm)
    return counts[0]
'''),
    Alternative("compile_with_post_grad_pass", "a backend of one's own that calls inductor's compile_fx with the "
                "setting", '''
def compile_with_post_grad_pass(model, pattern_pass):
    from torch._inductor.compile_fx import compile_fx

    def inductor_with_pass(gm, example_inputs):
        return compile_fx(gm, example_inputs, config_patches={"post_grad_custom_post_pass": pattern_pass.apply})

    return torch.compile(model, backend=inductor_with_pass)
'''),
    Alternative("compile_with_post_grad_pass", "post_grad_custom_pre_pass, through a function of the graph", '''
def compile_with_post_grad_pass(model, pattern_pass):
    def run_pass(graph):
        pattern_pass.apply(graph)

    return torch.compile(model, options={"post_grad_custom_pre_pass": run_pass})
'''),
    Alternative("compile_with_post_grad_pass", "a config.patch around every call of the compiled model", '''
def compile_with_post_grad_pass(model, pattern_pass):
    compiled = torch.compile(model)

    def run(*args, **kwargs):
        with torch._inductor.config.patch(post_grad_custom_post_pass=pattern_pass.apply):
            return compiled(*args, **kwargs)

    return run
'''),
]
