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
    Clause("node_summary", "the name is node.name, also where FX renamed the node: the placeholder of an argument "
           "named input is input_1", ("Namesakes",),
           mutant="a placeholder's target for its name (input, where FX named the node input_1)", hint="is its target"),
    Clause("node_summary", "the output node's name is read from the node: output_1 where an input took the name output",
           ("Namesakes",), mutant="writes ('output', 'output') for the output node, whatever its name",
           hint="named 'output_1'"),
    Clause("node_summary", "the names are those of gm.graph itself: a node a pass named keeps its name (no new trace)",
           ("TinyNet with a node a pass named flip_sign",),
           mutant="lists the nodes of a new trace of gm, which names them afresh", hint="without tracing gm again"),
    Clause("count_nodes", "op equals node.op: a part of an opcode ('call') is an op no node has",
           ("TinyNet, op='call' (no node has it)",),
           mutant="op matched as a part of node.op, so op='call' counts every call node", hint="no opcode is 'call'"),
    Clause("count_nodes", "op equals node.op as it is: another case ('Placeholder') is an op no node has",
           ("TinyNet, op='Placeholder' (no node has it)",),
           mutant="op compared without case, so 'Placeholder' counts the placeholders", hint="as it is"),
    Clause("count_nodes", "op equals node.op as it is: spaces (' placeholder') make an op no node has",
           ("TinyNet, op=' placeholder' (no node has it)",),
           mutant="op stripped of spaces, so ' placeholder' counts the placeholders", hint="as it is"),
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
    Clause("outputs_match", "within atol: every element within it, not the mean difference",
           ("TinyNet with one output column off by 0.5",),
           mutant="the mean absolute difference within atol, so one far-off column passes", hint="hides one far off"),
    Clause("outputs_match", "within atol includes atol itself (|a - b| <= atol, as torch.allclose tests)",
           ("outputs off by exactly atol=0.25",),
           mutant="|a - b| < atol, so a difference of exactly atol fails", hint="not <"),
    Clause("outputs_match", "atol == 0 is exact: no tolerance at all, not even one below 1e-7",
           ("TinyNet with outputs near 1e-3, off by about 1e-9",),
           mutant="atol floored at 1e-7, so atol=0 is not exact", hint="no tolerance at all"),
    Clause("outputs_match", "exactly equal outputs match, -inf in the same places included",
           ("outputs holding -inf at the same places",),
           mutant="the max absolute difference, also when atol == 0: -inf - -inf is nan", hint="is nan"),
    Clause("outputs_match", "outputs of different shapes never match, also with as many elements and dimensions",
           ("outputs of shapes (1, 4) and (4, 1)",),
           mutant="compares numel and dim instead of shapes: (1, 4) and (4, 1) broadcast", hint="compare shapes"),
    Clause("outputs_match", "the outputs are compared as they are: complex outputs whose imaginary parts differ "
           "do not match", ("complex outputs whose imaginary parts differ",),
           mutant="compares float64 copies, which drop a complex output's imaginary part", hint="imaginary parts"),
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
             "the pair is the node's op and its name, not its target",
             "the name is node.name, also where FX renamed the node: the placeholder of an argument named input is "
             "input_1",
             "the output node's name is read from the node: output_1 where an input took the name output",
             "the names are those of gm.graph itself: a node a pass named keeps its name (no new trace)"),
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
             "nodes, not submodules: a module called twice is two nodes, one never called is none",
             "op equals node.op: a part of an opcode ('call') is an op no node has",
             "op equals node.op as it is: another case ('Placeholder') is an op no node has",
             "op equals node.op as it is: spaces (' placeholder') make an op no node has"),
        "Only `op=None` means \"every node\": an `op` that no node has (a typo, or the empty string `\"\"`) counts 0.":
            ("an op no node has (an empty string, a typo) counts 0",
             "op equals node.op: a part of an opcode ('call') is an op no node has",
             "op equals node.op as it is: another case ('Placeholder') is an op no node has",
             "op equals node.op as it is: spaces (' placeholder') make an op no node has"),
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
             "atol alone is the tolerance (no relative tolerance)",
             "within atol: every element within it, not the mean difference",
             "within atol includes atol itself (|a - b| <= atol, as torch.allclose tests)",
             "atol == 0 is exact: no tolerance at all, not even one below 1e-7",
             "exactly equal outputs match, -inf in the same places included",
             "the outputs are compared as they are: complex outputs whose imaginary parts differ do not match"),
        "Outputs of different shapes never match.":
            ("outputs of different shapes never match",
             "outputs of different shapes never match, also with as many elements and dimensions"),
        "Return a Python `bool`.": ("returns a Python bool",),
        "`model` and `gm` are left as they were: do not switch their mode (`.eval()`) or change their weights.":
            ("model and gm are left as they were (their training flags too)",),
        "True when model(*inputs) and gm(*inputs) agree (exactly if atol == 0), both run without autograd.":
            ("exact when atol == 0", "both run under torch.no_grad()",
             "atol == 0 is exact: no tolerance at all, not even one below 1e-7",
             "exactly equal outputs match, -inf in the same places included"),
    },
}
