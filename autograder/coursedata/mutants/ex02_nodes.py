"""Mutants and alternatives of ex02_nodes."""
from autograder.coursedata.mutants import Alternative, Mutant

MUTANTS = [
    # ------------------------------------------------------------------------------ op_histogram
    Mutant("op_histogram", "lists all six opcodes, with zeros for the absent ones", '''
def op_histogram(gm):
    counts = {op: 0 for op in ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")}
    for n in gm.graph.nodes:
        counts[n.op] += 1
    return counts
''', hint="only the opcodes that occur"),
    Mutant("op_histogram", "counts only the operations, not placeholder and output", '''
def op_histogram(gm):
    counts = {}
    for n in gm.graph.nodes:
        if n.op not in ("placeholder", "output"):
            counts[n.op] = counts.get(n.op, 0) + 1
    return counts
''', hint="placeholder and output nodes count too"),
    Mutant("op_histogram", "a hand-written list of opcodes that forgets get_attr", '''
def op_histogram(gm):
    counts = {}
    for op in ("placeholder", "call_function", "call_method", "call_module", "output"):
        k = sum(1 for n in gm.graph.nodes if n.op == op)
        if k:
            counts[op] = k
    return counts
''', hint="get_attr nodes too"),
    Mutant("op_histogram", "keys by target instead of opcode", '''
def op_histogram(gm):
    counts = {}
    for n in gm.graph.nodes:
        key = n.target if isinstance(n.target, str) else n.target.__name__
        counts[key] = counts.get(key, 0) + 1
    return counts
''', hint="key the dict by node.op"),
    Mutant("op_histogram", "counts submodules for call_module", '''
def op_histogram(gm):
    counts = {}
    for n in gm.graph.nodes:
        if n.op != "call_module":
            counts[n.op] = counts.get(n.op, 0) + 1
    subs = [m for name, m in gm.named_modules() if name]
    if subs:
        counts["call_module"] = len(subs)
    return counts
''', hint="a module called twice is two nodes"),
    Mutant("op_histogram", "returns the sorted items, a list", '''
def op_histogram(gm):
    import collections
    return sorted(collections.Counter(n.op for n in gm.graph.nodes).items())
''', hint="expected a dict"),
    Mutant("op_histogram", "prints the histogram", '''
def op_histogram(gm):
    import collections
    print(collections.Counter(n.op for n in gm.graph.nodes))
''', hint="expected a dict"),
    # ---------------------------------------------------------------------------- called_modules
    Mutant("called_modules", "node.name instead of node.target", '''
def called_modules(gm):
    return [n.name for n in gm.graph.nodes if n.op == "call_module"]
''', hint="node.target"),
    Mutant("called_modules", "removes repeats with a dict", '''
def called_modules(gm):
    return list(dict.fromkeys(n.target for n in gm.graph.nodes if n.op == "call_module"))
''', hint="keep repeats"),
    Mutant("called_modules", "lists the leaf submodules of gm", '''
def called_modules(gm):
    return [name for name, m in gm.named_modules() if name and not list(m.children())]
''', hint="not the submodules of gm"),
    Mutant("called_modules", "lists every submodule of gm, containers included", '''
def called_modules(gm):
    return [name for name, _ in gm.named_modules() if name]
''', hint="not the submodules of gm"),
    Mutant("called_modules", "lists the direct children of gm", '''
def called_modules(gm):
    return [name for name, _ in gm.named_children()]
''', hint="not the submodules of gm"),
    Mutant("called_modules", "sorted names", '''
def called_modules(gm):
    return sorted(n.target for n in gm.graph.nodes if n.op == "call_module")
''', hint="keep graph order"),
    Mutant("called_modules", "the module objects", '''
def called_modules(gm):
    return [gm.get_submodule(n.target) for n in gm.graph.nodes if n.op == "call_module"]
''', hint="not the module object"),
    Mutant("called_modules", "the last part of the name", '''
def called_modules(gm):
    return [n.target.split(".")[-1] for n in gm.graph.nodes if n.op == "call_module"]
''', hint="full qualified name"),
    Mutant("called_modules", "every call_* node", '''
def called_modules(gm):
    return [n.target if isinstance(n.target, str) else n.target.__name__
            for n in gm.graph.nodes if n.op.startswith("call_")]
''', hint="only call_module nodes"),
    # --------------------------------------------------------------------------------- consumers
    Mutant("consumers", "node.users as it is (creation order, not graph order)", '''
def consumers(gm, node_name):
    for n in gm.graph.nodes:
        if n.name == node_name:
            return [u.name for u in n.users]
    raise KeyError(node_name)
''', hint="graph order"),
    Mutant("consumers", "scans args, one entry per use", '''
def consumers(gm, node_name):
    if node_name not in {n.name for n in gm.graph.nodes}:
        raise KeyError(node_name)
    return [n.name for n in gm.graph.nodes for a in n.args if isinstance(a, fx.Node) and a.name == node_name]
''', hint="each consumer once"),
    Mutant("consumers", "looks only at top-level positional args", '''
def consumers(gm, node_name):
    if node_name not in {n.name for n in gm.graph.nodes}:
        raise KeyError(node_name)
    return [n.name for n in gm.graph.nodes
            if any(isinstance(a, fx.Node) and a.name == node_name for a in n.args)]
''', hint="keyword arguments"),
    Mutant("consumers", "leaves the output node out", '''
def consumers(gm, node_name):
    node = {n.name: n for n in gm.graph.nodes}[node_name]
    return [n.name for n in gm.graph.nodes if n in node.users and n.op != "output"]
''', hint="the output node is a user too"),
    Mutant("consumers", "returns [] for an unknown name", '''
def consumers(gm, node_name):
    return [n.name for n in gm.graph.nodes if any(a.name == node_name for a in n.all_input_nodes)]
''', hint="raise KeyError"),
    Mutant("consumers", "next() without a default: StopIteration for an unknown name", '''
def consumers(gm, node_name):
    node = next(n for n in gm.graph.nodes if n.name == node_name)
    return [n.name for n in gm.graph.nodes if n in node.users]
''', hint="expected KeyError"),
    Mutant("consumers", "a KeyError that does not say which node", '''
def consumers(gm, node_name):
    found = [n for n in gm.graph.nodes if n.name == node_name]
    if not found:
        raise KeyError("no such node")
    return [n.name for n in gm.graph.nodes if n in found[0].users]
''', hint="name the node in the message"),
    Mutant("consumers", "looks the node up by target", '''
def consumers(gm, node_name):
    found = [n for n in gm.graph.nodes if str(n.target) == node_name]
    if not found:
        raise KeyError(node_name)
    return [n.name for n in gm.graph.nodes if n in found[0].users]
''', hint="look nodes up by node.name"),
    Mutant("consumers", "the inputs of the node instead of its users", '''
def consumers(gm, node_name):
    node = {n.name: n for n in gm.graph.nodes}[node_name]
    return [a.name for a in node.all_input_nodes]
''', hint="not the nodes it reads"),
    Mutant("consumers", "Node objects instead of names", '''
def consumers(gm, node_name):
    node = {n.name: n for n in gm.graph.nodes}[node_name]
    return [n for n in gm.graph.nodes if n in node.users]
''', hint="user.name"),
    # ------------------------------------------------------------------------------- graph_depth
    Mutant("graph_depth", "breadth-first search: the shortest path", '''
def graph_depth(gm):
    frontier = [n for n in gm.graph.nodes if n.op == "placeholder"]
    seen, steps = set(frontier), 0
    while frontier:
        if any(n.op == "output" for n in frontier):
            return steps
        frontier = [u for n in frontier for u in n.users if u not in seen]
        seen.update(frontier)
        steps += 1
    return steps
''', hint="longest path, not the shortest"),
    Mutant("graph_depth", "every node without inputs starts a path (the layout of draw_graph)", '''
def graph_depth(gm):
    depth = {}
    for n in gm.graph.nodes:
        depth[n] = max((depth[a] + 1 for a in n.all_input_nodes), default=0)
    return depth[list(gm.graph.nodes)[-1]]
''', hint="paths start at placeholders only"),
    Mutant("graph_depth", "starts at the first placeholder only", '''
def graph_depth(gm):
    start = next(iter(gm.graph.nodes))
    depth = {start: 0}
    for n in gm.graph.nodes:
        d = [depth[a] + 1 for a in n.all_input_nodes if a in depth]
        if d:
            depth[n] = max(d)
    return depth[list(gm.graph.nodes)[-1]]
''', hint="every placeholder is a start"),
    Mutant("graph_depth", "the longest path anywhere, not to the output", '''
def graph_depth(gm):
    depth = {}
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            depth[n] = 0
        d = [depth[a] + 1 for a in n.all_input_nodes if a in depth]
        if d:
            depth[n] = max(d)
    return max(depth.values())
''', hint="must end at the output node"),
    Mutant("graph_depth", "walks back from the output along args[0]", '''
def graph_depth(gm):
    node = list(gm.graph.nodes)[-1]
    steps = 0
    while node.op != "placeholder":
        node = node.args[0]
        steps += 1
    return steps
''', hint="not only args[0]"),
    Mutant("graph_depth", "counts nodes on the path instead of edges", '''
def graph_depth(gm):
    depth = {}
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            depth[n] = 1
        d = [depth[a] + 1 for a in n.all_input_nodes if a in depth]
        if d:
            depth[n] = max(d)
    return depth[list(gm.graph.nodes)[-1]]
''', hint="count edges, not nodes"),
    Mutant("graph_depth", "stops at the last computation, before the output", '''
def graph_depth(gm):
    depth = {}
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            depth[n] = 0
        d = [depth[a] + 1 for a in n.all_input_nodes if a in depth]
        if d:
            depth[n] = max(d)
    out = list(gm.graph.nodes)[-1]
    return max(depth[a] for a in out.all_input_nodes)
''', hint="the edge into the output node counts"),
    Mutant("graph_depth", "number of nodes minus one", '''
def graph_depth(gm):
    return len(gm.graph.nodes) - 1
''', hint="the number of nodes is not the depth"),
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
