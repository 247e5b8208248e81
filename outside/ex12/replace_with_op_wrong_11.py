# WRONG: the node calls a lambda around op, not op itself (target must be op).
def replace_with_op(gm: fx.GraphModule, fn, op) -> fx.GraphModule:
    def call_op(x, scale):
        return op(x, scale)

    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is fn:
            node.target = call_op
            node.meta.pop("is_wrapped", None)
    gm.graph.lint()
    gm.recompile()
    return gm
