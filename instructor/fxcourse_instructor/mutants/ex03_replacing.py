"""Mutants and alternatives of ex03_replacing.

The notebook's setup cell imports operator, torch, fx, nn, F, subgraph_rewriter and the fxplayground models.
"""
from fxcourse_instructor.mutants import Alternative, Mutant, from_task_text

# Lines of the solution's answer cells that several mutants below replace (each occurs there once).
_RELU_TO_CLAMP_LINES = ('            x = node.args[0] if node.args else node.kwargs["input"]\n'
                        "            node.target = torch.clamp\n"
                        "            node.args = (x,)\n"
                        '            node.kwargs = {"min": 0, "max": max_value}\n'
                        "    gm.graph.lint()")
_RELU_TO_GELU_LINES = ("        if not is_relu(node):\n"
                       "            continue\n"
                       '        x = node.args[0] if node.args else node.kwargs["input"]\n'
                       "        with graph.inserting_after(node):\n"
                       "            gelu = graph.call_function(F.gelu, (x,))\n"
                       "        node.replace_all_uses_with(gelu)\n"
                       "        graph.erase_node(node)\n"
                       "    gm.delete_all_unused_submodules()\n"
                       "    graph.lint()")
_LINEAR_TO_MATMUL_LINES = ('        if node.op != "call_module":\n'
                           "            continue\n"
                           "        linear = gm.get_submodule(node.target)\n"
                           "        if not isinstance(linear, nn.Linear):\n"
                           "            continue\n"
                           '        x = node.args[0] if node.args else node.kwargs["input"]')

MUTANTS = [
    # ------------------------------------------------------------------------------ swap_function
    Mutant("swap_function", "matches by __name__, so F.relu is swapped along with torch.relu",
           hint="compare targets by identity", edits=(
        ('        if node.op == "call_function" and node.target is old:',
         '        if node.op == "call_function" and getattr(node.target, "__name__", None) == old.__name__:'),)),
    Mutant("swap_function", "forgets gm.recompile()", hint="gm.recompile()", edits=(
        ("    gm.graph.lint()\n"
         "    gm.recompile()\n",
         ""),)),
    Mutant("swap_function", "stops after the first match", hint="not only the first one",
           not_hints=('compare targets by identity',), edits=(
        ("    gm.graph.lint()",
         "            break"),)),
    Mutant("swap_function", "wraps new in a lambda", hint="lambda", edits=(
        ("            node.target = new\n"
         "    gm.graph.lint()",
         "            node.target = lambda *args, **kwargs: new(*args, **kwargs)"),)),
    Mutant("swap_function", "changes the graph in place but returns nothing", hint="return gm", edits=(
        ("    return gm\n",
         ""),)),
    Mutant("swap_function", "inserts the new call but never rewires the users", hint="replace_all_uses_with", edits=(
        ('    """Make every call_function node that targets `old` target `new`; return gm."""',
         '    """Make every call_function node that targets `old` target `new`; return gm."""\n'
         "    graph = gm.graph"),
        ("            node.target = new\n"
         "    gm.graph.lint()",
         "            with graph.inserting_after(node):\n"
         "                graph.call_function(new, node.args, node.kwargs)"),)),
    Mutant("swap_function", "matches the node name instead of the target", hint="compare targets by identity", edits=(
        ('        if node.op == "call_function" and node.target is old:',
         '        if node.op == "call_function" and node.name.startswith(old.__name__):'),)),

    # ------------------------------------------------------------------------------ relu_to_clamp
    Mutant("relu_to_clamp", "the popular lambda target (wrong snippet 1)", hint="lambda", edits=(
        (_RELU_TO_CLAMP_LINES,
         "            node.target = lambda z: torch.clamp(z, 0, max_value)"),)),
    Mutant("relu_to_clamp", "forgets gm.recompile()", hint="recompile", edits=(
        ("    gm.graph.lint()\n"
         "    gm.recompile()\n",
         ""),)),
    Mutant("relu_to_clamp", "only an upper bound", hint="min=0", edits=(
        ('            node.kwargs = {"min": 0, "max": max_value}',
         '            node.kwargs = {"max": max_value}'),)),
    Mutant("relu_to_clamp", "converts F.relu too", hint="only torch.relu", edits=(
        ('        if node.op == "call_function" and node.target is torch.relu:',
         '        if node.op == "call_function" and node.target in (torch.relu, F.relu):'),)),
    Mutant("relu_to_clamp", "adds a clamp after the relu instead of replacing it",
           hint="replace the relu node itself", edits=(
        ('    """Replace every torch.relu(x) by torch.clamp(x, min=0, max=max_value); return gm."""',
         '    """Replace every torch.relu(x) by torch.clamp(x, min=0, max=max_value); return gm."""\n'
         "    graph = gm.graph"),
        (_RELU_TO_CLAMP_LINES,
         "            with graph.inserting_after(node):\n"
         '                clamp = graph.call_function(torch.clamp, (node,), {"min": 0, "max": max_value})\n'
         "            node.replace_all_uses_with(clamp, delete_user_cb=lambda user: user is not clamp)"),)),
    Mutant("relu_to_clamp", "hard-codes ReLU6", hint="max=max_value", edits=(
        ("            node.args = (x,)\n"
         '            node.kwargs = {"min": 0, "max": max_value}\n'
         "    gm.graph.lint()",
         "            node.args = (node.args[0], 0, 6.0)"),)),
    Mutant("relu_to_clamp", "F.hardtanh computes the same numbers but is not torch.clamp",
           hint="use torch.clamp itself", edits=(
        ("            node.target = torch.clamp",
         "            node.target = F.hardtanh"),)),
    Mutant("relu_to_clamp", "bounds in the wrong order", hint="max=max_value", edits=(
        ("            node.args = (x,)\n"
         '            node.kwargs = {"min": 0, "max": max_value}\n'
         "    gm.graph.lint()",
         "            node.args = (node.args[0], max_value, 0)"),)),

    # ------------------------------------------------------------------------------- relu_to_gelu
    Mutant("relu_to_gelu", "handles the call_function form only", hint="nn.ReLU is a call_module node", edits=(
        (_RELU_TO_GELU_LINES,
         '        if node.op == "call_function" and node.target in (torch.relu, F.relu, torch.relu_):\n'
         "            node.target = F.gelu\n"
         "            node.kwargs = {}"),)),
    Mutant("relu_to_gelu", "handles functions and modules, forgets x.relu()", hint="call_method node", edits=(
        ('            return node.target in ("relu", "relu_")',
         "            return False"),)),
    Mutant("relu_to_gelu", "matches torch.relu but not F.relu", hint="match both", edits=(
        ("    relu_functions = (torch.relu, torch.relu_, F.relu)",
         "    relu_functions = (torch.relu,)"),)),
    Mutant("relu_to_gelu", "keeps F.relu's kwargs (inplace=False) on F.gelu", hint="no `inplace` argument", edits=(
        ("        if not is_relu(node):\n"
         "            continue\n"
         '        x = node.args[0] if node.args else node.kwargs["input"]',
         '        if node.op == "call_function" and node.target in (torch.relu, F.relu, torch.relu_):\n'
         "            node.target = F.gelu\n"
         '        elif node.op == "call_method" and node.target in ("relu", "relu_"):'),
        ("        with graph.inserting_after(node):",
         "            with graph.inserting_after(node):"),
        ("            gelu = graph.call_function(F.gelu, (x,))",
         "                new = graph.call_function(F.gelu, (node.args[0],))"),
        ("        node.replace_all_uses_with(gelu)",
         "            node.replace_all_uses_with(new)"),
        ("        graph.erase_node(node)",
         "            graph.erase_node(node)"),
        ("    gm.delete_all_unused_submodules()\n"
         "    graph.lint()",
         '        elif node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.ReLU):\n'
         "            gm.add_submodule(node.target, nn.GELU())"),)),
    Mutant("relu_to_gelu", "the tanh approximation", hint="exact GELU", edits=(
        ("            gelu = graph.call_function(F.gelu, (x,))",
         '            gelu = graph.call_function(F.gelu, (x,), {"approximate": "tanh"})'),)),
    Mutant("relu_to_gelu", "forgets gm.recompile()", hint="recompile", edits=(
        ("    gm.recompile()\n",
         ""),)),
    Mutant("relu_to_gelu", "puts a function on a call_module node", hint="str for call_module", edits=(
        (_RELU_TO_GELU_LINES,
         '        if node.op == "call_function" and node.target in (torch.relu, F.relu, torch.relu_):\n'
         "            node.target = F.gelu\n"
         "            node.kwargs = {}\n"
         '        elif node.op in ("call_module", "call_method") and (\n'
         '                node.target in ("relu", "relu_") or isinstance(gm.get_submodule(node.target), nn.ReLU)):\n'
         "            node.target = F.gelu"),)),
    Mutant("relu_to_gelu", "lambda targets", hint="lambda", edits=(
        ("            gelu = graph.call_function(F.gelu, (x,))",
         "            gelu = graph.call_function(lambda z: F.gelu(z), (x,))"),)),
    Mutant("relu_to_gelu", "turns every nn.ReLU into GELU in place, which changes the original model too",
           hint="the original model changed", edits=(
        ("        if not is_relu(node):\n"
         "            continue\n"
         '        x = node.args[0] if node.args else node.kwargs["input"]',
         '        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.ReLU):\n'
         "            module = gm.get_submodule(node.target)\n"
         "            module.__class__ = nn.GELU\n"
         '            module.approximate = "none"\n'
         '        elif (node.op == "call_function" and node.target in (torch.relu, F.relu, torch.relu_)) or (\n'
         '                node.op == "call_method" and node.target in ("relu", "relu_")):'),
        ("        with graph.inserting_after(node):",
         "            with graph.inserting_after(node):"),
        ("            gelu = graph.call_function(F.gelu, (x,))",
         "                new = graph.call_function(F.gelu, (node.args[0],))"),
        ("        node.replace_all_uses_with(gelu)",
         "            node.replace_all_uses_with(new)"),
        ("        graph.erase_node(node)",
         "            graph.erase_node(node)"),)),

    # --------------------------------------------------------------------------- linear_to_matmul
    Mutant("linear_to_matmul", "clones the parameters into buffers", hint="parameters must stay shared", edits=(
        ('            weight = graph.get_attr(f"{node.target}.weight")',
         '            flat = node.target.replace(".", "_")\n'
         '            gm.register_buffer(f"{flat}_w", linear.weight.detach().clone())\n'
         '            weight = graph.get_attr(f"{flat}_w")'),
        ('                out = graph.call_function(torch.add, (out, graph.get_attr(f"{node.target}.bias")))',
         '                gm.register_buffer(f"{flat}_b", linear.bias.detach().clone())\n'
         '                out = graph.call_function(torch.add, (out, graph.get_attr(f"{flat}_b")))'),)),
    Mutant("linear_to_matmul", "wraps the weight's data in a new nn.Parameter",
           hint="parameters must stay shared", edits=(
        ('            weight = graph.get_attr(f"{node.target}.weight")',
         '            flat = node.target.replace(".", "_")\n'
         '            gm.register_parameter(f"{flat}_w", nn.Parameter(linear.weight.data))\n'
         '            weight = graph.get_attr(f"{flat}_w")'),)),
    Mutant("linear_to_matmul", "forgets to transpose W", hint="x @ W.T + b", not_hints=('no bias',), edits=(
        ('            out = graph.call_function(torch.matmul, (x, graph.call_method("t", (weight,))))',
         "            out = graph.call_function(torch.matmul, (x, weight))"),)),
    Mutant("linear_to_matmul", "always adds the bias", hint="leave the add out", not_hints=('transpose W',), edits=(
        ("            if linear.bias is not None:\n"
         '                out = graph.call_function(torch.add, (out, graph.get_attr(f"{node.target}.bias")))',
         '            out = graph.call_function(torch.add, (out, graph.get_attr(f"{node.target}.bias")))'),
        ("    graph.lint()\n",
         ""),)),
    Mutant("linear_to_matmul", "forgets gm.recompile()", hint="recompile", edits=(
        ("    graph.lint()\n"
         "    gm.recompile()\n",
         ""),)),
    Mutant("linear_to_matmul", "F.linear with get_attr parameters", hint="F.linear", edits=(
        ('            weight = graph.get_attr(f"{node.target}.weight")',
         '                w = graph.get_attr(f"{node.target}.weight")'),
        ('            out = graph.call_function(torch.matmul, (x, graph.call_method("t", (weight,))))\n'
         "            if linear.bias is not None:\n"
         '                out = graph.call_function(torch.add, (out, graph.get_attr(f"{node.target}.bias")))',
         '                b = graph.get_attr(f"{node.target}.bias") if linear.bias is not None else None\n'
         "                out = graph.call_function(F.linear, (node.args[0], w, b))"),)),
    Mutant("linear_to_matmul", "getattr(gm, target) misses nested layers such as 'layers.0'",
           hint="get_submodule", edits=(
        (_LINEAR_TO_MATMUL_LINES,
         '        if node.op == "call_module" and isinstance(getattr(gm, node.target, None), nn.Linear):\n'
         "            linear = getattr(gm, node.target)"),
        ("        with graph.inserting_before(node):",
         "            with graph.inserting_before(node):"),
        ('            weight = graph.get_attr(f"{node.target}.weight")\n',
         ""),
        ('            out = graph.call_function(torch.matmul, (x, graph.call_method("t", (weight,))))',
         '                out = graph.call_function(torch.matmul, (node.args[0], graph.call_method("t", (graph.get_attr(f"{node.target}.weight"),))))'),
        ("            if linear.bias is not None:",
         "                if linear.bias is not None:"),
        ('                out = graph.call_function(torch.add, (out, graph.get_attr(f"{node.target}.bias")))',
         '                    out = graph.call_function(torch.add, (out, graph.get_attr(f"{node.target}.bias")))'),
        ("        node.replace_all_uses_with(out)",
         "            node.replace_all_uses_with(out)"),
        ("        graph.erase_node(node)",
         "            graph.erase_node(node)"),)),
    Mutant("linear_to_matmul", "one replacement per module, so a Linear called twice keeps a call",
           hint="more than one node", edits=(
        ("    graph = gm.graph",
         "    graph = gm.graph\n"
         "    sites = {}"),
        ('        if node.op != "call_module":\n'
         "            continue",
         '        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):\n'
         "            sites[node.target] = node\n"
         "    for target, node in sites.items():"),)),
    Mutant("linear_to_matmul", "transposes the weight in place to save a node, which breaks the original model",
           hint="the original model changed", edits=(
        ("    graph = gm.graph",
         "    graph = gm.graph\n"
         "    done = set()"),
        ('        if node.op != "call_module":\n'
         "            continue",
         '        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear):'),
        ("        linear = gm.get_submodule(node.target)",
         "            linear = gm.get_submodule(node.target)"),
        ("        if not isinstance(linear, nn.Linear):\n"
         "            continue\n"
         '        x = node.args[0] if node.args else node.kwargs["input"]',
         "            if node.target not in done:\n"
         "                linear.weight.data = linear.weight.data.t().contiguous()\n"
         "                done.add(node.target)"),
        ("        with graph.inserting_before(node):",
         "            with graph.inserting_before(node):"),
        ('            weight = graph.get_attr(f"{node.target}.weight")\n',
         ""),
        ('            out = graph.call_function(torch.matmul, (x, graph.call_method("t", (weight,))))',
         '                out = graph.call_function(torch.matmul, (node.args[0], graph.get_attr(f"{node.target}.weight")))'),
        ("            if linear.bias is not None:",
         "                if linear.bias is not None:"),
        ('                out = graph.call_function(torch.add, (out, graph.get_attr(f"{node.target}.bias")))',
         '                    out = graph.call_function(torch.add, (out, graph.get_attr(f"{node.target}.bias")))'),
        ("        node.replace_all_uses_with(out)",
         "            node.replace_all_uses_with(out)"),
        ("        graph.erase_node(node)",
         "            graph.erase_node(node)"),)),
    Mutant("linear_to_matmul", "deletes the Linear submodule whose parameters the get_attr nodes read",
           hint="keep every submodule", edits=(
        ("        graph.erase_node(node)\n"
         "    graph.lint()",
         "        graph.erase_node(node)\n"
         "        gm.delete_submodule(node.target)"),)),
    Mutant("linear_to_matmul", "torch.mm, which only takes 2-d inputs", hint="torch.matmul", edits=(
        ('            out = graph.call_function(torch.matmul, (x, graph.call_method("t", (weight,))))',
         '            out = graph.call_function(torch.mm, (x, graph.call_method("t", (weight,))))'),)),
]

# ------------------------------------------ near misses: right in what a hint says, wrong in another way

MUTANTS += [
    Mutant("swap_function", "compares with `is`, but retargets the nodes of a deep copy of the graph it never installs",
           hint="every call_function node whose target is old",
           not_hints=("compare with `is`",), edits=(
        ("    for node in gm.graph.nodes:",
         "    import copy\n"
         "    graph = copy.deepcopy(gm.graph)\n"
         "    for node in graph.nodes:"),)),
    Mutant("relu_to_clamp", "torch.clamp itself, but two of them per relu (min=0, then max=max_value)",
           hint="one per torch.relu", not_hints=("not torch.clip", "use torch.clamp itself"), edits=(
        ('            node.kwargs = {"min": 0, "max": max_value}',
         '            node.kwargs = {"min": 0}\n'
         "            with gm.graph.inserting_after(node):\n"
         '                upper = gm.graph.call_function(torch.clamp, (node,), {"max": max_value})\n'
         "            node.replace_all_uses_with(upper, delete_user_cb=lambda user: user is not upper)"),)),
    Mutant("relu_to_gelu", "takes a keyword input from kwargs['x'] instead of kwargs['input']: F.gelu(None)",
           hint="has None as its input", not_hints=("no bias",), edits=(
        ('        x = node.args[0] if node.args else node.kwargs["input"]',
         '        x = node.args[0] if node.args else node.kwargs.get("x")'),)),
    Mutant("linear_to_matmul", "transposes W, but forgets the bias", hint="add it to the product",
           not_hints=("must stay shared",), edits=(
        ("            if linear.bias is not None:\n"
         '                out = graph.call_function(torch.add, (out, graph.get_attr(f"{node.target}.bias")))\n', ""),)),
    Mutant("linear_to_matmul", "transposes W, but subtracts the bias", hint="expected x @ W.T + b",
           not_hints=("with W of shape",), edits=(
        ("                out = graph.call_function(torch.add,", "                out = graph.call_function(torch.sub,"),)),
]

# ---------------- inputs the task text allows that earlier cases never had: a namesake, an in-place twin, a subclass

MUTANTS += [
    Mutant("swap_function", "retargets gm's graph, then returns fx.GraphModule(gm, gm.graph) and never recompiles gm",
           hint="change gm itself", not_hints=("call gm.recompile() after changing the graph",), edits=(
        ("    gm.recompile()\n"
         "    return gm\n",
         "    return fx.GraphModule(gm, gm.graph)\n"),)),
    Mutant("relu_to_clamp", "clamps torch.relu_ too", hint="torch.relu_", edits=(
        ('        if node.op == "call_function" and node.target is torch.relu:',
         '        if node.op == "call_function" and node.target in (torch.relu, torch.relu_):'),)),
    Mutant("relu_to_clamp", "matches by __name__ (F.relu left out), so a function of the model's own named relu "
           "becomes a clamp", hint="which is not torch.relu", edits=(
        ('        if node.op == "call_function" and node.target is torch.relu:',
         '        if node.op == "call_function" and getattr(node.target, "__name__", "") == "relu" and (\n'
         "                node.target is not F.relu):"),)),
    Mutant("relu_to_clamp", "leaves out the upper bound when max_value is 0", hint="max=max_value", edits=(
        ('            node.kwargs = {"min": 0, "max": max_value}',
         '            node.kwargs = {"min": 0, "max": max_value or None}'),)),
    Mutant("relu_to_gelu", "takes every module whose class name contains 'relu' (ReLU6 and LeakyReLU left out), "
           "nn.RReLU and nn.PReLU too", hint="computes no ReLU", edits=(
        ("            return isinstance(gm.get_submodule(node.target), nn.ReLU)",
         "            name = type(gm.get_submodule(node.target)).__name__.lower()\n"
         '            return "relu" in name and "6" not in name and "leaky" not in name'),)),
    Mutant("relu_to_gelu", "matches functions by __name__, so a function of the model's own named relu becomes GELU",
           hint="computes no ReLU", edits=(
        ("            return any(node.target is f for f in relu_functions)",
         '            return getattr(node.target, "__name__", None) in ("relu", "relu_")'),)),
    Mutant("linear_to_matmul", "type(module) is nn.Linear, so a subclass of nn.Linear keeps its call",
           hint="isinstance(module, nn.Linear)", not_hints=("one per module",), edits=(
        ("        if not isinstance(linear, nn.Linear):",
         "        if type(linear) is not nn.Linear:"),)),
    Mutant("linear_to_matmul", "torch.einsum with the weight as it is: no matmul, no transpose", hint="torch.einsum",
           not_hints=("with W of shape",), edits=(
        ('            out = graph.call_function(torch.matmul, (x, graph.call_method("t", (weight,))))',
         '            out = graph.call_function(torch.einsum, ("...i,oi->...o", x, weight))'),)),
    Mutant("linear_to_matmul", "leaves the Linear nodes to eliminate_dead_code(), which deletes an in-place call "
           "whose result nobody reads", hint="eliminate_dead_code()", edits=(
        ("        node.replace_all_uses_with(out)\n"
         "        graph.erase_node(node)\n",
         "        node.replace_all_uses_with(out)\n"
         "    graph.eliminate_dead_code()\n"),)),
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

# --------------------- wrong and right answers written from the task text alone, by someone who had not read the checks

_WRONG, _RIGHT = from_task_text("ex03_replacing")
MUTANTS += _WRONG
ALTERNATIVES += _RIGHT
