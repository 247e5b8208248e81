# WRONG: only packets: nodes count when their target's overloadpacket is op, so one overload counts 0.
def count_op_nodes(ep: ExportedProgram, op) -> int:
    return sum(
        1
        for n in ep.graph.nodes
        if n.op == "call_function" and getattr(n.target, "overloadpacket", None) is op
    )
