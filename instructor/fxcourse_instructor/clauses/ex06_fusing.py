"""Clauses of ex06_fusing: fuse_linear_pair, fuse_consecutive_linears, fold_bn_into_conv, fuse_conv_bn."""
from fxcourse_instructor.clauses import Clause

CLAUSES = [
    Clause("fuse_conv_bn", "the traced model's modules are not changed in place", ("TwoBlocks", "TwoUserConv"),
           source='def fuse_conv_bn(gm: fx.GraphModule) -> fx.GraphModule:\n    """Fold every valid Conv2d -> BatchNorm2d pair; ValueError in training mode."""\n    if gm.training:\n        raise ValueError("the GraphModule is in training mode: call .eval() first")\n    for n in gm.graph.nodes:\n        if n.op == "call_module":\n            m = gm.get_submodule(n.target)\n            if isinstance(m, nn.BatchNorm2d) and m.training:\n                raise ValueError(f"BatchNorm2d \'{n.target}\' is in training mode")\n    sites = Counter(n.target for n in gm.graph.nodes if n.op == "call_module")\n    pairs = []\n    for n in gm.graph.nodes:\n        if n.op != "call_module" or type(gm.get_submodule(n.target)) is not nn.BatchNorm2d:\n            continue\n        if len(n.args) != 1 or n.kwargs or not isinstance(n.args[0], fx.Node):\n            continue\n        bn = gm.get_submodule(n.target)\n        if bn.running_mean is None:\n            continue\n        p = n.args[0]\n        if p.op != "call_module" or type(gm.get_submodule(p.target)) is not nn.Conv2d:\n            continue\n        if len(p.users) != 1 or sites[p.target] != 1:\n            continue\n        pairs.append((p, n))\n    for p, n in pairs:\n        folded = fold_bn_into_conv(gm.get_submodule(p.target), gm.get_submodule(n.target))\n        conv = gm.get_submodule(p.target)\n        conv.weight = folded.weight\n        conv.bias = folded.bias\n        n.replace_all_uses_with(p)\n        gm.graph.erase_node(n)\n    gm.delete_all_unused_submodules()\n    gm.graph.lint()\n    gm.recompile()\n    return gm\n',
           hint="leave the module objects gm holds as they were"),
    Clause("fuse_consecutive_linears", "the traced model's modules are not changed in place", ("MixedChain",),
           source='def fuse_consecutive_linears(gm: fx.GraphModule) -> fx.GraphModule:\n    """Fuse every Linear -> Linear chain whose intermediate outputs have one user into one new Linear."""\n    sites = Counter(n.target for n in gm.graph.nodes if n.op == "call_module")\n\n    def ok(n):\n        return (n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Linear)\n                and sites[n.target] == 1 and len(n.args) == 1 and not n.kwargs\n                and isinstance(n.args[0], fx.Node))\n\n    def nxt(n):\n        if len(n.users) != 1:\n            return None\n        u = next(iter(n.users))\n        if ok(u) and u.args[0] is n:\n            return u\n        return None\n\n    def prev(n):\n        p = n.args[0]\n        if ok(p) and nxt(p) is n:\n            return p\n        return None\n\n    chains = []\n    for n in list(gm.graph.nodes):\n        if not ok(n) or prev(n) is not None:\n            continue\n        chain = [n]\n        while True:\n            u = nxt(chain[-1])\n            if u is None:\n                break\n            chain.append(u)\n        if len(chain) >= 2:\n            chains.append(chain)\n    count = 0\n    for chain in chains:\n        mod = gm.get_submodule(chain[0].target)\n        for c in chain[1:]:\n            mod = fuse_linear_pair(mod, gm.get_submodule(c.target))\n        while hasattr(gm, f"fused_linear_{count}"):\n            count += 1\n        name = f"fused_linear_{count}"\n        first_mod = gm.get_submodule(chain[0].target)\n        first_mod.weight = mod.weight\n        first_mod.bias = mod.bias\n        first_mod.out_features = mod.out_features\n        gm.add_submodule(name, first_mod)\n        last = chain[-1]\n        with gm.graph.inserting_after(last):\n            new = gm.graph.call_module(name, (chain[0].args[0],))\n        last.replace_all_uses_with(new)\n        for c in reversed(chain):\n            gm.graph.erase_node(c)\n    gm.delete_all_unused_submodules()\n    gm.graph.lint()\n    gm.recompile()\n    return gm\n',
           hint="leave the module objects gm holds as they were"),
    Clause("fuse_consecutive_linears", "a Linear called with its input by keyword (fc(input=h)) is left alone",
           ("KeywordChain",), mutant="keyword input", hint="called with its input by keyword"),
    Clause("fuse_consecutive_linears", "each fused layer is a new submodule under a fresh name",
           ("TwoChains", "MixedChain"), mutant="reuses name", hint="under a fresh name"),
    Clause("fuse_linear_pair", "W = W2 @ W1", ("Linear(6->6) then Linear(6->6)",
                                               "Linear(5->7, bias=False) then Linear"),
           mutant="multiplies the weights in the wrong order (W1 @ W2)"),
    Clause("fuse_linear_pair", "b = W2 @ b1 + b2", ("LinearChain 8->16->4", "Linear(5->7) then Linear"),
           mutant="keeps only the second bias (the first bias never passes through W2)"),
    Clause("fuse_linear_pair", "either bias may be absent", ("Linear(5->7, bias=False)",),
           mutant="assumes both biases exist"),
    Clause("fuse_linear_pair", "dtype kept", ("float64 layers",), mutant="builds a float32 layer whatever the inputs' dtype"),
    Clause("fuse_linear_pair", "float64 arithmetic stays float64 (float64's tolerance)", ("float64 layers",),
           patch=("    w1, w2 = first.weight.detach(), second.weight.detach()",
                  "    w1, w2 = first.weight.detach().float().double(), second.weight.detach().float().double()"),
           hint="float64"),
    Clause("fuse_linear_pair", "first and second are not changed", ("LinearChain 8->16->4",
                                                                    "Linear(5->7, bias=False) then Linear"),
           mutant="reuses the first layer: copy.copy shares its parameters, so `first` changes"),
    Clause("fuse_linear_pair", "widths that do not meet raise ValueError", ("Linear(4->6) then Linear(5->3)",),
           patch=("    if first.out_features != second.in_features:", "    if False:"), hint="ValueError"),
    Clause("fuse_consecutive_linears", "modules found by type, not name", ("LinearChain 8->16->4", "MixedChain"),
           mutant="wrong snippet 5, fixed up with algebra: still matches 'fc' in the name"),
    Clause("fuse_consecutive_linears", "chains of any length become one layer", ("LinearChain 6->12->12->3",
                                                                                 "MixedChain"),
           mutant="fuses pairs only: a chain of three keeps two layers"),
    Clause("fuse_consecutive_linears", "an output with two users ends the chain", ("ForkedChain",),
           mutant="ignores the users count: fuses through a fork and keeps the forked node"),
    Clause("fuse_consecutive_linears", "a module called from two call sites is left alone (second of a chain)",
           ("SharedSecond",), patch=("and sites[node.target] == 1 and len(node.args)", "and len(node.args)"),
           hint="left alone"),
    Clause("fuse_consecutive_linears", "a module called from two call sites is left alone (first of a chain)",
           ("SharedFirst",), patch=("and sites[node.target] == 1 and len(node.args)", "and len(node.args)"),
           hint="left alone"),
    Clause("fuse_consecutive_linears", "a module called twice in a row is left alone", ("SelfChain",),
           patch=("and sites[node.target] == 1 and len(node.args)", "and len(node.args)"), hint="left alone"),
    Clause("fuse_consecutive_linears", "a function between two Linears ends the chain", ("FunctionalBreak",),
           source="def fuse_consecutive_linears(gm):\n    lin = [n for n in gm.graph.nodes if n.op == 'call_module' and "
                  "isinstance(gm.get_submodule(n.target), nn.Linear)]\n    for a, b in zip(lin, lin[1:]):\n"
                  "        if len(a.users) == 1 and b.args[0] is not a and len(b.args[0].users) == 1 and "
                  "b.args[0].args and b.args[0].args[0] is a:\n"
                  "            mid = b.args[0]\n            b.args = (a,)\n            gm.graph.erase_node(mid)\n"
                  "    gm.graph.lint()\n    gm.recompile()\n    return gm\n"),
    Clause("fuse_consecutive_linears", "old nodes are erased", ("LinearChain 8->16->4", "MixedChain"),
           mutant="rewires the uses but leaves the old Linear nodes in the graph"),
    Clause("fuse_consecutive_linears", "float64 models at float64's precision", ("LinearChain 4->32->8->4 in float64",),
           patch=("            fused = fuse_linear_pair(fused, gm.get_submodule(node.target))",
                  "            fused = fuse_linear_pair(fused.float(), gm.get_submodule(node.target).float())"
                  ".double()"), hint="float64"),
    Clause("fold_bn_into_conv", "eps inside the square root", ("Conv2d(3->4, 3) + BatchNorm2d(4, eps=0.1)",),
           mutant="forgets eps"),
    Clause("fold_bn_into_conv", "running statistics, not batch statistics", ("ConvBNNet: conv2",
                                                                             "Conv2d(4->6, 3) + BatchNorm2d"),
           mutant="uses statistics of a (random) batch instead of the running statistics"),
    Clause("fold_bn_into_conv", "conv and bn are not changed", ("ConvBNNet: conv2", "Conv2d(4->6, 3) + BatchNorm2d"),
           mutant="folds in place: scales conv.weight and returns conv itself"),
    Clause("fold_bn_into_conv", "conv without bias", ("ConvBNNet: conv2 (no bias)", "Conv2d(3->5"),
           mutant="assumes the conv has a bias"),
    Clause("fold_bn_into_conv", "BatchNorm2d(affine=False)", ("Conv2d(4->6, 3) + BatchNorm2d(6, affine=False)",),
           mutant="assumes the BatchNorm is affine"),
    Clause("fold_bn_into_conv", "one scale per output channel", ("ConvBNNet: conv1", "Conv2d(4->6, 3) + BatchNorm2d"),
           mutant="scales the input channels (dim 1) instead of the output channels"),
    Clause("fold_bn_into_conv", "stride, dilation, groups kept", ("Conv2d(4->6, 3, stride=2",),
           mutant="rebuilds the conv and forgets stride, dilation and groups"),
    Clause("fold_bn_into_conv", "padding_mode kept", ("Conv2d(3->4, 3, padding=1, padding_mode='reflect')",),
           patch=("    fused = copy.deepcopy(conv)", "    fused = copy.deepcopy(conv)\n    fused.padding_mode = 'zeros'"),
           hint="padding_mode"),
    Clause("fold_bn_into_conv", "float64 arithmetic stays float64", ("float64 Conv2d(3->6, 3)",),
           patch=("        scale = torch.rsqrt(bn.running_var + bn.eps)",
                  "        scale = torch.rsqrt(bn.running_var.float() + bn.eps).to(bn.running_var.dtype)"),
           hint="float64"),
    Clause("fuse_conv_bn", "ValueError in training mode", ("ConvBNNet in training mode",
                                                           "ConvBNNet in eval mode except bn2"),
           mutant="no training-mode check: folds a model whose BatchNorms use batch statistics"),
    Clause("fuse_conv_bn", "a BatchNorm2d left in training mode counts", ("ConvBNNet in eval mode except bn2",),
           mutant="checks only gm.training, so a BatchNorm left in training mode is folded"),
    Clause("fuse_conv_bn", "the ValueError comes before any change", ("ConvBNNet in eval mode except bn2",),
           source="def fuse_conv_bn(gm):\n    sites = Counter(n.target for n in gm.graph.nodes if n.op == 'call_module')\n"
                  "    for n in list(gm.graph.nodes):\n"
                  "        if n.op == 'call_module' and isinstance(gm.get_submodule(n.target), nn.BatchNorm2d):\n"
                  "            bn = gm.get_submodule(n.target)\n            if bn.training or gm.training:\n"
                  "                raise ValueError(f'{n.target} is in training mode')\n            c = n.args[0]\n"
                  "            if (c.op == 'call_module' and isinstance(gm.get_submodule(c.target), nn.Conv2d) and "
                  "len(c.users) == 1 and sites[c.target] == 1):\n"
                  "                gm.add_submodule(c.target, fold_bn_into_conv(gm.get_submodule(c.target), bn))\n"
                  "                n.replace_all_uses_with(c)\n                gm.graph.erase_node(n)\n"
                  "    gm.graph.lint()\n    gm.recompile()\n    return gm\n", hint="before"),
    Clause("fuse_conv_bn", "a conv called from two sites is left alone", ("SharedConvNet", "random convnet seed 5"),
           mutant="folds a conv that is called from two sites (what optimization.fuse does)"),
    Clause("fuse_conv_bn", "a conv output with two users is left alone", ("TwoUserConv",),
           mutant="ignores the users of the conv output"),
    Clause("fuse_conv_bn", "a BatchNorm2d without running statistics stays", ("NoStatsBN",),
           mutant="folds a BatchNorm2d without running statistics"),
    Clause("fuse_conv_bn", "only Conv2d -> BatchNorm2d: a Conv1d -> BatchNorm1d pair stays", ("Conv1dBN",),
           patch=(("isinstance(gm.get_submodule(node.target), nn.BatchNorm2d):",
                   "isinstance(gm.get_submodule(node.target), nn.modules.batchnorm._BatchNorm):"),
                  ("isinstance(gm.get_submodule(conv_node.target), nn.Conv2d)",
                   "isinstance(gm.get_submodule(conv_node.target), nn.modules.conv._ConvNd)"))),
    Clause("fuse_conv_bn", "eps kept", ("BigEps",), mutant="forgets eps in its own folding helper"),
    Clause("fuse_conv_bn", "modules found by type, not name", ("random convnet seed 5",),
           mutant="selects BatchNorm nodes by name ('bn' in the target)"),
]

# Rules the task-text audit found with no clause.
CLAUSES += [
    Clause("fuse_linear_pair", "returns one new nn.Linear", ("LinearChain 8->16->4",
                                                             "Linear(5->7, bias=False) then Linear"),
           mutant="returns the two layers in a Sequential", hint="one nn.Linear"),
    Clause("fuse_consecutive_linears", "gm.code is regenerated (recompile)", ("LinearChain 8->16->4", "MixedChain"),
           patch=("    gm.recompile()\n", "")),
    Clause("fold_bn_into_conv", "b' = (b - running_mean) * scale + bn.bias", ("ConvBNNet: conv1",
                                                                              "Conv2d(4->6, 3) + BatchNorm2d"), mutant="ignores mean"),
    Clause("fold_bn_into_conv", "the folded conv always has a bias", ("ConvBNNet: conv2 (no bias)", "Conv2d(3->5"),
           patch=("        fused.bias = nn.Parameter(shift.to(dtype))",
                  "        if conv.bias is not None:\n            fused.bias = nn.Parameter(shift.to(dtype))")),
    Clause("fold_bn_into_conv", "a bn without running statistics raises ValueError",
           ("Conv2d(3->4, 3) + BatchNorm2d(4, track_running_stats=False)",), mutant="no stats check"),
    Clause("fuse_conv_bn", "only gm and the BatchNorm2d modules the graph calls are tested for training mode",
           ("TwoBlocks",), mutant="checks every submodule"),
    Clause("fuse_conv_bn", "gm.code is regenerated (recompile)", ("ConvBNNet in eval mode", "TwoUserConv"),
           patch=("    gm.recompile()\n", "")),
]

# Rules that wrong answers once with full marks broke, each with the hidden case that now catches it.
CLAUSES += [
    Clause("fuse_linear_pair", "a new Linear: it shares no memory with first or second",
           ("Linear(5->7, bias=False) then Linear",),
           mutant="makes the fused bias a Parameter of second.bias itself when first has no bias, so the two layers "
                  "share that memory", hint="shares its memory with second.bias"),
    Clause("fuse_consecutive_linears", "a submodule the graph still reads (a fused Linear's bias) is not removed",
           ("BiasRead",), mutant="deletes each fused Linear by name, though the graph may still read its bias",
           hint="still reads 'b.bias'"),
    Clause("fold_bn_into_conv", "a conv without bias folds with the same formula (b = 0), bn.eps included",
           ("Conv2d(3->4, 3, bias=False) + BatchNorm2d(4, eps=0.1)",),
           mutant="for a conv without bias, computes the folded bias with eps=1e-5 instead of bn.eps",
           hint="the folded weight is right; the bias is not"),
    Clause("fuse_conv_bn", "gm itself in training mode raises ValueError, even when every BatchNorm2d is in eval mode",
           ("ConvBNNet in eval mode but for gm itself",), mutant="checks only the BatchNorm2d modules, not gm.training",
           hint="gm itself is in training mode"),
    Clause("fuse_conv_bn", "any BatchNorm2d the graph calls counts for the training-mode check, not only one after a "
           "conv", ("BigEps in eval mode except pool_bn",),
           mutant="checks the mode of only those BatchNorm2d modules whose input is a conv",
           hint="follows a relu, not a conv"),
]

# The task text, sentence by sentence: the rules of the clauses that check it, or why it is no rule.
TASK_TEXT = {
    "*": {
        "After lesson 06 you know when two layers can become one and what the merged weights are.":
            "what the lesson taught, the motivation",
        "Here you write the four pieces of an inference-time fuser:": "introduces the list of functions",
        "`fuse_linear_pair`: the algebra of two Linears in a row;":
            "a summary of fuse_linear_pair, whose rules its section states",
        "`fuse_consecutive_linears`: a graph pass that fuses every Linear -> Linear chain, however long;":
            "a summary of fuse_consecutive_linears, whose rules its section states",
        "`fold_bn_into_conv`: the algebra of a BatchNorm2d folded into the Conv2d before it;":
            "a summary of fold_bn_into_conv, whose rules its section states",
        "`fuse_conv_bn`: a graph pass that folds every Conv2d -> BatchNorm2d pair where that is valid.":
            "a summary of fuse_conv_bn, whose rules its section states",
        "Every pass is checked on its structure (which nodes remain) and on its numbers (outputs against the "
        "original model).": "how grading works; what the passes must do is stated in their own sections",
    },
    "fuse_linear_pair": {
        "## 1. `fuse_linear_pair(first, second) -> nn.Linear`": ("returns one new nn.Linear",),
        "Return a **new** `nn.Linear` that computes `second(first(x))` for every `x`:":
            ("returns one new nn.Linear", "first and second are not changed", "W = W2 @ W1",
             "a new Linear: it shares no memory with first or second"),
        "its weight is `second.weight @ first.weight`, of shape `(second.out_features, first.in_features)`;":
            ("W = W2 @ W1",),
        "its bias is `second.weight @ first.bias + second.bias`, where a missing bias counts as zero (either layer "
        "may have `bias=False`; when both do, the fused layer may have no bias);":
            ("b = W2 @ b1 + b2", "either bias may be absent"),
        "it has the dtype of the input layers (the grader uses float64 layers too);":
            ("dtype kept", "float64 arithmetic stays float64 (float64's tolerance)"),
        "`first` and `second` are not changed;": ("first and second are not changed",),
        "when `first.out_features != second.in_features` the two cannot run in a row: raise `ValueError` naming both "
        "widths.": ("widths that do not meet raise ValueError",),
        "A new nn.Linear equal to second(first(x)): W = W2 @ W1, b = W2 @ b1 + b2 (missing bias = 0).":
            ("W = W2 @ W1", "b = W2 @ b1 + b2", "either bias may be absent"),
    },
    "fuse_consecutive_linears": {
        "## 2. `fuse_consecutive_linears(gm) -> GraphModule`": ("chains of any length become one layer",),
        "A pass: change `gm` (or a copy) and return the GraphModule.": ("gm.code is regenerated (recompile)",),
        "Every chain of `nn.Linear` calls in which each Linear's output has **exactly one user, the next Linear**, "
        "becomes **one** `call_module` node of a new `nn.Linear` (use `fuse_linear_pair`).":
            ("chains of any length become one layer", "an output with two users ends the chain"),
        "Chains can have any length: `a -> b -> c` becomes one layer.": ("chains of any length become one layer",),
        "Leave everything else alone:":
            ("a submodule the graph still reads (a fused Linear's bias) is not removed",),
        "a Linear whose output has two or more users ends its chain (its output is needed elsewhere);":
            ("an output with two users ends the chain",),
        "anything between two Linears (a ReLU, a function call) ends the chain;":
            ("a function between two Linears ends the chain",),
        "find Linears by **module type**, not by name: the grader's models do not call them `fc`;":
            ("modules found by type, not name",),
        "a module called from two call sites is left alone: a Linear that the graph calls from two or more places "
        "(count the `call_module` nodes per target) is not fused with anything, at any of its sites;":
            ("a module called from two call sites is left alone (second of a chain)",
             "a module called from two call sites is left alone (first of a chain)",
             "a module called twice in a row is left alone"),
        "register each fused layer as a **new** submodule (`gm.add_submodule` with a fresh name);":
            ("each fused layer is a new submodule under a fresh name",
             "the traced model's modules are not changed in place"),
        "a Linear called with its input by keyword (`fc(input=h)`) is left alone too.":
            ("a Linear called with its input by keyword (fc(input=h)) is left alone",),
        "`gm` itself may be changed and returned (the grader passes a fresh copy each time); the models' dtypes are "
        "kept, float64 included, and the grader compares float64 results at float64's precision.":
            ("float64 models at float64's precision",),
        "Erase the replaced nodes, end with `gm.graph.lint()` and `gm.recompile()`.":
            ("old nodes are erased", "gm.code is regenerated (recompile)"),
        "Removing submodules nothing calls any more (`gm.delete_all_unused_submodules()`) is a good habit.":
            "a recommendation, not required: the check accepts the unused submodules",
        "Fuse every Linear -> Linear chain whose intermediate outputs have one user into one new Linear.":
            ("chains of any length become one layer", "an output with two users ends the chain"),
    },
    "fold_bn_into_conv": {
        "## 3. `fold_bn_into_conv(conv, bn) -> nn.Conv2d`": ("conv and bn are not changed",),
        "Return a **new** `nn.Conv2d` equal to `bn(conv(x))` with `bn` in eval mode, i.e. using the stored "
        "`running_mean` and `running_var`:": ("conv and bn are not changed", "running statistics, not batch statistics"),
        "`scale = bn.weight / sqrt(running_var + bn.eps)`, `W' = W * scale` (one scale per **output** channel), "
        "`b' = (b - running_mean) * scale + bn.bias`.":
            ("eps inside the square root", "one scale per output channel", "b' = (b - running_mean) * scale + bn.bias"),
        "`conv` may have no bias (take `b = 0`); the folded conv always has one;":
            ("conv without bias", "the folded conv always has a bias",
             "a conv without bias folds with the same formula (b = 0), bn.eps included"),
        "`bn` may have `affine=False` (no `weight`/`bias`: take 1 and 0);": ("BatchNorm2d(affine=False)",),
        "keep every setting of the conv (stride, padding, dilation, groups, `padding_mode` such as `'reflect'` or "
        "`'circular'`) and its dtype (the grader compares float64 results at float64's precision);":
            ("stride, dilation, groups kept", "padding_mode kept", "float64 arithmetic stays float64"),
        "do not change `conv` or `bn`;": ("conv and bn are not changed",),
        "a `bn` without running statistics (`track_running_stats=False`, so `bn.running_mean is None`) normalizes "
        "with batch statistics, which no fixed weights reproduce: raise `ValueError`.":
            ("a bn without running statistics raises ValueError",),
        "A new Conv2d equal to bn(conv(x)) with bn in eval mode (running statistics folded in).":
            ("running statistics, not batch statistics", "conv and bn are not changed"),
    },
    "fuse_conv_bn": {
        "## 4. `fuse_conv_bn(gm) -> GraphModule`": ("gm.code is regenerated (recompile)",),
        "A pass that folds every `nn.Conv2d` -> `nn.BatchNorm2d` pair (use `fold_bn_into_conv`): afterwards the conv "
        "node computes the folded conv and the BatchNorm node is gone.": ("modules found by type, not name", "eps kept"),
        "It applies only where that is valid:": "introduces the list of conditions",
        "raise `ValueError` if `gm`, or any `BatchNorm2d` that the graph calls, is in training mode (say which one).":
            ("ValueError in training mode", "a BatchNorm2d left in training mode counts",
             "gm itself in training mode raises ValueError, even when every BatchNorm2d is in eval mode",
             "any BatchNorm2d the graph calls counts for the training-mode check, not only one after a conv"),
        "Do not test *every* submodule: tracing re-creates container modules such as `features` as plain "
        "`nn.Module`s, which start in training mode even when the model was in eval mode;":
            ("only gm and the BatchNorm2d modules the graph calls are tested for training mode",),
        "fold only when the conv's output has **one** user (the BatchNorm);": ("a conv output with two users is left alone",),
        "a conv module **called from two or more sites** is left alone, together with its BatchNorms;":
            ("a conv called from two sites is left alone",),
        "a BatchNorm2d without running statistics (`track_running_stats=False`) uses batch statistics even in eval "
        "mode: leave it;": ("a BatchNorm2d without running statistics stays",),
        "only `nn.Conv2d` -> `nn.BatchNorm2d` pairs: a `Conv1d` -> `BatchNorm1d` pair, like every other node, stays as "
        "it is;": ("only Conv2d -> BatchNorm2d: a Conv1d -> BatchNorm1d pair stays",),
        "the `ValueError` comes before any change: a call that raises leaves `gm` exactly as it was;":
            ("the ValueError comes before any change",),
        "the modules `gm` holds are the traced model's own objects (`symbolic_trace` shares them): register each "
        "folded conv (a new module, as `fold_bn_into_conv` returns) with `gm.add_submodule`, and change none of them "
        "in place.": ("the traced model's modules are not changed in place",),
        "End with `gm.graph.lint()` and `gm.recompile()`.": ("gm.code is regenerated (recompile)",),
        "Fold every valid Conv2d -> BatchNorm2d pair; ValueError in training mode.":
            ("ValueError in training mode", "modules found by type, not name"),
    },
}
