# WRONG: unfolds op to op.default (the node's target must be op itself, whatever was passed).
def replace_with_op(gm: fx.GraphModule, fn, op) -> fx.GraphModule:
    target = getattr(op, "default", op)
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is fn:
            node.target = target
            node.meta.pop("is_wrapped", None)
    gm.graph.lint()
    gm.recompile()
    return gm
