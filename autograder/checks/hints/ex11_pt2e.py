"""The hints of ex11_pt2e: `PROGRESSIVE`, three per graded function from a nudge to nearly the answer (`fxcourse hint`
shows the next one, in the format autograder/coursedata/hints.py describes), and `HINTS`, what its checks say when
an answer fails, by id (a template's {fields} are filled by the judge that names it)."""
from __future__ import annotations

__all__ = ["PROGRESSIVE", "HINTS"]

PROGRESSIVE: dict[str, list[str]] = {
    'prepare_pt2e_qat': [
        'Three steps, as in lesson 11: `torch.export.export(model, example_inputs).module()`, a quantizer, and '
        '`prepare_qat_pt2e(exported, quantizer)` from `torchao.quantization.pt2e.quantize_pt2e`.',
        'Export in train mode: `model.train()` first, since export freezes the mode it sees (a hidden model with '
        'dropout arrives in eval mode). The quantizer is `X86InductorQuantizer()` with '
        '`set_global(get_default_x86_inductor_quantization_config(is_qat=True))`.',
        'Without `is_qat=True` you get observers, not fake-quants; with `reduce_range` or `is_dynamic` other '
        'ranges. Build the quantizer, export `model.train()`, take `.module()`, return what `prepare_qat_pt2e` '
        'returns.',
    ],
    'pt2e_fake_quant_count': [
        'Count nodes of `prepared.graph`, not modules: only `call_module` nodes qualify, and '
        "`prepared.get_submodule(node.target)` gives each one's module.",
        "Test `isinstance(module, FakeQuantizeBase)` with torchao's class, "
        "`torchao.quantization.pt2e.FakeQuantizeBase`: lesson 07's `torch.ao.quantization` class is a different "
        'one. Never match by name or class name; observers and `_guards_fn` do not count.',
        'A fake-quant called from two nodes counts twice, so no set of targets. Sum 1 over the `call_module` nodes '
        'whose module is a `FakeQuantizeBase`, and return an int.',
    ],
    'pt2e_finetune': [
        'An ordinary training loop on `prepared`: `torch.optim.SGD(prepared.parameters(), lr=lr)`, cross-entropy, '
        '`backward()` and `step()`. No `prepared.train()`: an exported model raises on it.',
        'Do exactly `steps` steps; step `i` uses `batches[i % len(batches)]`. Cycle when steps exceeds the list, '
        'use only the first batches when it is smaller, do nothing for 0.',
        'In `for i in range(steps)`: zero the gradients, `F.cross_entropy(prepared(x), y)` (mean), `backward()`, '
        '`step()`, with one forward pass per step. Train in place and return `prepared` itself.',
    ],
    'to_qdq': [
        'Two calls from `torchao.quantization.pt2e`: `move_exported_model_to_eval(prepared)`, then '
        '`convert_pt2e(prepared)`, whose return value is your answer.',
        '`prepared.eval()` raises on an exported model, and skipping the move keeps dropout training in the '
        "converted graph. Use `convert_pt2e` with its defaults (it folds the weights' quantize nodes).",
        'Do not run the prepared model before converting: every run moves the scales. Move to eval, convert, return '
        'the converted GraphModule.',
    ],
    'qdq_counts': [
        'Look at `str(node.target)` of the `call_function` nodes: Q/DQ nodes read '
        '`quantized_decomposed.quantize_per_tensor.default`, `quantized_decomposed.dequantize_per_channel.default`, '
        '...',
        "Count every overload (`.default` and `.tensor`) and both per-tensor and per-channel ops. 'quantize' is a "
        "substring of 'dequantize', and the eager `torch.quantize_per_tensor` is no Q/DQ node.",
        'Count the targets starting with `quantized_decomposed.quantize_per_` and those starting with '
        '`quantized_decomposed.dequantize_per_`; return the two ints as a tuple, quantize first.',
    ],
}

HINTS: dict[str, str] = {
    'ex11.leave_quant_switches':
        'leave every observer and fake-quant switched on or off as it arrived: no disable_observer or '
        'enable_observer before the steps or after them (the model stays as ready to train as it came)',
    'ex11.return_number_nodes_int_len':
        'return the number of nodes, an int (len(...) or sum(...))',
    'ex11.return_prepared_same_object_trained':
        'return prepared (the same object, trained in place)',
    'ex11.return_tuple_signature_says_return':
        'return a tuple, as the signature says: return quantize, dequantize',
    'ex11.return_number_quantize_nodes_number':
        'return (number of quantize nodes, number of dequantize nodes)',
    'ex11.run_exactly_one_forward_pass':
        'run exactly one forward pass per step: every forward pass of a prepared model moves its fake-quant '
        'statistics, even under torch.no_grad()',
    'ex11.do_not_call_prepared_train':
        'do not call prepared.train(): the prepared model arrives ready to train, and on an exported model .train() '
        'raises; train it as it is',
    'ex11.prepared_eval_raises_exported_model':
        'prepared.eval() raises on an exported model: move it to eval with move_exported_model_to_eval(prepared), '
        'then convert_pt2e(prepared)',
    'ex11.return_quantize_dequantize_order':
        'return (quantize, dequantize), in that order',
    'ex11.give_quantizer_global_config_before':
        'give the quantizer a global config before preparing: quantizer = X86InductorQuantizer(); '
        'quantizer.set_global(get_default_x86_inductor_quantization_config(is_qat=True)) and no other option: the '
        'defaults give uint8 activations over 0..255 and per-channel int8 weights',
    'ex11.prepare_prepare_qat_pt2e_exported':
        "prepare with prepare_qat_pt2e(exported, quantizer): prepare_pt2e is post-training quantization's, and on a "
        'model with batch norm it folds the norm into the layer before it instead of training it',
    'ex11.return_what_prepare_qat_pt2e':
        "return what prepare_qat_pt2e returns, ready to train: moving it to eval is to_qdq's job, after training",
    'ex11.export_model_you_are_given':
        'export the model you are given in train mode, torch.export.export(model.train(), example_inputs).module(), '
        'and prepare that with prepare_qat_pt2e',
    'ex11.quantizer_x86inductorquantizer_quantizer_set_glo':
        'quantizer = X86InductorQuantizer(); '
        'quantizer.set_global(get_default_x86_inductor_quantization_config(is_qat=True)) and no other option: the '
        'defaults give uint8 activations over 0..255 and per-channel int8 weights',
    'ex11.return_what_prepare_qat_pt2e_2':
        'return what prepare_qat_pt2e returns without running it: every forward pass of a prepared model moves its '
        'fake-quant statistics, and training starts from fresh ones',
    'ex11.prepare_model_you_are_given':
        'prepare the model you are given, with its weights as they are',
    'ex11.train_prepared_place_return_prepared':
        'train prepared in place and return prepared itself (not a copy)',
    'ex11.train_model_arrives_ready_train':
        'train the model as it arrives, ready to train: no move_exported_model_to_eval before or during training '
        '(to_qdq moves it to eval, after training)',
    'ex11.leave_prepared_ready_train_arrived':
        "leave prepared ready to train, as it arrived: moving it to eval is to_qdq's job, and a second fine-tune "
        'would run with dropout off',
    'ex11.use_plain_sgd_torch_optim':
        'use plain SGD, torch.optim.SGD(prepared.parameters(), lr=lr), without weight_decay: it pulls every '
        'parameter towards 0 at each step',
    'ex11.each_step_x_y_batches':
        'each step: x, y = batches[i % len(batches)]; optimizer.zero_grad(); F.cross_entropy(prepared(x), '
        'y).backward(); optimizer.step(), with torch.optim.SGD(prepared.parameters(), lr=lr)',
    'ex11.convert_convert_pt2e_return_graphmodule':
        'convert with convert_pt2e and return the GraphModule it returns',
    'ex11.return_graphmodule_convert_pt2e_returns':
        'return the GraphModule convert_pt2e returns: convert_pt2e(prepared) builds a new model, and prepared is '
        'not the converted model',
    'ex11.convert_moved_eval_model_convert':
        'convert the moved-to-eval model with convert_pt2e(prepared) and its default options',
    'ex11.keep_convert_pt2e_s_default':
        "keep convert_pt2e's default fold_quantize=True: the weights' quantize nodes then run once, at convert "
        'time, and the graph reads int8 weights',
    'ex11.call_move_exported_model_eval':
        'call move_exported_model_to_eval(prepared) before convert_pt2e',
    'ex11.do_not_run_prepared_model':
        'do not run the prepared model on new data before converting: every run moves its fake-quant statistics, '
        'and with them the scales convert_pt2e uses',
    'ex11.configure_quantizer_qat_get_default':
        'configure the quantizer for QAT: get_default_x86_inductor_quantization_config(is_qat=True); without '
        'is_qat=True it inserts observers for post-training calibration',
    'ex11.capture_model_torch_export_export':
        'capture the model with torch.export.export(model, example_inputs).module(): PT2E annotates ATen ops such '
        'as aten.linear.default, and finds nothing to quantize in a symbolic_trace graph',
    'ex11.export_model_train_mode_torch':
        'export the model in train mode, torch.export.export(model.train(), example_inputs): export freezes the '
        'mode it sees, and QAT trains the result',
    'ex11.call_move_exported_model_eval_2':
        'call move_exported_model_to_eval(prepared) before convert_pt2e: it rewrites the train-mode ops of an '
        'exported graph into their eval forms',
    'ex11.select_nodes_module_type_not':
        'select nodes by module type, not by name: PT2E names observers activation_post_process_N too, and a '
        'fake-quant may have any name',
    'ex11.select_nodes_module_type_not_2':
        'select nodes by module type, not by name: a fake-quant may have any name',
    'ex11.count_nodes_every_call_module':
        'count nodes: every call_module node counts, also when two nodes call the same fake-quantize module',
    'ex11.count_call_module_nodes_not':
        'count call_module nodes, not modules: a registered module that no node calls does not count',
    'ex11.observers_are_not_fake_quantize':
        'observers are not fake-quantize modules: test isinstance(module, FakeQuantizeBase), not ObserverBase',
    'ex11.count_only_call_module_nodes':
        'count only call_module nodes whose module is a fake-quantize module, not every call_module node (an '
        'exported module also calls _guards_fn)',
    'ex11.fakequantizebase_base_class_every_fake':
        'FakeQuantizeBase is the base class of every fake-quantize module: test isinstance(module, '
        'FakeQuantizeBase), not type(module) is FusedMovingAvgObsFakeQuantize',
    'ex11.pt2e_s_fake_quants_are':
        "PT2E's fake-quants are torchao's: import FakeQuantizeBase from torchao.quantization.pt2e; "
        'torch.ao.quantization.FakeQuantizeBase is a different class',
    'ex11.class_name_says_nothing_test':
        'a class name says nothing: test isinstance(module, FakeQuantizeBase) from torchao.quantization.pt2e',
    'ex11.attribute_such_fake_quant_enabled':
        "an attribute such as fake_quant_enabled proves nothing (torch.ao's fake-quants have it too): test "
        'isinstance(module, FakeQuantizeBase) from torchao.quantization.pt2e',
    'ex11.do_steps_optimizer_steps_i':
        'do `steps` optimizer steps, for i in range(steps), not a single one',
    'ex11.each_step_one_optimizer_step':
        'each step is one optimizer step on one batch, batches[i % len(batches)]: not a pass over every batch per '
        'step',
    'ex11.count_every_overload_quantize_per':
        'count every overload: quantize_per_tensor.tensor (scale and zero point as tensors) is a quantize node too; '
        "compare the op's name, str(node.target), not one overload object",
    'ex11.count_per_channel_nodes_too':
        'count per-channel nodes too: dequantize_per_channel dequantizes the int8 weights',
    'ex11.quantize_substring_dequantize_match_start':
        "'quantize' is a substring of 'dequantize': match the start of the op's name, "
        'quantized_decomposed.quantize_per_ and quantized_decomposed.dequantize_per_',
    'ex11.aten_quantize_not_quantized_decomposed':
        'aten.quantize_per_tensor.default is the eager quantize as an ATen op, no Q/DQ node: count only targets '
        'whose text starts with quantized_decomposed.quantize_per_ (or quantized_decomposed.dequantize_per_)',
    'ex11.dotted_target_get_submodule':
        "a call_module node's target may be a dotted path ('blk.fq', a fake-quant inside a submodule): look its "
        'module up with prepared.get_submodule(node.target); getattr reads one attribute of the root only',
    'ex11.count_only_quantized_decomposed_ops':
        'count only quantized_decomposed ops: torch.quantize_per_tensor is the eager quantize function, not a Q/DQ '
        'node',
    'ex11.select_nodes_target_not_name':
        'select nodes by target, not by name: str(node.target) reads quantized_decomposed.quantize_per_..., while a '
        "node's name is only a label (the eager torch.quantize_per_tensor's node is named quantize_per_tensor too)",
    'ex11.count_nodes_not_distinct_targets':
        'count nodes, not distinct targets: every call_function node of a Q/DQ op counts, also when many call the '
        'same overload',
    'ex11.not_every_quantized_decomposed_op':
        'not every quantized_decomposed op that is no dequantize is a quantize node: choose_qparams computes a '
        'scale and quantizes nothing; match quantized_decomposed.quantize_per_',
    'ex11.count_call_module_nodes_whose':
        'count call_module nodes whose module is an instance of torchao.quantization.pt2e.FakeQuantizeBase',
    'ex11.count_call_function_nodes_whose':
        'count call_function nodes whose str(node.target) starts with quantized_decomposed.quantize_per_ and '
        'quantized_decomposed.dequantize_per_',
}
