# WRONG: never recompiles: the graph calls op, but gm.code and gm.forward still call fn.
def replace_with_op(gm: fx.GraphModule, fn, op) -> fx.GraphModule:
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is fn:
            node.target = op
            node.meta.pop("is_wrapped", None)
    gm.graph.lint()
    return gm
