# WRONG: skips gm.graph.lint() (the text: then gm.graph.lint(), gm.recompile()).
def replace_with_op(gm: fx.GraphModule, fn, op) -> fx.GraphModule:
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is fn:
            node.target = op
            node.meta.pop("is_wrapped", None)
    gm.recompile()
    return gm
