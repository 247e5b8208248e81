"""Mutants and alternatives of ex01_tracing."""
from fxcourse_instructor.mutants import Alternative, Mutant, from_task_text

# the solution's comparison, which the one-line wrong answers below replace
_COMPARE = ("        expected = model(*inputs)\n"
            "        got = gm(*inputs)\n"
            "    if expected.shape != got.shape:\n"
            "        return False\n"
            "    if atol == 0:\n"
            "        return torch.equal(expected, got)\n"
            "    return torch.allclose(expected, got, rtol=0.0, atol=atol)")

MUTANTS = [
    Mutant("node_summary", "skips placeholder and output nodes", hint="placeholder and output nodes count too", edits=(
        ("    return [(node.op, node.name) for node in gm.graph.nodes]",
         '    return [(n.op, n.name) for n in gm.graph.nodes if n.op not in ("placeholder", "output")]'),)),
    Mutant("node_summary", "pairs in the wrong order", hint="put node.op first", edits=(
        ("    return [(node.op, node.name) for node in gm.graph.nodes]",
         "    return [(n.name, n.op) for n in gm.graph.nodes]"),)),
    Mutant("node_summary", "only call_module nodes", hint="every node counts", edits=(
        ("    return [(node.op, node.name) for node in gm.graph.nodes]",
         '    return [(n.op, n.name) for n in gm.graph.nodes if n.op == "call_module"]'),)),
    Mutant("node_summary", "sorted by name instead of graph order", hint="graph order", edits=(
        ("    return [(node.op, node.name) for node in gm.graph.nodes]",
         "    return sorted((n.op, n.name) for n in gm.graph.nodes)"),)),
    Mutant("node_summary", "lists instead of tuples", hint="with parentheses", edits=(
        ("    return [(node.op, node.name) for node in gm.graph.nodes]",
         "    return [[n.op, n.name] for n in gm.graph.nodes]"),)),
    Mutant("node_summary", "prints instead of returning", hint="return the value instead of printing it", edits=(
        ("    return [(node.op, node.name) for node in gm.graph.nodes]",
         "    for n in gm.graph.nodes:\n"
         "        print(n.op, n.name)"),)),
    Mutant("count_nodes", "ignores op", hint="count only nodes whose node.op equals it", edits=(
        ("    return sum(1 for node in gm.graph.nodes if op is None or node.op == op)",
         "    return len(gm.graph.nodes)"),)),
    Mutant("count_nodes", "forgets placeholders and output when op is None",
           hint="placeholder and output are nodes", not_hints=('not the modules of gm',), edits=(
        ("    return sum(1 for node in gm.graph.nodes if op is None or node.op == op)",
         '    return sum(1 for n in gm.graph.nodes if (op is None and n.op not in ("placeholder", "output")) or n.op == op)'),)),
    Mutant("count_nodes", "op=None counts nothing", hint="op=None means: count every node", edits=(
        ("    return sum(1 for node in gm.graph.nodes if op is None or node.op == op)",
         "    return sum(1 for n in gm.graph.nodes if n.op == op)"),)),
    Mutant("count_nodes", "counts modules of the GraphModule instead of nodes", hint="not the modules of gm",
           not_hints=("placeholder and output",), edits=(
        ("    return sum(1 for node in gm.graph.nodes if op is None or node.op == op)",
         "    return len(list(gm.modules())) if op is None else sum(1 for n in gm.graph.nodes if n.op == op)"),)),
    Mutant("count_nodes", "returns a list", hint="expected an int", edits=(
        ("    return sum(1 for node in gm.graph.nodes if op is None or node.op == op)",
         "    return [n for n in gm.graph.nodes if op is None or n.op == op]"),)),
    Mutant("outputs_match", "allclose with default tolerances even when atol == 0", hint="use torch.equal", edits=(
        (_COMPARE,
         "        return torch.allclose(model(*inputs), gm(*inputs), atol=atol)"),)),
    Mutant("outputs_match", "forgets torch.no_grad()", hint="torch.no_grad()",
           not_hints=('use torch.equal', 'compare shapes'), edits=(
        ("    with torch.no_grad():\n"
         "        expected = model(*inputs)\n"
         "        got = gm(*inputs)",
         "    a, b = model(*inputs), gm(*inputs)"),
        ("    if expected.shape != got.shape:",
         "    if a.shape != b.shape:"),
        ("    if atol == 0:\n"
         "        return torch.equal(expected, got)\n"
         "    return torch.allclose(expected, got, rtol=0.0, atol=atol)",
         "    return torch.equal(a, b) if atol == 0 else torch.allclose(a, b, rtol=0, atol=atol)"),)),
    Mutant("outputs_match", "ignores shapes, so broadcasting hides a mismatch", hint="compare shapes too", edits=(
        (_COMPARE,
         "        a, b = model(*inputs), gm(*inputs)\n"
         "    return bool(((a - b).abs() <= atol).all())"),)),
    Mutant("outputs_match", "returns a tensor of booleans", hint="expected a Python bool", edits=(
        (_COMPARE,
         "        return (model(*inputs) - gm(*inputs)).abs().max() <= atol"),)),
    Mutant("outputs_match", "always exact, ignores atol", hint="torch.allclose",
           not_hints=('no_grad', 'atol defaults to 0.0'), edits=(
        (_COMPARE,
         "        return torch.equal(model(*inputs), gm(*inputs))"),)),
    Mutant("outputs_match", "passes only the first input", hint="raised TypeError", edits=(
        (_COMPARE,
         "        a, b = model(inputs[0]), gm(inputs[0])\n"
         "    return a.shape == b.shape and (torch.equal(a, b) if atol == 0 else torch.allclose(a, b, rtol=0, atol=atol))"),)),
]

# ------------------------------------------ near misses: right in what a hint says, wrong in another way

MUTANTS += [
    Mutant("node_summary", "keeps placeholder and output but skips the call_module nodes",
           hint="call_module nodes too", not_hints=("placeholder and output",), edits=(
        ("    return [(node.op, node.name) for node in gm.graph.nodes]",
         '    return [(n.op, n.name) for n in gm.graph.nodes if n.op != "call_module"]'),)),
    Mutant("count_nodes", "tests `op is None`, but matches with startswith, so op='' counts every node",
           hint="count only nodes whose node.op equals it", not_hints=("not `not op`",), edits=(
        ("node.op == op)", "node.op.startswith(op))"),)),
    Mutant("outputs_match", "torch.equal when atol == 0, but the signature's default is atol=1e-6",
           hint="atol defaults to 0.0", not_hints=("use torch.equal",), edits=(
        ("*inputs: torch.Tensor, atol: float = 0.0)", "*inputs: torch.Tensor, atol: float = 1e-6)"),)),
]

# ------------------------------------------ wrong answers that once had full marks: a case the checks lacked

MUTANTS += [
    Mutant("node_summary", "a placeholder's target for its name (input, where FX named the node input_1)",
           hint="is its target", edits=(
        ("    return [(node.op, node.name) for node in gm.graph.nodes]",
         '    return [(n.op, n.target if n.op == "placeholder" else n.name) for n in gm.graph.nodes]'),)),
    Mutant("node_summary", "writes ('output', 'output') for the output node, whatever its name",
           hint="named 'output_1'", edits=(
        ("    return [(node.op, node.name) for node in gm.graph.nodes]",
         '    return [(n.op, n.name) for n in gm.graph.nodes if n.op != "output"] + [("output", "output")]'),)),
    Mutant("node_summary", "lists the nodes of a new trace of gm, which names them afresh",
           hint="without tracing gm again", edits=(
        ("    return [(node.op, node.name) for node in gm.graph.nodes]",
         "    return [(n.op, n.name) for n in fx.symbolic_trace(gm).graph.nodes]"),)),
    Mutant("count_nodes", "op matched as a part of node.op, so op='call' counts every call node",
           hint="no opcode is 'call'", not_hints=("not `not op`",), edits=(
        ("node.op == op)", "(op and op in node.op))"),)),
    Mutant("count_nodes", "op compared without case, so 'Placeholder' counts the placeholders",
           hint="compare op with node.op as it is", edits=(
        ("node.op == op)", "node.op.lower() == op.lower())"),)),
    Mutant("count_nodes", "op stripped of spaces, so ' placeholder' counts the placeholders",
           hint="compare op with node.op as it is", edits=(
        ("node.op == op)", "node.op == op.strip())"),)),
    Mutant("outputs_match", "the mean absolute difference within atol, so one far-off column passes",
           hint="a mean (or a sum) of the differences hides one far off", edits=(
        (_COMPARE,
         "        a, b = model(*inputs), gm(*inputs)\n"
         "    return a.shape == b.shape and bool((a - b).abs().mean() <= atol)"),)),
    Mutant("outputs_match", "|a - b| < atol, so a difference of exactly atol fails",
           hint="not <", edits=(
        ("    return torch.allclose(expected, got, rtol=0.0, atol=atol)",
         "    return bool(((expected - got).abs() < atol).all())"),)),
    Mutant("outputs_match", "atol floored at 1e-7, so atol=0 is not exact",
           hint="atol == 0 means no tolerance at all", edits=(
        ("    if atol == 0:\n"
         "        return torch.equal(expected, got)\n"
         "    return torch.allclose(expected, got, rtol=0.0, atol=atol)",
         "    return torch.allclose(expected, got, rtol=0.0, atol=max(atol, 1e-7))"),)),
    Mutant("outputs_match", "the max absolute difference, also when atol == 0: -inf - -inf is nan",
           hint="-inf - (-inf) is nan", edits=(
        ("    if atol == 0:\n"
         "        return torch.equal(expected, got)\n"
         "    return torch.allclose(expected, got, rtol=0.0, atol=atol)",
         "    return bool((expected - got).abs().max().item() <= atol)"),)),
    Mutant("outputs_match", "compares numel and dim instead of shapes: (1, 4) and (4, 1) broadcast",
           hint="compare shapes first", edits=(
        ("    if expected.shape != got.shape:",
         "    if expected.numel() != got.numel() or expected.dim() != got.dim():"),)),
    Mutant("outputs_match", "compares float64 copies, which drop a complex output's imaginary part",
           hint="drops their imaginary parts", edits=(
        ("        expected = model(*inputs)\n"
         "        got = gm(*inputs)",
         "        expected = model(*inputs).double()\n"
         "        got = gm(*inputs).double()"),)),
]

ALTERNATIVES = [
    Alternative("node_summary", "a loop with append", '''
def node_summary(gm):
    rows = []
    for node in gm.graph.nodes:
        rows.append((node.op, node.name))
    return rows
'''),
    Alternative("count_nodes", "len of a filtered list", '''
def count_nodes(gm, op=None):
    nodes = list(gm.graph.nodes)
    return len(nodes) if op is None else len([n for n in nodes if n.op == op])
'''),
    Alternative("outputs_match", "every absolute difference within atol, torch.equal when atol == 0", '''
def outputs_match(model, gm, *inputs, atol=0.0):
    with torch.no_grad():
        a = model(*inputs)
        b = gm(*inputs)
    if a.shape != b.shape:
        return False
    if atol == 0:
        return torch.equal(a, b)
    return bool(((a - b).abs() <= atol).all())
'''),
]

# ------------------------------------------- right answers written with another torch.fx mechanism

ALTERNATIVES += [
    Alternative('node_summary', 'Graph.find_nodes per opcode (call_function: the rest), back in graph order', '''
def node_summary(gm):
    order = {node: i for i, node in enumerate(gm.graph.nodes)}
    found = {n for op in ("placeholder", "get_attr", "call_method", "call_module", "output")
             for n in gm.graph.find_nodes(op=op)}
    rest = [n for n in order if n not in found]          # find_nodes needs a target for call_function
    return [(n.op, n.name) for n in sorted([*found, *rest], key=order.__getitem__)]
'''),
    Alternative('count_nodes', 'Graph.find_nodes(op=...); call_function nodes are what the other opcodes leave', '''
def count_nodes(gm, op=None):
    if op is None:
        return len(gm.graph.nodes)
    if op == "call_function":   # find_nodes needs a target for call_function
        others = ("placeholder", "get_attr", "call_method", "call_module", "output")
        return len(gm.graph.nodes) - sum(len(gm.graph.find_nodes(op=o)) for o in others)
    return len(gm.graph.find_nodes(op=op))
'''),
    Alternative('outputs_match', 'runs the graph with an fx.Interpreter', '''
def outputs_match(model, gm, *inputs, atol=0.0):
    with torch.no_grad():
        expected = model(*inputs)
        got = fx.Interpreter(gm).run(*inputs)
    if expected.shape != got.shape:
        return False
    return bool((expected - got).abs().max() <= atol) if atol else torch.equal(expected, got)
'''),
]

# --------------------- wrong and right answers written from the task text alone, by someone who had not read the checks

_WRONG, _RIGHT = from_task_text("ex01_tracing")
MUTANTS += _WRONG
ALTERNATIVES += _RIGHT
