# WRONG: replaces every wrapped node (meta is_wrapped) instead of the nodes whose target is fn.
def replace_with_op(gm: fx.GraphModule, fn, op) -> fx.GraphModule:
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.meta.get("is_wrapped"):
            node.target = op
            del node.meta["is_wrapped"]
    gm.graph.lint()
    gm.recompile()
    return gm
