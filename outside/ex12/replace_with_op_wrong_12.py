# WRONG: inserts a new op node and reroutes the users, but never erases the old node, which still calls fn.
def replace_with_op(gm: fx.GraphModule, fn, op) -> fx.GraphModule:
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target is fn:
            with gm.graph.inserting_after(node):
                new = gm.graph.call_function(op, node.args, node.kwargs)
            node.replace_all_uses_with(new)
    gm.graph.lint()
    gm.recompile()
    return gm
