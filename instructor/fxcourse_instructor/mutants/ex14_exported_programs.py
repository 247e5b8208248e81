"""Mutants and alternatives of ex14_exported_programs."""
from fxcourse_instructor.mutants import Alternative, Mutant

_SAVE = "    torch.export.save(ep, path)\n"
_LOAD = "    return torch.export.load(path)\n"
_LAST = "        found[node.name] = list(stack.values())[-1][0] if stack else \"\"\n"
_STAND_IN = ("        stack = {k: v for k, v in stack.items() if not k.startswith(\"_empty_nn_module_stack\")}  "
             "# a size read\n")
_SKIP = "        if node.op != \"call_function\":\n            continue\n"
_TABLE = "    table = torch.export.default_decompositions()\n"
_POP = "        table.pop(op, None)\n"
_RUN = "    return ep.run_decompositions(table)\n"
_UNFLAT = "    return torch.export.unflatten(ep).get_submodule(fqn)\n"

_SAVE_MUTANTS = [
    Mutant("save_and_reload", "saves, then returns ep itself instead of the program read back", hint="read back",
           edits=((_LOAD, "    torch.export.load(path)\n    return ep\n"),)),
    Mutant("save_and_reload", "torch.save and torch.load instead of torch.export's own format",
           hint="torch.export.save",
           edits=((_SAVE, "    torch.save(ep, path)\n"), (_LOAD, "    return torch.load(path, weights_only=False)\n"))),
    Mutant("save_and_reload", "adds the .pt2 suffix to a path that lacks it", hint="adding no suffix",
           edits=((_SAVE, "    path = str(path) if str(path).endswith(\".pt2\") else f\"{path}.pt2\"\n" + _SAVE),)),
    Mutant("save_and_reload", "writes beside the path, under a name of its own", hint="choosing no name",
           edits=((_SAVE, "    path = Path(path).with_name(\"model.pt2\")\n" + _SAVE),)),
    Mutant("save_and_reload", "a buffer in memory, never written to the path", hint="write to the path",
           edits=((_SAVE, "    import io\n    buffer = io.BytesIO()\n    torch.export.save(ep, buffer)\n"
                          "    buffer.seek(0)\n"), (_LOAD, "    return torch.export.load(buffer)\n"))),
    Mutant("save_and_reload", "exports ep.module() again on the example inputs before saving: the dynamic batch "
           "is lost", hint="dynamic batch",
           edits=((_SAVE, "    ep = torch.export.export(ep.module(), ep.example_inputs[0])\n" + _SAVE),)),
    Mutant("save_and_reload", "decomposes the program before saving it", hint="save ep as it is",
           not_hints=("not the one read back", "adding no suffix"),
           edits=((_SAVE, "    torch.export.save(ep.run_decompositions(), path)\n"),)),
]

_MODULE_MUTANTS = [
    Mutant("module_of_nodes", "the first entry of the stack, the root, for every node", hint="innermost module",
           edits=((_LAST, _LAST.replace("[-1][0]", "[0][0]")),)),
    Mutant("module_of_nodes", "the stack's key instead of the qualified name", hint="first element of each value",
           edits=((_LAST, "        found[node.name] = list(stack)[-1] if stack else \"\"\n"),)),
    Mutant("module_of_nodes", "the module's type instead of its name", hint="element [1] is the module's type",
           edits=((_LAST, _LAST.replace("[-1][0]", "[-1][1]")),)),
    Mutant("module_of_nodes", "the last part of the name only: fc, not blocks.0.fc", hint="whole qualified name",
           not_hints=("innermost module", "call_function nodes only"),
           edits=((_LAST, _LAST.replace("[-1][0]", "[-1][0].split(\".\")[-1]")),)),
    Mutant("module_of_nodes", "every node, placeholders and output included", hint="call_function nodes only",
           edits=((_SKIP, ""),)),
    Mutant("module_of_nodes", "leaves out the nodes of the root module", hint="maps to \"\"",
           edits=((_LAST, "        name = list(stack.values())[-1][0] if stack else \"\"\n        if name:\n"
                          "            found[node.name] = name\n"),)),
    Mutant("module_of_nodes", "the parent of the innermost module", hint="innermost module",
           edits=((_LAST, "        found[node.name] = list(stack.values())[-2][0] if len(stack) > 1 else \"\"\n"),)),
    Mutant("module_of_nodes", "the node itself as the key", hint="node.name",
           edits=((_LAST, _LAST.replace("found[node.name]", "found[node]")),)),
    Mutant("module_of_nodes", "the last entry even where it is torch's stand-in (a sym_size node's): a name of no "
           "module", hint="stand-in entry", edits=((_STAND_IN, ""),)),
    Mutant("module_of_nodes", "the longest name of the stack as the innermost module", hint="whatever the length",
           edits=((_LAST, "        found[node.name] = max((v[0] for v in stack.values()), key=len, "
                          "default=\"\")\n"),)),
    Mutant("module_of_nodes", "the name with the most dots as the innermost module", hint="whatever the length",
           edits=((_LAST, "        names = [v[0] for v in stack.values()]\n"
                          "        found[node.name] = sorted(names, key=lambda s: s.count(\".\"))[-1] "
                          "if names else \"\"\n"),)),
]

_DECOMPOSE_MUTANTS = [
    Mutant("decompose_except", "an empty table: nothing is decomposed", hint="nothing was decomposed",
           edits=((_TABLE, "    table = {}\n"),)),
    Mutant("decompose_except", "ignores keep: the default table as it is", hint="must stay",
           edits=((_RUN, "    return ep.run_decompositions()\n"),)),
    Mutant("decompose_except", "del table[op]: a KeyError for an overload core ATen has already",
           hint="pop(op, None)", not_hints=("nothing was decomposed",), edits=((_POP, "        del table[op]\n"),)),
    Mutant("decompose_except", "decomposes only the overloads in keep", hint="must stay",
           edits=((_TABLE, "    table = {op: fn for op, fn in torch.export.default_decompositions().items() "
                           "if op in keep}\n"), (_POP, "        pass\n"))),
    Mutant("decompose_except", "returns ep instead of the new program", hint="nothing was decomposed",
           edits=((_RUN, "    ep.run_decompositions(table)\n    return ep\n"),)),
    Mutant("decompose_except", "keeps every overload of each kept operator's packet", hint="not their whole packets",
           edits=((_POP, _POP + "        for overload in op.overloadpacket.overloads():\n"
                          "            table.pop(getattr(op.overloadpacket, overload), None)\n"),)),
]

_UNFLATTEN_MUTANTS = [
    Mutant("unflatten_module", "getattr with the whole dotted name", hint="get_submodule",
           edits=((_UNFLAT, "    return getattr(torch.export.unflatten(ep), fqn)\n"),)),
    Mutant("unflatten_module", "the submodule of ep.module(), the flat graph's parameter holder",
           hint="one flat graph", not_hints=("the whole unflattened program",), edits=((_UNFLAT, "    return ep.module().get_submodule(fqn)\n"),)),
    Mutant("unflatten_module", "the whole unflattened program", hint="the whole unflattened program",
           edits=((_UNFLAT, "    return torch.export.unflatten(ep)\n"),)),
    Mutant("unflatten_module", "the first module whose name ends with the name's last part", hint="itself",
           edits=((_UNFLAT, "    tail = fqn.split(\".\")[-1]\n    return next(m for n, m in torch.export.unflatten(ep)"
                            ".named_modules() if n.endswith(tail))\n"),)),
    Mutant("unflatten_module", "the submodule's graph instead of the submodule", hint="itself",
           edits=((_UNFLAT, "    return torch.export.unflatten(ep).get_submodule(fqn).graph\n"),)),
    Mutant("unflatten_module", "the first module whose name begins with fqn", hint="only begins with",
           edits=((_UNFLAT, "    return next(m for n, m in torch.export.unflatten(ep).named_modules() "
                            "if n.startswith(fqn))\n"),)),
    Mutant("unflatten_module", "the last part of the name, looked up from the root", hint="get_submodule",
           edits=((_UNFLAT, "    return torch.export.unflatten(ep).get_submodule(fqn.split(\".\")[-1])\n"),)),
]

# Written from the task text alone by someone who had not read the checks; each kept full marks once: no case
# asked for a batch far beyond the example's, whether the program came from the file, for a new program where
# nothing was left to decompose, or for a module with a graph.
_ONCE_FULL_MARKS = [
    Mutant("save_and_reload", "saves ep, then returns a deep copy of it: nothing is read back", hint="reads back",
           edits=(("    return torch.export.load(path)", "    return __import__('copy').deepcopy(ep)"),)),
    Mutant("save_and_reload", "exports ep's module again with a batch of at most 64, saves and reads that back",
           hint="dynamic batch", edits=(("    torch.export.save(ep, path)\n",
                                         "    if ep.range_constraints:\n"
                                         "        from torch.export import Dim\n"
                                         "        x = ep.example_inputs[0][0]\n"
                                         "        ep = torch.export.export(ep.module(), (x,), "
                                         "dynamic_shapes=({0: Dim('batch', max=64)},))\n"
                                         "    torch.export.save(ep, path)\n"),)),
    Mutant("decompose_except", "returns ep itself when keep names nothing ep calls", hint="nothing was decomposed",
           edits=(("    table = torch.export.default_decompositions()\n",
                   "    called = {n.target for n in ep.graph.nodes if n.op == 'call_function'}\n"
                   "    if keep and not (set(keep) & called):\n        return ep\n"
                   "    table = torch.export.default_decompositions()\n"),)),
    Mutant("decompose_except", "returns ep itself when every operator it calls is kept or core ATen already",
           hint="returns a new program",
           edits=(("    table = torch.export.default_decompositions()\n",
                   "    table = torch.export.default_decompositions()\n"
                   "    if all(n.target in keep or n.target not in table for n in ep.graph.nodes "
                   "if n.op == 'call_function'):\n        return ep\n"),)),
    Mutant("decompose_except", "leaves out of the table only the kept overloads ep itself calls",
           hint="is in keep and must stay", edits=(("    for op in keep:\n",
                                       "    called = {n.target for n in ep.graph.nodes if n.op == 'call_function'}\n"
                                       "    for op in set(keep) & called:\n"),)),
    Mutant("unflatten_module", "a wrapper module whose forward calls the submodule: no graph of its own",
           hint="get_submodule",
           edits=(("    return torch.export.unflatten(ep).get_submodule(fqn)",
                   "    class Calls(nn.Module):\n        def __init__(self, sub):\n            super().__init__()\n"
                   "            self.sub = sub\n\n        def forward(self, *args, **kwargs):\n"
                   "            return self.sub(*args, **kwargs)\n\n"
                   "    return Calls(torch.export.unflatten(ep).get_submodule(fqn))"),)),
]

MUTANTS = _SAVE_MUTANTS + _MODULE_MUTANTS + _DECOMPOSE_MUTANTS + _UNFLATTEN_MUTANTS + _ONCE_FULL_MARKS

ALTERNATIVES = [
    Alternative("save_and_reload", "open files, handed to save and load", '''
def save_and_reload(ep, path):
    with open(path, "wb") as f:
        torch.export.save(ep, f)
    with open(path, "rb") as f:
        return torch.export.load(f)
'''),
    Alternative("save_and_reload", "the path made a str, then a Path", '''
def save_and_reload(ep, path):
    torch.export.save(ep, str(path))
    reloaded = torch.export.load(Path(path))
    return reloaded
'''),
    Alternative("module_of_nodes", "the graph module's graph, the last value by reversed()", '''
def module_of_nodes(ep):
    out = {}
    for node in [n for n in ep.graph_module.graph.nodes if n.op == "call_function"]:
        stack = node.meta.get("nn_module_stack", {})
        names = [name for name, _ in stack.values() if name != "_empty_nn_module_stack_from_metadata_hook"]
        out[node.name] = next(reversed(names)) if names else ""
    return out
'''),
    Alternative("module_of_nodes", "find_nodes once per operator the graph calls", '''
def module_of_nodes(ep):
    found = {}
    targets = {n.target for n in ep.graph.nodes if n.op == "call_function"}
    for target in targets:
        for node in ep.graph.find_nodes(op="call_function", target=target):
            stack = dict(node.meta.get("nn_module_stack") or {})
            stack.pop("_empty_nn_module_stack_from_metadata_hook", None)
            found[node.name] = list(stack.values())[-1][0] if stack else ""
    return found
'''),
    Alternative("module_of_nodes", "a dict comprehension over the stack's items", '''
def module_of_nodes(ep):
    def innermost(node):
        items = [(k, v) for k, v in (node.meta.get("nn_module_stack") or {}).items() if not k.startswith("_empty")]
        return items[-1][1][0] if items else ""
    return {n.name: innermost(n) for n in ep.graph.nodes if n.op == "call_function"}
'''),
    Alternative("decompose_except", "the table as a dict comprehension", '''
def decompose_except(ep, keep):
    table = {op: fn for op, fn in torch.export.default_decompositions().items() if op not in keep}
    return ep.run_decompositions(decomp_table=table)
'''),
    Alternative("decompose_except", "torch._decomp.core_aten_decompositions, overloads compared by name", '''
def decompose_except(ep, keep):
    from torch._decomp import core_aten_decompositions
    table = core_aten_decompositions()
    names = {str(op) for op in keep}
    for op in list(table):
        if str(op) in names:
            table.pop(op)
    return ep.run_decompositions(table)
'''),
    Alternative("unflatten_module", "named_modules of the unflattened program", '''
def unflatten_module(ep, fqn):
    from torch.export import unflatten
    return dict(unflatten(ep).named_modules())[fqn]
'''),
    Alternative("unflatten_module", "getattr along the path's parts", '''
import functools

def unflatten_module(ep, fqn):
    return functools.reduce(getattr, fqn.split("."), torch.export.unflatten(ep))
'''),
]
