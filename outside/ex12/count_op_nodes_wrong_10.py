# WRONG: counts distinct targets (a set), not nodes: two calls of the same overload count once.
def count_op_nodes(ep: ExportedProgram, op) -> int:
    targets = {
        n.target
        for n in ep.graph.nodes
        if n.op == "call_function" and (n.target == op or getattr(n.target, "overloadpacket", None) is op)
    }
    return len(targets)
