"""Mutants and alternatives of ex05_inserting."""
from fxcourse_instructor.mutants import Alternative, Mutant, from_task_text

# Lines of the solution's answer cells that several mutants below replace (each occurs there once).
_RECORD_SHAPES_LINES = ("    shapes = {}\n"
                        "\n"
                        "    class Recorder(fx.Interpreter):\n"
                        "        def run_node(self, n):\n"
                        "            value = super().run_node(n)\n"
                        '            if n.op != "output" and isinstance(value, torch.Tensor):\n'
                        "                shapes[n.name] = tuple(value.shape)\n"
                        "            return value\n"
                        "\n"
                        "    with torch.no_grad():\n"
                        "        Recorder(gm).run(*inputs)\n"
                        "    return shapes")

_DROP_HEAD = '''
DROPOUT_MODULES = (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout)
DROPOUT_FUNCTIONS = (F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout,
                     F.feature_alpha_dropout, torch.dropout)
'''

MUTANTS = [
    # ------------------------------------------------------------------------------------ insert_after
    Mutant("insert_after", "the self-use trap: replace_all_uses_with without delete_user_cb",
           hint="delete_user_cb", edits=(
        ("    # without delete_user_cb the new node would be rewired to read itself\n"
         "    node.replace_all_uses_with(new, delete_user_cb=lambda user: user is not new)\n"
         "    gm.graph.lint()",
         "    node.replace_all_uses_with(new)"),)),
    Mutant("insert_after", "the self-use trap, caught by its own graph.lint()",
           hint="used before it has been defined", edits=(
        ("    # without delete_user_cb the new node would be rewired to read itself\n"
         "    node.replace_all_uses_with(new, delete_user_cb=lambda user: user is not new)",
         "    node.replace_all_uses_with(new)"),)),
    Mutant("insert_after", "wrong snippet 4: an empty inserting_after block",
           hint="only sets where new nodes go", edits=(
        ("        new = gm.graph.call_function(fn, (node,))\n"
         "    # without delete_user_cb the new node would be rewired to read itself\n"
         "    node.replace_all_uses_with(new, delete_user_cb=lambda user: user is not new)\n"
         "    gm.graph.lint()",
         "        pass"),)),
    Mutant("insert_after", "creates the node but never rewires the users", hint="replace_all_uses_with", edits=(
        ("    # without delete_user_cb the new node would be rewired to read itself\n"
         "    node.replace_all_uses_with(new, delete_user_cb=lambda user: user is not new)\n",
         ""),)),
    Mutant("insert_after", "rewires only the first user", hint="every former user", not_hints=("inside lists",),
           edits=(
        ("    if node is None:\n"
         "        raise KeyError(node_name)",
         "    first = next(iter(node.users))"),
        ("    # without delete_user_cb the new node would be rewired to read itself\n"
         "    node.replace_all_uses_with(new, delete_user_cb=lambda user: user is not new)",
         "    first.replace_input_with(node, new)"),)),
    Mutant("insert_after", "rewires top-level positional args only (misses lists and kwargs)",
           hint="uses inside lists", not_hints=("not only some",), edits=(
        ("    if node is None:\n"
         "        raise KeyError(node_name)",
         "    users = list(node.users)"),
        ("    # without delete_user_cb the new node would be rewired to read itself\n"
         "    node.replace_all_uses_with(new, delete_user_cb=lambda user: user is not new)",
         "    for user in users:\n"
         "        user.args = tuple(new if a is node else a for a in user.args)"),)),
    Mutant("insert_after", "inserting_before instead of inserting_after", hint="puts them right after", edits=(
        ("    with gm.graph.inserting_after(node):",
         "    with gm.graph.inserting_before(node):"),
        ("    gm.graph.lint()\n",
         ""),)),
    Mutant("insert_after", "forgets gm.recompile()", hint="gm.recompile()", edits=(
        ("    gm.recompile()\n",
         ""),)),
    Mutant("insert_after", "finds the node by target instead of name", hint="raised StopIteration", edits=(
        ("    node = next((n for n in gm.graph.nodes if n.name == node_name), None)",
         "    node = next(n for n in gm.graph.nodes if str(n.target) == node_name)"),)),
    Mutant("insert_after", "a call_method node instead of a call_function",
           hint="graph.call_function(fn, (node,))", edits=(
        ("        new = gm.graph.call_function(fn, (node,))",
         "        new = gm.graph.call_method(fn.__name__, (node,))"),)),
    # ---------------------------------------------------------------------------------- remove_dropout
    Mutant("remove_dropout", "forgets functional dropout", hint="functional dropout counts too", edits=(
        ('        if node.op == "call_module":\n',
         ""),
        ("            is_dropout = isinstance(gm.get_submodule(node.target), DROPOUT_MODULES)",
         '        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), DROPOUT_MODULES):'),
        ("        else:\n"
         '            is_dropout = node.op == "call_function" and node.target in DROPOUT_FUNCTIONS\n'
         "        if not is_dropout:\n"
         "            continue\n"
         '        dropped = node.args[0] if node.args else node.kwargs["input"]\n',
         ""),
        ("        node.replace_all_uses_with(dropped)",
         "            node.replace_all_uses_with(node.args[0])"),
        ("        gm.graph.erase_node(node)",
         "            gm.graph.erase_node(node)"),)),
    Mutant("remove_dropout", "only exactly nn.Dropout and F.dropout", hint="isinstance", not_hints=("not by name",),
           edits=(
        ("            is_dropout = isinstance(gm.get_submodule(node.target), DROPOUT_MODULES)",
         "            is_dropout = type(gm.get_submodule(node.target)) is nn.Dropout"),
        ('            is_dropout = node.op == "call_function" and node.target in DROPOUT_FUNCTIONS',
         '            is_dropout = node.op == "call_function" and node.target in (F.dropout, torch.dropout)'),)),
    Mutant("remove_dropout", "erases the node without rewiring its users",
           hint="replace_all_uses_with(new) first", edits=(
        ("        node.replace_all_uses_with(dropped)\n",
         ""),)),
    Mutant("remove_dropout", "keeps the dropout submodules registered", hint="delete_all_unused_submodules", edits=(
        ("    gm.delete_all_unused_submodules()\n",
         ""),)),
    Mutant("remove_dropout", "forgets gm.recompile()", hint="gm.recompile()", edits=(
        ("    gm.recompile()\n",
         ""),)),
    Mutant("remove_dropout", "takes node.args[0] even when the input is a keyword", hint="passed by keyword", edits=(
        ('        dropped = node.args[0] if node.args else node.kwargs["input"]',
         "        dropped = node.args[0]"),)),
    Mutant("remove_dropout", "matches modules by name ('drop' in the target)", hint="not by name", edits=(
        ("            is_dropout = isinstance(gm.get_submodule(node.target), DROPOUT_MODULES)",
         '            is_dropout = "drop" in node.target'),)),
    Mutant("remove_dropout", "swaps each dropout module for nn.Identity", hint="not replaced", edits=(
        ('        if node.op == "call_module":\n',
         ""),
        ("            is_dropout = isinstance(gm.get_submodule(node.target), DROPOUT_MODULES)",
         '        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), DROPOUT_MODULES):'),
        ("        else:",
         "            gm.delete_submodule(node.target)\n"
         "            gm.add_submodule(node.target, nn.Identity())"),
        ('            is_dropout = node.op == "call_function" and node.target in DROPOUT_FUNCTIONS',
         '        elif node.op == "call_function" and node.target in DROPOUT_FUNCTIONS:'),
        ("        if not is_dropout:\n"
         "            continue\n",
         ""),
        ('        dropped = node.args[0] if node.args else node.kwargs["input"]',
         '            node.replace_all_uses_with(node.args[0] if node.args else node.kwargs["input"])'),
        ("        node.replace_all_uses_with(dropped)\n",
         ""),
        ("        gm.graph.erase_node(node)",
         "            gm.graph.erase_node(node)"),)),
    Mutant("remove_dropout", "only switches to eval mode", hint="still called", not_hints=("not by name",), edits=(
        ("    for node in list(gm.graph.nodes):\n"
         '        if node.op == "call_module":\n'
         "            is_dropout = isinstance(gm.get_submodule(node.target), DROPOUT_MODULES)\n"
         "        else:\n"
         '            is_dropout = node.op == "call_function" and node.target in DROPOUT_FUNCTIONS\n'
         "        if not is_dropout:\n"
         "            continue\n"
         '        dropped = node.args[0] if node.args else node.kwargs["input"]\n'
         "        node.replace_all_uses_with(dropped)\n"
         "        gm.graph.erase_node(node)\n"
         "    gm.delete_all_unused_submodules()\n"
         "    gm.graph.lint()\n"
         "    gm.recompile()\n",
         ""),)),
    # ----------------------------------------------------------------------------------- record_shapes
    Mutant("record_shapes", "skips placeholders", hint="placeholders are tensor-valued nodes too", edits=(
        (_RECORD_SHAPES_LINES,
         "    ShapeProp(gm).propagate(*inputs)\n"
         '    return {n.name: tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes\n'
         '            if n.op not in ("placeholder", "output")\n'
         '            and isinstance(n.meta.get("tensor_meta"), torch.fx.passes.shape_prop.TensorMetadata)}'),)),
    Mutant("record_shapes", "keeps the output node (ShapeProp gives it a tensor_meta too)", hint="output node", edits=(
        (_RECORD_SHAPES_LINES,
         "    ShapeProp(gm).propagate(*inputs)\n"
         '    return {n.name: tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes\n'
         '            if isinstance(n.meta.get("tensor_meta"), torch.fx.passes.shape_prop.TensorMetadata)}'),)),
    Mutant("record_shapes", "reads .shape from every tensor_meta (a tuple for chunk)",
           hint="a tuple of tensors", edits=(
        (_RECORD_SHAPES_LINES,
         "    ShapeProp(gm).propagate(*inputs)\n"
         '    return {n.name: tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes\n'
         '            if n.op != "output" and "tensor_meta" in n.meta}'),)),
    Mutant("record_shapes", "records every value with a shape-like fallback",
           hint="isinstance(value, torch.Tensor)", edits=(
        ("    shapes = {}",
         "    out = {}"),
        ("    class Recorder(fx.Interpreter):",
         "    class R(fx.Interpreter):"),
        ("            value = super().run_node(n)",
         "            v = super().run_node(n)"),
        ('            if n.op != "output" and isinstance(value, torch.Tensor):\n'
         "                shapes[n.name] = tuple(value.shape)",
         '            if n.op != "output":\n'
         '                out[n.name] = tuple(getattr(v, "shape", ()))'),
        ("            return value",
         "            return v"),
        ("    with torch.no_grad():\n",
         ""),
        ("        Recorder(gm).run(*inputs)",
         "    R(gm).run(*inputs)"),
        ("    return shapes",
         "    return out"),)),
    Mutant("record_shapes", "only call_module nodes", hint="whatever its op", edits=(
        (_RECORD_SHAPES_LINES,
         "    ShapeProp(gm).propagate(*inputs)\n"
         '    return {n.name: tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes if n.op == "call_module"}'),)),
    Mutant("record_shapes", "keys by target", hint="node.name", edits=(
        (_RECORD_SHAPES_LINES,
         "    ShapeProp(gm).propagate(*inputs)\n"
         '    return {str(n.target): tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes\n'
         '            if n.op != "output" and isinstance(n.meta.get("tensor_meta"), torch.fx.passes.shape_prop.TensorMetadata)}'),)),
    Mutant("record_shapes", "lists instead of tuples", hint="tuple(tensor.shape)", edits=(
        (_RECORD_SHAPES_LINES,
         "    ShapeProp(gm).propagate(*inputs)\n"
         '    return {n.name: list(n.meta["tensor_meta"].shape) for n in gm.graph.nodes\n'
         '            if n.op != "output" and isinstance(n.meta.get("tensor_meta"), torch.fx.passes.shape_prop.TensorMetadata)}'),)),
    # ------------------------------------------------------------------------------------ linear_flops
    Mutant("linear_flops", "forgets the factor 2", hint="2 FLOPs",
           not_hints=("not the shape of the model's input", "ALL leading dimensions"), edits=(
        ("    for node in gm.graph.nodes:",
         "    for n in gm.graph.nodes:"),
        ('        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):',
         '        if n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Linear):'),
        ("            linear = gm.get_submodule(node.target)",
         "            m = gm.get_submodule(n.target)"),
        ('            shape = node.args[0].meta["tensor_meta"].shape\n',
         ""),
        ("            total += 2 * math.prod(shape[:-1]) * linear.in_features * linear.out_features",
         '            total += math.prod(n.args[0].meta["tensor_meta"].shape[:-1]) * m.in_features * m.out_features'),)),
    Mutant("linear_flops", "rows = the first dimension only", hint="ALL leading dimensions", edits=(
        ("    for node in gm.graph.nodes:",
         "    for n in gm.graph.nodes:"),
        ('        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):',
         '        if n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Linear):'),
        ("            linear = gm.get_submodule(node.target)",
         "            m = gm.get_submodule(n.target)"),
        ('            shape = node.args[0].meta["tensor_meta"].shape\n'
         "            total += 2 * math.prod(shape[:-1]) * linear.in_features * linear.out_features",
         '            total += 2 * n.args[0].meta["tensor_meta"].shape[0] * m.in_features * m.out_features'),)),
    Mutant("linear_flops", "counts modules, not calls", hint="counts twice", edits=(
        ("    ShapeProp(gm).propagate(*inputs)\n"
         "    total = 0\n"
         "    for node in gm.graph.nodes:\n"
         '        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):\n'
         "            linear = gm.get_submodule(node.target)\n"
         '            shape = node.args[0].meta["tensor_meta"].shape\n'
         "            total += 2 * math.prod(shape[:-1]) * linear.in_features * linear.out_features\n"
         "    return total",
         "    rows = math.prod(inputs[0].shape[:-1])\n"
         "    return sum(2 * rows * m.in_features * m.out_features for m in gm.modules() if isinstance(m, nn.Linear))"),)),
    Mutant("linear_flops", "rows from the model's input, not the Linear's",
           hint="not the shape of the model's input", edits=(
        ("    ShapeProp(gm).propagate(*inputs)",
         "    rows = math.prod(inputs[0].shape[:-1])"),
        ("    for node in gm.graph.nodes:",
         "    for n in gm.graph.nodes:"),
        ('        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):',
         '        if n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Linear):'),
        ("            linear = gm.get_submodule(node.target)",
         "            m = gm.get_submodule(n.target)"),
        ('            shape = node.args[0].meta["tensor_meta"].shape\n',
         ""),
        ("            total += 2 * math.prod(shape[:-1]) * linear.in_features * linear.out_features",
         "            total += 2 * rows * m.in_features * m.out_features"),)),
    Mutant("linear_flops", "counts F.linear calls too", hint="F.linear call does not", edits=(
        ("    for node in gm.graph.nodes:",
         "    for n in gm.graph.nodes:\n"
         "        rows = None"),
        ('        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):',
         '        if n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Linear):'),
        ("            linear = gm.get_submodule(node.target)",
         "            m = gm.get_submodule(n.target)\n"
         "            i, o = m.in_features, m.out_features\n"
         '        elif n.op == "call_function" and n.target is F.linear:'),
        ('            shape = node.args[0].meta["tensor_meta"].shape',
         '            o, i = n.args[1].meta["tensor_meta"].shape'),
        ("            total += 2 * math.prod(shape[:-1]) * linear.in_features * linear.out_features",
         "        else:\n"
         "            continue\n"
         '        total += 2 * math.prod(n.args[0].meta["tensor_meta"].shape[:-1]) * i * o'),)),
    Mutant("linear_flops", "matches Linears by name ('fc' in the target)", hint="counted", edits=(
        ("    for node in gm.graph.nodes:",
         "    for n in gm.graph.nodes:"),
        ('        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):',
         '        if n.op == "call_module" and "fc" in n.target:'),
        ("            linear = gm.get_submodule(node.target)",
         "            m = gm.get_submodule(n.target)"),
        ('            shape = node.args[0].meta["tensor_meta"].shape\n',
         ""),
        ("            total += 2 * math.prod(shape[:-1]) * linear.in_features * linear.out_features",
         '            total += 2 * math.prod(n.args[0].meta["tensor_meta"].shape[:-1]) * m.in_features * m.out_features'),)),
    Mutant("linear_flops", "returns a float", hint="expected an int", edits=(
        ("    total = 0",
         "    total = 0.0"),)),
]

MUTANTS += [  # an unknown node name: the check expects a KeyError that names it
    Mutant("insert_after", "an unknown name leaks StopIteration instead of KeyError", hint="expected KeyError", edits=(
        ("    node = next((n for n in gm.graph.nodes if n.name == node_name), None)",
         "    node = next(n for n in gm.graph.nodes if n.name == node_name)"),)),
    Mutant("insert_after", "an unknown name returns gm unchanged", hint="returned normally", edits=(
        ("    node = next((n for n in gm.graph.nodes if n.name == node_name), None)\n"
         "    if node is None:\n"
         "        raise KeyError(node_name)",
         "    for node in gm.graph.nodes:\n"
         "        if node.name == node_name:"),
        ("    with gm.graph.inserting_after(node):",
         "            with gm.graph.inserting_after(node):"),
        ("        new = gm.graph.call_function(fn, (node,))",
         "                new = gm.graph.call_function(fn, (node,))"),
        ("    node.replace_all_uses_with(new, delete_user_cb=lambda user: user is not new)",
         "            node.replace_all_uses_with(new, delete_user_cb=lambda u: u is not new)\n"
         "            break"),)),
    Mutant("insert_after", "KeyError without the name", hint="does not name the missing node", edits=(
        ("    node = next((n for n in gm.graph.nodes if n.name == node_name), None)\n"
         "    if node is None:",
         "    nodes = {n.name: n for n in gm.graph.nodes}\n"
         "    if node_name not in nodes:"),
        ("        raise KeyError(node_name)",
         '        raise KeyError("no such node")\n'
         "    node = nodes[node_name]"),)),
]

ALTERNATIVES = [
    Alternative("insert_after", "create the node first, replace the uses, then set its args", '''
def insert_after(gm, node_name, fn):
    nodes = {n.name: n for n in gm.graph.nodes}
    if node_name not in nodes:
        raise KeyError(node_name)
    node = nodes[node_name]
    with gm.graph.inserting_after(node):
        new = gm.graph.create_node("call_function", fn, args=(), kwargs={})
    node.replace_all_uses_with(new)
    new.args = (node,)
    gm.graph.lint()
    gm.recompile()
    return gm
'''),
    Alternative("insert_after", "rewire each user with replace_input_with, then return a new GraphModule", '''
def insert_after(gm, node_name, fn):
    node = next((n for n in gm.graph.nodes if n.name == node_name), None)
    if node is None:
        raise KeyError(f"no node named {node_name!r}")
    users = list(node.users)
    with gm.graph.inserting_after(node):
        new = gm.graph.call_function(fn, (node,))
    for user in users:
        user.replace_input_with(node, new)
    gm.graph.lint()
    return fx.GraphModule(gm, gm.graph)
'''),
    Alternative("remove_dropout", "an fx.Transformer that returns the dropped tensor", _DROP_HEAD + '''
class _NoDropout(fx.Transformer):
    def call_module(self, target, args, kwargs):
        if isinstance(self.fetch_attr(target), DROPOUT_MODULES):
            return args[0] if args else kwargs["input"]
        return super().call_module(target, args, kwargs)

    def call_function(self, target, args, kwargs):
        if target in DROPOUT_FUNCTIONS:
            return args[0] if args else kwargs["input"]
        return super().call_function(target, args, kwargs)


def remove_dropout(gm):
    out = _NoDropout(gm).transform()
    out.graph.lint()
    return out
'''),
    Alternative("remove_dropout", "delete_submodule per target, graph.eliminate_dead_code not needed", _DROP_HEAD + '''
def remove_dropout(gm):
    targets = set()
    for node in reversed(list(gm.graph.nodes)):
        mod = gm.get_submodule(node.target) if node.op == "call_module" else None
        if isinstance(mod, DROPOUT_MODULES) or (node.op == "call_function" and node.target in DROPOUT_FUNCTIONS):
            node.replace_all_uses_with(node.kwargs.get("input", node.args[0] if node.args else None))
            gm.graph.erase_node(node)
            if mod is not None:
                targets.add(node.target)
    for target in targets:
        gm.delete_submodule(target)
    gm.graph.lint()
    gm.recompile()
    return gm
'''),
    Alternative("record_shapes", "ShapeProp, keeping TensorMetadata only", '''
def record_shapes(gm, *inputs):
    from torch.fx.passes.shape_prop import TensorMetadata
    ShapeProp(gm).propagate(*inputs)
    return {n.name: tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes
            if n.op != "output" and isinstance(n.meta.get("tensor_meta"), TensorMetadata)}
'''),
    Alternative("record_shapes", "an Interpreter that keeps every value, then reads its env", '''
def record_shapes(gm, *inputs):
    interp = fx.Interpreter(gm, garbage_collect_values=False)
    with torch.no_grad():
        interp.run(*inputs)
    return {n.name: tuple(v.shape) for n, v in interp.env.items()
            if n.op != "output" and isinstance(v, torch.Tensor)}
'''),
    Alternative("linear_flops", "an Interpreter that counts as it runs", '''
def linear_flops(gm, *inputs):
    total = 0

    class Counter(fx.Interpreter):
        def call_module(self, target, args, kwargs):
            nonlocal total
            mod = self.fetch_attr(target)
            if isinstance(mod, nn.Linear):
                total += 2 * args[0].numel() // mod.in_features * mod.in_features * mod.out_features
            return super().call_module(target, args, kwargs)

    with torch.no_grad():
        Counter(gm).run(*inputs)
    return total
'''),
    Alternative("linear_flops", "from the output shapes: rows = output numel / out_features", '''
def linear_flops(gm, *inputs):
    ShapeProp(gm).propagate(*inputs)
    total = 0
    for n in gm.graph.nodes:
        if n.op == "call_module":
            m = gm.get_submodule(n.target)
            if isinstance(m, nn.Linear):
                rows = math.prod(n.meta["tensor_meta"].shape) // m.out_features
                total += 2 * rows * m.in_features * m.out_features
    return total
'''),
]

# ------------------------------------------- right answers written with another torch.fx mechanism

ALTERNATIVES += [
    Alternative('insert_after', "an fx.Transformer that returns fn(value) in place of the node's value", '''
def insert_after(gm, node_name, fn):
    if not any(n.name == node_name for n in gm.graph.nodes):
        raise KeyError(node_name)

    class Insert(fx.Transformer):
        def run_node(self, n):
            out = super().run_node(n)
            if n.name == node_name:
                out.node.name = node_name
                return self.tracer.create_proxy("call_function", fn, (out,), {})
            return out
    new = Insert(gm).transform()
    new.graph.lint()
    new.recompile()
    return new
'''),
]

# ------------------------------------------- near misses: each does right what some hint says, and must not see it

MUTANTS += [
    Mutant("insert_after", "creates the node inside inserting_after but never rewires, then tidies the graph with "
           "eliminate_dead_code (which removes the unread node)", hint="created in it and are gone again",
           not_hints=("only sets where new nodes go",), edits=(
        ("    # without delete_user_cb the new node would be rewired to read itself\n"
         "    node.replace_all_uses_with(new, delete_user_cb=lambda user: user is not new)\n",
         "    gm.graph.eliminate_dead_code()\n"),)),
    Mutant("insert_after", "inserting_after the node before it (node.prev), and no graph.lint()",
           hint="puts them right after", not_hints=("inserting_before",), edits=(
        ("    with gm.graph.inserting_after(node):",
         "    with gm.graph.inserting_after(node.prev):"),
        ("    gm.graph.lint()\n",
         ""),)),
    Mutant("insert_after", "wraps fn in a function of its own: the call_function node's target is the wrapper",
           hint="`fn` itself", not_hints=("create it with graph.call_function",), edits=(
        ("    with gm.graph.inserting_after(node):\n"
         "        new = gm.graph.call_function(fn, (node,))",
         "    def apply(t):\n"
         "        return fn(t)\n"
         "\n"
         "    with gm.graph.inserting_after(node):\n"
         "        new = gm.graph.call_function(apply, (node,))"),)),
    Mutant("insert_after", "creates the node without an insertion point (it goes to the end of the graph), and no "
           "graph.lint()", hint="comes after its user", not_hints=("so that it comes after its input",), edits=(
        ("    with gm.graph.inserting_after(node):\n"
         "        new = gm.graph.call_function(fn, (node,))",
         "    new = gm.graph.call_function(fn, (node,))"),
        ("    gm.graph.lint()\n",
         ""),)),
    Mutant("remove_dropout", "isinstance with a tuple that leaves out AlphaDropout and FeatureAlphaDropout",
           hint="FeatureAlphaDropout module 'feat' is still called",
           not_hints=("not by name", "subclasses count too"), edits=(
        ("            is_dropout = isinstance(gm.get_submodule(node.target), DROPOUT_MODULES)",
         "            is_dropout = isinstance(gm.get_submodule(node.target), (nn.Dropout, nn.Dropout1d, nn.Dropout2d,\n"
         "                                                                     nn.Dropout3d))"),)),
    Mutant("remove_dropout", "every dropout module, but of the functions only F.dropout and torch.dropout",
           hint="every dropout function counts, dropout2d too", not_hints=("functional dropout counts too",), edits=(
        ('            is_dropout = node.op == "call_function" and node.target in DROPOUT_FUNCTIONS',
         '            is_dropout = node.op == "call_function" and node.target in (F.dropout, torch.dropout)'),)),
    Mutant("record_shapes", "drops the batch dimension: tuple(value.shape[1:])", hint="the shape of its value when gm runs",
           not_hints=("record the shape of the node's own value",), edits=(
        ("                shapes[n.name] = tuple(value.shape)",
         "                shapes[n.name] = tuple(value.shape[1:])"),)),
    Mutant("record_shapes", "keys the dict by the node itself", hint="not by the node itself",
           not_hints=("node.target",), edits=(
        ("                shapes[n.name] = tuple(value.shape)",
         "                shapes[n] = tuple(value.shape)"),)),
    Mutant("linear_flops", "a typo: in_features * in_features, with the right rows and factor 2",
           hint="rows from the input each call receives",
           not_hints=("find each call_module node whose module is an nn.Linear", "2 FLOPs", "ALL leading dimensions",
                      "counts twice", "model's input"), edits=(
        ("            total += 2 * math.prod(shape[:-1]) * linear.in_features * linear.out_features",
         "            total += 2 * math.prod(shape[:-1]) * linear.in_features * linear.in_features"),)),
]

# --------------------- wrong and right answers written from the task text alone, by someone who had not read the checks

_WRONG, _RIGHT = from_task_text("ex05_inserting")
MUTANTS += _WRONG
ALTERNATIVES += _RIGHT
