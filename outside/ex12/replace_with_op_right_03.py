# RIGHT: find_nodes by target (equality on a function is identity), rebuilds meta without the mark.
def replace_with_op(gm: fx.GraphModule, fn, op) -> fx.GraphModule:
    for node in gm.graph.find_nodes(op="call_function", target=fn):
        node.target = op
        node.meta = {k: v for k, v in node.meta.items() if k != "is_wrapped"}
    gm.graph.lint()
    gm.recompile()
    return gm
