"""Clauses of ex11_pt2e: prepare_pt2e_qat, pt2e_fake_quant_count, pt2e_finetune, to_qdq, qdq_counts."""
from fxcourse_instructor.clauses import Clause

CLAUSES = [
    Clause("prepare_pt2e_qat", "a QAT quantizer: fake-quants, not observers", ("QATNet() in train mode",
                                                                               "DropoutNet handed over in eval mode"),
           mutant="a quantizer configured without is_qat=True: observers, no fake-quant"),
    Clause("prepare_pt2e_qat", "exported in train mode (a model handed over in eval mode too)",
           ("DropoutNet handed over in eval mode",),
           mutant="exports the model in the mode it arrives in: an eval-mode dropout is frozen"),
    Clause("prepare_pt2e_qat", "an exported ATen graph, not a symbolic_trace one", ("QATNet() in train mode",
                                                                                    "DropoutNet handed over in eval mode"),
           mutant="lesson 07's capture: symbolic_trace instead of torch.export"),
    Clause("prepare_pt2e_qat", "the default config and no other option", ("QATNet() in train mode",
                                                                          "DropoutNet handed over in eval mode"),
           mutant="reduce_range=True, as lesson 07's x86 fake-quants had: activations over 0..127"),
    Clause("prepare_pt2e_qat", "prepared by prepare_qat_pt2e, not post-training prepare_pt2e",
           ("QATNet() in train mode", "DropoutNet handed over in eval mode"),
           mutant="post-training prepare_pt2e with the QAT config: right quantizer, wrong prepare"),
    Clause("prepare_pt2e_qat", "the exported program's runnable module, .module()", ("QATNet() in train mode",
                                                                                     "DropoutNet handed over in eval mode"),
           mutant="forgets .module(): hands the ExportedProgram to prepare_qat_pt2e"),
    Clause("prepare_pt2e_qat", "returned as prepare_qat_pt2e returns it: never run on data",
           ("QATNet() in train mode", "DropoutNet handed over in eval mode"),
           mutant="runs the prepared model once on the example inputs as a smoke test"),
    Clause("prepare_pt2e_qat", "returned ready to train, not moved to eval", ("QATNet() in train mode",
                                                                              "DropoutNet handed over in eval mode"),
           mutant="moves the prepared model to eval before returning it"),
    Clause("pt2e_fake_quant_count", "torchao's FakeQuantizeBase, not torch.ao's",
           ("QATNet prepared with prepare_qat_pt2e", "DropoutNet prepared"),
           mutant="lesson 07's class: torch.ao.quantization.FakeQuantizeBase"),
    Clause("pt2e_fake_quant_count", "by module type, not node name",
           ("QATNet prepared with a quantizer without is_qat=True",), mutant="matches node names instead of module types"),
    Clause("pt2e_fake_quant_count", "by isinstance, not by an attribute fake-quants have",
           ("a hand-built graph where every usual mistake", "another hand-built graph"),
           mutant="duck typing: any module with a fake_quant_enabled attribute"),
    Clause("pt2e_fake_quant_count", "a fake-quant called twice counts twice",
           ("a hand-built graph where every usual mistake", "another hand-built graph"),
           mutant="unique targets: a fake-quant called twice counts once"),
    Clause("pt2e_fake_quant_count", "_guards_fn and other modules do not count", ("QATNet exported, not prepared",),
           mutant="every call_module node, _guards_fn included"),
    Clause("pt2e_fake_quant_count", "the prepared model is left as it was", ("QATNet prepared with prepare_qat_pt2e",
                                                                             "DropoutNet prepared"),
           patch=("    return sum(", "    prepared.graph.call_function(torch.relu, (next(iter(prepared.graph.nodes)),))\n"
                                     "    return sum("), hint="must leave its inputs"),
    Clause("pt2e_finetune", "no .train() on an exported model", ("QATNet prepared, 3 batches", "DropoutNet prepared"),
           mutant="calls prepared.train() as lesson 07 did: an exported model raises"),
    Clause("pt2e_finetune", "exactly `steps` steps", ("QATNet prepared, 3 batches", "DropoutNet prepared"),
           mutant="one step too many"),
    Clause("pt2e_finetune", "batches are cycled", ("QATNet prepared, 2 batches cycled",),
           mutant="does not cycle: stops when the list runs out"),
    Clause("pt2e_finetune", "plain SGD", ("QATNet prepared, 3 batches", "DropoutNet prepared"),
           mutant="SGD with momentum"),
    Clause("pt2e_finetune", "no weight decay", ("QATNet prepared, 3 batches", "random model seed 47"),
           mutant="a small weight decay, 1e-4"),
    Clause("pt2e_finetune", "one batch per optimizer step", ("QATNet prepared, 3 batches", "DropoutNet prepared"),
           mutant="epochs: a pass over every batch in each step"),
    Clause("pt2e_finetune", "trained as it arrives: dropout trains", ("DropoutNet prepared",),
           mutant="moves the model to eval before training, as if calibrating"),
    Clause("pt2e_finetune", "left ready to train, not moved to eval", ("DropoutNet prepared",),
           mutant="trains right, then leaves the model in eval"),
    Clause("pt2e_finetune", "in place: returns prepared itself", ("QATNet prepared, 3 batches", "DropoutNet prepared"),
           mutant="trains a copy and returns it"),
    Clause("to_qdq", "moved to eval first: dropout stops", ("DropoutNet prepared and calibrated",),
           mutant="converts without moving to eval: dropout keeps training"),
    Clause("to_qdq", "converted: no fake-quant left", ("QATNet prepared and calibrated",
                                                       "DropoutNet prepared and calibrated"),
           mutant="no conversion: the fake-quant model moved to eval"),
    Clause("to_qdq", "convert_pt2e's defaults: weights folded", ("QATNet prepared and calibrated",
                                                                 "DropoutNet prepared and calibrated"),
           mutant="fold_quantize=False: the weights' quantize nodes stay in the graph"),
    Clause("to_qdq", "convert_pt2e's defaults: Q/DQ nodes, not the reference representation",
           ("QATNet prepared and calibrated", "DropoutNet prepared and calibrated"),
           mutant="use_reference_representation=True: integer arithmetic instead of Q/DQ around float ops"),
    Clause("to_qdq", "no run on new data before converting", ("QATNet prepared and calibrated",
                                                              "DropoutNet prepared and calibrated"),
           mutant="checks that the model still runs on the notebook's example inputs: the scales move"),
    Clause("qdq_counts", "per-channel nodes count", ("QATNet converted with convert_pt2e", "DropoutNet converted"),
           mutant="per-tensor ops only"),
    Clause("qdq_counts", "every overload counts", ("a hand-built graph: per-tensor and per-channel",
                                                   "a hand-built graph, three per-tensor rounds"),
           mutant="only the .default overloads, compared as objects"),
    Clause("qdq_counts", "quantize first, then dequantize", ("QATNet converted with convert_pt2e",
                                                             "DropoutNet converted"),
           mutant="returns (dequantize, quantize)"),
    Clause("qdq_counts", "only quantized_decomposed ops", ("a hand-built graph: per-tensor and per-channel",
                                                           "a hand-built graph, three per-tensor rounds"),
           mutant="any op whose name has quantize_per_: the eager torch.quantize_per_tensor too"),
    Clause("qdq_counts", "other quantized_decomposed ops (choose_qparams) are no quantize nodes",
           ("a hand-built graph: per-tensor and per-channel", "a hand-built graph, three per-tensor rounds"),
           mutant="every quantized_decomposed op but the dequantize ones counts as a quantize node"),
    Clause("qdq_counts", "nodes selected by target, not by name", ("a hand-built graph: per-tensor and per-channel",
                                                                   "a hand-built graph, three per-tensor rounds"),
           mutant="node names instead of targets"),
    Clause("qdq_counts", "a tuple, as the signature says", ("QATNet converted with convert_pt2e",
                                                            "DropoutNet converted"),
           mutant="returns a list"),
    # rules the answers written from the task text alone broke
    Clause("prepare_pt2e_qat", "dimension 0 of every input is dynamic: one spec per input", ("PairNet",),
           mutant="one input spec: Give one {0: Dim(...)} spec per input, not a single spec for the first input.",
           hint="dynamic_shapes has one entry per input"),
    Clause("pt2e_finetune", "no prepared.train(): on an exported model it raises", ("QATNet prepared, 3 batches",
                                                                                    "DropoutNet prepared"),
           mutant="calls train: Do not call prepared.train(); the prepared model is ready to train as it is.",
           hint="do not call prepared.train()"),
    Clause("to_qdq", "move to eval with move_exported_model_to_eval, not prepared.eval()", ("QATNet prepared",
                                                                                            "DropoutNet prepared and calibrated"),
           mutant="calls eval: prepared.eval() raises on an exported model: use move_exported_model_to_eval.",
           hint="prepared.eval() raises on an exported model"),
    Clause("to_qdq", "return the converted GraphModule convert_pt2e returns", ("QATNet prepared",
                                                                               "DropoutNet prepared and calibrated"),
           mutant="returns prepared: Return what convert_pt2e returns (a new module), not prepared.",
           hint="return the GraphModule convert_pt2e returns"),
    Clause("qdq_counts", "nodes are selected by target, a node's name is only a label", ("QATNet converted",
                                                                                         "DropoutNet converted"),
           mutant="by name: Use node.target, not node.name: a node named quantize_scale is not a quantize node.",
           hint="select nodes by target, not by name"),
]

# Rules the task-text audit found with no clause.
CLAUSES += [
    Clause("pt2e_fake_quant_count", "any GraphModule: a fake-quant inside a submodule (a dotted target) counts",
           ("a hand-built graph with fake-quants in a submodule",),
           mutant="getattr(prepared, target) with a default: a fake-quant below the root, called as 'blk.fq', is "
                  "never found"),
    Clause("qdq_counts", "the eager quantize is no Q/DQ node, as an ATen op too (aten.quantize_per_tensor)",
           ("a hand-built graph with aten.quantize_per_tensor.default",),
           mutant="'.quantize_per' anywhere in the target's text: aten.quantize_per_tensor too"),
    Clause("pt2e_fake_quant_count", "nodes, not modules: a registered module no node calls does not count",
           ("a hand-built graph where every usual mistake", "another hand-built graph"),
           mutant="counts modules, not nodes"),
    Clause("pt2e_fake_quant_count", "observers are not fake-quantize modules",
           ("QATNet prepared with a quantizer without is_qat=True",), mutant="observers count too"),
    Clause("pt2e_finetune", "the loss is the mean cross-entropy of prepared(x) and y", ("QATNet prepared, 3 batches",
                                                                                        "DropoutNet prepared"),
           mutant="sums the loss over the batch"),
    Clause("pt2e_finetune", "one forward pass per step", ("QATNet prepared, 3 batches", "DropoutNet prepared"),
           mutant="an extra forward pass per step to print the loss"),
    Clause("pt2e_finetune", "SGD over all of prepared.parameters()", ("QATNet prepared, 3 batches",
                                                                      "DropoutNet prepared"),
           mutant="only the weights are trained, not the biases"),
    Clause("pt2e_finetune", "only the first `steps` batches when steps < len(batches)", ("random model seed 47, 5 batches",),
           patch=("    for step in range(steps):", "    for step in range(max(steps, len(batches))):")),
    Clause("pt2e_finetune", "steps == 0 changes nothing", ("QATNet prepared, steps=0",),
           patch=("    for step in range(steps):", "    for step in range(max(steps, 1)):")),
    Clause("qdq_counts", "converted is only read", ("QATNet converted with convert_pt2e", "DropoutNet converted"),
           patch=("    targets = [", "    for t in list(converted.parameters()) + list(converted.buffers()):\n"
                  "        if t.is_floating_point():\n            t.data.add_(1.0)\n    targets = ["),
           hint="must leave its inputs"),
]

# The task text, sentence by sentence: the rules of the clauses that check it, or why it is no rule.
TASK_TEXT = {
    '*': {
        'After lesson 11 you can take a model through PT2E quantization-aware training: export it for training, '
        'annotate and prepare it with `X86InductorQuantizer` configured for QAT, fine-tune it, switch it to eval '
        'with `move_exported_model_to_eval` and convert it with `convert_pt2e` into the quantize/dequantize (Q/DQ) '
        'representation.':
            "what the lesson taught, the motivation",
        "Here you write those steps as five small functions, the PT2E counterparts of exercise 07's.":
            "what the notebook holds",
        "torch and torchao may print warnings and log lines here (lesson 11's first cell names them).":
            "what the learner will see, no rule of a graded function",
        'They never cost points: the checks ignore warnings.':
            "what grading ignores, no rule of a graded function",
        'Exporting and preparing take a moment; the checks use small models.':
            "what the learner will see, no rule of a graded function",
    },
    'prepare_pt2e_qat': {
        '## 1. `prepare_pt2e_qat(model, example_inputs) -> GraphModule`':
            ("prepared by prepare_qat_pt2e, not post-training prepare_pt2e",),
        'Export `model` for training and prepare it for QAT on x86, as lesson 11 does:':
            ("an exported ATen graph, not a symbolic_trace one", "the default config and no other option"),
        'export the model **in train mode** (it may be handed to you in eval mode): `torch.export.export` freezes '
        'the mode it sees, and QAT trains the result; take the runnable module with `.module()`;':
            ('exported in train mode (a model handed over in eval mode too)',
             "the exported program's runnable module, .module()", 'an exported ATen graph, not a symbolic_trace one'),
        'annotate with an `X86InductorQuantizer` whose global config is '
        '`get_default_x86_inductor_quantization_config(is_qat=True)` (no other option);':
            ("a QAT quantizer: fake-quants, not observers", "the default config and no other option"),
        "prepare with `prepare_qat_pt2e` (not post-training's `prepare_pt2e`) and return what it returns, as it "
        "returns it: ready to train, never run on data (a forward pass fills the fake-quants' statistics) and not "
        'moved to eval.':
            ('prepared by prepare_qat_pt2e, not post-training prepare_pt2e',
             'returned as prepare_qat_pt2e returns it: never run on data',
             'returned ready to train, not moved to eval'),
        'Make dimension 0 of every input dynamic with `Dim`, as lesson 11 does, so that the prepared model trains '
        'and runs on batches of any size (a static batch is accepted too: the checks run the result on the example '
        'inputs only, but then it runs on that batch size alone).':
            ("dimension 0 of every input is dynamic: one spec per input",),
        'It is fine for the result to share parameters with `model`, and for `model` to be left in train mode.':
            "a freedom, not a constraint",
        'model exported in train mode and prepared for QAT with X86InductorQuantizer.':
            ('exported in train mode (a model handed over in eval mode too)',
             'a QAT quantizer: fake-quants, not observers'),
    },
    'pt2e_fake_quant_count': {
        '## 2. `pt2e_fake_quant_count(prepared) -> int`':
            ("nodes, not modules: a registered module no node calls does not count",),
        'Return the number of `call_module` nodes of `prepared.graph` whose module is a fake-quantize module, that '
        "is an instance of **torchao's** `torchao.quantization.pt2e.FakeQuantizeBase` (the base class of the "
        'fake-quants PT2E inserts: `FusedMovingAvgObsFakeQuantize`, `FakeQuantize`, `FixedQParamsFakeQuantize`, '
        '...).':
            ("torchao's FakeQuantizeBase, not torch.ao's", 'by isinstance, not by an attribute fake-quants have',
             'nodes, not modules: a registered module no node calls does not count'),
        'It is not `torch.ao.quantization.FakeQuantizeBase` of lesson 07: torchao has its own classes.':
            ("torchao's FakeQuantizeBase, not torch.ao's",),
        'Count nodes, not modules: a module called from two nodes counts twice, and a registered module no node '
        'calls does not count.':
            ('nodes, not modules: a registered module no node calls does not count',
             'a fake-quant called twice counts twice'),
        "Observers are not fake-quantize modules, an exported module also calls `_guards_fn`, and neither a node's "
        'name nor a class name proves anything: test `isinstance`.':
            ('observers are not fake-quantize modules', '_guards_fn and other modules do not count',
             'by module type, not node name', 'by isinstance, not by an attribute fake-quants have'),
        'Any `GraphModule` may be passed, prepared or not; it is only read.':
            ('_guards_fn and other modules do not count', 'observers are not fake-quantize modules',
             'the prepared model is left as it was',
             'any GraphModule: a fake-quant inside a submodule (a dotted target) counts'),
        'Number of call_module nodes whose module is a torchao FakeQuantizeBase.':
            ("torchao's FakeQuantizeBase, not torch.ao's",
             'nodes, not modules: a registered module no node calls does not count'),
    },
    'pt2e_finetune': {
        '## 3. `pt2e_finetune(prepared, batches, steps, lr) -> GraphModule`':
            ("in place: returns prepared itself",),
        'Fine-tune the prepared model **in place** and return it (the same object):':
            ("in place: returns prepared itself",),
        '`batches` is a list of `(x, y)` tuples: `x` a float input batch, `y` the class labels (int64);':
            ("the loss is the mean cross-entropy of prepared(x) and y",),
        'do exactly `steps` optimizer steps; step `i` uses `batches[i % len(batches)]` (the list is cycled when '
        '`steps > len(batches)`, and only its first `steps` items are used when `steps < len(batches)`);':
            ('exactly `steps` steps', 'batches are cycled', 'one batch per optimizer step',
             'only the first `steps` batches when steps < len(batches)'),
        'optimizer: plain `torch.optim.SGD(prepared.parameters(), lr=lr)` (no momentum, no weight decay);':
            ("plain SGD", "no weight decay", "SGD over all of prepared.parameters()"),
        'loss: `F.cross_entropy(prepared(x), y)` (mean over the batch); one forward pass per step;':
            ("the loss is the mean cross-entropy of prepared(x) and y", "one forward pass per step"),
        '`steps == 0` changes nothing;':
            ("steps == 0 changes nothing",),
        'leave the model as ready to train as it arrived: no `move_exported_model_to_eval`, before, during or after '
        'training (`to_qdq` does that).':
            ("trained as it arrives: dropout trains", "left ready to train, not moved to eval"),
        'The model arrives as `prepare_qat_pt2e` left it, ready to train.':
            ("trained as it arrives: dropout trains",),
        'Do not call `prepared.train()`: on an exported model it raises (lesson 11, section 6); '
        '`move_exported_model_to_train` is the PT2E way, and not needed here.':
            ("no .train() on an exported model", "no prepared.train(): on an exported model it raises"),
        'Every forward pass updates the fake-quant statistics, so an extra pass "just to print the loss" changes the '
        'model.':
            ("one forward pass per step",),
        '`steps` steps of SGD on cross-entropy, cycling through `batches`; in place.':
            ("exactly `steps` steps", "plain SGD", "batches are cycled", "in place: returns prepared itself"),
    },
    'to_qdq': {
        '## 4. `to_qdq(prepared) -> GraphModule`':
            ("return the converted GraphModule convert_pt2e returns",),
        'Move a prepared (and trained) model to eval with `move_exported_model_to_eval` and convert it with '
        '`convert_pt2e`; return the converted `GraphModule`.':
            ('moved to eval first: dropout stops',
             'move to eval with move_exported_model_to_eval, not prepared.eval()', 'converted: no fake-quant left',
             'return the converted GraphModule convert_pt2e returns'),
        'It runs no fake-quantize module any more, its graph has quantize/dequantize nodes (`quantized_decomposed` '
        "ops) around float ATen ops, it computes with dropout off, and it gives what the reference's converted model "
        'gives on data like the data the model has seen.':
            ('converted: no fake-quant left', "convert_pt2e's defaults: Q/DQ nodes, not the reference representation",
             'moved to eval first: dropout stops'),
        'Use the defaults of `convert_pt2e`.':
            ("convert_pt2e's defaults: weights folded",
             "convert_pt2e's defaults: Q/DQ nodes, not the reference representation"),
        'Do not run the prepared model on new data first: its fake-quants would move their scales.':
            ("no run on new data before converting",),
        '`prepared` is changed by both calls (that is how they work), and may be.':
            "a freedom, not a constraint",
        'The Q/DQ model converted from `prepared`, moved to eval first.':
            ("converted: no fake-quant left", "moved to eval first: dropout stops"),
    },
    'qdq_counts': {
        '## 5. `qdq_counts(converted) -> tuple[int, int]`':
            ("a tuple, as the signature says",),
        'Return `(number of quantize nodes, number of dequantize nodes)` of `converted.graph`: the `call_function` '
        'nodes whose target is a `quantized_decomposed` quantize or dequantize op, per-tensor and per-channel, in '
        'every overload (`quantize_per_tensor.default`, `quantize_per_tensor.tensor`, '
        '`dequantize_per_channel.default`, ...).':
            ('quantize first, then dequantize', 'per-channel nodes count', 'every overload counts',
             'only quantized_decomposed ops'),
        '`str(node.target)` of such a node reads `"quantized_decomposed.quantize_per_tensor.default"`.':
            "an example of the rule before it",
        'Other functions are not Q/DQ nodes, even when their name contains "quantize" (the eager '
        '`torch.quantize_per_tensor`, a node someone named `quantize_scale`), and neither are the other '
        '`quantized_decomposed` ops, such as the `choose_qparams` ops that dynamic quantization computes its scales '
        'with.':
            ('only quantized_decomposed ops', 'other quantized_decomposed ops (choose_qparams) are no quantize nodes',
             'nodes selected by target, not by name',
             'the eager quantize is no Q/DQ node, as an ATen op too (aten.quantize_per_tensor)'),
        "Select nodes by target: a node's name is only a label.":
            ("nodes selected by target, not by name", "nodes are selected by target, a node's name is only a label"),
        'Return a tuple of two ints.':
            ("a tuple, as the signature says",),
        '`converted` is only read.':
            ("converted is only read",),
        '(quantize nodes, dequantize nodes): quantized_decomposed ops, per tensor and per channel.':
            ("quantize first, then dequantize", "per-channel nodes count", "only quantized_decomposed ops"),
    },
}
