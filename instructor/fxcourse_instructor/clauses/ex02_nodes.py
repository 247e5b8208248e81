"""Clauses of ex02_nodes: op_histogram, called_modules, consumers, graph_depth."""
from fxcourse_instructor.clauses import Clause

CLAUSES = [
    Clause("op_histogram", "only opcodes present are keys (no zeros)", ("TinyNet", "a block list used twice"),
           mutant="lists all six opcodes, with zeros for the absent ones"),
    Clause("op_histogram", "placeholder and output count", ("TinyNet",
                                                            "a model with all six opcodes and enc.0 called twice"),
           mutant="counts only the operations, not placeholder and output"),
    Clause("op_histogram", "get_attr counts", ("a model with a parameter chain",),
           mutant="a hand-written list of opcodes that forgets get_attr"),
    Clause("op_histogram", "nodes, not submodules: a module called twice counts twice",
           ("a block list used twice",), mutant="counts submodules for call_module"),
    Clause("op_histogram", "only read the graph: dead nodes count, the graph is not cleaned",
           ("an unused chain: dead nodes count too",), mutant="dce mutates", hint="eliminate_dead_code"),
    Clause("op_histogram", "returns a dict", ("TinyNet", "a model with all six opcodes and enc.0 called twice"),
           mutant="returns the sorted items, a list"),
    Clause("op_histogram", "gm is left as it was", ("TinyNet", "a model with all six opcodes and enc.0 called twice"),
           patch=("    counts: dict[str, int] = {}", "    gm.graph.eliminate_dead_code()\n    gm.recompile()\n"
                  "    next(iter(gm.parameters())).data.zero_()\n    counts: dict[str, int] = {}"),
           hint="must leave its inputs"),
    Clause("called_modules", "qualified targets, not node names", ("call_module nodes named unlike",),
           mutant="node.name instead of node.target"),
    Clause("called_modules", "repeats kept", ("modules registered a, b but called b, a, b",),
           mutant="removes repeats with a dict"),
    Clause("called_modules", "graph order", ("modules registered a, b but called b, a, b",), mutant="sorted names"),
    Clause("called_modules", "only modules the graph calls", ("a registered submodule that the graph never calls",),
           mutant="lists the leaf submodules of gm"),
    Clause("consumers", "graph order, not creation order", ("users created out of graph order",),
           mutant="node.users as it is (creation order, not graph order)"),
    Clause("consumers", "each user once", ("a node used twice by one mul",), mutant="scans args, one entry per use"),
    Clause("consumers", "uses inside lists and kwargs count", ("a node used inside a list and as a keyword",),
           mutant="looks only at top-level positional args"),
    Clause("consumers", "the output node is a user", ("a node that is also returned",),
           mutant="leaves the output node out"),
    Clause("consumers", "an unknown name raises KeyError naming it", ("TinyNet, unknown node 'fc3'",
                                                                      "'enc.0' is a target"),
           mutant="returns [] for an unknown name"),
    Clause("consumers", "nodes are looked up by name, not target", ("'enc.0' is a target",),
           mutant="looks the node up by target"),
    Clause("graph_depth", "edges, not nodes", ("TinyNet", "a skip connection"),
           mutant="counts nodes on the path instead of edges"),
    Clause("graph_depth", "the longest path, not the shortest", ("a skip connection",),
           mutant="breadth-first search: the shortest path"),
    Clause("graph_depth", "paths start at placeholders only", ("a long chain starting at a parameter",),
           mutant="every node without inputs starts a path (the layout of draw_graph)"),
    Clause("graph_depth", "every placeholder starts a path", ("two inputs, the second one deeper",),
           mutant="starts at the first placeholder only"),
    Clause("graph_depth", "paths end at the output node", ("an unused chain longer than the live path",),
           mutant="the longest path anywhere, not to the output"),
    Clause("graph_depth", "every input of a node, not only args[0]", ("the short branch is args[0]",
                                                                         "args[0] leads neither"),
           mutant="walks back from the output along args[0]"),
    Clause("graph_depth", "inputs given as keyword arguments are inputs too", ("the longest branch is a keyword",),
           mutant="the longest path, over every Node of node.args, but not kwargs or lists"),
]

# Rules the task-text audit found with no clause.
CLAUSES += [
    Clause("called_modules", "[] when the graph calls no module", ("a model without submodules",),
           patch=("    return [node.target for node in gm.graph.nodes if node.op == \"call_module\"]",
                  "    return [node.target for node in gm.graph.nodes if node.op == \"call_module\"] or None")),
    Clause("consumers", "a node nobody uses has no consumers: []", ("a dead node",),
           patch=("    users = by_name[node_name].users\n",
                  "    users = by_name[node_name].users\n    if not users:\n"
                  "        raise ValueError(f\"{node_name} has no users\")\n")),
    Clause("called_modules", "gm is left as it was", ("TinyNet", "a ModuleList applied in a loop"),
           patch=("    return [", "    for p in gm.parameters():\n        p.data.add_(1.0)\n    return ["),
           hint="must leave its inputs"),
    Clause("consumers", "gm is left as it was", ("TinyNet, node 'fc1'", "a node used twice by one mul"),
           patch=("    nodes = list(", "    for p in gm.parameters():\n        p.data.add_(1.0)\n    nodes = list("),
           hint="must leave its inputs"),
    Clause("graph_depth", "gm is left as it was", ("TinyNet", "a skip connection"),
           patch=("    depth: dict", "    for p in gm.parameters():\n        p.data.add_(1.0)\n    depth: dict"),
           hint="must leave its inputs"),
]

# Rules that wrong answers once with full marks broke, each with the hidden case that now catches it.
CLAUSES += [
    Clause("op_histogram", "a node counts under its own opcode: a get_attr of a submodule's tensor stays a get_attr",
           ("a Linear's bias read as a tensor",),
           mutant="a get_attr whose target starts at a submodule ('fc.bias') counted as call_module",
           hint="stays a get_attr"),
    Clause("called_modules", "every call_module node, whether its result is used or not",
           ("a module called for nothing",), mutant="leaves out the module calls whose result nobody uses",
           hint="nobody uses still calls its module"),
]

_READ_ONLY = (("op_histogram", "gm is left as it was"),
              ("op_histogram", "only read the graph: dead nodes count, the graph is not cleaned"),
              ("called_modules", "gm is left as it was"), ("consumers", "gm is left as it was"),
              ("graph_depth", "gm is left as it was"))

# The task text, sentence by sentence: the rules of the clauses that check it, or why it is no rule.
TASK_TEXT = {
    "*": {
        "Lesson 02 took a graph apart node by node: the six opcodes, `name`, `target`, `args`, `users` and "
        "`all_input_nodes`.": "what the lesson taught, the motivation",
        "Here you turn that reading into four small analysis tools.": "what the notebook holds",
        "None of them changes the graph; each one answers a question about it.": _READ_ONLY,
        "The grader checks that too: after each call, `gm`, its graph, its parameters and the mode of every "
        "submodule are as they were.": _READ_ONLY,
        "You will be able to:": "introduces the list of what the functions do",
        "count the nodes of a graph per opcode;": "a summary of op_histogram, whose rules its section states",
        "list which submodules a graph calls, by their qualified names, in the order it calls them;":
            "a summary of called_modules, whose rules its section states",
        "find the consumers of a node;": "a summary of consumers, whose rules its section states",
        "measure how deep a graph is (its longest path from an input to the output).":
            "a summary of graph_depth, whose rules its section states",
        "The table above is the traced `ThreeReluNet`: ReLU as a function, a module and a method, and a skip "
        "connection that adds the input `x` back in.": "describes the example printed above",
        "Use it (and `TinyNet`, `Net`) to try your functions.": "a hint of method: what to try the answers on",
    },
    "op_histogram": {
        "## 1. `op_histogram(gm) -> dict[str, int]`": ("returns a dict",),
        "Return a dict that maps each opcode to the number of nodes of `gm.graph` with that opcode.":
            ("returns a dict", "placeholder and output count", "get_attr counts",
             "nodes, not submodules: a module called twice counts twice",
             "a node counts under its own opcode: a get_attr of a submodule's tensor stays a get_attr"),
        "List **only the opcodes that occur**: no key with a count of 0.": ("only opcodes present are keys (no zeros)",),
        "Every node counts, `placeholder` and `output` included.":
            ("placeholder and output count", "only read the graph: dead nodes count, the graph is not cleaned"),
        "Key order does not matter; a `collections.Counter` is a dict and is fine.":
            "a freedom, not a constraint: the alternatives (mutants/ex02_nodes.py) show the check accepts it",
        "For `fx.symbolic_trace(TinyNet())` the answer is `{\"placeholder\": 1, \"call_module\": 2, "
        "\"call_function\": 1, \"output\": 1}`.": "an example of the rules before it",
        "Number of nodes per opcode, for the opcodes present in gm's graph.":
            ("only opcodes present are keys (no zeros)", "placeholder and output count"),
    },
    "called_modules": {
        "## 2. `called_modules(gm) -> list[str]`": ("qualified targets, not node names", "graph order"),
        "Return the qualified name of the submodule called by each `call_module` node, in graph order.":
            ("qualified targets, not node names", "graph order", "only modules the graph calls",
             "every call_module node, whether its result is used or not"),
        "A module called twice appears twice.": ("repeats kept",),
        "The qualified name is the dotted path from `gm` to the submodule, such as `\"layers.0\"` or "
        "`\"blocks.1.conv2\"` — the name `gm.get_submodule` accepts.": ("qualified targets, not node names",),
        "Return `[]` when the graph calls no module.": ("[] when the graph calls no module",),
        "For `fx.symbolic_trace(Net())` the answer is `[\"fc1\", \"act\", \"fc2\"]`.": "an example of the rules before it",
        "Qualified names of the submodules called by gm's graph, in graph order, repeats kept.":
            ("qualified targets, not node names", "graph order", "repeats kept"),
    },
    "consumers": {
        "## 3. `consumers(gm, node_name) -> list[str]`": ("graph order, not creation order",),
        "Return the names of the nodes that use the node called `node_name`, **in graph order** (the order of "
        "`gm.graph.nodes`).": ("graph order, not creation order", "nodes are looked up by name, not target"),
        "A node that uses it several times (`h * h`, or `torch.add(h, h)`) is listed **once**.": ("each user once",),
        "A use counts wherever it is: a positional argument, an element of a list argument (`torch.cat([h, x])`), "
        "a keyword argument (`torch.add(x, other=h)`).": ("uses inside lists and kwargs count",),
        "The `output` node is a consumer of what it returns.": ("the output node is a user",),
        "A node nobody uses has no consumers: return `[]`.": ("a node nobody uses has no consumers: []",),
        "`node_name` is a node **name** (`node.name`), not a target.": ("nodes are looked up by name, not target",),
        "When no node of the graph has that name, raise `KeyError` with a message that contains `node_name`, for "
        "example `KeyError(f\"no node named {node_name!r}\")`.": ("an unknown name raises KeyError naming it",),
        "Careful: `node.users` holds the right nodes, but in the order in which the uses were *created*.":
            ("graph order, not creation order",),
        "For a freshly traced module that is graph order; after a pass has inserted a node earlier in the graph it "
        "is not.": ("graph order, not creation order",),
        "For the traced `ThreeReluNet` above, `consumers(gm, \"x\")` is `[\"fc1\", \"add\"]`.":
            "an example of the rules before it",
        "Names of the nodes that use node `node_name`, in graph order, each once; KeyError if no such node.":
            ("graph order, not creation order", "each user once", "an unknown name raises KeyError naming it"),
    },
    "graph_depth": {
        "## 4. `graph_depth(gm) -> int`": ("edges, not nodes",),
        "Return the number of **edges** on the **longest** path that starts at a `placeholder` node and ends at the "
        "`output` node, following the data flow (from a node to its users).":
            ("edges, not nodes", "the longest path, not the shortest", "paths start at placeholders only",
             "paths end at the output node", "every input of a node, not only args[0]"),
        "An edge joins a node to a node that reads it.":
            ("every input of a node, not only args[0]", "inputs given as keyword arguments are inputs too"),
        "`x -> fc -> output` has depth 2; the traced `TinyNet` has depth 4.": "examples of the rule before it",
        "Skip connections make several paths: take the longest.": ("the longest path, not the shortest",),
        "Only placeholders start a path.": ("paths start at placeholders only",),
        "A `get_attr` node, or a call with no node inputs (`torch.ones(3)` built into the graph), is not a start, "
        "however long the chain that follows it.": ("paths start at placeholders only",),
        "With several placeholders, a path may start at any of them.": ("every placeholder starts a path",),
        "Nodes that never reach the output (dead code) do not lengthen anything.": ("paths end at the output node",),
        "You may assume at least one placeholder reaches the output.":
            "an assumption the answer may make: no case breaks it, so nothing to check",
        "Hint: `gm.graph.nodes` is in topological order — every node comes after the nodes it reads.":
            "a hint of method",
        "Edges on the longest path from a placeholder to the output node of gm's graph.":
            ("edges, not nodes", "the longest path, not the shortest", "paths start at placeholders only",
             "paths end at the output node"),
    },
}
