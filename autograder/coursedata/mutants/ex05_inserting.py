"""Mutants and alternatives of ex05_inserting."""
from autograder.checks.ex05_inserting import EXPECTED_ERRORS

from autograder.coursedata.mutants import Alternative, Mutant

_DROP_HEAD = '''
DROPOUT_MODULES = (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout)
DROPOUT_FUNCTIONS = (F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout,
                     F.feature_alpha_dropout, torch.dropout)
'''

MUTANTS = [
    # ------------------------------------------------------------------------------------ insert_after
    Mutant("insert_after", "the self-use trap: replace_all_uses_with without delete_user_cb", '''
def insert_after(gm, node_name, fn):
    node = next(n for n in gm.graph.nodes if n.name == node_name)
    with gm.graph.inserting_after(node):
        new = gm.graph.call_function(fn, (node,))
    node.replace_all_uses_with(new)
    gm.recompile()
    return gm
''', hint="delete_user_cb"),
    Mutant("insert_after", "the self-use trap, caught by its own graph.lint()", '''
def insert_after(gm, node_name, fn):
    node = next(n for n in gm.graph.nodes if n.name == node_name)
    with gm.graph.inserting_after(node):
        new = gm.graph.call_function(fn, (node,))
    node.replace_all_uses_with(new)
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="used before it has been defined"),
    Mutant("insert_after", "wrong snippet 4: an empty inserting_after block", '''
def insert_after(gm, node_name, fn):
    node = next(n for n in gm.graph.nodes if n.name == node_name)
    with gm.graph.inserting_after(node):
        pass
    gm.recompile()
    return gm
''', hint="only sets where new nodes go"),
    Mutant("insert_after", "creates the node but never rewires the users", '''
def insert_after(gm, node_name, fn):
    node = next(n for n in gm.graph.nodes if n.name == node_name)
    with gm.graph.inserting_after(node):
        gm.graph.call_function(fn, (node,))
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="replace_all_uses_with"),
    Mutant("insert_after", "rewires only the first user", '''
def insert_after(gm, node_name, fn):
    node = next(n for n in gm.graph.nodes if n.name == node_name)
    first = next(iter(node.users))
    with gm.graph.inserting_after(node):
        new = gm.graph.call_function(fn, (node,))
    first.replace_input_with(node, new)
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="every former user"),
    Mutant("insert_after", "rewires top-level positional args only (misses lists and kwargs)", '''
def insert_after(gm, node_name, fn):
    node = next(n for n in gm.graph.nodes if n.name == node_name)
    users = list(node.users)
    with gm.graph.inserting_after(node):
        new = gm.graph.call_function(fn, (node,))
    for user in users:
        user.args = tuple(new if a is node else a for a in user.args)
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="uses inside lists"),
    Mutant("insert_after", "inserting_before instead of inserting_after", '''
def insert_after(gm, node_name, fn):
    node = next(n for n in gm.graph.nodes if n.name == node_name)
    with gm.graph.inserting_before(node):
        new = gm.graph.call_function(fn, (node,))
    node.replace_all_uses_with(new, delete_user_cb=lambda u: u is not new)
    gm.recompile()
    return gm
''', hint="not inserting_before"),
    Mutant("insert_after", "forgets gm.recompile()", '''
def insert_after(gm, node_name, fn):
    node = next(n for n in gm.graph.nodes if n.name == node_name)
    with gm.graph.inserting_after(node):
        new = gm.graph.call_function(fn, (node,))
    node.replace_all_uses_with(new, delete_user_cb=lambda u: u is not new)
    gm.graph.lint()
    return gm
''', hint="gm.recompile()"),
    Mutant("insert_after", "finds the node by target instead of name", '''
def insert_after(gm, node_name, fn):
    node = next(n for n in gm.graph.nodes if str(n.target) == node_name)
    with gm.graph.inserting_after(node):
        new = gm.graph.call_function(fn, (node,))
    node.replace_all_uses_with(new, delete_user_cb=lambda u: u is not new)
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="raised StopIteration"),
    Mutant("insert_after", "a call_method node instead of a call_function", '''
def insert_after(gm, node_name, fn):
    node = next(n for n in gm.graph.nodes if n.name == node_name)
    with gm.graph.inserting_after(node):
        new = gm.graph.call_method(fn.__name__, (node,))
    node.replace_all_uses_with(new, delete_user_cb=lambda u: u is not new)
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="graph.call_function(fn, (node,))"),
    # ---------------------------------------------------------------------------------- remove_dropout
    Mutant("remove_dropout", "forgets functional dropout", _DROP_HEAD + '''
def remove_dropout(gm):
    for node in list(gm.graph.nodes):
        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), DROPOUT_MODULES):
            node.replace_all_uses_with(node.args[0])
            gm.graph.erase_node(node)
    gm.delete_all_unused_submodules()
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="functional dropout counts too"),
    Mutant("remove_dropout", "only exactly nn.Dropout and F.dropout", '''
def remove_dropout(gm):
    for node in list(gm.graph.nodes):
        if (node.op == "call_module" and type(gm.get_submodule(node.target)) is nn.Dropout) or (
                node.op == "call_function" and node.target in (F.dropout, torch.dropout)):
            node.replace_all_uses_with(node.args[0] if node.args else node.kwargs["input"])
            gm.graph.erase_node(node)
    gm.delete_all_unused_submodules()
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="isinstance"),
    Mutant("remove_dropout", "erases the node without rewiring its users", _DROP_HEAD + '''
def remove_dropout(gm):
    for node in list(gm.graph.nodes):
        if (node.op == "call_module" and isinstance(gm.get_submodule(node.target), DROPOUT_MODULES)) or (
                node.op == "call_function" and node.target in DROPOUT_FUNCTIONS):
            gm.graph.erase_node(node)
    gm.delete_all_unused_submodules()
    gm.recompile()
    return gm
''', hint="replace_all_uses_with(new) first"),
    Mutant("remove_dropout", "keeps the dropout submodules registered", _DROP_HEAD + '''
def remove_dropout(gm):
    for node in list(gm.graph.nodes):
        if (node.op == "call_module" and isinstance(gm.get_submodule(node.target), DROPOUT_MODULES)) or (
                node.op == "call_function" and node.target in DROPOUT_FUNCTIONS):
            node.replace_all_uses_with(node.args[0] if node.args else node.kwargs["input"])
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="delete_all_unused_submodules"),
    Mutant("remove_dropout", "forgets gm.recompile()", _DROP_HEAD + '''
def remove_dropout(gm):
    for node in list(gm.graph.nodes):
        if (node.op == "call_module" and isinstance(gm.get_submodule(node.target), DROPOUT_MODULES)) or (
                node.op == "call_function" and node.target in DROPOUT_FUNCTIONS):
            node.replace_all_uses_with(node.args[0] if node.args else node.kwargs["input"])
            gm.graph.erase_node(node)
    gm.delete_all_unused_submodules()
    gm.graph.lint()
    return gm
''', hint="gm.recompile()"),
    Mutant("remove_dropout", "takes node.args[0] even when the input is a keyword", _DROP_HEAD + '''
def remove_dropout(gm):
    for node in list(gm.graph.nodes):
        if (node.op == "call_module" and isinstance(gm.get_submodule(node.target), DROPOUT_MODULES)) or (
                node.op == "call_function" and node.target in DROPOUT_FUNCTIONS):
            node.replace_all_uses_with(node.args[0])
            gm.graph.erase_node(node)
    gm.delete_all_unused_submodules()
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="passed by keyword"),
    Mutant("remove_dropout", "matches modules by name ('drop' in the target)", _DROP_HEAD + '''
def remove_dropout(gm):
    for node in list(gm.graph.nodes):
        if (node.op == "call_module" and "drop" in node.target) or (
                node.op == "call_function" and node.target in DROPOUT_FUNCTIONS):
            node.replace_all_uses_with(node.args[0] if node.args else node.kwargs["input"])
            gm.graph.erase_node(node)
    gm.delete_all_unused_submodules()
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="not by name"),
    Mutant("remove_dropout", "swaps each dropout module for nn.Identity", _DROP_HEAD + '''
def remove_dropout(gm):
    for node in list(gm.graph.nodes):
        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), DROPOUT_MODULES):
            gm.delete_submodule(node.target)
            gm.add_submodule(node.target, nn.Identity())
        elif node.op == "call_function" and node.target in DROPOUT_FUNCTIONS:
            node.replace_all_uses_with(node.args[0] if node.args else node.kwargs["input"])
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="not replaced"),
    Mutant("remove_dropout", "only switches to eval mode", '''
def remove_dropout(gm):
    return gm.eval()
''', hint="still calls"),
    # ----------------------------------------------------------------------------------- record_shapes
    Mutant("record_shapes", "skips placeholders", '''
def record_shapes(gm, *inputs):
    ShapeProp(gm).propagate(*inputs)
    return {n.name: tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes
            if n.op not in ("placeholder", "output")
            and isinstance(n.meta.get("tensor_meta"), torch.fx.passes.shape_prop.TensorMetadata)}
''', hint="placeholders are tensor-valued nodes too"),
    Mutant("record_shapes", "keeps the output node (ShapeProp gives it a tensor_meta too)", '''
def record_shapes(gm, *inputs):
    ShapeProp(gm).propagate(*inputs)
    return {n.name: tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes
            if isinstance(n.meta.get("tensor_meta"), torch.fx.passes.shape_prop.TensorMetadata)}
''', hint="output node"),
    Mutant("record_shapes", "reads .shape from every tensor_meta (a tuple for chunk)", '''
def record_shapes(gm, *inputs):
    ShapeProp(gm).propagate(*inputs)
    return {n.name: tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes
            if n.op != "output" and "tensor_meta" in n.meta}
''', hint="a tuple of tensors"),
    Mutant("record_shapes", "records every value with a shape-like fallback", '''
def record_shapes(gm, *inputs):
    out = {}

    class R(fx.Interpreter):
        def run_node(self, n):
            v = super().run_node(n)
            if n.op != "output":
                out[n.name] = tuple(getattr(v, "shape", ()))
            return v

    R(gm).run(*inputs)
    return out
''', hint="isinstance(value, torch.Tensor)"),
    Mutant("record_shapes", "only call_module nodes", '''
def record_shapes(gm, *inputs):
    ShapeProp(gm).propagate(*inputs)
    return {n.name: tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes if n.op == "call_module"}
''', hint="whatever its op"),
    Mutant("record_shapes", "keys by target", '''
def record_shapes(gm, *inputs):
    ShapeProp(gm).propagate(*inputs)
    return {str(n.target): tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes
            if n.op != "output" and isinstance(n.meta.get("tensor_meta"), torch.fx.passes.shape_prop.TensorMetadata)}
''', hint="node.name"),
    Mutant("record_shapes", "lists instead of tuples", '''
def record_shapes(gm, *inputs):
    ShapeProp(gm).propagate(*inputs)
    return {n.name: list(n.meta["tensor_meta"].shape) for n in gm.graph.nodes
            if n.op != "output" and isinstance(n.meta.get("tensor_meta"), torch.fx.passes.shape_prop.TensorMetadata)}
''', hint="tuple(tensor.shape)"),
    # ------------------------------------------------------------------------------------ linear_flops
    Mutant("linear_flops", "forgets the factor 2", '''
def linear_flops(gm, *inputs):
    ShapeProp(gm).propagate(*inputs)
    total = 0
    for n in gm.graph.nodes:
        if n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Linear):
            m = gm.get_submodule(n.target)
            total += math.prod(n.args[0].meta["tensor_meta"].shape[:-1]) * m.in_features * m.out_features
    return total
''', hint="2 FLOPs"),
    Mutant("linear_flops", "rows = the first dimension only", '''
def linear_flops(gm, *inputs):
    ShapeProp(gm).propagate(*inputs)
    total = 0
    for n in gm.graph.nodes:
        if n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Linear):
            m = gm.get_submodule(n.target)
            total += 2 * n.args[0].meta["tensor_meta"].shape[0] * m.in_features * m.out_features
    return total
''', hint="ALL leading dimensions"),
    Mutant("linear_flops", "counts modules, not calls", '''
def linear_flops(gm, *inputs):
    rows = math.prod(inputs[0].shape[:-1])
    return sum(2 * rows * m.in_features * m.out_features for m in gm.modules() if isinstance(m, nn.Linear))
''', hint="counts twice"),
    Mutant("linear_flops", "rows from the model's input, not the Linear's", '''
def linear_flops(gm, *inputs):
    rows = math.prod(inputs[0].shape[:-1])
    total = 0
    for n in gm.graph.nodes:
        if n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Linear):
            m = gm.get_submodule(n.target)
            total += 2 * rows * m.in_features * m.out_features
    return total
''', hint="not the shape of the model's input"),
    Mutant("linear_flops", "counts F.linear calls too", '''
def linear_flops(gm, *inputs):
    ShapeProp(gm).propagate(*inputs)
    total = 0
    for n in gm.graph.nodes:
        rows = None
        if n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Linear):
            m = gm.get_submodule(n.target)
            i, o = m.in_features, m.out_features
        elif n.op == "call_function" and n.target is F.linear:
            o, i = n.args[1].meta["tensor_meta"].shape
        else:
            continue
        total += 2 * math.prod(n.args[0].meta["tensor_meta"].shape[:-1]) * i * o
    return total
''', hint="F.linear call does not"),
    Mutant("linear_flops", "matches Linears by name ('fc' in the target)", '''
def linear_flops(gm, *inputs):
    ShapeProp(gm).propagate(*inputs)
    total = 0
    for n in gm.graph.nodes:
        if n.op == "call_module" and "fc" in n.target:
            m = gm.get_submodule(n.target)
            total += 2 * math.prod(n.args[0].meta["tensor_meta"].shape[:-1]) * m.in_features * m.out_features
    return total
''', hint="counted"),
    Mutant("linear_flops", "returns a float", '''
def linear_flops(gm, *inputs):
    ShapeProp(gm).propagate(*inputs)
    total = 0.0
    for n in gm.graph.nodes:
        if n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Linear):
            m = gm.get_submodule(n.target)
            total += 2 * n.args[0].meta["tensor_meta"].shape[:-1].numel() * m.in_features * m.out_features
    return total
''', hint="expected an int"),
]

if EXPECTED_ERRORS:  # judged only once the check framework supports expected errors
    MUTANTS += [
        Mutant("insert_after", "an unknown name leaks StopIteration instead of KeyError", '''
def insert_after(gm, node_name, fn):
    node = next(n for n in gm.graph.nodes if n.name == node_name)
    with gm.graph.inserting_after(node):
        new = gm.graph.call_function(fn, (node,))
    node.replace_all_uses_with(new, delete_user_cb=lambda u: u is not new)
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="expected KeyError"),
        Mutant("insert_after", "an unknown name returns gm unchanged", '''
def insert_after(gm, node_name, fn):
    for node in gm.graph.nodes:
        if node.name == node_name:
            with gm.graph.inserting_after(node):
                new = gm.graph.call_function(fn, (node,))
            node.replace_all_uses_with(new, delete_user_cb=lambda u: u is not new)
            break
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="returned normally"),
        Mutant("insert_after", "KeyError without the name", '''
def insert_after(gm, node_name, fn):
    nodes = {n.name: n for n in gm.graph.nodes}
    if node_name not in nodes:
        raise KeyError("no such node")
    node = nodes[node_name]
    with gm.graph.inserting_after(node):
        new = gm.graph.call_function(fn, (node,))
    node.replace_all_uses_with(new, delete_user_cb=lambda u: u is not new)
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="does not name the missing node"),
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
            return args[0]
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
