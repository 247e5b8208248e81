"""Mutants and alternatives of ex10_export."""
from fxcourse_instructor.mutants import Alternative, Mutant, from_task_text

_RETURN = "    return export(model, (example_input,), dynamic_shapes=({0: batch},))"

_EXPORT_MUTANTS = [
    Mutant("export_dynamic_batch", "no dynamic_shapes: the program is fixed to the example's batch",
           hint="mark dimension 0 dynamic", edits=((_RETURN, "    return export(model, (example_input,))"),)),
    Mutant("export_dynamic_batch", "a dynamic_shapes dict keyed by 'x': forward's argument may be called otherwise",
           hint="names of forward's arguments",
           edits=((_RETURN, "    return export(model, (example_input,), dynamic_shapes={'x': {0: batch}})"),)),
    Mutant("export_dynamic_batch", "marks dimension 1 dynamic instead of dimension 0", hint="dimension 0",
           edits=(("dynamic_shapes=({0: batch},)", "dynamic_shapes=({1: batch},)"),)),
    Mutant("export_dynamic_batch", "every dimension dynamic (Dim.AUTO): steps and features vary too",
           hint="only dimension 0",
           edits=(("dynamic_shapes=({0: batch},)",
                   "dynamic_shapes=({d: Dim.AUTO for d in range(example_input.dim())},)"),)),
    Mutant("export_dynamic_batch", "returns ep.module() instead of the ExportedProgram", hint="ExportedProgram",
           edits=((_RETURN, _RETURN + ".module()"),)),
    Mutant("export_dynamic_batch", "passes the input itself as export's args instead of a tuple", hint="tuple",
           edits=(("export(model, (example_input,), ", "export(model, example_input, "),)),
    # wrong answers written from the task text alone, after the lesson
    Mutant("export_dynamic_batch", "Dim(\"batch\", max=4): the range refuses larger batches",
           hint="its range ends at", not_hints=("mark dimension 0 dynamic",),
           edits=(('    batch = Dim("batch")', '    batch = Dim("batch", max=4)'),)),
    Mutant("export_dynamic_batch", "puts the caller's model in eval mode before exporting",
           hint="switched from training to eval", edits=((_RETURN, "    model.eval()\n" + _RETURN),)),
    Mutant("export_dynamic_batch", "exports on a fresh float32 example of batch 2 made with torch.randn",
           hint="export example_input as it is",
           edits=(("(example_input,), dynamic_shapes", "(torch.randn(2, *example_input.shape[1:]),), dynamic_shapes"),)),
]

_HIST_MUTANTS = [
    Mutant("aten_histogram", "counts every node, placeholders and output included", hint="call_function nodes only",
           edits=(("        if node.op == \"call_function\":\n            key", "        if True:\n            key"),)),
    Mutant("aten_histogram", "keys by node.name", hint="not by node.name",
           edits=(("            key = str(node.target)", "            key = node.name"),)),
    Mutant("aten_histogram", "keys by the operator packet: aten.linear for every overload", hint="overloadpacket",
           edits=(("            key = str(node.target)",
                   "            key = str(getattr(node.target, 'overloadpacket', node.target))"),)),
    Mutant("aten_histogram", "counts aten operators only: getitem and cond are left out", hint="getitem",
           edits=(("        if node.op == \"call_function\":",
                   "        if node.op == \"call_function\" and str(node.target).startswith(\"aten.\"):"),)),
    Mutant("aten_histogram", "decomposes to core ATen first", hint="run_decompositions",
           edits=(("    for node in ep.graph.nodes:", "    for node in ep.run_decompositions().graph.nodes:"),)),
    Mutant("aten_histogram", "counts nodes per target but returns a sorted list of pairs", hint="dict",
           edits=(("    return counts", "    return sorted(counts.items())"),)),
    # wrong answers written from the task text alone, after the lesson
    Mutant("aten_histogram", "counts the nodes inside torch.cond's subgraphs too", hint="ep.graph only",
           not_hints=("run_decompositions",),
           edits=(("    for node in ep.graph.nodes:",
                   "    for node in [n for m in ep.graph_module.modules() if isinstance(m, fx.GraphModule)\n"
                   "                 for n in m.graph.nodes]:"),)),
    Mutant("aten_histogram", "counts.get(key, 1): every count stays 1", hint="the counts are not",
           not_hints=("key by str(node.target)",), edits=(("counts.get(key, 0) + 1", "counts.get(key, 1)"),)),
    Mutant("aten_histogram", "leaves operator.getitem out", hint="operator.getitem",
           edits=(('        if node.op == "call_function":',
                   '        if node.op == "call_function" and "getitem" not in str(node.target):'),)),
    # a wrong answer that once had full marks: no case called an operator outside aten
    Mutant("aten_histogram", "writes 'aten.' before every operator overload's name, whatever its namespace",
           hint="is an operator of its own namespace",
           edits=(("            key = str(node.target)",
                   "            t = node.target\n"
                   "            key = f\"aten.{t._opname}.{t._overloadname}\" if isinstance(t, torch._ops.OpOverload) "
                   "else str(t)"),)),
]

_PARAMS_MUTANTS = [
    Mutant("parameter_placeholders", "parameters only, no buffers", hint="buffers too",
           edits=(("    mapping.update(signature.inputs_to_buffers)\n", ""),)),
    Mutant("parameter_placeholders", "the mapping inverted: qualified name -> placeholder", hint="the keys are placeholder",
           edits=(("    return mapping", "    return {v: k for k, v in mapping.items()}"),)),
    Mutant("parameter_placeholders", "lifted constants included: every placeholder but the user inputs",
           hint="lifted constant",
           edits=(("    mapping.update(signature.inputs_to_buffers)\n",
                   "    mapping.update(signature.inputs_to_buffers)\n"
                   "    mapping.update(signature.inputs_to_lifted_tensor_constants)\n"),)),
    Mutant("parameter_placeholders", "rebuilds the qualified name from the placeholder's name",
           hint="graph_signature",
           edits=(("    mapping = dict(signature.inputs_to_parameters)\n    mapping.update(signature.inputs_to_buffers)",
                   "    mapping = {n.name: n.name[2:].replace('_', '.') for n in ep.graph.nodes\n"
                   "               if n.op == 'placeholder' and n.name[:2] in ('p_', 'b_')}"),)),
    Mutant("parameter_placeholders", "zips the placeholders with the state_dict: non-persistent buffers are not in it",
           hint="non-persistent",
           edits=(("    mapping = dict(signature.inputs_to_parameters)\n    mapping.update(signature.inputs_to_buffers)",
                   "    names = [n.name for n in ep.graph.nodes if n.op == 'placeholder' and n.name[:2] in ('p_', 'b_')]\n"
                   "    mapping = dict(zip(names, ep.state_dict))"),)),
    Mutant("parameter_placeholders", "includes the user inputs, mapped to themselves", hint="user inputs",
           edits=(("    return mapping", "    return {**mapping, **{name: name for name in signature.user_inputs}}"),)),
    # wrong answers written from the task text alone, after the lesson
    Mutant("parameter_placeholders", "keeps only the names ep.state_dict has", hint="non-persistent",
           edits=(("    return mapping", "    return {k: v for k, v in mapping.items() if v in ep.state_dict}"),)),
    Mutant("parameter_placeholders", "the attribute's own name as the value: 'weight' for conv.weight",
           hint="fully qualified name", not_hints=("read the names from ep.graph_signature",),
           edits=(("    return mapping", "    return {k: v.split('.')[-1] for k, v in mapping.items()}"),)),
    Mutant("parameter_placeholders", "the tensors as values, not their names", hint="not to the tensor",
           not_hints=("read the names from ep.graph_signature",),
           edits=(("    return mapping",
                   "    return {k: ep.state_dict.get(v, ep.constants.get(v)) for k, v in mapping.items()}"),)),
    # a wrong answer that once had full marks: no case had two qualified names that read alike with underscores
    Mutant("parameter_placeholders", "finds the qualified name whose dots made underscores give the placeholder's",
           hint="does not say where its dots were",
           edits=(("    mapping = dict(signature.inputs_to_parameters)\n    mapping.update(signature.inputs_to_buffers)",
                   "    names = list(ep.state_dict) + list(ep.constants)\n"
                   "    mapping = {}\n"
                   "    for n in ep.graph.nodes:\n"
                   "        if n.op == 'placeholder' and n.name[:2] in ('p_', 'b_'):\n"
                   "            for fq in names:\n"
                   "                if fq.replace('.', '_') == n.name[2:]:\n"
                   "                    mapping[n.name] = fq"),)),
]

_SHAPES_MUTANTS = [
    Mutant("node_shapes", "every size as a str, static ones too", hint="static sizes are ints",
           edits=(("tuple(size if isinstance(size, int) else str(size) for size in val.shape)",
                   "tuple(str(size) for size in val.shape)"),)),
    Mutant("node_shapes", "call_function nodes only: placeholders are left out", hint="placeholders carry",
           edits=(("        if isinstance(val, torch.Tensor):", "        if node.op == 'call_function' and "
                                                               "isinstance(val, torch.Tensor):"),)),
    Mutant("node_shapes", "keeps a node whose val is a list of tensors, by its first tensor", hint="several tensors",
           edits=(("        val = node.meta.get(\"val\")\n",
                   "        val = node.meta.get(\"val\")\n        if isinstance(val, (list, tuple)) and val:\n"
                   "            val = val[0]\n"),)),
    Mutant("node_shapes", "lists instead of tuples", hint="tuple",
           edits=(("            shapes[node.name] = tuple(size if isinstance(size, int) else str(size) for size in "
                   "val.shape)",
                   "            shapes[node.name] = [size if isinstance(size, int) else str(size) for size in "
                   "val.shape]"),)),
    Mutant("node_shapes", "int() of every size: a symbolic size becomes the example's value", hint="symbolic",
           edits=(("tuple(size if isinstance(size, int) else str(size) for size in val.shape)",
                   "tuple(int(size) for size in val.shape)"),)),
    Mutant("node_shapes", "reads tensor_meta: a lifted constant has none", hint="tensor_meta",
           edits=(("        val = node.meta.get(\"val\")\n        if isinstance(val, torch.Tensor):",
                   "        val = node.meta.get(\"tensor_meta\")\n        if val is not None and hasattr(val, 'shape'):"),)),
    # wrong answers written from the task text alone, after the lesson
    Mutant("node_shapes", "tuple(val.shape): symbolic sizes stay torch.SymInt objects", hint="torch.SymInt",
           not_hints=("make each shape a tuple",),
           edits=(("tuple(size if isinstance(size, int) else str(size) for size in val.shape)", "tuple(val.shape)"),)),
    Mutant("node_shapes", "a node whose val is a list gets a tuple of its tensors' shapes", hint="not one tensor",
           not_hints=("make each shape a tuple",),
           edits=(("        if isinstance(val, torch.Tensor):",
                   "        if isinstance(val, (list, tuple)):\n"
                   "            shapes[node.name] = tuple(tuple(v.shape) for v in val)\n"
                   "        elif isinstance(val, torch.Tensor):"),)),
]

_SWAP_MUTANTS = [
    Mutant("swap_aten_op", "no recompile: the generated code still calls the old operator", hint="recompile",
           edits=(("    ep.graph_module.recompile()\n", ""),)),
    Mutant("swap_aten_op", "matches by name: leaky_relu contains relu", hint="other operators whose names contain",
           edits=(("node.target == old", "str(old).split('.')[1] in str(node.target)"),)),
    Mutant("swap_aten_op", "matches the operator packet: every overload of sum is swapped", hint="exact overload",
           edits=(("node.target == old",
                   "getattr(node.target, 'overloadpacket', None) is old.overloadpacket"),)),
    Mutant("swap_aten_op", "edits ep.module(), a copy, and returns ep unchanged", hint="ep.module() makes a copy",
           edits=(("    for node in ep.graph.nodes:\n", "    gm = ep.module()\n    for node in gm.graph.nodes:\n"),)),
    Mutant("swap_aten_op", "swaps the first matching node only", hint="do not stop at the first",
           edits=(("            node.target = new\n", "            node.target = new\n            break\n"),)),
    Mutant("swap_aten_op", "returns ep.module() instead of the program", hint="ExportedProgram",
           edits=(("    return ep", "    return ep.module()"),)),
    # wrong answers written from the task text alone, after the lesson
    Mutant("swap_aten_op", "inserts a new node per match and erases the old one: names change", hint="keep every node",
           edits=(("            node.target = new\n",
                   "            with ep.graph.inserting_after(node):\n"
                   "                fresh = ep.graph.call_function(new, node.args, node.kwargs)\n"
                   "            fresh.meta = dict(node.meta)\n            node.replace_all_uses_with(fresh)\n"
                   "            ep.graph.erase_node(node)\n"),
                  ("    for node in ep.graph.nodes:", "    for node in list(ep.graph.nodes):"))),
    Mutant("swap_aten_op", "decomposes to core ATen first", hint="operators the program did not call",
           not_hints=("compare node.target == old",),
           edits=(("    for node in ep.graph.nodes:",
                   "    ep = ep.run_decompositions()\n    for node in ep.graph.nodes:"),)),
    Mutant("swap_aten_op", "recompiles ep.module(), a new module, instead of ep.graph_module", hint="recompile()",
           edits=(("    ep.graph_module.recompile()", "    ep.module().recompile()"),)),
    # a wrong answer that once had full marks: no case had an operator of old's name in another namespace
    Mutant("swap_aten_op", "matches old's name and overload, whatever the namespace",
           hint="another operator, in another namespace",
           edits=(("node.target == old", "str(node.target).split('.')[-2:] == str(old).split('.')[-2:]"),)),
]


# Written from the task text alone, by someone who had not read the checks (mutants/task_text/).
_TASK_TEXT_MUTANTS, _TASK_TEXT_ALTERNATIVES = from_task_text("ex10_export")

MUTANTS = (_EXPORT_MUTANTS + _HIST_MUTANTS + _PARAMS_MUTANTS + _SHAPES_MUTANTS + _SWAP_MUTANTS
           + _TASK_TEXT_MUTANTS)

ALTERNATIVES = [
    Alternative("export_dynamic_batch", "a dict keyed by forward's own argument name, with Dim.DYNAMIC", '''
def export_dynamic_batch(model, example_input):
    import inspect
    name = next(iter(inspect.signature(model.forward).parameters))
    return torch.export.export(model, (example_input,), dynamic_shapes={name: {0: Dim.DYNAMIC}})
'''),
    Alternative("export_dynamic_batch", "Dim.AUTO for dimension 0, the spec in a list", '''
def export_dynamic_batch(model, example_input):
    return torch.export.export(model, (example_input,), dynamic_shapes=[{0: Dim.AUTO}])
'''),
    Alternative("aten_histogram", "a Counter over the call_function nodes", '''
def aten_histogram(ep):
    return dict(Counter(str(n.target) for n in ep.graph.nodes if n.op == "call_function"))
'''),
    Alternative("parameter_placeholders", "the input specs of the signature, by kind", '''
def parameter_placeholders(ep):
    from torch.export.graph_signature import InputKind
    return {spec.arg.name: spec.target for spec in ep.graph_signature.input_specs
            if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER)}
'''),
    Alternative("aten_histogram", "Graph.find_nodes once per target", '''
def aten_histogram(ep):
    targets = {n.target for n in ep.graph.nodes if n.op == "call_function"}
    return {str(t): len(ep.graph.find_nodes(op="call_function", target=t)) for t in targets}
'''),
    Alternative("parameter_placeholders", "the placeholders found with Graph.find_nodes, looked up in the signature", '''
def parameter_placeholders(ep):
    sig = ep.graph_signature
    out = {}
    for node in ep.graph.find_nodes(op="placeholder"):
        if node.name in sig.inputs_to_parameters:
            out[node.name] = sig.inputs_to_parameters[node.name]
        elif node.name in sig.inputs_to_buffers:
            out[node.name] = sig.inputs_to_buffers[node.name]
    return out
'''),
    Alternative("node_shapes", "placeholders and calls found with Graph.find_nodes", '''
def node_shapes(ep):
    graph = ep.graph
    nodes = list(graph.find_nodes(op="placeholder")) + list(graph.find_nodes(op="get_attr"))
    for target in {n.target for n in graph.nodes if n.op == "call_function"}:
        nodes += graph.find_nodes(op="call_function", target=target)
    out = {}
    for node in nodes:
        val = node.meta.get("val")
        if isinstance(val, torch.Tensor):
            out[node.name] = tuple(s if type(s) is int else str(s) for s in val.shape)
    return out
'''),
    Alternative("node_shapes", "symbolic sizes recognised as torch.SymInt", '''
def node_shapes(ep):
    out = {}
    for node in ep.graph.nodes:
        if isinstance(node.meta.get("val"), torch.Tensor):
            out[node.name] = tuple(str(s) if isinstance(s, torch.SymInt) else int(s) for s in node.meta["val"].shape)
    return out
'''),
    Alternative("swap_aten_op", "the nodes found with graph.find_nodes", '''
def swap_aten_op(ep, old, new):
    for node in list(ep.graph.find_nodes(op="call_function", target=old)):
        node.target = new
    ep.graph_module.recompile()
    ep.graph.lint()
    return ep
'''),
] + _TASK_TEXT_ALTERNATIVES
