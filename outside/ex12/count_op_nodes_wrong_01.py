# WRONG: compares names (str(target) == str(op)); a packet's str never equals an overload's, so a packet counts 0.
def count_op_nodes(ep: ExportedProgram, op) -> int:
    return sum(1 for n in ep.graph.nodes if n.op == "call_function" and str(n.target) == str(op))
