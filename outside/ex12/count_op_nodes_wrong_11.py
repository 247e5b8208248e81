# WRONG: only the packet's default overload is unfolded: op.default, so a second overload (.Tensor) is not counted.
def count_op_nodes(ep: ExportedProgram, op) -> int:
    target = op.default if hasattr(op, "default") else op
    return sum(1 for n in ep.graph.nodes if n.op == "call_function" and n.target is target)
