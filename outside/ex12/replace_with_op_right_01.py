# RIGHT: a new call_function node per call (meta not copied, so no is_wrapped), users rerouted, old node erased.
def replace_with_op(gm: fx.GraphModule, fn, op) -> fx.GraphModule:
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not fn:
            continue
        with graph.inserting_before(node):
            new = graph.call_function(op, node.args, dict(node.kwargs))
        node.replace_all_uses_with(new)
        graph.erase_node(node)
    graph.lint()
    gm.recompile()
    return gm
