# WRONG: changes gm in place but forgets to return it (returns None).
def replace_with_op(gm: fx.GraphModule, fn, op) -> fx.GraphModule:
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is fn:
            node.target = op
            node.meta.pop("is_wrapped", None)
    gm.graph.lint()
    gm.recompile()
