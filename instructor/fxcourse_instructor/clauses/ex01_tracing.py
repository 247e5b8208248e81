"""Clauses of ex01_tracing: node_summary, count_nodes, outputs_match."""
from fxcourse_instructor.clauses import Clause

CLAUSES = [
    Clause("node_summary", "every node, placeholder and output included", ("TinyNet", "ThreeReluNet"),
           mutant="skips placeholder and output nodes"),
    Clause("node_summary", "in graph order", ("TinyNet", "Net", "ThreeReluNet"),
           mutant="sorted by name instead of graph order"),
    Clause("node_summary", "(op, name) tuples, op first", ("TinyNet", "ThreeReluNet"),
           mutant="pairs in the wrong order"),
    Clause("node_summary", "a node nobody uses is a node too (dead code is listed, not removed)",
           ("DeadBranch",), patch=("    return [", "    gm.graph.eliminate_dead_code()\n    return [")),
    Clause("node_summary", "gm is left as it was", ("TinyNet", "ThreeReluNet"),
           patch=("    return [", "    gm.fc1.weight.data.zero_()\n    return [")),
    Clause("node_summary", "the pair is the node's op and its name, not its target", ("TinyNet", "ThreeReluNet"),
           mutant="uses target", hint="not node.target"),
    Clause("node_summary", "only read gm: its graph is not cleaned (no eliminate_dead_code)", ("DeadBranch",),
           mutant="dce first", hint="eliminate_dead_code"),
    Clause("count_nodes", "op is compared with node.op: a node named like an opcode is not of that opcode",
           ("OpcodeNames",), mutant="by name", hint="a node's name is not its opcode"),
    Clause("count_nodes", "nodes, not submodules: a module called twice is two nodes, one never called is none",
           ("a module called twice and one never called",), mutant="modules for call module",
           hint="not the modules of gm"),
    Clause("count_nodes", "gm is only read: dead nodes count, the graph is not cleaned", ("DeadBranch",),
           mutant="ignores dead", hint="eliminate_dead_code"),
    Clause("count_nodes", "op=None counts every node", ("TinyNet, op=None", "ThreeReluNet (unseen), op=None"),
           mutant="op=None counts nothing"),
    Clause("count_nodes", "op given: only nodes whose op equals it", ("TinyNet, op='call_module'",
                                                                      "ThreeReluNet (unseen), op='placeholder'"),
           mutant="ignores op"),
    Clause("count_nodes", "op may be passed by keyword", ("TinyNet, op passed by keyword",),
           source="def count_nodes(gm, *args):\n    op = args[0] if args else None\n"
                  "    return sum(1 for n in gm.graph.nodes if op is None or n.op == op)\n"),
    Clause("count_nodes", "an op no node has (an empty string, a typo) counts 0", ("TinyNet, op=''",),
           patch=("op is None or", "not op or"), hint="op is None"),
    Clause("count_nodes", "returns an int", ("TinyNet, op=None", "ThreeReluNet (unseen), op=None"),
           mutant="returns a list"),
    Clause("outputs_match", "both run under torch.no_grad()", ("a model whose output shows whether no_grad",),
           mutant="forgets torch.no_grad()"),
    Clause("outputs_match", "exact when atol == 0", ("TinyNet off by 1e-7, atol=0",),
           mutant="allclose with default tolerances even when atol == 0"),
    Clause("outputs_match", "atol alone is the tolerance (no relative tolerance)",
           ("TinyNet with outputs near 1e4",), patch=("rtol=0.0, ", ""), hint="rtol=0"),
    Clause("outputs_match", "outputs of different shapes never match", ("outputs of shapes (1, 2) and (2,)",),
           mutant="ignores shapes, so broadcasting hides a mismatch"),
    Clause("outputs_match", "every input is passed", ("a model with two inputs",),
           mutant="passes only the first input"),
    Clause("outputs_match", "returns a Python bool", ("TinyNet and its trace", "TinyNet off by 1e-7, atol=0"),
           mutant="returns a tensor of booleans"),
    Clause("outputs_match", "model and gm are left as they were (their training flags too)",
           ("TinyNet and its trace", "TinyNet off by 1e-7, atol=0"),
           patch=("    with torch.no_grad():", "    model.eval()\n    with torch.no_grad():"),
           hint="must leave its inputs"),
]

# The task text, sentence by sentence: the rules of the clauses that check it, or why it is no rule.
TASK_TEXT = {
    "*": {
        "After lesson 01 you can trace a model with `torch.fx.symbolic_trace`, read its graph and check that the "
        "traced module computes what the original does.": "what the lesson taught, the motivation",
        "Here you turn that into three small tools.": "what the notebook holds",
    },
    "node_summary": {
        "## 1. `node_summary(gm) -> list[tuple[str, str]]`": ("(op, name) tuples, op first",),
        "Return `(op, name)` for every node of `gm.graph`, in graph order.":
            ("every node, placeholder and output included", "in graph order", "(op, name) tuples, op first",
             "the pair is the node's op and its name, not its target"),
        "For the traced `TinyNet` above the first pair is `(\"placeholder\", \"x\")` and the last is "
        "`(\"output\", \"output\")`.": "an example of the rule before it",
        "A node nobody uses is a node too: list it.":
            ("a node nobody uses is a node too (dead code is listed, not removed)",),
        "Only read `gm`: the caller's module, its graph and its parameters stay as they were.":
            ("gm is left as it was", "only read gm: its graph is not cleaned (no eliminate_dead_code)"),
        "(op, name) of every node of gm's graph, in graph order.":
            ("every node, placeholder and output included", "in graph order", "(op, name) tuples, op first"),
    },
    "count_nodes": {
        "## 2. `count_nodes(gm, op=None) -> int`": ("returns an int", "op=None counts every node"),
        "Count all nodes, or only those whose `op` equals `op` (`\"call_module\"`, `\"placeholder\"`, ...).":
            ("op=None counts every node", "op given: only nodes whose op equals it",
             "op is compared with node.op: a node named like an opcode is not of that opcode",
             "nodes, not submodules: a module called twice is two nodes, one never called is none"),
        "Only `op=None` means \"every node\": an `op` that no node has (a typo, or the empty string `\"\"`) counts 0.":
            ("an op no node has (an empty string, a typo) counts 0",),
        "`op` may come by position or by keyword.": ("op may be passed by keyword", "op given: only nodes whose op equals it"),
        "`gm` is only read.": ("gm is only read: dead nodes count, the graph is not cleaned",),
        "Number of nodes in gm's graph, or of those whose op equals `op`.":
            ("op=None counts every node", "op given: only nodes whose op equals it"),
    },
    "outputs_match": {
        "## 3. `outputs_match(model, gm, *inputs, atol=0.0) -> bool`": ("returns a Python bool", "every input is passed"),
        "Run `model` and `gm` on the same `inputs` under `torch.no_grad()` and say whether their outputs match: "
        "exactly when `atol == 0`, within an absolute tolerance `atol` otherwise (`atol` alone: no relative "
        "tolerance, so `torch.allclose` needs `rtol=0`).":
            ("both run under torch.no_grad()", "every input is passed", "exact when atol == 0",
             "atol alone is the tolerance (no relative tolerance)"),
        "Outputs of different shapes never match.": ("outputs of different shapes never match",),
        "Return a Python `bool`.": ("returns a Python bool",),
        "`model` and `gm` are left as they were: do not switch their mode (`.eval()`) or change their weights.":
            ("model and gm are left as they were (their training flags too)",),
        "True when model(*inputs) and gm(*inputs) agree (exactly if atol == 0), both run without autograd.":
            ("exact when atol == 0", "both run under torch.no_grad()"),
    },
}
