"""Mutants and alternatives of ex03_replacing.

The notebook's setup cell imports operator, torch, fx, nn, F, subgraph_rewriter and the fxplayground models.
"""
from autograder.coursedata.mutants import Alternative, Mutant

MUTANTS = [
    # ------------------------------------------------------------------------------ swap_function
    Mutant("swap_function", "matches by __name__, so F.relu is swapped along with torch.relu", '''
def swap_function(gm, old, new):
    for node in gm.graph.nodes:
        if node.op == "call_function" and getattr(node.target, "__name__", None) == old.__name__:
            node.target = new
    gm.recompile()
    return gm
''', hint="compare targets by identity"),
    Mutant("swap_function", "forgets gm.recompile()", '''
def swap_function(gm, old, new):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is old:
            node.target = new
    return gm
''', hint="gm.recompile()"),
    Mutant("swap_function", "stops after the first match", '''
def swap_function(gm, old, new):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is old:
            node.target = new
            break
    gm.recompile()
    return gm
''', hint="not only the first one"),
    Mutant("swap_function", "wraps new in a lambda", '''
def swap_function(gm, old, new):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is old:
            node.target = lambda *args, **kwargs: new(*args, **kwargs)
    gm.recompile()
    return gm
''', hint="lambda"),
    Mutant("swap_function", "changes the graph in place but returns nothing", '''
def swap_function(gm, old, new):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is old:
            node.target = new
    gm.recompile()
''', hint="return gm"),
    Mutant("swap_function", "inserts the new call but never rewires the users", '''
def swap_function(gm, old, new):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is old:
            with graph.inserting_after(node):
                graph.call_function(new, node.args, node.kwargs)
    gm.recompile()
    return gm
''', hint="replace_all_uses_with"),
    Mutant("swap_function", "matches the node name instead of the target", '''
def swap_function(gm, old, new):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.name.startswith(old.__name__):
            node.target = new
    gm.recompile()
    return gm
''', hint="compare targets by identity"),

    # ------------------------------------------------------------------------------ relu_to_clamp
    Mutant("relu_to_clamp", "the popular lambda target (wrong snippet 1)", '''
def relu_to_clamp(gm, max_value):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.relu:
            node.target = lambda z: torch.clamp(z, 0, max_value)
    gm.recompile()
    return gm
''', hint="lambda"),
    Mutant("relu_to_clamp", "forgets gm.recompile()", '''
def relu_to_clamp(gm, max_value):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.relu:
            node.target = torch.clamp
            node.kwargs = {"min": 0, "max": max_value}
    return gm
''', hint="recompile"),
    Mutant("relu_to_clamp", "only an upper bound", '''
def relu_to_clamp(gm, max_value):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.relu:
            node.target = torch.clamp
            node.kwargs = {"max": max_value}
    gm.recompile()
    return gm
''', hint="min=0"),
    Mutant("relu_to_clamp", "converts F.relu too", '''
def relu_to_clamp(gm, max_value):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in (torch.relu, F.relu):
            node.target = torch.clamp
            node.args = (node.args[0],)
            node.kwargs = {"min": 0, "max": max_value}
    gm.recompile()
    return gm
''', hint="only torch.relu"),
    Mutant("relu_to_clamp", "adds a clamp after the relu instead of replacing it", '''
def relu_to_clamp(gm, max_value):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is torch.relu:
            with graph.inserting_after(node):
                clamp = graph.call_function(torch.clamp, (node,), {"min": 0, "max": max_value})
            node.replace_all_uses_with(clamp, delete_user_cb=lambda user: user is not clamp)
    gm.recompile()
    return gm
''', hint="replace the relu node itself"),
    Mutant("relu_to_clamp", "hard-codes ReLU6", '''
def relu_to_clamp(gm, max_value):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.relu:
            node.target = torch.clamp
            node.args = (node.args[0], 0, 6.0)
    gm.recompile()
    return gm
''', hint="max=max_value"),
    Mutant("relu_to_clamp", "F.hardtanh computes the same numbers but is not torch.clamp", '''
def relu_to_clamp(gm, max_value):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.relu:
            node.target = F.hardtanh
            node.args = (node.args[0], 0.0, float(max_value))
    gm.recompile()
    return gm
''', hint="use torch.clamp itself"),
    Mutant("relu_to_clamp", "bounds in the wrong order", '''
def relu_to_clamp(gm, max_value):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.relu:
            node.target = torch.clamp
            node.args = (node.args[0], max_value, 0)
    gm.recompile()
    return gm
''', hint="max=max_value"),

    # ------------------------------------------------------------------------------- relu_to_gelu
    Mutant("relu_to_gelu", "handles the call_function form only", '''
def relu_to_gelu(gm):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in (torch.relu, F.relu, torch.relu_):
            node.target = F.gelu
            node.kwargs = {}
    gm.recompile()
    return gm
''', hint="nn.ReLU is a call_module node"),
    Mutant("relu_to_gelu", "handles functions and modules, forgets x.relu()", '''
def relu_to_gelu(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        is_relu = (node.op == "call_function" and node.target in (torch.relu, F.relu, torch.relu_)) or (
            node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.ReLU))
        if is_relu:
            with graph.inserting_after(node):
                new = graph.call_function(F.gelu, (node.args[0],))
            node.replace_all_uses_with(new)
            graph.erase_node(node)
    gm.recompile()
    return gm
''', hint="call_method node"),
    Mutant("relu_to_gelu", "matches torch.relu but not F.relu", '''
def relu_to_gelu(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        is_relu = (node.op == "call_function" and node.target is torch.relu) or (
            node.op == "call_method" and node.target in ("relu", "relu_")) or (
            node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.ReLU))
        if is_relu:
            with graph.inserting_after(node):
                new = graph.call_function(F.gelu, (node.args[0],))
            node.replace_all_uses_with(new)
            graph.erase_node(node)
    gm.recompile()
    return gm
''', hint="match both"),
    Mutant("relu_to_gelu", "keeps F.relu's kwargs (inplace=False) on F.gelu", '''
def relu_to_gelu(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target in (torch.relu, F.relu, torch.relu_):
            node.target = F.gelu
        elif node.op == "call_method" and node.target in ("relu", "relu_"):
            with graph.inserting_after(node):
                new = graph.call_function(F.gelu, (node.args[0],))
            node.replace_all_uses_with(new)
            graph.erase_node(node)
        elif node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.ReLU):
            gm.add_submodule(node.target, nn.GELU())
    gm.recompile()
    return gm
''', hint="no `inplace` argument"),
    Mutant("relu_to_gelu", "the tanh approximation", '''
def relu_to_gelu(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        is_relu = (node.op == "call_function" and node.target in (torch.relu, F.relu, torch.relu_)) or (
            node.op == "call_method" and node.target in ("relu", "relu_")) or (
            node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.ReLU))
        if is_relu:
            with graph.inserting_after(node):
                new = graph.call_function(F.gelu, (node.args[0],), {"approximate": "tanh"})
            node.replace_all_uses_with(new)
            graph.erase_node(node)
    gm.recompile()
    return gm
''', hint="exact GELU"),
    Mutant("relu_to_gelu", "forgets gm.recompile()", '''
def relu_to_gelu(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        is_relu = (node.op == "call_function" and node.target in (torch.relu, F.relu, torch.relu_)) or (
            node.op == "call_method" and node.target in ("relu", "relu_")) or (
            node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.ReLU))
        if is_relu:
            with graph.inserting_after(node):
                new = graph.call_function(F.gelu, (node.args[0],))
            node.replace_all_uses_with(new)
            graph.erase_node(node)
    return gm
''', hint="recompile"),
    Mutant("relu_to_gelu", "puts a function on a call_module node", '''
def relu_to_gelu(gm):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in (torch.relu, F.relu, torch.relu_):
            node.target = F.gelu
            node.kwargs = {}
        elif node.op in ("call_module", "call_method") and (
                node.target in ("relu", "relu_") or isinstance(gm.get_submodule(node.target), nn.ReLU)):
            node.target = F.gelu
    gm.recompile()
    return gm
''', hint="str for call_module"),
    Mutant("relu_to_gelu", "lambda targets", '''
def relu_to_gelu(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        is_relu = (node.op == "call_function" and node.target in (torch.relu, F.relu, torch.relu_)) or (
            node.op == "call_method" and node.target in ("relu", "relu_")) or (
            node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.ReLU))
        if is_relu:
            with graph.inserting_after(node):
                new = graph.call_function(lambda z: F.gelu(z), (node.args[0],))
            node.replace_all_uses_with(new)
            graph.erase_node(node)
    gm.recompile()
    return gm
''', hint="lambda"),
    Mutant("relu_to_gelu", "turns every nn.ReLU into GELU in place, which changes the original model too", '''
def relu_to_gelu(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.ReLU):
            module = gm.get_submodule(node.target)
            module.__class__ = nn.GELU
            module.approximate = "none"
        elif (node.op == "call_function" and node.target in (torch.relu, F.relu, torch.relu_)) or (
                node.op == "call_method" and node.target in ("relu", "relu_")):
            with graph.inserting_after(node):
                new = graph.call_function(F.gelu, (node.args[0],))
            node.replace_all_uses_with(new)
            graph.erase_node(node)
    gm.recompile()
    return gm
''', hint="the original model changed"),

    # --------------------------------------------------------------------------- linear_to_matmul
    Mutant("linear_to_matmul", "clones the parameters into buffers", '''
def linear_to_matmul(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):
            linear = gm.get_submodule(node.target)
            flat = node.target.replace(".", "_")
            gm.register_buffer(f"{flat}_w", linear.weight.detach().clone())
            with graph.inserting_before(node):
                out = graph.call_function(torch.matmul, (node.args[0], graph.call_method("t", (graph.get_attr(f"{flat}_w"),))))
                if linear.bias is not None:
                    gm.register_buffer(f"{flat}_b", linear.bias.detach().clone())
                    out = graph.call_function(torch.add, (out, graph.get_attr(f"{flat}_b")))
            node.replace_all_uses_with(out)
            graph.erase_node(node)
    gm.recompile()
    return gm
''', hint="parameters must stay shared"),
    Mutant("linear_to_matmul", "wraps the weight's data in a new nn.Parameter", '''
def linear_to_matmul(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):
            linear = gm.get_submodule(node.target)
            flat = node.target.replace(".", "_")
            gm.register_parameter(f"{flat}_w", nn.Parameter(linear.weight.data))
            with graph.inserting_before(node):
                out = graph.call_function(torch.matmul, (node.args[0], graph.call_method("t", (graph.get_attr(f"{flat}_w"),))))
                if linear.bias is not None:
                    out = graph.call_function(torch.add, (out, graph.get_attr(f"{node.target}.bias")))
            node.replace_all_uses_with(out)
            graph.erase_node(node)
    gm.recompile()
    return gm
''', hint="parameters must stay shared"),
    Mutant("linear_to_matmul", "forgets to transpose W", '''
def linear_to_matmul(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):
            linear = gm.get_submodule(node.target)
            with graph.inserting_before(node):
                out = graph.call_function(torch.matmul, (node.args[0], graph.get_attr(f"{node.target}.weight")))
                if linear.bias is not None:
                    out = graph.call_function(torch.add, (out, graph.get_attr(f"{node.target}.bias")))
            node.replace_all_uses_with(out)
            graph.erase_node(node)
    gm.recompile()
    return gm
''', hint="x @ W.T + b"),
    Mutant("linear_to_matmul", "always adds the bias", '''
def linear_to_matmul(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):
            with graph.inserting_before(node):
                w = graph.call_method("t", (graph.get_attr(f"{node.target}.weight"),))
                out = graph.call_function(torch.add, (graph.call_function(torch.matmul, (node.args[0], w)),
                                                      graph.get_attr(f"{node.target}.bias")))
            node.replace_all_uses_with(out)
            graph.erase_node(node)
    gm.recompile()
    return gm
''', hint="leave the add out"),
    Mutant("linear_to_matmul", "forgets gm.recompile()", '''
def linear_to_matmul(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):
            linear = gm.get_submodule(node.target)
            with graph.inserting_before(node):
                out = graph.call_function(torch.matmul, (node.args[0], graph.call_method("t", (graph.get_attr(f"{node.target}.weight"),))))
                if linear.bias is not None:
                    out = graph.call_function(torch.add, (out, graph.get_attr(f"{node.target}.bias")))
            node.replace_all_uses_with(out)
            graph.erase_node(node)
    return gm
''', hint="recompile"),
    Mutant("linear_to_matmul", "F.linear with get_attr parameters", '''
def linear_to_matmul(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):
            linear = gm.get_submodule(node.target)
            with graph.inserting_before(node):
                w = graph.get_attr(f"{node.target}.weight")
                b = graph.get_attr(f"{node.target}.bias") if linear.bias is not None else None
                out = graph.call_function(F.linear, (node.args[0], w, b))
            node.replace_all_uses_with(out)
            graph.erase_node(node)
    gm.recompile()
    return gm
''', hint="F.linear"),
    Mutant("linear_to_matmul", "getattr(gm, target) misses nested layers such as 'layers.0'", '''
def linear_to_matmul(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_module" and isinstance(getattr(gm, node.target, None), nn.Linear):
            linear = getattr(gm, node.target)
            with graph.inserting_before(node):
                out = graph.call_function(torch.matmul, (node.args[0], graph.call_method("t", (graph.get_attr(f"{node.target}.weight"),))))
                if linear.bias is not None:
                    out = graph.call_function(torch.add, (out, graph.get_attr(f"{node.target}.bias")))
            node.replace_all_uses_with(out)
            graph.erase_node(node)
    gm.recompile()
    return gm
''', hint="get_submodule"),
    Mutant("linear_to_matmul", "one replacement per module, so a Linear called twice keeps a call", '''
def linear_to_matmul(gm):
    graph = gm.graph
    sites = {}
    for node in graph.nodes:
        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):
            sites[node.target] = node
    for target, node in sites.items():
        linear = gm.get_submodule(target)
        with graph.inserting_before(node):
            out = graph.call_function(torch.matmul, (node.args[0], graph.call_method("t", (graph.get_attr(f"{target}.weight"),))))
            if linear.bias is not None:
                out = graph.call_function(torch.add, (out, graph.get_attr(f"{target}.bias")))
        node.replace_all_uses_with(out)
        graph.erase_node(node)
    gm.recompile()
    return gm
''', hint="more than one node"),
    Mutant("linear_to_matmul", "transposes the weight in place to save a node, which breaks the original model", '''
def linear_to_matmul(gm):
    graph = gm.graph
    done = set()
    for node in list(graph.nodes):
        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):
            linear = gm.get_submodule(node.target)
            if node.target not in done:
                linear.weight.data = linear.weight.data.t().contiguous()
                done.add(node.target)
            with graph.inserting_before(node):
                out = graph.call_function(torch.matmul, (node.args[0], graph.get_attr(f"{node.target}.weight")))
                if linear.bias is not None:
                    out = graph.call_function(torch.add, (out, graph.get_attr(f"{node.target}.bias")))
            node.replace_all_uses_with(out)
            graph.erase_node(node)
    gm.recompile()
    return gm
''', hint="the original model changed"),
    Mutant("linear_to_matmul", "deletes the Linear submodule whose parameters the get_attr nodes read", '''
def linear_to_matmul(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):
            linear = gm.get_submodule(node.target)
            with graph.inserting_before(node):
                out = graph.call_function(torch.matmul, (node.args[0], graph.call_method("t", (graph.get_attr(f"{node.target}.weight"),))))
                if linear.bias is not None:
                    out = graph.call_function(torch.add, (out, graph.get_attr(f"{node.target}.bias")))
            node.replace_all_uses_with(out)
            graph.erase_node(node)
            gm.delete_submodule(node.target)
    gm.recompile()
    return gm
''', hint="keep every submodule"),
    Mutant("linear_to_matmul", "torch.mm, which only takes 2-d inputs", '''
def linear_to_matmul(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):
            linear = gm.get_submodule(node.target)
            with graph.inserting_before(node):
                out = graph.call_function(torch.mm, (node.args[0], graph.call_method("t", (graph.get_attr(f"{node.target}.weight"),))))
                if linear.bias is not None:
                    out = graph.call_function(torch.add, (out, graph.get_attr(f"{node.target}.bias")))
            node.replace_all_uses_with(out)
            graph.erase_node(node)
    gm.recompile()
    return gm
''', hint="torch.matmul"),
]

ALTERNATIVES = [
    Alternative("swap_function", "insert a new node, rewire the users, erase the old node", '''
def swap_function(gm, old, new):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is old:
            with graph.inserting_after(node):
                replacement = graph.call_function(new, node.args, node.kwargs)
            node.replace_all_uses_with(replacement)
            graph.erase_node(node)
    graph.lint()
    gm.recompile()
    return gm
'''),
    Alternative("swap_function", "an fx.Transformer that returns a new GraphModule", '''
def swap_function(gm, old, new):
    class Swap(fx.Transformer):
        def call_function(self, target, args, kwargs):
            return super().call_function(new if target is old else target, args, kwargs)
    return Swap(gm).transform()
'''),
    Alternative("relu_to_clamp", "insert torch.clamp, replace_all_uses_with, erase_node", '''
def relu_to_clamp(gm, max_value):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is torch.relu:
            with graph.inserting_before(node):
                x = node.args[0] if node.args else node.kwargs["input"]
                clamp = graph.call_function(torch.clamp, (x, 0.0, max_value))
            node.replace_all_uses_with(clamp)
            graph.erase_node(node)
    graph.lint()
    gm.recompile()
    return gm
'''),
    Alternative("relu_to_clamp", "subgraph_rewriter.replace_pattern", '''
def relu_to_clamp(gm, max_value):
    def pattern(x):
        return torch.relu(x)

    def keyword_pattern(x):
        return torch.relu(input=x)

    def replacement(x):
        return torch.clamp(x, min=0, max=max_value)

    subgraph_rewriter.replace_pattern(gm, pattern, replacement)
    subgraph_rewriter.replace_pattern(gm, keyword_pattern, replacement)
    gm.graph.lint()
    gm.recompile()
    return gm
'''),
    Alternative("relu_to_gelu", "per form: F.gelu for functions and methods, an nn.GELU submodule for modules", '''
def relu_to_gelu(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.ReLU):
            name = node.target.replace(".", "_") + "_gelu"
            gm.add_submodule(name, nn.GELU())
            node.target = name
            node.kwargs = {}
        elif (node.op == "call_function" and node.target in (torch.relu, torch.relu_, F.relu)) or (
                node.op == "call_method" and node.target in ("relu", "relu_")):
            node.op = "call_function"
            node.target = F.gelu
            node.args = (node.args[0] if node.args else node.kwargs["input"],)
            node.kwargs = {}
    gm.delete_all_unused_submodules()
    gm.graph.lint()
    gm.recompile()
    return gm
'''),
    Alternative("relu_to_gelu", "nn.GELU registered in place of each nn.ReLU, under the same qualified name", '''
def relu_to_gelu(gm):
    for node in list(gm.graph.nodes):
        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.ReLU):
            gm.add_submodule(node.target, nn.GELU())   # gm's own container: the original model keeps its ReLU
            node.kwargs = {}
        elif node.op == "call_function" and node.target in (torch.relu, torch.relu_, F.relu):
            node.target = F.gelu
            node.args, node.kwargs = (node.args[0] if node.args else node.kwargs["input"],), {}
        elif node.op == "call_method" and node.target in ("relu", "relu_"):
            with gm.graph.inserting_after(node):
                gelu = gm.graph.call_function(F.gelu, (node.args[0],))
            node.replace_all_uses_with(gelu)
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    return gm
'''),
    Alternative("relu_to_gelu", "an fx.Transformer", '''
def relu_to_gelu(gm):
    class ToGelu(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target in (torch.relu, torch.relu_, F.relu):
                return super().call_function(F.gelu, (args[0] if args else kwargs["input"],), {})
            return super().call_function(target, args, kwargs)

        def call_method(self, target, args, kwargs):
            if target in ("relu", "relu_"):
                return super().call_function(F.gelu, (args[0],), {})
            return super().call_method(target, args, kwargs)

        def call_module(self, target, args, kwargs):
            if isinstance(self.fetch_attr(target), nn.ReLU):
                return super().call_function(F.gelu, (args[0],), {})
            return super().call_module(target, args, kwargs)
    return ToGelu(gm).transform()
'''),
    Alternative("linear_to_matmul", "the same Parameter objects registered on gm under flat names, @ and .T", '''
def linear_to_matmul(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op != "call_module" or not isinstance(gm.get_submodule(node.target), nn.Linear):
            continue
        linear = gm.get_submodule(node.target)
        flat = node.target.replace(".", "_")
        if not hasattr(gm, f"{flat}_weight"):
            gm.register_parameter(f"{flat}_weight", linear.weight)
            if linear.bias is not None:
                gm.register_parameter(f"{flat}_bias", linear.bias)
        with graph.inserting_before(node):
            w_t = graph.call_function(getattr, (graph.get_attr(f"{flat}_weight"), "T"))
            out = graph.call_function(operator.matmul, (node.args[0], w_t))
            if linear.bias is not None:
                out = graph.call_function(operator.add, (out, graph.get_attr(f"{flat}_bias")))
        node.replace_all_uses_with(out)
        graph.erase_node(node)
    gm.delete_all_unused_submodules()
    graph.lint()
    gm.recompile()
    return gm
'''),
    Alternative("linear_to_matmul", "an fx.Transformer that traces x @ w.t() + b with proxies", '''
def linear_to_matmul(gm):
    class Decompose(fx.Transformer):
        def call_module(self, target, args, kwargs):
            linear = self.fetch_attr(target)
            if not isinstance(linear, nn.Linear):
                return super().call_module(target, args, kwargs)
            w = self.tracer.create_proxy("get_attr", f"{target}.weight", (), {})
            out = args[0] @ w.t()
            if linear.bias is not None:
                out = out + self.tracer.create_proxy("get_attr", f"{target}.bias", (), {})
            return out
    return Decompose(gm).transform()
'''),
]
