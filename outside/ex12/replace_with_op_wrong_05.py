# WRONG: drops the kwargs (scale=1.5 is lost), so the op is called without scale.
def replace_with_op(gm: fx.GraphModule, fn, op) -> fx.GraphModule:
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is fn:
            with gm.graph.inserting_after(node):
                new = gm.graph.call_function(op, node.args)
            node.replace_all_uses_with(new)
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    return gm
