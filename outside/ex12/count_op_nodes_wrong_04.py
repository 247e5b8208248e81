# WRONG: reduces both sides to the packet, so one overload counts every overload of its packet.
def count_op_nodes(ep: ExportedProgram, op) -> int:
    packet = getattr(op, "overloadpacket", op)
    return sum(
        1
        for n in ep.graph.nodes
        if n.op == "call_function" and getattr(n.target, "overloadpacket", None) is packet
    )
