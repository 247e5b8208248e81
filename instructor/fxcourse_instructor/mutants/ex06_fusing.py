"""Mutants and alternatives of ex06_fusing.

Answer cells of the other functions stay the solution's, so a mutant of a pass may call the solution's
fuse_linear_pair / fold_bn_into_conv, and a mutant of the algebra shows up only in its own function.
"""
from fxcourse_instructor.mutants import Alternative, Mutant, from_task_text

# ------------------------------------------------------------------------------------ fuse_linear_pair

_PAIR_MUTANTS = [
    Mutant("fuse_linear_pair", "multiplies the weights in the wrong order (W1 @ W2)", hint="wrong orientation", edits=(
        ("        fused.weight.copy_(w2 @ w1)",
         "        fused.weight.copy_(w1 @ w2)"),)),
    Mutant("fuse_linear_pair", "keeps only the second bias (the first bias never passes through W2)",
           hint="W2 @ b1 + b2", edits=(
        ("    if first.bias is not None:\n"
         "        bias = w2 @ first.bias.detach()\n",
         ""),)),
    Mutant("fuse_linear_pair", "assumes both biases exist", hint="without bias", edits=(
        ("    if first.bias is not None:\n"
         "        bias = w2 @ first.bias.detach()\n"
         "    if second.bias is not None:\n"
         "        bias = second.bias.detach().clone() if bias is None else bias + second.bias.detach()",
         "    bias = w2 @ first.bias.detach() + second.bias.detach()"),)),
    Mutant("fuse_linear_pair", "builds a float32 layer whatever the inputs' dtype", hint="dtype", edits=(
        ("                      dtype=w1.dtype, device=w1.device)",
         "                      device=w1.device)"),)),
    Mutant("fuse_linear_pair", "reuses the first layer: copy.copy shares its parameters, so `first` changes",
           hint="modified", edits=(
        ("    fused = nn.Linear(first.in_features, second.out_features, bias=bias is not None,\n"
         "                      dtype=w1.dtype, device=w1.device)",
         "    fused = copy.copy(first)\n"
         "    fused.out_features = second.out_features"),
        ("        fused.weight.copy_(w2 @ w1)",
         "        fused.weight.data = w2 @ w1"),
        ("            fused.bias.copy_(bias)",
         "            fused.bias = nn.Parameter(bias)"),)),
    Mutant("fuse_linear_pair", "returns the two layers in a Sequential", hint="one nn.Linear", edits=(
        ("    if first.out_features != second.in_features:\n",
         "    return nn.Sequential(copy.deepcopy(first), copy.deepcopy(second))\n"
         "    if first.out_features != second.in_features:\n"),)),
]

# ---------------------------------------------------------------------------- fuse_consecutive_linears

_CHAIN_MUTANTS = [
    Mutant("fuse_consecutive_linears", "wrong snippet 5, fixed up with algebra: still matches 'fc' in the name",
           hint="by module type", edits=(
        ('        return (node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear)',
         '        return (node.op == "call_module" and "fc" in node.target'),)),
    Mutant("fuse_consecutive_linears", "fuses pairs only: a chain of three keeps two layers", hint="any length", edits=(
        ("        while (nxt := next_in_chain(chain[-1])) is not None:",
         "        if (nxt := next_in_chain(chain[-1])) is not None:"),)),
    Mutant("fuse_consecutive_linears", "ignores the users count: fuses through a fork and keeps the forked node",
           hint="more than one user", edits=(
        ("        if len(node.users) != 1:\n"
         "            return None\n",
         ""),
        ("        for node in reversed(chain):\n"
         "            gm.graph.erase_node(node)",
         "        for node in reversed(chain):\n"
         "            if not node.users:\n"
         "                gm.graph.erase_node(node)"),)),
    Mutant("fuse_consecutive_linears", "overwrites the chain's first module in place (like optimization.fuse)",
           hint="under a fresh name", edits=(
        ('        name = "fused_" + chain[0].target.replace(".", "_")\n'
         "        while hasattr(gm, name):\n"
         '            name += "_"\n'
         "        gm.add_submodule(name, fused)",
         "        name = chain[0].target\n"
         "        gm.add_submodule(name, fused)"),
        ("                and sites[node.target] == 1 and len(node.args) == 1 and not node.kwargs)",
         "                and len(node.args) == 1 and not node.kwargs)"),)),
    Mutant("fuse_consecutive_linears", "its own algebra with the product the wrong way round",
           hint="orientation", edits=(
        ("            fused = fuse_linear_pair(fused, gm.get_submodule(node.target))",
         "            second = gm.get_submodule(node.target)\n"
         "            pair = nn.Linear(fused.in_features, second.out_features, dtype=fused.weight.dtype)\n"
         "            with torch.no_grad():\n"
         "                pair.weight.copy_(fused.weight @ second.weight)\n"
         "            fused = pair"),)),
    Mutant("fuse_consecutive_linears", "rewires the uses but leaves the old Linear nodes in the graph",
           hint="nothing uses it", edits=(
        ("        for node in reversed(chain):\n"
         "            gm.graph.erase_node(node)\n",
         ""),)),
    Mutant("fuse_consecutive_linears", "forgets gm.recompile()", hint="recompile", edits=(
        ("    gm.recompile()\n",
         ""),)),
]

# a Linear called with its input by keyword is left alone: this answer fuses one (a mutant below); with the
# test of node.args and node.kwargs added it is right (an alternative)
_ONE_PAIR_PER_ROUND = '''
def fuse_consecutive_linears(gm):
    calls = Counter(n.target for n in gm.graph.nodes if n.op == "call_module")

    def is_lin(n):   # a Linear called from one site only: shared modules are left alone
        return n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Linear) and calls[n.target] <= 1
    counter = 0
    changed = True
    while changed:
        changed = False
        for node in gm.graph.nodes:
            if not is_lin(node) or len(node.users) != 1:
                continue
            user = next(iter(node.users))
            if not is_lin(user) or user.args != (node,):
                continue
            counter += 1
            name = f"linear_fused_{counter}"
            gm.add_submodule(name, fuse_linear_pair(gm.get_submodule(node.target), gm.get_submodule(user.target)))
            with gm.graph.inserting_before(user):
                new = gm.graph.call_module(name, node.args)
            user.replace_all_uses_with(new)
            gm.graph.erase_node(user)
            gm.graph.erase_node(node)
            changed = True
            break
    gm.graph.eliminate_dead_code()
    gm.graph.lint()
    gm.recompile()
    return gm
'''

_CHAIN_MUTANTS += [
    Mutant("fuse_consecutive_linears", "fuses one pair per round, but fuses a Linear called with its input by keyword",
           hint="called with its input by keyword", source=_ONE_PAIR_PER_ROUND),
]

# ----------------------------------------------------------------------------------- fold_bn_into_conv

_FOLD_MUTANTS = [
    Mutant("fold_bn_into_conv", "forgets eps", hint="add bn.eps", edits=(
        ("        scale = torch.rsqrt(bn.running_var + bn.eps)",
         "        scale = torch.rsqrt(bn.running_var)"),)),
    Mutant("fold_bn_into_conv", "uses statistics of a (random) batch instead of the running statistics",
           hint="running_mean and running_var", edits=(
        ("        scale = torch.rsqrt(bn.running_var + bn.eps)",
         "        z = conv(torch.randn(16, conv.in_channels, 8, 8, dtype=conv.weight.dtype))\n"
         "        mean, var = z.mean(dim=(0, 2, 3)), z.var(dim=(0, 2, 3), unbiased=False)\n"
         "        scale = torch.rsqrt(var + bn.eps)"),
        ("        shift = (bias - bn.running_mean) * scale",
         "        shift = (bias - mean) * scale"),)),
    Mutant("fold_bn_into_conv", "folds in place: scales conv.weight and returns conv itself", hint="in place", edits=(
        ("    fused = copy.deepcopy(conv)",
         "    fused = conv"),)),
    Mutant("fold_bn_into_conv", "assumes the conv has a bias", hint="no bias", edits=(
        ("        bias = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)",
         "        bias = conv.bias"),)),
    Mutant("fold_bn_into_conv", "assumes the BatchNorm is affine", hint="affine=False", edits=(
        ("        if bn.weight is not None:\n"
         "            scale = scale * bn.weight",
         "        scale = scale * bn.weight"),
        ("        if bn.bias is not None:\n"
         "            shift = shift + bn.bias",
         "        shift = shift + bn.bias"),)),
    Mutant("fold_bn_into_conv", "scales the input channels (dim 1) instead of the output channels",
           hint="(-1, 1, 1, 1)", edits=(
        ("scale.reshape(-1, 1, 1, 1).to(dtype)",
         "scale.reshape(1, -1, 1, 1).to(dtype)"),)),
    Mutant("fold_bn_into_conv", "rebuilds the conv and forgets stride, dilation and groups", hint="stride", edits=(
        ("    fused = copy.deepcopy(conv)",
         "    fused = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size, padding=conv.padding,\n"
         "                      dtype=conv.weight.dtype)"),)),
    Mutant("fold_bn_into_conv", "divides by the variance, not by its square root",
           hint="sqrt(running_var + eps)", not_hints=("not statistics of any batch",), edits=(
        ("        scale = torch.rsqrt(bn.running_var + bn.eps)",
         "        scale = 1 / (bn.running_var + bn.eps)"),)),
]

# ---------------------------------------------------------------------------------------- fuse_conv_bn

_FUSE_MUTANTS = [
    Mutant("fuse_conv_bn", "no training-mode check: folds a model whose BatchNorms use batch statistics",
           hint="training", edits=(
        ("    bns = [n.target for n in gm.graph.nodes\n"
         '           if n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.BatchNorm2d)]\n'
         '    training = (["gm"] if gm.training else []) + [t for t in bns if gm.get_submodule(t).training]\n'
         "    if training:\n"
         '        raise ValueError(f"fuse_conv_bn folds running statistics, so it needs eval mode, but "\n'
         '                         f"\'{training[0]}\' is in training mode: call gm.eval() first")',
         "    pass"),)),
    Mutant("fuse_conv_bn", "checks only gm.training, so a BatchNorm left in training mode is folded",
           hint="BatchNorm2d that the graph calls", edits=(
        ("    if training:",
         "    if gm.training:"),)),
    Mutant("fuse_conv_bn", "folds a conv that is called from two sites (what optimization.fuse does)",
           hint="called from", edits=(
        ("        if len(conv_node.users) != 1 or sites[conv_node.target] != 1 or bn.running_mean is None:",
         "        if len(conv_node.users) != 1 or bn.running_mean is None:"),)),
    Mutant("fuse_conv_bn", "ignores the users of the conv output", hint="one user", edits=(
        ("        if len(conv_node.users) != 1 or sites[conv_node.target] != 1 or bn.running_mean is None:",
         "        if sites[conv_node.target] != 1 or bn.running_mean is None:"),)),
    Mutant("fuse_conv_bn", "forgets eps in its own folding helper", hint="add bn.eps", edits=(
        ("def fuse_conv_bn(gm: fx.GraphModule) -> fx.GraphModule:",
         "def _fold_no_eps(conv, bn):\n"
         "    fused = copy.deepcopy(conv)\n"
         "    gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_var)\n"
         "    beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_var)\n"
         "    b = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)\n"
         "    with torch.no_grad():\n"
         "        scale = gamma / torch.sqrt(bn.running_var)\n"
         "        fused.weight.copy_(conv.weight * scale.reshape(-1, 1, 1, 1))\n"
         "        fused.bias = nn.Parameter((b - bn.running_mean) * scale + beta)\n"
         "    return fused\n"
         "\n"
         "def fuse_conv_bn(gm: fx.GraphModule) -> fx.GraphModule:"),
        ("        folded = fold_bn_into_conv(gm.get_submodule(conv_node.target), bn)",
         "        folded = _fold_no_eps(gm.get_submodule(conv_node.target), bn)"),)),
    Mutant("fuse_conv_bn", "folds a BatchNorm2d without running statistics", hint="track_running_stats=False", edits=(
        ("        if len(conv_node.users) != 1 or sites[conv_node.target] != 1 or bn.running_mean is None:",
         "        if len(conv_node.users) != 1 or sites[conv_node.target] != 1:"),)),
    Mutant("fuse_conv_bn", "calls torch.fx.experimental.optimization.fuse", hint="called from", edits=(
        ("    bns = [n.target for n in gm.graph.nodes\n",
         "    from torch.fx.experimental.optimization import fuse\n"
         "    return fuse(gm)\n"
         "    bns = [n.target for n in gm.graph.nodes\n"),)),
    Mutant("fuse_conv_bn", "selects BatchNorm nodes by name ('bn' in the target)", hint="by module type", edits=(
        ('        if node.op != "call_module" or not isinstance(gm.get_submodule(node.target), nn.BatchNorm2d):',
         '        if node.op != "call_module" or not "bn" in node.target:'),)),
]

# ------------------------------------- near misses: each does right what some hint says, and must not be shown it

_NEAR_MISSES = [
    Mutant("fuse_linear_pair", "builds the fused layer and forgets to return it (and prints nothing)",
           hint="ended without a `return`", not_hints=("instead of printing",), edits=(
        ("    return fused",
         "    fused.eval()"),)),
    Mutant("fuse_linear_pair", "copies the fused weight but never the bias (nn.Linear's random initial bias stays)",
           hint="the fused weight is right; the bias is not", not_hints=("orientation",), edits=(
        ("        if bias is not None:\n"
         "            fused.bias.copy_(bias)\n",
         ""),)),
    Mutant("fuse_consecutive_linears", "by type, but tests isinstance(node.target, nn.Linear): the target is a str, so "
           "nothing is fused", hint="were not fused", not_hints=("not by their names",), edits=(
        ('        return (node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.Linear)',
         '        return (node.op == "call_module" and isinstance(node.target, nn.Linear)'),)),
    Mutant("fuse_consecutive_linears", "its own algebra on a copy of the later layer, whose in_features stays that "
           "layer's", hint="but its weight has shape", not_hints=("more than one user",), edits=(
        ("            fused = fuse_linear_pair(fused, gm.get_submodule(node.target))",
         "            second = gm.get_submodule(node.target)\n"
         "            pair = copy.deepcopy(second)\n"
         "            b1 = fused.bias if fused.bias is not None else torch.zeros(fused.out_features,\n"
         "                                                                       dtype=fused.weight.dtype)\n"
         "            b2 = second.bias if second.bias is not None else 0.0\n"
         "            pair.weight = nn.Parameter((second.weight @ fused.weight).detach())\n"
         "            pair.bias = nn.Parameter((second.weight @ b1 + b2).detach())\n"
         "            fused = pair"),)),
    Mutant("fuse_consecutive_linears", "its own algebra, right weight, but only the last layer's bias",
           hint="has the right weight but not the right bias", not_hints=("other way round", "orientation"), edits=(
        ("            fused = fuse_linear_pair(fused, gm.get_submodule(node.target))",
         "            second = gm.get_submodule(node.target)\n"
         "            pair = nn.Linear(fused.in_features, second.out_features, dtype=fused.weight.dtype)\n"
         "            with torch.no_grad():\n"
         "                pair.weight.copy_(second.weight @ fused.weight)\n"
         "                pair.bias.copy_(second.bias if second.bias is not None\n"
         "                                else torch.zeros(second.out_features, dtype=fused.weight.dtype))\n"
         "            fused = pair"),)),
    Mutant("fold_bn_into_conv", "scales the weight right but forgets to subtract running_mean from the bias",
           hint="the folded weight is right; the bias is not",
           not_hints=("not statistics of any batch", "OUTPUT channels", "add bn.eps"), edits=(
        ("        shift = (bias - bn.running_mean) * scale",
         "        shift = bias * scale"),)),
    Mutant("fold_bn_into_conv", "a float32 bias for a float64 conv (shift.float())", hint="its bias is torch.float32",
           not_hints=("its weight is",), edits=(
        ("        fused.bias = nn.Parameter(shift.to(dtype))",
         "        fused.bias = nn.Parameter(shift.float())"),)),
    Mutant("fuse_conv_bn", "by type, but tests isinstance(conv_node, nn.Conv2d) on the node: nothing is folded",
           hint="still called after fusion", not_hints=("not by name",), edits=(
        ("                and isinstance(gm.get_submodule(conv_node.target), nn.Conv2d)):",
         "                and isinstance(conv_node, nn.Conv2d)):"),)),
    Mutant("fuse_conv_bn", "calls the folded conv from a new node and erases the BatchNorm, but leaves the old conv "
           "node in the graph", hint="erase the old conv node", not_hints=("erase only the BatchNorm node",), edits=(
        ("        gm.add_submodule(conv_node.target, folded)   # safe: this conv is called from this site only\n"
         "        node.replace_all_uses_with(conv_node)",
         '        name = "folded_" + conv_node.target.replace(".", "_")\n'
         "        gm.add_submodule(name, folded)\n"
         "        with gm.graph.inserting_after(node):\n"
         "            new = gm.graph.call_module(name, conv_node.args)\n"
         "        node.replace_all_uses_with(new)"),)),
]

# ------------------ wrong answers written from the task text alone that only the later hidden cases catch (each
# the one mistake of such an answer, as an edit of the solution)

_BLIND_SPOTS = [
    Mutant("fuse_linear_pair", "makes the fused bias a Parameter of second.bias itself when first has no bias, so the "
           "two layers share that memory", hint="shares its memory with second.bias", edits=(
        ("        bias = second.bias.detach().clone() if bias is None else bias + second.bias.detach()",
         "        bias = second.bias.detach() if bias is None else bias + second.bias.detach()"),
        ("            fused.bias.copy_(bias)",
         "            fused.bias = nn.Parameter(bias)"),)),
    Mutant("fuse_consecutive_linears", "names the fused layers fused_0, fused_1, ... without checking the name is free",
           hint="under a fresh name", edits=(
        ('        name = "fused_" + chain[0].target.replace(".", "_")\n'
         "        while hasattr(gm, name):\n"
         '            name += "_"\n',
         '        name = f"fused_{chains.index(chain)}"\n'),)),
    Mutant("fuse_consecutive_linears", "deletes each fused Linear by name, though the graph may still read its bias",
           hint="still reads 'b.bias'", edits=(
        ("        for node in reversed(chain):\n"
         "            gm.graph.erase_node(node)\n",
         "        for node in reversed(chain):\n"
         "            gm.graph.erase_node(node)\n"
         "            gm.delete_submodule(node.target)\n"),)),
    Mutant("fold_bn_into_conv", "for a conv without bias, computes the folded bias with eps=1e-5 instead of bn.eps",
           hint="the folded weight is right; the bias is not", edits=(
        ("        shift = (bias - bn.running_mean) * scale",
         "        shift = ((bias - bn.running_mean) * scale if conv.bias is not None else -bn.running_mean\n"
         "                 * torch.rsqrt(bn.running_var + 1e-5) * (bn.weight if bn.weight is not None else 1.0))"),)),
    Mutant("fuse_conv_bn", "checks only the BatchNorm2d modules, not gm.training", hint="gm itself is in training mode",
           edits=(
        ('    training = (["gm"] if gm.training else []) + [t for t in bns if gm.get_submodule(t).training]',
         "    training = [t for t in bns if gm.get_submodule(t).training]"),)),
    Mutant("fuse_conv_bn", "checks the mode of only those BatchNorm2d modules whose input is a conv",
           hint="follows a relu, not a conv", edits=(
        ('           if n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.BatchNorm2d)]',
         '           if n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.BatchNorm2d)\n'
         '           and isinstance(n.args[0], fx.Node) and n.args[0].op == "call_module"\n'
         "           and isinstance(gm.get_submodule(n.args[0].target), nn.Conv2d)]"),)),
    Mutant("fuse_conv_bn", "raises for any BatchNorm in training mode, a BatchNorm1d too", hint="is a BatchNorm1d, not a "
           "BatchNorm2d", edits=(
        ('           if n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.BatchNorm2d)]',
         '           if n.op == "call_module"\n'
         "           and isinstance(gm.get_submodule(n.target), nn.modules.batchnorm._BatchNorm)]"),)),
    Mutant("fuse_conv_bn", "reads node.args[0] of a BatchNorm2d called with its input by keyword",
           hint="called with its input by keyword", edits=(
        ('        conv_node = node.args[0] if node.args else node.kwargs.get("input")   # bn(input=h) too',
         "        conv_node = node.args[0]"),)),
]

MUTANTS = _PAIR_MUTANTS + _CHAIN_MUTANTS + _FOLD_MUTANTS + _FUSE_MUTANTS + _NEAR_MISSES + _BLIND_SPOTS

ALTERNATIVES = [
    Alternative("fuse_linear_pair", "reads W and b off the composed function, probing it with the identity", '''
def fuse_linear_pair(first, second):
    if first.out_features != second.in_features:
        raise ValueError(f"widths {first.out_features} and {second.in_features} do not meet")
    dtype = first.weight.dtype
    with torch.no_grad():
        b = second(first(torch.zeros(1, first.in_features, dtype=dtype)))[0]
        w = (second(first(torch.eye(first.in_features, dtype=dtype))) - b).T
        fused = nn.Linear(first.in_features, second.out_features, dtype=dtype)
        fused.weight.copy_(w)
        fused.bias.copy_(b)
    return fused
'''),
    Alternative("fuse_linear_pair", "F.linear on the weights, parameters assigned to a copy of the second layer", '''
def fuse_linear_pair(first, second):
    import torch.nn.functional as F
    if (first.out_features, ) != (second.in_features, ):
        raise ValueError(f"Linear({first.in_features}->{first.out_features}) cannot feed "
                         f"Linear({second.in_features}->{second.out_features})")
    w = F.linear(first.weight.detach().T, second.weight.detach()).T        # (W2 @ W1)
    b = None
    if first.bias is not None or second.bias is not None:
        b1 = first.bias.detach() if first.bias is not None else torch.zeros(first.out_features, dtype=w.dtype)
        b = F.linear(b1, second.weight.detach(), None if second.bias is None else second.bias.detach())
    fused = copy.deepcopy(second)
    fused.in_features = first.in_features
    fused.weight = nn.Parameter(w.contiguous())
    fused.bias = None if b is None else nn.Parameter(b)
    return fused
'''),
    Alternative("fuse_consecutive_linears", "fuses one pair per round until nothing changes, fresh names",
                _ONE_PAIR_PER_ROUND.replace(
                    "            if not is_lin(node) or len(node.users) != 1:\n",
                    "            if not is_lin(node) or len(node.users) != 1 or len(node.args) != 1 or node.kwargs:\n")),
    Alternative("fold_bn_into_conv", "torch.nn.utils.fusion.fuse_conv_bn_eval", '''
def fold_bn_into_conv(conv, bn):
    from torch.nn.utils.fusion import fuse_conv_bn_eval
    if not bn.track_running_stats:
        raise ValueError("a BatchNorm2d without running statistics cannot be folded")
    return fuse_conv_bn_eval(copy.deepcopy(conv).eval(), copy.deepcopy(bn).eval())
'''),
    Alternative("fuse_conv_bn", "copies the graph node by node into a new graph, folded convs under new names", '''
def fuse_conv_bn(gm):
    import torch.nn.functional as F
    if gm.training:
        raise ValueError("gm is in training mode")
    for n in gm.graph.nodes:
        if n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.BatchNorm2d) \\
                and gm.get_submodule(n.target).training:
            raise ValueError(f"BatchNorm2d {n.target!r} is in training mode")
    calls = Counter(n.target for n in gm.graph.nodes if n.op == "call_module")
    new_graph, env, skip = fx.Graph(), {}, {}
    for node in gm.graph.nodes:
        if node.op == "call_module" and node in skip:
            env[node] = env[skip[node]]
            continue
        mod = gm.get_submodule(node.target) if node.op == "call_module" else None
        if isinstance(mod, nn.Conv2d) and calls[node.target] == 1 and len(node.users) == 1:
            user = next(iter(node.users))
            bn = gm.get_submodule(user.target) if user.op == "call_module" else None
            if isinstance(bn, nn.BatchNorm2d) and bn.track_running_stats and user.args == (node,):
                name = "folded_" + node.target.replace(".", "_")
                gm.add_submodule(name, fold_bn_into_conv(mod, bn))
                env[node] = new_graph.call_module(name, tuple(env[a] for a in node.args))
                skip[user] = node
                continue
        env[node] = new_graph.node_copy(node, lambda a: env[a])
    new_graph.lint()
    out = fx.GraphModule(gm, new_graph)
    out.delete_all_unused_submodules()
    out.recompile()
    return out
'''),
]

# ------------------------------------------- right answers written with another torch.fx mechanism

ALTERNATIVES += [
    Alternative('fuse_linear_pair', 'an fx.Interpreter runs the traced pair on the identity to read off W and b', '''
def fuse_linear_pair(first, second):
    if first.out_features != second.in_features:
        raise ValueError(f"{first.out_features} != {second.in_features}")
    dtype = first.weight.dtype
    pair = fx.symbolic_trace(nn.Sequential(first, second))
    with torch.no_grad():
        b = fx.Interpreter(pair).run(torch.zeros(1, first.in_features, dtype=dtype))[0]
        w = (fx.Interpreter(pair).run(torch.eye(first.in_features, dtype=dtype)) - b).T
        fused = nn.Linear(first.in_features, second.out_features, dtype=dtype)
        fused.weight.copy_(w)
        fused.bias.copy_(b)
    return fused
'''),
    Alternative('fold_bn_into_conv', 'torch.fx.experimental.optimization.fuse on a traced copy of the pair', '''
def fold_bn_into_conv(conv, bn):
    from torch.fx.experimental.optimization import fuse
    if bn.running_mean is None:
        raise ValueError("this BatchNorm2d keeps no running statistics")
    pair = nn.Sequential(copy.deepcopy(conv), copy.deepcopy(bn)).eval()
    fused = fuse(pair)
    folded = next(m for m in fused.modules() if isinstance(m, nn.Conv2d))
    if folded.bias is None:
        folded.bias = nn.Parameter(torch.zeros(folded.out_channels, dtype=folded.weight.dtype))
    return folded
'''),
    Alternative('fuse_consecutive_linears', 'node_copy into a new graph, each chain as one new call_module', '''
def fuse_consecutive_linears(gm):
    sites = Counter(n.target for n in gm.graph.nodes if n.op == "call_module")

    def lin(n):
        return (n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Linear) and sites[n.target] == 1
                and len(n.args) == 1 and not n.kwargs)

    def nxt(n):
        if len(n.users) == 1:
            u = next(iter(n.users))
            if lin(u) and u.args[0] is n:
                return u
        return None

    graph, env, done, k = fx.Graph(), {}, set(), 0
    for n in gm.graph.nodes:
        if n in done:
            continue
        chain = [n]
        while lin(chain[-1]) and nxt(chain[-1]) is not None:
            chain.append(nxt(chain[-1]))
        if lin(n) and len(chain) > 1:
            fused = gm.get_submodule(chain[0].target)
            for m in chain[1:]:
                fused = fuse_linear_pair(fused, gm.get_submodule(m.target))
            k += 1
            name = f"chain_{k}"
            while hasattr(gm, name):
                name += "_"
            gm.add_submodule(name, fused)
            env[chain[-1]] = graph.call_module(name, (env[n.args[0]],))
            done.update(chain)
        else:
            env[n] = graph.node_copy(n, lambda a: env[a])
    out = fx.GraphModule(gm, graph)
    out.delete_all_unused_submodules()
    out.graph.lint()
    out.recompile()
    return out
'''),
]

# --------------------- wrong and right answers written from the task text alone, by someone who had not read the checks

_WRONG, _RIGHT = from_task_text("ex06_fusing")
MUTANTS += _WRONG
ALTERNATIVES += _RIGHT
