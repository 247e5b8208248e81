# WRONG: leaves node.meta["is_wrapped"] on the node that now calls op (recompile then emits a wrap of the op's dotted name).
def replace_with_op(gm: fx.GraphModule, fn, op) -> fx.GraphModule:
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is fn:
            node.target = op
    gm.graph.lint()
    gm.recompile()
    return gm
