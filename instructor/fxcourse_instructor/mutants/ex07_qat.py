"""Mutants and alternatives of ex07_qat.

The setup cell of the exercise imports copy, io, warnings, torch, fx, nn, F, FakeQuantizeBase, QConfigMapping,
get_default_qat_qconfig_mapping, convert_fx, prepare_qat_fx, QATNet and node_table; sources below import
anything else they use, as a learner would.
"""
from fxcourse_instructor.mutants import Alternative, Mutant, from_task_text

# Lines of prepare_for_qat that several mutants replace: its return, and its def line, before which some of
# them import what they use instead.
_PREPARE_RETURN = "    return prepare_qat_fx(model.train(), mapping, example_inputs)"
_PREPARE_DEF = 'def prepare_for_qat(model: nn.Module, example_inputs: tuple, backend: str = "x86") -> fx.GraphModule:'

MUTANTS = [
    # ------------------------------------------------------------------------------ prepare_for_qat
    Mutant("prepare_for_qat", "forgets model.train(): a model handed over in eval mode stays in eval mode",
           hint="call model.train() before prepare_qat_fx", edits=(
        ("    mapping = get_default_qat_qconfig_mapping(backend)\n"
         "    return prepare_qat_fx(model.train(), mapping, example_inputs)",
         "    return prepare_qat_fx(model, get_default_qat_qconfig_mapping(backend), example_inputs)"),)),
    Mutant("prepare_for_qat", "prepare_fx (post-training) with the QAT mapping: no QAT modules",
           hint="use prepare_qat_fx, not prepare_fx", edits=(
        (_PREPARE_DEF, "from torch.ao.quantization.quantize_fx import prepare_fx\n\n" + _PREPARE_DEF),
        (_PREPARE_RETURN,
         "    return prepare_fx(model.train(), get_default_qat_qconfig_mapping(backend), example_inputs)"),)),
    Mutant("prepare_for_qat", "the post-training qconfig mapping: observers instead of fake-quants",
           hint="get_default_qat_qconfig_mapping(backend), the QAT mapping", edits=(
        (_PREPARE_DEF, "from torch.ao.quantization import get_default_qconfig_mapping\n\n" + _PREPARE_DEF),
        (_PREPARE_RETURN,
         "    return prepare_qat_fx(model.train(), get_default_qconfig_mapping(backend), example_inputs)"),)),
    Mutant("prepare_for_qat", "ignores backend: always x86",
           hint="get_default_qat_qconfig_mapping(backend) for the backend you are given", edits=(
        (_PREPARE_RETURN,
         '    return prepare_qat_fx(model.train(), get_default_qat_qconfig_mapping("x86"), example_inputs)'),)),
    Mutant("prepare_for_qat", "wrong snippet 6: the deprecated {'': default_qat_qconfig} dict",
           hint="get_default_qat_qconfig_mapping(backend)", edits=(
        (_PREPARE_DEF, "from torch.ao.quantization import default_qat_qconfig\n\n" + _PREPARE_DEF),
        (_PREPARE_RETURN,
         '    return prepare_qat_fx(model.train(), {"": default_qat_qconfig}, example_inputs)'),)),
    Mutant("prepare_for_qat", "a mapping with only a global qconfig: sigmoid/tanh lose their fixed qparams",
           hint="fixed-qparams", not_hints=("for the backend you are given",), edits=(
        (_PREPARE_DEF, "from torch.ao.quantization import get_default_qat_qconfig\n\n" + _PREPARE_DEF),
        ("    mapping = get_default_qat_qconfig_mapping(backend)",
         "    mapping = QConfigMapping().set_global(get_default_qat_qconfig(backend))"),)),
    Mutant("prepare_for_qat", "traces first, sets train mode afterwards: F.dropout(training=False) is frozen",
           hint="call model.train() before tracing", edits=(
        ("    mapping = get_default_qat_qconfig_mapping(backend)",
         "    traced = fx.symbolic_trace(model)"),
        (_PREPARE_RETURN,
         "    return prepare_qat_fx(traced.train(), get_default_qat_qconfig_mapping(backend), example_inputs)"),)),
    # near misses: each does right what another hint of prepare_for_qat says
    Mutant("prepare_for_qat", "calls model.train() first, then hands the result back in eval mode",
           hint="leave the prepared model in train mode", not_hints=("call model.train() before prepare_qat_fx",),
           edits=((_PREPARE_RETURN, "    return prepare_qat_fx(model.train(), mapping, example_inputs).eval()"),)),
    Mutant("prepare_for_qat", "runs the prepared model once on example_inputs before returning it",
           hint="moves its fake-quant observers", not_hints=("do not change the weights",), edits=(
        (_PREPARE_RETURN,
         "    prepared = prepare_qat_fx(model.train(), mapping, example_inputs)\n"
         "    prepared(*example_inputs)  # a quick check that it runs\n"
         "    return prepared"),)),
    Mutant("prepare_for_qat", "forgets to return", hint="ended without a `return`", edits=(
        (_PREPARE_RETURN,
         "    prepared = prepare_qat_fx(model.train(), get_default_qat_qconfig_mapping(backend), example_inputs)"),)),

    # ----------------------------------------------------------------------------- fake_quant_count
    Mutant("fake_quant_count", "matches node names instead of module types",
           hint="select nodes by module type, not by name", edits=(
        ("    return sum(1 for node in prepared.graph.nodes",
         "    return sum(1 for n in prepared.graph.nodes"),
        ('               if node.op == "call_module"\n'
         "               and isinstance(prepared.get_submodule(node.target), FakeQuantizeBase))",
         '               if n.op == "call_module" and "activation_post_process" in n.target)'),)),
    Mutant("fake_quant_count", "counts modules, so weight_fake_quant inside QAT layers counts too",
           hint="count call_module nodes, not modules", edits=(
        ("    return sum(1 for node in prepared.graph.nodes\n"
         '               if node.op == "call_module"\n'
         "               and isinstance(prepared.get_submodule(node.target), FakeQuantizeBase))",
         "    return sum(1 for m in prepared.modules() if isinstance(m, FakeQuantizeBase))"),)),
    Mutant("fake_quant_count", "exact class FakeQuantize: misses FusedMovingAvgObsFakeQuantize",
           hint="not type(module) is", edits=(
        ("def fake_quant_count(prepared: fx.GraphModule) -> int:",
         "from torch.ao.quantization import FakeQuantize\n"
         "\n"
         "def fake_quant_count(prepared: fx.GraphModule) -> int:"),
        ("    return sum(1 for node in prepared.graph.nodes",
         "    return sum(1 for n in prepared.graph.nodes"),
        ('               if node.op == "call_module"\n',
         ""),
        ("               and isinstance(prepared.get_submodule(node.target), FakeQuantizeBase))",
         '               if n.op == "call_module" and type(prepared.get_submodule(n.target)) is FakeQuantize)'),)),
    Mutant("fake_quant_count", "isinstance FakeQuantize: misses other FakeQuantizeBase subclasses",
           hint="FakeQuantizeBase is the base class", edits=(
        ("def fake_quant_count(prepared: fx.GraphModule) -> int:",
         "from torch.ao.quantization import FakeQuantize\n"
         "\n"
         "def fake_quant_count(prepared: fx.GraphModule) -> int:"),
        ("    return sum(1 for node in prepared.graph.nodes",
         "    return sum(1 for n in prepared.graph.nodes"),
        ('               if node.op == "call_module"\n',
         ""),
        ("               and isinstance(prepared.get_submodule(node.target), FakeQuantizeBase))",
         '               if n.op == "call_module" and isinstance(prepared.get_submodule(n.target), FakeQuantize))'),)),
    Mutant("fake_quant_count", "every call_module node", hint="not every call_module node", edits=(
        ("    return sum(1 for node in prepared.graph.nodes",
         '    return sum(1 for n in prepared.graph.nodes if n.op == "call_module")'),
        ('               if node.op == "call_module"\n'
         "               and isinstance(prepared.get_submodule(node.target), FakeQuantizeBase))\n",
         ""),)),
    Mutant("fake_quant_count", "unique targets: a fake-quant called twice counts once",
           hint="also when two nodes call the same", edits=(
        ("    return sum(1 for node in prepared.graph.nodes",
         "    return len({n.target for n in prepared.graph.nodes"),
        ('               if node.op == "call_module"\n',
         ""),
        ("               and isinstance(prepared.get_submodule(node.target), FakeQuantizeBase))",
         '                if n.op == "call_module" and isinstance(prepared.get_submodule(n.target), FakeQuantizeBase)})'),)),
    Mutant("fake_quant_count", "observers count too", hint="observers are not fake-quantize modules", edits=(
        ("def fake_quant_count(prepared: fx.GraphModule) -> int:",
         "from torch.ao.quantization import ObserverBase\n"
         "\n"
         "def fake_quant_count(prepared: fx.GraphModule) -> int:"),
        ("    return sum(1 for node in prepared.graph.nodes",
         '    return sum(1 for n in prepared.graph.nodes if n.op == "call_module"'),
        ('               if node.op == "call_module"\n',
         ""),
        ("               and isinstance(prepared.get_submodule(node.target), FakeQuantizeBase))",
         "               and isinstance(prepared.get_submodule(n.target), (FakeQuantizeBase, ObserverBase)))"),)),
    Mutant("fake_quant_count", "tests isinstance of the node's target, a string, instead of its module",
           hint="prepared.get_submodule(node.target)", not_hints=("not type(module) is",), edits=(
        ("               and isinstance(prepared.get_submodule(node.target), FakeQuantizeBase))",
         "               and isinstance(node.target, FakeQuantizeBase))"),)),
    Mutant("fake_quant_count", "returns the nodes instead of their number", hint="expected an int", edits=(
        ("    return sum(1 for node in prepared.graph.nodes",
         "    return [n for n in prepared.graph.nodes"),
        ('               if node.op == "call_module"\n',
         ""),
        ("               and isinstance(prepared.get_submodule(node.target), FakeQuantizeBase))",
         '            if n.op == "call_module" and isinstance(prepared.get_submodule(n.target), FakeQuantizeBase)]'),)),
    Mutant("fake_quant_count", "also counts call_function fake_quantize ops",
           hint="a call_function node that calls torch.fake_quantize_per_tensor_affine", edits=(
        ("    return sum(1 for node in prepared.graph.nodes",
         "    ops = sum(1 for node in prepared.graph.nodes\n"
         '              if node.op == "call_function" and "fake_quantize" in getattr(node.target, "__name__", ""))\n'
         "    return ops + sum(1 for node in prepared.graph.nodes"),)),
    Mutant("fake_quant_count", "looks each module up by the first part of its target: misses 'sub.fq'",
           hint="by the node's whole target", edits=(
        ("               and isinstance(prepared.get_submodule(node.target), FakeQuantizeBase))",
         '               and isinstance(getattr(prepared, node.target.split(".")[0]), FakeQuantizeBase))'),)),
    Mutant("fake_quant_count", "tests for a fake_quant_enabled attribute instead of isinstance",
           hint="an attribute proves nothing", edits=(
        ("               and isinstance(prepared.get_submodule(node.target), FakeQuantizeBase))",
         '               and hasattr(prepared.get_submodule(node.target), "fake_quant_enabled"))'),)),

    # --------------------------------------------------------------------------------- qat_finetune
    Mutant("qat_finetune", "one step too many", hint="not one more", edits=(
        ("    for step in range(steps):",
         "    for i in range(steps + 1):"),
        ("        x, y = batches[step % len(batches)]",
         "        x, y = batches[i % len(batches)]"),)),
    Mutant("qat_finetune", "one pass over the list, ignoring steps", hint="exactly `steps` optimizer steps", edits=(
        ("    for step in range(steps):\n"
         "        x, y = batches[step % len(batches)]",
         "    for x, y in batches:"),)),
    Mutant("qat_finetune", "does not cycle: stops when the list runs out", hint="cycling through batches", edits=(
        ("    for step in range(steps):\n"
         "        x, y = batches[step % len(batches)]",
         "    for x, y in batches[:steps]:"),)),
    Mutant("qat_finetune", "never zeroes the gradients", hint="zero the gradients", edits=(
        ("        optimizer.zero_grad()\n",
         ""),)),
    Mutant("qat_finetune", "Adam instead of SGD", hint="plain SGD", edits=(
        ("    optimizer = torch.optim.SGD(prepared.parameters(), lr=lr)",
         "    optimizer = torch.optim.Adam(prepared.parameters(), lr=lr)"),)),
    Mutant("qat_finetune", "forgets prepared.train(): a model handed over in eval mode trains in eval mode",
           hint="call prepared.train() at the start", not_hints=("leave the model in train mode",), edits=(
        ("    prepared.train()\n",
         ""),)),
    Mutant("qat_finetune", "switches to eval mode at the end", hint="leave the model in train mode",
           not_hints=("call prepared.train() at the start",), edits=(
        ("    return prepared",
         "    return prepared.eval()"),)),
    Mutant("qat_finetune", "trains a copy and returns it", hint="train prepared in place", edits=(
        ("    prepared.train()",
         "    model = copy.deepcopy(prepared).train()"),
        ("    optimizer = torch.optim.SGD(prepared.parameters(), lr=lr)",
         "    optimizer = torch.optim.SGD(model.parameters(), lr=lr)"),
        ("        loss = F.cross_entropy(prepared(x), y)",
         "        loss = F.cross_entropy(model(x), y)"),
        ("    return prepared",
         "    return model"),)),
    Mutant("qat_finetune", "prints the loss with an extra forward pass per step",
           hint="one forward pass per step", edits=(
        ("        optimizer.step()",
         "        optimizer.step()\n"
         "        with torch.no_grad():\n"
         '            print(f"step {step}: loss {F.cross_entropy(prepared(x), y).item():.4f}")'),)),
    Mutant("qat_finetune", "trains prepared in place, then returns a deep copy of it", hint="return prepared itself",
           not_hints=("train prepared in place",), edits=(
        ("    return prepared",
         "    return copy.deepcopy(prepared)"),)),
    Mutant("qat_finetune", "prints the loss once more after the last step, in eval mode under torch.no_grad()",
           hint="run no forward pass besides the one of each step", not_hints=("run exactly one forward pass per step",),
           edits=(
        ("    return prepared",
         "    with torch.no_grad():\n"
         '        print("final loss", F.cross_entropy(prepared.eval()(x), y).item())\n'
         "    return prepared.train()"),)),
    Mutant("qat_finetune", "a hard-coded learning rate", hint="use the learning rate `lr`", edits=(
        ("    optimizer = torch.optim.SGD(prepared.parameters(), lr=lr)",
         "    optimizer = torch.optim.SGD(prepared.parameters(), lr=0.01)"),)),
    Mutant("qat_finetune", "mean squared error on one-hot labels", hint="F.cross_entropy(logits, y)", edits=(
        ("        loss = F.cross_entropy(prepared(x), y)\n"
         "        loss.backward()",
         "        out = prepared(x)\n"
         "        F.mse_loss(out, F.one_hot(y, out.shape[-1]).float()).backward()"),)),
    Mutant("qat_finetune", "returns at once when steps == 0, before prepared.train()",
           hint="call prepared.train() also when steps == 0", not_hints=("leave the model in train mode",), edits=(
        ("    prepared.train()\n",
         "    if steps == 0:\n"
         "        return prepared\n"
         "    prepared.train()\n"),)),
    Mutant("qat_finetune", "zeroes the gradients after each step instead of before it",
           hint="the first one too", not_hints=("or they accumulate",), edits=(
        ("        optimizer.zero_grad()\n",
         ""),
        ("        optimizer.step()",
         "        optimizer.step()\n"
         "        optimizer.zero_grad()"),)),
    Mutant("qat_finetune", "clips the gradient norm to 5 before each step", hint="with no clipping", edits=(
        ("        optimizer.step()",
         "        torch.nn.utils.clip_grad_norm_(prepared.parameters(), 5.0)\n"
         "        optimizer.step()"),)),

    # ------------------------------------------------------------------------------------- to_int8
    Mutant("to_int8", "forgets eval mode", hint="put the model in eval mode", edits=(
        ("    converted = convert_fx(copy.deepcopy(prepared).eval())",
         "    return convert_fx(copy.deepcopy(prepared))"),
        ("    return converted.eval()\n",
         ""),)),
    Mutant("to_int8", "calls eval() on the prepared model after converting it",
           hint="put the model in eval mode", edits=(
        ("    converted = convert_fx(copy.deepcopy(prepared).eval())",
         "    converted = convert_fx(prepared)\n"
         "    prepared.eval()"),
        ("    return converted.eval()",
         "    return converted"),)),
    Mutant("to_int8", "no conversion: the fake-quant model in eval mode", hint="return the GraphModule convert_fx returns", edits=(
        ("    return converted.eval()",
         "    return prepared.eval()"),)),
    Mutant("to_int8", "ignores what convert_fx returns", hint="return the GraphModule convert_fx returns",
           not_hints=("convert with convert_fx",), edits=(
        ("    converted = convert_fx(copy.deepcopy(prepared).eval())\n"
         "    return converted.eval()",
         "    prepared.eval()\n"
         "    convert_fx(prepared)\n"
         "    return prepared"),)),
    Mutant("to_int8", "the reference representation: float modules between quantize/dequantize",
           hint="not convert_to_reference_fx", edits=(
        ("def to_int8(prepared: fx.GraphModule) -> fx.GraphModule:",
         "from torch.ao.quantization.quantize_fx import convert_to_reference_fx\n"
         "\n"
         "def to_int8(prepared: fx.GraphModule) -> fx.GraphModule:"),
        ("    converted = convert_fx(copy.deepcopy(prepared).eval())",
         "    return convert_to_reference_fx(copy.deepcopy(prepared).eval())"),
        ("    return converted.eval()\n",
         ""),)),
    Mutant("to_int8", "runs the copy once on the check's input in eval mode before converting it",
           hint="convert_fx takes the scales the observers hold", not_hints=("put the model in eval mode",), edits=(
        ("    converted = convert_fx(copy.deepcopy(prepared).eval())",
         "    model = copy.deepcopy(prepared).eval()\n"
         "    with torch.no_grad():\n"
         "        model(prepared.input_for_checks * 3)  # a last look at some data\n"
         "    converted = convert_fx(model)"),)),
    Mutant("to_int8", "dynamic quantization of the prepared model", hint="return convert_fx(", edits=(
        ("    converted = convert_fx(copy.deepcopy(prepared).eval())\n"
         "    return converted.eval()",
         "    return torch.ao.quantization.quantize_dynamic(prepared.eval(), {nn.Linear}, dtype=torch.qint8)"),)),

    # ---------------------------------------------------------------------------- state_dict_bytes
    Mutant("state_dict_bytes", "bytes of the parameters only", hint="torch.save", edits=(
        ("    buf = io.BytesIO()\n"
         "    torch.save(model.state_dict(), buf)\n"
         "    return buf.tell()",
         "    return sum(p.numel() * p.element_size() for p in model.parameters())"),)),
    Mutant("state_dict_bytes", "sys.getsizeof of the dict", hint="torch.save", edits=(
        ("def state_dict_bytes(model: nn.Module) -> int:",
         "import sys\n"
         "\n"
         "def state_dict_bytes(model: nn.Module) -> int:"),
        ("    buf = io.BytesIO()\n"
         "    torch.save(model.state_dict(), buf)\n"
         "    return buf.tell()",
         "    return sys.getsizeof(model.state_dict())"),)),
    Mutant("state_dict_bytes", "saves the whole model", hint="not the whole model", edits=(
        ("    torch.save(model.state_dict(), buf)",
         "    torch.save(model, buf)"),)),
    Mutant("state_dict_bytes", "kilobytes as a float", hint="as an int", edits=(
        ("    return buf.tell()",
         "    return buf.tell() / 1024"),)),
    Mutant("state_dict_bytes", "saves to a file and measures the file", hint="into an io.BytesIO, not a file", edits=(
        ("def state_dict_bytes(model: nn.Module) -> int:",
         "import os\n"
         "import tempfile\n"
         "\n"
         "def state_dict_bytes(model: nn.Module) -> int:"),
        ("    buf = io.BytesIO()",
         "    with tempfile.TemporaryDirectory() as d:\n"
         '        path = os.path.join(d, "model_state.pt")'),
        ("    torch.save(model.state_dict(), buf)",
         "        torch.save(model.state_dict(), path)"),
        ("    return buf.tell()",
         "        return os.path.getsize(path)"),)),
    Mutant("state_dict_bytes", "rewinds before reading the position", hint="len(buf.getvalue())", edits=(
        ("    torch.save(model.state_dict(), buf)",
         "    torch.save(model.state_dict(), buf)\n"
         "    buf.seek(0)"),)),
    Mutant("state_dict_bytes", "reads the stream after torch.save, without rewinding it", hint="before any buf.seek(0) or buf.read()",
           not_hints=("buf.tell() after buf.seek(0)",), edits=(
        ("    return buf.tell()",
         "    return len(buf.read())"),)),
    Mutant("state_dict_bytes", "saves into an io.BytesIO, but a state_dict that keeps its Parameters (keep_vars=True)",
           hint="torch.save(model.state_dict(), buf)", not_hints=("not a file",), edits=(
        ("    torch.save(model.state_dict(), buf)",
         "    torch.save(model.state_dict(keep_vars=True), buf)"),)),
    Mutant("state_dict_bytes", "pickle instead of torch.save", hint="torch.save", edits=(
        ("def state_dict_bytes(model: nn.Module) -> int:",
         "import pickle\n"
         "\n"
         "def state_dict_bytes(model: nn.Module) -> int:"),
        ("    buf = io.BytesIO()\n"
         "    torch.save(model.state_dict(), buf)\n"
         "    return buf.tell()",
         "    return len(pickle.dumps(model.state_dict()))"),)),
]

ALTERNATIVES = [
    Alternative("prepare_for_qat", "a deep copy, keyword arguments and train(True)", '''
def prepare_for_qat(model, example_inputs, backend="x86"):
    model = copy.deepcopy(model)
    model.train(True)
    return prepare_qat_fx(model, qconfig_mapping=get_default_qat_qconfig_mapping(backend=backend),
                          example_inputs=tuple(example_inputs))
'''),
    Alternative("prepare_for_qat", "through the quantize_fx module, warnings caught locally", '''
import torch.ao.quantization.quantize_fx as qfx
from torch.ao.quantization import qconfig_mapping as qcm

def prepare_for_qat(model, example_inputs, backend="x86"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.train()
        return qfx.prepare_qat_fx(model, qcm.get_default_qat_qconfig_mapping(backend), example_inputs)
'''),
    Alternative("fake_quant_count", "a dict of named modules, aliases kept", '''
def fake_quant_count(prepared):
    modules = dict(prepared.named_modules(remove_duplicate=False))  # prepare may register one module twice
    count = 0
    for node in prepared.graph.nodes:
        if node.op == "call_module" and isinstance(modules[node.target], FakeQuantizeBase):
            count += 1
    return count
'''),
    Alternative("fake_quant_count", "imported from the fake_quantize module", '''
from torch.ao.quantization.fake_quantize import FakeQuantizeBase as Base

def fake_quant_count(prepared):
    calls = [n for n in prepared.graph.nodes if n.op == "call_module"]
    return len([n for n in calls if isinstance(prepared.get_submodule(n.target), Base)])
'''),
    Alternative("qat_finetune", "itertools.cycle and islice", '''
import itertools

def qat_finetune(prepared, batches, steps, lr):
    prepared.train()
    optimizer = torch.optim.SGD(prepared.parameters(), lr=lr, momentum=0.0)
    for x, y in itertools.islice(itertools.cycle(batches), steps):
        optimizer.zero_grad(set_to_none=True)
        loss = nn.CrossEntropyLoss()(prepared(x), y)
        loss.backward()
        optimizer.step()
    return prepared
'''),
    Alternative("qat_finetune", "SGD written by hand with torch.no_grad", '''
def qat_finetune(prepared, batches, steps, lr):
    prepared.train()
    params = [p for p in prepared.parameters() if p.requires_grad]
    for step in range(steps):
        x, y = batches[step % len(batches)]
        for p in params:
            p.grad = None
        F.cross_entropy(prepared(x), y).backward()
        with torch.no_grad():
            for p in params:
                if p.grad is not None:
                    p -= lr * p.grad
    return prepared
'''),
    Alternative("to_int8", "convert a copy made with copy.deepcopy, then train(False)", '''
def to_int8(prepared):
    return convert_fx(copy.deepcopy(prepared)).train(False)
'''),
    Alternative("to_int8", "freeze batch-norm statistics first, then convert a copy", '''
import torch.ao.nn.intrinsic.qat as nniqat

def to_int8(prepared):
    model = copy.deepcopy(prepared)
    model.apply(nniqat.freeze_bn_stats)
    model.eval()
    quantized = convert_fx(model)
    quantized.eval()
    return quantized
'''),
    Alternative("state_dict_bytes", "len of getvalue", '''
def state_dict_bytes(model):
    with io.BytesIO() as buf:
        torch.save(model.state_dict(), buf)
        return len(buf.getvalue())
'''),
    Alternative("state_dict_bytes", "getbuffer().nbytes", '''
def state_dict_bytes(model):
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    return int(buf.getbuffer().nbytes)
'''),
]

# ------------------------------------------- right answers written with another torch.fx mechanism

ALTERNATIVES += [
    Alternative('fake_quant_count', "Graph.find_nodes(op='call_module')", '''
def fake_quant_count(prepared):
    return sum(isinstance(prepared.get_submodule(n.target), FakeQuantizeBase)
               for n in prepared.graph.find_nodes(op="call_module"))
'''),
    Alternative("prepare_for_qat", "fx.symbolic_trace of the train-mode model first, then prepare the GraphModule", '''
def prepare_for_qat(model, example_inputs, backend="x86"):
    traced = fx.symbolic_trace(model.train())   # train mode first: tracing freezes what self.training reads
    return prepare_qat_fx(traced, get_default_qat_qconfig_mapping(backend), example_inputs)
'''),
    # The default QAT mapping of torch 2.13 written out entry by entry (tests/test_ex07_qat.py asserts that
    # qat_mapping(backend) equals get_default_qat_qconfig_mapping(backend) for every backend).
    Alternative("prepare_for_qat", "the QConfigMapping built by hand, per op and module type", '''
from torch.ao.quantization import (
    FixedQParamsFakeQuantize, QConfig, default_fixed_qparams_range_0to1_observer,
    default_fixed_qparams_range_neg1to1_observer, default_placeholder_observer, default_quint8_weight_qconfig,
    default_reuse_input_qconfig, default_weight_fake_quant, get_default_qat_qconfig,
)


def qat_mapping(backend):
    qconfig = get_default_qat_qconfig(backend)
    transpose = (QConfig(activation=qconfig.activation, weight=default_weight_fake_quant)
                 if backend in ("fbgemm", "x86") else qconfig)
    layer_norm = QConfig(activation=qconfig.activation, weight=default_placeholder_observer)
    mapping = QConfigMapping().set_global(qconfig).set_object_type("reshape", default_reuse_input_qconfig)
    for kind in (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d,
                 F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d):
        mapping.set_object_type(kind, transpose)
    mapping.set_object_type(F.layer_norm, layer_norm).set_object_type(nn.LayerNorm, layer_norm)
    mapping.set_object_type(nn.PReLU, default_quint8_weight_qconfig)
    # ops whose output range is known get fake-quants with fixed scale and zero point
    for observer, ops in ((default_fixed_qparams_range_0to1_observer,
                           (nn.Hardsigmoid, F.hardsigmoid, "hardsigmoid", "hardsigmoid_", nn.Sigmoid,
                            torch.sigmoid, "sigmoid", "sigmoid_", nn.Softmax)),
                          (default_fixed_qparams_range_neg1to1_observer, (nn.Tanh, torch.tanh, "tanh", "tanh_"))):
        fixed = QConfig(activation=FixedQParamsFakeQuantize.with_args(observer=observer),
                        weight=default_weight_fake_quant)
        for op in ops:
            mapping.set_object_type(op, fixed)
    return mapping


def prepare_for_qat(model, example_inputs, backend="x86"):
    return prepare_qat_fx(model.train(), qat_mapping(backend), example_inputs)
'''),
    Alternative("qat_finetune", "the forward pass run node by node by an fx.Interpreter (autograd records it)", '''
def qat_finetune(prepared, batches, steps, lr):
    prepared.train()
    forward = fx.Interpreter(prepared)
    optimizer = torch.optim.SGD(prepared.parameters(), lr=lr)
    for step in range(steps):
        x, y = batches[step % len(batches)]
        optimizer.zero_grad()
        F.cross_entropy(forward.run(x), y).backward()
        optimizer.step()
    return prepared
'''),
    Alternative("state_dict_bytes", "torch.save into a stream of one's own that only counts what is written", '''
class ByteCounter:
    """A write-only stream: it keeps nothing but the number of bytes written to it."""

    def __init__(self):
        self.written = 0

    def write(self, data):
        size = memoryview(data).nbytes
        self.written += size
        return size

    def flush(self):
        pass


def state_dict_bytes(model):
    sink = ByteCounter()
    torch.save(model.state_dict(), sink)
    return sink.written
'''),
]

# --------------------- wrong and right answers written from the task text alone, by someone who had not read the checks

_WRONG, _RIGHT = from_task_text("ex07_qat")
MUTANTS += _WRONG
ALTERNATIVES += _RIGHT
