# WRONG: counts by node name (n.name starts with the op's name), not by target.
def count_op_nodes(ep: ExportedProgram, op) -> int:
    base = op.__name__.split(".")[0]
    return sum(1 for n in ep.graph.nodes if n.op == "call_function" and n.name.startswith(base))
