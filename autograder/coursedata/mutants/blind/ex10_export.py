"""Answers to ex10_export written from the task text alone, by someone who had not read the checks: the
wrong ones as mutants, each with the diagnosis its failure must give, the right ones as alternatives; each is a
whole answer cell."""
from autograder.coursedata.mutants import Alternative, Mutant

_IMP = '''import inspect
from collections import Counter

import torch
import torch.fx as fx
from torch.export import Dim, ExportedProgram, export

'''

MUTANTS = [
    Mutant('export_dynamic_batch', "hardcodes x: Key dynamic_shapes by the forward's real argument name, or pass a tuple: "
           "dynamic_shapes=({0: Dim('batch')},).",
           hint="the keys of a dynamic_shapes dict are the names of forward's arguments",
           source=_IMP + '''def export_dynamic_batch(model, example_input):
    return export(model, (example_input,), dynamic_shapes={"x": {0: Dim("batch")}})
'''),
    Mutant('export_dynamic_batch', "max bound: Use Dim('batch') without max=.",
           hint='without max=',
           source=_IMP + '''def export_dynamic_batch(model, example_input):
    return export(model, (example_input,), dynamic_shapes=({0: Dim("batch", max=1024)},))
'''),
    Mutant('export_dynamic_batch', 'exports eval copy: Export the model in its own mode; an eval copy of a training model '
           'computes with running statistics instead of batch statistics.',
           hint='an eval-mode export, of the model or of a copy',
           source=_IMP + '''def export_dynamic_batch(model, example_input):
    import copy
    frozen = copy.deepcopy(model).eval()
    return export(frozen, (example_input,), dynamic_shapes=({0: Dim("batch")},))
'''),
    Mutant('export_dynamic_batch', 'all dims: Make only dimension 0 dynamic; the other dimensions stay static.',
           hint='only dimension 0, the batch, is dynamic',
           source=_IMP + '''def export_dynamic_batch(model, example_input):
    dims = {i: Dim.AUTO for i in range(example_input.dim())}
    return export(model, (example_input,), dynamic_shapes=(dims,))
'''),
    Mutant('export_dynamic_batch', 'calls eval: Do not call model.eval(): export the model in the mode it is in.',
           hint='call neither .eval() nor .train()', not_hints=('work on a copy',),
           source=_IMP + '''def export_dynamic_batch(model, example_input):
    return export(model.eval(), (example_input,), dynamic_shapes=({0: Dim("batch")},))
'''),
    Mutant('export_dynamic_batch', 'returns module: Return the ExportedProgram.',
           hint='return the ExportedProgram itself',
           source=_IMP + '''def export_dynamic_batch(model, example_input):
    return export(model, (example_input,), dynamic_shapes=({0: Dim("batch")},)).module()
'''),
    Mutant('export_dynamic_batch', 'casts float: Do not convert the example (.float()); export it as it is.',
           hint='export example_input as it is, in its own dtype', not_hints=('torch.randn',),
           source=_IMP + '''def export_dynamic_batch(model, example_input):
    return export(model, (example_input.float(),), dynamic_shapes=({0: Dim("batch")},))
'''),
    Mutant('aten_histogram', "aten only: Count every call_function node, not only targets that start with 'aten'.",
           hint='every call_function node counts',
           source=_IMP + '''def aten_histogram(ep):
    return dict(Counter(str(n.target) for n in ep.graph.nodes
                        if n.op == "call_function" and str(n.target).startswith("aten.")))
'''),
    Mutant('aten_histogram', 'decomposes: Count ep.graph as it is; run_decompositions() changes the targets.',
           hint='run_decompositions() makes another program',
           source=_IMP + '''def aten_histogram(ep):
    core = ep.run_decompositions()
    return dict(Counter(str(n.target) for n in core.graph.nodes if n.op == "call_function"))
'''),
    Mutant('aten_histogram', "packet keys: Key by str(node.target), the overload ('aten.sum.default' and "
           "'aten.sum.dim_IntList' are two keys).",
           hint='not by the operator packet',
           source=_IMP + '''def aten_histogram(ep):
    keys = []
    for n in ep.graph.nodes:
        if n.op == "call_function":
            t = n.target
            keys.append(str(t.overloadpacket) if hasattr(t, "overloadpacket") else str(t))
    return dict(Counter(keys))
'''),
    Mutant('aten_histogram', "includes subgraphs: Walk ep.graph.nodes only, not every submodule's graph.",
           hint='count the nodes of ep.graph only',
           source=_IMP + '''def aten_histogram(ep):
    c = Counter()
    for m in ep.graph_module.modules():
        if isinstance(m, fx.GraphModule):
            c.update(str(n.target) for n in m.graph.nodes if n.op == "call_function")
    return dict(c)
'''),
    Mutant('aten_histogram', 'all nodes: Count only call_function nodes (no placeholders, get_attr or output).',
           hint='count call_function nodes only',
           source=_IMP + '''def aten_histogram(ep):
    return dict(Counter(str(n.target) for n in ep.graph.nodes))
'''),
    Mutant('aten_histogram', 'object keys: Use str(node.target) as the key, not the OpOverload object.',
           hint='expected a str',
           source=_IMP + '''def aten_histogram(ep):
    return dict(Counter(n.target for n in ep.graph.nodes if n.op == "call_function"))
'''),
    Mutant('parameter_placeholders', 'params only: Include buffers too (inputs_to_buffers), non-persistent ones included.',
           hint='buffers too',
           source=_IMP + '''def parameter_placeholders(ep):
    return dict(ep.graph_signature.inputs_to_parameters)
'''),
    Mutant('parameter_placeholders', 'from state dict: Read the graph signature; a non-persistent buffer is not in state_dict '
           'but is a buffer placeholder.',
           hint='a non-persistent buffer is a buffer too',
           source=_IMP + '''def parameter_placeholders(ep):
    names = {n.name for n in ep.graph.nodes if n.op == "placeholder"}
    out = {}
    for fqn in ep.state_dict:
        for prefix in ("p_", "b_"):
            cand = prefix + fqn.replace(".", "_")
            if cand in names:
                out[cand] = fqn
    return out
'''),
    Mutant('parameter_placeholders', 'includes constants: Leave out CONSTANT_TENSOR inputs (c_...).',
           hint='a lifted constant',
           source=_IMP + '''def parameter_placeholders(ep):
    out = {}
    for spec in ep.graph_signature.input_specs:
        if spec.target is not None:
            out[spec.arg.name] = spec.target
    return out
'''),
    Mutant('parameter_placeholders', 'includes user inputs: Skip USER_INPUT placeholders.',
           hint='user inputs carry no parameter or buffer',
           source=_IMP + '''def parameter_placeholders(ep):
    sig = ep.graph_signature
    out = {**sig.inputs_to_parameters, **sig.inputs_to_buffers}
    for name in sig.user_inputs:
        out[name] = name
    return out
'''),
    Mutant('parameter_placeholders', "name guess: Take the FQN from the signature; turning '_' into '.' breaks names like "
           'running_mean.',
           hint="a placeholder's name does not say where its dots were",
           source=_IMP + '''def parameter_placeholders(ep):
    out = {}
    for n in ep.graph.nodes:
        if n.op == "placeholder" and n.name[:2] in ("p_", "b_"):
            out[n.name] = n.name[2:].replace("_", ".")
    return out
'''),
    Mutant('parameter_placeholders', 'inverted: Keys are placeholder names, values the FQNs (not the other way round).',
           hint='the keys are placeholder names',
           source=_IMP + '''def parameter_placeholders(ep):
    sig = ep.graph_signature
    both = {**sig.inputs_to_parameters, **sig.inputs_to_buffers}
    return {fqn: name for name, fqn in both.items()}
'''),
    Mutant('node_shapes', 'symint objects: Convert symbolic sizes with str(size); keep static sizes as int.',
           hint='return str(size) for it',
           source=_IMP + '''def node_shapes(ep):
    return {n.name: tuple(n.meta["val"].shape) for n in ep.graph.nodes
            if isinstance(n.meta.get("val"), torch.Tensor)}
'''),
    Mutant('node_shapes', "int everything: Do not int() a SymInt: that gives the example's size; use str(size).",
           hint="int() would fix it to the example's value",
           source=_IMP + '''def node_shapes(ep):
    out = {}
    for n in ep.graph.nodes:
        val = n.meta.get("val")
        if isinstance(val, torch.Tensor):
            out[n.name] = tuple(s if isinstance(s, int) else int(s.node.hint) for s in val.shape)
    return out
'''),
    Mutant('node_shapes', "runs program: Read node.meta['val'], no real run: a run gives concrete sizes, not the "
           'symbols.',
           hint='do not run the program', not_hints=('placeholders carry',),
           source=_IMP + '''def node_shapes(ep):
    import torch.fx as fx
    gm = ep.module()
    args = []
    for n in ep.graph.nodes:
        if n.op == "placeholder" and n.name in ep.graph_signature.user_inputs:
            v = n.meta["val"]
            args.append(torch.zeros([int(s.node.hint) if not isinstance(s, int) else s for s in v.shape], dtype=v.dtype))
    shapes = {}

    class Rec(fx.Interpreter):
        def run_node(self, node):
            r = super().run_node(node)
            if isinstance(r, torch.Tensor):
                shapes[node.name] = tuple(r.shape)
            return r

    Rec(gm).run(*args)
    return shapes
'''),
    Mutant('node_shapes', "includes lists: Skip nodes whose meta['val'] is a list or tuple of tensors.",
           hint='its meta["val"] is a list',
           source=_IMP + '''def node_shapes(ep):
    def conv(t):
        return tuple(s if isinstance(s, int) else str(s) for s in t.shape)
    out = {}
    for n in ep.graph.nodes:
        val = n.meta.get("val")
        if isinstance(val, torch.Tensor):
            out[n.name] = conv(val)
        elif isinstance(val, (list, tuple)) and val and all(isinstance(v, torch.Tensor) for v in val):
            out[n.name] = tuple(conv(v) for v in val)
    return out
'''),
    Mutant('node_shapes', 'skips scalars: A 0-d tensor (the result of sum()) is a tensor too: its shape is ().',
           hint='a 0-d tensor is a tensor too', not_hints=('placeholders carry',),
           source=_IMP + '''def node_shapes(ep):
    out = {}
    for n in ep.graph.nodes:
        val = n.meta.get("val")
        if isinstance(val, torch.Tensor) and val.dim() > 0:
            out[n.name] = tuple(s if isinstance(s, int) else str(s) for s in val.shape)
    return out
'''),
    Mutant('node_shapes', 'calls only: Include placeholder nodes (parameters, buffers, inputs).',
           hint='placeholders carry meta["val"] too',
           source=_IMP + '''def node_shapes(ep):
    out = {}
    for n in ep.graph.nodes:
        if n.op != "call_function":
            continue
        val = n.meta.get("val")
        if isinstance(val, torch.Tensor):
            out[n.name] = tuple(s if isinstance(s, int) else str(s) for s in val.shape)
    return out
'''),
    Mutant('swap_aten_op', 'overload packet: Compare node.target == old (the overload), not the overload packets.',
           hint='the exact overload',
           source=_IMP + '''def swap_aten_op(ep, old, new):
    for n in ep.graph.nodes:
        if n.op == "call_function" and getattr(n.target, 'overloadpacket', None) is old.overloadpacket:
            n.target = new
    ep.graph.lint()
    ep.graph_module.recompile()
    return ep
'''),
    Mutant('swap_aten_op', 'no recompile: Call ep.graph_module.recompile() after changing targets.',
           hint='recompile()',
           source=_IMP + '''def swap_aten_op(ep, old, new):
    for n in ep.graph.nodes:
        if n.op == "call_function" and n.target == old:
            n.target = new
    ep.graph.lint()
    return ep
'''),
    Mutant('swap_aten_op', 'rebuilds nodes: Change node.target in place instead of inserting new nodes (which get new '
           'names).',
           hint='change node.target in place',
           source=_IMP + '''def swap_aten_op(ep, old, new):
    g = ep.graph
    for n in list(g.nodes):
        if n.op == "call_function" and n.target == old:
            with g.inserting_after(n):
                m = g.call_function(new, n.args, n.kwargs)
            m.meta = dict(n.meta)
            n.replace_all_uses_with(m)
            g.erase_node(n)
    g.lint()
    ep.graph_module.recompile()
    return ep
'''),
    Mutant('swap_aten_op', 'edits module copy: ep.module() returns a new module: change ep.graph (ep.graph_module) '
           'itself.',
           hint='ep.module() makes a copy',
           source=_IMP + '''def swap_aten_op(ep, old, new):
    gm = ep.module()
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target == old:
            n.target = new
    gm.graph.lint()
    gm.recompile()
    return ep
'''),
    Mutant('swap_aten_op', "also subgraphs: Change ep.graph only; the graphs of torch.cond's branches are other "
           'graphs.',
           hint='swap the nodes of ep.graph only',
           source=_IMP + '''def swap_aten_op(ep, old, new):
    for m in ep.graph_module.modules():
        if isinstance(m, fx.GraphModule):
            for n in m.graph.nodes:
                if n.op == "call_function" and n.target == old:
                    n.target = new
            m.graph.lint()
            m.recompile()
    return ep
'''),
    Mutant('swap_aten_op', 'decomposes: Do not run_decompositions(): only the matching nodes change.',
           hint='run_decompositions() makes another program',
           source=_IMP + '''def swap_aten_op(ep, old, new):
    ep = ep.run_decompositions({})
    for n in ep.graph.nodes:
        if n.op == "call_function" and n.target == old:
            n.target = new
    ep.graph.lint()
    ep.graph_module.recompile()
    return ep
'''),
]

ALTERNATIVES = [
    Alternative('export_dynamic_batch', 'written from the task text alone: export dynamic batch right',
                _IMP + '''def export_dynamic_batch(model, example_input):
    first = next(iter(inspect.signature(model.forward).parameters))
    return export(model, (example_input,), dynamic_shapes={first: {0: Dim("batch")}})
'''),
    Alternative('aten_histogram', 'written from the task text alone: aten histogram right',
                _IMP + '''def aten_histogram(ep):
    counts = {}
    for node in ep.graph.nodes:
        if node.op == "call_function":
            key = str(node.target)
            counts[key] = counts.get(key, 0) + 1
    return counts
'''),
    Alternative('parameter_placeholders', 'written from the task text alone: parameter placeholders right',
                _IMP + '''def parameter_placeholders(ep):
    from torch.export.graph_signature import InputKind
    result = {}
    for spec in ep.graph_signature.input_specs:
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            result[spec.arg.name] = str(spec.target)
    return result
'''),
    Alternative('node_shapes', 'written from the task text alone: node shapes right',
                _IMP + '''def node_shapes(ep):
    out = {}
    for n in ep.graph.nodes:
        val = n.meta.get("val")
        if isinstance(val, torch.Tensor):
            out[n.name] = tuple(s if isinstance(s, int) else str(s) for s in val.shape)
    return out
'''),
    Alternative('swap_aten_op', 'written from the task text alone: swap aten op right',
                _IMP + '''def swap_aten_op(ep, old, new):
    for n in ep.graph.nodes:
        if n.op == "call_function" and n.target == old:
            n.target = new
    ep.graph.lint()
    ep.graph_module.recompile()
    return ep
'''),
]
