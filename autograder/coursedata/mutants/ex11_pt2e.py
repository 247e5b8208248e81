"""Mutants and alternatives of ex11_pt2e.

The setup cell of the exercise imports copy, warnings, torch, fx, nn, F, Dim, export, QATNet, node_table and,
from torchao.quantization.pt2e, FakeQuantizeBase, move_exported_model_to_eval, move_exported_model_to_train,
convert_pt2e, prepare_qat_pt2e, X86InductorQuantizer and get_default_x86_inductor_quantization_config; sources
below import anything else they use, as a learner would.
"""
from autograder.coursedata.mutants import Alternative, Mutant

CONFIG = "get_default_x86_inductor_quantization_config(is_qat=True)"
RETURN_PREPARED = "    return prepare_qat_pt2e(exported, quantizer)"

MUTANTS = [
    # ----------------------------------------------------------------------------- prepare_pt2e_qat
    Mutant("prepare_pt2e_qat", "a quantizer configured without is_qat=True: observers, no fake-quant",
           hint="is_qat=True", edits=((CONFIG, "get_default_x86_inductor_quantization_config()"),)),
    Mutant("prepare_pt2e_qat", "exports the model in the mode it arrives in: an eval-mode dropout is frozen",
           hint="export the model in train mode", edits=(("export(model.train(), ", "export(model, "),)),
    Mutant("prepare_pt2e_qat", "lesson 07's capture: symbolic_trace instead of torch.export",
           hint="torch.export.export(model, example_inputs).module()",
           edits=(("exported = export(model.train(), example_inputs, dynamic_shapes=dynamic).module()",
                   "exported = fx.symbolic_trace(model.train())"),)),
    Mutant("prepare_pt2e_qat", "the quantizer is never given a config", hint="give the quantizer a global config",
           edits=((f"    quantizer.set_global({CONFIG})\n", ""),)),
    Mutant("prepare_pt2e_qat", "reduce_range=True, as lesson 07's x86 fake-quants had: activations over 0..127",
           hint="no other option", edits=((CONFIG, CONFIG[:-1] + ", reduce_range=True)"),)),
    Mutant("prepare_pt2e_qat", "is_dynamic=True: dynamic activation fake-quants", hint="no other option",
           edits=((CONFIG, CONFIG[:-1] + ", is_dynamic=True)"),)),
    Mutant("prepare_pt2e_qat", "prepares but forgets to return", hint="what prepare_qat_pt2e returns",
           edits=((RETURN_PREPARED, "    prepared = prepare_qat_pt2e(exported, quantizer)"),)),

    # ------------------------------------------------------------------------- pt2e_fake_quant_count
    Mutant("pt2e_fake_quant_count", "lesson 07's class: torch.ao.quantization.FakeQuantizeBase",
           hint="torchao.quantization.pt2e",
           edits=(("isinstance(prepared.get_submodule(node.target), FakeQuantizeBase)",
                   "isinstance(prepared.get_submodule(node.target), torch.ao.quantization.FakeQuantizeBase)"),)),
    Mutant("pt2e_fake_quant_count", "matches node names instead of module types",
           hint="select nodes by module type, not by name",
           edits=(("and isinstance(prepared.get_submodule(node.target), FakeQuantizeBase)",
                   'and "activation_post_process" in node.target'),)),
    Mutant("pt2e_fake_quant_count", "counts modules, not nodes", hint="count call_module nodes, not modules",
           edits=(("""    return sum(1 for node in prepared.graph.nodes
               if node.op == "call_module"
               and isinstance(prepared.get_submodule(node.target), FakeQuantizeBase))""",
                   "    return sum(1 for m in prepared.modules() if isinstance(m, FakeQuantizeBase))"),)),
    Mutant("pt2e_fake_quant_count", "unique targets: a fake-quant called twice counts once",
           hint="every call_module node counts",
           edits=(("    return sum(1 for node in prepared.graph.nodes",
                   "    return len({node.target for node in prepared.graph.nodes"),
                  ("FakeQuantizeBase))", "FakeQuantizeBase)})"))),
    Mutant("pt2e_fake_quant_count", "observers count too", hint="observers are not fake-quantize modules",
           edits=(("isinstance(prepared.get_submodule(node.target), FakeQuantizeBase)",
                   "isinstance(prepared.get_submodule(node.target), (FakeQuantizeBase, ObserverBase))"),
                  ("def pt2e_fake_quant_count", "from torchao.quantization.pt2e import ObserverBase\n\n\n"
                                                "def pt2e_fake_quant_count"))),
    Mutant("pt2e_fake_quant_count", "every call_module node, _guards_fn included",
           hint="not every call_module node",
           edits=(("""               if node.op == "call_module"
               and isinstance(prepared.get_submodule(node.target), FakeQuantizeBase))""",
                   """               if node.op == "call_module")"""),)),
    Mutant("pt2e_fake_quant_count", "exact type FusedMovingAvgObsFakeQuantize", hint="not type(module) is",
           edits=(("isinstance(prepared.get_submodule(node.target), FakeQuantizeBase)",
                   "type(prepared.get_submodule(node.target)).__name__ == 'FusedMovingAvgObsFakeQuantize'"),)),

    # --------------------------------------------------------------------------------- pt2e_finetune
    Mutant("pt2e_finetune", "calls prepared.train() as lesson 07 did: an exported model raises",
           hint="move_exported_model_to_train",
           edits=(("    optimizer = torch.optim.SGD(", "    prepared.train()\n    optimizer = torch.optim.SGD("),)),
    Mutant("pt2e_finetune", "one step too many", hint="not one more",
           edits=(("range(steps)", "range(steps + 1)"),)),
    Mutant("pt2e_finetune", "does not cycle: stops when the list runs out", hint="cycling through batches",
           edits=(("    for step in range(steps):\n        x, y = batches[step % len(batches)]",
                   "    for x, y in batches[:steps]:"),)),
    Mutant("pt2e_finetune", "never zeroes the gradients", hint="zero the gradients every step",
           edits=(("        optimizer.zero_grad()\n", ""),)),
    Mutant("pt2e_finetune", "SGD with momentum", hint="plain SGD without momentum",
           edits=(("lr=lr)", "lr=lr, momentum=0.9)"),)),
    Mutant("pt2e_finetune", "Adam instead of SGD", hint="use plain SGD",
           edits=(("torch.optim.SGD(", "torch.optim.Adam("),)),
    Mutant("pt2e_finetune", "a hard-coded learning rate", hint="the learning rate `lr` you are given",
           edits=(("lr=lr)", "lr=0.01)"),)),
    Mutant("pt2e_finetune", "an extra forward pass per step to print the loss",
           hint="exactly one forward pass per step",
           edits=(("        optimizer.step()\n",
                   "        optimizer.step()\n        with torch.no_grad():\n            print(F.cross_entropy(prepared(x), y))\n"),)),
    Mutant("pt2e_finetune", "sums the loss over the batch", hint="mean cross-entropy",
           edits=(("F.cross_entropy(prepared(x), y)", "F.cross_entropy(prepared(x), y, reduction='sum')"),)),
    Mutant("pt2e_finetune", "trains a copy and returns it", hint="return prepared itself",
           edits=(("    optimizer = torch.optim.SGD(", "    prepared = copy.deepcopy(prepared)\n"
                                                      "    optimizer = torch.optim.SGD("),)),

    # ---------------------------------------------------------------------------------------- to_qdq
    Mutant("to_qdq", "converts without moving to eval: dropout keeps training",
           hint="move_exported_model_to_eval(prepared) before convert_pt2e",
           edits=(("    move_exported_model_to_eval(prepared)\n", ""),)),
    Mutant("to_qdq", "move_exported_model_to_train instead of _to_eval",
           hint="move_exported_model_to_eval(prepared) before convert_pt2e",
           edits=(("move_exported_model_to_eval(prepared)", "move_exported_model_to_train(prepared)"),)),
    Mutant("to_qdq", "lesson 07's prepared.eval(): an exported model raises",
           hint="Calling train() or eval() is not supported for exported models",
           edits=(("move_exported_model_to_eval(prepared)", "prepared.eval()"),)),
    Mutant("to_qdq", "no conversion: the fake-quant model moved to eval", hint="convert with convert_pt2e",
           edits=(("return convert_pt2e(prepared)", "return prepared"),)),
    Mutant("to_qdq", "fold_quantize=False: the weights' quantize nodes stay in the graph",
           hint="fold_quantize=True", edits=(("convert_pt2e(prepared)", "convert_pt2e(prepared, fold_quantize=False)"),)),
    Mutant("to_qdq", "checks that the model still runs on the notebook's example inputs: the scales move",
           hint="do not run the prepared model on new data",
           edits=(("    return convert_pt2e(prepared)",
                   "    with torch.no_grad():\n        prepared(3 * example_inputs[0])\n"
                   "    return convert_pt2e(prepared)"),)),
    Mutant("to_qdq", "converts but forgets to return", hint="what convert_pt2e returns",
           edits=(("return convert_pt2e(prepared)", "converted = convert_pt2e(prepared)"),)),

    # ------------------------------------------------------------------------------------ qdq_counts
    Mutant("qdq_counts", "per-tensor ops only", hint="count per-channel nodes too",
           edits=(('startswith("quantized_decomposed.quantize_per_")',
                   'startswith("quantized_decomposed.quantize_per_tensor")'),
                  ('startswith("quantized_decomposed.dequantize_per_")',
                   'startswith("quantized_decomposed.dequantize_per_tensor")'))),
    Mutant("qdq_counts", "'quantize' in the op's name: dequantize counts as quantize",
           hint="'quantize' is a substring of 'dequantize'",
           edits=(('t.startswith("quantized_decomposed.quantize_per_")', '"quantize" in t'),
                  ('t.startswith("quantized_decomposed.dequantize_per_")', '"dequantize" in t'))),
    Mutant("qdq_counts", "only the .default overloads, compared as objects", hint="count every overload",
           edits=(("""    targets = [str(node.target) for node in converted.graph.nodes if node.op == "call_function"]
    quantize = sum(t.startswith("quantized_decomposed.quantize_per_") for t in targets)
    dequantize = sum(t.startswith("quantized_decomposed.dequantize_per_") for t in targets)""",
                   """    qd = torch.ops.quantized_decomposed
    targets = [node.target for node in converted.graph.nodes if node.op == "call_function"]
    quantize = sum(t in (qd.quantize_per_tensor.default, qd.quantize_per_channel.default) for t in targets)
    dequantize = sum(t in (qd.dequantize_per_tensor.default, qd.dequantize_per_channel.default) for t in targets)"""),)),
    Mutant("qdq_counts", "returns (dequantize, quantize)", hint="quantize, dequantize), in that order",
           edits=(("    return quantize, dequantize", "    return dequantize, quantize"),)),
    Mutant("qdq_counts", "any op whose name has quantize_per_: the eager torch.quantize_per_tensor too",
           hint="count only quantized_decomposed ops",
           edits=(('    targets = [str(node.target) for node',
                   '    targets = [str(node.target).replace("quantized_decomposed.", "") for node'),
                  ('t.startswith("quantized_decomposed.quantize_per_")', '"quantize_per_" in t and "dequantize" not in t'),
                  ('t.startswith("quantized_decomposed.dequantize_per_")', '"dequantize_per_" in t'))),
]

ALTERNATIVES = [
    Alternative("prepare_pt2e_qat", "a static batch, a deep copy, keyword arguments", '''
def prepare_pt2e_qat(model, example_inputs):
    model = copy.deepcopy(model).train(True)
    program = torch.export.export(model, args=tuple(example_inputs))
    quantizer = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=True))
    return prepare_qat_pt2e(model=program.module(), quantizer=quantizer)
'''),
    Alternative("pt2e_fake_quant_count", "a dict of named modules, aliases kept, Graph.find_nodes", '''
from torchao.quantization.pt2e import fake_quantize

def pt2e_fake_quant_count(prepared):
    modules = dict(prepared.named_modules(remove_duplicate=False))
    calls = prepared.graph.find_nodes(op="call_module")
    return len([n for n in calls if isinstance(modules[n.target], fake_quantize.FakeQuantizeBase)])
'''),
    Alternative("pt2e_finetune", "itertools.cycle and islice, an nn.CrossEntropyLoss module", '''
import itertools

def pt2e_finetune(prepared, batches, steps, lr):
    optimizer = torch.optim.SGD(prepared.parameters(), lr=lr, momentum=0.0)
    criterion = nn.CrossEntropyLoss()
    for x, y in itertools.islice(itertools.cycle(batches), steps):
        optimizer.zero_grad(set_to_none=True)
        criterion(prepared(x), y).backward()
        optimizer.step()
    return prepared
'''),
    Alternative("to_qdq", "allow_exported_model_train_eval, then .eval(), and a converted deep copy", '''
from torchao.quantization.pt2e import allow_exported_model_train_eval

def to_qdq(prepared):
    allow_exported_model_train_eval(prepared)
    prepared.eval()
    return convert_pt2e(copy.deepcopy(prepared), fold_quantize=True)
'''),
    Alternative("qdq_counts", "Graph.find_nodes per target, the op's name matched by a regular expression", '''
import re

def qdq_counts(converted):
    graph = converted.graph
    targets = {node.target for node in graph.nodes if node.op == "call_function"}
    found = {"quantize": 0, "dequantize": 0}
    for target in targets:
        hit = re.fullmatch(r"quantized_decomposed\\.(de)?quantize_per_(tensor|channel)\\.\\w+", str(target))
        if hit:
            kind = "dequantize" if hit.group(1) else "quantize"
            found[kind] += len(graph.find_nodes(op="call_function", target=target))
    return (found["quantize"], found["dequantize"])
'''),
]
