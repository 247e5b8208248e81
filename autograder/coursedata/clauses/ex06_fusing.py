"""Clauses of ex06_fusing: fuse_linear_pair, fuse_consecutive_linears, fold_bn_into_conv, fuse_conv_bn."""
from autograder.coursedata.clauses import Clause

CLAUSES = [
    Clause("fuse_consecutive_linears", "a Linear called with its input by keyword (fc(input=h)) is left alone",
           ("KeywordChain",), mutant="keyword input", hint="called with its input by keyword"),
    Clause("fuse_consecutive_linears", "each fused layer is a new submodule under a fresh name",
           ("TwoChains",), mutant="reuses name", hint="under a fresh name"),
    Clause("fuse_linear_pair", "W = W2 @ W1", ("Linear(6->6) then Linear(6->6)",),
           mutant="multiplies the weights in the wrong order (W1 @ W2)"),
    Clause("fuse_linear_pair", "b = W2 @ b1 + b2", ("LinearChain 8->16->4",),
           mutant="keeps only the second bias (the first bias never passes through W2)"),
    Clause("fuse_linear_pair", "either bias may be absent", ("Linear(5->7, bias=False)",),
           mutant="assumes both biases exist"),
    Clause("fuse_linear_pair", "dtype kept", ("float64 layers",), mutant="builds a float32 layer whatever the inputs' dtype"),
    Clause("fuse_linear_pair", "float64 arithmetic stays float64 (float64's tolerance)", ("float64 layers",),
           patch=("    w1, w2 = first.weight.detach(), second.weight.detach()",
                  "    w1, w2 = first.weight.detach().float().double(), second.weight.detach().float().double()"),
           hint="float64"),
    Clause("fuse_linear_pair", "first and second are not changed", ("LinearChain 8->16->4",),
           mutant="reuses the first layer: copy.copy shares its parameters, so `first` changes"),
    Clause("fuse_linear_pair", "widths that do not meet raise ValueError", ("Linear(4->6) then Linear(5->3)",),
           patch=("    if first.out_features != second.in_features:", "    if False:"), hint="ValueError"),
    Clause("fuse_consecutive_linears", "modules found by type, not name", ("LinearChain 8->16->4",),
           mutant="wrong snippet 5, fixed up with algebra: still matches 'fc' in the name"),
    Clause("fuse_consecutive_linears", "chains of any length become one layer", ("LinearChain 6->12->12->3",),
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
    Clause("fuse_consecutive_linears", "old nodes are erased", ("LinearChain 8->16->4",),
           mutant="rewires the uses but leaves the old Linear nodes in the graph"),
    Clause("fuse_consecutive_linears", "float64 models at float64's precision", ("LinearChain 4->32->8->4 in float64",),
           patch=("            fused = fuse_linear_pair(fused, gm.get_submodule(node.target))",
                  "            fused = fuse_linear_pair(fused.float(), gm.get_submodule(node.target).float())"
                  ".double()"), hint="float64"),
    Clause("fold_bn_into_conv", "eps inside the square root", ("Conv2d(3->4, 3) + BatchNorm2d(4, eps=0.1)",),
           mutant="forgets eps"),
    Clause("fold_bn_into_conv", "running statistics, not batch statistics", ("ConvBNNet: conv2",),
           mutant="uses statistics of a (random) batch instead of the running statistics"),
    Clause("fold_bn_into_conv", "conv and bn are not changed", ("ConvBNNet: conv2",),
           mutant="folds in place: scales conv.weight and returns conv itself"),
    Clause("fold_bn_into_conv", "conv without bias", ("ConvBNNet: conv2 (no bias)",),
           mutant="assumes the conv has a bias"),
    Clause("fold_bn_into_conv", "BatchNorm2d(affine=False)", ("Conv2d(4->6, 3) + BatchNorm2d(6, affine=False)",),
           mutant="assumes the BatchNorm is affine"),
    Clause("fold_bn_into_conv", "one scale per output channel", ("ConvBNNet: conv1",),
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
    Clause("fuse_conv_bn", "ValueError in training mode", ("ConvBNNet in training mode",),
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
    Clause("fuse_conv_bn", "a conv called from two sites is left alone", ("SharedConvNet",),
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
