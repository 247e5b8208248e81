"""Clauses of ex14_exported_programs: save_and_reload, module_of_nodes, decompose_except, unflatten_module."""
from fxcourse_instructor.clauses import Clause

_SAVE = "    torch.export.save(ep, path)\n"
_POP = "        table.pop(op, None)\n"
_RUN = "    return ep.run_decompositions(table)\n"
_UNFLAT = "    return torch.export.unflatten(ep).get_submodule(fqn)\n"

CLAUSES = [
    Clause("save_and_reload", "written to path, as it is given", ("Shared(4), to a path without the .pt2 suffix",),
           mutant="adds the .pt2 suffix to a path that lacks it"),
    Clause("save_and_reload", "written to path, under no other name",
           ("Tower(6), to tiny.pt2", "RandomTower seed 3"),
           mutant="writes beside the path, under a name of its own"),
    Clause("save_and_reload", "a file torch.export.load reads",
           ("Tower(6), to tiny.pt2", "Tower(4) exported with strict=True, to a file that exists already"),
           mutant="a buffer in memory, never written to the path"),
    Clause("save_and_reload", "returns the program read back", ("Tower(6), to tiny.pt2", "RandomTower seed 3"),
           mutant="saves, then returns ep itself instead of the program read back"),
    Clause("save_and_reload", "runs the same, on every batch size ep accepts",
           ("Shared(5) with a dynamic batch", "RandomTower seed 9 with a dynamic batch"),
           mutant="exports ep.module() again on the example inputs before saving: the dynamic batch is lost"),
    Clause("save_and_reload", "the program as it is, operators unchanged",
           ("Tower(6), to tiny.pt2", "RandomTower seed 3"),
           mutant="decomposes the program before saving it"),
    Clause("save_and_reload", "a path as a str or as a pathlib.Path",
           ("Shared(5) with a dynamic batch, to shared.pt2 (a pathlib.Path)",
            "RandomTower seed 9 with a dynamic batch"),
           patch=(_SAVE, "    import os\n    os.makedirs(path.rsplit(\"/\", 1)[0], exist_ok=True)\n" + _SAVE)),
    Clause("module_of_nodes", "the innermost module", ("Tower(6)", "Tower(4) decomposed to core ATen"),
           mutant="the first entry of the stack, the root, for every node"),
    Clause("module_of_nodes", "its qualified name", ("Tower(6)", "RandomTower seed 3"),
           mutant="the last part of the name only: fc, not blocks.0.fc"),
    Clause("module_of_nodes", "a name, whatever torch's keys of the stack are", ("Shared(5) exported with strict=True",),
           mutant="the stack's key instead of the qualified name"),
    Clause("module_of_nodes", "\"\" for the root module", ("Tower(6)", "Pair(4)"),
           mutant="leaves out the nodes of the root module"),
    Clause("module_of_nodes", "every call_function node, and only those", ("Tower(6)", "Pair(4)"),
           mutant="every node, placeholders and output included"),
    Clause("module_of_nodes", "by node name", ("Tower(6)", "RandomTower seed 9"), mutant="the node itself as the key"),
    Clause("module_of_nodes", "a node that reads a dynamic size came from no module and maps to \"\"",
           ("Sizes(4) with a dynamic batch",),
           mutant="the last entry even where it is torch's stand-in (a sym_size node's): a name of no module"),
    Clause("module_of_nodes", "the innermost module is the stack's last entry, whatever the length of its name",
           ("Borrower(4)",), mutant="the longest name of the stack as the innermost module"),
    Clause("decompose_except", "decomposed to core ATen", ("Tower(6), keep set()", "RandomTower seed 3, keep"),
           mutant="an empty table: nothing is decomposed"),
    Clause("decompose_except", "the overloads in keep stay as they are",
           ("Shared(5), keep {aten.linear.default}", "Tower(4), keep {aten.layer_norm"),
           mutant="ignores keep: the default table as it is"),
    Clause("decompose_except", "an overload core ATen has already may be in keep", ("Shared(4), keep {aten.gelu",),
           mutant="del table[op]: a KeyError for an overload core ATen has already"),
    Clause("decompose_except", "returns the new program", ("Tower(6), keep set()", "RandomTower seed 3, keep"),
           mutant="returns ep instead of the new program"),
    Clause("decompose_except", "only the overloads in keep stay, not the other overloads of their operator",
           ("Prefixed(4), keep {aten.rsub.Scalar}",),
           mutant="keeps every overload of each kept operator's packet"),
    Clause("decompose_except", "an overload a decomposition calls stays where it appears, when kept",
           ("Shared(5), keep {aten.t.default}",), mutant="leaves out of the table only the kept overloads ep itself calls"),
    Clause("decompose_except", "an overload ep does not call may be in keep", ("Tower(4), keep {aten.layer_norm",),
           patch=(_POP, "        if op not in {n.target for n in ep.graph.nodes}:\n"
                        "            raise ValueError(f\"ep does not call {op}\")\n" + _POP)),
    Clause("decompose_except", "leaves ep as it is",
           ("Shared(5), keep {aten.linear.default}", "RandomTower seed 3, keep"),
           patch=(_RUN, "    new = ep.run_decompositions(table)\n    ep._graph_module = new.graph_module\n"
                        "    return new\n"), hint="leave ep alone"),
    Clause("unflatten_module", "the submodule fqn, a dotted name",
           ("Tower(6), blocks.1", "Tower(4) exported with strict=True, blocks.2.norm"),
           mutant="getattr with the whole dotted name"),
    Clause("unflatten_module", "of the unflattened program", ("Tower(6), blocks.1", "Shared(5), fc"),
           mutant="the submodule of ep.module(), the flat graph's parameter holder"),
    Clause("unflatten_module", "the submodule, not the whole program", ("Shared(5), inner", "Shared(5), fc"),
           mutant="the whole unflattened program"),
    Clause("unflatten_module", "the submodule named fqn exactly, not one whose name begins with it",
           ("Prefixed(4), head",), mutant="the first module whose name begins with fqn"),
    Clause("unflatten_module", "a submodule with several inputs takes them in the model's order (ep's preserved "
           "call signature)", ("Pair(4), mix",),
           patch=(_UNFLAT, "    fresh = torch.export.export(ep.module(), ep.example_inputs[0], ep.example_inputs[1])\n"
                           "    return torch.export.unflatten(fresh).get_submodule(fqn)\n")),
]

# The task text, sentence by sentence: the rules of the clauses that check it, or why it is no rule.
TASK_TEXT = {
    '*': {
        'After lesson 14 you can save an exported program to a `.pt2` file and load it back, find the module each '
        'node of an ATen graph came from, decompose a program while keeping the operators you choose, and get a '
        'submodule back as a module of its own.':
            "what the lesson taught, the motivation",
        'Here you write four small tools:':
            "introduces the list of functions",
        '`save_and_reload`: write a program to a path and read it back;':
            "a summary of save_and_reload, whose rules its section states",
        '`module_of_nodes`: the innermost module of every `call_function` node;':
            "a summary of module_of_nodes, whose rules its section states",
        '`decompose_except`: decompose to core ATen, except the overloads you keep;':
            "a summary of decompose_except, whose rules its section states",
        '`unflatten_module`: one submodule of the unflattened program, runnable on its own.':
            "a summary of unflatten_module, whose rules its section states",
    },
    'save_and_reload': {
        '## 1. `save_and_reload(ep, path) -> ExportedProgram`':
            ("returns the program read back",),
        'Write `ep` to the file `path` (a `str` or a `pathlib.Path`, used as it is: the grader looks for the file '
        'there) with `torch.export.save`, read it back with `torch.export.load`, and return the program read back, '
        'not `ep` itself.':
            ("a path as a str or as a pathlib.Path", "written to path, as it is given",
             "written to path, under no other name", "a file torch.export.load reads",
             "the program as it is, operators unchanged", "returns the program read back"),
        'It runs the same as `ep`, on every batch size `ep` accepts: the file keeps its dynamic dimensions.':
            ("runs the same, on every batch size ep accepts",),
        'ep written to path as a .pt2 archive, then read back from that file.':
            ("written to path, as it is given", "a file torch.export.load reads", "returns the program read back"),
    },
    'module_of_nodes': {
        '## 2. `module_of_nodes(ep) -> dict[str, str]`':
            ("by node name", "its qualified name"),
        'Every `call_function` node of `ep.graph`, by its name, mapped to the qualified name of the innermost module '
        'it came from (`"blocks.0.fc"`), or `""` where it came from the root module itself (the relu and the '
        'additions of `Tower.forward`).':
            ("every call_function node, and only those", "by node name", "the innermost module", "its qualified name",
             '"" for the root module'),
        'Read `node.meta["nn_module_stack"]`: it runs from the root module inwards.':
            ("the innermost module", "the innermost module is the stack's last entry, whatever the length of its name"),
        "Its keys are torch's own and differ between strict and non-strict export; the qualified name is in its "
        "values.":
            ("a name, whatever torch's keys of the stack are",),
        'A node that reads a dynamic size of an input (`sym_size_int_1`, where the batch is dynamic and `forward` '
        'reads `x.shape[0]`) came from no module: its stack holds only torch\'s stand-in entry, '
        '`_empty_nn_module_stack_from_metadata_hook`, which is no module\'s name, and it maps to `""`.':
            ('a node that reads a dynamic size came from no module and maps to ""',),
        'Placeholders and the output node are left out.':
            ("every call_function node, and only those",),
        'call_function node name -> qualified name of the innermost module it came from ("" for the root).':
            ("by node name", "the innermost module", "its qualified name", '"" for the root module'),
    },
    'decompose_except': {
        '## 3. `decompose_except(ep, keep) -> ExportedProgram`':
            ("returns the new program",),
        'Decompose `ep` to core ATen as `ep.run_decompositions()` does, except the operator overloads in `keep` (a '
        'set such as `{torch.ops.aten.linear.default}`), which stay as they are.':
            ("decomposed to core ATen", "the overloads in keep stay as they are",
             "only the overloads in keep stay, not the other overloads of their operator"),
        'An overload in `keep` that core ATen has already, or that neither `ep` nor a decomposition of its operators '
        'calls, changes nothing; one that a decomposition calls stays where it appears (keep '
        '`torch.ops.aten.t.default`, and the `t` inside `linear`\'s decomposition stays a `t`).':
            ("an overload core ATen has already may be in keep", "an overload ep does not call may be in keep",
             "an overload a decomposition calls stays where it appears, when kept"),
        'Return the new program and leave `ep` as it is.':
            ("returns the new program", "leaves ep as it is"),
        'ep decomposed to core ATen, except the overloads in keep.':
            ("decomposed to core ATen", "the overloads in keep stay as they are"),
    },
    'unflatten_module': {
        '## 4. `unflatten_module(ep, fqn) -> nn.Module`':
            ("the submodule, not the whole program",),
        'The submodule `fqn` (a qualified name such as `"blocks.1"`) of the unflattened program: a module with a '
        'graph of its own that runs on the inputs the submodule receives in the model (for `"blocks.1"` here, one '
        '`(batch, 6)` tensor) and computes what it computes there.':
            ("the submodule fqn, a dotted name", "of the unflattened program", "the submodule, not the whole program",
             "the submodule named fqn exactly, not one whose name begins with it"),
        "A submodule with several inputs takes them in the model's order only where export preserved its call "
        "signature (lesson 14, section 6): the grader's programs with such a submodule were exported so.":
            ("a submodule with several inputs takes them in the model's order (ep's preserved call signature)",),
        'The submodule fqn of torch.export.unflatten(ep).':
            ("the submodule fqn, a dotted name", "of the unflattened program"),
    },
}
