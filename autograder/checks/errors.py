"""Hints recognised from the error a learner's function raised: torch.fx's usual failures, said plainly."""
from __future__ import annotations

import re

__all__ = ["ERROR_HINTS", "hint_for_error"]

# (exception type or None for any, regex on the message, hint[, regex on the learner's failing line]). First match
# wins. With the fourth element the diagnosis must also be confirmed by the line of the learner's code that raised
# (core's evidence "where"): a NoneType error on a line that reads no .bias or .weight is not about a missing bias.
ERROR_HINTS: list[tuple] = [
    ("TraceError", r"symbolically traced variables cannot be used as inputs to control flow",
     "a Python `if`/`while` on a traced tensor cannot be recorded; move the branch into a function "
     "wrapped with torch.fx.wrap, make the module a leaf, or fix the value with concrete_args"),
    (None, r"Proxy object cannot be iterated|object of type 'Proxy' has no len|'len' is not supported",
     "len() and iteration need a concrete size, which a Proxy does not have during tracing; "
     "wrap the helper with torch.fx.wrap, pass the value through concrete_args, or make the module that "
     "loops a leaf (a custom Tracer's is_leaf_module)"),
    (None, r"'Proxy' object cannot be interpreted as an integer",
     "range() needs a real int: fix the value with concrete_args"),
    ("NotImplementedError", r"wrap must be called at the top level",
     "call torch.fx.wrap(\"name\") at the top level of the cell, outside any def, or use "
     "fx.Tracer(autowrap_functions=(fn,))"),
    (None, r"has type .* but a str is expected|has no attribute .*call_module|Tried to use .* as a call_module target",
     "a call_module target must be the string name of a submodule registered on the GraphModule "
     "(gm.add_submodule(name, module)), not a module object"),
    (None, r"is not an nn\.Module|does not reference an nn\.Module",
     "a call_module node's target must name a submodule (an nn.Module registered on gm), not a parameter, a "
     "tensor or another attribute: read those with a get_attr node"),
    (None, r"target [\w.]+\.bias references nonexistent attribute bias\b",
     "a layer built with bias=False has no bias (.bias is None): for such a layer read no bias and add none"),
    (None, r"Node referenced nonexistent target|references nonexistent attribute",
     "a node names an attribute or submodule that gm does not have (the error names it): register a new "
     "submodule with gm.add_submodule(name, module), and keep every one a node still uses"),
    (None, r"Unable to represent lambda",
     "a node's target is a lambda: use a real function such as torch.clamp and put its arguments in "
     "node.args/node.kwargs"),
    (None, r"'functools\.partial' object has no attribute '__name__'",
     "a node's target is a functools.partial, which gm.code cannot name: use the function itself and put the "
     "fixed arguments in node.args/node.kwargs"),
    (None, r"Expected node.target to be str for call_module|'(?!str'|functools)[\w.]+' object has no attribute "
           r"'(__name__|split)'",
     "a call_module target must be the string name of a submodule registered on the GraphModule "
     "(gm.add_submodule(name, module)), not a module object"),
    (None, r"unexpected keyword argument 'inplace'",
     "the new target does not take the old node's kwargs (a traced F.relu carries inplace=...): set node.kwargs"),
    # A None used where a tensor was expected: a tensor method or operator on None, or a tensor argument named
    # bias/weight/other given None. ("'NoneType' object is not subscriptable" is not a missing parameter.)
    (None, r"'NoneType' object has no attribute '(detach|clone|data|shape|size|numel|dtype|t|T|mul_?|add_?|sub_?|"
           r"div_?|view|reshape|copy_|fill_|zero_|to|double|float|unsqueeze|expand|sum|mean|sqrt|rsqrt|pow)'|"
           r"unsupported operand type\(s\) for .*NoneType|argument '(other|bias|weight|input)'.* must be Tensor, "
           r"not NoneType",
     "a layer built with bias=False has .bias None, and BatchNorm2d(affine=False) has .weight and .bias None: "
     "treat a missing bias as 0 and a missing weight as 1", r"\.(bias|weight)\b|\bb[12]\b|\bbias\b"),
    (None, r"has no attribute 'activation_post_process'",
     "torch.ao.quantization.convert and quantize_dynamic are eager-mode APIs; convert an FX-prepared model "
     "with convert_fx"),
    ("KeyError", r"activation_post_process_\d+",
     "prepare registers some fake-quant modules under two names and dict(gm.named_modules()) lists each once: "
     "use gm.get_submodule(node.target) or named_modules(remove_duplicate=False)"),
    ("IndexError", r"tuple index out of range",
     "a node's input may come by keyword (torch.relu(input=h)): when node.args is empty, read node.kwargs['input']",
     r"\.args\[\d\]"),
    ("AttributeError", r"^'Module' object has no attribute",
     "the GraphModule's root must be the traced model, which owns the submodules and parameters the graph names: "
     "fx.GraphModule(model, graph)", r"GraphModule\("),
    ("TypeError", r"isinstance\(\) arg 2 must be a type, a tuple of types",
     "isinstance takes a type or a tuple of types, and a list of types is neither: isinstance(m, tuple(leaf_types))"),
    (None, r"Expected FunctionType, got <class 'functools\.partial'>",
     "symbolic_trace takes a module or a plain function, not a functools.partial: trace the module itself and fix "
     "the flags with concrete_args={name: value}"),
    ("NotImplementedError", r"argument of type: <class 'type'>",
     "concrete_args may hold only the flags you were given: a parameter with no default (inspect.Parameter.empty) "
     "or a tensor input must stay out of it and remain a real input", r"concrete_args"),
    (None, r"Argument '([\w.]+)' of Node '\1' was used before it has been defined",
     "a node reads itself: node.replace_all_uses_with(new) also rewired the new node, whose input is node; pass "
     "delete_user_cb=lambda user: user is not new (or set the new node's args after replacing)"),
    (None, r"Argument '[\w.]+' of Node '[\w.]+' was used before it has been defined",
     "a node sits after a node that reads it: create a new node inside `with gm.graph.inserting_after(node):` "
     "(or inserting_before its first user), so it comes before its users"),
    ("AttributeError", r"'tuple' object has no attribute 'shape'",
     "a node whose value is a tuple of tensors has a tuple as node.meta['tensor_meta'], not one TensorMetadata: "
     "check the value's type before reading .shape", r"tensor_meta"),
    ("UnboundLocalError", r"",
     "inside a pass, make sure every variable is assigned on every path before it is used"),
    ("RuntimeError", r"(erase|Tried to erase) Node .* but it still had \d+ users",
     "a node can only be erased once nothing uses it: call node.replace_all_uses_with(new) first"),
    (None, r"replace_all_uses_of_node",
     "there is no GraphModule.replace_all_uses_of_node; use node.replace_all_uses_with(new_node)"),
    (None, r"Argument '([^']+)' of Node '\1' was used before it has been defined",
     "a node reads itself: after inserting a consumer of `node`, node.replace_all_uses_with(new) also rewired "
     "the new node; pass delete_user_cb=lambda user: user is not new, or set new.args after replacing"),
    # next() on an empty search: that it compared node.target only the failing line can show
    ("StopIteration", r"^$",
     "next(...) found nothing: no item met your condition; give next a default (next(..., None)) and check what "
     "the nodes' op, name and target really are", r"^(?!.*\.target\b)"),
    ("StopIteration", r"^$",
     "next(...) found nothing: no node matched; compare node.name (not node.target) with the name you look for",
     r"\.target\b"),
    (None, r"was used before it has been defined|Node .* (uses|used before|is used before it is defined)",
     "graph.lint() found a node used before it is defined: insert new nodes with graph.inserting_after(node) so "
     "they come after their inputs"),
    (None, r"does not belong to this Graph",
     "a node of another graph is used here: copy nodes with new_graph.node_copy(node, arg_transform) so that "
     "their inputs are remapped, or create them with this graph's own methods"),
    (None, r"mat1 and mat2 shapes cannot be multiplied|size mismatch",
     "a weight has the wrong orientation: nn.Linear computes x @ W.T + b, with W of shape (out, in)",
     r"weight|@|matmul|\bmm\b|linear|\.T\b|\bw[12]?\b"),
    (None, r"compiler_fn did not return callable",
     "a torch.compile backend must return a callable that runs the graph it received: return gm.forward (or "
     "what your pass returned)"),
    (None, r"type \((float|double|half)\) and \w+ type \((float|double|half)\) should be the same|"
           r"must have the same dtype|expected scalar type \w+ but found \w+|expected m1 and m2 to have the same dtype",
     "tensors of two dtypes met (float32 and float64): keep the dtype of what you were given; a tensor made with "
     "torch.randn or torch.zeros is float32 unless dtype= says otherwise (torch.randn_like, x.new_zeros keep it), "
     "and model.float() changes the caller's model"),
    ("Unsupported", r"",
     "dynamo met code it cannot put in a graph (a branch on a tensor's value, .item(), print...); with "
     "fullgraph=True every such graph break is an error: leave fullgraph out so that dynamo splits the graph",
     r"^(?!.*\bexport\b)"),
    ("Unsupported", r"",
     "torch.export met code it cannot capture (a branch on a tensor's value, .item(), print...): write a "
     "data-dependent branch with torch.cond, or move it out of forward", r"\bexport\b"),
    ("UserError", r"dynamic_shapes.*(arg names|top-level keys)",
     "the keys of a dynamic_shapes dict are the names of forward's arguments (they differ from model to model): "
     "pass a tuple instead, one entry per positional argument, such as ({0: Dim(\"batch\")},)"),
    ("UserError", r"mismatch between the structure of `inputs` and `dynamic_shapes`",
     "dynamic_shapes has one entry per input, in the order of the inputs: with several inputs, give each its own "
     "spec, such as tuple({0: Dim(\"batch\")} for _ in example_inputs)"),
    ("UserError", r"Constraints violated|specialized it to be a constant",
     "export specialised a dimension you marked dynamic: the model fixes its size (a Linear's in_features, a "
     "conv's channels), or the example has size 1 there; mark only dimensions that really vary, such as the "
     "batch, dimension 0"),
    (None, r"Guard failed: .*size\(\)",
     "the exported program checks its inputs' shapes: a dimension that was not marked dynamic must keep the "
     "example's size; export with dynamic_shapes=({0: Dim(\"batch\")},) to let the batch vary"),
    ("UserError", r"Expecting `args` to be a tuple",
     "torch.export.export takes the example inputs as a tuple: export(model, (x,)), not export(model, x)"),
    ("AttributeError", r"'ExportedProgram' object has no attribute 'meta'",
     "prepare_qat_pt2e and convert_pt2e take the runnable GraphModule of an exported program: "
     "torch.export.export(model, example_inputs).module(), not the ExportedProgram itself"),
    (None, r"No module named 'torch\.ao\.quantization\.(quantizer|quantize_pt2e|pt2e)|"
           r"cannot import name '\w*(pt2e|exported_model)\w*' from 'torch\.ao\.quantization",
     "PT2E quantization has moved from torch.ao to torchao: import it from torchao.quantization.pt2e "
     "(quantize_pt2e for prepare_qat_pt2e and convert_pt2e, quantizer.x86_inductor_quantizer for the quantizer)"),
    ("TypeError", r"argument 'input' \(position 1\) must be Tensor, not tuple",
     "a layer received a tuple where a tensor goes: when that tuple holds example inputs, hand it to "
     "torch.export.export as it is, export(model, example_inputs), not wrapped in another tuple, and call a "
     "model with model(*example_inputs)", r"export\(|example_inputs|\(\*?inputs"),
    (None, r"There was no fake impl registered for",
     "the operator has no fake kernel, so torch.compile and torch.export cannot trace it: register one with "
     "op.register_fake (or torch.library.register_fake), returning an empty tensor of the output's shape and "
     "dtype, torch.empty_like(x)"),
    (None, r"no autograd formula was registered|does not have an autograd kernel|autograd kernel was not registered",
     "the operator has no backward: op.register_autograd(backward, setup_context=setup_context), where backward "
     "returns one gradient per input (None for a float)"),
    (None, r"Cannot register autograd formula for non-functional operator",
     "the schema says the operator writes to an argument (Tensor(a!)), and such an operator cannot get a backward: "
     "it mutates nothing, so mutates_args=()"),
    ("RuntimeError", r"with the same name and overload name multiple times|Only a single TORCH_LIBRARY can be used",
     "an operator's name is defined once per process: define it in the namespace you are given (a fresh one for "
     "each definition), and open a namespace that exists with torch.library.Library(ns, \"FRAGMENT\")"),
    (None, r"infer_schema\(func\): Parameter \w+ (must have a type annotation|has unsupported type)|"
           r"infer_schema\(func\): .*return",
     "torch.library.custom_op reads the operator's schema from the annotations: write "
     "(x: torch.Tensor, scale: float) -> torch.Tensor"),
    ("AttributeError", r"object has no attribute 'overloadpacket'",
     "not every call_function target is an operator (operator.getitem is a plain function): read "
     "getattr(node.target, \"overloadpacket\", None)"),
    (None, r"returned an incorrect number of gradients",
     "backward returns one gradient per input of the operator, in order: (grad for x, None for scale)"),
    (None, r"PatternMatcherPass' object is not callable",
     "inductor calls a custom pass with the graph, as a function: hand it pattern_pass.apply, not the pass object"),
    ("RuntimeError", r"Duplicate pattern:",
     "this pass holds that pattern already: make a new PatternMatcherPass in each call, and register one "
     "replacement in it"),
    (None, r"fake mode \(.*\) from fake tensor input \d+ doesn't match mode",
     "the pattern matcher reads each node's meta[\"val\"], and one graph's values must share one fake mode: "
     "trace the graph with make_fx(fn, tracing_mode=\"fake\") (make_fx's real mode makes a fake mode per node)"),
    ("TypeError", r"_ModuleStackTracer\.__init__\(\) missing",
     "torch.save pickles an exported program, but torch.load cannot rebuild it: write it with "
     "torch.export.save(ep, path) and read it with torch.export.load(path)"),
    ("KeyError", r"^\W*<OpOverload\(op='\w+\.\w+', overload='\w+'\)>\W*$",
     "that overload is not in the decomposition table (core ATen has it already, nothing decomposes it): "
     "table.pop(op, None) removes an entry that may be missing", r"del |\[|pop\("),
    ("AttributeError", r"'(UnflattenedModule|InterpreterModule|GraphModule)' object has no attribute '[\w]+(\.[\w]+)+'",
     "a qualified name has dots, and getattr reads one attribute: module.get_submodule(\"blocks.1\") walks the "
     "path"),
    (None, r"^(?!.*(recompile_limit|cache_size_limit|[Rr]ecompil(ing|ation)))(?=.*\brecompile\b)",
     "call gm.recompile() after changing the graph, so gm.code and forward are regenerated"),
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
            return hint
    return None
