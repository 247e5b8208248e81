"""Hints recognised from the error a learner's function raised: torch.fx's usual failures, said plainly."""
from __future__ import annotations

import re

from autograder.checks.hints import hint_of

__all__ = ["ERROR_HINTS", "hint_for_error"]

# (exception type or None for any, regex on the message, hint id (autograder/checks/hints/shared.py)[, regex on the
# learner's failing line]). First match
# wins. With the fourth element the diagnosis must also be confirmed by the line of the learner's code that raised
# (core's evidence "where"): a NoneType error on a line that reads no .bias or .weight is not about a missing bias.
ERROR_HINTS: list[tuple] = [
    ("TraceError", r"symbolically traced variables cannot be used as inputs to control flow",
     "shared.python_if_while_traced_tensor"),
    (None, r"Proxy object cannot be iterated|object of type 'Proxy' has no len|'len' is not supported",
     "shared.len_iteration_need_concrete_size"),
    (None, r"'Proxy' object cannot be interpreted as an integer",
     "shared.range_needs_real_int_fix"),
    ("NotImplementedError", r"wrap must be called at the top level",
     "shared.call_torch_fx_wrap_name"),
    (None, r"has type .* but a str is expected|has no attribute .*call_module|Tried to use .* as a call_module target",
     "shared.call_module_target_must_string"),
    (None, r"is not an nn\.Module|does not reference an nn\.Module",
     "shared.call_module_node_s_target"),
    (None, r"target [\w.]+\.bias references nonexistent attribute bias\b",
     "shared.layer_built_bias_false_has"),
    (None, r"Node referenced nonexistent target|references nonexistent attribute",
     "shared.node_names_attribute_submodule_gm"),
    (None, r"Unable to represent lambda",
     "shared.node_s_target_lambda_use"),
    (None, r"'functools\.partial' object has no attribute '__name__'",
     "shared.node_s_target_functools_partial"),
    (None, r"Expected node.target to be str for call_module|'(?!str'|functools)[\w.]+' object has no attribute "
           r"'(__name__|split)'",
     "shared.call_module_target_must_string"),
    (None, r"unexpected keyword argument 'inplace'",
     "shared.new_target_does_not_take"),
    # A None used where a tensor was expected: a tensor method or operator on None, or a tensor argument named
    # bias/weight/other given None. ("'NoneType' object is not subscriptable" is not a missing parameter.)
    (None, r"'NoneType' object has no attribute '(detach|clone|data|shape|size|numel|dtype|t|T|mul_?|add_?|sub_?|"
           r"div_?|view|reshape|copy_|fill_|zero_|to|double|float|unsqueeze|expand|sum|mean|sqrt|rsqrt|pow)'|"
           r"unsupported operand type\(s\) for .*NoneType|argument '(other|bias|weight|input)'.* must be Tensor, "
           r"not NoneType",
     "shared.layer_built_bias_false_has_2", r"\.(bias|weight)\b|\bb[12]\b|\bbias\b"),
    (None, r"has no attribute 'activation_post_process'",
     "shared.torch_ao_quantization_convert_quantize"),
    ("KeyError", r"activation_post_process_\d+",
     "shared.prepare_registers_some_fake_quant"),
    ("IndexError", r"tuple index out of range",
     "shared.node_s_input_may_come",
     r"\.args\[\d\]"),
    ("AttributeError", r"^'Module' object has no attribute",
     "shared.graphmodule_s_root_must_traced", r"GraphModule\("),
    ("TypeError", r"isinstance\(\) arg 2 must be a type, a tuple of types",
     "shared.isinstance_takes_type_tuple_types"),
    (None, r"Expected FunctionType, got <class 'functools\.partial'>",
     "shared.symbolic_trace_takes_module_plain"),
    ("NotImplementedError", r"argument of type: <class 'type'>",
     "shared.concrete_args_may_hold_only", r"concrete_args"),
    (None, r"Argument '([\w.]+)' of Node '\1' was used before it has been defined",
     "shared.node_reads_itself_node_replace"),
    (None, r"Argument '[\w.]+' of Node '[\w.]+' was used before it has been defined",
     "shared.node_sits_after_node_reads"),
    ("AttributeError", r"'tuple' object has no attribute 'shape'",
     "shared.node_whose_value_tuple_tensors", r"tensor_meta"),
    ("UnboundLocalError", r"",
     "shared.inside_pass_make_sure_every"),
    ("RuntimeError", r"(erase|Tried to erase) Node .* but it still had \d+ users",
     "shared.node_can_only_erased_once"),
    (None, r"replace_all_uses_of_node",
     "shared.there_no_graphmodule_replace_all"),
    (None, r"Argument '([^']+)' of Node '\1' was used before it has been defined",
     "shared.node_reads_itself_after_inserting"),
    # next() on an empty search: that it compared node.target only the failing line can show
    ("StopIteration", r"^$",
     "shared.next_found_nothing_no_item", r"^(?!.*\.target\b)"),
    ("StopIteration", r"^$",
     "shared.next_found_nothing_no_node",
     r"\.target\b"),
    (None, r"was used before it has been defined|Node .* (uses|used before|is used before it is defined)",
     "shared.graph_lint_found_node_used"),
    (None, r"does not belong to this Graph",
     "shared.node_another_graph_used_here"),
    (None, r"mat1 and mat2 shapes cannot be multiplied|size mismatch",
     "shared.weight_has_wrong_orientation_nn",
     r"weight|@|matmul|\bmm\b|linear|\.T\b|\bw[12]?\b"),
    (None, r"compiler_fn did not return callable",
     "shared.torch_compile_backend_must_return"),
    (None, r"type \((float|double|half)\) and \w+ type \((float|double|half)\) should be the same|"
           r"must have the same dtype|expected scalar type \w+ but found \w+|expected m1 and m2 to have the same dtype",
     "shared.tensors_two_dtypes_met_float32"),
    ("Unsupported", r"",
     "shared.dynamo_met_code_cannot_put",
     r"^(?!.*\bexport\b)"),
    ("Unsupported", r"",
     "shared.torch_export_met_code_cannot", r"\bexport\b"),
    ("UserError", r"dynamic_shapes.*(arg names|top-level keys)",
     "shared.keys_dynamic_shapes_dict_are"),
    ("UserError", r"mismatch between the structure of `inputs` and `dynamic_shapes`",
     "shared.dynamic_shapes_has_one_entry"),
    ("UserError", r"Constraints violated|specialized it to be a constant",
     "shared.export_specialised_dimension_you_marked"),
    (None, r"Guard failed: .*size\(\)",
     "shared.exported_program_checks_inputs_shapes"),
    ("UserError", r"Expecting `args` to be a tuple",
     "shared.torch_export_export_takes_example"),
    ("AttributeError", r"'ExportedProgram' object has no attribute 'meta'",
     "shared.prepare_qat_pt2e_convert_pt2e"),
    (None, r"No module named 'torch\.ao\.quantization\.(quantizer|quantize_pt2e|pt2e)|"
           r"cannot import name '\w*(pt2e|exported_model)\w*' from 'torch\.ao\.quantization",
     "shared.pt2e_quantization_has_moved_from"),
    ("TypeError", r"argument 'input' \(position 1\) must be Tensor, not tuple",
     "shared.layer_received_tuple_where_tensor", r"export\(|example_inputs|\(\*?inputs"),
    (None, r"There was no fake impl registered for",
     "shared.operator_has_no_fake_kernel"),
    (None, r"no autograd formula was registered|does not have an autograd kernel|autograd kernel was not registered",
     "shared.operator_has_no_backward_op"),
    (None, r"Cannot register autograd formula for non-functional operator",
     "shared.schema_says_operator_writes_argument"),
    ("RuntimeError", r"with the same name and overload name multiple times|Only a single TORCH_LIBRARY can be used",
     "shared.operator_s_name_defined_once"),
    (None, r"infer_schema\(func\): Parameter \w+ (must have a type annotation|has unsupported type)|"
           r"infer_schema\(func\): .*return",
     "shared.torch_library_custom_op_reads"),
    ("AttributeError", r"object has no attribute 'overloadpacket'",
     "shared.not_every_call_function_target"),
    (None, r"returned an incorrect number of gradients",
     "shared.backward_returns_one_gradient_per"),
    (None, r"PatternMatcherPass' object is not callable",
     "shared.inductor_calls_custom_pass_graph"),
    ("RuntimeError", r"Duplicate pattern:",
     "shared.this_pass_holds_pattern_already"),
    (None, r"fake mode \(.*\) from fake tensor input \d+ doesn't match mode",
     "shared.pattern_matcher_reads_each_node"),
    ("TypeError", r"_ModuleStackTracer\.__init__\(\) missing",
     "shared.torch_save_pickles_exported_program"),
    ("KeyError", r"^\W*<OpOverload\(op='\w+\.\w+', overload='\w+'\)>\W*$",
     "shared.overload_not_decomposition_table_core", r"del |\[|pop\("),
    ("AttributeError", r"'(UnflattenedModule|InterpreterModule|GraphModule)' object has no attribute '[\w]+(\.[\w]+)+'",
     "shared.qualified_name_has_dots_getattr"),
    (None, r"^(?!.*(recompile_limit|cache_size_limit|[Rr]ecompil(ing|ation)))(?=.*\brecompile\b)",
     "shared.call_gm_recompile_after_changing"),
]


def hint_for_error(exc_type: str, message: str, where: str | None = None) -> str | None:
    """The hint for an error raised by a learner's function, or None when no known signature matches.

    `where` is the learner's line that raised ("line 7: b = first.bias + 1"); a rule that needs confirmation
    fires only when that line matches it. When the line's text is unknown (None, or only "line 7": code run
    from a string has no source to show), the message alone decides.
    """
    code = where.split(":", 1)[1] if where and ":" in where else None
    for etype, pattern, hint, *confirm in ERROR_HINTS:
        if (etype is None or etype == exc_type) and re.search(pattern, message or ""):
            if confirm and code is not None and not re.search(confirm[0], code):
                continue
            return hint_of(hint)
    return None
