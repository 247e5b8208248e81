"""The hints every exercise shares: the check framework's, the error signatures errors.py recognises, the
wrong training loops evidence.training_loop knows, and the grader's crash hints (grading.py). A template's
{fields} are filled by the one who names it (autograder/checks/hints/__init__.py)."""
from __future__ import annotations

__all__ = ["HINTS"]

HINTS: dict[str, str] = {
    'shared.keep_signature_task_text_gives':
        'keep the signature the task text gives {name}: the same parameter names and defaults, each one accepted by '
        'position and by keyword',
    'shared.erase_no_placeholder':
        'the GraphModule takes {takes} input(s) and the model {given}: a placeholder is an argument of forward '
        'whether anything reads it or not, so erase no placeholder (graph.eliminate_dead_code() keeps them)',
    'shared.fix_first_own_test_says':
        'fix {helpers} first: its own test says what is wrong with it',
    'shared.leave_requires_grad_caller_s':
        "leave requires_grad of the caller's parameters as it was: a model whose weights no longer require grad "
        'cannot be trained, and nothing in the task asks to freeze them',
    'shared.do_not_switch_caller_s':
        "do not switch the caller's model with .eval() or .train(): leave its mode as it was (what runs on it, or "
        'is exported from it, in another mode computes otherwise; deepcopy it first if you need another mode)',
    'shared.remove_every_hook_you_register':
        'remove every hook you register (handle.remove(), in a finally: block), or record with an fx.Interpreter or '
        'ShapeProp instead of hooks',
    'shared.leave_recompile_to_caller':
        "only read gm: no gm.recompile(). A graph edited since its last recompile still runs its old code, and when "
        "to make it run the new one is the caller's choice",
    'shared.answer_for_objects_as_they_are_now':
        'answer for what you are given as it is now: the caller handed over the same object again after changing '
        'it in place (as a pass does), so keep nothing from an earlier call (no cache keyed by the object or its id)',
    'shared.work_copy_copy_deepcopy_only':
        'work on a copy (copy.deepcopy) or only read the inputs: the caller still uses them',
    'shared.write_quotes_using_one':
        'write {question} = "A" (with quotes), using one of {choices}',
    'shared.answer_one_capital_letter_quotes':
        'answer with one capital letter, in quotes',
    'shared.reread_lesson_section_question_about':
        'reread the lesson section the question is about, then try again',
    'shared.check_everything_makes_call_invalid':
        'check everything that makes the call invalid first, and raise before you change the graph or any module',
    'shared.run_cell_defines_keep_name':
        'run the cell that defines {name}, and keep its name',
    'shared.replace_raise_notimplementederror_your_code':
        'replace `raise NotImplementedError()` in {name} with your code',
    'shared.assign_one_capital_letter_example':
        'assign one capital letter, for example {question} = "A"',
    'shared.do_exactly_steps_optimizer_steps':
        'do exactly `steps` optimizer steps (range(steps)), not one more',
    'shared.do_exactly_steps_optimizer_steps_2':
        'do exactly `steps` optimizer steps (range(steps)), not one fewer',
    'shared.do_exactly_steps_optimizer_steps_3':
        'do exactly `steps` optimizer steps, cycling through batches: step i uses batches[i % len(batches)], so '
        'steps may exceed len(batches)',
    'shared.zero_gradients_every_step_optimizer':
        'zero the gradients every step (optimizer.zero_grad()), or they accumulate',
    'shared.use_learning_rate_lr_you':
        'use the learning rate `lr` you are given',
    'shared.use_plain_sgd_torch_optim':
        'use plain SGD: torch.optim.SGD(prepared.parameters(), lr=lr)',
    'shared.use_plain_sgd_without_momentum':
        'use plain SGD without momentum: torch.optim.SGD(prepared.parameters(), lr=lr)',
    'shared.use_mean_cross_entropy_over':
        'use the mean cross-entropy over the batch: F.cross_entropy(logits, y) with its default reduction',
    'shared.your_answer_removed_from_gm':
        "your answer removed {removed} from gm's graph (eliminate_dead_code?): only read gm; a node nobody uses is "
        "a node too, and the caller's graph must stay as it was",
    'shared.module_called_from_nodes_replace':
        "the module '{target}' is called from {sites} nodes: replace every node that calls it before you delete it "
        '(or delete unused submodules once, after the loop)',
    'shared.call_gm_recompile_after_changing':
        'call gm.recompile() after changing the graph, so gm.code and forward are regenerated',
    'shared.graph_lint_checks_every_node':
        "graph.lint() checks that every node's inputs are defined before it and belong to the graph",
    'shared.return_value_instead_printing':
        'return the value instead of printing it',
    'shared.return_value_function_ended_without':
        'return the value: the function ended without a `return` of it, so it returned None',
    'shared.train_prepared_place_optimizer_torch':
        'train prepared in place: an SGD optimizer over prepared.parameters() with lr=lr; each step zero_grad, '
        'loss.backward(), optimizer.step()',
    'shared.python_if_while_traced_tensor':
        'a Python `if`/`while` on a traced tensor cannot be recorded; move the branch into a function wrapped with '
        'torch.fx.wrap, make the module a leaf, or fix the value with concrete_args',
    'shared.len_iteration_need_concrete_size':
        'len() and iteration need a concrete size, which a Proxy does not have during tracing; wrap the helper with '
        'torch.fx.wrap, pass the value through concrete_args, or make the module that loops a leaf (a custom '
        "Tracer's is_leaf_module)",
    'shared.range_needs_real_int_fix':
        'range() needs a real int: fix the value with concrete_args',
    'shared.call_torch_fx_wrap_name':
        'call torch.fx.wrap("name") at the top level of the cell, outside any def, or use '
        'fx.Tracer(autowrap_functions=(fn,))',
    'shared.call_module_target_must_string':
        'a call_module target must be the string name of a submodule registered on the GraphModule '
        '(gm.add_submodule(name, module)), not a module object',
    'shared.call_module_node_s_target':
        "a call_module node's target must name a submodule (an nn.Module registered on gm), not a parameter, a "
        'tensor or another attribute: read those with a get_attr node',
    'shared.layer_built_bias_false_has':
        'a layer built with bias=False has no bias (.bias is None): for such a layer read no bias and add none',
    'shared.node_names_attribute_submodule_gm':
        'a node names an attribute or submodule that gm does not have (the error names it): register a new '
        'submodule with gm.add_submodule(name, module), and keep every one a node still uses',
    'shared.node_s_target_lambda_use':
        "a node's target is a lambda: use a real function such as torch.clamp and put its arguments in "
        'node.args/node.kwargs',
    'shared.node_s_target_functools_partial':
        "a node's target is a functools.partial, which gm.code cannot name: use the function itself and put the "
        'fixed arguments in node.args/node.kwargs',
    'shared.new_target_does_not_take':
        "the new target does not take the old node's kwargs (a traced F.relu carries inplace=...): set node.kwargs",
    'shared.layer_built_bias_false_has_2':
        'a layer built with bias=False has .bias None, and BatchNorm2d(affine=False) has .weight and .bias None: '
        'treat a missing bias as 0 and a missing weight as 1',
    'shared.torch_ao_quantization_convert_quantize':
        'torch.ao.quantization.convert and quantize_dynamic are eager-mode APIs; convert an FX-prepared model with '
        'convert_fx',
    'shared.prepare_registers_some_fake_quant':
        'prepare registers some fake-quant modules under two names and dict(gm.named_modules()) lists each once: '
        'use gm.get_submodule(node.target) or named_modules(remove_duplicate=False)',
    'shared.node_s_input_may_come':
        "a node's input may come by keyword (torch.relu(input=h)): when node.args is empty, read "
        "node.kwargs['input']",
    'shared.graphmodule_s_root_must_traced':
        "the GraphModule's root must be the traced model, which owns the submodules and parameters the graph names: "
        'fx.GraphModule(model, graph)',
    'shared.isinstance_takes_type_tuple_types':
        'isinstance takes a type or a tuple of types, and a list of types is neither: isinstance(m, '
        'tuple(leaf_types))',
    'shared.symbolic_trace_takes_module_plain':
        'symbolic_trace takes a module or a plain function, not a functools.partial: trace the module itself and '
        'fix the flags with concrete_args={name: value}',
    'shared.concrete_args_may_hold_only':
        'concrete_args may hold only the flags you were given: a parameter with no default '
        '(inspect.Parameter.empty) or a tensor input must stay out of it and remain a real input',
    'shared.node_reads_itself_node_replace':
        'a node reads itself: node.replace_all_uses_with(new) also rewired the new node, whose input is node; pass '
        "a delete_user_cb that leaves out new itself (or set the new node's args after replacing)",
    'shared.node_sits_after_node_reads':
        'a node sits after a node that reads it: create a new node inside `with gm.graph.inserting_after(node):` '
        '(or inserting_before its first user), so it comes before its users',
    'shared.node_whose_value_tuple_tensors':
        "a node whose value is a tuple of tensors has a tuple as node.meta['tensor_meta'], not one TensorMetadata: "
        "check the value's type before reading .shape",
    'shared.inside_pass_make_sure_every':
        'inside a pass, make sure every variable is assigned on every path before it is used',
    'shared.node_can_only_erased_once':
        'a node can only be erased once nothing uses it: call node.replace_all_uses_with(new) first',
    'shared.there_no_graphmodule_replace_all':
        'there is no GraphModule.replace_all_uses_of_node; use node.replace_all_uses_with(new_node)',
    'shared.node_reads_itself_after_inserting':
        'a node reads itself: after inserting a consumer of `node`, node.replace_all_uses_with(new) also rewired '
        'the new node; pass a delete_user_cb that leaves out new itself, or set new.args after replacing',
    'shared.next_found_nothing_no_item':
        'next(...) found nothing: no item met your condition; give next a default (next(..., None)) and check what '
        "the nodes' op, name and target really are",
    'shared.next_found_nothing_no_node':
        'next(...) found nothing: no node matched; compare node.name (not node.target) with the name you look for',
    'shared.graph_lint_found_node_used':
        'graph.lint() found a node used before it is defined: insert new nodes with graph.inserting_after(node) so '
        'they come after their inputs',
    'shared.node_another_graph_used_here':
        'a node of another graph is used here: copy nodes with new_graph.node_copy(node, arg_transform) so that '
        "their inputs are remapped, or create them with this graph's own methods",
    'shared.weight_has_wrong_orientation_nn':
        'a weight has the wrong orientation: nn.Linear computes x @ W.T + b, with W of shape (out, in)',
    'shared.torch_compile_backend_must_return':
        'a torch.compile backend must return a callable that runs the graph it received: return gm.forward (or what '
        'your pass returned)',
    'shared.tensors_two_dtypes_met_float32':
        'tensors of two dtypes met (float32 and float64): keep the dtype of what you were given; a tensor made with '
        'torch.randn or torch.zeros is float32 unless dtype= says otherwise (torch.randn_like, x.new_zeros keep '
        "it), and model.float() changes the caller's model",
    'shared.dynamo_met_code_cannot_put':
        "dynamo met code it cannot put in a graph (a branch on a tensor's value, .item(), print...); with "
        'fullgraph=True every such graph break is an error: leave fullgraph out so that dynamo splits the graph',
    'shared.torch_export_met_code_cannot':
        "torch.export met code it cannot capture (a branch on a tensor's value, .item(), print...): write a "
        'data-dependent branch with torch.cond, or move it out of forward',
    'shared.keys_dynamic_shapes_dict_are':
        "the keys of a dynamic_shapes dict are the names of forward's arguments (they differ from model to model): "
        'pass a tuple instead, one entry per positional argument, such as ({0: Dim("batch")},)',
    'shared.dynamic_shapes_has_one_entry':
        'dynamic_shapes has one entry per input, in the order of the inputs: with several inputs, give each its own '
        'spec, such as tuple({0: Dim("batch")} for _ in example_inputs)',
    'shared.export_specialised_dimension_you_marked':
        "export specialised a dimension you marked dynamic: the model fixes its size (a Linear's in_features, a "
        "conv's channels), or the example has size 1 there; mark only dimensions that really vary, such as the "
        'batch, dimension 0',
    'shared.exported_program_checks_inputs_shapes':
        "the exported program checks its inputs' shapes: a dimension that was not marked dynamic must keep the "
        'example\'s size; export with dynamic_shapes=({0: Dim("batch")},) to let the batch vary',
    'shared.torch_export_export_takes_example':
        'torch.export.export takes the example inputs as a tuple: export(model, (x,)), not export(model, x)',
    'shared.prepare_qat_pt2e_convert_pt2e':
        'prepare_qat_pt2e and convert_pt2e take the runnable GraphModule of an exported program: '
        'torch.export.export(model, example_inputs).module(), not the ExportedProgram itself',
    'shared.pt2e_quantization_has_moved_from':
        'PT2E quantization has moved from torch.ao to torchao: import it from torchao.quantization.pt2e '
        '(quantize_pt2e for prepare_qat_pt2e and convert_pt2e, quantizer.x86_inductor_quantizer for the quantizer)',
    'shared.layer_received_tuple_where_tensor':
        'a layer received a tuple where a tensor goes: when that tuple holds example inputs, hand it to '
        'torch.export.export as it is, export(model, example_inputs), not wrapped in another tuple, and call a '
        'model with model(*example_inputs)',
    'shared.operator_has_no_fake_kernel':
        'the operator has no fake kernel, so torch.compile and torch.export cannot trace it: register one with '
        "op.register_fake (or torch.library.register_fake), returning an empty tensor of the output's shape and "
        'dtype, torch.empty_like(x)',
    'shared.operator_has_no_backward_op':
        'the operator has no backward: op.register_autograd(backward, setup_context=setup_context), where backward '
        'returns one gradient per input (None for a float)',
    'shared.schema_says_operator_writes_argument':
        'the schema says the operator writes to an argument (Tensor(a!)), and such an operator cannot get a '
        'backward: it mutates nothing, so mutates_args=()',
    'shared.operator_s_name_defined_once':
        "an operator's name is defined once per process: define it in the namespace you are given (a fresh one for "
        'each definition), and open a namespace that exists with torch.library.Library(ns, "FRAGMENT")',
    'shared.torch_library_custom_op_reads':
        "torch.library.custom_op reads the operator's schema from the annotations: write (x: torch.Tensor, scale: "
        'float) -> torch.Tensor',
    'shared.not_every_call_function_target':
        'not every call_function target is an operator (operator.getitem is a plain function): read '
        'getattr(node.target, "overloadpacket", None)',
    'shared.backward_returns_one_gradient_per':
        'backward returns one gradient per input of the operator, in order: (grad for x, None for scale)',
    'shared.inductor_calls_custom_pass_graph':
        'inductor calls a custom pass with the graph, as a function: hand it pattern_pass.apply, not the pass '
        'object',
    'shared.this_pass_holds_pattern_already':
        'this pass holds that pattern already: make a new PatternMatcherPass in each call, and register one '
        'replacement in it',
    'shared.pattern_matcher_reads_each_node':
        'the pattern matcher reads each node\'s meta["val"], and one graph\'s values must share one fake mode: '
        'trace the graph with make_fx(fn, tracing_mode="fake") (make_fx\'s real mode makes a fake mode per node)',
    'shared.torch_save_pickles_exported_program':
        'torch.save pickles an exported program, but torch.load cannot rebuild it: write it with '
        'torch.export.save(ep, path) and read it with torch.export.load(path)',
    'shared.overload_not_decomposition_table_core':
        'that overload is not in the decomposition table (core ATen has it already, nothing decomposes it): '
        'table.pop(op, None) removes an entry that may be missing',
    'shared.qualified_name_has_dots_getattr':
        'a qualified name has dots, and getattr reads one attribute: module.get_submodule("blocks.1") walks the '
        'path',
    'shared.look_endless_loop_work_grows':
        'look for an endless loop, or work that grows too fast',
    'shared.answers_must_not_exit_interpreter':
        'the answers must not exit the interpreter or use more memory than the limit',
    'shared.write_fewer_smaller_files_every':
        'write fewer or smaller files: every file the answers write counts against that limit',
    'shared.answers_must_not_exit_interpreter_2':
        'the answers must not exit the interpreter',
    'shared.answers_must_not_patch':
        'answers must not patch torch, builtins or the autograder',
    'shared.answers_must_not_write_grader_files':
        "answers must not write the grader's files",
    'shared.fix_error_cell_defines':
        'fix the error in the cell that defines {var}, then run it',
    'shared.reread_section':
        'reread {section}, then try again',
}
