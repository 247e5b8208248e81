# RIGHT: unfolds a packet into the set of its overload objects (op.overloads() names them), then checks membership.
def count_op_nodes(ep: ExportedProgram, op) -> int:
    if isinstance(op, torch._ops.OpOverloadPacket):
        wanted = [getattr(op, name) for name in op.overloads()]
    else:
        wanted = [op]
    return sum(
        1 for n in ep.graph.nodes if n.op == "call_function" and any(n.target is w for w in wanted)
    )
