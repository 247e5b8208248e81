"""Mutants and alternatives of ex06_fusing.

Answer cells of the other functions stay the solution's, so a mutant of a pass may call the solution's
fuse_linear_pair / fold_bn_into_conv, and a mutant of the algebra shows up only in its own function.
"""
from autograder.coursedata.mutants import Alternative, Mutant

# ------------------------------------------------------------------------------------ fuse_linear_pair

_PAIR_MUTANTS = [
    Mutant("fuse_linear_pair", "multiplies the weights in the wrong order (W1 @ W2)", '''
def fuse_linear_pair(first, second):
    fused = nn.Linear(first.in_features, second.out_features, dtype=first.weight.dtype)
    with torch.no_grad():
        fused.weight.copy_(first.weight @ second.weight)
        fused.bias.copy_(second.weight @ first.bias + second.bias)
    return fused
''', hint="wrong orientation"),
    Mutant("fuse_linear_pair", "keeps only the second bias (the first bias never passes through W2)", '''
def fuse_linear_pair(first, second):
    fused = nn.Linear(first.in_features, second.out_features, dtype=first.weight.dtype)
    with torch.no_grad():
        fused.weight.copy_(second.weight @ first.weight)
        fused.bias.copy_(second.bias)
    return fused
''', hint="W2 @ b1 + b2"),
    Mutant("fuse_linear_pair", "assumes both biases exist", '''
def fuse_linear_pair(first, second):
    fused = nn.Linear(first.in_features, second.out_features, dtype=first.weight.dtype)
    with torch.no_grad():
        fused.weight.copy_(second.weight @ first.weight)
        fused.bias.copy_(second.weight @ first.bias + second.bias)
    return fused
''', hint="without bias"),
    Mutant("fuse_linear_pair", "builds a float32 layer whatever the inputs' dtype", '''
def fuse_linear_pair(first, second):
    b1 = first.bias if first.bias is not None else torch.zeros(first.out_features, dtype=first.weight.dtype)
    b2 = second.bias if second.bias is not None else torch.zeros(second.out_features, dtype=first.weight.dtype)
    fused = nn.Linear(first.in_features, second.out_features)
    with torch.no_grad():
        fused.weight.copy_(second.weight @ first.weight)
        fused.bias.copy_(second.weight @ b1 + b2)
    return fused
''', hint="dtype"),
    Mutant("fuse_linear_pair", "reuses the first layer: copy.copy shares its parameters, so `first` changes", '''
def fuse_linear_pair(first, second):
    b1 = first.bias if first.bias is not None else torch.zeros(first.out_features, dtype=first.weight.dtype)
    b2 = second.bias if second.bias is not None else torch.zeros(second.out_features, dtype=first.weight.dtype)
    fused = copy.copy(first)
    with torch.no_grad():
        w = second.weight @ first.weight
        b = second.weight @ b1 + b2
        fused.weight.data = w
        if fused.bias is not None:
            fused.bias.data = b
        else:
            fused.bias = nn.Parameter(b)
    fused.out_features = second.out_features
    return fused
''', hint="modified"),
    Mutant("fuse_linear_pair", "returns the two layers in a Sequential", '''
def fuse_linear_pair(first, second):
    return nn.Sequential(copy.deepcopy(first), copy.deepcopy(second))
''', hint="one nn.Linear"),
]

# ---------------------------------------------------------------------------- fuse_consecutive_linears

_CHAIN_MUTANTS = [
    Mutant("fuse_consecutive_linears", "wrong snippet 5, fixed up with algebra: still matches 'fc' in the name", '''
def fuse_consecutive_linears(gm):
    for node in list(gm.graph.nodes):
        if node.op == "call_module" and "fc" in node.target and len(node.users) == 1:
            user = next(iter(node.users))
            if user.op == "call_module" and "fc" in user.target:
                fused = fuse_linear_pair(gm.get_submodule(node.target), gm.get_submodule(user.target))
                name = "fused_" + node.target.replace(".", "_")
                gm.add_submodule(name, fused)
                with gm.graph.inserting_after(user):
                    new = gm.graph.call_module(name, node.args)
                user.replace_all_uses_with(new)
                gm.graph.erase_node(user)
                gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="by module type"),
    Mutant("fuse_consecutive_linears", "fuses pairs only: a chain of three keeps two layers", '''
def fuse_consecutive_linears(gm):
    modules = dict(gm.named_modules())
    for node in list(gm.graph.nodes):
        if node.op != "call_module" or not isinstance(modules.get(node.target), nn.Linear):
            continue
        prev = node.args[0]
        if not (isinstance(prev, fx.Node) and prev.op == "call_module"
                and isinstance(modules.get(prev.target), nn.Linear) and len(prev.users) == 1):
            continue
        fused = fuse_linear_pair(modules[prev.target], modules[node.target])
        name = "fused_" + prev.target.replace(".", "_")
        gm.add_submodule(name, fused)
        with gm.graph.inserting_after(node):
            new = gm.graph.call_module(name, prev.args)
        node.replace_all_uses_with(new)
        gm.graph.erase_node(node)
        gm.graph.erase_node(prev)
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="any length"),
    Mutant("fuse_consecutive_linears", "ignores the users count: fuses through a fork and keeps the forked node", '''
def fuse_consecutive_linears(gm):
    def is_lin(n):
        return n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Linear)
    done = set()
    for node in list(gm.graph.nodes):
        if node in done or not is_lin(node):
            continue
        chain = [node]
        while True:
            users = [u for u in chain[-1].users if is_lin(u)]
            if not users:
                break
            chain.append(users[0])
        done.update(chain)
        if len(chain) < 2:
            continue
        fused = gm.get_submodule(chain[0].target)
        for n in chain[1:]:
            fused = fuse_linear_pair(fused, gm.get_submodule(n.target))
        name = "fused_" + chain[0].target.replace(".", "_")
        gm.add_submodule(name, fused)
        with gm.graph.inserting_after(chain[-1]):
            new = gm.graph.call_module(name, chain[0].args)
        chain[-1].replace_all_uses_with(new)
        for n in reversed(chain):
            if not n.users:
                gm.graph.erase_node(n)
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="more than one user"),
    Mutant("fuse_consecutive_linears", "overwrites the chain's first module in place (like optimization.fuse)", '''
def fuse_consecutive_linears(gm):
    def is_lin(n):
        return n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Linear)
    erased = set()
    for node in list(gm.graph.nodes):
        if node in erased or not is_lin(node):
            continue
        while len(node.users) == 1 and is_lin(next(iter(node.users))):
            user = next(iter(node.users))
            fused = fuse_linear_pair(gm.get_submodule(node.target), gm.get_submodule(user.target))
            gm.add_submodule(node.target, fused)
            user.replace_all_uses_with(node)
            gm.graph.erase_node(user)
            erased.add(user)
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="called from"),
    Mutant("fuse_consecutive_linears", "its own algebra with the product the wrong way round", '''
def fuse_consecutive_linears(gm):
    def is_lin(n):
        return n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Linear)
    def pair(a, b):
        f = nn.Linear(a.in_features, b.out_features, bias=True, dtype=a.weight.dtype)
        b1 = a.bias if a.bias is not None else torch.zeros(a.out_features, dtype=a.weight.dtype)
        b2 = b.bias if b.bias is not None else torch.zeros(b.out_features, dtype=a.weight.dtype)
        with torch.no_grad():
            f.weight.copy_(a.weight @ b.weight)
            f.bias.copy_(b.weight @ b1 + b2)
        return f
    count, erased = 0, set()
    for node in list(gm.graph.nodes):
        if node in erased or not is_lin(node):
            continue
        chain = [node]
        while len(chain[-1].users) == 1 and is_lin(next(iter(chain[-1].users))):
            chain.append(next(iter(chain[-1].users)))
        if len(chain) < 2:
            continue
        fused = gm.get_submodule(chain[0].target)
        for n in chain[1:]:
            fused = pair(fused, gm.get_submodule(n.target))
        count += 1
        gm.add_submodule(f"fused{count}", fused)
        with gm.graph.inserting_after(chain[-1]):
            new = gm.graph.call_module(f"fused{count}", chain[0].args)
        chain[-1].replace_all_uses_with(new)
        for n in reversed(chain):
            gm.graph.erase_node(n)
            erased.add(n)
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="orientation"),
    Mutant("fuse_consecutive_linears", "rewires the uses but leaves the old Linear nodes in the graph", '''
def fuse_consecutive_linears(gm):
    def is_lin(n):
        return n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Linear)
    chains, seen = [], set()
    for node in gm.graph.nodes:
        if node in seen or not is_lin(node):
            continue
        chain = [node]
        while len(chain[-1].users) == 1 and is_lin(next(iter(chain[-1].users))):
            chain.append(next(iter(chain[-1].users)))
        seen.update(chain)
        if len(chain) > 1:
            chains.append(chain)
    for i, chain in enumerate(chains):
        fused = gm.get_submodule(chain[0].target)
        for n in chain[1:]:
            fused = fuse_linear_pair(fused, gm.get_submodule(n.target))
        gm.add_submodule(f"fused_{i}", fused)
        with gm.graph.inserting_after(chain[-1]):
            new = gm.graph.call_module(f"fused_{i}", chain[0].args)
        chain[-1].replace_all_uses_with(new)
    gm.graph.lint()
    gm.recompile()
    return gm
''', hint="nothing uses it"),
    Mutant("fuse_consecutive_linears", "forgets gm.recompile()", '''
def fuse_consecutive_linears(gm):
    def is_lin(n):
        return n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Linear)
    chains, seen = [], set()
    for node in gm.graph.nodes:
        if node in seen or not is_lin(node):
            continue
        chain = [node]
        while len(chain[-1].users) == 1 and is_lin(next(iter(chain[-1].users))):
            chain.append(next(iter(chain[-1].users)))
        seen.update(chain)
        if len(chain) > 1:
            chains.append(chain)
    for i, chain in enumerate(chains):
        fused = gm.get_submodule(chain[0].target)
        for n in chain[1:]:
            fused = fuse_linear_pair(fused, gm.get_submodule(n.target))
        gm.add_submodule(f"fused_{i}", fused)
        with gm.graph.inserting_after(chain[-1]):
            new = gm.graph.call_module(f"fused_{i}", chain[0].args)
        chain[-1].replace_all_uses_with(new)
        for n in reversed(chain):
            gm.graph.erase_node(n)
    gm.graph.lint()
    return gm
''', hint="recompile"),
]

# ----------------------------------------------------------------------------------- fold_bn_into_conv

_FOLD_BODY = '''
def fold_bn_into_conv(conv, bn):
    fused = copy.deepcopy(conv)
    gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_var)
    beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_var)
    b = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
    with torch.no_grad():
        scale = {scale}
        fused.weight.copy_(conv.weight * scale.reshape({shape}))
        fused.bias = nn.Parameter((b - {mean}) * scale + beta)
    return fused
'''

_FOLD_MUTANTS = [
    Mutant("fold_bn_into_conv", "forgets eps", _FOLD_BODY.format(
        scale="gamma / torch.sqrt(bn.running_var)", shape="-1, 1, 1, 1", mean="bn.running_mean"), hint="add bn.eps"),
    Mutant("fold_bn_into_conv", "uses statistics of a (random) batch instead of the running statistics", '''
def fold_bn_into_conv(conv, bn):
    fused = copy.deepcopy(conv)
    gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_var)
    beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_var)
    b = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
    with torch.no_grad():
        z = conv(torch.randn(16, conv.in_channels, 8, 8, dtype=conv.weight.dtype))
        mean, var = z.mean(dim=(0, 2, 3)), z.var(dim=(0, 2, 3), unbiased=False)
        scale = gamma / torch.sqrt(var + bn.eps)
        fused.weight.copy_(conv.weight * scale.reshape(-1, 1, 1, 1))
        fused.bias = nn.Parameter((b - mean) * scale + beta)
    return fused
''', hint="running_mean and running_var"),
    Mutant("fold_bn_into_conv", "folds in place: scales conv.weight and returns conv itself", '''
def fold_bn_into_conv(conv, bn):
    gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_var)
    beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_var)
    b = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
    with torch.no_grad():
        scale = gamma / torch.sqrt(bn.running_var + bn.eps)
        conv.weight.mul_(scale.reshape(-1, 1, 1, 1))
        conv.bias = nn.Parameter((b - bn.running_mean) * scale + beta)
    return conv
''', hint="in place"),
    Mutant("fold_bn_into_conv", "assumes the conv has a bias", '''
def fold_bn_into_conv(conv, bn):
    fused = copy.deepcopy(conv)
    gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_var)
    beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_var)
    with torch.no_grad():
        scale = gamma / torch.sqrt(bn.running_var + bn.eps)
        fused.weight.copy_(conv.weight * scale.reshape(-1, 1, 1, 1))
        fused.bias.copy_((conv.bias - bn.running_mean) * scale + beta)
    return fused
''', hint="no bias"),
    Mutant("fold_bn_into_conv", "assumes the BatchNorm is affine", '''
def fold_bn_into_conv(conv, bn):
    fused = copy.deepcopy(conv)
    b = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
    with torch.no_grad():
        scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
        fused.weight.copy_(conv.weight * scale.reshape(-1, 1, 1, 1))
        fused.bias = nn.Parameter((b - bn.running_mean) * scale + bn.bias)
    return fused
''', hint="affine=False"),
    Mutant("fold_bn_into_conv", "scales the input channels (dim 1) instead of the output channels",
           _FOLD_BODY.format(scale="gamma / torch.sqrt(bn.running_var + bn.eps)", shape="1, -1, 1, 1",
                             mean="bn.running_mean"), hint="(-1, 1, 1, 1)"),
    Mutant("fold_bn_into_conv", "rebuilds the conv and forgets stride, dilation and groups", '''
def fold_bn_into_conv(conv, bn):
    fused = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size, padding=conv.padding,
                      dtype=conv.weight.dtype)
    gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_var)
    beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_var)
    b = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
    with torch.no_grad():
        scale = gamma / torch.sqrt(bn.running_var + bn.eps)
        fused.weight = nn.Parameter(conv.weight * scale.reshape(-1, 1, 1, 1))
        fused.bias.copy_((b - bn.running_mean) * scale + beta)
    return fused
''', hint="stride"),
    Mutant("fold_bn_into_conv", "divides by the variance, not by its square root", _FOLD_BODY.format(
        scale="gamma / (bn.running_var + bn.eps)", shape="-1, 1, 1, 1", mean="bn.running_mean"),
        hint="sqrt(running_var + eps)"),
]

# ---------------------------------------------------------------------------------------- fuse_conv_bn

_PASS = '''
def fuse_conv_bn(gm):
{guard}
    sites = Counter(n.target for n in gm.graph.nodes if n.op == "call_module")
    for node in list(gm.graph.nodes):
        if node.op != "call_module" or not isinstance(gm.get_submodule(node.target), nn.BatchNorm2d):
            continue
        conv_node = node.args[0]
        if not (isinstance(conv_node, fx.Node) and conv_node.op == "call_module"
                and isinstance(gm.get_submodule(conv_node.target), nn.Conv2d)):
            continue
        bn = gm.get_submodule(node.target)
        if {skip}:
            continue
        folded = {fold}(gm.get_submodule(conv_node.target), bn)
        gm.add_submodule(conv_node.target, folded)
        node.replace_all_uses_with(conv_node)
        gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    return gm
'''
_GUARD = '''    bns = [n.target for n in gm.graph.nodes
           if n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.BatchNorm2d)]
    if gm.training or any(gm.get_submodule(t).training for t in bns):
        raise ValueError("fuse_conv_bn needs eval mode")'''
_SKIP = "len(conv_node.users) != 1 or sites[conv_node.target] != 1 or bn.running_mean is None"

_NO_EPS = '''
def _fold_no_eps(conv, bn):
    fused = copy.deepcopy(conv)
    gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_var)
    beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_var)
    b = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
    with torch.no_grad():
        scale = gamma / torch.sqrt(bn.running_var)
        fused.weight.copy_(conv.weight * scale.reshape(-1, 1, 1, 1))
        fused.bias = nn.Parameter((b - bn.running_mean) * scale + beta)
    return fused
'''

_FUSE_MUTANTS = [
    Mutant("fuse_conv_bn", "no training-mode check: folds a model whose BatchNorms use batch statistics",
           _PASS.format(guard="    pass", skip=_SKIP, fold="fold_bn_into_conv"), hint="training"),
    Mutant("fuse_conv_bn", "checks only gm.training, so a BatchNorm left in training mode is folded",
           _PASS.format(guard='    if gm.training:\n        raise ValueError("fuse_conv_bn needs eval mode")',
                        skip=_SKIP, fold="fold_bn_into_conv"), hint="BatchNorm2d that the graph calls"),
    Mutant("fuse_conv_bn", "folds a conv that is called from two sites (what optimization.fuse does)",
           _PASS.format(guard=_GUARD, skip="len(conv_node.users) != 1 or bn.running_mean is None",
                        fold="fold_bn_into_conv"), hint="called from"),
    Mutant("fuse_conv_bn", "ignores the users of the conv output",
           _PASS.format(guard=_GUARD, skip="sites[conv_node.target] != 1 or bn.running_mean is None",
                        fold="fold_bn_into_conv"), hint="one user"),
    Mutant("fuse_conv_bn", "forgets eps in its own folding helper",
           _NO_EPS + _PASS.format(guard=_GUARD, skip=_SKIP, fold="_fold_no_eps"), hint="add bn.eps"),
    Mutant("fuse_conv_bn", "folds a BatchNorm2d without running statistics",
           _PASS.format(guard=_GUARD, skip="len(conv_node.users) != 1 or sites[conv_node.target] != 1",
                        fold="fold_bn_into_conv"), hint="track_running_stats=False"),
    Mutant("fuse_conv_bn", "calls torch.fx.experimental.optimization.fuse", '''
def fuse_conv_bn(gm):
    from torch.fx.experimental.optimization import fuse
    return fuse(gm)
''', hint="called from"),
    Mutant("fuse_conv_bn", "selects BatchNorm nodes by name ('bn' in the target)",
           _PASS.format(guard=_GUARD, skip=_SKIP, fold="fold_bn_into_conv").replace(
               'isinstance(gm.get_submodule(node.target), nn.BatchNorm2d)', '"bn" in node.target'),
           hint="by module type"),
]

MUTANTS = _PAIR_MUTANTS + _CHAIN_MUTANTS + _FOLD_MUTANTS + _FUSE_MUTANTS

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
    Alternative("fuse_consecutive_linears", "fuses one pair per round until nothing changes, fresh names", '''
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
'''),
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
