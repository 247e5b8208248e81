"""Clauses of ex09_dynamo: capture_graphs, graph_break_count, compile_with_pass."""
from fxcourse_instructor.clauses import Clause

CLAUSES = [
    Clause("capture_graphs", "the compiled function is called once on the inputs", ("GateNet(6)", "BreakNet seed 3"),
           mutant="compiles but never calls the compiled function (torch.compile is lazy)"),
    Clause("capture_graphs", "dynamo state reset first", ("relu_twice, compiled eight times before",),
           mutant="no torch._dynamo.reset(): a function compiled often before calls no backend"),
    Clause("capture_graphs", "every graph, a graph break included", ("sin_item_scale", "BreakNet seed 3"),
           mutant="fullgraph=True: a graph break becomes an error"),
    Clause("capture_graphs", "every graph dynamo handed the backend, not the last one only", ("BreakNet seed 3",),
           mutant="keeps only the last graph: overwrites instead of appending"),
    Clause("capture_graphs", "in the order dynamo handed them", ("GateNet(6)", "BreakNet seed 3"),
           mutant="puts each new graph first: the graphs come back in reverse order"),
    Clause("capture_graphs", "the graphs as dynamo gave them, with the defaults of torch.compile",
           ("BreakNet seed 17",), patch=("torch._dynamo.optimize(recording_backend)(fn)",
                                 "torch.compile(fn, backend=recording_backend, dynamic=True)"),
           hint="defaults"),
    Clause("capture_graphs", "every input is passed on to fn", ("scaled_by_item",),
           mutant="calls the compiled function on the first input only: fn(x, scale) loses its scale",
           hint="pass every input on"),
    Clause("graph_break_count", "breaks, not graphs", ("GateNet(6)", "two_items"),
           mutant="returns the number of graphs"),
    Clause("graph_break_count", "the inputs are passed on as they are", ("GateNet(6)", "two_items"),
           mutant="passes the inputs as one tuple: fn receives a tuple"),
    Clause("graph_break_count", "every break counts, two of one kind too", ("two_items",),
           mutant="returns the number of distinct reasons: two .item() breaks count once"),
    Clause("graph_break_count", "an int", ("GateNet(6)", "two_items"),
           mutant="returns the report's break reasons instead of their number"),
    Clause("graph_break_count", "an int, not another kind of number", ("sin_item_scale", "two_items"),
           mutant="returns the count as a float", hint="return int("),
    Clause("graph_break_count", "every input is passed on to fn", ("scaled_by_item",),
           mutant="explains the call on the first input only: fn(x, scale) loses its scale",
           hint="pass every input on"),
    Clause("graph_break_count", "graph_break_count as dynamo reports it, not the entries of break_reasons",
           ("BreakNet seed 3",), mutant="the number of entries of break_reasons: a break in a loop has none",
           hint="break_reasons"),
    Clause("graph_break_count", "this compile only, not counts kept from earlier ones", ("sin_item_scale", "two_items"),
           mutant="sums dynamo's graph_break counters, which reset() does not clear", hint="counters"),
    Clause("compile_with_pass", "pass_fn runs on the graphs", ("PlainMLP(6)", "BreakNet seed 3 with relu_to_sigmoid"),
           mutant="never calls the pass: plain torch.compile"),
    Clause("compile_with_pass", "what pass_fn returns is what runs", ("PlainMLP(6)",
                                                                      "BreakNet seed 3 with relu_to_sigmoid"),
           mutant="calls the pass but runs the graph it was given"),
    Clause("compile_with_pass", "every graph, after a graph break too", ("GateNet(6) with relu_to_sigmoid",
                                                                         "BreakNet seed 3 with relu_to_sigmoid"),
           mutant="passes the first graph only and reuses it for every later graph"),
    Clause("compile_with_pass", "a model with a graph break works", ("GateNet(6) with relu_to_sigmoid",
                                                                     "BreakNet seed 3 with relu_to_sigmoid"),
           mutant="fullgraph=True: a model with a graph break raises"),
    Clause("compile_with_pass", "returns the compiled function", ("PlainMLP(6)",
                                                                  "BreakNet seed 3 with relu_to_sigmoid"),
           mutant="returns the model after compiling it (torch.compile does not work in place)"),
    Clause("compile_with_pass", "pass_fn runs once per graph, when the backend receives it", ("PlainMLP(6)",
                                                                                              "BreakNet seed 3 with relu_to_sigmoid"),
           mutant="runs the pass twice per graph: once to print the result, once to run it", hint="once per graph"),
    Clause("compile_with_pass", "pass_fn runs in the backend, not at every call", ("BreakNet seed 3",),
           mutant="applies the pass at every call, inside the callable the backend returns", hint="once per graph"),
    Clause("compile_with_pass", "the caller's model keeps its mode", ("PlainMLP(4) in training mode",),
           mutant="puts the caller's model in eval mode", hint="switched from training to eval"),
    Clause("compile_with_pass", "the caller's model keeps its parameters trainable", ("PlainMLP(6)",
                                                                                      "BreakNet seed 3 with relu_to_sigmoid"),
           mutant="freezes the caller's model's parameters (requires_grad_(False))", hint="no longer requires grad"),
    Clause("compile_with_pass", "the caller's model keeps its dtype", ("GateNet(4) in float64",),
           mutant="casts the caller's model to float32 before compiling", hint="cast to torch.float32"),
    Clause("compile_with_pass", "pass_fn gets dynamo's graphs, not ATen graphs", ("PlainMLP(6)",
                                                                                  "BreakNet seed 3 with relu_to_sigmoid"),
           mutant="runs the pass on AOTAutograd's ATen graphs (aot_autograd's fw_compiler)", hint="ATen graphs"),
    # rules the answers written from the task text alone broke
    Clause("capture_graphs", "the compiled function is called once: a second call may compile again",
           ("Stepper(4)",), mutant="calls twice: Call the compiled function exactly once (no warm-up call).",
           hint="call the compiled function once"),
    Clause("capture_graphs", "the graphs dynamo hands the backend, not AOTAutograd's ATen graphs",
           ("sin_item_scale", "BreakNet seed 3"),
           mutant="aot graphs: Keep the graphs your backend receives from dynamo, not AOTAutograd's ATen graphs.",
           hint="is an ATen graph"),
    Clause("capture_graphs", "torch.compile's defaults: no fullgraph=True, which captures a break in one graph",
           ("sin_item_scale", "scaled_by_item"),
           mutant="fullgraph: Do not pass fullgraph=True: a graph break must give several graphs, not an error.",
           hint="without fullgraph=True"),
    Clause("graph_break_count", "the breaks torch.compile's defaults make, though a fullgraph compile succeeds",
           ("sin_item_scale", "two_items"),
           mutant="fullgraph probe: fullgraph=True only tells whether there is a break; count them with "
                  "torch._dynamo.explain.", hint="that a compile succeeds tells nothing"),
    Clause("compile_with_pass", "the pass runs on dynamo's graphs in the backend: a branch on a value is fine",
           ("GateNet(6) with relu_to_sigmoid", "BreakNet seed 3 with relu_to_sigmoid"),
           mutant="symbolic trace first: Apply the pass inside the backend to dynamo's graphs; symbolic_trace fails "
                  "on data-dependent branches.", hint="needs no fx.symbolic_trace"),
    Clause("capture_graphs", "torch._dynamo.config is left as it was found", ("sin_item_scale", "BreakNet seed 3"),
           mutant="sets torch._dynamo.config.capture_scalar_outputs = True and leaves it so",
           hint="leave torch._dynamo.config as you found it"),
    Clause("graph_break_count", "torch._dynamo.config is left as it was found", ("sin_item_scale", "two_items"),
           mutant="raises torch._dynamo.config.recompile_limit for good",
           hint="leave torch._dynamo.config as you found it"),
    # what the caller hands over is used as it is: its grad mode, its inputs, its model's mode and weights
    Clause("capture_graphs", "called in the caller's grad mode, not under torch.no_grad()", ("grad_gated",),
           mutant="calls the compiled function under torch.no_grad(): fn may take another path there",
           hint="torch.no_grad()"),
    Clause("capture_graphs", "called in the caller's grad mode, not with grad enabled when the caller turned it off",
           ("grad_gated called under torch.no_grad()",),
           mutant="written from the task text alone: turns grad on around the call (torch.enable_grad()), whatever "
                  "mode the caller is in", hint="you were called under torch.no_grad()"),
    Clause("capture_graphs", "the inputs themselves, not copies: one tensor given twice is one input",
           ("product_plus",),
           mutant="calls the compiled function on clones of the inputs: one tensor given twice becomes two",
           hint="not copies"),
    Clause("capture_graphs", "the inputs as they are, nothing detached", ("product_plus", "needs_grad_path"),
           mutant="calls the compiled function on detached inputs: requires_grad is lost", hint="detach()"),
    Clause("capture_graphs", "a model in the mode it came in, and left in it", ("TrainNet(4)",),
           mutant="puts a model in eval mode before compiling it (and leaves it there)",
           hint="in the mode the caller handed it over"),
    Clause("capture_graphs", "a model compiled in the mode it came in, even when put back afterwards",
           ("TrainNet(4)",), mutant="compiles a model in eval mode and puts it back in its mode afterwards",
           hint="in the mode the caller handed it over"),
    Clause("graph_break_count", "explained in the caller's grad mode, not under torch.no_grad()", ("grad_gated",),
           mutant="explains fn under torch.no_grad(): fn may take another path there", hint="torch.no_grad()"),
    Clause("graph_break_count", "explained in the caller's grad mode, not with grad enabled when the caller turned "
           "it off", ("grad_gated called under torch.no_grad()",),
           mutant="written from the task text alone: explains fn with grad enabled (torch.set_grad_enabled(True)), "
                  "whatever mode the caller is in", hint="you were called under torch.no_grad()"),
    Clause("compile_with_pass", "a pass that raises fails the call with its error",
           ("PlainMLP(4) with a pass that raises",),
           mutant="written from the task text alone: catches an error of pass_fn and runs the graph as dynamo gave it",
           hint="let an error of pass_fn through"),
    Clause("compile_with_pass", "the caller's model itself is compiled, not a copy: a change of its weights shows",
           ("PlainMLP(5) in training mode, called with grad enabled",),
           mutant="compiles a deep copy of the model: a later change of its weights is not seen",
           hint="not a copy of it"),
    Clause("compile_with_pass", "what torch.compile returns, no wrapper: with grad enabled the outputs carry autograd",
           ("PlainMLP(5) in training mode, called with grad enabled",),
           mutant="returns a wrapper that calls the compiled model under torch.no_grad()", hint="not a wrapper"),
]

_CALLER = ("called in the caller's grad mode, not under torch.no_grad()",
           "called in the caller's grad mode, not with grad enabled when the caller turned it off",
           "the inputs themselves, not copies: one tensor given twice is one input",
           "the inputs as they are, nothing detached", "a model in the mode it came in, and left in it",
           "a model compiled in the mode it came in, even when put back afterwards")
_COMPILED = ("the caller's model itself is compiled, not a copy: a change of its weights shows",
             "what torch.compile returns, no wrapper: with grad enabled the outputs carry autograd")

_CONFIG = (("capture_graphs", "torch._dynamo.config is left as it was found"), ("graph_break_count", "torch._dynamo.config is left as it was found"))

# The task text, sentence by sentence: the rules of the clauses that check it, or why it is no rule.
TASK_TEXT = {
    '*': {
        'After lesson 09 you know that `torch.compile` captures FX graphs with dynamo and hands each one to a '
        'backend, `(gm, example_inputs) -> callable`.':
            "what the lesson taught, the motivation",
        'Here you write three tools around that hand-over:':
            "introduces the list of functions",
        '`capture_graphs`: the graphs dynamo hands a backend of your own, in order;':
            "a summary of capture_graphs, whose rules its section states",
        '`graph_break_count`: how many graph breaks a function causes for given inputs;':
            "a summary of graph_break_count, whose rules its section states",
        '`compile_with_pass`: `torch.compile` with a backend that runs a Part I style pass on every graph.':
            "a summary of compile_with_pass, whose rules its section states",
        'Every backend here is your own Python function: nothing is compiled to machine code, so each call takes a '
        'fraction of a second.':
            "explains why the checks are quick, no rule",
        'Each case starts from `torch._dynamo.reset()`.':
            "how the grader runs each case, no rule of the answer",
        'Leave `torch._dynamo.config` as you found it: a setting changed for good (`capture_scalar_outputs`, '
        '`recompile_limit`, ...) changes every later compile.':
            _CONFIG,
        'Warnings that torch prints (dynamo warns about `.item()`, for one) never cost points.':
            "what grading ignores, no rule of a graded function",
    },
    'capture_graphs': {
        '## 1. `capture_graphs(fn, *inputs) -> list[fx.GraphModule]`':
            ("every graph dynamo handed the backend, not the last one only",),
        'Compile `fn` (a function or an `nn.Module`) with a backend of your own, call the compiled function **once** '
        'on `inputs` (all of them, as they are: `compiled(*inputs)`), and return every `fx.GraphModule` dynamo '
        'handed the backend, in the order it handed them.':
            ('the compiled function is called once on the inputs', 'every input is passed on to fn',
             'every graph dynamo handed the backend, not the last one only', 'in the order dynamo handed them',
             'the compiled function is called once: a second call may compile again',
             "the inputs themselves, not copies: one tensor given twice is one input",
             "the inputs as they are, nothing detached"),
        'call it as the caller calls `fn`: on the inputs themselves (no copies, nothing detached: dynamo sees which '
        'inputs are one tensor and which require grad), in the grad mode you are called in (no `torch.no_grad()` '
        'around the call), and a model in the mode it came in (train or eval);':
            _CALLER,
        'start from `torch._dynamo.reset()`: dynamo keeps compiled code per function, and a function compiled often '
        'enough before (in your kernel, by earlier experiments) runs without calling any backend;':
            ("dynamo state reset first",),
        'the backend must not change what `fn` computes: return a callable that runs the graph as it is;':
            ("the graphs as dynamo gave them, with the defaults of torch.compile",),
        "return the graphs as dynamo gave them (no retracing, no edits), with `torch.compile`'s defaults otherwise.":
            ('the graphs as dynamo gave them, with the defaults of torch.compile',
             "torch.compile's defaults: no fullgraph=True, which captures a break in one graph",
             "the graphs dynamo hands the backend, not AOTAutograd's ATen graphs"),
        'Every graph dynamo hands a backend when `fn` is compiled and called once on `inputs`, in order.':
            ('every graph dynamo handed the backend, not the last one only', 'in the order dynamo handed them',
             'the compiled function is called once on the inputs'),
    },
    'graph_break_count': {
        '## 2. `graph_break_count(fn, *inputs) -> int`':
            ("an int",),
        'How many graph breaks compiling `fn` for these inputs causes, for this one compile of `fn` on all of '
        '`inputs`.':
            ('breaks, not graphs', 'this compile only, not counts kept from earlier ones',
             'every input is passed on to fn', 'the inputs are passed on as they are'),
        '**A graph break here is a place where one captured graph ends and another begins**, so the count is the '
        'number of graphs dynamo captures minus one: what `torch._dynamo.explain` reports as `graph_break_count` '
        '(lesson 09, section 3).':
            ('breaks, not graphs', 'graph_break_count as dynamo reports it, not the entries of break_reasons',
             "the breaks torch.compile's defaults make, though a fullgraph compile succeeds"),
        'A break that ends no graph (a `print` after the last tensor operation) is not counted, although '
        '`break_reasons` lists it; and `break_reasons` may also miss breaks that do split graphs (a break inside a '
        'loop may have no entry).':
            ('graph_break_count as dynamo reports it, not the entries of break_reasons',
             'every break counts, two of one kind too'),
        'So count breaks this way, not graphs (one break splits a function into two graphs) and not the entries of '
        '`break_reasons`.':
            ("breaks, not graphs", "graph_break_count as dynamo reports it, not the entries of break_reasons"),
        'Explain `fn` as the caller runs it: on the inputs as they are, in the grad mode you are called in (under '
        '`torch.no_grad()`, `fn` may take another path).':
            ("explained in the caller's grad mode, not under torch.no_grad()",
             "explained in the caller's grad mode, not with grad enabled when the caller turned it off",
             'the inputs are passed on as they are'),
        'Return a Python `int`.':
            ("an int", "an int, not another kind of number"),
        'How many graph breaks compiling `fn` for these inputs causes.':
            ("breaks, not graphs",),
    },
    'compile_with_pass': {
        '## 3. `compile_with_pass(model, pass_fn) -> Callable`':
            ("returns the compiled function",),
        'Return `torch.compile(model, ...)` with a backend that applies `pass_fn(gm) -> gm` to **every** graph it '
        'receives and runs the result.':
            ('returns the compiled function', 'pass_fn runs on the graphs', 'what pass_fn returns is what runs',
             'every graph, after a graph break too') + _COMPILED,
        'Calling what you return then gives what the eager model gives after the pass.':
            ("what pass_fn returns is what runs",) + _COMPILED,
        "compile the caller's model itself and return what `torch.compile` returns, no copy, no wrapper: a later "
        "change of the model's weights (an optimizer step) shows in the next call, and with grad enabled the outputs "
        "carry autograd, as the eager model's do;":
            _COMPILED,
        'a pass may change `gm` in place and return it, or build and return a new `GraphModule`: run what it returns;':
            ("what pass_fn returns is what runs",),
        'a model with a graph break is several graphs, and a new input shape brings a recompile: each of those '
        'graphs goes through `pass_fn`;':
            ("every graph, after a graph break too", "a model with a graph break works"),
        'run `pass_fn` once per graph, in the backend when the graph arrives: not again in the callable the backend '
        'returns (that one runs at every call);':
            ('pass_fn runs once per graph, when the backend receives it',
             'pass_fn runs in the backend, not at every call'),
        "a pass that raises makes the compile fail: let its error through (no `try` around `pass_fn`), so the "
        "caller's call fails with it; never run the graph without the pass instead;":
            ("a pass that raises fails the call with its error",),
        "leave the caller's model as it is: its mode (train or eval), its dtype, its parameters' `requires_grad`;":
            ("the caller's model keeps its mode", "the caller's model keeps its parameters trainable",
             "the caller's model keeps its dtype"),
        "the grader's passes work on dynamo's graphs (ReLU as `torch.relu`, `F.relu` or `.relu()`), not on "
        "AOTAutograd's ATen graphs; no inductor.":
            ("pass_fn gets dynamo's graphs, not ATen graphs",
             "the pass runs on dynamo's graphs in the backend: a branch on a value is fine"),
        'torch.compile with a backend that runs pass_fn(gm) -> gm on every graph it receives.':
            ("pass_fn runs on the graphs", "every graph, after a graph break too"),
    },
}
