"""Mutants and alternatives of ex07_qat.

The setup cell of the exercise imports copy, io, warnings, torch, fx, nn, F, FakeQuantizeBase, QConfigMapping,
get_default_qat_qconfig_mapping, convert_fx, prepare_qat_fx, QATNet and node_table; sources below import
anything else they use, as a learner would.
"""
from autograder.coursedata.mutants import Alternative, Mutant

MUTANTS = [
    # ------------------------------------------------------------------------------ prepare_for_qat
    Mutant("prepare_for_qat", "forgets model.train(): a model handed over in eval mode stays in eval mode", '''
def prepare_for_qat(model, example_inputs, backend="x86"):
    return prepare_qat_fx(model, get_default_qat_qconfig_mapping(backend), example_inputs)
''', hint="call model.train() before prepare_qat_fx"),
    Mutant("prepare_for_qat", "prepare_fx (post-training) with the QAT mapping: no QAT modules", '''
from torch.ao.quantization.quantize_fx import prepare_fx

def prepare_for_qat(model, example_inputs, backend="x86"):
    return prepare_fx(model.train(), get_default_qat_qconfig_mapping(backend), example_inputs)
''', hint="use prepare_qat_fx, not prepare_fx"),
    Mutant("prepare_for_qat", "the post-training qconfig mapping: observers instead of fake-quants", '''
from torch.ao.quantization import get_default_qconfig_mapping

def prepare_for_qat(model, example_inputs, backend="x86"):
    return prepare_qat_fx(model.train(), get_default_qconfig_mapping(backend), example_inputs)
''', hint="get_default_qat_qconfig_mapping(backend), the QAT mapping"),
    Mutant("prepare_for_qat", "ignores backend: always x86", '''
def prepare_for_qat(model, example_inputs, backend="x86"):
    return prepare_qat_fx(model.train(), get_default_qat_qconfig_mapping("x86"), example_inputs)
''', hint="get_default_qat_qconfig_mapping(backend) for the backend you are given"),
    Mutant("prepare_for_qat", "wrong snippet 6: the deprecated {'': default_qat_qconfig} dict", '''
from torch.ao.quantization import default_qat_qconfig

def prepare_for_qat(model, example_inputs, backend="x86"):
    return prepare_qat_fx(model.train(), {"": default_qat_qconfig}, example_inputs)
''', hint="get_default_qat_qconfig_mapping(backend)"),
    Mutant("prepare_for_qat", "a mapping with only a global qconfig: sigmoid/tanh lose their fixed qparams", '''
from torch.ao.quantization import get_default_qat_qconfig

def prepare_for_qat(model, example_inputs, backend="x86"):
    mapping = QConfigMapping().set_global(get_default_qat_qconfig(backend))
    return prepare_qat_fx(model.train(), mapping, example_inputs)
''', hint="fixed-qparams"),
    Mutant("prepare_for_qat", "traces first, sets train mode afterwards: F.dropout(training=False) is frozen", '''
def prepare_for_qat(model, example_inputs, backend="x86"):
    traced = fx.symbolic_trace(model)
    return prepare_qat_fx(traced.train(), get_default_qat_qconfig_mapping(backend), example_inputs)
''', hint="call model.train() before tracing"),
    Mutant("prepare_for_qat", "forgets to return", '''
def prepare_for_qat(model, example_inputs, backend="x86"):
    prepared = prepare_qat_fx(model.train(), get_default_qat_qconfig_mapping(backend), example_inputs)
''', hint="return the value instead of printing it"),

    # ----------------------------------------------------------------------------- fake_quant_count
    Mutant("fake_quant_count", "matches node names instead of module types", '''
def fake_quant_count(prepared):
    return sum(1 for n in prepared.graph.nodes
               if n.op == "call_module" and "activation_post_process" in n.target)
''', hint="select nodes by module type, not by name"),
    Mutant("fake_quant_count", "counts modules, so weight_fake_quant inside QAT layers counts too", '''
def fake_quant_count(prepared):
    return sum(1 for m in prepared.modules() if isinstance(m, FakeQuantizeBase))
''', hint="count call_module nodes, not modules"),
    Mutant("fake_quant_count", "exact class FakeQuantize: misses FusedMovingAvgObsFakeQuantize", '''
from torch.ao.quantization import FakeQuantize

def fake_quant_count(prepared):
    return sum(1 for n in prepared.graph.nodes
               if n.op == "call_module" and type(prepared.get_submodule(n.target)) is FakeQuantize)
''', hint="not type(module) is"),
    Mutant("fake_quant_count", "isinstance FakeQuantize: misses other FakeQuantizeBase subclasses", '''
from torch.ao.quantization import FakeQuantize

def fake_quant_count(prepared):
    return sum(1 for n in prepared.graph.nodes
               if n.op == "call_module" and isinstance(prepared.get_submodule(n.target), FakeQuantize))
''', hint="FakeQuantizeBase is the base class"),
    Mutant("fake_quant_count", "every call_module node", '''
def fake_quant_count(prepared):
    return sum(1 for n in prepared.graph.nodes if n.op == "call_module")
''', hint="not every call_module node"),
    Mutant("fake_quant_count", "unique targets: a fake-quant called twice counts once", '''
def fake_quant_count(prepared):
    return len({n.target for n in prepared.graph.nodes
                if n.op == "call_module" and isinstance(prepared.get_submodule(n.target), FakeQuantizeBase)})
''', hint="also when two nodes call the same"),
    Mutant("fake_quant_count", "observers count too", '''
from torch.ao.quantization import ObserverBase

def fake_quant_count(prepared):
    return sum(1 for n in prepared.graph.nodes if n.op == "call_module"
               and isinstance(prepared.get_submodule(n.target), (FakeQuantizeBase, ObserverBase)))
''', hint="observers are not fake-quantize modules"),
    Mutant("fake_quant_count", "returns the nodes instead of their number", '''
def fake_quant_count(prepared):
    return [n for n in prepared.graph.nodes
            if n.op == "call_module" and isinstance(prepared.get_submodule(n.target), FakeQuantizeBase)]
''', hint="expected an int"),

    # --------------------------------------------------------------------------------- qat_finetune
    Mutant("qat_finetune", "one step too many", '''
def qat_finetune(prepared, batches, steps, lr):
    prepared.train()
    opt = torch.optim.SGD(prepared.parameters(), lr=lr)
    for i in range(steps + 1):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        F.cross_entropy(prepared(x), y).backward()
        opt.step()
    return prepared
''', hint="not one more"),
    Mutant("qat_finetune", "one pass over the list, ignoring steps", '''
def qat_finetune(prepared, batches, steps, lr):
    prepared.train()
    opt = torch.optim.SGD(prepared.parameters(), lr=lr)
    for x, y in batches:
        opt.zero_grad()
        F.cross_entropy(prepared(x), y).backward()
        opt.step()
    return prepared
''', hint="exactly `steps` optimizer steps"),
    Mutant("qat_finetune", "does not cycle: stops when the list runs out", '''
def qat_finetune(prepared, batches, steps, lr):
    prepared.train()
    opt = torch.optim.SGD(prepared.parameters(), lr=lr)
    for x, y in batches[:steps]:
        opt.zero_grad()
        F.cross_entropy(prepared(x), y).backward()
        opt.step()
    return prepared
''', hint="cycling through batches"),
    Mutant("qat_finetune", "never zeroes the gradients", '''
def qat_finetune(prepared, batches, steps, lr):
    prepared.train()
    opt = torch.optim.SGD(prepared.parameters(), lr=lr)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        F.cross_entropy(prepared(x), y).backward()
        opt.step()
    return prepared
''', hint="zero the gradients"),
    Mutant("qat_finetune", "Adam instead of SGD", '''
def qat_finetune(prepared, batches, steps, lr):
    prepared.train()
    opt = torch.optim.Adam(prepared.parameters(), lr=lr)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        F.cross_entropy(prepared(x), y).backward()
        opt.step()
    return prepared
''', hint="plain SGD"),
    Mutant("qat_finetune", "forgets prepared.train(): a model handed over in eval mode trains in eval mode", '''
def qat_finetune(prepared, batches, steps, lr):
    opt = torch.optim.SGD(prepared.parameters(), lr=lr)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        F.cross_entropy(prepared(x), y).backward()
        opt.step()
    return prepared
''', hint="call prepared.train() at the start"),
    Mutant("qat_finetune", "switches to eval mode at the end", '''
def qat_finetune(prepared, batches, steps, lr):
    prepared.train()
    opt = torch.optim.SGD(prepared.parameters(), lr=lr)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        F.cross_entropy(prepared(x), y).backward()
        opt.step()
    return prepared.eval()
''', hint="leave the model in train mode"),
    Mutant("qat_finetune", "trains a copy and returns it", '''
def qat_finetune(prepared, batches, steps, lr):
    model = copy.deepcopy(prepared).train()
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return model
''', hint="train prepared in place"),
    Mutant("qat_finetune", "prints the loss with an extra forward pass per step", '''
def qat_finetune(prepared, batches, steps, lr):
    prepared.train()
    opt = torch.optim.SGD(prepared.parameters(), lr=lr)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        F.cross_entropy(prepared(x), y).backward()
        opt.step()
        with torch.no_grad():
            print(f"step {i}: loss {F.cross_entropy(prepared(x), y).item():.4f}")
    return prepared
''', hint="one forward pass per step"),
    Mutant("qat_finetune", "a hard-coded learning rate", '''
def qat_finetune(prepared, batches, steps, lr):
    prepared.train()
    opt = torch.optim.SGD(prepared.parameters(), lr=0.01)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        F.cross_entropy(prepared(x), y).backward()
        opt.step()
    return prepared
''', hint="use the learning rate `lr`"),
    Mutant("qat_finetune", "mean squared error on one-hot labels", '''
def qat_finetune(prepared, batches, steps, lr):
    prepared.train()
    opt = torch.optim.SGD(prepared.parameters(), lr=lr)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        out = prepared(x)
        F.mse_loss(out, F.one_hot(y, out.shape[-1]).float()).backward()
        opt.step()
    return prepared
''', hint="F.cross_entropy(logits, y)"),

    # ------------------------------------------------------------------------------------- to_int8
    Mutant("to_int8", "forgets eval mode", '''
def to_int8(prepared):
    return convert_fx(copy.deepcopy(prepared))
''', hint="put the model in eval mode"),
    Mutant("to_int8", "calls eval() on the prepared model after converting it", '''
def to_int8(prepared):
    converted = convert_fx(prepared)
    prepared.eval()
    return converted
''', hint="put the model in eval mode"),
    Mutant("to_int8", "no conversion: the fake-quant model in eval mode", '''
def to_int8(prepared):
    return prepared.eval()
''', hint="convert with convert_fx"),
    Mutant("to_int8", "ignores what convert_fx returns", '''
def to_int8(prepared):
    prepared.eval()
    convert_fx(prepared)
    return prepared
''', hint="return the GraphModule it returns"),
    Mutant("to_int8", "the reference representation: float modules between quantize/dequantize", '''
from torch.ao.quantization.quantize_fx import convert_to_reference_fx

def to_int8(prepared):
    return convert_to_reference_fx(copy.deepcopy(prepared).eval())
''', hint="not convert_to_reference_fx"),
    Mutant("to_int8", "dynamic quantization of the prepared model", '''
def to_int8(prepared):
    return torch.ao.quantization.quantize_dynamic(prepared.eval(), {nn.Linear}, dtype=torch.qint8)
''', hint="convert with convert_fx"),

    # ---------------------------------------------------------------------------- state_dict_bytes
    Mutant("state_dict_bytes", "bytes of the parameters only", '''
def state_dict_bytes(model):
    return sum(p.numel() * p.element_size() for p in model.parameters())
''', hint="torch.save"),
    Mutant("state_dict_bytes", "sys.getsizeof of the dict", '''
import sys

def state_dict_bytes(model):
    return sys.getsizeof(model.state_dict())
''', hint="torch.save"),
    Mutant("state_dict_bytes", "saves the whole model", '''
def state_dict_bytes(model):
    buf = io.BytesIO()
    torch.save(model, buf)
    return buf.tell()
''', hint="not the whole model"),
    Mutant("state_dict_bytes", "kilobytes as a float", '''
def state_dict_bytes(model):
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    return buf.tell() / 1024
''', hint="as an int"),
    Mutant("state_dict_bytes", "saves to a file and measures the file", '''
import os
import tempfile

def state_dict_bytes(model):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model_state.pt")
        torch.save(model.state_dict(), path)
        return os.path.getsize(path)
''', hint="into an io.BytesIO, not a file"),
    Mutant("state_dict_bytes", "rewinds before reading the position", '''
def state_dict_bytes(model):
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    return buf.tell()
''', hint="len(buf.getvalue())"),
    Mutant("state_dict_bytes", "pickle instead of torch.save", '''
import pickle

def state_dict_bytes(model):
    return len(pickle.dumps(model.state_dict()))
''', hint="torch.save"),
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
]
