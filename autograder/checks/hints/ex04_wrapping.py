"""The hints of ex04_wrapping: `PROGRESSIVE`, three per graded function from a nudge to nearly the answer (`fxcourse
hint` shows the next one, in the format autograder/coursedata/hints.py describes), and `HINTS`, what its checks say
when an answer fails, by id (a template's {fields} are filled by the judge that names it)."""
from __future__ import annotations

__all__ = ["PROGRESSIVE", "HINTS"]

PROGRESSIVE: dict[str, list[str]] = {
    'trace_gated': [
        'The trace must not step into `gate`: make it a leaf function, so each call becomes one `call_function` '
        'node. The lesson showed two tools: `fx.wrap` and the `autowrap_functions` argument of `fx.Tracer`.',
        "`fx.wrap('gate')` belongs at the top level of the cell, outside the def; try it inside and read the error. "
        '`autowrap_modules` is for modules such as `math`. Trace the `model` you are given, not a new GatedNet, and '
        "don't redefine `gate`. Hidden models call it twice, inside submodules, with two inputs.",
        'With a tracer, `graph = tracer.trace(model)` returns a `Graph`. Wrap it with `fx.GraphModule(tracer.root, '
        "graph, name)` and return that. With `fx.wrap('gate')` above the def, a plain `fx.symbolic_trace(model)` is "
        'enough.',
    ],
    'trace_with_leaves': [
        'Subclass `fx.Tracer` and override `is_leaf_module(self, m, module_qualified_name)`. It decides, for each '
        'submodule the trace reaches, whether it stays one `call_module` node.',
        'Return True when `isinstance(m, tuple(leaf_types))`. A list must become a tuple first, and subclasses and '
        'deeply nested instances count. Otherwise return `super().is_leaf_module(...)`, so that `nn.Linear` stays a '
        'leaf and your own modules are traced through.',
        'Define the subclass inside the function so it sees `leaf_types`, then `graph = tracer.trace(model)` and '
        'return `fx.GraphModule(tracer.root, graph, ...)`. Hidden cases include `leaf_types=()` (a plain trace), '
        '`[Block]` as a list, and `(nn.Sequential,)`.',
    ],
    'trace_specialized': [
        'Start with `fx.symbolic_trace(model, concrete_args=flags)`. Then print `gm.code` and call `gm(x)`: it '
        'fails, and the code shows why.',
        'Each fixed flag leaves a guard placeholder in the signature, such as `use_extra_1`, and a check on it '
        "(`None` values too). Compare that placeholder's default with the value you fixed. A placeholder's default "
        'lives in its `node.args`.',
        'Loop over the placeholder nodes. For each one whose name is a flag name plus a `_N` suffix, set `node.args '
        '= (flags[flag],)`, matching by name, never by position. Keep every tensor placeholder, even unused ones. '
        'Then `gm.graph.lint()` and `gm.recompile()`, and return `gm`.',
    ],
}

HINTS: dict[str, str] = {
    'ex04.tracer_returns_graph_pair_module':
        'a Tracer returns a Graph; pair it with its module: fx.GraphModule(model, graph)',
    'ex04.decide_type_isinstance_m_tuple':
        'decide by type with isinstance(m, tuple(leaf_types)), which counts subclasses too (an exact type test does '
        'not)',
    'ex04.leaf_module_asked_about_every':
        'is_leaf_module is asked about every module, nested ones too, with their dotted qualname: decide by the '
        "module's type, not by its name or place",
    'ex04.call_gm_recompile_after_changing':
        'call gm.recompile() after changing gm.graph, so gm.code and forward are regenerated',
    'ex04.keep_every_tensor_input_placeholder':
        'keep every tensor input as a placeholder, even one the flags leave unused',
    'ex04.make_gate_leaf_function_recorded':
        'make gate a leaf function, recorded as one call_function node: call fx.wrap("gate") at the top level of '
        'your answer cell (outside any def), or trace with fx.Tracer(autowrap_functions=(gate,))',
    'ex04.trace_model_you_are_given':
        'trace the model you are given: its submodules are called {modules}, and every call of gate becomes its own '
        'node',
    'ex04.keep_default_rule_other_modules':
        'keep the default rule for the other modules: return ... or super().is_leaf_module(m, '
        'module_qualified_name)',
    'ex04.pass_flags_you_are_given':
        'pass the flags you are given to concrete_args: the graph is the one the default flag values give',
    'ex04.concrete_args_leaves_guard_each':
        "concrete_args leaves a guard for each flag: a placeholder named <flag>_1 whose default is the flag's "
        'ORIGINAL default, checked by torch._assert. Give that placeholder the fixed value as its default '
        '(node.args = (value,)), or erase the guard, then gm.recompile()',
    'ex04.flag_without_default_stays_required':
        'a flag without a default stays a required placeholder after concrete_args (named <flag>_1): give it the '
        'fixed value as default, or remove it with its guard',
    'ex04.trace_through_model_s_own':
        "trace through the model's own submodules (keep the Tracer's default is_leaf_module): only gate is a leaf",
    'ex04.trace_model_argument_itself_not':
        "trace the `model` argument itself (not a new instance): the returned module's parameters are not the "
        "model's",
    'ex04.only_instances_leaf_types_plus':
        'only instances of leaf_types, plus what torch.nn makes a leaf anyway, stay whole',
    'ex04.flags_by_name_not_position':
        'flags arrive as keyword arguments: pass them to concrete_args by name, not by position',
    'ex04.subclass_fx_tracer_change_class':
        'subclass fx.Tracer (or set is_leaf_module on one tracer instance) instead of replacing a method of the '
        'class fx.Tracer itself: that changes every trace of the process, later ones included',
    'ex04.do_not_redefine_gate_make':
        'do not redefine gate: make the one the notebook defines a leaf function (fx.wrap("gate") at the top level, '
        'or autowrap_functions=(gate,))',
    'ex04.trace_model_mode_it_is':
        'trace the model in the mode it is in: an `if self.training` in forward is decided while tracing, so a '
        'copy switched to eval() or train() gives another graph (and the model itself must keep its mode)',
    'ex04.compare_classes_not_their_names':
        'compare classes, not their names: isinstance(m, tuple(leaf_types)) tells a leaf type from another class '
        'that only shares its name',
    'ex04.keep_every_call_trace_recorded':
        'keep every call the trace recorded, apart from the guards: an in-place call such as torch.relu_(h) has no '
        'users but changes h, and erasing every node without users (or eliminate_dead_code) deletes it. Erase only '
        'the guard nodes and their placeholders, or just give the guard placeholders the fixed values as defaults',
}
