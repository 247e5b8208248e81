"""The hints of ex07_qat: `PROGRESSIVE`, three per graded function from a nudge to nearly the answer (`fxcourse hint`
shows the next one, in the format autograder/coursedata/hints.py describes), and `HINTS`, what its checks say when
an answer fails, by id (a template's {fields} are filled by the judge that names it)."""
from __future__ import annotations

__all__ = ["PROGRESSIVE", "HINTS"]

PROGRESSIVE: dict[str, list[str]] = {
    'prepare_for_qat': [
        'The FX flow does this in one call: `prepare_qat_fx(model, qconfig_mapping, example_inputs)` from '
        '`torch.ao.quantization.quantize_fx`.',
        'Use the QAT mapping for the backend you are given: `get_default_qat_qconfig_mapping(backend)`. Not the '
        'post-training mapping, and not a mapping with only a global qconfig, since sigmoid and tanh need its '
        'fixed-qparams entries. `prepare_fx` inserts observers, not fake-quants.',
        'Call `model.train()` before preparing (it returns the model). Tracing freezes '
        '`F.dropout(training=self.training)`, and the hidden models arrive in eval mode. Then return what '
        '`prepare_qat_fx` gives you.',
    ],
    'fake_quant_count': [
        "Count nodes of `prepared.graph`, not modules. Only `call_module` nodes qualify; look each one's module up "
        'with `prepared.get_submodule(node.target)`.',
        'Test `isinstance(module, FakeQuantizeBase)`. It covers FakeQuantize, FusedMovingAvgObsFakeQuantize and the '
        'fixed-qparams kind, and rejects observers. Never match by name (one hidden observer is named '
        "'fake_quant_stats'). The `weight_fake_quant` inside a QAT layer is no node.",
        "A fake-quant called from two nodes counts twice, so don't collect a set of targets. Sum 1 over the nodes "
        'that are `call_module` with a `FakeQuantizeBase` module, and return an int. A plain traced model gives 0.',
    ],
    'qat_finetune': [
        'This is an ordinary PyTorch training loop on `prepared`: `torch.optim.SGD(prepared.parameters(), lr=lr)`, '
        'cross-entropy, `backward()` and `step()`.',
        "Call `prepared.train()` first (hidden: a model handed over in eval mode), and don't switch back. Do "
        'exactly `steps` steps, where step `i` uses `batches[i % len(batches)]`. Cycle when steps exceeds the list, '
        'use only the first batches when it is smaller, and do nothing for 0.',
        'In `for i in range(steps)`: zero the gradients, compute `F.cross_entropy(prepared(x), y)`, `backward()`, '
        '`step()`. Use exactly one forward pass per step, with no extra pass to print the loss. Train in place and '
        'return `prepared` itself.',
    ],
    'to_int8': [
        'Use `convert_fx` from `torch.ao.quantization.quantize_fx`. It turns a prepared model into one with '
        'quantized modules, and its return value is your answer.',
        'Use `convert_fx`, not `convert_to_reference_fx` or dynamic quantization. Use what it returns: on torch '
        "2.13 it also rewrites its argument. The result must be in eval mode. Don't run the prepared model on new "
        'data first; its observers would move.',
        'Convert `copy.deepcopy(prepared).eval()`, then call `.eval()` on the converted model and return it. '
        'Calling `eval()` on the prepared model after converting comes too late.',
    ],
    'state_dict_bytes': [
        'Serialize with `torch.save(model.state_dict(), buf)` into an in-memory `buf = io.BytesIO()`, not into a '
        'file and not with `pickle`.',
        'Save `model.state_dict()`, not the whole model. Buffers count too, and even an empty state_dict '
        "(`nn.ReLU()`) writes some bytes. Don't add up tensor sizes or use `sys.getsizeof`; let torch.save decide "
        '(tied weights are stored once).',
        "After saving, the size is `buf.tell()` or `len(buf.getvalue())`. Don't `seek(0)` first. Return it as an "
        '`int` in bytes, not kilobytes.',
    ],
}

HINTS: dict[str, str] = {
    'ex07.every_submodule_trains':
        'call prepared.train() itself, even when prepared.training is already True: it puts every submodule in '
        'train mode (a submodule the caller left in eval mode too), and change no mode after it',
    'ex07.leave_quant_switches':
        'leave every observer and fake-quant switched on or off as the caller had it: no enable_observer, '
        'disable_observer, enable_fake_quant or disable_fake_quant, before the steps or after them',
    'ex07.leave_batches_as_given':
        "leave the caller's batches as they are: no requires_grad_() on them (nothing here needs a gradient of the "
        'input)',
    'ex07.unread_node_counts_too':
        'a fake-quantize node whose value nothing reads is a node of the graph too: count every call_module node '
        'whose module is a FakeQuantizeBase, with users or not',
    'ex07.disabled_fake_quant_counts_too':
        'a fake-quantize module whose fake-quant is switched off (disable_fake_quant) is still a fake-quantize '
        'module: count by its type, not by fake_quant_enabled',
    'ex07.return_number_nodes_int_len':
        'return the number of nodes, an int (len(...) or sum(...))',
    'ex07.return_prepared_same_object_trained':
        'return prepared (the same object, trained in place)',
    'ex07.return_number_bytes_int_buf':
        'return the number of bytes as an int: buf.tell() or len(buf.getvalue())',
    'ex07.loss_cross_entropy_logits_labels':
        'the loss is the cross-entropy of the logits and the labels: F.cross_entropy(logits, y)',
    'ex07.loss_went_up_step_against':
        'the loss went up: step against the gradient (loss.backward(), then optimizer.step())',
    'ex07.run_exactly_one_forward_pass':
        'run exactly one forward pass per step: every forward pass in train mode moves the fake-quant observers '
        '(and batch-norm statistics), even under torch.no_grad()',
    'ex07.count_call_module_nodes_whose':
        'count call_module nodes whose module, prepared.get_submodule(node.target), is an instance of '
        'torch.ao.quantization.FakeQuantizeBase',
    'ex07.serialize_torch_save_model_state':
        'serialize with torch.save(model.state_dict(), buf) into buf = io.BytesIO() and return the number of bytes '
        'written, buf.tell() or len(buf.getvalue())',
    'ex07.save_model_state_dict_not':
        'save model.state_dict(), not the whole model: torch.save(model.state_dict(), buf)',
    'ex07.torch_save_wrote_something_even':
        'torch.save wrote something (even an empty state_dict takes a few hundred bytes): read the size as '
        'buf.tell() right after torch.save, before any buf.seek(0) or buf.read(), or as len(buf.getvalue()) at any '
        'time',
    'ex07.count_what_torch_save_writes':
        'count what torch.save writes (buffers, the zip archive and its metadata too), not only tensor bytes: '
        'serialize with torch.save(model.state_dict(), buf) into buf = io.BytesIO() and return the number of bytes '
        'written, buf.tell() or len(buf.getvalue())',
    'ex07.save_into_io_bytesio_not':
        'save into an io.BytesIO, not a file: inside its zip archive torch.save names every record after the file '
        'name, so the size depends on the file name',
    'ex07.prepare_prepare_qat_fx_model':
        'prepare with prepare_qat_fx(model.train(), get_default_qat_qconfig_mapping(backend), example_inputs)',
    'ex07.call_model_train_before_prepare':
        'call model.train() before prepare_qat_fx: QAT prepares a model for training, and prepare_qat_fx keeps '
        'whatever mode the model is in',
    'ex07.default_qat_mapping_get_default':
        'the default QAT mapping, get_default_qat_qconfig_mapping(backend), decides where fake-quants go: prepare '
        'with it',
    'ex07.prepare_model_itself_prepare_qat':
        'prepare the model itself with prepare_qat_fx(model.train(), get_default_qat_qconfig_mapping(backend), '
        'example_inputs) and return the result',
    'ex07.do_not_change_weights_prepare':
        'do not change the weights: prepare the model you are given',
    'ex07.return_model_prepare_qat_fx':
        'return the model as prepare_qat_fx returns it: running it (even on example_inputs, even in eval mode) '
        'moves its fake-quant observers',
    'ex07.train_prepared_place_return_prepared':
        'train prepared in place and return prepared itself (not a copy)',
    'ex07.leave_model_train_mode_was':
        'leave the model in train mode: it was handed over in train mode, and qat_finetune switched it to eval mode '
        '(switch to eval only to evaluate or convert)',
    'ex07.leave_model_train_mode_when':
        'leave the model in train mode when qat_finetune returns: it trained in train mode and was then switched '
        'back to eval mode',
    'ex07.call_prepared_train_at_start':
        'call prepared.train() at the start: it was handed over in eval mode, and it trained in eval mode (batch '
        'norm then uses its running statistics)',
    'ex07.qat_finetune_trains_train_mode':
        'qat_finetune trains in train mode and returns the model in train mode',
    'ex07.each_step_x_y_batches':
        'each step: x, y = batches[i % len(batches)]; optimizer.zero_grad(); F.cross_entropy(prepared(x), '
        'y).backward(); optimizer.step(), with torch.optim.SGD(lr=lr)',
    'ex07.run_no_forward_pass_besides':
        'run no forward pass besides the one of each step (not even under torch.no_grad() or in eval mode, say to '
        'print a loss): every forward pass moves the fake-quant observers and batch-norm statistics',
    'ex07.convert_fx_turns_them_into':
        'convert_fx turns them into quantize/dequantize steps and int8 modules: return '
        'convert_fx(copy.deepcopy(prepared).eval())',
    'ex07.use_convert_fx_not_convert':
        'use convert_fx, not convert_to_reference_fx: the reference model keeps float modules between '
        'quantize/dequantize pairs',
    'ex07.put_model_eval_mode_convert':
        'put the model in eval mode: convert_fx(prepared.eval()), or call .eval() on what convert_fx returns',
    'ex07.convert_fx_takes_scales_observers':
        'convert_fx takes the scales the observers hold when it is called: convert a copy of prepared as it is '
        '(running it first, even in eval mode, moves them)',
    'ex07.convert_copy_prepared_without_changing':
        'convert a copy of prepared as it is, without changing its weights or observers first: convert_fx observes '
        'the weights again (those folded from Conv+BN too)',
    'ex07.use_get_default_qat_qconfig':
        'use get_default_qat_qconfig_mapping(backend), the QAT mapping: get_default_qconfig_mapping is for '
        'post-training quantization and inserts observers only',
    'ex07.leave_prepared_model_train_mode':
        'leave the prepared model in train mode, as QAT trains it: do not call .eval() on it, on its submodules or '
        'on the model before preparing it',
    'ex07.leave_prepared_model_train_mode_2':
        'leave the prepared model in train mode: prepare the model after model.train() and do not switch the result '
        'to eval mode',
    'ex07.use_prepare_qat_fx_not':
        'use prepare_qat_fx, not prepare_fx: only prepare_qat_fx swaps in QAT modules that fake-quantize their '
        'weights during training',
    'ex07.call_model_train_before_tracing':
        'call model.train() before tracing: a traced graph freezes the value of self.training it read (here in '
        'F.dropout), and .train() afterwards does not change the graph',
    'ex07.return_prepared_itself_trained_place':
        'return prepared itself: it is trained in place, and a copy of it is another object',
    'ex07.return_prepared_itself_same_object':
        'return prepared itself (the same object, trained in place), not a copy',
    'ex07.return_graphmodule_convert_fx_returns':
        'return the GraphModule convert_fx returns, not the prepared model you were given: return '
        'convert_fx(copy.deepcopy(prepared).eval())',
    'ex07.prepare_default_qat_mapping_get':
        "prepare with the default QAT mapping, get_default_qat_qconfig_mapping(backend): it picks each fake-quant's "
        'class, range and scheme',
    'ex07.prepare_backend_you_are_given':
        'prepare for the backend you are given: get_default_qat_qconfig_mapping(backend) for the backend you are '
        "given sets that backend's quantization range and weight scheme",
    'ex07.sigmoid_tanh_have_known_output':
        'sigmoid and tanh have a known output range: get_default_qat_qconfig_mapping(backend) gives them '
        'fixed-qparams fake-quants (FixedQParamsFakeQuantize), a mapping with only a global qconfig gives them '
        'ordinary ones',
    'ex07.select_nodes_module_type_not':
        'select nodes by module type, not by name: prepare_fx names observers activation_post_process_N too, and a '
        'fake-quant can have any name',
    'ex07.count_call_module_nodes_not':
        'count call_module nodes, not modules: the weight_fake_quant inside each QAT layer is a fake-quantize '
        'module but no node of the graph calls it',
    'ex07.every_call_module_node_counts':
        'every call_module node counts, also when two nodes call the same fake-quantize module',
    'ex07.count_only_call_module_nodes':
        'count only call_module nodes whose module is a fake-quantize module, not every call_module node',
    'ex07.observers_are_not_fake_quantize':
        'observers are not fake-quantize modules: test isinstance(module, FakeQuantizeBase), not ObserverBase',
    'ex07.fakequantizebase_base_class_every_fake':
        'FakeQuantizeBase is the base class of every fake-quantize module; FakeQuantize is only one of its '
        'subclasses',
    'ex07.class_name_says_nothing_fakequantizebase':
        'a class name says nothing: a FakeQuantizeBase subclass may be called anything, and a class called '
        '...FakeQuantize need not be one; test isinstance(module, FakeQuantizeBase)',
    'ex07.count_only_call_module_nodes_2':
        'count only call_module nodes: a call_function node that calls torch.fake_quantize_per_tensor_affine (or '
        'another fake_quantize op) runs no fake-quantize module',
    'ex07.look_each_module_up_whole':
        "look each module up by the node's whole target, prepared.get_submodule(node.target): a target can be a "
        "path such as 'sub.fq', a fake-quant inside a submodule",
    'ex07.attribute_proves_nothing_module_fake':
        'an attribute proves nothing: a module with a fake_quant_enabled buffer need not be a fake-quantize module; '
        'test isinstance(module, FakeQuantizeBase)',
    'ex07.zero_gradients_before_each_backward':
        'zero the gradients before each backward, the first one too (optimizer.zero_grad() before the forward pass '
        'of each step): prepared may arrive holding the gradients of an earlier loss.backward(), and zeroing only '
        'after optimizer.step() adds them to the first step',
    'ex07.use_gradients_they_are_no':
        'use the gradients as they are, with no clipping: plain SGD steps by lr times the gradient, and '
        'clip_grad_norm_ shrinks every step whose gradient norm is above its limit (large inputs give large '
        'gradients)',
    'ex07.call_prepared_train_also_when':
        'call prepared.train() also when steps == 0: the model was handed over in eval mode, and qat_finetune '
        'returns it in train mode whatever the number of steps',
    'ex07.modules_are_fusedmovingavgobsfakequantize_other':
        'the modules are FusedMovingAvgObsFakeQuantize and other subclasses: test isinstance(module, '
        'FakeQuantizeBase), not type(module) is ...',
}
