"""Mutants and alternatives of ex01_tracing."""
from autograder.coursedata.mutants import Alternative, Mutant

MUTANTS = [
    Mutant("node_summary", "skips placeholder and output nodes", '''
def node_summary(gm):
    return [(n.op, n.name) for n in gm.graph.nodes if n.op not in ("placeholder", "output")]
''', hint="placeholder and output nodes count too"),
    Mutant("node_summary", "pairs in the wrong order", '''
def node_summary(gm):
    return [(n.name, n.op) for n in gm.graph.nodes]
''', hint="put node.op first"),
    Mutant("node_summary", "only call_module nodes", '''
def node_summary(gm):
    return [(n.op, n.name) for n in gm.graph.nodes if n.op == "call_module"]
''', hint="every node counts"),
    Mutant("node_summary", "sorted by name instead of graph order", '''
def node_summary(gm):
    return sorted((n.op, n.name) for n in gm.graph.nodes)
''', hint="graph order"),
    Mutant("node_summary", "lists instead of tuples", '''
def node_summary(gm):
    return [[n.op, n.name] for n in gm.graph.nodes]
''', hint="with parentheses"),
    Mutant("node_summary", "prints instead of returning", '''
def node_summary(gm):
    for n in gm.graph.nodes:
        print(n.op, n.name)
''', hint="return the value instead of printing it"),
    Mutant("count_nodes", "ignores op", '''
def count_nodes(gm, op=None):
    return len(gm.graph.nodes)
''', hint="count only nodes whose node.op equals it"),
    Mutant("count_nodes", "forgets placeholders and output when op is None", '''
def count_nodes(gm, op=None):
    return sum(1 for n in gm.graph.nodes if (op is None and n.op not in ("placeholder", "output")) or n.op == op)
''', hint="placeholder and output are nodes too"),
    Mutant("count_nodes", "op=None counts nothing", '''
def count_nodes(gm, op=None):
    return sum(1 for n in gm.graph.nodes if n.op == op)
''', hint="op=None means: count every node"),
    Mutant("count_nodes", "counts modules of the GraphModule instead of nodes", '''
def count_nodes(gm, op=None):
    return len(list(gm.modules())) if op is None else sum(1 for n in gm.graph.nodes if n.op == op)
''', hint="counted"),
    Mutant("count_nodes", "returns a list", '''
def count_nodes(gm, op=None):
    return [n for n in gm.graph.nodes if op is None or n.op == op]
''', hint="expected an int"),
    Mutant("outputs_match", "allclose with default tolerances even when atol == 0", '''
def outputs_match(model, gm, *inputs, atol=0.0):
    with torch.no_grad():
        return torch.allclose(model(*inputs), gm(*inputs), atol=atol)
''', hint="use torch.equal"),
    Mutant("outputs_match", "forgets torch.no_grad()", '''
def outputs_match(model, gm, *inputs, atol=0.0):
    a, b = model(*inputs), gm(*inputs)
    if a.shape != b.shape:
        return False
    return torch.equal(a, b) if atol == 0 else torch.allclose(a, b, rtol=0, atol=atol)
''', hint="torch.no_grad()"),
    Mutant("outputs_match", "ignores shapes, so broadcasting hides a mismatch", '''
def outputs_match(model, gm, *inputs, atol=0.0):
    with torch.no_grad():
        a, b = model(*inputs), gm(*inputs)
    return bool(((a - b).abs() <= atol).all())
''', hint="compare shapes too"),
    Mutant("outputs_match", "returns a tensor of booleans", '''
def outputs_match(model, gm, *inputs, atol=0.0):
    with torch.no_grad():
        return (model(*inputs) - gm(*inputs)).abs().max() <= atol
''', hint="expected a Python bool"),
    Mutant("outputs_match", "always exact, ignores atol", '''
def outputs_match(model, gm, *inputs, atol=0.0):
    with torch.no_grad():
        return torch.equal(model(*inputs), gm(*inputs))
''', hint="torch.allclose"),
    Mutant("outputs_match", "passes only the first input", '''
def outputs_match(model, gm, *inputs, atol=0.0):
    with torch.no_grad():
        a, b = model(inputs[0]), gm(inputs[0])
    return a.shape == b.shape and (torch.equal(a, b) if atol == 0 else torch.allclose(a, b, rtol=0, atol=atol))
''', hint="raised TypeError"),
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
    Alternative("outputs_match", "max absolute difference", '''
def outputs_match(model, gm, *inputs, atol=0.0):
    with torch.no_grad():
        a = model(*inputs)
        b = gm(*inputs)
    if a.shape != b.shape:
        return False
    return bool((a - b).abs().max().item() <= atol)
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
