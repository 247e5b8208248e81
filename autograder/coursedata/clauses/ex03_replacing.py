"""Clauses of ex03_replacing: swap_function, relu_to_clamp, relu_to_gelu, linear_to_matmul."""
from autograder.coursedata.clauses import Clause

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
    Clause("swap_function", "gm.code is regenerated", ("TinyNet, torch.relu -> torch.sigmoid",),
           mutant="forgets gm.recompile()"),
    Clause("swap_function", "returns the GraphModule", ("TinyNet, torch.relu -> torch.sigmoid",),
           mutant="changes the graph in place but returns nothing"),
    Clause("relu_to_clamp", "only torch.relu: F.relu stays", ("two torch.relu calls and an F.relu",),
           mutant="converts F.relu too"),
    Clause("relu_to_clamp", "ReLU-like ops (relu6, leaky_relu) stay", ("ReluLikeNet",),
           patch=("node.target is torch.relu", "'relu' in getattr(node.target, '__name__', '') "
                  "and node.target is not F.relu")),
    Clause("relu_to_clamp", "torch.relu(input=x) by keyword is converted too", ("KeywordReluNet",),
           patch=('x = node.args[0] if node.args else node.kwargs["input"]', "x = node.args[0]")),
    Clause("relu_to_clamp", "min=0 as well as max", ("TinyNet, max_value=1.0",), mutant="only an upper bound"),
    Clause("relu_to_clamp", "clamp visible in gm.code, not a lambda", ("TinyNet, max_value=1.0",),
           mutant="the popular lambda target (wrong snippet 1)"),
    Clause("relu_to_clamp", "max_value may be passed by keyword", ("a torch.relu whose value is returned too",),
           source="def relu_to_clamp(gm, *rest):\n    max_value, = rest\n    for n in gm.graph.nodes:\n"
                  "        if n.op == 'call_function' and n.target is torch.relu:\n            n.target = torch.clamp\n"
                  "            n.kwargs = {'min': 0, 'max': max_value}\n    gm.recompile()\n    return gm\n"),
    Clause("relu_to_gelu", "all three forms: call_function, call_module, call_method",
           ("ThreeReluNet",), mutant="handles the call_function form only"),
    Clause("relu_to_gelu", "in-place spellings too", ("in-place ReLUs",), mutant="matches torch.relu but not F.relu"),
    Clause("relu_to_gelu", "exact GELU", ("ThreeReluNet",), mutant="the tanh approximation"),
    Clause("relu_to_gelu", "ReLU-like ops (relu6, leaky_relu, ReLU6, LeakyReLU) stay", ("ReluLikeNet",),
           patch=('return any(node.target is f for f in relu_functions)',
                  "return any(node.target is f for f in relu_functions) or 'relu' in getattr(node.target, '__name__', '')")),
    Clause("relu_to_gelu", "torch.relu(input=x) by keyword", ("KeywordReluNet",),
           patch=('x = node.args[0] if node.args else node.kwargs["input"]', "x = node.args[0]")),
    Clause("relu_to_gelu", "the original model is not changed", ("one nn.ReLU called twice",),
           mutant="turns every nn.ReLU into GELU in place, which changes the original model too"),
    Clause("linear_to_matmul", "x @ W.T + b with W transposed", ("TinyNet",), mutant="forgets to transpose W"),
    Clause("linear_to_matmul", "no bias term where the layer has none", ("ThreeReluNet (fc2 has no bias)",),
           mutant="always adds the bias"),
    Clause("linear_to_matmul", "parameters stay shared", ("TinyNet",), mutant="clones the parameters into buffers"),
    Clause("linear_to_matmul", "nested targets such as 'layers.0'", ("LinearChain 6->12->5", "a top-level Linear"),
           mutant="getattr(gm, target) misses nested layers such as 'layers.0'"),
    Clause("linear_to_matmul", "a Linear called twice: both calls", ("one Linear called twice",),
           mutant="one replacement per module, so a Linear called twice keeps a call"),
    Clause("linear_to_matmul", "leading dimensions (3-d inputs)", ("one Linear called twice, on 3-d inputs",),
           mutant="torch.mm, which only takes 2-d inputs"),
    Clause("linear_to_matmul", "no F.linear in disguise", ("TinyNet",), mutant="F.linear with get_attr parameters"),
    Clause("linear_to_matmul", "the bias is added (x @ W.T + b, not minus b)", ("TinyNet",),
           mutant="transposes W, but subtracts the bias"),
]
