"""The hints of ex09_dynamo: `PROGRESSIVE`, three per graded function from a nudge to nearly the answer (`fxcourse
hint` shows the next one, in the format autograder/coursedata/hints.py describes), and `HINTS`, what its checks say
when an answer fails, by id (a template's {fields} are filled by the judge that names it)."""
from __future__ import annotations

__all__ = ["PROGRESSIVE", "HINTS"]

PROGRESSIVE: dict[str, list[str]] = {
    'capture_graphs': [
        'A backend is a plain function `(gm, example_inputs) -> callable`: give `torch.compile(fn, backend=...)` '
        'one of your own that keeps each `gm` it receives in a list.',
        '`torch.compile` is lazy: dynamo captures only when the compiled function is called, so call it once on '
        '`*inputs`. The backend must return something that runs the graph unchanged: `gm.forward`.',
        'Start with `torch._dynamo.reset()`, then build the list, the backend that appends to it, the compiled '
        'function, one call, and return the list. No `fullgraph=True`: a graph break means several graphs, and you '
        'want them all, in order.',
    ],
    'graph_break_count': [
        'Dynamo can tell you itself: `torch._dynamo.explain(fn)` returns a function that compiles and runs `fn` and '
        'reports what happened.',
        'The report (that function called with the inputs) has `graph_count` and `graph_break_count`: a break is '
        'where one graph ends and the next begins, so the second is the first minus one.',
        "`torch._dynamo.reset()` first, then return the report's `graph_break_count` as an "
        '`int`.',
    ],
    'compile_with_pass': [
        'Write a backend that calls `pass_fn` on the `gm` it receives, and hand it to `torch.compile(model, '
        'backend=...)`. Return what `torch.compile` returns; do not call it yourself.',
        'A pass may edit `gm` in place or build a new GraphModule: run what `pass_fn(gm)` returns. Dynamo calls the '
        'backend once per graph (graph breaks, recompiles on a new shape), so every graph goes through the pass.',
        'The backend is two lines: `new = pass_fn(gm)` and `return new.forward`. No `fullgraph=True` (a model with '
        'a break would raise), and no inductor.',
    ],
}

HINTS: dict[str, str] = {
    'ex09.collect_every_graph_backend_receives':
        'collect every graph the backend receives in a list and return the list',
    'ex09.count_python_int_not_return':
        'a count is a Python int, not a {name}: return int(...) of it',
    'ex09.return_number_itself_torch_dynamo':
        "return the number itself: the graph_break_count of torch._dynamo.explain's report",
    'ex09.return_torch_compile_model_backend':
        'return torch.compile(model, backend=your_backend)',
    'ex09.torch_compile_needs_no_fx':
        "torch.compile needs no fx.symbolic_trace, which cannot trace a branch on a tensor's value: dynamo captures "
        'the graphs itself (splitting at such a branch); apply pass_fn in the backend, to each graph dynamo hands '
        'it',
    'ex09.count_fn_called_first_input':
        'that is the count for fn called on its first input alone: pass every input on, explain(fn)(*inputs) (fn '
        'takes {inputs} here)',
    'ex09.number_different_kinds_break_distinct':
        'that is the number of different kinds of break (distinct reasons): two breaks of the same kind, such as '
        'two .item() calls, are two breaks; return explain(fn)(*inputs).graph_break_count',
    'ex09.number_entries_explain_s_break':
        "that is the number of entries of explain's break_reasons (and of its kinds), which lists only the breaks "
        'dynamo records a reason for (a break inside a loop may have none, a break at the very end one that starts '
        'no graph): return explain(fn)(*inputs).graph_break_count',
    'ex09.number_entries_explain_s_break_2':
        "that is the number of entries of explain's break_reasons, which lists only the breaks dynamo records a "
        'reason for (a break inside a loop may have none, a break at the very end one that starts no graph): return '
        'explain(fn)(*inputs).graph_break_count',
    'ex09.more_breaks_than_this_one':
        'more breaks than this one compile has graphs: the number includes other compiles (a counter such as '
        'torch._dynamo.utils.counters keeps counting across them, and reset() does not clear it); count this call '
        "only: the graph_break_count of torch._dynamo.explain's report",
    'ex09.number_graphs_each_graph_break':
        'that is the number of graphs: each graph break ends one graph and starts another; '
        "torch._dynamo.explain's report on the inputs has both, graph_count and graph_break_count",
    'ex09.count_every_break_not_whether':
        "count every break, not whether there is one: torch._dynamo.explain's report has graph_break_count",
    'ex09.torch_dynamo_explain_fn_inputs':
        "the graph_break_count of torch._dynamo.explain's report counts them",
    'ex09.return_torch_compile_model_backend_2':
        'return torch.compile(model, backend=...) with a backend that applies pass_fn',
    'ex09.run_pass_fn_once_per':
        'run pass_fn once per graph, in the backend when the graph arrives, and return what it made: not again in '
        'the callable the backend returns (that runs at every call), nor twice to look at the result',
    'ex09.append_gm_first_argument_dynamo':
        'append gm, the first argument dynamo passes to the backend (the second is the example inputs)',
    'ex09.start_torch_dynamo_reset_dynamo':
        'start with torch._dynamo.reset(): dynamo keeps compiled code per function, and once a function has been '
        'compiled torch._dynamo.config.recompile_limit times it runs eagerly and calls no backend at all',
    'ex09.torch_compile_lazy_nothing_captured':
        'torch.compile is lazy: nothing is captured until the function it returned is called; call '
        'compiled(*inputs) once (calling fn itself runs it eagerly, without dynamo), and give it your backend: '
        'torch.compile(fn, backend=your_backend)',
    'ex09.pass_every_input_compiled_inputs':
        'pass every input on: compiled(*inputs), not compiled(inputs[0])',
    'ex09.compile_torch_compile_s_defaults':
        "compile with torch.compile's defaults, without fullgraph=True: dynamo then splits the function at each "
        'break (fullgraph=True captures .item() and the like in one graph, or refuses to compile)',
    'ex09.keep_every_graph_append_each':
        'keep every graph: append each gm the backend receives to a list (a variable that is overwritten keeps only '
        'the last), and return them all in the order they came',
    'ex09.keep_every_graph_append_each_2':
        'keep every graph: append each gm the backend receives, and return them all in the order they came (and '
        'compile without fullgraph=True, which may squeeze or refuse what dynamo would split)',
    'ex09.call_compiled_function_once_return':
        'call the compiled function once, and return only the graphs of that call',
    'ex09.backend_must_return_callable_runs':
        'the backend must return a callable that runs the graph: pass_fn(gm).forward',
    'ex09.do_not_use_fullgraph_true':
        'do not use fullgraph=True: a model with a graph break is several graphs, and the backend is called for '
        'each',
    'ex09.pass_fn_was_never_called':
        'pass_fn was never called: the backend must call pass_fn(gm) on every graph it receives',
    'ex09.pass_fn_takes_one_argument':
        "pass_fn takes one argument, the GraphModule: call pass_fn(gm); the example inputs are the backend's second "
        "argument, not the pass's",
    'ex09.pass_fn_was_given_aten':
        "pass_fn was given ATen graphs (AOTAutograd's or make_fx's), where a relu is aten.relu.default and a pass "
        "written for dynamo's graphs finds nothing: hand it the gm dynamo gives the backend, with no aot_autograd "
        'in between',
    'ex09.pass_fn_returns_new_graphmodule':
        'pass_fn returns a new GraphModule and leaves its argument alone: run what pass_fn returns '
        '(pass_fn(gm).forward), not the gm you gave it',
    'ex09.caller_s_model_was_cast':
        "the caller's model was cast to {dtype}: compile the model as it is, in its own dtype ({own})",
    'ex09.pass_fn_ran_graphs_dynamo':
        'pass_fn ran on {calls} of the {graphs} graphs dynamo hands the backend: apply it to every graph, each time '
        'the backend is called (graph breaks and recompiles on a new shape bring new graphs), not only to the first',
    'ex09.run_what_pass_fn_returns':
        'run what pass_fn returns on the inputs the compiled function is given, unchanged',
    'ex09.return_graphs_order_backend_received':
        'return the graphs in the order the backend received them',
    'ex09.return_each_graph_exactly_dynamo':
        'return each graph exactly as dynamo handed it to the backend (do not retrace or edit it), and compile with '
        "torch.compile's defaults (dynamic shapes left to dynamo)",
    'ex09.run_model_graphs_their_own':
        'run the model and the graphs in their own dtype: cast neither the model nor the inputs',
    'ex09.keep_gm_dynamo_hands_your':
        'keep the gm dynamo hands your backend itself: a backend wrapped in aot_autograd (or a graph retraced with '
        "make_fx) receives AOTAutograd's ATen graphs instead",
    'ex09.n0_where_dynamo_breaks_graph':
        '0 where dynamo breaks the graph: that a compile succeeds tells nothing (with fullgraph=True torch.compile '
        "captures this function's breaks in one graph); count the breaks torch.compile's defaults make: "
        "the graph_break_count of torch._dynamo.explain's report",
    'ex09.call_in_caller_s_grad_mode':
        'call compiled(*inputs) in the grad mode you are called in, with no torch.no_grad() around it: fn may compute '
        'otherwise under it (torch.is_grad_enabled()), and dynamo captures what fn does in the caller\'s mode',
    'ex09.pass_inputs_themselves_not_copies':
        'pass the inputs themselves, compiled(*inputs), not copies (clone()) nor detached tensors (detach()): '
        'dynamo sees which inputs are one tensor (one placeholder) and which require grad, and what fn does to its '
        "inputs must reach the caller's tensors",
    'ex09.pass_inputs_not_detached':
        'pass the inputs as they are, not detached: .detach() drops requires_grad, which dynamo guards on and fn '
        'may read, so fn runs another path',
    'ex09.capture_model_in_its_own_mode':
        'compile the model in the mode the caller handed it over (train or eval) and leave it so: model.eval() '
        'changes what it computes (BatchNorm, Dropout) and switches the caller\'s model for good',
    'ex09.let_failing_pass_raise':
        'let an error of pass_fn through: no try/except around it in the backend. torch.compile then fails the call '
        'with it (BackendCompilerFailed names it); a graph run without the pass gives outputs the pass never made',
    'ex09.keep_caller_s_no_grad':
        'you were called under torch.no_grad(): call compiled(*inputs) in that mode, with no torch.enable_grad() or '
        'torch.set_grad_enabled(True) around it; fn may compute otherwise with grad enabled (torch.is_grad_enabled())',
    'ex09.explain_under_caller_s_no_grad':
        'you were called under torch.no_grad(): explain fn in that mode, with no torch.enable_grad() or '
        'torch.set_grad_enabled(True) around it; with grad enabled fn may take another path and break elsewhere',
    'ex09.explain_in_caller_s_grad_mode':
        'explain fn in the grad mode you are called in, with no torch.no_grad() around it: fn may take another path '
        'under it (torch.is_grad_enabled()) and break its graph elsewhere, or not at all',
    'ex09.compile_caller_s_model_itself':
        "compile the caller's model itself, torch.compile(model, ...), not a copy of it: the caller goes on changing "
        'its weights (an optimizer step, load_state_dict), and the compiled function must run them',
    'ex09.return_compiled_itself_keep_autograd':
        'return what torch.compile returns, not a wrapper that calls it under torch.no_grad() or detaches its '
        "outputs: the caller may train the compiled model, and its outputs carry autograd as the eager model's do",
    'ex09.leave_dynamo_config_as_found':
        'leave torch._dynamo.config as you found it: a setting changed for good changes every later compile of the '
        'caller; change one only inside `with torch._dynamo.config.patch(...):`, or not at all',
}
