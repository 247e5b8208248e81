# WRONG: matches the function by name (__name__), so another function also called scaled_gelu is replaced too.
def replace_with_op(gm: fx.GraphModule, fn, op) -> fx.GraphModule:
    for node in gm.graph.nodes:
        if node.op == "call_function" and getattr(node.target, "__name__", None) == fn.__name__:
            node.target = op
            node.meta.pop("is_wrapped", None)
    gm.graph.lint()
    gm.recompile()
    return gm
