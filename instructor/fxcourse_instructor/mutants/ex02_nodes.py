"""Mutants and alternatives of ex02_nodes."""
from fxcourse_instructor.mutants import Alternative, Mutant, from_task_text

# Lines of the solution's answer cells that several mutants below replace (each occurs there once).
_CONSUMERS_LINES = ("    nodes = list(gm.graph.nodes)\n"
                    "    by_name = {node.name: node for node in nodes}\n"
                    "    if node_name not in by_name:\n"
                    '        raise KeyError(f"no node named {node_name!r} in this graph")\n'
                    "    users = by_name[node_name].users")
_OP_HISTOGRAM_LINES = ("    counts: dict[str, int] = {}\n"
                       "    for node in gm.graph.nodes:\n"
                       "        counts[node.op] = counts.get(node.op, 0) + 1\n"
                       "    return counts")
_GRAPH_DEPTH_LINES = ("    depth: dict[fx.Node, int] = {}          # edges from some placeholder, for nodes a placeholder reaches\n"
                      "    for node in gm.graph.nodes:              # topological order: inputs are done before their users\n"
                      '        if node.op == "placeholder":\n'
                      "            depth[node] = 0\n"
                      "            continue\n"
                      "        reached = [depth[a] + 1 for a in node.all_input_nodes if a in depth]\n"
                      "        if reached:\n"
                      "            depth[node] = max(reached)\n"
                      '    output = next(node for node in gm.graph.nodes if node.op == "output")\n'
                      "    return depth[output]")
_GRAPH_DEPTH_LINES_2 = ("    depth: dict[fx.Node, int] = {}          # edges from some placeholder, for nodes a placeholder reaches\n"
                        "    for node in gm.graph.nodes:              # topological order: inputs are done before their users\n"
                        '        if node.op == "placeholder":\n'
                        "            depth[node] = 0\n"
                        "            continue")

# the solution's body of consumers, which the wrong answers below replace whole
_CONSUMERS_BODY = ("    nodes = list(gm.graph.nodes)\n"
                   "    by_name = {node.name: node for node in nodes}\n"
                   "    if node_name not in by_name:\n"
                   '        raise KeyError(f"no node named {node_name!r} in this graph")\n'
                   "    users = by_name[node_name].users\n"
                   "    return [node.name for node in nodes if node in users]")

MUTANTS = [
    # ------------------------------------------------------------------------------ op_histogram
    Mutant("op_histogram", "lists all six opcodes, with zeros for the absent ones",
           hint="only the opcodes that occur", edits=(
        ("    counts: dict[str, int] = {}",
         '    counts = {op: 0 for op in ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")}'),)),
    Mutant("op_histogram", "counts only the operations, not placeholder and output",
           hint="placeholder and output nodes count too", edits=(
        ("    for node in gm.graph.nodes:",
         "    for n in gm.graph.nodes:\n"
         '        if n.op not in ("placeholder", "output"):'),
        ("        counts[node.op] = counts.get(node.op, 0) + 1",
         "            counts[n.op] = counts.get(n.op, 0) + 1"),)),
    Mutant("op_histogram", "a hand-written list of opcodes that forgets get_attr", hint="get_attr nodes too", edits=(
        ("    counts: dict[str, int] = {}\n"
         "    for node in gm.graph.nodes:\n"
         "        counts[node.op] = counts.get(node.op, 0) + 1",
         "    counts = {}\n"
         '    for op in ("placeholder", "call_function", "call_method", "call_module", "output"):\n'
         "        k = sum(1 for n in gm.graph.nodes if n.op == op)\n"
         "        if k:\n"
         "            counts[op] = k"),)),
    Mutant("op_histogram", "keys by target instead of opcode", hint="key the dict by node.op", edits=(
        ("    for node in gm.graph.nodes:",
         "    for n in gm.graph.nodes:\n"
         "        key = n.target if isinstance(n.target, str) else n.target.__name__"),
        ("        counts[node.op] = counts.get(node.op, 0) + 1",
         "        counts[key] = counts.get(key, 0) + 1"),)),
    Mutant("op_histogram", "counts submodules for call_module", hint="a module called twice is two nodes", edits=(
        ("    for node in gm.graph.nodes:",
         "    for n in gm.graph.nodes:\n"
         '        if n.op != "call_module":'),
        ("        counts[node.op] = counts.get(node.op, 0) + 1",
         "            counts[n.op] = counts.get(n.op, 0) + 1\n"
         "    subs = [m for name, m in gm.named_modules() if name]\n"
         "    if subs:\n"
         '        counts["call_module"] = len(subs)'),)),
    Mutant("op_histogram", "returns the sorted items, a list", hint="expected a dict", edits=(
        (_OP_HISTOGRAM_LINES,
         "    import collections\n"
         "    return sorted(collections.Counter(n.op for n in gm.graph.nodes).items())"),)),
    Mutant("op_histogram", "prints the histogram", hint="expected a dict", edits=(
        (_OP_HISTOGRAM_LINES,
         "    import collections\n"
         "    print(collections.Counter(n.op for n in gm.graph.nodes))"),)),
    # ---------------------------------------------------------------------------- called_modules
    Mutant("called_modules", "node.name instead of node.target", hint="node.target", edits=(
        ('    return [node.target for node in gm.graph.nodes if node.op == "call_module"]',
         '    return [n.name for n in gm.graph.nodes if n.op == "call_module"]'),)),
    Mutant("called_modules", "removes repeats with a dict", hint="keep repeats", edits=(
        ('    return [node.target for node in gm.graph.nodes if node.op == "call_module"]',
         '    return list(dict.fromkeys(n.target for n in gm.graph.nodes if n.op == "call_module"))'),)),
    Mutant("called_modules", "lists the leaf submodules of gm", hint="not the submodules of gm", edits=(
        ('    return [node.target for node in gm.graph.nodes if node.op == "call_module"]',
         "    return [name for name, m in gm.named_modules() if name and not list(m.children())]"),)),
    Mutant("called_modules", "lists every submodule of gm, containers included",
           hint="not the submodules of gm", edits=(
        ('    return [node.target for node in gm.graph.nodes if node.op == "call_module"]',
         "    return [name for name, _ in gm.named_modules() if name]"),)),
    Mutant("called_modules", "lists the direct children of gm", hint="not the submodules of gm", edits=(
        ('    return [node.target for node in gm.graph.nodes if node.op == "call_module"]',
         "    return [name for name, _ in gm.named_children()]"),)),
    Mutant("called_modules", "sorted names", hint="keep graph order", edits=(
        ('    return [node.target for node in gm.graph.nodes if node.op == "call_module"]',
         '    return sorted(n.target for n in gm.graph.nodes if n.op == "call_module")'),)),
    Mutant("called_modules", "the module objects", hint="not the module object", edits=(
        ('    return [node.target for node in gm.graph.nodes if node.op == "call_module"]',
         '    return [gm.get_submodule(n.target) for n in gm.graph.nodes if n.op == "call_module"]'),)),
    Mutant("called_modules", "the last part of the name", hint="full qualified name", edits=(
        ('    return [node.target for node in gm.graph.nodes if node.op == "call_module"]',
         '    return [n.target.split(".")[-1] for n in gm.graph.nodes if n.op == "call_module"]'),)),
    Mutant("called_modules", "every call_* node", hint="only call_module nodes", edits=(
        ('    return [node.target for node in gm.graph.nodes if node.op == "call_module"]',
         "    return [n.target if isinstance(n.target, str) else n.target.__name__\n"
         '            for n in gm.graph.nodes if n.op.startswith("call_")]'),)),
    # --------------------------------------------------------------------------------- consumers
    Mutant("consumers", "node.users as it is (creation order, not graph order)", hint="graph order", edits=(
        ("    return [node.name for node in nodes if node in users]",
         "    return [user.name for user in users]"),)),
    Mutant("consumers", "scans args, one entry per use", hint="each consumer once", edits=(
        ("    return [node.name for node in nodes if node in users]",
         "    return [node.name for node in nodes for a in node.args if a is by_name[node_name]]"),)),
    Mutant("consumers", "looks only at top-level positional args", hint="keyword arguments",
           not_hints=('the output node is a user',), edits=(
        ("    return [node.name for node in nodes if node in users]",
         "    return [node.name for node in nodes if any(a is by_name[node_name] for a in node.args)]"),)),
    Mutant("consumers", "leaves the output node out", hint="the output node is a user too",
           not_hints=('keyword arguments',), edits=(
        ("    return [node.name for node in nodes if node in users]",
         '    return [node.name for node in nodes if node in users and node.op != "output"]'),)),
    Mutant("consumers", "returns [] for an unknown name", hint="raise KeyError", edits=(
        (_CONSUMERS_BODY,
         "    return [n.name for n in gm.graph.nodes if any(a.name == node_name for a in n.all_input_nodes)]"),)),
    Mutant("consumers", "next() without a default: StopIteration for an unknown name", hint="expected KeyError", edits=(
        (_CONSUMERS_LINES,
         "    node = next(n for n in gm.graph.nodes if n.name == node_name)"),
        ("    return [node.name for node in nodes if node in users]",
         "    return [n.name for n in gm.graph.nodes if n in node.users]"),)),
    Mutant("consumers", "a KeyError that does not say which node", hint="name the node in the message", edits=(
        (_CONSUMERS_LINES,
         "    found = [n for n in gm.graph.nodes if n.name == node_name]\n"
         "    if not found:\n"
         '        raise KeyError("no such node")'),
        ("    return [node.name for node in nodes if node in users]",
         "    return [n.name for n in gm.graph.nodes if n in found[0].users]"),)),
    Mutant("consumers", "looks the node up by target", hint="look nodes up by node.name", edits=(
        (_CONSUMERS_LINES,
         "    found = [n for n in gm.graph.nodes if str(n.target) == node_name]\n"
         "    if not found:\n"
         "        raise KeyError(node_name)"),
        ("    return [node.name for node in nodes if node in users]",
         "    return [n.name for n in gm.graph.nodes if n in found[0].users]"),)),
    Mutant("consumers", "the inputs of the node instead of its users", hint="not the nodes it reads", edits=(
        (_CONSUMERS_BODY,
         "    node = {n.name: n for n in gm.graph.nodes}[node_name]\n"
         "    return [a.name for a in node.all_input_nodes]"),)),
    Mutant("consumers", "Node objects instead of names", hint="user.name", edits=(
        (_CONSUMERS_LINES,
         "    node = {n.name: n for n in gm.graph.nodes}[node_name]"),
        ("    return [node.name for node in nodes if node in users]",
         "    return [n for n in gm.graph.nodes if n in node.users]"),)),
    # ------------------------------------------------------------------------------- graph_depth
    Mutant("graph_depth", "breadth-first search: the shortest path", hint="longest path, not the shortest",
           not_hints=('not only args[0]', 'keyword arguments'), edits=(
        (_GRAPH_DEPTH_LINES,
         '    frontier = [n for n in gm.graph.nodes if n.op == "placeholder"]\n'
         "    seen, steps = set(frontier), 0\n"
         "    while frontier:\n"
         '        if any(n.op == "output" for n in frontier):\n'
         "            return steps\n"
         "        frontier = [u for n in frontier for u in n.users if u not in seen]\n"
         "        seen.update(frontier)\n"
         "        steps += 1\n"
         "    return steps"),)),
    Mutant("graph_depth", "every node without inputs starts a path (the layout of draw_graph)",
           hint="paths start at placeholders only", edits=(
        (_GRAPH_DEPTH_LINES_2,
         "    depth = {}\n"
         "    for n in gm.graph.nodes:"),
        ("        reached = [depth[a] + 1 for a in node.all_input_nodes if a in depth]",
         "        depth[n] = max((depth[a] + 1 for a in n.all_input_nodes), default=0)"),
        ("        if reached:\n"
         "            depth[node] = max(reached)\n"
         '    output = next(node for node in gm.graph.nodes if node.op == "output")\n'
         "    return depth[output]",
         "    return depth[list(gm.graph.nodes)[-1]]"),)),
    Mutant("graph_depth", "starts at the first placeholder only", hint="every placeholder is a start", edits=(
        (_GRAPH_DEPTH_LINES_2,
         "    start = next(iter(gm.graph.nodes))\n"
         "    depth = {start: 0}\n"
         "    for n in gm.graph.nodes:"),
        ("        reached = [depth[a] + 1 for a in node.all_input_nodes if a in depth]",
         "        d = [depth[a] + 1 for a in n.all_input_nodes if a in depth]"),
        ("        if reached:",
         "        if d:"),
        ("            depth[node] = max(reached)",
         "            depth[n] = max(d)"),)),
    Mutant("graph_depth", "the longest path anywhere, not to the output", hint="must end at the output node", edits=(
        ('    output = next(node for node in gm.graph.nodes if node.op == "output")\n'
         "    return depth[output]",
         "    return max(depth.values())"),)),
    Mutant("graph_depth", "walks back from the output along args[0]", hint="not only args[0]",
           not_hints=('not the shortest',), edits=(
        ("    depth: dict[fx.Node, int] = {}          # edges from some placeholder, for nodes a placeholder reaches\n"
         "    for node in gm.graph.nodes:              # topological order: inputs are done before their users",
         "    node = list(gm.graph.nodes)[-1]\n"
         "    steps = 0"),
        ('        if node.op == "placeholder":',
         '    while node.op != "placeholder":'),
        ("            depth[node] = 0\n"
         "            continue\n"
         "        reached = [depth[a] + 1 for a in node.all_input_nodes if a in depth]\n"
         "        if reached:\n"
         "            depth[node] = max(reached)\n"
         '    output = next(node for node in gm.graph.nodes if node.op == "output")\n'
         "    return depth[output]",
         "        node = node.args[0]\n"
         "        steps += 1\n"
         "    return steps"),)),
    Mutant("graph_depth", "counts nodes on the path instead of edges", hint="count edges, not nodes", edits=(
        ("    depth: dict[fx.Node, int] = {}          # edges from some placeholder, for nodes a placeholder reaches\n"
         "    for node in gm.graph.nodes:              # topological order: inputs are done before their users",
         "    depth = {}\n"
         "    for n in gm.graph.nodes:"),
        ('        if node.op == "placeholder":',
         '        if n.op == "placeholder":'),
        ("            depth[node] = 0",
         "            depth[n] = 1"),
        ("        reached = [depth[a] + 1 for a in node.all_input_nodes if a in depth]",
         "        d = [depth[a] + 1 for a in n.all_input_nodes if a in depth]"),
        ("        if reached:",
         "        if d:"),
        ("            depth[node] = max(reached)",
         "            depth[n] = max(d)"),)),
    Mutant("graph_depth", "stops at the last computation, before the output",
           hint="the edge into the output node counts", edits=(
        ('    output = next(node for node in gm.graph.nodes if node.op == "output")\n'
         "    return depth[output]",
         "    out = list(gm.graph.nodes)[-1]\n"
         "    return max(depth[a] for a in out.all_input_nodes)"),)),
    Mutant("graph_depth", "number of nodes minus one", hint="the number of nodes is not the depth", edits=(
        (_GRAPH_DEPTH_LINES,
         "    return len(gm.graph.nodes) - 1"),)),
]

# ------------------------------------------ near misses: right in what a hint says, wrong in another way

MUTANTS += [
    Mutant("op_histogram", "keys by node.op shortened ('function', 'module'): neither node.name nor node.target",
           hint="key the dict by node.op", not_hints=("not by node.name", "not by node.target"), edits=(
        ("        counts[node.op] = counts.get(node.op, 0) + 1",
         '        key = node.op.removeprefix("call_")\n'
         "        counts[key] = counts.get(key, 0) + 1"),)),
    Mutant("called_modules", "only call_module nodes, but skips modules without parameters (nn.ReLU)",
           hint="missing ['act']", not_hints=("only call_module nodes", "not the submodules of gm"), edits=(
        ('    return [node.target for node in gm.graph.nodes if node.op == "call_module"]',
         "    return [node.target for node in gm.graph.nodes\n"
         '            if node.op == "call_module" and any(True for _ in gm.get_submodule(node.target).parameters())]'),)),
    Mutant("consumers", "returns None (prints nothing) for an unknown name", hint="instead of returning None",
           not_hints=("instead of printing",), edits=(
        ('        raise KeyError(f"no node named {node_name!r} in this graph")', "        return None"),)),
    Mutant("graph_depth", "the longest path, over every Node of node.args, but not kwargs or lists",
           hint="keyword arguments", not_hints=("not the shortest", "not only args[0]"), edits=(
        ("        reached = [depth[a] + 1 for a in node.all_input_nodes if a in depth]",
         "        reached = [depth[a] + 1 for a in node.args if isinstance(a, fx.Node) and a in depth]"),)),
]

# ------------------------------------------ wrong answers that once had full marks: a case the checks lacked

MUTANTS += [
    Mutant("op_histogram", "a get_attr whose target starts at a submodule ('fc.bias') counted as call_module",
           hint="stays a get_attr when its target runs through a submodule", edits=(
        ("        counts[node.op] = counts.get(node.op, 0) + 1",
         "        op = node.op\n"
         '        if op == "get_attr" and isinstance(getattr(gm, str(node.target).split(".")[0], None), nn.Module):\n'
         '            op = "call_module"\n'
         "        counts[op] = counts.get(op, 0) + 1"),)),
    Mutant("called_modules", "leaves out the module calls whose result nobody uses",
           hint="whose result nobody uses still calls its module", edits=(
        ('    return [node.target for node in gm.graph.nodes if node.op == "call_module"]',
         '    return [n.target for n in gm.graph.nodes if n.op == "call_module" and n.users]'),)),
]

ALTERNATIVES = [
    Alternative("op_histogram", "collections.Counter", '''
def op_histogram(gm):
    import collections
    return collections.Counter(node.op for node in gm.graph.nodes)
'''),
    Alternative("op_histogram", "count per opcode, then drop the zeros", '''
def op_histogram(gm):
    ops = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")
    counts = {op: sum(1 for n in gm.graph.nodes if n.op == op) for op in ops}
    return {op: k for op, k in counts.items() if k}
'''),
    Alternative("called_modules", "find_nodes, already in graph order", '''
def called_modules(gm):
    return [str(n.target) for n in gm.graph.find_nodes(op="call_module")]
'''),
    Alternative("called_modules", "a loop with append", '''
def called_modules(gm):
    names = []
    for node in gm.graph.nodes:
        if node.op == "call_module":
            names.append(node.target)
    return names
'''),
    Alternative("consumers", "all_input_nodes of every later node", '''
def consumers(gm, node_name):
    names = [n.name for n in gm.graph.nodes]
    if node_name not in names:
        raise KeyError(f"{node_name!r} is not a node of this graph; its nodes are {names}")
    return [n.name for n in gm.graph.nodes if any(a.name == node_name for a in n.all_input_nodes)]
'''),
    Alternative("consumers", "node.users sorted by position", '''
def consumers(gm, node_name):
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    node = next((n for n in order if n.name == node_name), None)
    if node is None:
        raise KeyError(node_name)
    return [u.name for u in sorted(node.users, key=order.get)]
'''),
    Alternative("graph_depth", "memoised recursion from the output", '''
def graph_depth(gm):
    import functools

    @functools.lru_cache(maxsize=None)
    def longest_from_input(node):
        # edges from some placeholder to node, or None when no placeholder reaches it
        if node.op == "placeholder":
            return 0
        best = None
        for a in node.all_input_nodes:
            d = longest_from_input(a)
            if d is not None and (best is None or d + 1 > best):
                best = d + 1
        return best

    return longest_from_input(next(n for n in gm.graph.nodes if n.op == "output"))
'''),
    Alternative("graph_depth", "forward relaxation over users", '''
def graph_depth(gm):
    dist = {n: 0 for n in gm.graph.nodes if n.op == "placeholder"}
    for n in gm.graph.nodes:          # graph order is a topological order
        if n in dist:
            for u in n.users:
                dist[u] = max(dist.get(u, 0), dist[n] + 1)
    return dist[list(gm.graph.nodes)[-1]]
'''),
]

# ------------------------------------------- right answers written with another torch.fx mechanism

ALTERNATIVES += [
    Alternative('op_histogram', 'Graph.find_nodes for five opcodes, call_function nodes are the rest', '''
def op_histogram(gm):
    ops = ("placeholder", "get_attr", "call_method", "call_module", "output")
    counts = {op: len(gm.graph.find_nodes(op=op)) for op in ops}
    counts["call_function"] = len(gm.graph.nodes) - sum(counts.values())
    return {op: n for op, n in counts.items() if n}
'''),
    Alternative('graph_depth', 'an fx.Interpreter whose values are depths instead of tensors', '''
def graph_depth(gm):
    class Depth(fx.Interpreter):
        def run_node(self, n):
            if n.op == "placeholder":
                return 0
            reached = [self.env[a] + 1 for a in n.all_input_nodes if self.env[a] is not None]
            return max(reached) if reached else None
    placeholders = gm.graph.find_nodes(op="placeholder")
    return Depth(gm).run(*[None] * len(placeholders))
'''),
]
ALTERNATIVES += [
    Alternative("consumers", "node_copy into a scratch graph: its arg_transform sees every use, nested ones too", '''
def consumers(gm, node_name):
    nodes = {n.name: n for n in gm.graph.nodes}
    if node_name not in nodes:
        raise KeyError(f"no node named {node_name!r}")
    target, scratch, env, readers = nodes[node_name], fx.Graph(), {}, []

    def read(arg, node):
        if arg is target and node not in readers:
            readers.append(node)
        return env[arg]

    for n in gm.graph.nodes:
        env[n] = scratch.node_copy(n, lambda arg, n=n: read(arg, n))
    return [n.name for n in readers]
'''),
]

# --------------------- wrong and right answers written from the task text alone, by someone who had not read the checks

_WRONG, _RIGHT = from_task_text("ex02_nodes")
MUTANTS += _WRONG
ALTERNATIVES += _RIGHT
