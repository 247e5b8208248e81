"""Answers to ex11_pt2e written from the task text alone, by someone who had not read the checks: the
wrong ones as mutants, each with the diagnosis its failure must give, the right ones as alternatives; each is a
whole answer cell."""
from autograder.coursedata.mutants import Alternative, Mutant

_IMP = '''import copy
import warnings

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim, export

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torchao.quantization.pt2e import FakeQuantizeBase, move_exported_model_to_eval, move_exported_model_to_train
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
        X86InductorQuantizer, get_default_x86_inductor_quantization_config)

'''

MUTANTS = [
    Mutant('prepare_pt2e_qat', 'exports eval: Call model.train() before export; an eval-mode export freezes dropout off '
           'and BatchNorm on running stats.',
           hint='export the model in train mode',
           source=_IMP + '''def prepare_pt2e_qat(model, example_inputs):
    dyn = tuple({0: Dim("batch")} for _ in example_inputs)
    gm = export(model, tuple(example_inputs), dynamic_shapes=dyn).module()
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config(is_qat=True))
    return prepare_qat_pt2e(gm, quantizer)
'''),
    Mutant('prepare_pt2e_qat', 'ptq prepare: Use prepare_qat_pt2e: prepare_pt2e inserts observers, not fake-quantize '
           'modules.',
           hint='prepare with prepare_qat_pt2e',
           source=_IMP + '''def prepare_pt2e_qat(model, example_inputs):
    model.train()
    dyn = tuple({0: Dim("batch")} for _ in example_inputs)
    gm = export(model, tuple(example_inputs), dynamic_shapes=dyn).module()
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config(is_qat=True))
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
    return prepare_pt2e(gm, quantizer)
'''),
    Mutant('prepare_pt2e_qat', 'ptq config: Pass is_qat=True to get_default_x86_inductor_quantization_config.',
           hint='is_qat=True',
           source=_IMP + '''def prepare_pt2e_qat(model, example_inputs):
    model.train()
    dyn = tuple({0: Dim("batch")} for _ in example_inputs)
    gm = export(model, tuple(example_inputs), dynamic_shapes=dyn).module()
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config(is_qat=False))
    return prepare_qat_pt2e(gm, quantizer)
'''),
    Mutant('prepare_pt2e_qat', 'runs data: Do not run the prepared model on the example inputs before returning it.',
           hint='return what prepare_qat_pt2e returns without running it',
           source=_IMP + '''def prepare_pt2e_qat(model, example_inputs):
    model.train()
    dyn = tuple({0: Dim("batch")} for _ in example_inputs)
    gm = export(model, tuple(example_inputs), dynamic_shapes=dyn).module()
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config(is_qat=True))
    prepared = prepare_qat_pt2e(gm, quantizer)
    prepared(*example_inputs)   # smoke test
    return prepared
'''),
    Mutant('prepare_pt2e_qat', 'moved to eval: Do not call move_exported_model_to_eval in prepare: the model is about to '
           'be trained.',
           hint="moving it to eval is to_qdq's job",
           source=_IMP + '''def prepare_pt2e_qat(model, example_inputs):
    model.train()
    dyn = tuple({0: Dim("batch")} for _ in example_inputs)
    gm = export(model, tuple(example_inputs), dynamic_shapes=dyn).module()
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config(is_qat=True))
    prepared = prepare_qat_pt2e(gm, quantizer)
    move_exported_model_to_eval(prepared)
    return prepared
'''),
    Mutant('prepare_pt2e_qat', 'one input spec: Give one {0: Dim(...)} spec per input, not a single spec for the first '
           'input.',
           hint='dynamic_shapes has one entry per input',
           source=_IMP + '''def prepare_pt2e_qat(model, example_inputs):
    model.train()
    dyn = ({0: Dim("batch")},)
    gm = export(model, tuple(example_inputs), dynamic_shapes=dyn).module()
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config(is_qat=True))
    return prepare_qat_pt2e(gm, quantizer)
'''),
    Mutant('pt2e_fake_quant_count', 'torch ao class: Test isinstance against torchao.quantization.pt2e.FakeQuantizeBase, not '
           "torch.ao's class.",
           hint="PT2E's fake-quants are torchao's",
           source=_IMP + '''def pt2e_fake_quant_count(prepared):
    from torch.ao.quantization import FakeQuantizeBase as AoFakeQuantizeBase
    return sum(1 for n in prepared.graph.nodes if n.op == "call_module"
               and isinstance(prepared.get_submodule(n.target), AoFakeQuantizeBase))
'''),
    Mutant('pt2e_fake_quant_count', 'modules: Walk prepared.graph.nodes, not prepared.modules().',
           hint='count call_module nodes, not modules',
           source=_IMP + '''def pt2e_fake_quant_count(prepared):
    return sum(isinstance(m, FakeQuantizeBase) for m in prepared.modules())
'''),
    Mutant('pt2e_fake_quant_count', 'node name: activation_post_process_N is a name, used for observers too: test isinstance.',
           hint='select nodes by module type, not by name',
           source=_IMP + '''def pt2e_fake_quant_count(prepared):
    return sum(1 for n in prepared.graph.nodes if n.op == "call_module" and n.name.startswith("activation_post_process"))
'''),
    Mutant('pt2e_fake_quant_count', "class name: Test isinstance(module, FakeQuantizeBase), not 'FakeQuantize' in the class "
           'name.',
           hint='a class name says nothing',
           source=_IMP + '''def pt2e_fake_quant_count(prepared):
    return sum(1 for n in prepared.graph.nodes if n.op == "call_module"
               and "FakeQuantize" in type(prepared.get_submodule(n.target)).__name__)
'''),
    Mutant('pt2e_fake_quant_count', 'all call modules: Not every call_module node is a fake-quant (_guards_fn is one too).',
           hint='not every call_module node',
           source=_IMP + '''def pt2e_fake_quant_count(prepared):
    return sum(1 for n in prepared.graph.nodes if n.op == "call_module")
'''),
    Mutant('pt2e_fake_quant_count', 'dedup: Do not deduplicate targets: count every call_module node.',
           hint='also when two nodes call the same fake-quantize module',
           source=_IMP + '''def pt2e_fake_quant_count(prepared):
    return len({n.target for n in prepared.graph.nodes if n.op == "call_module"
                and isinstance(prepared.get_submodule(n.target), FakeQuantizeBase)})
'''),
    Mutant('pt2e_finetune', 'calls train: Do not call prepared.train(); the prepared model is ready to train as it is.',
           hint='do not call prepared.train()',
           source=_IMP + '''def pt2e_finetune(prepared, batches, steps, lr):
    prepared.train()
    opt = torch.optim.SGD(prepared.parameters(), lr=lr)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        loss = F.cross_entropy(prepared(x), y)
        loss.backward()
        opt.step()
    return prepared
'''),
    Mutant('pt2e_finetune', 'moves to eval: Do not move the model to eval after training (to_qdq does that).',
           hint="moving it to eval is to_qdq's job",
           source=_IMP + '''def pt2e_finetune(prepared, batches, steps, lr):
    opt = torch.optim.SGD(prepared.parameters(), lr=lr)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        loss = F.cross_entropy(prepared(x), y)
        loss.backward()
        opt.step()
    move_exported_model_to_eval(prepared)
    return prepared
'''),
    Mutant('pt2e_finetune', 'extra forward: Compute the loss from a single forward pass per step.',
           hint='run exactly one forward pass per step',
           source=_IMP + '''def pt2e_finetune(prepared, batches, steps, lr):
    opt = torch.optim.SGD(prepared.parameters(), lr=lr)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        loss = F.cross_entropy(prepared(x), y)
        loss.backward()
        opt.step()
        with torch.no_grad():
            _ = F.cross_entropy(prepared(x), y).item()
    return prepared
'''),
    Mutant('pt2e_finetune', 'momentum: Use plain SGD without momentum.',
           hint='use plain SGD without momentum',
           source=_IMP + '''def pt2e_finetune(prepared, batches, steps, lr):
    opt = torch.optim.SGD(prepared.parameters(), lr=lr, momentum=0.9)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        loss = F.cross_entropy(prepared(x), y)
        loss.backward()
        opt.step()
    return prepared
'''),
    Mutant('pt2e_finetune', 'no cycle: Cycle the batches so exactly `steps` steps run.',
           hint='cycling through batches',
           source=_IMP + '''def pt2e_finetune(prepared, batches, steps, lr):
    opt = torch.optim.SGD(prepared.parameters(), lr=lr)
    for x, y in batches[:steps]:
        opt.zero_grad()
        F.cross_entropy(prepared(x), y).backward()
        opt.step()
    return prepared
'''),
    Mutant('pt2e_finetune', 'copy: Train `prepared` itself, not a deepcopy.',
           hint='train prepared in place',
           source=_IMP + '''def pt2e_finetune(prepared, batches, steps, lr):
    prepared = copy.deepcopy(prepared)
    opt = torch.optim.SGD(prepared.parameters(), lr=lr)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        loss = F.cross_entropy(prepared(x), y)
        loss.backward()
        opt.step()
    return prepared
'''),
    Mutant('pt2e_finetune', 'no zero grad: Zero the gradients every step.',
           hint='zero the gradients every step',
           source=_IMP + '''def pt2e_finetune(prepared, batches, steps, lr):
    opt = torch.optim.SGD(prepared.parameters(), lr=lr)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        loss = F.cross_entropy(prepared(x), y)
        loss.backward()
        opt.step()
    return prepared
'''),
    Mutant('to_qdq', 'no move to eval: Call move_exported_model_to_eval(prepared) before convert_pt2e.',
           hint='call move_exported_model_to_eval(prepared) before convert_pt2e',
           source=_IMP + '''def to_qdq(prepared):
    return convert_pt2e(prepared)
'''),
    Mutant('to_qdq', 'calls eval: prepared.eval() raises on an exported model: use move_exported_model_to_eval.',
           hint='prepared.eval() raises on an exported model',
           source=_IMP + '''def to_qdq(prepared):
    prepared.eval()
    return convert_pt2e(prepared)
'''),
    Mutant('to_qdq', 'no fold: Call convert_pt2e(prepared) with its defaults (fold_quantize=True).',
           hint="keep convert_pt2e's default fold_quantize=True",
           source=_IMP + '''def to_qdq(prepared):
    move_exported_model_to_eval(prepared)
    return convert_pt2e(prepared, fold_quantize=False)
'''),
    Mutant('to_qdq', 'reference representation: Do not ask for the reference representation; the default gives '
           'Q/DQ nodes around float ops.',
           hint='its default options',
           source=_IMP + '''def to_qdq(prepared):
    move_exported_model_to_eval(prepared)
    return convert_pt2e(prepared, use_reference_representation=True)
'''),
    Mutant('to_qdq', 'calibrates first: Convert right away; a calibration pass on new data moves the scales.',
           hint='do not run the prepared model on new data before converting',
           source=_IMP + '''def to_qdq(prepared):
    ph = next(n for n in prepared.graph.nodes if n.op == "placeholder")
    shape = [s if isinstance(s, int) else 8 for s in ph.meta["val"].shape]
    with torch.no_grad():
        prepared(torch.randn(shape) * 3)
    move_exported_model_to_eval(prepared)
    return convert_pt2e(prepared)
'''),
    Mutant('to_qdq', 'returns prepared: Return what convert_pt2e returns (a new module), not prepared.',
           hint='return the GraphModule convert_pt2e returns', not_hints=('move_exported_model_to_eval(prepared) before',),
           source=_IMP + '''def to_qdq(prepared):
    move_exported_model_to_eval(prepared)
    convert_pt2e(prepared)
    return prepared
'''),
    Mutant('qdq_counts', "substring: 'quantize' is a substring of 'dequantize': match the op exactly.",
           hint="'quantize' is a substring of 'dequantize'",
           source=_IMP + '''def qdq_counts(converted):
    t = [str(n.target) for n in converted.graph.nodes if n.op == "call_function"]
    return (sum("quantize" in s for s in t), sum("dequantize" in s for s in t))
'''),
    Mutant('qdq_counts', 'by name: Use node.target, not node.name: a node named quantize_scale is not a quantize '
           'node.',
           hint='select nodes by target, not by name',
           source=_IMP + '''def qdq_counts(converted):
    q = sum(1 for n in converted.graph.nodes if n.name.startswith("quantize_per"))
    dq = sum(1 for n in converted.graph.nodes if n.name.startswith("dequantize_per"))
    return (q, dq)
'''),
    Mutant('qdq_counts', 'per tensor only: Count per-channel quantize/dequantize ops too.',
           hint='count per-channel nodes too',
           source=_IMP + '''def qdq_counts(converted):
    qd = torch.ops.quantized_decomposed
    q = dq = 0
    for n in converted.graph.nodes:
        if n.op == "call_function" and getattr(n.target, "overloadpacket", None) is qd.quantize_per_tensor:
            q += 1
        elif n.op == "call_function" and getattr(n.target, "overloadpacket", None) is qd.dequantize_per_tensor:
            dq += 1
    return (q, dq)
'''),
    Mutant('qdq_counts', 'default overload only: Match the overload packet (or every overload), not only .default.',
           hint='count every overload',
           source=_IMP + '''def qdq_counts(converted):
    qd = torch.ops.quantized_decomposed
    q_ops = {qd.quantize_per_tensor.default, qd.quantize_per_channel.default}
    dq_ops = {qd.dequantize_per_tensor.default, qd.dequantize_per_channel.default}
    q = sum(1 for n in converted.graph.nodes if n.op == "call_function" and n.target in q_ops)
    dq = sum(1 for n in converted.graph.nodes if n.op == "call_function" and n.target in dq_ops)
    return (q, dq)
'''),
    Mutant('qdq_counts', 'namespace prefix: Not every quantized_decomposed op is Q or DQ: choose_qparams is neither.',
           hint='choose_qparams computes a scale and quantizes nothing',
           source=_IMP + '''def qdq_counts(converted):
    t = [str(n.target) for n in converted.graph.nodes if n.op == "call_function"]
    dq = sum(s.startswith("quantized_decomposed.dequantize") for s in t)
    q = sum(s.startswith("quantized_decomposed.") for s in t) - dq
    return (q, dq)
'''),
    Mutant('qdq_counts', 'eager quantize: torch.quantize_per_tensor is not a quantized_decomposed op: match the '
           'namespace too.',
           hint='count only quantized_decomposed ops',
           source=_IMP + '''def qdq_counts(converted):
    q = dq = 0
    for n in converted.graph.nodes:
        if n.op != "call_function":
            continue
        name = getattr(n.target, "__name__", str(n.target))
        if name.startswith(("quantize_per_tensor", "quantize_per_channel")):
            q += 1
        elif name.startswith(("dequantize_per_tensor", "dequantize_per_channel")):
            dq += 1
    return (q, dq)
'''),
    Mutant('qdq_counts', 'returns list: Return a tuple (q, dq), not a list.',
           hint='return a tuple, as the signature says',
           source=_IMP + '''def qdq_counts(converted):
    qd = torch.ops.quantized_decomposed
    q_ops = {qd.quantize_per_tensor, qd.quantize_per_channel}
    dq_ops = {qd.dequantize_per_tensor, qd.dequantize_per_channel}
    q = dq = 0
    for n in converted.graph.nodes:
        if n.op != "call_function":
            continue
        packet = getattr(n.target, "overloadpacket", n.target)
        if packet in q_ops:
            q += 1
        elif packet in dq_ops:
            dq += 1
    return [q, dq]
'''),
]

ALTERNATIVES = [
    Alternative('prepare_pt2e_qat', 'written from the task text alone: prepare pt2e qat right',
                _IMP + '''def prepare_pt2e_qat(model, example_inputs):
    model.train()
    dyn = tuple({0: Dim("batch")} for _ in example_inputs)
    gm = export(model, tuple(example_inputs), dynamic_shapes=dyn).module()
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config(is_qat=True))
    return prepare_qat_pt2e(gm, quantizer)
'''),
    Alternative('pt2e_fake_quant_count', 'written from the task text alone: pt2e fake quant count right',
                _IMP + '''def pt2e_fake_quant_count(prepared):
    mods = dict(prepared.named_modules(remove_duplicate=False))
    return sum(1 for node in prepared.graph.nodes
               if node.op == "call_module" and isinstance(mods.get(node.target), FakeQuantizeBase))
'''),
    Alternative('pt2e_finetune', 'written from the task text alone: pt2e finetune right',
                _IMP + '''def pt2e_finetune(prepared, batches, steps, lr):
    opt = torch.optim.SGD(prepared.parameters(), lr=lr)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        loss = F.cross_entropy(prepared(x), y)
        loss.backward()
        opt.step()
    return prepared
'''),
    Alternative('to_qdq', 'written from the task text alone: to qdq right',
                _IMP + '''def to_qdq(prepared):
    move_exported_model_to_eval(prepared)
    converted = convert_pt2e(prepared)
    return converted
'''),
    Alternative('qdq_counts', 'written from the task text alone: qdq counts right',
                _IMP + '''def qdq_counts(converted):
    qd = torch.ops.quantized_decomposed
    q_ops = {qd.quantize_per_tensor, qd.quantize_per_channel}
    dq_ops = {qd.dequantize_per_tensor, qd.dequantize_per_channel}
    q = dq = 0
    for n in converted.graph.nodes:
        if n.op != "call_function":
            continue
        packet = getattr(n.target, "overloadpacket", n.target)
        if packet in q_ops:
            q += 1
        elif packet in dq_ops:
            dq += 1
    return (q, dq)
'''),
]
