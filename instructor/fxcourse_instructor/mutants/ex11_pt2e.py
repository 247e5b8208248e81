"""Mutants and alternatives of ex11_pt2e.

The setup cell of the exercise imports copy, warnings, torch, fx, nn, F, Dim, export, QATNet, node_table and,
from torchao.quantization.pt2e, FakeQuantizeBase, move_exported_model_to_eval, move_exported_model_to_train,
convert_pt2e, prepare_qat_pt2e, X86InductorQuantizer and get_default_x86_inductor_quantization_config; sources
below import anything else they use, as a learner would.
"""
from fxcourse_instructor.mutants import Alternative, Mutant, from_task_text

CONFIG = "get_default_x86_inductor_quantization_config(is_qat=True)"
RETURN_PREPARED = "    return prepare_qat_pt2e(exported, quantizer)"
FQ_TEST = "isinstance(prepared.get_submodule(node.target), FakeQuantizeBase)"
COUNT_NODES = """    return sum(1 for node in prepared.graph.nodes
               if node.op == "call_module"
               and isinstance(prepared.get_submodule(node.target), FakeQuantizeBase))"""
STEP_BODY = """        x, y = batches[step % len(batches)]
        optimizer.zero_grad()
        loss = F.cross_entropy(prepared(x), y)
        loss.backward()
        optimizer.step()"""
TARGETS = 'targets = [str(node.target) for node in converted.graph.nodes if node.op == "call_function"]'


# Written from the task text alone, by someone who had not read the checks (mutants/task_text/).
_TASK_TEXT_MUTANTS, _TASK_TEXT_ALTERNATIVES = from_task_text("ex11_pt2e")

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

    # found by trying wrong answers from outside
    Mutant("prepare_pt2e_qat", "forgets .module(): hands the ExportedProgram to prepare_qat_pt2e",
           hint="not the ExportedProgram itself",
           edits=(("dynamic_shapes=dynamic).module()", "dynamic_shapes=dynamic)"),)),
    Mutant("prepare_pt2e_qat", "post-training prepare_pt2e with the QAT config: right quantizer, wrong prepare",
           hint="prepare with prepare_qat_pt2e", not_hints=("is_qat=True",),
           edits=((RETURN_PREPARED, "    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n"
                                    "    return prepare_pt2e(exported, quantizer)"),)),
    Mutant("prepare_pt2e_qat", "wraps the example inputs in another tuple", hint="not wrapped in another tuple",
           edits=(("export(model.train(), example_inputs,", "export(model.train(), (example_inputs,),"),
                  ("dynamic = tuple(batch for _ in example_inputs)", "dynamic = ((batch,),)"))),
    Mutant("prepare_pt2e_qat", "runs the prepared model once on the example inputs as a smoke test",
           hint="without running it", not_hints=("with its weights as they are",),
           edits=((RETURN_PREPARED, "    prepared = prepare_qat_pt2e(exported, quantizer)\n"
                                    "    prepared(*example_inputs)\n    return prepared"),)),
    Mutant("prepare_pt2e_qat", "moves the prepared model to eval before returning it", hint="ready to train",
           not_hints=("no other option", "export the model in train mode"),
           edits=((RETURN_PREPARED, "    prepared = prepare_qat_pt2e(exported, quantizer)\n"
                                    "    move_exported_model_to_eval(prepared)\n    return prepared"),)),
    Mutant("prepare_pt2e_qat", "torch.ao's X86InductorQuantizer, which torch no longer ships",
           hint="import it from torchao.quantization.pt2e",
           edits=((f"    quantizer = X86InductorQuantizer()\n    quantizer.set_global({CONFIG})",
                   "    import torch.ao.quantization.quantizer.x86_inductor_quantizer as xiq\n"
                   "    quantizer = xiq.X86InductorQuantizer()\n"
                   "    quantizer.set_global(xiq.get_default_x86_inductor_quantization_config(is_qat=True))"),)),

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

    # found by trying wrong answers from outside
    Mutant("pt2e_fake_quant_count", "'FakeQuantize' in the class name", hint="a class name says nothing",
           edits=((FQ_TEST, '"FakeQuantize" in type(prepared.get_submodule(node.target)).__name__'),)),
    Mutant("pt2e_fake_quant_count", "duck typing: any module with a fake_quant_enabled attribute",
           hint="an attribute such as fake_quant_enabled proves nothing",
           not_hints=("observers are not fake-quantize modules",),
           edits=((FQ_TEST, 'hasattr(prepared.get_submodule(node.target), "fake_quant_enabled")'),)),
    Mutant("pt2e_fake_quant_count", "deletes the unused submodules, then counts modules", hint="count nodes",
           edits=((COUNT_NODES, "    prepared.delete_all_unused_submodules()\n"
                                "    return sum(isinstance(m, FakeQuantizeBase) for m in prepared.modules())"),)),
    Mutant("pt2e_fake_quant_count", "deletes the unused submodules, then counts the nodes right",
           hint="must leave its inputs", not_hints=("count call_module nodes, not modules",),
           edits=(("    return sum(1 for node", "    prepared.delete_all_unused_submodules()\n"
                                              "    return sum(1 for node"),)),
    Mutant("pt2e_fake_quant_count", "getattr(prepared, target) with a default: a fake-quant below the root, "
           "called as 'blk.fq', is never found", hint="dotted path",
           edits=((FQ_TEST, "isinstance(getattr(prepared, node.target, None), FakeQuantizeBase)"),)),
    Mutant("pt2e_fake_quant_count", "getattr(prepared, target): a dotted target raises AttributeError",
           hint="get_submodule", edits=((FQ_TEST, "isinstance(getattr(prepared, node.target), FakeQuantizeBase)"),)),

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

    # found by trying wrong answers from outside
    Mutant("pt2e_finetune", "zero_grad between backward and step: every update is zero",
           hint="each step zero_grad, loss.backward(), optimizer.step()",
           edits=(("        optimizer.zero_grad()\n", ""),
                  ("        loss.backward()\n", "        loss.backward()\n        optimizer.zero_grad()\n"))),
    Mutant("pt2e_finetune", "step before backward: each step applies no gradient",
           hint="each step zero_grad, loss.backward(), optimizer.step()",
           edits=(("        loss.backward()\n        optimizer.step()",
                   "        optimizer.step()\n        loss.backward()"),)),
    Mutant("pt2e_finetune", "epochs: a pass over every batch in each step", hint="not a pass over every batch per step",
           edits=((STEP_BODY, """        for x, y in batches:
            optimizer.zero_grad()
            loss = F.cross_entropy(prepared(x), y)
            loss.backward()
            optimizer.step()"""),)),
    Mutant("pt2e_finetune", "one step whatever steps says", hint="not a single one",
           edits=(("for step in range(steps)", "for step in range(min(steps, 1))"),)),
    Mutant("pt2e_finetune", "batches[step] without the modulo: an IndexError past the list",
           hint="batches[i % len(batches)]", edits=(("batches[step % len(batches)]", "batches[step]"),)),
    Mutant("pt2e_finetune", "nll_loss on the logits, without log_softmax", hint="F.cross_entropy(prepared(x), y)",
           edits=(("F.cross_entropy(prepared(x), y)", "F.nll_loss(prepared(x), y)"),)),
    Mutant("pt2e_finetune", "a random batch each step", hint="batches[i % len(batches)]",
           edits=(("        x, y = batches[step % len(batches)]",
                   "        import random\n        x, y = random.choice(batches)"),)),
    Mutant("pt2e_finetune", "a small weight decay, 1e-4", hint="without weight_decay",
           not_hints=("return prepared itself", "zero the gradients every step"),
           edits=(("lr=lr)", "lr=lr, weight_decay=1e-4)"),)),
    Mutant("pt2e_finetune", "a large weight decay, 0.03", hint="without weight_decay",
           edits=(("lr=lr)", "lr=lr, weight_decay=0.03)"),)),
    Mutant("pt2e_finetune", "only the weights are trained, not the biases", hint="prepared.parameters()",
           edits=(("torch.optim.SGD(prepared.parameters(), lr=lr)",
                   'torch.optim.SGD([p for n, p in prepared.named_parameters() if "weight" in n], lr=lr)'),)),
    Mutant("pt2e_finetune", "returns the last loss", hint="return prepared itself",
           edits=(("    return prepared", "    return loss"),)),
    Mutant("pt2e_finetune", "moves the model to eval before training, as if calibrating",
           hint="train the model as it arrives", not_hints=("each step: x, y = batches",), edits=(("    optimizer = torch.optim.SGD(",
                                                          "    move_exported_model_to_eval(prepared)\n"
                                                          "    optimizer = torch.optim.SGD("),)),
    Mutant("pt2e_finetune", "trains right, then leaves the model in eval", hint="leave prepared ready to train",
           not_hints=("each step: x, y = batches",),
           edits=(("    return prepared", "    move_exported_model_to_eval(prepared)\n    return prepared"),)),

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

    # found by trying wrong answers from outside
    Mutant("to_qdq", "use_reference_representation=True: integer arithmetic instead of Q/DQ around float ops",
           hint="default options", not_hints=("call move_exported_model_to_eval", "do not run the prepared model"),
           edits=(("convert_pt2e(prepared)", "convert_pt2e(prepared, use_reference_representation=True)"),)),
    Mutant("to_qdq", "torch.ao's convert_pt2e, which torch no longer ships",
           hint="import it from torchao.quantization.pt2e",
           edits=(("    return convert_pt2e(prepared)",
                   "    from torch.ao.quantization.quantize_pt2e import convert_pt2e as ao_convert_pt2e\n"
                   "    return ao_convert_pt2e(prepared)"),)),
    Mutant("to_qdq", "converts a deep copy and returns the prepared model", hint="return the GraphModule it returns",
           not_hints=("call move_exported_model_to_eval",),
           edits=(("    return convert_pt2e(prepared)",
                   "    convert_pt2e(copy.deepcopy(prepared))\n    return prepared"),)),

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
    # found by trying wrong answers from outside
    Mutant("qdq_counts", "node names instead of targets", hint="select nodes by target, not by name",
           edits=((TARGETS, 'names = [node.name for node in converted.graph.nodes if node.op == "call_function"]'),
                  ('quantize = sum(t.startswith("quantized_decomposed.quantize_per_") for t in targets)',
                   'quantize = sum(n.startswith("quantize_per_") for n in names)'),
                  ('dequantize = sum(t.startswith("quantized_decomposed.dequantize_per_") for t in targets)',
                   'dequantize = sum(n.startswith("dequantize_per_") for n in names)'))),
    Mutant("qdq_counts", "every quantized_decomposed op but the dequantize ones counts as a quantize node",
           hint="choose_qparams", not_hints=("'quantize' is a substring",),
           edits=(('quantize = sum(t.startswith("quantized_decomposed.quantize_per_") for t in targets)',
                   'quantize = sum(t.startswith("quantized_decomposed.") and "dequantize" not in t\n'
                   '                   for t in targets)'),)),
    Mutant("qdq_counts", "distinct targets instead of nodes", hint="not distinct targets",
           edits=((TARGETS, 'targets = list({str(node.target) for node in converted.graph.nodes '
                            'if node.op == "call_function"})'),)),
    Mutant("qdq_counts", "'.quantize_per' anywhere in the target's text: aten.quantize_per_tensor too",
           hint="eager quantize as an ATen op",
           edits=(('t.startswith("quantized_decomposed.quantize_per_")', '".quantize_per" in t'),
                  ('t.startswith("quantized_decomposed.dequantize_per_")', '".dequantize_per" in t'))),
    Mutant("qdq_counts", "returns a list", hint="return a tuple", not_hints=("in that order",),
           edits=(("    return quantize, dequantize", "    return [quantize, dequantize]"),)),
] + _TASK_TEXT_MUTANTS


# Right by the task text ("move_exported_model_to_train is the PT2E way, and not needed here"): its dropout draws
# its masks through the ops move_exported_model_to_train puts in, so its numbers are its own, not the loop's
_TO_TRAIN = Alternative("pt2e_finetune", "moves the model to train mode the PT2E way first, though not needed", '''
import torch
import torch.nn.functional as F
from torchao.quantization.pt2e import move_exported_model_to_train


def pt2e_finetune(prepared, batches, steps, lr):
    move_exported_model_to_train(prepared)
    opt = torch.optim.SGD(prepared.parameters(), lr=lr)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        F.cross_entropy(prepared(x), y).backward()
        opt.step()
    return prepared
''')

ALTERNATIVES = [
    Alternative("prepare_pt2e_qat", "a static batch, a deep copy, keyword arguments", '''
def prepare_pt2e_qat(model, example_inputs):
    model = copy.deepcopy(model).train(True)
    program = torch.export.export(model, args=tuple(example_inputs))
    quantizer = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=True))
    return prepare_qat_pt2e(model=program.module(), quantizer=quantizer)
'''),
    Alternative("prepare_pt2e_qat", "Dim.AUTO batches, the caller's mode given back, the config named first", '''
def prepare_pt2e_qat(model, example_inputs):
    was_training = model.training
    model.train()
    try:
        program = export(model, tuple(example_inputs), dynamic_shapes=[{0: Dim.AUTO} for _ in example_inputs])
    finally:
        model.train(was_training)
    qat_config = get_default_x86_inductor_quantization_config(is_qat=True)
    quantizer = X86InductorQuantizer()
    quantizer.set_global(qat_config)
    return prepare_qat_pt2e(program.module(), quantizer)
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
    Alternative("pt2e_finetune", "each forward pass run node by node by torch.fx.Interpreter", '''
def pt2e_finetune(prepared, batches, steps, lr):
    optimizer = torch.optim.SGD(prepared.parameters(), lr=lr)
    interpreter = fx.Interpreter(prepared)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        logits = interpreter.run(x)
        optimizer.zero_grad()
        F.cross_entropy(logits, y).backward()
        optimizer.step()
    return prepared
'''),
    Alternative("to_qdq", "converted first, then the converted graph moved to eval", '''
def to_qdq(prepared):
    converted = convert_pt2e(prepared)
    move_exported_model_to_eval(converted)
    return converted
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
] + _TASK_TEXT_ALTERNATIVES + [_TO_TRAIN]
