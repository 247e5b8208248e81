# RIGHT: uses Graph.find_nodes with each overload object as the target.
def count_op_nodes(ep: ExportedProgram, op) -> int:
    if hasattr(op, "overloads") and not hasattr(op, "overloadpacket"):
        overloads = [getattr(op, name) for name in op.overloads()]
    else:
        overloads = [op]
    return sum(len(ep.graph.find_nodes(op="call_function", target=o)) for o in overloads)
