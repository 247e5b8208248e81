"""Clauses of ex05_inserting: insert_after, remove_dropout, record_shapes, linear_flops."""
from fxcourse_instructor.clauses import Clause

CLAUSES = [
    Clause("linear_flops", "gm is only run: it is left as it was, with no hook left on any module",
           ("TinyNet on a (5, 4) input", "TinyNet on a 3-D"),
           mutant="leaves hooks", hint="remove every hook you register"),
    Clause("insert_after", "the new node does not read itself", ("TinyNet, tanh after 'relu'",
                                                                 "ThreeReluNet, tanh after the input 'x'"),
           mutant="the self-use trap: replace_all_uses_with without delete_user_cb"),
    Clause("insert_after", "every former user reads the new node", ("ThreeReluNet, tanh after the input 'x'",),
           mutant="rewires only the first user"),
    Clause("insert_after", "uses inside lists and kwargs are rewired too", ("a node read twice by one user",),
           mutant="rewires top-level positional args only (misses lists and kwargs)"),
    Clause("insert_after", "after the node, not before", ("TinyNet, tanh after 'relu'",
                                                          "ThreeReluNet, tanh after the input 'x'"),
           mutant="inserting_before instead of inserting_after"),
    Clause("insert_after", "nodes are found by name, not target", ("random model seed 21",),
           mutant="finds the node by target instead of name"),
    Clause("insert_after", "an unknown name raises KeyError naming it", ("TinyNet, an unknown node name",),
           mutant="an unknown name returns gm unchanged"),
    Clause("insert_after", "the output node as the only user", ("ThreeReluNet, a Python function after 'head'",),
           mutant="creates the node but never rewires the users"),
    Clause("remove_dropout", "functional dropout too", ("F.dropout/torch.dropout",), mutant="forgets functional dropout"),
    Clause("remove_dropout", "every dropout kind (Dropout2d, AlphaDropout, ...)", ("Dropout2d, AlphaDropout",),
           mutant="only exactly nn.Dropout and F.dropout"),
    Clause("remove_dropout", "an input given by keyword", ("F.dropout/torch.dropout",),
           mutant="takes node.args[0] even when the input is a keyword"),
    Clause("remove_dropout", "unused dropout submodules are deleted", ("random model seed 41",),
           mutant="keeps the dropout submodules registered"),
    Clause("remove_dropout", "modules found by type, not name", ("random model seed 41",),
           mutant="matches modules by name ('drop' in the target)"),
    Clause("record_shapes", "placeholders are recorded", ("TinyNet on a (3, 4) input", "a model with x.size"),
           mutant="skips placeholders"),
    Clause("record_shapes", "the output node is not", ("TinyNet on a (3, 4) input", "two inputs and a 3-D batch"),
           mutant="keeps the output node (ShapeProp gives it a tensor_meta too)"),
    Clause("record_shapes", "tuple-valued nodes are not tensors", ("a model with x.size(0)",),
           mutant="reads .shape from every tensor_meta (a tuple for chunk)"),
    Clause("record_shapes", "keys are node names", ("TinyNet on a (3, 4) input", "a model with x.size"),
           mutant="keys by target"),
    Clause("record_shapes", "shapes are tuples of ints", ("TinyNet on a (3, 4) input", "a model with x.size"),
           mutant="lists instead of tuples"),
    Clause("linear_flops", "the factor 2", ("TinyNet on a (5, 4) input", "TinyNet on a 3-D"),
           mutant="forgets the factor 2"),
    Clause("linear_flops", "rows = product of all leading dimensions", ("TinyNet on a 3-D (2, 3, 4) input",),
           mutant="rows = the first dimension only"),
    Clause("linear_flops", "calls, not modules", ("one nn.Linear called three times",), mutant="counts modules, not calls"),
    Clause("linear_flops", "the Linear's own input shape", ("a view between the input and the Linear",),
           mutant="rows from the model's input, not the Linear's"),
    Clause("linear_flops", "only nn.Linear calls, not F.linear", ("one nn.Linear called three times",),
           mutant="counts F.linear calls too"),
    Clause("linear_flops", "returns an int", ("TinyNet on a (5, 4) input", "TinyNet on a 3-D"),
           mutant="returns a float"),
    Clause("linear_flops", "gm's parameters are left as they were", ("TinyNet on a (5, 4) input", "TinyNet on a 3-D"),
           patch=("    ShapeProp(gm).propagate(*inputs)", "    ShapeProp(gm).propagate(*inputs)\n"
                  "    for p in gm.parameters():\n        p.data = p.data.double().float() * 1.0 + 1e-3"),
           hint="must leave its inputs"),
]

# Rules the task-text audit found with no clause.
CLAUSES += [
    Clause("insert_after", "gm.code is regenerated (gm.recompile())", ("TinyNet, tanh after 'relu'",
                                                                       "ThreeReluNet, tanh after the input 'x'"),
           patch=("    gm.recompile()\n", "")),
    Clause("remove_dropout", "the node is erased, not replaced by an nn.Identity call", ("DropoutNet traced in train mode",
                                                                                         "one nn.Dropout module called from two sites"),
           mutant="swaps each dropout module for nn.Identity", hint="not replaced"),
    Clause("remove_dropout", "whatever its training argument says", ("DropoutNet traced in eval mode",
                                                                     "F.dropout/torch.dropout traced in eval mode"),
           mutant="skips eval calls"),
    Clause("remove_dropout", "a module called from several sites is deleted only once no site calls it",
           ("one nn.Dropout module called from two sites",), mutant="deletes shared early"),
    Clause("remove_dropout", "gm.code is regenerated (recompile)", ("DropoutNet traced in train mode",
                                                                    "one nn.Dropout module called from two sites"),
           mutant="forgets gm.recompile()", hint="gm.recompile()"),
    Clause("record_shapes", "get_attr nodes count (a parameter is a tensor)", ("a model with x.size(0)",),
           patch=("if n.op != \"output\" and", "if n.op not in (\"output\", \"get_attr\") and")),
    Clause("record_shapes", "gm is only run: its graph, parameters and mode stay as they were",
           ("TinyNet on a (3, 4) input", "a model with x.size"),
           patch=("    with torch.no_grad():\n        Recorder",
                  "    for p in gm.parameters():\n        p.data.add_(1.0)\n    with torch.no_grad():\n        Recorder"),
           hint="must leave its inputs"),
    Clause("record_shapes", "a scalar tensor is recorded, with shape ()", ("a model with x.size(0)",),
           patch=("isinstance(value, torch.Tensor):", "isinstance(value, torch.Tensor) and value.dim() > 0:")),
    Clause("linear_flops", "a 1-D input has rows = 1", ("TinyNet on a 1-D (4,) input",),
           mutant="rows = the first dimension only"),
]

# Rules that wrong answers written from the task text alone broke while keeping full marks.
CLAUSES += [
    Clause("insert_after", "right after the node, not just before its first user",
           ("'relu' followed by a node that does not read it",),
           mutant="inserts just before the node's first user, not right after the node", hint="not just before"),
    Clause("remove_dropout", "every other node stays, those nothing reads too",
           ("a dropout beside nodes whose values nothing reads",),
           mutant="rewires the dropouts' users, then eliminate_dead_code instead of erase_node (it also removes the "
                  "nodes nothing reads)", hint="nodes that nothing reads stay"),
    Clause("remove_dropout", "only dropout submodules that nothing calls go: those a called module owns stay",
           ("an nn.Dropout before a leaf nn.TransformerEncoderLayer",),
           mutant="deletes every dropout submodule, those inside a module the graph still calls too",
           hint="which the graph still calls"),
    Clause("record_shapes", "a get_attr node that reads a buffer counts (a buffer is a tensor)",
           ("a model that reads a buffer",),
           mutant="placeholders from the inputs, get_attr values from gm.get_parameter (a buffer is no parameter)",
           hint="may read a buffer"),
    Clause("linear_flops", "only call_module nodes of gm count, not the Linears inside a module it calls",
           ("a leaf nn.TransformerEncoderLayer",),
           mutant="forward pre-hooks on every nn.Linear of gm.modules(), those inside a leaf module too",
           hint="are no nodes of the graph"),
    Clause("linear_flops", "a subclass of nn.Linear is an nn.Linear", ("NonDynamicallyQuantizableLinear",),
           mutant="type(module) is nn.Linear: a subclass of nn.Linear is left out", hint="is an nn.Linear too"),
]

# The task text, sentence by sentence: the rules of the clauses that check it, or why it is no rule.
TASK_TEXT = {
    "*": {
        "After lesson 05 you can put new nodes exactly where you want them, remove nodes without breaking the graph, "
        "and run a graph node by node to learn what flows through it.": "what the lesson taught, the motivation",
        "Here you write two passes and two analyses:": "introduces the list of functions",
        "`insert_after(gm, node_name, fn)`: put a function call after a node and make its users read it;":
            "a summary of insert_after, whose rules its section states",
        "`remove_dropout(gm)`: take every dropout out of a graph for inference;":
            "a summary of remove_dropout, whose rules its section states",
        "`record_shapes(gm, *inputs)`: the shape of every tensor in the graph, by node name;":
            "a summary of record_shapes, whose rules its section states",
        "`linear_flops(gm, *inputs)`: how many floating-point operations the `nn.Linear` layers do.":
            "a summary of linear_flops, whose rules its section states",
        "A pass is graded on its structure (which nodes remain, who reads whom, `graph.lint()`) and on its numbers "
        "(outputs against the original model).":
            "how grading works; what the passes must do is stated in their own sections",
    },
    "insert_after": {
        "## 1. `insert_after(gm, node_name, fn) -> GraphModule`": ("after the node, not before",),
        "Find the node whose `name` is `node_name`.": ("nodes are found by name, not target",),
        "Insert right after it **one** new `call_function` node whose target is `fn` and whose only argument is that "
        "node, so that the new node computes `fn(node)`.":
            ("after the node, not before", "the new node does not read itself",
             "right after the node, not just before its first user"),
        "Then make every former user of the node (including the output node, a node that reads it twice, or reads it "
        "inside a list) read the new node instead.":
            ("every former user reads the new node", "uses inside lists and kwargs are rewired too",
             "the output node as the only user"),
        "The node itself is then read only by the new node.":
            ("the new node does not read itself", "every former user reads the new node"),
        "End with `graph.lint()` and `gm.recompile()`, and return `gm` (changing it in place is fine).":
            ("gm.code is regenerated (gm.recompile())",),
        "If no node has that name, raise `KeyError(node_name)`.": ("an unknown name raises KeyError naming it",),
        "For the traced `TinyNet`, `insert_after(gm, \"relu\", torch.tanh)` gives a graph "
        "`x -> fc1 -> relu -> tanh -> fc2 -> output`.": "an example of the rules before it",
        "Insert a call_function node fn(node) right after the node named node_name; its users read it.":
            ("after the node, not before", "every former user reads the new node",
             "right after the node, not just before its first user"),
    },
    "remove_dropout": {
        "## 2. `remove_dropout(gm) -> GraphModule`": ("functional dropout too",),
        "At inference time dropout is the identity, so take it out of the graph.": "the motivation",
        "A dropout is": "introduces the list of dropout kinds",
        "a `call_module` node whose module is an instance of one of `nn.Dropout`, `nn.Dropout1d`, `nn.Dropout2d`, "
        "`nn.Dropout3d`, `nn.AlphaDropout`, `nn.FeatureAlphaDropout` (subclasses count too);":
            ("every dropout kind (Dropout2d, AlphaDropout, ...)", "modules found by type, not name"),
        "a `call_function` node whose target is `F.dropout`, `F.dropout1d`, `F.dropout2d`, `F.dropout3d`, "
        "`F.alpha_dropout`, `F.feature_alpha_dropout` or `torch.dropout`, whatever its `training` argument says "
        "(tracing a model in train mode bakes `training=True` into the graph).":
            ("functional dropout too", "whatever its training argument says"),
        "For each dropout node, make its users read the tensor it drops: its first argument, or its `input` keyword "
        "argument when it has no positional one (`torch.dropout(input=h, p=0.5, train=True)` is traced with its "
        "keywords).": ("an input given by keyword",),
        "Then erase the node; do not replace it with an `nn.Identity` call.":
            ("the node is erased, not replaced by an nn.Identity call",),
        "Then delete the dropout submodules that nothing calls any more (one module may be called from several "
        "sites), run `graph.lint()`, recompile and return `gm`.":
            ("unused dropout submodules are deleted",
             "a module called from several sites is deleted only once no site calls it",
             "gm.code is regenerated (recompile)",
             "only dropout submodules that nothing calls go: those a called module owns stay"),
        "Every other node stays as it was, and the result computes what the original model computes in eval mode.":
            ("modules found by type, not name", "every dropout kind (Dropout2d, AlphaDropout, ...)",
             "every other node stays, those nothing reads too"),
        "Erase every dropout node (module or function), delete the unused dropout submodules.":
            ("functional dropout too", "unused dropout submodules are deleted"),
    },
    "record_shapes": {
        "## 3. `record_shapes(gm, *inputs) -> dict[str, tuple[int, ...]]`":
            ("keys are node names", "shapes are tuples of ints"),
        "Run `gm` on `inputs` and return, for every node whose value is a `torch.Tensor`, `node.name` mapped to "
        "`tuple(value.shape)`.": ("keys are node names", "shapes are tuples of ints", "tuple-valued nodes are not tensors"),
        "Placeholders and `get_attr` nodes count when their value is a tensor (a parameter is a tensor).":
            ("placeholders are recorded", "get_attr nodes count (a parameter is a tensor)",
             "a get_attr node that reads a buffer counts (a buffer is a tensor)"),
        "Left out: nodes whose value is not a tensor (the `int` of `x.size(0)`, the `torch.Size` of `x.shape`, the "
        "tuple returned by `chunk`), and the `output` node, always.":
            ("tuple-valued nodes are not tensors", "the output node is not"),
        "A scalar tensor has shape `()`.": ("a scalar tensor is recorded, with shape ()",),
        "Use `ShapeProp` or your own `Interpreter`; do not guess shapes from the modules.":
            "a hint of method (the alternatives in mutants/ use both)",
        "Only run `gm`: its graph, parameters and mode stay as they were (writing `node.meta`, as `ShapeProp` does, "
        "is fine).": ("gm is only run: its graph, parameters and mode stay as they were",),
        "node.name -> shape of its value, for every tensor-valued node except output.":
            ("keys are node names", "the output node is not"),
    },
    "linear_flops": {
        "## 4. `linear_flops(gm, *inputs) -> int`": ("returns an int",),
        "An `nn.Linear(in_features, out_features)` applied to a tensor of shape `(d1, ..., dk, in_features)` does "
        "`rows = d1 * ... * dk` matrix-vector products, and each product does `in_features * out_features` "
        "multiply-adds, that is `2 * in_features * out_features` floating-point operations.":
            ("the factor 2", "rows = product of all leading dimensions"),
        "Return the sum of `2 * rows * in_features * out_features` over every `call_module` node whose module is an "
        "`nn.Linear`, where the shape is that of the tensor **that call receives** when `gm` runs on `inputs`.":
            ("the factor 2", "calls, not modules", "the Linear's own input shape",
             "only call_module nodes of gm count, not the Linears inside a module it calls",
             "a subclass of nn.Linear is an nn.Linear"),
        "A Linear called twice counts twice; a 1-D input has `rows = 1`; an `F.linear` call (a `call_function`) does "
        "not count.": ("calls, not modules", "a 1-D input has rows = 1", "only nn.Linear calls, not F.linear"),
        "Return a Python `int`.": ("returns an int",),
        "As in `record_shapes`, `gm` is only run, never changed.":
            ("gm is only run: it is left as it was, with no hook left on any module",
             "gm's parameters are left as they were"),
        "Sum of 2 * rows * in_features * out_features over the nn.Linear calls of gm, run on inputs.":
            ("the factor 2", "calls, not modules"),
    },
}
