# WRONG: raises when gm has no call of fn (a graph without fn, or a second call on the same gm, must just come back).
def replace_with_op(gm: fx.GraphModule, fn, op) -> fx.GraphModule:
    nodes = [n for n in gm.graph.nodes if n.op == "call_function" and n.target is fn]
    if not nodes:
        raise ValueError(f"no call of {fn.__name__} in the graph")
    for node in nodes:
        node.target = op
        node.meta.pop("is_wrapped", None)
    gm.graph.lint()
    gm.recompile()
    return gm
