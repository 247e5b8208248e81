"""The hints of ex14_exported_programs: `PROGRESSIVE`, three per graded function from a nudge to nearly the answer
(`fxcourse hint` shows the next one, in the format autograder/coursedata/hints.py describes), and `HINTS`, what its
checks say when an answer fails, by id (a template's {fields} are filled by the judge that names it)."""
from __future__ import annotations

__all__ = ["PROGRESSIVE", "HINTS"]

PROGRESSIVE: dict[str, list[str]] = {
    'save_and_reload': [
        '`torch.export.save(ep, path)` writes the program, weights included, as a `.pt2` archive; '
        '`torch.export.load(path)` reads it back as a new `ExportedProgram`.',
        'Use `path` as it is given (a `str` or a `pathlib.Path`): add no suffix and choose no name of your own. '
        "`torch.save` cannot pickle a program; the `.pt2` format is torch.export's own.",
        'Two lines: save `ep` to `path`, then return what loading `path` gives (a new program, not `ep`).',
    ],
    'module_of_nodes': [
        'Each `call_function` node of `ep.graph` carries `node.meta["nn_module_stack"]`: a dict from the root '
        'module inwards, each value a pair (qualified name, module type).',
        'The innermost module is the last entry; its qualified name is element `[0]` of the value. The keys are '
        "torch's own (`L__self__fc`, an object id under `strict=True`, `@1` for a second call): not names.",
        'For every node whose `op` is `"call_function"`: element `[0]` of the last of its stack\'s values '
        '(`list(...)[-1]`), leaving out torch\'s stand-in entry `_empty_nn_module_stack_from_metadata_hook`, or '
        '`""` where no entry is left.',
    ],
    'decompose_except': [
        '`ep.run_decompositions(table)` decomposes what `table` lists; `torch.export.default_decompositions()` is '
        'the table that leads to core ATen.',
        'Take that table and remove the overloads of `keep` from it; an overload it lacks (one core ATen has '
        'already) is fine: `table.pop(op, None)`. An empty table `{}` decomposes nothing.',
        '`table = torch.export.default_decompositions()`, `for op in keep: table.pop(op, None)`, then run the '
        'decompositions of that table on `ep` and return the program they give.',
    ],
    'unflatten_module': [
        '`ep.module()` is one flat graph; `torch.export.unflatten(ep)` rebuilds the module hierarchy, with a graph '
        'of its own per submodule.',
        'A qualified name has dots (`blocks.1`): `getattr` reads one attribute only; `nn.Module.get_submodule(fqn)` '
        'walks the path.',
        'One line: `get_submodule(fqn)` of what `torch.export.unflatten` makes of `ep`.',
    ],
}

HINTS: dict[str, str] = {
    'ex14.return_exportedprogram_itself_ep_module':
        'return the ExportedProgram itself: ep.module() is a GraphModule made from it, without its graph signature',
    'ex14.build_return_dict_from_node':
        'build and return a dict from node name to module name',
    'ex14.return_submodule_torch_export_unflatten':
        'return the submodule of torch.export.unflatten(ep) itself',
    'ex14.use_node_name_key_not':
        'use node.name as the key, not the node itself',
    'ex14.return_what_torch_export_load':
        'return what torch.export.load(path) reads back: the point is that the file alone holds the program',
    'ex14.save_ep_itself_return_torch':
        'save ep itself and return what torch.export.load reads back from path',
    'ex14.stack_s_keys_are_torch':
        "a stack's keys are torch's own (L__self__fc, an object id under strict export, @1 for a second call): the "
        'qualified name is the first element of each value',
    'ex14.stand_in_entry_is_no_module':
        "node {node!r} reads a dynamic size and came from no module: its stack holds only torch's stand-in entry "
        '{got!r}, no module\'s name; such a node maps to ""',
    'ex14.innermost_last_entry_not_longest':
        "node {node!r} came from {last!r}, the last entry of its stack, not from {got!r}: a module may call one it "
        'was handed (not its own child), so the innermost is the last entry, whatever the length of its name',
    'ex14.name_only_begins_with_fqn':
        '{other!r} only begins with {fqn!r}: it is another module. Look the name up exactly, '
        'unflatten(ep).get_submodule(fqn)',
    'ex14.last_entry_nn_module_stack':
        'the last entry of nn_module_stack is the innermost module; the entries run from the root module inwards',
    'ex14.whole_qualified_name_parents_path':
        "the whole qualified name, with its parents' path: blocks.0.fc, not fc",
    'ex14.qualified_name_element_0_value':
        "the qualified name is element [0] of the value; element [1] is the module's type",
    'ex14.read_node_meta_nn_module':
        'read node.meta["nn_module_stack"]: its last value is (qualified name, type) of the innermost module',
    'ex14.run_decompositions_returns_new_program':
        'run_decompositions returns a new program: return it, and leave ep alone',
    'ex14.decompositions_compute_same_numbers_change':
        'decompositions compute the same numbers: change the table, not the graph',
    'ex14.write_path_you_are_given':
        'write to the path you are given, as it is: torch.export.save(ep, path), adding no suffix and choosing no '
        'name of your own',
    'ex14.write_torch_export_save_ep':
        'write it with torch.export.save(ep, path): torch.save pickles, and a .pt2 archive is what '
        'torch.export.load reads',
    'ex14.save_ep_no_run_decompositions':
        'save ep as it is: no run_decompositions, no new export, before torch.export.save',
    'ex14.each_entry_nn_module_stack':
        'each entry of nn_module_stack is key: (qualified name, module type): take the name, element [0] of the '
        "last entry's value",
    'ex14.call_function_nodes_only_placeholders':
        'call_function nodes only: placeholders (parameters, buffers, inputs) and the output node are left out',
    'ex14.keys_are_names_nodes_ep':
        'the keys are the names of the nodes of ep.graph (node.name)',
    'ex14.every_call_function_node_ep':
        'every call_function node of ep.graph, each with its innermost module',
    'ex14.nothing_was_decomposed_ep_run':
        'nothing was decomposed: ep.run_decompositions(table) with the default table minus the kept overloads (an '
        'empty table {} decomposes nothing)',
    'ex14.keep_must_stay_take_torch':
        '{op} is in keep and must stay: take torch.export.default_decompositions() and pop the kept overloads from '
        'it before run_decompositions',
    'ex14.not_keep_yet_stays_keep':
        '{op} is not in keep, yet it stays: keep only the overloads in `keep`, exactly (not their whole packets, '
        'not other operators)',
    'ex14.ep_run_decompositions_table_where':
        'ep.run_decompositions(table), where table is torch.export.default_decompositions() minus keep',
    'ex14.keep_program_s_dynamic_batch':
        "keep the program's dynamic batch: torch.export.save writes the program as it is, range constraints "
        'included, and load reads them back',
    'ex14.node_root_module_maps_innermost':
        'a node of the root module maps to "": its innermost module is the root',
    'ex14.whole_unflattened_program_return_submodule':
        'that is the whole unflattened program: return its submodule {fqn!r}',
    'ex14.submodule_itself_unflatten_ep_get':
        'the submodule {fqn!r} itself: unflatten(ep).get_submodule(fqn)',
    'ex14.whole_unflattened_program_return_submodule_2':
        'that is the whole unflattened program: return its submodule {fqn!r}, unflatten(ep).get_submodule(fqn)',
    'ex14.ep_module_one_flat_graph':
        'ep.module() is one flat graph: its submodules only hold parameters and have no forward. '
        'torch.export.unflatten(ep) rebuilds the module hierarchy, with a graph per submodule',
    'ex14.torch_export_unflatten_ep_get':
        'torch.export.unflatten(ep).get_submodule(fqn)',
}
