# WRONG: compares schema names (namespace::name), which every overload of a packet shares: one overload counts all.
def count_op_nodes(ep: ExportedProgram, op) -> int:
    if hasattr(op, "_schema"):
        qualified = op._schema.name
    else:
        qualified = op._qualified_op_name
    return sum(
        1
        for n in ep.graph.nodes
        if n.op == "call_function" and hasattr(n.target, "_schema") and n.target._schema.name == qualified
    )
