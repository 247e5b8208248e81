# WRONG: moves the kwargs into args (x, scale) positionally: same numbers, but not the same args and kwargs.
def replace_with_op(gm: fx.GraphModule, fn, op) -> fx.GraphModule:
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is fn:
            args = list(node.args)
            if "x" in node.kwargs:
                args.insert(0, node.kwargs["x"])
            if "scale" in node.kwargs:
                args.append(node.kwargs["scale"])
            node.args = tuple(args)
            node.kwargs = {}
            node.target = op
            node.meta.pop("is_wrapped", None)
    gm.graph.lint()
    gm.recompile()
    return gm
