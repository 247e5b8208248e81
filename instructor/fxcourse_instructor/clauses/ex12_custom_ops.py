"""Clauses of ex12_custom_ops: register_scaled_gelu, count_op_nodes, replace_with_op."""
from fxcourse_instructor.clauses import Clause

CLAUSES = [
    Clause("register_scaled_gelu", "defines {namespace}::scaled_gelu in the namespace it is given",
           ("a fresh namespace", "another namespace"), mutant="a namespace of its own, mylib, instead of the argument"),
    Clause("register_scaled_gelu", "the schema (Tensor x, float scale) -> Tensor", ("a fresh namespace",
                                                                                    "another namespace"),
           mutant="scale annotated as int: the schema says SymInt scale"),
    Clause("register_scaled_gelu", "mutates no argument", ("a fresh namespace", "another namespace"),
           mutant="mutates_args={'x'}: the schema says x is written to"),
    Clause("register_scaled_gelu", "scale * gelu(x), the exact gelu", ("a fresh namespace", "another namespace"),
           mutant="the tanh approximation of gelu"),
    Clause("register_scaled_gelu", "with a fake kernel", ("a fresh namespace", "another namespace"),
           mutant="no fake kernel: compile and export cannot see through the op"),
    Clause("register_scaled_gelu", "the fake kernel keeps x's dtype", ("a fresh namespace", "another namespace"),
           mutant="a fake kernel in float32 whatever x's dtype: torch.empty(x.shape)"),
    Clause("register_scaled_gelu", "with a backward", ("a fresh namespace", "another namespace"),
           mutant="no register_autograd: no gradient for x"),
    Clause("register_scaled_gelu", "the backward is scale * gelu'(x)", ("a fresh namespace", "another namespace"),
           mutant="the backward forgets scale"),
    Clause("register_scaled_gelu", "returns the op object", ("a fresh namespace", "another namespace"),
           mutant="returns nothing"),
    Clause("register_scaled_gelu", "the fake kernel returns a new tensor, as the real one does, not x",
           ("a fresh namespace", "another namespace"), patch=("        return torch.empty_like(x)", "        return x"),
           hint="not x itself"),
    Clause("register_scaled_gelu", "every call defines the operator in its own namespace (a second call too)",
           ("a fresh namespace", "another namespace"),
           mutant="caches the first operator and returns it for every namespace (a second call defines nothing)."),
    Clause("count_op_nodes", "a packet counts every overload's nodes", ("Shifts(4), the packet",
                                                                        "Decoys(5): the same name in another namespace"),
           mutant="node.target == op only: a packet matches no node"),
    Clause("count_op_nodes", "an overload counts only its own nodes", ("Shifts(4), the overload",),
           mutant="compares the packets always: an overload counts its siblings"),
    Clause("count_op_nodes", "operator objects, not names", ("Decoys(5)",),
           mutant="matches the operator's name within str(node.target)"),
    Clause("count_op_nodes", "targets that are no operator are skipped", ("TwoGelus(6)", "TwoGelus(4), aten's gelu"),
           mutant="reads node.target.overloadpacket on every node: getitem has none"),
    Clause("count_op_nodes", "an int", ("TwoGelus(6)", "Decoys(5): the same name in another namespace"),
           mutant="returns whether the op is called, not how often"),
    Clause("count_op_nodes", "one overload is no packet: only nodes with exactly that target", ("Shifts(4), the overload",),
           patch=('node.target == op or getattr(node.target, "overloadpacket", None) is op',
                  'getattr(node.target, "overloadpacket", None) is op'), hint="not a packet"),
    Clause("count_op_nodes", "a packet's every overload, not only .default", ("Shifts(4), the packet",
                                                                              "Shifts(4) with a dynamic batch"),
           patch=('node.target == op or getattr(node.target, "overloadpacket", None) is op',
                  'node.target == op or node.target is getattr(op, "default", None)'), hint="not only op.default"),
    Clause("count_op_nodes", "targets, not node names", ("Shifts(4), the packet",
                                                         "Decoys(5): the same name in another namespace"), mutant="counts by node name"),
    Clause("replace_with_op", "every call of fn", ("GeluBlock(6)", "SameName"), mutant="stops at the first call of fn"),
    Clause("replace_with_op", "only fn itself: another function of the same name stays", ("SameName(5)",),
           mutant="matches by __name__: another scaled_gelu is replaced too"),
    Clause("replace_with_op", "the same arguments, keywords included", ("GeluBlock(6)", "SameName"),
           mutant="a new node with the args only: scale= given as a keyword is lost"),
    Clause("replace_with_op", "calls op itself", ("GeluBlock(6): the function twice", "SameName"),
           mutant="always the default overload: op.default"),
    Clause("replace_with_op", "recompiled", ("GeluBlock(6)", "SameName"),
           mutant="no recompile: gm.code still calls fn"),
    Clause("replace_with_op", "the changed graph is linted", ("GeluBlock(6)", "SameName"),
           patch=("    gm.graph.lint()\n", ""), hint="call gm.graph.lint()"),
    Clause("replace_with_op", "a graph without a call of fn comes back, no error", ("NoCall(4)",),
           patch=("    gm.graph.lint()\n", "    if fn not in [n.target for n in gm.graph.nodes]:\n"
                                           "        raise ValueError('nothing to replace')\n    gm.graph.lint()\n"),
           hint="a graph without a call of fn is no error"),
    Clause("replace_with_op", "each call of fn becomes one call of op: the old node goes",
           ("GeluBlock(6)", "SameName"),
           mutant="inserts a new op node and reroutes the users, but never erases the old node, which still calls fn."),
    Clause("replace_with_op", "no node that calls op is marked wrapped", ("GeluBlock(6)", "SameName"),
           mutant="keeps meta['is_wrapped']: later traces in the process fail"),
]

# Rules that wrong answers once with full marks broke, each with the hidden case that now catches it.
CLAUSES += [
    Clause("register_scaled_gelu", "the fake kernel keeps x's layout (strides), so opcheck passes on a transposed x",
           ("another namespace",),
           mutant="a contiguous fake result whatever x's layout: torch.empty(x.shape, dtype=x.dtype)",
           hint="its strides too"),
    Clause("count_op_nodes", "the nodes of ep.graph only, not those of torch.cond's branches", ("CondOps(4)",),
           mutant="counts the nodes of every subgraph too (the branches of torch.cond)", hint="ep.graph only"),
]

# The task text, sentence by sentence: the rules of the clauses that check it, or why it is no rule.
TASK_TEXT = {
    '*': {
        'After lesson 12 you can define an operator of your own with `torch.library.custom_op`, give it a fake '
        'kernel and a backward, check it with `torch.library.opcheck`, and find it in the graphs of `torch.compile` '
        'and `torch.export`.':
            "what the lesson taught, the motivation",
        'Here you write three small tools:':
            "introduces the list of functions",
        '`register_scaled_gelu`: define the operator `scale * gelu(x)` in a namespace you are given;':
            "a summary of register_scaled_gelu, whose rules its section states",
        '`count_op_nodes`: how many nodes of an exported program call an operator;':
            "a summary of count_op_nodes, whose rules its section states",
        '`replace_with_op`: a pass that replaces the calls of a Python function in a traced graph by the operator.':
            "a summary of replace_with_op, whose rules its section states",
    },
    'register_scaled_gelu': {
        '## 1. `register_scaled_gelu(namespace) -> the operator`':
            ("returns the op object",),
        'Define the operator `{namespace}::scaled_gelu(Tensor x, float scale) -> Tensor` with '
        '`torch.library.custom_op`: it returns `scale * F.gelu(x)` (the exact gelu, a new tensor; it changes none of '
        'its arguments), has a **fake kernel** (so that `torch.compile` and `torch.export` see it as one node) and a '
        '**backward** (so that gradients flow to `x`; `scale` is a float and gets none).':
            ('defines {namespace}::scaled_gelu in the namespace it is given',
             'the schema (Tensor x, float scale) -> Tensor', 'mutates no argument', 'scale * gelu(x), the exact gelu',
             'with a fake kernel', "the fake kernel keeps x's dtype", 'with a backward',
             "the backward is scale * gelu'(x)"),
        'Return the operator: the object `custom_op` returns (its packet `torch.ops.<namespace>.scaled_gelu` does as '
        'well).':
            ("returns the op object",),
        '`torch.library.opcheck` must pass on it.':
            ('the schema (Tensor x, float scale) -> Tensor', 'mutates no argument', 'with a fake kernel',
             "the fake kernel keeps x's dtype", 'with a backward',
             "the fake kernel keeps x's layout (strides), so opcheck passes on a transposed x"),
        "An operator's name is global to the process, and defining it again replaces it: the grader calls your "
        'function with namespaces of its own, so define the operator in the one you are given.':
            ("defines {namespace}::scaled_gelu in the namespace it is given",),
        'Define {namespace}::scaled_gelu(Tensor x, float scale) -> Tensor, with a fake kernel and a backward.':
            ('defines {namespace}::scaled_gelu in the namespace it is given',
             'the schema (Tensor x, float scale) -> Tensor', 'with a fake kernel', 'with a backward'),
    },
    'count_op_nodes': {
        '## 2. `count_op_nodes(ep, op) -> int`':
            ("an int",),
        'How many `call_function` nodes of `ep.graph` target `op`.':
            ("an int", "a packet counts every overload's nodes", "an overload counts only its own nodes",
             "the nodes of ep.graph only, not those of torch.cond's branches"),
        '`op` is either an **overload packet** (`torch.ops.mylib.scaled_gelu`, `torch.ops.aten.gelu`): then every '
        'node whose target is one of its overloads counts; or **one overload** '
        '(`torch.ops.mylib.scaled_gelu.default`): then only nodes with exactly that target count.':
            ("a packet counts every overload's nodes", "an overload counts only its own nodes"),
        'Compare operator objects, not names: an operator of the same name in another namespace, or one whose name '
        "contains `op`'s, is another operator.":
            ("operator objects, not names",),
        'Not every target is an operator (`operator.getitem` is a plain function).':
            ("targets that are no operator are skipped",),
        'Number of call_function nodes of ep.graph whose target is op, or one of its overloads if op is a packet.':
            ("a packet counts every overload's nodes", "an overload counts only its own nodes"),
    },
    'replace_with_op': {
        '## 3. `replace_with_op(gm, fn, op) -> fx.GraphModule`':
            ("every call of fn",),
        '`gm` was traced with the Python function `fn` kept as a leaf, so each call of `fn` is one `call_function` '
        'node whose target is `fn` itself.':
            ("only fn itself: another function of the same name stays",),
        "Make every such node call `op` instead, with the same `args` and `kwargs` (the operator's arguments are "
        "called `x` and `scale`, like `fn`'s, so a keyword argument stays valid).":
            ("every call of fn", "calls op itself", "the same arguments, keywords included"),
        'Only nodes whose target **is** `fn`: another function, even one with the same name, stays.':
            ("only fn itself: another function of the same name stays",),
        'A node traced from a wrapped function carries `node.meta["is_wrapped"]`; a node that calls `op` must not '
        '(lesson 12 shows what that flag breaks).':
            ("no node that calls op is marked wrapped",),
        'Then `gm.graph.lint()`, `gm.recompile()`, and return the GraphModule (changing `gm` and returning it is '
        'fine); it computes what it computed before.':
            ("recompiled", "the same arguments, keywords included"),
        'Every call_function node calling fn calls op instead, same args and kwargs; lint, recompile.':
            ("every call of fn", "the same arguments, keywords included", "recompiled"),
    },
}
