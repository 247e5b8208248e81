"""Answers to ex09_dynamo written from the task text alone, by someone who had not read the checks: the
wrong ones as mutants, each with the diagnosis its failure must give, the right ones as alternatives; each is a
whole answer cell."""
from autograder.coursedata.mutants import Alternative, Mutant

_IMP = '''import torch
import torch._dynamo
import torch.fx as fx

'''

MUTANTS = [
    Mutant('capture_graphs', 'no reset: Call torch._dynamo.reset() before compiling, or a function compiled many times '
           'before hands your backend nothing.',
           hint='start with torch._dynamo.reset()',
           source=_IMP + '''def capture_graphs(fn, *inputs):
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch.compile(fn, backend=backend)(*inputs)
    return graphs
'''),
    Mutant('capture_graphs', 'first input only: Pass every input: compiled(*inputs).',
           hint='pass every input on',
           source=_IMP + '''def capture_graphs(fn, *inputs):
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
           source=_IMP + '''def capture_graphs(fn, *inputs):
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
           source=_IMP + '''def capture_graphs(fn, *inputs):
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
           source=_IMP + '''def capture_graphs(fn, *inputs):
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
           source=_IMP + '''def capture_graphs(fn, *inputs):
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
           source=_IMP + '''def graph_break_count(fn, *inputs):
    torch._dynamo.reset()
    return int(torch._dynamo.explain(fn)(*inputs).graph_count)
'''),
    Mutant('graph_break_count', 'first input only: Pass every input to explain: explain(fn)(*inputs).',
           hint='first input alone',
           source=_IMP + '''def graph_break_count(fn, *inputs):
    torch._dynamo.reset()
    return int(torch._dynamo.explain(fn)(inputs[0]).graph_break_count)
'''),
    Mutant('graph_break_count', 'fullgraph probe: fullgraph=True only tells whether there is a break; count them with '
           'torch._dynamo.explain.',
           hint='that a compile succeeds tells nothing',
           source=_IMP + '''def graph_break_count(fn, *inputs):
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*inputs)
        return 0
    except Exception:
        return 1
'''),
    Mutant('graph_break_count', 'unique reasons: Two breaks of the same kind are two breaks: do not deduplicate reasons.',
           hint='different kinds of break', not_hints=("entries of explain's break_reasons",),
           source=_IMP + '''def graph_break_count(fn, *inputs):
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(fn)(*inputs)
    return len({r.reason for r in explanation.break_reasons})
'''),
    Mutant('graph_break_count', "stale counters: Dynamo's global counters accumulate across compiles; use "
           'torch._dynamo.explain for this one compile.',
           hint='includes other compiles',
           source=_IMP + '''def graph_break_count(fn, *inputs):
    from torch._dynamo.utils import counters
    torch._dynamo.reset()
    torch.compile(fn, backend="eager")(*inputs)
    return int(sum(counters["graph_break"].values()))
'''),
    Mutant('graph_break_count', 'returns float: Return an int.',
           hint='a count is a Python int',
           source=_IMP + '''def graph_break_count(fn, *inputs):
    torch._dynamo.reset()
    e = torch._dynamo.explain(fn)(*inputs)
    return e.graph_break_count / 1.0
'''),
    Mutant('compile_with_pass', "symbolic trace first: Apply the pass inside the backend to dynamo's graphs; symbolic_trace"
           ' fails on data-dependent branches.',
           hint='needs no fx.symbolic_trace', not_hints=('torch.fx.wrap',),
           source=_IMP + '''def compile_with_pass(model, pass_fn):
    return torch.compile(pass_fn(fx.symbolic_trace(model)), backend="eager")
'''),
    Mutant('compile_with_pass', "per call: Call pass_fn in the backend, once per graph, and return the result's forward.",
           hint='not again in the callable the backend returns',
           source=_IMP + '''def compile_with_pass(model, pass_fn):
    def backend(gm, example_inputs):
        def run(*args):
            return pass_fn(gm)(*args)
        return run

    return torch.compile(model, backend=backend)
'''),
    Mutant('compile_with_pass', 'ignores return: Run the GraphModule pass_fn returns, not the one you passed in.',
           hint='run what pass_fn returns', not_hints=('was never called',),
           source=_IMP + '''def compile_with_pass(model, pass_fn):
    def backend(gm, example_inputs):
        pass_fn(gm)
        return gm.forward

    return torch.compile(model, backend=backend)
'''),
    Mutant('compile_with_pass', 'calls eval: Do not call model.eval(): compile the model as it is.',
           hint='call neither .eval() nor .train()', not_hints=('work on a copy',),
           source=_IMP + '''def compile_with_pass(model, pass_fn):
    def backend(gm, example_inputs):
        return pass_fn(gm).forward

    return torch.compile(model.eval(), backend=backend)
'''),
    Mutant('compile_with_pass', "aot graphs: Give the pass dynamo's graphs (a plain backend), not aot_autograd's ATen "
           'graphs.',
           hint='pass_fn was given ATen graphs', not_hints=('run what pass_fn returns',),
           source=_IMP + '''def compile_with_pass(model, pass_fn):
    from torch._dynamo.backends.common import aot_autograd

    def fw(gm, example_inputs):
        return pass_fn(gm).forward

    return torch.compile(model, backend=aot_autograd(fw_compiler=fw))
'''),
    Mutant('compile_with_pass', 'casts float: Do not call model.float(): a float64 model stays float64.',
           hint='cast to torch.float32',
           source=_IMP + '''def compile_with_pass(model, pass_fn):
    def backend(gm, example_inputs):
        return pass_fn(gm).forward

    return torch.compile(model.float(), backend=backend)
'''),
    Mutant('compile_with_pass', "freezes params: Do not switch off requires_grad on the model's parameters.",
           hint='no longer require grad',
           source=_IMP + '''def compile_with_pass(model, pass_fn):
    for p in model.parameters():
        p.requires_grad_(False)

    def backend(gm, example_inputs):
        return pass_fn(gm).forward

    return torch.compile(model, backend=backend)
'''),
]

ALTERNATIVES = [
    Alternative('capture_graphs', 'written from the task text alone: capture graphs right',
                _IMP + '''def capture_graphs(fn, *inputs):
    torch._dynamo.reset()
    received = []

    def keep(gm, example_inputs):
        received.append(gm)
        return gm

    torch.compile(fn, backend=keep)(*inputs)
    return list(received)
'''),
    Alternative('graph_break_count', 'written from the task text alone: graph break count right',
                _IMP + '''def graph_break_count(fn, *inputs):
    torch._dynamo.reset()
    report = torch._dynamo.explain(fn)(*inputs)
    return int(report.graph_break_count)
'''),
    Alternative('compile_with_pass', 'written from the task text alone: compile with pass right',
                _IMP + '''def compile_with_pass(model, pass_fn):
    def apply_pass(gm, example_inputs):
        transformed = pass_fn(gm)
        return transformed

    return torch.compile(model, backend=apply_pass)
'''),
]
