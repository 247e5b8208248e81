"""Mutants and alternatives of ex04_wrapping.

Never write a mutant that calls fx.wrap with a name its namespace does not define: torch.fx keeps every
registration for the life of the process and looks each name up at every later trace, so one such mutant
would make every symbolic_trace in the pytest process raise KeyError.
"""
from fxcourse_instructor.mutants import Alternative, Mutant, from_task_text

# Lines of the solution's answer cells that several mutants below replace (each occurs there once).
_TRACE_WITH_LEAVES_LINES = ("    class LeafTracer(fx.Tracer):\n"
                            "        def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:\n"
                            "            return isinstance(m, leaves) or super().is_leaf_module(m, module_qualified_name)\n"
                            "\n")

# the solution's tracing in trace_gated, which most of its mutants replace
_GATED_TRACE = ("    tracer = fx.Tracer(autowrap_functions=(gate,))\n"
                "    graph = tracer.trace(model)\n"
                "    return fx.GraphModule(tracer.root, graph, type(model).__name__)")

MUTANTS = [
    # ----------------------------------------------------------------------------------- trace_gated
    Mutant("trace_gated", "plain symbolic_trace: gate's data-dependent if raises", hint="torch.fx.wrap", edits=(
        (_GATED_TRACE,
         "    return fx.symbolic_trace(model)"),)),
    Mutant("trace_gated", "fx.wrap called inside the function", hint="NotImplementedError", edits=(
        (_GATED_TRACE,
         '    fx.wrap("gate")\n'
         "    return fx.symbolic_trace(model)"),)),
    Mutant("trace_gated", "autowrap_modules (for modules such as math) instead of autowrap_functions",
           hint="torch.fx.wrap", edits=(
        ("    tracer = fx.Tracer(autowrap_functions=(gate,))",
         "    tracer = fx.Tracer(autowrap_modules=(gate,))"),)),
    Mutant("trace_gated", "a Tracer whose to_bool says True: the relu branch is frozen and gate traced through",
           hint="traced through", edits=(
        ("def trace_gated(model: nn.Module) -> fx.GraphModule:",
         "class Optimist(fx.Tracer):\n"
         "    def to_bool(self, obj):\n"
         "        return True\n"
         "\n"
         "def trace_gated(model: nn.Module) -> fx.GraphModule:"),
        (_GATED_TRACE,
         "    return fx.GraphModule(model, Optimist().trace(model))"),)),
    Mutant("trace_gated", "returns the Tracer's Graph", hint="fx.GraphModule(model, graph)", edits=(
        ("    tracer = fx.Tracer(autowrap_functions=(gate,))",
         "    return fx.Tracer(autowrap_functions=(gate,)).trace(model)"),
        ("    graph = tracer.trace(model)\n"
         "    return fx.GraphModule(tracer.root, graph, type(model).__name__)\n",
         ""),)),
    Mutant("trace_gated", "traces a new GatedNet instead of the model it is given", hint="not a new instance",
           not_hints=('torch.fx.wrap',), edits=(
        ("def trace_gated(model: nn.Module) -> fx.GraphModule:",
         'fx.wrap("gate")\n'
         "\n"
         "def trace_gated(model: nn.Module) -> fx.GraphModule:"),
        (_GATED_TRACE,
         "    return fx.symbolic_trace(GatedNet())"),)),
    Mutant("trace_gated", "builds GatedNet's graph by hand", hint="its own node", edits=(
        (_GATED_TRACE,
         "    g = fx.Graph()\n"
         '    x = g.placeholder("x")\n'
         '    h = g.call_function(gate, (g.call_module("fc1", (x,)),))\n'
         '    g.output(g.call_module("fc2", (h,)))\n'
         "    return fx.GraphModule(model, g)"),)),
    Mutant("trace_gated", "redefines gate without the branch (torch.where): traced through, no gate node",
           hint="traced through", edits=(
        ("def trace_gated(model: nn.Module) -> fx.GraphModule:",
         "def gate(x):\n"
         "    return torch.where(x.sum() > 0, torch.relu(x), 0.5 * torch.tanh(x))\n"
         "\n"
         "def trace_gated(model: nn.Module) -> fx.GraphModule:"),
        (_GATED_TRACE,
         "    return fx.symbolic_trace(model)"),)),
    Mutant("trace_gated", "wraps the model class instead of the helper", hint="torch.fx.wrap", edits=(
        ("def trace_gated(model: nn.Module) -> fx.GraphModule:",
         'fx.wrap("GatedNet")\n'
         "\n"
         "def trace_gated(model: nn.Module) -> fx.GraphModule:"),
        (_GATED_TRACE,
         "    return fx.symbolic_trace(model)"),)),

    # ----------------------------------------------------------------------------- trace_with_leaves
    Mutant("trace_with_leaves", "ignores leaf_types: RowNorm's loop over rows cannot be traced",
           hint="cannot be iterated", edits=(
        ("    leaves = tuple(leaf_types)\n"
         "\n"
         "    class LeafTracer(fx.Tracer):\n"
         "        def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:\n"
         "            return isinstance(m, leaves) or super().is_leaf_module(m, module_qualified_name)\n"
         "\n"
         "    tracer = LeafTracer()\n"
         "    graph = tracer.trace(model)\n"
         "    return fx.GraphModule(tracer.root, graph, type(model).__name__)",
         "    return fx.symbolic_trace(model)"),)),
    Mutant("trace_with_leaves", "drops the default rule, so nn.Linear is traced through",
           hint="super().is_leaf_module", edits=(
        ("        def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:\n"
         "            return isinstance(m, leaves) or super().is_leaf_module(m, module_qualified_name)",
         "        def is_leaf_module(self, m, qualname):\n"
         "            return isinstance(m, leaves)"),)),
    Mutant("trace_with_leaves", "exact type match, so subclasses are traced through",
           hint="isinstance(m, tuple(leaf_types))", not_hints=('nested ones too',), edits=(
        ("    leaves = tuple(leaf_types)",
         "    class T(fx.Tracer):\n"
         "        def is_leaf_module(self, m, qualname):\n"
         "            return type(m) in tuple(leaf_types) or super().is_leaf_module(m, qualname)"),
        (_TRACE_WITH_LEAVES_LINES,
         ""),
        ("    tracer = LeafTracer()",
         "    tracer = T()"),
        ("    return fx.GraphModule(tracer.root, graph, type(model).__name__)",
         "    return fx.GraphModule(model, tracer.trace(model))"),)),
    Mutant("trace_with_leaves", "leaves chosen by name among the direct children only", hint="nested ones too",
           not_hints=('counts subclasses too',), edits=(
        ("    leaves = tuple(leaf_types)",
         "    names = {name for name, m in model.named_children() if isinstance(m, tuple(leaf_types))}"),
        ("    class LeafTracer(fx.Tracer):",
         "    class T(fx.Tracer):"),
        ("        def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:",
         "        def is_leaf_module(self, m, qualname):"),
        ("            return isinstance(m, leaves) or super().is_leaf_module(m, module_qualified_name)",
         "            return qualname in names or super().is_leaf_module(m, qualname)"),
        ("    tracer = LeafTracer()",
         "    tracer = T()"),
        ("    return fx.GraphModule(tracer.root, graph, type(model).__name__)",
         "    return fx.GraphModule(model, tracer.trace(model))"),)),
    Mutant("trace_with_leaves", "passes leaf_types to isinstance as it comes (a list fails)",
           hint="isinstance() arg 2", edits=(
        ("    leaves = tuple(leaf_types)",
         "    class T(fx.Tracer):\n"
         "        def is_leaf_module(self, m, qualname):\n"
         "            return isinstance(m, leaf_types) or super().is_leaf_module(m, qualname)"),
        (_TRACE_WITH_LEAVES_LINES,
         ""),
        ("    tracer = LeafTracer()",
         "    tracer = T()"),
        ("    return fx.GraphModule(tracer.root, graph, type(model).__name__)",
         "    return fx.GraphModule(model, tracer.trace(model))"),)),
    Mutant("trace_with_leaves", "every module is a leaf", hint="not an instance of leaf_types", edits=(
        ("    leaves = tuple(leaf_types)",
         "    class T(fx.Tracer):\n"
         "        def is_leaf_module(self, m, qualname):\n"
         "            return True"),
        (_TRACE_WITH_LEAVES_LINES,
         ""),
        ("    tracer = LeafTracer()",
         "    tracer = T()"),
        ("    return fx.GraphModule(tracer.root, graph, type(model).__name__)",
         "    return fx.GraphModule(model, tracer.trace(model))"),)),
    Mutant("trace_with_leaves", "returns the Tracer's Graph", hint="fx.GraphModule(model, graph)", edits=(
        ("    class LeafTracer(fx.Tracer):",
         "    class T(fx.Tracer):"),
        ("    tracer = LeafTracer()\n"
         "    graph = tracer.trace(model)\n"
         "    return fx.GraphModule(tracer.root, graph, type(model).__name__)",
         "    return T().trace(model)"),)),

    # ----------------------------------------------------------------------------- trace_specialized
    Mutant("trace_specialized", "concrete_args alone: the guard placeholders keep their original defaults",
           hint="guard", edits=(
        ("    gm = fx.symbolic_trace(model, concrete_args=flags)",
         "    return fx.symbolic_trace(model, concrete_args=flags)"),
        ('    # concrete_args keeps each flag as a guard: a placeholder "<flag>_1" whose default is the flag\'s\n'
         "    # ORIGINAL default, checked by torch._assert. Make the fixed value its default, so gm(x) passes.\n"
         "    for node in gm.graph.nodes:\n"
         '        if node.op == "placeholder":\n'
         '            name = node.target.rsplit("_", 1)[0]\n'
         "            if node.target != name and name in flags:\n"
         "                node.args = (flags[name],)\n"
         "    gm.graph.lint()\n"
         "    gm.recompile()\n"
         "    return gm\n",
         ""),)),
    Mutant("trace_specialized", "no concrete_args at all", hint="concrete_args", edits=(
        ("    gm = fx.symbolic_trace(model, concrete_args=flags)\n"
         '    # concrete_args keeps each flag as a guard: a placeholder "<flag>_1" whose default is the flag\'s\n'
         "    # ORIGINAL default, checked by torch._assert. Make the fixed value its default, so gm(x) passes.\n"
         "    for node in gm.graph.nodes:\n"
         '        if node.op == "placeholder":\n'
         '            name = node.target.rsplit("_", 1)[0]\n'
         "            if node.target != name and name in flags:\n"
         "                node.args = (flags[name],)\n"
         "    gm.graph.lint()\n"
         "    gm.recompile()\n"
         "    return gm",
         "    return fx.symbolic_trace(model)"),)),
    Mutant("trace_specialized", "maps the flag values onto the parameters by position",
           hint="by name, not by position", not_hints=('default flag values',), edits=(
        ("def trace_specialized(model: nn.Module, **flags) -> fx.GraphModule:",
         "import copy\n"
         "import inspect\n"
         "\n"
         "def trace_specialized(model: nn.Module, **flags) -> fx.GraphModule:"),
        ('    """Trace `model` with its Python-valued arguments fixed to `flags`; call the result with tensors only."""',
         '    """Trace `model` with its Python-valued arguments fixed to `flags`; call the result with tensors only."""\n'
         "    params = list(inspect.signature(model.forward).parameters)\n"
         "    fixed = dict(zip(params[1:], flags.values()))   # x first, then the flags"),
        ("    gm = fx.symbolic_trace(model, concrete_args=flags)",
         "    gm = fx.symbolic_trace(model, concrete_args=fixed)"),
        ("                node.args = (flags[name],)",
         "                node.args = (fixed[name],)"),)),
    Mutant("trace_specialized", "fixes only the bool flags", hint="cannot be interpreted as an integer", edits=(
        ('    """Trace `model` with its Python-valued arguments fixed to `flags`; call the result with tensors only."""',
         '    """Trace `model` with its Python-valued arguments fixed to `flags`; call the result with tensors only."""\n'
         "    fixed = {k: v for k, v in flags.items() if isinstance(v, bool)}"),
        ("    gm = fx.symbolic_trace(model, concrete_args=flags)",
         "    gm = fx.symbolic_trace(model, concrete_args=fixed)"),)),
    Mutant("trace_specialized", "erases the guards, then every unused placeholder, tensor inputs included",
           hint="keep every tensor input", edits=(
        ("    for node in gm.graph.nodes:",
         "    for node in gm.graph.nodes:\n"
         '        if node.op == "call_function" and getattr(node.target, "__name__", "") in ("_assert", "_assert_is_none"):\n'
         "            gm.graph.erase_node(node)\n"
         "    gm.graph.eliminate_dead_code()\n"
         "    for node in list(gm.graph.nodes):"),
        ('        if node.op == "placeholder":',
         '        if node.op == "placeholder" and not node.users:'),
        ('            name = node.target.rsplit("_", 1)[0]\n'
         "            if node.target != name and name in flags:\n"
         "                node.args = (flags[name],)\n"
         "    gm.graph.lint()",
         "            gm.graph.erase_node(node)"),)),
    Mutant("trace_specialized", "sets the defaults but forgets gm.recompile()",
           hint="call gm.recompile() after changing gm.graph", edits=(
        ("    gm.graph.lint()\n"
         "    gm.recompile()\n",
         ""),)),
]

# ------------------------------------------ near misses: right in what a hint says, wrong in another way

MUTANTS += [
    Mutant("trace_gated", "autowraps gate, but its Tracer keeps every module whole, so a gate inside one is hidden",
           hint="default is_leaf_module", not_hints=("make gate a leaf function", "torch.fx.wrap"), edits=(
        ("    tracer = fx.Tracer(autowrap_functions=(gate,))",
         "    class WholeModules(fx.Tracer):\n"
         "        def is_leaf_module(self, m, qualname):\n"
         "            return True\n"
         "\n"
         "    tracer = WholeModules(autowrap_functions=(gate,))"),)),
    Mutant("trace_with_leaves", "asks about every module, nested ones too, but compares type names exactly",
           hint="counts subclasses too", not_hints=("nested ones too", "dotted qualname"), edits=(
        ("            return isinstance(m, leaves) or super().is_leaf_module(m, module_qualified_name)",
         "            return type(m).__name__ in {t.__name__ for t in leaves} or super().is_leaf_module(\n"
         "                m, module_qualified_name)"),)),
    Mutant("trace_with_leaves", "isinstance, which counts subclasses, but only for top-level modules",
           hint="nested ones too", not_hints=("counts subclasses too",), edits=(
        ("            return isinstance(m, leaves) or super().is_leaf_module(m, module_qualified_name)",
         '            return (isinstance(m, leaves) and "." not in module_qualified_name) or super().is_leaf_module(\n'
         "                m, module_qualified_name)"),)),
    Mutant("trace_specialized", "flags by name, but merged under the defaults, so the defaults win",
           hint="default flag values", not_hints=("not by position", "guard for each flag"), edits=(
        ("    gm = fx.symbolic_trace(model, concrete_args=flags)",
         "    import inspect\n"
         "    defaults = {k: p.default for k, p in inspect.signature(model.forward).parameters.items()\n"
         "                if p.default is not inspect.Parameter.empty}\n"
         "    gm = fx.symbolic_trace(model, concrete_args={**flags, **defaults})"),)),
]

ALTERNATIVES = [
    Alternative("trace_gated", "fx.wrap('gate') at the top level of the answer cell, then symbolic_trace", '''
fx.wrap("gate")

def trace_gated(model):
    return fx.symbolic_trace(model)
'''),
    Alternative("trace_gated", "fx.wrap given the function object, then a plain Tracer", '''
fx.wrap(gate)

def trace_gated(model):
    tracer = fx.Tracer()
    graph = tracer.trace(model)
    return fx.GraphModule(model, graph)
'''),
    Alternative("trace_gated", "a Tracer subclass that passes autowrap_functions to its base", '''
class GateTracer(fx.Tracer):
    def __init__(self):
        super().__init__(autowrap_functions=(gate,))

def trace_gated(model):
    return fx.GraphModule(model, GateTracer().trace(model))
'''),
    Alternative("trace_with_leaves", "a Tracer class at the top level, holding the leaf types", '''
class LeafTypesTracer(fx.Tracer):
    def __init__(self, leaf_types):
        super().__init__()
        self.leaf_types = tuple(leaf_types)

    def is_leaf_module(self, m, module_qualified_name):
        if isinstance(m, self.leaf_types):
            return True
        return super().is_leaf_module(m, module_qualified_name)


def trace_with_leaves(model, leaf_types):
    return fx.GraphModule(model, LeafTypesTracer(leaf_types).trace(model))
'''),
    Alternative("trace_with_leaves", "patches is_leaf_module on a Tracer instance", '''
def trace_with_leaves(model, leaf_types):
    tracer = fx.Tracer()
    default = tracer.is_leaf_module
    tracer.is_leaf_module = lambda m, qn: any(isinstance(m, t) for t in leaf_types) or default(m, qn)
    graph = tracer.trace(model)
    return fx.GraphModule(tracer.root, graph)
'''),
    Alternative("trace_specialized", "erases the guard nodes and the flag placeholders", '''
def trace_specialized(model, **flags):
    gm = fx.symbolic_trace(model, concrete_args=flags)
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "placeholder" and node.target.rsplit("_", 1)[0] in flags:
            for check in list(node.users):        # the guard: (flag_1 == value) -> torch._assert, or _assert_is_none
                for assertion in list(check.users):
                    graph.erase_node(assertion)
                graph.erase_node(check)
            graph.erase_node(node)
    graph.lint()
    gm.recompile()
    return gm
'''),
    Alternative("trace_specialized", "a Tracer with concrete_args; the guards renamed back to the flag names", '''
def trace_specialized(model, **flags):
    tracer = fx.Tracer()
    graph = tracer.trace(model, concrete_args=flags)
    for node in graph.nodes:
        if node.op == "placeholder" and node.target.endswith("_1") and node.target[:-2] in flags:
            node.target = node.target[:-2]        # gm(x) and gm(x, **flags) both work now
            node.args = (flags[node.target],)
    return fx.GraphModule(tracer.root, graph)
'''),
]


# ------------------------------------------- right answers written with another torch.fx mechanism

ALTERNATIVES += [
    Alternative("trace_with_leaves", "a Tracer whose call_module hook records leaf calls (not is_leaf_module)", '''
def trace_with_leaves(model, leaf_types):
    leaves = tuple(leaf_types)

    class RecordingTracer(fx.Tracer):
        def call_module(self, m, forward, args, kwargs):
            if isinstance(m, leaves):
                return self.create_proxy("call_module", self.path_of_module(m), args, kwargs)
            return super().call_module(m, forward, args, kwargs)

    tracer = RecordingTracer()
    graph = tracer.trace(model)
    return fx.GraphModule(tracer.root, graph, type(model).__name__)
'''),
    Alternative("trace_specialized", "traces a wrapper module whose forward fixes the flags, no concrete_args", '''
import copy
import inspect


def trace_specialized(model, **flags):
    tensors = [p.name for p in inspect.signature(model.forward).parameters.values()
               if p.name not in flags and p.default is p.empty]
    scope = {"flags": flags, "original": type(model).forward}
    exec(f"def forward(self, {', '.join(tensors)}):\\n"
         f"    return original(self, {', '.join(tensors)}, **flags)\\n", scope)
    fixed = copy.copy(model)                    # the same submodules, under the same names
    fixed.__class__ = type("Fixed" + type(model).__name__, (type(model),), {"forward": scope["forward"]})
    return fx.symbolic_trace(fixed)
'''),
]

# ------------------------------ wrong answers that only models with a mode, a namesake class or an in-place call show

MUTANTS += [
    Mutant("trace_gated", "traces a copy switched to eval mode: the caller's model is untouched, but its forward "
           "reads self.training", hint="mode it is in", edits=(
        (_GATED_TRACE,
         "    import copy\n"
         "    m = copy.deepcopy(model).eval()\n"
         "    tracer = fx.Tracer(autowrap_functions=(gate,))\n"
         "    graph = tracer.trace(m)\n"
         "    return fx.GraphModule(m, graph)"),)),
    Mutant("trace_gated", "returns the GraphModule switched to training mode: it shares the model's submodules, so "
           "their mode changes too", hint="leave its mode as it was", edits=(
        ("    return fx.GraphModule(tracer.root, graph, type(model).__name__)",
         "    gm = fx.GraphModule(tracer.root, graph, type(model).__name__)\n"
         "    gm.train(True)\n"
         "    return gm"),)),
    Mutant("trace_with_leaves", "compares class names along the MRO, so another class named Block is kept whole",
           hint="compare classes, not their names", edits=(
        ("            return isinstance(m, leaves) or super().is_leaf_module(m, module_qualified_name)",
         "            names = {t.__name__ for t in leaves}\n"
         "            return any(c.__name__ in names for c in type(m).__mro__) or super().is_leaf_module(\n"
         "                m, module_qualified_name)"),)),
    Mutant("trace_with_leaves", "also keeps whole every module without children or parameters",
           hint="not an instance of leaf_types", edits=(
        ("            return isinstance(m, leaves) or super().is_leaf_module(m, module_qualified_name)",
         "            bare = not list(m.children()) and not list(m.parameters(recurse=False))\n"
         "            return isinstance(m, leaves) or bare or super().is_leaf_module(m, module_qualified_name)"),)),
    Mutant("trace_with_leaves", "returns the GraphModule switched to training mode: it shares the model's "
           "submodules, so their mode changes too", hint="leave its mode as it was", edits=(
        ("    return fx.GraphModule(tracer.root, graph, type(model).__name__)",
         "    return fx.GraphModule(tracer.root, graph, type(model).__name__).train()"),)),
    Mutant("trace_specialized", "returns the GraphModule switched to training mode: it shares the model's "
           "submodules, so their mode changes too", hint="leave its mode as it was", edits=(
        ("    gm.recompile()\n"
         "    return gm",
         "    gm.recompile()\n"
         "    return gm.train()"),)),
    Mutant("trace_specialized", "erases the guards, then every call_function node without users: an in-place "
           "torch.relu_ goes too", hint="keep every call the trace recorded", edits=(
        ("    for node in gm.graph.nodes:\n"
         '        if node.op == "placeholder":',
         "    for node in reversed(list(gm.graph.nodes)):\n"
         '        if node.op == "call_function" and node.target is torch._assert:\n'
         "            gm.graph.erase_node(node)\n"
         "    for node in reversed(list(gm.graph.nodes)):\n"
         '        if node.op == "call_function" and not node.users:\n'
         "            gm.graph.erase_node(node)\n"
         "    for node in gm.graph.nodes:\n"
         '        if node.op == "placeholder":'),)),
    Mutant("trace_specialized", "erases the guards, then eliminate_dead_code, which also deletes an in-place call "
           "nobody reads", hint="eliminate_dead_code", source='''
def trace_specialized(model, **flags):
    gm = fx.symbolic_trace(model, concrete_args=flags)
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_function" and getattr(node.target, "__name__", "") in ("_assert", "_assert_is_none"):
            graph.erase_node(node)
    graph.eliminate_dead_code()
    for node in list(graph.nodes):
        if node.op == "placeholder" and not node.users and node.target.rsplit("_", 1)[0] in flags:
            graph.erase_node(node)
    graph.lint()
    gm.recompile()
    return gm
'''),
]

# --------------------- wrong and right answers written from the task text alone, by someone who had not read the checks

_WRONG, _RIGHT = from_task_text("ex04_wrapping")
MUTANTS += _WRONG
ALTERNATIVES += _RIGHT
