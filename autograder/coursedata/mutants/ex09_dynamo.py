"""Mutants and alternatives of ex09_dynamo.

The answer cells of the other functions stay the solution's, so a mutant of graph_break_count may call the
solution's capture_graphs.
"""
from autograder.coursedata.mutants import Alternative, Mutant

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
           hint="no longer require grad",
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
    Mutant("compile_with_pass", "casts the caller's model to float32 before compiling", hint="cast to torch.float32",
           edits=(("torch.compile(model, backend=pass_backend)",
                   "torch.compile(model.float(), backend=pass_backend)"),)),
]

# Wrong answers written from the task text alone, by someone who had not read the checks: whole answer
# cells, each with the diagnosis its failure must give.
_BLIND_MUTANTS = [
    Mutant('capture_graphs', 'no reset: Call torch._dynamo.reset() before compiling, or a function compiled many times '
           'before hands your backend nothing.',
           hint='start with torch._dynamo.reset()',
           source='''import torch
import torch._dynamo
import torch.fx as fx

def capture_graphs(fn, *inputs):
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch.compile(fn, backend=backend)(*inputs)
    return graphs
'''),
    Mutant('capture_graphs', 'first input only: Pass every input: compiled(*inputs).',
           hint='pass every input on',
           source='''import torch
import torch._dynamo
import torch.fx as fx

def capture_graphs(fn, *inputs):
    torch._dynamo.reset()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch.compile(fn, backend=backend)(inputs[0])
    return graphs
'''),
    Mutant('capture_graphs', "aot graphs: Keep the graphs your backend receives from dynamo, not AOTAutograd's ATen "
           'graphs.',
           hint='is an ATen graph', not_hints=('in the order',),
           source='''import torch
import torch._dynamo
import torch.fx as fx

def capture_graphs(fn, *inputs):
    from torch._dynamo.backends.common import aot_autograd
    torch._dynamo.reset()
    graphs = []

    def fw(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch.compile(fn, backend=aot_autograd(fw_compiler=fw))(*inputs)
    return graphs
'''),
    Mutant('capture_graphs', 'last only: A graph break gives several graphs: append each one instead of keeping the '
           'last.',
           hint='a variable that is overwritten keeps only the last', not_hints=('fullgraph',),
           source='''import torch
import torch._dynamo
import torch.fx as fx

def capture_graphs(fn, *inputs):
    torch._dynamo.reset()
    seen = {}

    def backend(gm, example_inputs):
        seen["gm"] = gm
        return gm.forward

    torch.compile(fn, backend=backend)(*inputs)
    return [seen["gm"]] if seen else []
'''),
    Mutant('capture_graphs', 'fullgraph: Do not pass fullgraph=True: a graph break must give several graphs, not an '
           'error.',
           hint='without fullgraph=True', not_hints=('keeps only the last',),
           source='''import torch
import torch._dynamo
import torch.fx as fx

def capture_graphs(fn, *inputs):
    torch._dynamo.reset()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch.compile(fn, backend=backend, fullgraph=True)(*inputs)
    return graphs
'''),
    Mutant('capture_graphs', 'calls twice: Call the compiled function exactly once (no warm-up call).',
           hint='call the compiled function once', not_hints=('graph breaks make several',),
           source='''import torch
import torch._dynamo
import torch.fx as fx

def capture_graphs(fn, *inputs):
    torch._dynamo.reset()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    compiled = torch.compile(fn, backend=backend)
    compiled(*inputs)          # warm-up
    compiled(*inputs)
    return graphs
'''),
    Mutant('graph_break_count', 'counts graphs: Return explanation.graph_break_count, not graph_count or len(graphs).',
           hint='that is the number of graphs',
           source='''import torch
import torch._dynamo
import torch.fx as fx

def graph_break_count(fn, *inputs):
    torch._dynamo.reset()
    return int(torch._dynamo.explain(fn)(*inputs).graph_count)
'''),
    Mutant('graph_break_count', 'first input only: Pass every input to explain: explain(fn)(*inputs).',
           hint='first input alone',
           source='''import torch
import torch._dynamo
import torch.fx as fx

def graph_break_count(fn, *inputs):
    torch._dynamo.reset()
    return int(torch._dynamo.explain(fn)(inputs[0]).graph_break_count)
'''),
    Mutant('graph_break_count', 'fullgraph probe: fullgraph=True only tells whether there is a break; count them with '
           'torch._dynamo.explain.',
           hint='that a compile succeeds tells nothing',
           source='''import torch
import torch._dynamo
import torch.fx as fx

def graph_break_count(fn, *inputs):
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*inputs)
        return 0
    except Exception:
        return 1
'''),
    Mutant('graph_break_count', 'unique reasons: Two breaks of the same kind are two breaks: do not deduplicate reasons.',
           hint='different kinds of break', not_hints=("entries of explain's break_reasons",),
           source='''import torch
import torch._dynamo
import torch.fx as fx

def graph_break_count(fn, *inputs):
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(fn)(*inputs)
    return len({r.reason for r in explanation.break_reasons})
'''),
    Mutant('graph_break_count', "stale counters: Dynamo's global counters accumulate across compiles; use "
           'torch._dynamo.explain for this one compile.',
           hint='includes other compiles',
           source='''import torch
import torch._dynamo
import torch.fx as fx

def graph_break_count(fn, *inputs):
    from torch._dynamo.utils import counters
    torch._dynamo.reset()
    torch.compile(fn, backend="eager")(*inputs)
    return int(sum(counters["graph_break"].values()))
'''),
    Mutant('graph_break_count', 'returns float: Return an int.',
           hint='a count is a Python int',
           source='''import torch
import torch._dynamo
import torch.fx as fx

def graph_break_count(fn, *inputs):
    torch._dynamo.reset()
    e = torch._dynamo.explain(fn)(*inputs)
    return e.graph_break_count / 1.0
'''),
    Mutant('compile_with_pass', "symbolic trace first: Apply the pass inside the backend to dynamo's graphs; symbolic_trace"
           ' fails on data-dependent branches.',
           hint='needs no fx.symbolic_trace', not_hints=('torch.fx.wrap',),
           source='''import torch
import torch._dynamo
import torch.fx as fx

def compile_with_pass(model, pass_fn):
    return torch.compile(pass_fn(fx.symbolic_trace(model)), backend="eager")
'''),
    Mutant('compile_with_pass', "per call: Call pass_fn in the backend, once per graph, and return the result's forward.",
           hint='not again in the callable the backend returns',
           source='''import torch
import torch._dynamo
import torch.fx as fx

def compile_with_pass(model, pass_fn):
    def backend(gm, example_inputs):
        def run(*args):
            return pass_fn(gm)(*args)
        return run

    return torch.compile(model, backend=backend)
'''),
    Mutant('compile_with_pass', 'ignores return: Run the GraphModule pass_fn returns, not the one you passed in.',
           hint='run what pass_fn returns', not_hints=('was never called',),
           source='''import torch
import torch._dynamo
import torch.fx as fx

def compile_with_pass(model, pass_fn):
    def backend(gm, example_inputs):
        pass_fn(gm)
        return gm.forward

    return torch.compile(model, backend=backend)
'''),
    Mutant('compile_with_pass', 'calls eval: Do not call model.eval(): compile the model as it is.',
           hint='call neither .eval() nor .train()', not_hints=('work on a copy',),
           source='''import torch
import torch._dynamo
import torch.fx as fx

def compile_with_pass(model, pass_fn):
    def backend(gm, example_inputs):
        return pass_fn(gm).forward

    return torch.compile(model.eval(), backend=backend)
'''),
    Mutant('compile_with_pass', "aot graphs: Give the pass dynamo's graphs (a plain backend), not aot_autograd's ATen "
           'graphs.',
           hint='pass_fn was given ATen graphs', not_hints=('run what pass_fn returns',),
           source='''import torch
import torch._dynamo
import torch.fx as fx

def compile_with_pass(model, pass_fn):
    from torch._dynamo.backends.common import aot_autograd

    def fw(gm, example_inputs):
        return pass_fn(gm).forward

    return torch.compile(model, backend=aot_autograd(fw_compiler=fw))
'''),
    Mutant('compile_with_pass', 'casts float: Do not call model.float(): a float64 model stays float64.',
           hint='cast to torch.float32',
           source='''import torch
import torch._dynamo
import torch.fx as fx

def compile_with_pass(model, pass_fn):
    def backend(gm, example_inputs):
        return pass_fn(gm).forward

    return torch.compile(model.float(), backend=backend)
'''),
    Mutant('compile_with_pass', "freezes params: Do not switch off requires_grad on the model's parameters.",
           hint='no longer require grad',
           source='''import torch
import torch._dynamo
import torch.fx as fx

def compile_with_pass(model, pass_fn):
    for p in model.parameters():
        p.requires_grad_(False)

    def backend(gm, example_inputs):
        return pass_fn(gm).forward

    return torch.compile(model, backend=backend)
'''),
]

# Right answers written from the task text alone, by the same author
_BLIND_ALTERNATIVES = [
    Alternative('capture_graphs', 'written from the task text alone: capture graphs right',
                '''import torch
import torch._dynamo
import torch.fx as fx

def capture_graphs(fn, *inputs):
    torch._dynamo.reset()
    received = []

    def keep(gm, example_inputs):
        received.append(gm)
        return gm

    torch.compile(fn, backend=keep)(*inputs)
    return list(received)
'''),
    Alternative('graph_break_count', 'written from the task text alone: graph break count right',
                '''import torch
import torch._dynamo
import torch.fx as fx

def graph_break_count(fn, *inputs):
    torch._dynamo.reset()
    report = torch._dynamo.explain(fn)(*inputs)
    return int(report.graph_break_count)
'''),
    Alternative('compile_with_pass', 'written from the task text alone: compile with pass right',
                '''import torch
import torch._dynamo
import torch.fx as fx

def compile_with_pass(model, pass_fn):
    def apply_pass(gm, example_inputs):
        transformed = pass_fn(gm)
        return transformed

    return torch.compile(model, backend=apply_pass)
'''),
]


MUTANTS = _CAPTURE_MUTANTS + _BREAKS_MUTANTS + _PASS_MUTANTS + _BLIND_MUTANTS

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
] + _BLIND_ALTERNATIVES
