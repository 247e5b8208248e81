# WRONG: only exact targets (n.target == op): for a packet no node counts, the overloads are not unfolded.
def count_op_nodes(ep: ExportedProgram, op) -> int:
    count = 0
    for n in ep.graph.nodes:
        if n.op == "call_function" and n.target == op:
            count += 1
    return count
