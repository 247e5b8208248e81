# WRONG: compares only the operator's short name (__name__ without namespace): another namespace's scaled_gelu counts.
def count_op_nodes(ep: ExportedProgram, op) -> int:
    want = op.__name__
    is_packet = "." not in want
    count = 0
    for n in ep.graph.nodes:
        if n.op != "call_function":
            continue
        name = getattr(n.target, "__name__", "")
        if is_packet:
            if name.split(".")[0] == want:
                count += 1
        elif name == want:
            count += 1
    return count
