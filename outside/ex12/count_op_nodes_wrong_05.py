# WRONG: substring match on names: an operator whose name contains op's (scaled_gelu2, gelu in scaled_gelu) counts too.
def count_op_nodes(ep: ExportedProgram, op) -> int:
    name = str(op)
    return sum(1 for n in ep.graph.nodes if n.op == "call_function" and name in str(n.target))
