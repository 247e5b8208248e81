"""Clauses of ex07_qat: prepare_for_qat, fake_quant_count, qat_finetune, to_int8, state_dict_bytes."""
from fxcourse_instructor.clauses import Clause

CLAUSES = [
    Clause("prepare_for_qat", "a model handed over in eval mode is prepared in train mode", ("Net().eval()",
                                                                                             "ConvBNNet in eval mode"),
           mutant="forgets model.train(): a model handed over in eval mode stays in eval mode"),
    Clause("prepare_for_qat", "the QAT mapping and prepare_qat_fx", ("QATNet() (train mode)", "ConvBNNet in eval mode"),
           mutant="prepare_fx (post-training) with the QAT mapping: no QAT modules"),
    Clause("prepare_for_qat", "the backend option is used", ("QATNet with backend='qnnpack'",),
           mutant="ignores backend: always x86"),
    Clause("prepare_for_qat", "train mode before tracing (F.dropout reads self.training)", ("DropoutNet in eval mode",),
           mutant="traces first, sets train mode afterwards: F.dropout(training=False) is frozen"),
    Clause("prepare_for_qat", "the default mapping: fixed qparams for sigmoid/tanh", ("random model seed 47",),
           mutant="a mapping with only a global qconfig: sigmoid/tanh lose their fixed qparams"),
    Clause("fake_quant_count", "by module type, not node name", ("a hand-built graph: one fake-quant called twice",),
           mutant="matches node names instead of module types"),
    Clause("fake_quant_count", "nodes, not modules", ("QATNet prepared for QAT", "ConvBNNet prepared for QAT"),
           mutant="counts modules, so weight_fake_quant inside QAT layers counts too"),
    Clause("fake_quant_count", "every FakeQuantizeBase subclass", ("QATNet prepared for QAT",
                                                                   "ConvBNNet prepared for QAT"),
           mutant="exact class FakeQuantize: misses FusedMovingAvgObsFakeQuantize"),
    Clause("fake_quant_count", "observers are not fake-quants", ("QATNet prepared with prepare_fx",),
           mutant="observers count too"),
    Clause("fake_quant_count", "a fake-quant called twice counts twice", ("a hand-built graph: one fake-quant called twice",),
           mutant="unique targets: a fake-quant called twice counts once"),
    Clause("fake_quant_count", "a class name says nothing: isinstance FakeQuantizeBase",
           ("a hand-built graph: a FakeQuantizeBase subclass named RoundTrip",),
           patch=("isinstance(prepared.get_submodule(node.target), FakeQuantizeBase)",
                  "'FakeQuantize' in type(prepared.get_submodule(node.target)).__name__"), hint="class name"),
    Clause("fake_quant_count", "the prepared model is left as it was", ("QATNet prepared for QAT",
                                                                        "ConvBNNet prepared for QAT"),
           patch=("    return sum(", "    prepared.eval()\n    return sum("), hint="must leave its inputs"),
    Clause("qat_finetune", "exactly `steps` steps", ("QATNet(16, 32, 4), 3 batches, steps=5",
                                                     "ConvBNNet handed over in eval mode"), mutant="one step too many"),
    Clause("qat_finetune", "batches are cycled", ("random model, 2 batches cycled",),
           mutant="does not cycle: stops when the list runs out"),
    Clause("qat_finetune", "gradients are zeroed every step", ("QATNet(16, 32, 4), 3 batches, steps=5",
                                                               "ConvBNNet handed over in eval mode"),
           mutant="never zeroes the gradients"),
    Clause("qat_finetune", "SGD", ("QATNet(16, 32, 4), 3 batches, steps=5", "ConvBNNet handed over in eval mode"),
           mutant="Adam instead of SGD"),
    Clause("qat_finetune", "a model handed over in eval mode trains in train mode", ("ConvBNNet handed over in eval mode",),
           mutant="forgets prepared.train(): a model handed over in eval mode trains in eval mode"),
    Clause("qat_finetune", "in place: returns prepared itself", ("QATNet(16, 32, 4), 3 batches, steps=5",
                                                                 "ConvBNNet handed over in eval mode"),
           mutant="trains a copy and returns it"),
    Clause("qat_finetune", "the lr option is used", ("QATNet(16, 32, 4), 3 batches, steps=5",
                                                     "ConvBNNet handed over in eval mode"),
           mutant="a hard-coded learning rate"),
    Clause("to_int8", "in eval mode", ("QATNet prepared and calibrated, handed over in train mode",
                                       "ConvBNNet prepared and calibrated"),
           mutant="forgets eval mode"),
    Clause("to_int8", "converted, not fake-quant", ("QATNet prepared and calibrated",
                                                    "ConvBNNet prepared and calibrated"),
           mutant="no conversion: the fake-quant model in eval mode"),
    Clause("to_int8", "what convert_fx returns", ("QATNet prepared and calibrated",
                                                  "ConvBNNet prepared and calibrated"),
           mutant="ignores what convert_fx returns"),
    Clause("to_int8", "the prepared model is left as it was (convert a copy)",
           ("QATNet prepared and calibrated, handed over in train mode", "ConvBNNet prepared and calibrated"),
           patch=("convert_fx(copy.deepcopy(prepared).eval())", "convert_fx(prepared.eval())"),
           hint="must leave its inputs"),
    Clause("state_dict_bytes", "torch.save of the state_dict, not the model", ("QATNet (fp32)",
                                                                               "a model with buffers and no parameters"),
           mutant="saves the whole model"),
    Clause("state_dict_bytes", "buffers count", ("a model with buffers and no parameters",),
           mutant="bytes of the parameters only"),
    Clause("state_dict_bytes", "an int of bytes", ("QATNet (fp32)", "a model with buffers and no parameters"),
           mutant="kilobytes as a float"),
    Clause("state_dict_bytes", "torch.save, not pickle", ("QATNet (fp32)", "a model with buffers and no parameters"),
           mutant="pickle instead of torch.save"),
]

# Rules the task-text audit found with no clause.
CLAUSES += [
    Clause("qat_finetune", "only the first `steps` batches when steps < len(batches)", ("QATNet(8, 16, 3), 5 batches",),
           mutant="one pass over the list, ignoring steps"),
    Clause("qat_finetune", "no momentum, no weight decay", ("QATNet(16, 32, 4), 3 batches, steps=5",
                                                            "ConvBNNet handed over in eval mode"), mutant="momentum"),
    Clause("qat_finetune", "the loss is F.cross_entropy", ("QATNet(16, 32, 4), 3 batches, steps=5",
                                                           "ConvBNNet handed over in eval mode"),
           mutant="mean squared error on one-hot labels"),
    Clause("qat_finetune", "the loss is the mean over the batch", ("QATNet(16, 32, 4), 3 batches, steps=5",
                                                                   "ConvBNNet handed over in eval mode"),
           mutant="sum loss"),
    Clause("qat_finetune", "one forward pass per step", ("QATNet(16, 32, 4), 3 batches, steps=5",
                                                         "ConvBNNet handed over in eval mode"),
           mutant="prints the loss with an extra forward pass per step"),
    Clause("qat_finetune", "left in train mode", ("QATNet(16, 32, 4), 3 batches, steps=5",
                                                  "ConvBNNet handed over in eval mode"),
           mutant="switches to eval mode at the end"),
    Clause("qat_finetune", "steps == 0 changes nothing but the mode", ("QATNet(8, 16, 3), steps=0",),
           patch=("    for step in range(steps):", "    for step in range(max(steps, 1)):")),
    Clause("to_int8", "no run on new data before converting", ("QATNet prepared and calibrated",
                                                               "random model seed 19"),
           mutant="runs the copy once on the check's input in eval mode before converting it"),
    Clause("state_dict_bytes", "into an in-memory io.BytesIO, not a file", ("QATNet (fp32)",
                                                                            "a model with buffers and no parameters"),
           mutant="saves to a file and measures the file"),
    Clause("state_dict_bytes", "model is only read", ("QATNet (fp32)", "tied weights"),
           patch=("    buf = io.BytesIO()", "    for p in model.parameters():\n        p.data.add_(1.0)\n    buf = io.BytesIO()"),
           hint="must leave its inputs"),
]

# Rules of wrong answers written from the task text alone that the cases did not catch at first.
CLAUSES += [
    Clause("fake_quant_count", "only call_module nodes: a call_function fake_quantize op is no module",
           ("a hand-built graph: a fake-quant at the nested target 'sub.fq'",),
           mutant="also counts call_function fake_quantize ops"),
    Clause("fake_quant_count", "the module of the node's whole target (a fake-quant inside a submodule)",
           ("a hand-built graph: a fake-quant at the nested target 'sub.fq'",),
           mutant="looks each module up by the first part of its target: misses 'sub.fq'"),
    Clause("fake_quant_count", "an instance of FakeQuantizeBase, not a module with a fake-quant's attributes",
           ("a hand-built graph: a fake-quant at the nested target 'sub.fq'",),
           mutant="tests for a fake_quant_enabled attribute instead of isinstance"),
    Clause("qat_finetune", "train mode first, also when steps == 0",
           ("QATNet(8, 16, 3) handed over in eval mode, steps=0",),
           mutant="returns at once when steps == 0, before prepared.train()"),
    Clause("qat_finetune", "each step's gradient is its own loss's (gradients held on arrival are not stepped on)",
           ("QATNet(8, 16, 3) holding the gradients of an earlier loss.backward()",),
           mutant="zeroes the gradients after each step instead of before it"),
    Clause("qat_finetune", "plain SGD: the gradients as they are, not clipped",
           ("QATNet(8, 16, 3) on inputs a hundred times larger",),
           mutant="clips the gradient norm to 5 before each step"),
]

# The task text, sentence by sentence: the rules of the clauses that check it, or why it is no rule.
TASK_TEXT = {
    "*": {
        "After lesson 07 you can prepare a model for quantization-aware training (QAT) with `prepare_qat_fx`, read the "
        "fake-quant nodes it inserts, fine-tune the prepared model, convert it to int8 with `convert_fx` and measure "
        "what you gained.": "what the lesson taught, the motivation",
        "Here you write those steps as five small functions.": "what the notebook holds",
        "torch 2.13 prints deprecation warnings for `torch.ao.quantization`; lesson 07 explains them.":
            "what the learner will see, no rule of a graded function",
        "They never cost points: the checks ignore warnings.": "what grading ignores, no rule of a graded function",
    },
    "prepare_for_qat": {
        "## 1. `prepare_for_qat(model, example_inputs, backend=\"x86\") -> GraphModule`": ("the backend option is used",),
        "Prepare `model` for quantization-aware training with the FX flow and return the prepared `GraphModule`: the "
        "QAT qconfig mapping of `backend` (`\"x86\"`, `\"fbgemm\"`, `\"qnnpack\"` or `\"onednn\"`), `example_inputs` "
        "(a tuple), and the model **in train mode** (it may be handed to you in eval mode).":
            ("the QAT mapping and prepare_qat_fx", "the backend option is used",
             "the default mapping: fixed qparams for sigmoid/tanh",
             "a model handed over in eval mode is prepared in train mode",
             "train mode before tracing (F.dropout reads self.training)"),
        "The result must be in train mode, call fake-quantize modules, and use QAT modules (`torch.ao.nn.qat...`) for "
        "the layers.": ("a model handed over in eval mode is prepared in train mode", "the QAT mapping and prepare_qat_fx"),
        "It is fine for the prepared model to share parameters with `model` (`prepare_qat_fx` does).":
            "a freedom, not a constraint",
        "model prepared for QAT with the default QAT qconfig mapping of `backend`, in train mode.":
            ("the QAT mapping and prepare_qat_fx", "the backend option is used",
             "a model handed over in eval mode is prepared in train mode"),
    },
    "fake_quant_count": {
        "## 2. `fake_quant_count(prepared) -> int`": ("nodes, not modules",),
        "Return the number of `call_module` nodes of `prepared.graph` whose module is a fake-quantize module, that is "
        "an instance of `torch.ao.quantization.FakeQuantizeBase` (the base class of `FakeQuantize`, "
        "`FusedMovingAvgObsFakeQuantize`, `FixedQParamsFakeQuantize`, ...).":
            ("nodes, not modules", "every FakeQuantizeBase subclass", "by module type, not node name",
             "only call_module nodes: a call_function fake_quantize op is no module",
             "the module of the node's whole target (a fake-quant inside a submodule)",
             "an instance of FakeQuantizeBase, not a module with a fake-quant's attributes"),
        "Count nodes, not modules: a module called from two nodes counts twice, and the `weight_fake_quant` inside a "
        "QAT layer is no node of the graph.": ("nodes, not modules", "a fake-quant called twice counts twice"),
        "Observers are not fake-quantize modules, and a class name proves nothing: test `isinstance`, since a subclass "
        "of `FakeQuantizeBase` may be called anything.":
            ("observers are not fake-quants", "a class name says nothing: isinstance FakeQuantizeBase",
             "an instance of FakeQuantizeBase, not a module with a fake-quant's attributes"),
        "Any `GraphModule` may be passed, prepared or not; it is only read (its mode too stays as it was).":
            ("observers are not fake-quants", "the prepared model is left as it was",
             "only call_module nodes: a call_function fake_quantize op is no module",
             "the module of the node's whole target (a fake-quant inside a submodule)"),
        "Number of call_module nodes whose module is a FakeQuantizeBase.":
            ("nodes, not modules", "every FakeQuantizeBase subclass"),
    },
    "qat_finetune": {
        "## 3. `qat_finetune(prepared, batches, steps, lr) -> GraphModule`": ("in place: returns prepared itself",),
        "Fine-tune the prepared model **in place** and return it (the same object):": ("in place: returns prepared itself",),
        "`batches` is a list of `(x, y)` tuples: `x` a float input batch, `y` the class labels (int64);":
            ("the loss is F.cross_entropy",),
        "do exactly `steps` optimizer steps; step `i` uses `batches[i % len(batches)]` (the list is cycled when "
        "`steps > len(batches)`, and only its first `steps` items are used when `steps < len(batches)`);":
            ("exactly `steps` steps", "batches are cycled", "only the first `steps` batches when steps < len(batches)"),
        "optimizer: plain `torch.optim.SGD(prepared.parameters(), lr=lr)` (no momentum, no weight decay, no "
        "gradient clipping);":
            ("SGD", "the lr option is used", "no momentum, no weight decay", "gradients are zeroed every step",
             "plain SGD: the gradients as they are, not clipped"),
        "loss: `F.cross_entropy(prepared(x), y)` (mean over the batch); one forward pass per step;":
            ("the loss is F.cross_entropy", "the loss is the mean over the batch", "one forward pass per step"),
        "each step follows the gradient of its own loss alone: `prepared` may arrive holding gradients of an earlier "
        "`backward()`;":
            ("each step's gradient is its own loss's (gradients held on arrival are not stepped on)",
             "gradients are zeroed every step"),
        "call `prepared.train()` first (it may arrive in eval mode) and **leave it in train mode**;":
            ("a model handed over in eval mode trains in train mode", "left in train mode",
             "train mode first, also when steps == 0"),
        "`steps == 0` changes nothing but the mode.": ("steps == 0 changes nothing but the mode",
                                                       "train mode first, also when steps == 0"),
        "Why one forward pass per step: every forward pass in train mode updates the fake-quant observers (and "
        "batch-norm statistics), so an extra pass \"just to print the loss\" changes the model.":
            ("one forward pass per step",),
        "`steps` steps of SGD on cross-entropy, cycling through `batches`; in place, left in train mode.":
            ("exactly `steps` steps", "SGD", "batches are cycled", "in place: returns prepared itself",
             "left in train mode"),
    },
    "to_int8": {
        "## 4. `to_int8(prepared) -> GraphModule`": ("what convert_fx returns",),
        "Convert a prepared (and trained) model to int8 with `convert_fx` and return the converted `GraphModule` **in "
        "eval mode**: it calls quantized modules (`QuantizedLinear`, `QuantizedLinearReLU`, ...), no fake-quantize or "
        "observer module is left, and on data like the data it was trained on its outputs agree with the prepared "
        "model's (in eval mode, observers off) to about one output quantization step.":
            ("in eval mode", "converted, not fake-quant", "what convert_fx returns"),
        "The prepared model may be handed over in train or eval mode.": ("in eval mode",),
        "Do not run it on new data first: its observers would move the scales.": ("no run on new data before converting",),
        "On torch 2.13, `convert_fx` rewrites the model you give it (its QAT layers are swapped out), so convert a "
        "`copy.deepcopy(prepared)`: `prepared` must be left as it was (its graph, weights and mode), and the grader "
        "checks it.": ("the prepared model is left as it was (convert a copy)",),
        "The int8 model converted from `prepared`, in eval mode.": ("in eval mode", "converted, not fake-quant"),
    },
    "state_dict_bytes": {
        "## 5. `state_dict_bytes(model) -> int`": ("an int of bytes",),
        "Return the size in bytes of `torch.save(model.state_dict(), buf)` written into an in-memory "
        "`buf = io.BytesIO()`, as an `int`.":
            ("torch.save of the state_dict, not the model", "buffers count", "an int of bytes", "torch.save, not pickle",
             "into an in-memory io.BytesIO, not a file"),
        "(Saving to a file gives a slightly different number: torch.save names the records of its zip archive after "
        "the file name.) `model` is only read.": ("into an in-memory io.BytesIO, not a file", "model is only read"),
        "Bytes written by torch.save(model.state_dict()) into an io.BytesIO.":
            ("torch.save of the state_dict, not the model", "into an in-memory io.BytesIO, not a file"),
    },
}
