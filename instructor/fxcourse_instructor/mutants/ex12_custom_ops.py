"""Mutants and alternatives of ex12_custom_ops."""
from fxcourse_instructor.mutants import Alternative, Mutant, from_task_text

_DEF = '    @torch.library.custom_op(f"{namespace}::scaled_gelu", mutates_args=())'
_FAKE = "    @op.register_fake\n    def _(x, scale):\n        return torch.empty_like(x)\n"
_AUTOGRAD = "    op.register_autograd(backward, setup_context=setup_context)\n"
_GRAD = "        return grad * ctx.scale * (cdf + x * pdf), None"

_REGISTER_MUTANTS = [
    Mutant("register_scaled_gelu", "no fake kernel: compile and export cannot see through the op",
           hint="register_fake", edits=((_FAKE, ""),)),
    Mutant("register_scaled_gelu", "no register_autograd: no gradient for x", hint="register_autograd",
           edits=((_AUTOGRAD, ""),)),
    Mutant("register_scaled_gelu", "mutates_args={'x'}: the schema says x is written to", hint="mutates_args=()",
           edits=(("mutates_args=())", "mutates_args={\"x\"})"),)),
    Mutant("register_scaled_gelu", "scale annotated as int: the schema says SymInt scale", hint="annotate scale as float",
           edits=(("    def op(x: Tensor, scale: float) -> Tensor:", "    def op(x: Tensor, scale: int) -> Tensor:"),)),
    Mutant("register_scaled_gelu", "a namespace of its own, mylib, instead of the argument",
           hint="the argument `namespace`", edits=((_DEF, _DEF.replace("{namespace}", "mylib")),)),
    Mutant("register_scaled_gelu", "the tanh approximation of gelu", hint="approximate",
           edits=(("        return scale * F.gelu(x)", "        return scale * F.gelu(x, approximate=\"tanh\")"),)),
    Mutant("register_scaled_gelu", "the backward forgets scale", hint="multiply by scale",
           edits=((_GRAD, "        return grad * (cdf + x * pdf), None"),)),
    Mutant("register_scaled_gelu", "the backward forgets the derivative of gelu: grad * scale",
           hint="not scale alone", edits=((_GRAD, "        return grad * ctx.scale, None"),)),
    Mutant("register_scaled_gelu", "a fake kernel in float32 whatever x's dtype: torch.empty(x.shape)",
           hint="x's shape and dtype", edits=(("        return torch.empty_like(x)", "        return torch.empty(x.shape)"),)),
    Mutant("register_scaled_gelu", "returns nothing", hint="ended without a `return`",
           not_hints=("instead of printing",),
           edits=(("    return op\n", ""),)),
    Mutant("register_scaled_gelu", "the operator named gelu_scaled", hint="the operator is called scaled_gelu",
           edits=((_DEF, _DEF.replace("::scaled_gelu", "::gelu_scaled")),)),
    # wrong answers written from the task text alone, after the lesson
    Mutant("register_scaled_gelu", "writes the result into x to save memory: torch.mul(..., out=x)",
           hint="returns a new tensor", not_hints=("register_fake",),
           edits=(("        return scale * F.gelu(x)", "        return torch.mul(F.gelu(x), scale, out=x)"),)),
    Mutant("register_scaled_gelu", "the backward returns a gradient for scale too: grad * gelu(x)",
           hint="None for the float", not_hints=("register_autograd(backward",),
           edits=((_GRAD, "        return grad * ctx.scale * (cdf + x * pdf), (grad * F.gelu(x)).sum()"),)),
    # a wrong answer that once had full marks: no case gave the fake kernel an input that is not contiguous
    Mutant("register_scaled_gelu", "a contiguous fake result whatever x's layout: torch.empty(x.shape, dtype=x.dtype)",
           hint="its strides too", not_hints=("x's shape and dtype",),
           edits=(("        return torch.empty_like(x)",
                   "        return torch.empty(x.shape, dtype=x.dtype, device=x.device)"),)),
    # wrong answers that once had full marks, written from the task text by someone who had not read the checks:
    # every backward was taken after .sum() (the gradient flowing in all ones), of one call at a time, and float64
    # results were held to float32's tolerance; export never gave the fake kernel a symbolic size
    Mutant("register_scaled_gelu", "the backward ignores the gradient flowing in: scale * gelu'(x) alone",
           hint="the gradient flowing in", edits=((_GRAD, "        return ctx.scale * (cdf + x * pdf), None"),)),
    Mutant("register_scaled_gelu", "the backward reads scale from a global that the latest call set",
           hint="that call's scale",
           edits=(("        ctx.scale = scale\n", "        global _LAST_SCALE\n        _LAST_SCALE = scale\n"),
                  (_GRAD, "        return grad * _LAST_SCALE * (cdf + x * pdf), None"))),
    Mutant("register_scaled_gelu", "the kernel computes in float32 and casts back: float64 results lose digits",
           hint="own dtype", not_hints=("approximate", "gelu(scale * x)"),
           edits=(("        return scale * F.gelu(x)", "        return (scale * F.gelu(x.float())).to(x.dtype)"),)),
    Mutant("register_scaled_gelu", "the backward computes gelu'(x) in float32", hint="own dtype",
           edits=(("        (x,) = ctx.saved_tensors\n", "        (x,) = ctx.saved_tensors\n        x = x.float()\n"),)),
    Mutant("register_scaled_gelu", "a fake kernel with int() of x's sizes and strides: export pins the batch",
           hint="pins the batch",
           edits=(("        return torch.empty_like(x)",
                   "        return torch.empty_strided([int(s) for s in x.shape], [int(s) for s in x.stride()], "
                   "dtype=x.dtype, device=x.device)"),)),
]

_COUNT_MUTANTS = [
    Mutant("count_op_nodes", "node.target == op only: a packet matches no node", hint="overload packet",
           edits=(('        if node.target == op or getattr(node.target, "overloadpacket", None) is op:',
                   "        if node.target == op:"),)),
    Mutant("count_op_nodes", "compares the packets always: an overload counts its siblings", hint="exact overload",
           edits=(('        if node.target == op or getattr(node.target, "overloadpacket", None) is op:',
                   '        if getattr(node.target, "overloadpacket", None) is getattr(op, "overloadpacket", op):'),)),
    Mutant("count_op_nodes", "matches the operator's name within str(node.target)", hint="not their names",
           edits=(('        if node.target == op or getattr(node.target, "overloadpacket", None) is op:',
                   "        if str(op).split('.')[1] in str(node.target):"),)),
    Mutant("count_op_nodes", "reads node.target.overloadpacket on every node: getitem has none",
           hint="operator.getitem",
           edits=(('        if node.target == op or getattr(node.target, "overloadpacket", None) is op:',
                   "        if node.target == op or node.target.overloadpacket is op:"),)),
    Mutant("count_op_nodes", "counts by node name", hint="not node names",
           edits=(('        if node.target == op or getattr(node.target, "overloadpacket", None) is op:',
                   "        if node.name.startswith(str(op).split('.')[1]):"),)),
    Mutant("count_op_nodes", "compares str(node.target) with str(op)", hint="overload packet",
           edits=(('        if node.target == op or getattr(node.target, "overloadpacket", None) is op:',
                   "        if str(node.target) == str(op):"),)),
    Mutant("count_op_nodes", "returns whether the op is called, not how often", hint="an int",
           edits=(("    return count", "    return count > 0"),)),
    # wrong answers written from the task text alone, after the lesson
    Mutant("count_op_nodes", "counts the distinct overloads called, not the nodes", hint="every call_function node",
           not_hints=("overload packet",),
           edits=(("    count = 0\n", "    count = 0\n    seen = set()\n"),
                  ("            count += 1", "            count += node.target not in seen\n"
                                           "            seen.add(node.target)"))),
    # a wrong answer that once had full marks: no case called the op inside a branch of torch.cond
    Mutant("count_op_nodes", "counts the nodes of every subgraph too (the branches of torch.cond)",
           hint="ep.graph only",
           edits=(("    for node in ep.graph.nodes:",
                   "    for node in [n for m in ep.graph_module.modules() if isinstance(m, fx.GraphModule)\n"
                   "                 for n in m.graph.nodes]:"),)),
    # wrong answers that once had full marks (written from the task text alone): no case counted an ATen operator
    # that run_decompositions takes apart, or a packet without a default overload
    Mutant("count_op_nodes", "counts on ep.run_decompositions(): aten.linear is gone from it", hint="as it is given",
           edits=(("    for node in ep.graph.nodes:", "    for node in ep.run_decompositions().graph.nodes:"),)),
    Mutant("count_op_nodes", "takes op for a packet only when it has a default overload", hint="overload packet",
           edits=(('        if node.target == op or getattr(node.target, "overloadpacket", None) is op:',
                   '        if (getattr(node.target, "overloadpacket", None) is op) if hasattr(op, "default") '
                   'else node.target == op:'),)),
]

_REPLACE_MUTANTS = [
    Mutant("replace_with_op", "no recompile: gm.code still calls fn", hint="recompile",
           edits=(("    gm.recompile()\n", ""),)),
    Mutant("replace_with_op", "keeps meta['is_wrapped']: later traces in the process fail", hint="is_wrapped",
           edits=(('            node.meta.pop("is_wrapped", None)   # op is no wrapped Python function (see lesson 12)\n',
                   ""),)),
    Mutant("replace_with_op", "matches by __name__: another scaled_gelu is replaced too", hint="the same name",
           edits=(("node.target is fn", "getattr(node.target, '__name__', None) == fn.__name__"),)),
    Mutant("replace_with_op", "a new node with the args only: scale= given as a keyword is lost",
           hint="kwargs", edits=(("            node.target = op\n",
                                  "            with gm.graph.inserting_after(node):\n"
                                  "                new = gm.graph.call_function(op, node.args)\n"
                                  "            node.replace_all_uses_with(new)\n"
                                  "            gm.graph.erase_node(node)\n"),
                                 ("    for node in gm.graph.nodes:", "    for node in list(gm.graph.nodes):"))),
    Mutant("replace_with_op", "stops at the first call of fn", hint="do not stop at the first",
           edits=(('            node.meta.pop("is_wrapped", None)   # op is no wrapped Python function (see lesson 12)\n',
                   '            node.meta.pop("is_wrapped", None)\n            break\n'),)),
    Mutant("replace_with_op", "always the default overload: op.default", hint="op itself",
           edits=(("            node.target = op\n",
                   "            node.target = getattr(op, 'default', op)\n"),)),
    Mutant("replace_with_op", "calls op through a lambda that forwards the arguments", hint="lambda",
           edits=(("            node.target = op\n", "            node.target = lambda *args, **kwargs: op(*args, **kwargs)\n"),)),
    # wrong answers written from the task text alone, after the lesson
    Mutant("replace_with_op", "replaces every call whose target mentions gelu: F.gelu too", hint="only nodes whose target is fn",
           not_hints=("recompile",),
           edits=(("node.target is fn", "'gelu' in getattr(node.target, '__name__', '')"),)),
    Mutant("replace_with_op", "drops the scale argument: op(x) only", hint="args and kwargs",
           edits=(("            node.target = op\n", "            node.target = op\n"
                                                     "            node.args, node.kwargs = node.args[:1] or "
                                                     "(node.kwargs['x'],), {}\n"),)),
    # a wrong answer that once had full marks (written from the task text alone): the other function's mark
    Mutant("replace_with_op", "drops meta['is_wrapped'] from every node: the other scaled_gelu loses it too",
           hint="only nodes whose target is fn",
           edits=(("    for node in gm.graph.nodes:\n", '    for node in gm.graph.nodes:\n        node.meta.pop("is_wrapped", None)\n'),)),
]

MUTANTS = _REGISTER_MUTANTS + _COUNT_MUTANTS + _REPLACE_MUTANTS

ALTERNATIVES = [
    Alternative("register_scaled_gelu", "torch.library.Library with define and impl, the packet returned", '''
_LIBS = []

def register_scaled_gelu(namespace):
    lib = torch.library.Library(namespace, "FRAGMENT")
    _LIBS.append(lib)
    lib.define("scaled_gelu(Tensor x, float scale) -> Tensor")
    lib.impl("scaled_gelu", lambda x, scale: scale * F.gelu(x), "CompositeExplicitAutograd")
    name = f"{namespace}::scaled_gelu"
    torch.library.register_fake(name, lambda x, scale: torch.empty_like(x), lib=lib)   # x's layout too

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.scale = inputs[1]

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return torch.ops.aten.gelu_backward(grad * ctx.scale, x), None

    torch.library.register_autograd(name, backward, setup_context=setup_context, lib=lib)
    return getattr(getattr(torch.ops, namespace), "scaled_gelu")
'''),
    Alternative("register_scaled_gelu", "custom_op called as a function, the backward by torch.func.vjp", '''
def register_scaled_gelu(namespace):
    def scaled(x: torch.Tensor, scale: float) -> torch.Tensor:
        return F.gelu(x) * scale

    op = torch.library.custom_op(f"{namespace}::scaled_gelu", scaled, mutates_args=())
    op.register_fake(lambda x, scale: torch.empty_like(x))

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.scale = inputs[1]

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        _, vjp = torch.func.vjp(F.gelu, x)
        return vjp(grad * ctx.scale)[0], None

    op.register_autograd(backward, setup_context=setup_context)
    return op._opoverload
'''),
    Alternative("count_op_nodes", "find_nodes per overload of a packet", '''
def count_op_nodes(ep, op):
    if isinstance(op, torch._ops.OpOverloadPacket):
        targets = [getattr(op, name) for name in op.overloads()]
    else:
        targets = [op]
    return sum(len(ep.graph.find_nodes(op="call_function", target=t)) for t in targets)
'''),
    Alternative("count_op_nodes", "a generator over ep.graph_module.graph", '''
def count_op_nodes(ep, op):
    def hits(target):
        return target is op or getattr(target, "overloadpacket", None) is op
    return sum(1 for n in ep.graph_module.graph.nodes if n.op == "call_function" and hits(n.target))
'''),
    Alternative("replace_with_op", "a new node per call, inserted before the old one is erased", '''
def replace_with_op(gm, fn, op):
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is fn:
            with graph.inserting_before(node):
                new = graph.call_function(op, node.args, node.kwargs)
            node.replace_all_uses_with(new)
            graph.erase_node(node)
    graph.lint()
    gm.recompile()
    return gm
'''),
    Alternative("replace_with_op", "find_nodes, and a new GraphModule on the same graph", '''
def replace_with_op(gm, fn, op):
    for node in gm.graph.find_nodes(op="call_function", target=fn):
        node.target = op
        del node.meta["is_wrapped"]
    gm.graph.lint()
    return fx.GraphModule(gm, gm.graph)
'''),
]

# Written from the task text alone, by someone who had not read the checks (mutants/task_text/).
_TASK_TEXT_MUTANTS, _TASK_TEXT_ALTERNATIVES = from_task_text("ex12_custom_ops")
MUTANTS += _TASK_TEXT_MUTANTS
ALTERNATIVES += _TASK_TEXT_ALTERNATIVES

