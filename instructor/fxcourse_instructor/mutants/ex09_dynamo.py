"""Mutants and alternatives of ex09_dynamo.

The answer cells of the other functions stay the solution's, so a mutant of graph_break_count may call the
solution's capture_graphs.
"""
from fxcourse_instructor.mutants import Alternative, Mutant, from_task_text

_CAPTURE_MUTANTS = [
    Mutant("capture_graphs", "compiles but never calls the compiled function (torch.compile is lazy)",
           hint="torch.compile is lazy",
           edits=(("    compiled(*inputs)       # compiling is lazy: dynamo captures at the first call\n", ""),)),
    Mutant("capture_graphs", "calls fn itself instead of the compiled function: it runs eagerly, no backend",
           hint="torch.compile is lazy",
           edits=(("    compiled(*inputs)  ", "    fn(*inputs)  "),)),
    Mutant("capture_graphs", "no torch._dynamo.reset(): a function compiled often before calls no backend",
           hint="torch._dynamo.reset()",
           edits=(("    torch._dynamo.reset()   # compiled code of earlier calls would be reused, and the backend not "
                   "called\n", ""),)),
    Mutant("capture_graphs", "fullgraph=True: a graph break becomes an error", hint="fullgraph",
           edits=(("torch._dynamo.optimize(recording_backend)(fn)",
                   "torch.compile(fn, backend=recording_backend, fullgraph=True)"),)),
    Mutant("capture_graphs", "keeps only the last graph: overwrites instead of appending", hint="keep every graph",
           edits=(("        graphs.append(gm)\n", "        graphs[:] = [gm]\n"),)),
    Mutant("capture_graphs", "keeps the example inputs instead of the graph", hint="append gm",
           edits=(("        graphs.append(gm)\n", "        graphs.append(example_inputs)\n"),)),
    Mutant("capture_graphs", "puts each new graph first: the graphs come back in reverse order", hint="order",
           edits=(("        graphs.append(gm)\n", "        graphs.insert(0, gm)\n"),)),
    Mutant("capture_graphs", "the backend returns nothing", hint="must return a callable",
           edits=(("        return gm.forward   # run the graph as captured: outputs unchanged\n", "        pass\n"),)),
    # wrong answers written from the task text alone, after the lesson
    Mutant("capture_graphs", "calls the compiled function on the first input only: fn(x, scale) loses its scale",
           hint="pass every input on", not_hints=("keep every graph",),
           edits=(("    compiled(*inputs)  ", "    compiled(inputs[0])  "),)),
    Mutant("capture_graphs", "resets dynamo at the end, to clean up, instead of first",
           hint="torch._dynamo.reset()",
           edits=(("    torch._dynamo.reset()   # compiled code of earlier calls would be reused, and the backend not "
                   "called\n", ""),
                  ("    return graphs", "    torch._dynamo.reset()\n    return graphs"))),
    Mutant("capture_graphs", "torch._dynamo.reset without the parentheses: nothing is reset",
           hint="torch._dynamo.reset()",
           edits=(("    torch._dynamo.reset()   #", "    torch._dynamo.reset   #"),)),
    Mutant("capture_graphs", "the backend returns the graph's output on the example inputs, not a callable",
           hint="must return a callable",
           edits=(("        return gm.forward   #", "        return gm(*example_inputs)   #"),)),
    Mutant("capture_graphs", "keeps gm.graph, the Graph, instead of the GraphModule", hint="expected an fx.GraphModule",
           edits=(("        graphs.append(gm)\n", "        graphs.append(gm.graph)\n"),)),
    Mutant("capture_graphs", "torch.compile with dynamic=True: sizes become symbols", hint="defaults",
           edits=(("torch._dynamo.optimize(recording_backend)(fn)",
                   "torch.compile(fn, backend=recording_backend, dynamic=True)"),)),
    # wrong answers that change what the caller handed over: its grad mode, its inputs, its model's mode
    Mutant("capture_graphs", "calls the compiled function under torch.no_grad(): fn may take another path there",
           hint="torch.no_grad()",
           edits=(("    compiled(*inputs)  ", "    with torch.no_grad():\n        compiled(*inputs)  "),)),
    Mutant("capture_graphs", "calls the compiled function on clones of the inputs: one tensor given twice becomes two",
           hint="not copies",
           edits=(("    compiled(*inputs)  ", "    compiled(*[t.clone() for t in inputs])  "),)),
    Mutant("capture_graphs", "calls the compiled function on detached inputs: requires_grad is lost",
           hint="detached tensors (detach())",
           edits=(("    compiled(*inputs)  ", "    compiled(*[t.detach() for t in inputs])  "),)),
    Mutant("capture_graphs", "puts a model in eval mode before compiling it (and leaves it there)",
           hint="in the mode the caller handed it over",
           edits=(("    compiled = torch._dynamo.optimize",
                   "    if isinstance(fn, nn.Module):\n        fn.eval()\n    compiled = torch._dynamo.optimize"),)),
    Mutant("capture_graphs", "compiles a model in eval mode and puts it back in its mode afterwards",
           hint="in the mode the caller handed it over",
           edits=(("    compiled = torch._dynamo.optimize",
                   "    mode = getattr(fn, 'training', None)\n    if mode is not None:\n        fn.eval()\n"
                   "    compiled = torch._dynamo.optimize"),
                  ("    return graphs", "    if mode is not None:\n        fn.train(mode)\n    return graphs"))),
]

_BREAKS_MUTANTS = [
    Mutant("graph_break_count", "returns the number of graphs", hint="number of graphs",
           edits=(("report.graph_break_count", "report.graph_count"),)),
    Mutant("graph_break_count", "passes the inputs as one tuple: fn receives a tuple", hint="raised",
           edits=(("torch._dynamo.explain(fn)(*inputs)", "torch._dynamo.explain(fn)(inputs)"),)),
    Mutant("graph_break_count", "only asks whether fullgraph=True fails: 0 or 1", hint="that a compile succeeds tells nothing",
           edits=(("    report = torch._dynamo.explain(fn)(*inputs)\n    return int(report.graph_break_count)",
                   "    try:\n        torch.compile(fn, backend='eager', fullgraph=True)(*inputs)\n"
                   "    except Exception:\n        return 1\n    return 0"),)),
    Mutant("graph_break_count", "returns the report's break reasons instead of their number", hint="an int",
           edits=(("    return int(report.graph_break_count)", "    return report.break_reasons"),)),
    Mutant("graph_break_count", "returns the number of distinct reasons: two .item() breaks count once",
           hint="different kinds of break",
           edits=(("    return int(report.graph_break_count)",
                   "    return len({str(r.reason).splitlines()[0][:40] for r in report.break_reasons})"),)),
    # wrong answers written from the task text alone, after the lesson
    Mutant("graph_break_count", "the number of entries of break_reasons: a break in a loop has none",
           hint="break_reasons", not_hints=("count every break",),
           edits=(("    return int(report.graph_break_count)", "    return len(report.break_reasons)"),)),
    Mutant("graph_break_count", "sums dynamo's graph_break counters, which reset() does not clear",
           hint="counters",
           edits=(("    torch._dynamo.reset()\n    report = torch._dynamo.explain(fn)(*inputs)\n"
                   "    return int(report.graph_break_count)",
                   "    from torch._dynamo.utils import counters\n    torch._dynamo.reset()\n"
                   "    torch.compile(fn, backend='eager')(*inputs)\n"
                   "    return sum(counters['graph_break'].values())"),)),
    Mutant("graph_break_count", "returns the count as a float", hint="return int(",
           edits=(("    return int(report.graph_break_count)", "    return float(report.graph_break_count)"),)),
    Mutant("graph_break_count", "explains the call on the first input only: fn(x, scale) loses its scale",
           hint="pass every input on", not_hints=("count every break",),
           edits=(("torch._dynamo.explain(fn)(*inputs)", "torch._dynamo.explain(fn)(inputs[0])"),)),
    Mutant("graph_break_count", "explains fn under torch.no_grad(): fn may take another path there",
           hint="torch.no_grad()",
           edits=(("    report = torch._dynamo.explain(fn)(*inputs)\n",
                   "    with torch.no_grad():\n        report = torch._dynamo.explain(fn)(*inputs)\n"),)),
    Mutant("graph_break_count", "counts only the .item() breaks, not the branches on a value",
           hint="count every break",
           edits=(("    return int(report.graph_break_count)",
                   "    return sum('item' in str(r.reason) for r in report.break_reasons)"),)),
]

_PASS_MUTANTS = [
    Mutant("compile_with_pass", "calls the pass but runs the graph it was given", hint="run what pass_fn returns",
           edits=(("        return transformed.forward", "        return gm.forward"),)),
    Mutant("compile_with_pass", "never calls the pass: plain torch.compile", hint="pass_fn was never called",
           edits=(("        transformed = pass_fn(gm)", "        transformed = gm"),)),
    Mutant("compile_with_pass", "fullgraph=True: a model with a graph break raises", hint="fullgraph",
           edits=(("torch.compile(model, backend=pass_backend)",
                   "torch.compile(model, backend=pass_backend, fullgraph=True)"),)),
    Mutant("compile_with_pass", "passes the first graph only and reuses it for every later graph",
           hint="every graph",
           edits=(("    def pass_backend(gm: fx.GraphModule, example_inputs):\n"
                   "        transformed = pass_fn(gm)",
                   "    done = []\n\n    def pass_backend(gm: fx.GraphModule, example_inputs):\n"
                   "        transformed = pass_fn(gm) if not done else gm\n        done.append(1)"),)),
    Mutant("compile_with_pass", "returns the model after compiling it (torch.compile does not work in place)",
           hint="returned the model itself",
           edits=(("    return torch.compile(model, backend=pass_backend)",
                   "    torch.compile(model, backend=pass_backend)\n    return model"),)),
    Mutant("compile_with_pass", "symbolic_trace first and compiles the traced module: a branch on a value fails",
           hint="TraceError",
           edits=(("    return torch.compile(model, backend=pass_backend)",
                   "    return torch.compile(pass_fn(fx.symbolic_trace(model)), backend='eager')"),)),
    Mutant("compile_with_pass", "the backend returns the pass's module's graph instead of something callable",
           hint="did not return callable",
           edits=(("        return transformed.forward", "        return transformed.graph"),)),
    # wrong answers written from the task text alone, after the lesson
    Mutant("compile_with_pass", "puts the caller's model in eval mode", hint="switched from training to eval",
           edits=(("    return torch.compile(model, backend=pass_backend)",
                   "    model.eval()\n    return torch.compile(model, backend=pass_backend)"),)),
    Mutant("compile_with_pass", "freezes the caller's model's parameters (requires_grad_(False))",
           hint="no longer requires grad",
           edits=(("    return torch.compile(model, backend=pass_backend)",
                   "    model.requires_grad_(False)\n    return torch.compile(model, backend=pass_backend)"),)),
    Mutant("compile_with_pass", "runs the pass twice per graph: once to print the result, once to run it",
           hint="once per graph", not_hints=("every graph dynamo hands", "pass_fn was never called"),
           edits=(("        transformed = pass_fn(gm)   #",
                   "        print(pass_fn(gm).code)\n        transformed = pass_fn(gm)   #"),)),
    Mutant("compile_with_pass", "applies the pass at every call, inside the callable the backend returns",
           hint="once per graph",
           edits=(("        transformed = pass_fn(gm)   # a pass may edit gm in place or return a new GraphModule: use "
                   "what it returns\n        return transformed.forward",
                   "        return lambda *args: pass_fn(gm)(*args)"),)),
    Mutant("compile_with_pass", "hands the pass the example inputs too", hint="pass_fn takes one argument",
           edits=(("        transformed = pass_fn(gm)   #", "        transformed = pass_fn(gm, example_inputs)   #"),)),
    Mutant("compile_with_pass", "runs the pass on AOTAutograd's ATen graphs (aot_autograd's fw_compiler)",
           hint="ATen graphs", not_hints=("run what pass_fn returns",),
           edits=(("    return torch.compile(model, backend=pass_backend)",
                   "    from torch._dynamo.backends.common import aot_autograd\n"
                   "    return torch.compile(model, backend=aot_autograd(fw_compiler=pass_backend))"),)),
    Mutant("compile_with_pass", "compiles a deep copy of the model: a later change of its weights is not seen",
           hint="not a copy of it",
           edits=(("torch.compile(model, backend=pass_backend)",
                   "torch.compile(__import__('copy').deepcopy(model), backend=pass_backend)"),)),
    Mutant("compile_with_pass", "returns a wrapper that calls the compiled model under torch.no_grad()",
           hint="not a wrapper",
           edits=(("    return torch.compile(model, backend=pass_backend)",
                   "    compiled = torch.compile(model, backend=pass_backend)\n\n    def run(*args):\n"
                   "        with torch.no_grad():\n            return compiled(*args)\n\n    return run"),)),
    Mutant("compile_with_pass", "casts the caller's model to float32 before compiling", hint="cast to torch.float32",
           edits=(("torch.compile(model, backend=pass_backend)",
                   "torch.compile(model.float(), backend=pass_backend)"),)),
]

# dynamo's settings are the caller's: an answer that changes one for good changes every later compile
_SETTINGS_MUTANTS = [
    Mutant("capture_graphs", "sets torch._dynamo.config.capture_scalar_outputs = True and leaves it so",
           hint="leave torch._dynamo.config as you found it", not_hints=("fullgraph",),
           edits=(("    graphs = []\n", "    torch._dynamo.config.capture_scalar_outputs = True\n    graphs = []\n"),)),
    Mutant("graph_break_count", "raises torch._dynamo.config.recompile_limit for good",
           hint="leave torch._dynamo.config as you found it",
           edits=(("    report = torch._dynamo.explain(fn)(*inputs)\n",
                   "    torch._dynamo.config.recompile_limit = 64\n    report = torch._dynamo.explain(fn)(*inputs)\n"),)),
]

# Written from the task text alone, by someone who had not read the checks (mutants/task_text/).
_TASK_TEXT_MUTANTS, _TASK_TEXT_ALTERNATIVES = from_task_text("ex09_dynamo")

MUTANTS = _SETTINGS_MUTANTS + _CAPTURE_MUTANTS + _BREAKS_MUTANTS + _PASS_MUTANTS + _TASK_TEXT_MUTANTS

ALTERNATIVES = [
    Alternative("capture_graphs", "torch._dynamo.explain keeps the graphs it captured", '''
def capture_graphs(fn, *inputs):
    torch._dynamo.reset()
    return list(torch._dynamo.explain(fn)(*inputs).graphs)
'''),
    Alternative("capture_graphs", "the backend returns the GraphModule itself (an nn.Module is callable)", '''
def capture_graphs(fn, *inputs):
    import torch._dynamo as dynamo
    dynamo.reset()
    seen = []

    def keep(gm, example_inputs):
        seen.append(gm)
        return gm

    torch.compile(fn, backend=keep)(*inputs)
    return seen
'''),
    Alternative("capture_graphs", "the backend runs each graph through an fx.Interpreter", '''
def capture_graphs(fn, *inputs):
    torch._dynamo.reset()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return lambda *args: fx.Interpreter(gm).run(*args)

    torch.compile(fn, backend=backend)(*inputs)
    return graphs
'''),
    Alternative("graph_break_count", "one graph fewer than explain captured: what explain itself counts", '''
def graph_break_count(fn, *inputs):
    from torch._dynamo import explain, reset
    reset()
    return len(explain(fn)(*inputs).graphs) - 1
'''),
    Alternative("graph_break_count", "a backend of its own counts the graphs it receives: one break, two graphs",
                '''
def graph_break_count(fn, *inputs):
    torch._dynamo.reset()
    graphs = []

    def counting_backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch.compile(fn, backend=counting_backend)(*inputs)
    torch._dynamo.reset()
    return len(graphs) - 1
'''),
    Alternative("compile_with_pass", "the backend runs the passed module through an fx.Interpreter", '''
def compile_with_pass(model, pass_fn):
    def backend(gm, example_inputs):
        runner = fx.Interpreter(pass_fn(gm))
        return lambda *args: runner.run(*args)

    return torch.compile(model, backend=backend)
'''),
] + _TASK_TEXT_ALTERNATIVES
