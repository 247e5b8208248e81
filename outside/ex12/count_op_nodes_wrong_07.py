# WRONG: reads n.target.overloadpacket on every node: operator.getitem (a plain function) has none and it raises.
def count_op_nodes(ep: ExportedProgram, op) -> int:
    count = 0
    for n in ep.graph.nodes:
        if n.op != "call_function":
            continue
        if n.target == op or n.target.overloadpacket is op:
            count += 1
    return count
