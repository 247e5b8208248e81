"""Progressive hints of Part III's exercises (12-14), in the format of autograder/coursedata/hints.py, which
holds them with the others in HINTS."""
from __future__ import annotations

__all__ = ["PART_III"]

PART_III: dict[str, dict[str, list[str]]] = {
    "ex12_custom_ops": {
        "register_scaled_gelu": [
            "Decorate a function `(x: Tensor, scale: float) -> Tensor` with "
            "`torch.library.custom_op(f\"{namespace}::scaled_gelu\", mutates_args=())`: the annotations become the "
            "schema, so they must say `Tensor` and `float`.",
            "The decorated object has `.register_fake` (a function that returns an empty tensor like `x`, for "
            "compile and export) and `.register_autograd(backward, setup_context=...)`; backward returns one "
            "gradient per input, `None` for the float.",
            "`setup_context` saves `x` and `scale` on `ctx`; `backward` returns "
            "`(grad * scale * (Phi(x) + x * phi(x)), None)` with Phi and phi the normal CDF and density; return "
            "the decorated op.",
        ],
        "count_op_nodes": [
            "Look at the `call_function` nodes of `ep.graph`: each target is an `OpOverload` such as "
            "`torch.ops.aten.gelu.default`, or a plain function such as `operator.getitem`.",
            "An overload matches when `node.target == op`; a packet (`torch.ops.aten.gelu`) matches the nodes whose "
            "`target.overloadpacket` is it. Not every target has an `overloadpacket`: use `getattr(..., None)`.",
            "`sum(1 for n in ep.graph.nodes if n.op == \"call_function\" and (n.target == op or "
            "getattr(n.target, \"overloadpacket\", None) is op))`.",
        ],
        "replace_with_op": [
            "A wrapped function is a `call_function` node whose `target` is the function object itself: compare "
            "with `is fn`, not by name.",
            "Set `node.target = op` and keep `args` and `kwargs`; the node still says `meta[\"is_wrapped\"]`, which "
            "makes `gm.code` wrap the op's name: drop it with `node.meta.pop(\"is_wrapped\", None)`.",
            "After the loop: `gm.graph.lint()`, `gm.recompile()` (otherwise `gm.code` still calls `fn`), and "
            "`return gm`.",
        ],
    },
    "ex13_inductor_passes": {
        "make_pattern_pass": [
            "Inductor's pattern matcher lives in `torch._inductor.pattern_matcher`: a `PatternMatcherPass` holds "
            "replacements, and `register_replacement` adds one to it.",
            "`register_replacement(search_fn, replace_fn, example_inputs, trace_fn, pass_dicts)`: search_fn is what "
            "is found, replace_fn what replaces it; `fwd_only` traces both as graphs after grad; the last argument "
            "is your pass.",
            "Make a new `PatternMatcherPass()` inside the function (one kept between calls collects every call's "
            "replacement, and a second registration of the same pattern raises), register, and return the pass.",
        ],
        "apply_pattern_pass": [
            "A `PatternMatcherPass` has `apply(gm)`, which rewrites the graph in place and returns how many "
            "replacements it made.",
            "`apply` changes `gm.graph` but not `gm.code`: recompile afterwards, as after any change of a graph.",
            "Keep the number `apply(gm)` returns, then `gm.graph.lint()`, `gm.recompile()`, and return that number "
            "(apply it once: a second apply finds nothing left).",
        ],
        "compile_with_post_grad_pass": [
            "Inductor runs a pass of yours on the ATen graphs it compiles when its config names it: "
            "`post_grad_custom_post_pass` takes a function of the graph, such as `pattern_pass.apply`.",
            "Setting `torch._inductor.config` for good changes every later compile of the process, and a "
            "`config.patch` around `torch.compile(...)` alone has ended before the first call compiles: give "
            "the setting to this compile only.",
            "One call of `torch.compile` on `model`, returned: inductor as its backend, and an `options` dict whose "
            "`\"post_grad_custom_post_pass\"` is the pass's `apply`.",
        ],
    },
    "ex14_exported_programs": {
        "save_and_reload": [
            "`torch.export.save(ep, path)` writes the program, weights included, as a `.pt2` archive; "
            "`torch.export.load(path)` reads it back as a new `ExportedProgram`.",
            "Use `path` as it is given (a `str` or a `pathlib.Path`): add no suffix and choose no name of your own. "
            "`torch.save` cannot pickle a program; the `.pt2` format is torch.export's own.",
            "Two lines: save `ep` to `path`, then return what loading `path` gives (a new program, not `ep`).",
        ],
        "module_of_nodes": [
            "Each `call_function` node of `ep.graph` carries `node.meta[\"nn_module_stack\"]`: a dict from the "
            "root module inwards, each value a pair (qualified name, module type).",
            "The innermost module is the last entry; its qualified name is element `[0]` of the value. The keys "
            "are torch's own (`L__self__fc`, an object id under `strict=True`, `@1` for a second call): not names.",
            "For every node whose `op` is `\"call_function\"`: element `[0]` of the last of its stack's values "
            "(`list(...)[-1]`), or `\"\"` for a node without a stack.",
        ],
        "decompose_except": [
            "`ep.run_decompositions(table)` decomposes what `table` lists; "
            "`torch.export.default_decompositions()` is the table that leads to core ATen.",
            "Take that table and remove the overloads of `keep` from it; an overload it lacks (one core ATen has "
            "already) is fine: `table.pop(op, None)`. An empty table `{}` decomposes nothing.",
            "`table = torch.export.default_decompositions()`, `for op in keep: table.pop(op, None)`, then run the "
            "decompositions of that table on `ep` and return the program they give.",
        ],
        "unflatten_module": [
            "`ep.module()` is one flat graph; `torch.export.unflatten(ep)` rebuilds the module hierarchy, "
            "with a graph of its own per submodule.",
            "A qualified name has dots (`blocks.1`): `getattr` reads one attribute only; "
            "`nn.Module.get_submodule(fqn)` walks the path.",
            "One line: `get_submodule(fqn)` of what `torch.export.unflatten` makes of `ep`.",
        ],
    },
}
