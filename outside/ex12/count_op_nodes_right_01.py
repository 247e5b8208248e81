# RIGHT: dispatches on the type of op (OpOverloadPacket versus OpOverload) and compares objects.
def count_op_nodes(ep: ExportedProgram, op) -> int:
    from torch._ops import OpOverloadPacket

    count = 0
    for n in ep.graph.nodes:
        if n.op != "call_function":
            continue
        if isinstance(op, OpOverloadPacket):
            if getattr(n.target, "overloadpacket", None) is op:
                count += 1
        elif n.target is op:
            count += 1
    return count
