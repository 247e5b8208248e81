# WRONG: stops after the first call of fn: a model calling fn twice keeps the second call.
def replace_with_op(gm: fx.GraphModule, fn, op) -> fx.GraphModule:
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is fn:
            node.target = op
            node.meta.pop("is_wrapped", None)
            break
    gm.graph.lint()
    gm.recompile()
    return gm
