"""Clauses of ex03_replacing: swap_function, relu_to_clamp, relu_to_gelu, linear_to_matmul."""
from fxcourse_instructor.clauses import Clause

CLAUSES = [
    Clause("swap_function", "each swapped node keeps its args and kwargs",
           ("torch.sum(h, dim=1, keepdim=True) -> torch.mean",), mutant="drops kwargs",
           hint="has other args or kwargs than before"),
    Clause("swap_function", "targets compared by identity: another function of the same name stays",
           ("SwapNet, torch.relu -> torch.tanh",), mutant="matches by __name__, so F.relu is swapped along with torch.relu"),
    Clause("swap_function", "every matching node, not the first", ("SwapNet, torch.relu -> torch.tanh",),
           mutant="stops after the first match"),
    Clause("swap_function", "old and new may be passed by keyword", ("SwapNet, torch.sigmoid -> torch.tanh given as keywords",),
           source="def swap_function(gm, *fns):\n    old, new = fns\n    for n in gm.graph.nodes:\n"
                  "        if n.op == 'call_function' and n.target is old:\n            n.target = new\n"
                  "    gm.recompile()\n    return gm\n"),
    Clause("swap_function", "call_method nodes of the same name stay", ("SwapNet, torch.sigmoid -> torch.tanh",),
           source="def swap_function(gm, old, new):\n    for n in gm.graph.nodes:\n"
                  "        if n.op == 'call_function' and n.target is old:\n            n.target = new\n"
                  "        elif n.op == 'call_method' and n.target == old.__name__:\n"
                  "            n.op, n.target = 'call_function', new\n    gm.recompile()\n    return gm\n"),
    Clause("swap_function", "gm.code is regenerated", ("TinyNet, torch.relu -> torch.sigmoid",
                                                       "SwapNet, torch.relu -> torch.tanh"),
           mutant="forgets gm.recompile()"),
    Clause("swap_function", "returns the GraphModule", ("TinyNet, torch.relu -> torch.sigmoid",
                                                        "SwapNet, torch.relu -> torch.tanh"),
           mutant="changes the graph in place but returns nothing"),
    Clause("relu_to_clamp", "only torch.relu: F.relu stays", ("two torch.relu calls and an F.relu",),
           mutant="converts F.relu too"),
    Clause("relu_to_clamp", "ReLU-like ops (relu6, leaky_relu) stay", ("ReluLikeNet",),
           patch=("node.target is torch.relu", "'relu' in getattr(node.target, '__name__', '') "
                  "and node.target is not F.relu")),
    Clause("relu_to_clamp", "torch.relu(input=x) by keyword is converted too", ("KeywordReluNet",),
           patch=('x = node.args[0] if node.args else node.kwargs["input"]', "x = node.args[0]")),
    Clause("relu_to_clamp", "min=0 as well as max", ("TinyNet, max_value=1.0", "two torch.relu calls and an F.relu"),
           mutant="only an upper bound"),
    Clause("relu_to_clamp", "clamp visible in gm.code, not a lambda", ("TinyNet, max_value=1.0",
                                                                       "two torch.relu calls and an F.relu"),
           mutant="the popular lambda target (wrong snippet 1)"),
    Clause("relu_to_clamp", "max_value may be passed by keyword", ("a torch.relu whose value is returned too",),
           source="def relu_to_clamp(gm, *rest):\n    max_value, = rest\n    for n in gm.graph.nodes:\n"
                  "        if n.op == 'call_function' and n.target is torch.relu:\n            n.target = torch.clamp\n"
                  "            n.kwargs = {'min': 0, 'max': max_value}\n    gm.recompile()\n    return gm\n"),
    Clause("relu_to_gelu", "all three forms: call_function, call_module, call_method",
           ("ThreeReluNet", "in-place ReLUs"), mutant="handles the call_function form only"),
    Clause("relu_to_gelu", "in-place spellings too", ("in-place ReLUs",), mutant="matches torch.relu but not F.relu"),
    Clause("relu_to_gelu", "exact GELU", ("ThreeReluNet", "in-place ReLUs"),
           mutant="the tanh approximation"),
    Clause("relu_to_gelu", "ReLU-like ops (relu6, leaky_relu, ReLU6, LeakyReLU) stay", ("ReluLikeNet",),
           patch=('return any(node.target is f for f in relu_functions)',
                  "return any(node.target is f for f in relu_functions) or 'relu' in getattr(node.target, '__name__', '')")),
    Clause("relu_to_gelu", "torch.relu(input=x) by keyword", ("KeywordReluNet",),
           patch=('x = node.args[0] if node.args else node.kwargs["input"]', "x = node.args[0]")),
    Clause("relu_to_gelu", "the original model is not changed", ("one nn.ReLU called twice",),
           mutant="turns every nn.ReLU into GELU in place, which changes the original model too"),
    Clause("linear_to_matmul", "x @ W.T + b with W transposed", ("TinyNet", "ThreeReluNet"),
           mutant="forgets to transpose W"),
    Clause("linear_to_matmul", "no bias term where the layer has none", ("ThreeReluNet (fc2 has no bias)",),
           mutant="always adds the bias"),
    Clause("linear_to_matmul", "parameters stay shared", ("TinyNet", "ThreeReluNet"),
           mutant="clones the parameters into buffers"),
    Clause("linear_to_matmul", "nested targets such as 'layers.0'", ("LinearChain 6->12->5", "a top-level Linear"),
           mutant="getattr(gm, target) misses nested layers such as 'layers.0'"),
    Clause("linear_to_matmul", "a Linear called twice: both calls", ("one Linear called twice",),
           mutant="one replacement per module, so a Linear called twice keeps a call"),
    Clause("linear_to_matmul", "leading dimensions (3-d inputs)", ("one Linear called twice, on 3-d inputs",),
           mutant="torch.mm, which only takes 2-d inputs"),
    Clause("linear_to_matmul", "no F.linear in disguise", ("TinyNet", "ThreeReluNet"),
           mutant="F.linear with get_attr parameters"),
    Clause("linear_to_matmul", "the bias is added (x @ W.T + b, not minus b)", ("TinyNet", "ThreeReluNet"),
           mutant="transposes W, but subtracts the bias"),
]

# Rules the task-text audit found with no clause.
CLAUSES += [
    Clause("swap_function", "when no node targets old, gm is returned unchanged",
           ("TinyNet, torch.tanh -> torch.sigmoid (no node targets old)",),
           patch=("    gm.graph.lint()", "    if not any(n.target is new for n in gm.graph.nodes):\n"
                  "        raise ValueError(f\"no node targets {old}\")\n    gm.graph.lint()")),
]

# Inputs the task text allows that the cases lacked until wrong answers written from the text alone passed them.
CLAUSES += [
    Clause("swap_function", "the GraphModule given is recompiled, not left stale behind a new one it returns",
           ("TinyNet, torch.relu -> torch.sigmoid", "SwapNet, torch.relu -> torch.tanh"),
           mutant="retargets gm's graph, then returns fx.GraphModule(gm, gm.graph) and never recompiles gm",
           hint="change gm itself"),
    Clause("relu_to_clamp", "torch.relu_ stays", ("torch.relu next to torch.relu_",), mutant="clamps torch.relu_ too",
           hint="torch.relu_"),
    Clause("relu_to_clamp", "a function that is only named relu stays", ("a function of the model's own named relu",),
           mutant="matches by __name__ (F.relu left out), so a function of the model's own named relu becomes a "
                  "clamp", hint="which is not torch.relu"),
    Clause("relu_to_clamp", "max_value=0 is a bound like any other", ("TinyNet, max_value=0",),
           mutant="leaves out the upper bound when max_value is 0", hint="max=max_value"),
    Clause("relu_to_gelu", "modules named like ReLU that compute none (nn.RReLU, nn.PReLU) stay", ("ReluCousinsNet",),
           mutant="takes every module whose class name contains 'relu' (ReLU6 and LeakyReLU left out), nn.RReLU and "
                  "nn.PReLU too", hint="computes no ReLU"),
    Clause("relu_to_gelu", "a function that is only named relu stays", ("a function of the model's own named relu",),
           mutant="matches functions by __name__, so a function of the model's own named relu becomes GELU",
           hint="computes no ReLU"),
    Clause("linear_to_matmul", "a subclass of nn.Linear is an nn.Linear too", ("an nn.Linear subclass",),
           mutant="type(module) is nn.Linear, so a subclass of nn.Linear keeps its call",
           hint="isinstance(module, nn.Linear)"),
    Clause("linear_to_matmul", "a matmul (torch.matmul or @) and a transpose, not torch.einsum", ("TinyNet", "Net"),
           mutant="torch.einsum with the weight as it is: no matmul, no transpose", hint="torch.einsum"),
    Clause("linear_to_matmul", "the rest computes what it did: an in-place call whose result is unused stays",
           ("h.relu_() on a Linear's output",),
           mutant="leaves the Linear nodes to eliminate_dead_code(), which deletes an in-place call whose result "
                  "nobody reads", hint="eliminate_dead_code()"),
]

_PASSES = (("swap_function", "gm.code is regenerated"), ("swap_function", "returns the GraphModule"),
           ("relu_to_clamp", "clamp visible in gm.code, not a lambda"),
           ("swap_function", "the GraphModule given is recompiled, not left stale behind a new one it returns"))

# The task text, sentence by sentence: the rules of the clauses that check it, or why it is no rule.
TASK_TEXT = {
    "*": {
        "After lesson 03 you can change what a node calls, swap a module, and replace one node by several.":
            "what the lesson taught, the motivation",
        "Here you write four passes, each a function `gm -> gm` that ends with `gm.graph.lint()`, `gm.recompile()` "
        "and `return gm`:": _PASSES,
        "`swap_function`: retarget every call of one function to another;":
            "a summary of swap_function, whose rules its section states",
        "`relu_to_clamp`: turn `torch.relu` into `torch.clamp` with bounds;":
            "a summary of relu_to_clamp, whose rules its section states",
        "`relu_to_gelu`: find ReLU in every form it takes in a graph and make it exact GELU;":
            "a summary of relu_to_gelu, whose rules its section states",
        "`linear_to_matmul`: take `nn.Linear` apart into a matmul and an add that read the *same* parameters.":
            "a summary of linear_to_matmul, whose rules its section states",
        "Every pass is checked on its **structure** (which nodes remain, what they call, what `gm.code` says: "
        "forgetting `recompile()` fails) and on its **numbers** (outputs against the eager model on seeded inputs).":
            _PASSES + (("linear_to_matmul", "the rest computes what it did: an in-place call whose result is unused "
                                            "stays"),),
        "A pass may change the `GraphModule` it is given, but never the model that was traced: the two share their "
        "submodules and parameters.": (("relu_to_gelu", "the original model is not changed"),),
    },
    "swap_function": {
        "## 1. `swap_function(gm, old, new) -> GraphModule`": ("returns the GraphModule",),
        "Every `call_function` node whose target **is** `old` must target `new` afterwards, with its args and kwargs "
        "unchanged.": ("every matching node, not the first", "each swapped node keeps its args and kwargs",
                       "targets compared by identity: another function of the same name stays"),
        "Nothing else changes: other functions (even one with the same `__name__`: `torch.relu` and `F.relu` are "
        "both called `relu`), method calls and module calls stay as they are.":
            ("targets compared by identity: another function of the same name stays",
             "call_method nodes of the same name stay"),
        "When no node targets `old`, return `gm` unchanged.": ("when no node targets old, gm is returned unchanged",),
        "Example: `swap_function(gm, torch.relu, torch.sigmoid)` on the traced `TinyNet`.": "an example call",
        "Make every call_function node that targets `old` target `new`; return gm.":
            ("every matching node, not the first", "returns the GraphModule"),
    },
    "relu_to_clamp": {
        "## 2. `relu_to_clamp(gm, max_value) -> GraphModule`": ("min=0 as well as max",),
        "Every `call_function` node whose target is `torch.relu` must compute `torch.clamp(x, min=0, max=max_value)` "
        "instead, as a `call_function` node whose target is `torch.clamp` itself, so that `clamp` shows in "
        "`gm.code`.": ("min=0 as well as max", "clamp visible in gm.code, not a lambda"),
        "Only `torch.relu` counts: `F.relu`, `torch.relu_`, `nn.ReLU` modules and `.relu()` calls are other ops and "
        "stay exactly as they are, and so do ReLU-like ops (`F.relu6`, `F.leaky_relu`, `nn.ReLU6`, `nn.LeakyReLU`).":
            ("only torch.relu: F.relu stays", "ReLU-like ops (relu6, leaky_relu) stay", "torch.relu_ stays",
             "a function that is only named relu stays"),
        "A model may pass the input by keyword, `torch.relu(input=h)`: then `node.args` is empty and the input is "
        "`node.kwargs[\"input\"]`.": ("torch.relu(input=x) by keyword is converted too",),
        "`max_value` is a number (int or float), passed by position or by keyword.":
            ("max_value may be passed by keyword", "max_value=0 is a bound like any other"),
        "The lesson showed why `node.target = lambda z: ...` is not an answer.":
            ("clamp visible in gm.code, not a lambda",),
        "Replace every torch.relu(x) by torch.clamp(x, min=0, max=max_value); return gm.": ("min=0 as well as max",),
    },
    "relu_to_gelu": {
        "## 3. `relu_to_gelu(gm) -> GraphModule`": ("all three forms: call_function, call_module, call_method",),
        "Replace every node that computes a ReLU by a node that computes **exact** GELU (`approximate='none'`) of the "
        "same input.": ("exact GELU", "all three forms: call_function, call_module, call_method"),
        "A ReLU can be any of these:": ("all three forms: call_function, call_module, call_method",),
        "| opcode | how the model wrote it |": "the header of the table of ReLU forms",
        "| `call_function` | `torch.relu(x)`, `F.relu(x)`, `F.relu(x, inplace=True)`, `torch.relu_(x)` (same as "
        "`F.relu_`) |": ("all three forms: call_function, call_module, call_method", "in-place spellings too"),
        "| `call_module` | an `nn.ReLU()` or `nn.ReLU(inplace=True)` submodule, at any depth (`body.1`), maybe called "
        "twice |": ("all three forms: call_function, call_module, call_method", "the original model is not changed"),
        "| `call_method` | `x.relu()`, `x.relu_()` |":
            ("all three forms: call_function, call_module, call_method", "in-place spellings too"),
        "Afterwards no node may compute a ReLU, every other node computes what it did, and the output equals the "
        "model with each ReLU replaced by `F.gelu`.":
            ("all three forms: call_function, call_module, call_method", "exact GELU",
             "modules named like ReLU that compute none (nn.RReLU, nn.PReLU) stay",
             "a function that is only named relu stays"),
        "Mind the kwargs: `F.gelu` has no `inplace` argument, and a ReLU may get its input by keyword "
        "(`torch.relu(input=h)`: `node.kwargs[\"input\"]`).":
            ("in-place spellings too", "torch.relu(input=x) by keyword"),
        "ReLU-like ops that are not ReLU (`F.relu6`, `F.leaky_relu`, `nn.ReLU6`, `nn.LeakyReLU`) stay as they are.":
            ("ReLU-like ops (relu6, leaky_relu, ReLU6, LeakyReLU) stay",),
        "Replace every ReLU (function, module or method form, in place or not) by exact GELU; return gm.":
            ("all three forms: call_function, call_module, call_method", "in-place spellings too", "exact GELU"),
    },
    "linear_to_matmul": {
        "## 4. `linear_to_matmul(gm) -> GraphModule`": ("x @ W.T + b with W transposed",),
        "Replace every `call_module` node whose module is an `nn.Linear` by":
            ("a Linear called twice: both calls", "a subclass of nn.Linear is an nn.Linear too"),
        "`get_attr` nodes that read the layer's own weight and bias (for `fc1`: targets `\"fc1.weight\"` and "
        "`\"fc1.bias\"`; for a nested layer such as `layers.0`: `\"layers.0.weight\"`), and":
            ("nested targets such as 'layers.0'", "parameters stay shared"),
        "`call_function` / `call_method` nodes computing `x @ W.T + b` with a matmul (`torch.matmul` or `@`, so that "
        "inputs with extra leading dimensions work), a transpose and an add.":
            ("x @ W.T + b with W transposed", "leading dimensions (3-d inputs)",
             "the bias is added (x @ W.T + b, not minus b)",
             "a matmul (torch.matmul or @) and a transpose, not torch.einsum"),
        "A layer built with `bias=False` has no bias: no add for it.": ("no bias term where the layer has none",),
        "Afterwards no node calls an `nn.Linear` (and `F.linear` or `torch.addmm` do not count as taking it apart).":
            ("no F.linear in disguise", "a Linear called twice: both calls",
             "a subclass of nn.Linear is an nn.Linear too"),
        "The parameters must stay **shared** with the original model: the get_attr nodes read the very same "
        "`nn.Parameter` objects, so that training the original model changes what `gm` computes.":
            ("parameters stay shared",),
        "Every call site is replaced, including a Linear called twice.": ("a Linear called twice: both calls",),
        "Replace every nn.Linear call by get_attr weight/bias, matmul with W.T and add; return gm.":
            ("x @ W.T + b with W transposed", "parameters stay shared"),
    },
}
