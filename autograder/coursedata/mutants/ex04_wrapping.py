"""Mutants and alternatives of ex04_wrapping.

Never write a mutant that calls fx.wrap with a name its namespace does not define: torch.fx keeps every
registration for the life of the process and looks each name up at every later trace, so one such mutant
would make every symbolic_trace in the pytest process raise KeyError.
"""
from autograder.coursedata.mutants import Alternative, Mutant

_GUARD_FIX = '''
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            name = node.target.rsplit("_", 1)[0]
            if node.target != name and name in fixed:
                node.args = (fixed[name],)
    gm.recompile()
    return gm
'''

MUTANTS = [
    # ----------------------------------------------------------------------------------- trace_gated
    Mutant("trace_gated", "plain symbolic_trace: gate's data-dependent if raises", '''
def trace_gated(model):
    return fx.symbolic_trace(model)
''', hint="torch.fx.wrap"),
    Mutant("trace_gated", "fx.wrap called inside the function", '''
def trace_gated(model):
    fx.wrap("gate")
    return fx.symbolic_trace(model)
''', hint="NotImplementedError"),
    Mutant("trace_gated", "autowrap_modules (for modules such as math) instead of autowrap_functions", '''
def trace_gated(model):
    tracer = fx.Tracer(autowrap_modules=(gate,))
    return fx.GraphModule(model, tracer.trace(model))
''', hint="torch.fx.wrap"),
    Mutant("trace_gated", "a Tracer whose to_bool says True: the relu branch is frozen and gate traced through", '''
class Optimist(fx.Tracer):
    def to_bool(self, obj):
        return True

def trace_gated(model):
    return fx.GraphModule(model, Optimist().trace(model))
''', hint="traced through"),
    Mutant("trace_gated", "returns the Tracer's Graph", '''
def trace_gated(model):
    return fx.Tracer(autowrap_functions=(gate,)).trace(model)
''', hint="fx.GraphModule(model, graph)"),
    Mutant("trace_gated", "traces a new GatedNet instead of the model it is given", '''
fx.wrap("gate")

def trace_gated(model):
    return fx.symbolic_trace(GatedNet())
''', hint="not a new instance"),
    Mutant("trace_gated", "builds GatedNet's graph by hand", '''
def trace_gated(model):
    g = fx.Graph()
    x = g.placeholder("x")
    h = g.call_function(gate, (g.call_module("fc1", (x,)),))
    g.output(g.call_module("fc2", (h,)))
    return fx.GraphModule(model, g)
''', hint="its own node"),
    Mutant("trace_gated", "redefines gate without the branch (torch.where): traced through, no gate node", '''
def gate(x):
    return torch.where(x.sum() > 0, torch.relu(x), 0.5 * torch.tanh(x))

def trace_gated(model):
    return fx.symbolic_trace(model)
''', hint="traced through"),
    Mutant("trace_gated", "wraps the model class instead of the helper", '''
fx.wrap("GatedNet")

def trace_gated(model):
    return fx.symbolic_trace(model)
''', hint="torch.fx.wrap"),

    # ----------------------------------------------------------------------------- trace_with_leaves
    Mutant("trace_with_leaves", "ignores leaf_types: RowNorm's loop over rows cannot be traced", '''
def trace_with_leaves(model, leaf_types):
    return fx.symbolic_trace(model)
''', hint="cannot be iterated"),
    Mutant("trace_with_leaves", "drops the default rule, so nn.Linear is traced through", '''
def trace_with_leaves(model, leaf_types):
    leaves = tuple(leaf_types)

    class T(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return isinstance(m, leaves)

    tracer = T()
    return fx.GraphModule(model, tracer.trace(model))
''', hint="super().is_leaf_module"),
    Mutant("trace_with_leaves", "exact type match, so subclasses are traced through", '''
def trace_with_leaves(model, leaf_types):
    class T(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return type(m) in tuple(leaf_types) or super().is_leaf_module(m, qualname)

    tracer = T()
    return fx.GraphModule(model, tracer.trace(model))
''', hint="isinstance(m, tuple(leaf_types))"),
    Mutant("trace_with_leaves", "leaves chosen by name among the direct children only", '''
def trace_with_leaves(model, leaf_types):
    names = {name for name, m in model.named_children() if isinstance(m, tuple(leaf_types))}

    class T(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return qualname in names or super().is_leaf_module(m, qualname)

    tracer = T()
    return fx.GraphModule(model, tracer.trace(model))
''', hint="nested ones too"),
    Mutant("trace_with_leaves", "passes leaf_types to isinstance as it comes (a list fails)", '''
def trace_with_leaves(model, leaf_types):
    class T(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return isinstance(m, leaf_types) or super().is_leaf_module(m, qualname)

    tracer = T()
    return fx.GraphModule(model, tracer.trace(model))
''', hint="isinstance() arg 2"),
    Mutant("trace_with_leaves", "every module is a leaf", '''
def trace_with_leaves(model, leaf_types):
    class T(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return True

    tracer = T()
    return fx.GraphModule(model, tracer.trace(model))
''', hint="not an instance of leaf_types"),
    Mutant("trace_with_leaves", "returns the Tracer's Graph", '''
def trace_with_leaves(model, leaf_types):
    leaves = tuple(leaf_types)

    class T(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return isinstance(m, leaves) or super().is_leaf_module(m, qualname)

    return T().trace(model)
''', hint="fx.GraphModule(model, graph)"),

    # ----------------------------------------------------------------------------- trace_specialized
    Mutant("trace_specialized", "concrete_args alone: the guard placeholders keep their original defaults", '''
def trace_specialized(model, **flags):
    return fx.symbolic_trace(model, concrete_args=flags)
''', hint="guard"),
    Mutant("trace_specialized", "no concrete_args at all", '''
def trace_specialized(model, **flags):
    return fx.symbolic_trace(model)
''', hint="concrete_args"),
    Mutant("trace_specialized", "maps the flag values onto the parameters by position", '''
import copy
import inspect

def trace_specialized(model, **flags):
    params = list(inspect.signature(model.forward).parameters)
    fixed = dict(zip(params[1:], flags.values()))   # x first, then the flags
    gm = fx.symbolic_trace(model, concrete_args=fixed)
''' + _GUARD_FIX, hint="by name, not by position"),
    Mutant("trace_specialized", "fixes only the bool flags", '''
def trace_specialized(model, **flags):
    fixed = {k: v for k, v in flags.items() if isinstance(v, bool)}
    gm = fx.symbolic_trace(model, concrete_args=fixed)
''' + _GUARD_FIX, hint="cannot be interpreted as an integer"),
    Mutant("trace_specialized", "erases the guards, then every unused placeholder, tensor inputs included", '''
def trace_specialized(model, **flags):
    gm = fx.symbolic_trace(model, concrete_args=flags)
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and getattr(node.target, "__name__", "") in ("_assert", "_assert_is_none"):
            gm.graph.erase_node(node)
    gm.graph.eliminate_dead_code()
    for node in list(gm.graph.nodes):
        if node.op == "placeholder" and not node.users:
            gm.graph.erase_node(node)
    gm.recompile()
    return gm
''', hint="keep every tensor input"),
    Mutant("trace_specialized", "sets the defaults but forgets gm.recompile()", '''
def trace_specialized(model, **flags):
    gm = fx.symbolic_trace(model, concrete_args=flags)
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            name = node.target.rsplit("_", 1)[0]
            if node.target != name and name in flags:
                node.args = (flags[name],)
    return gm
''', hint="call gm.recompile() after changing gm.graph"),
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
