"""Mutants and alternatives of ex08_pipeline.

Each mutant is a few edits of the solution's answer cell. The optimize_for_inference cell holds the helper
passes too, so its mutants may edit a pass (a wrong pass is the pipeline's mistake) or the self-check that
compares the result with the eval-mode model (a learner who makes the mistake has no such check).
"""
from fxcourse_instructor.mutants import Alternative, Mutant, from_task_text

# Lines of the solution's answer cells that several mutants below replace (each occurs there once).
_RUN_PIPELINE_LINES = ("            if not isinstance(result, fx.GraphModule):\n"
                       '                raise TypeError(f"pass {name!r} returned {type(result).__name__}, expected a GraphModule")\n'
                       "            gm = result\n")
_RUN_PIPELINE_LINES_2 = ("            if not isinstance(result, fx.GraphModule):\n"
                         '                raise TypeError(f"pass {name!r} returned {type(result).__name__}, expected a GraphModule")\n'
                         "            gm = result\n"
                         "            try:\n"
                         "                gm.graph.lint()\n"
                         "            except Exception as exc:\n"
                         '                raise RuntimeError(f"pass {name!r} (round {round_number}) left a broken graph: {exc}") from exc\n')

# ------------------------------------------------------------------------------------------ run_pipeline

_RUN_MUTANTS = [
    Mutant("run_pipeline", "runs the passes once, no fixed point", hint="round after round", edits=(
        ("        if gm.code == before:\n",
         ""),
        ("            return gm",
         "        return gm"),)),
    Mutant("run_pipeline", "fixed point = same number of nodes", hint="without changing its number of nodes", edits=(
        ("        before = gm.code",
         "        before = len(gm.graph.nodes)"),
        ("        if gm.code == before:",
         "        if len(gm.graph.nodes) == before:"),)),
    Mutant("run_pipeline", "fixed point = no pass returned a new object",
           hint="whichever object the pass returned", edits=(
        ("        before = gm.code",
         "        changed = False"),
        ("            result = p(gm)",
         "            new = p(gm)"),
        (_RUN_PIPELINE_LINES,
         ""),
        ("                gm.graph.lint()",
         "                new.graph.lint()"),
        ("        if gm.code == before:",
         "            changed = changed or new is not gm\n"
         "            gm = new\n"
         "        if not changed:"),
        ('    raise RuntimeError(f"no fixed point after max_rounds={max_rounds} rounds: "',
         '    raise RuntimeError(f"no fixed point after {max_rounds} rounds")'),
        ('                       "every round still changed gm.code")\n',
         ""),)),
    Mutant("run_pipeline", "ignores what a pass returns", hint="gm = p(gm)", edits=(
        (_RUN_PIPELINE_LINES,
         ""),)),
    Mutant("run_pipeline", "lints once per round, after all passes", hint="right after each pass", edits=(
        ("            result = p(gm)",
         "            gm = p(gm)"),
        (_RUN_PIPELINE_LINES_2,
         ""),
        ("            gm.recompile()",
         "            gm.recompile()\n"
         "        try:\n"
         "            gm.graph.lint()\n"
         "        except Exception as exc:\n"
         '            raise RuntimeError(f"round {round_number} broke the graph: {exc}") from exc'),)),
    Mutant("run_pipeline", "lints before each pass, so the error names the next pass",
           hint="so that the error names the pass that just ran", edits=(
        ("            result = p(gm)\n"
         "            if not isinstance(result, fx.GraphModule):\n"
         '                raise TypeError(f"pass {name!r} returned {type(result).__name__}, expected a GraphModule")\n'
         "            gm = result\n",
         ""),
        ('                raise RuntimeError(f"pass {name!r} (round {round_number}) left a broken graph: {exc}") from exc',
         '                raise RuntimeError(f"pass {name!r} (round {round_number}) left a broken graph: {exc}") from exc\n'
         "            gm = p(gm)"),)),
    Mutant("run_pipeline", "lets the lint error propagate without naming the pass",
           hint="catch the error of gm.graph.lint()", not_hints=("lint right after each pass",), edits=(
        ("            result = p(gm)",
         "            gm = p(gm)"),
        ("            if not isinstance(result, fx.GraphModule):\n"
         '                raise TypeError(f"pass {name!r} returned {type(result).__name__}, expected a GraphModule")\n'
         "            gm = result\n"
         "            try:\n",
         ""),
        ("                gm.graph.lint()",
         "            gm.graph.lint()"),
        ("            except Exception as exc:\n"
         '                raise RuntimeError(f"pass {name!r} (round {round_number}) left a broken graph: {exc}") from exc\n',
         ""),
        ('    raise RuntimeError(f"no fixed point after max_rounds={max_rounds} rounds: "',
         '    raise RuntimeError(f"no fixed point after {max_rounds} rounds")'),
        ('                       "every round still changed gm.code")\n',
         ""),)),
    Mutant("run_pipeline", "names the pass that broke the graph, but raises ValueError",
           hint="not a ValueError", not_hints=("with a message that says what went wrong and where",), edits=(
        ('                raise RuntimeError(f"pass {name!r} (round {round_number}) left a broken graph: {exc}") from exc',
         '                raise ValueError(f"pass {name!r} (round {round_number}) left a broken graph: {exc}") from exc'),)),
    Mutant("run_pipeline", "never lints", hint="lint", edits=(
        ("            result = p(gm)",
         "            gm = p(gm)"),
        (_RUN_PIPELINE_LINES_2,
         ""),)),
    Mutant("run_pipeline", "returns silently after max_rounds", hint="raise a RuntimeError that says", edits=(
        ('    raise RuntimeError(f"no fixed point after max_rounds={max_rounds} rounds: "\n'
         '                       "every round still changed gm.code")',
         "    return gm"),)),
    Mutant("run_pipeline", "max_rounds right, but the error does not say how many rounds ran",
           hint="say in the message how many rounds ran", not_hints=("max_rounds defaults to",), edits=(
        ('    raise RuntimeError(f"no fixed point after max_rounds={max_rounds} rounds: "\n'
         '                       "every round still changed gm.code")',
         '    raise RuntimeError("no fixed point: every round still changed gm.code")'),)),
    Mutant("run_pipeline", "one round too few", hint="that round is the fixed point", edits=(
        ("    for round_number in range(1, max_rounds + 1):",
         "    for round_number in range(1, max_rounds):"),)),
    Mutant("run_pipeline", "does not recompile after each pass", hint="gm.recompile()", edits=(
        ("            gm.recompile()\n",
         ""),)),
    Mutant("run_pipeline", "names a pass by p.__name__, which callable objects lack",
           hint="callable objects have no __name__", edits=(
        ('            name = getattr(p, "__name__", type(p).__name__)',
         "            name = p.__name__"),)),
    Mutant("run_pipeline", "max_rounds defaults to 5", hint="max_rounds defaults to 10", edits=(
        ("def run_pipeline(gm: fx.GraphModule, passes: list, max_rounds: int = 10) -> fx.GraphModule:",
         "def run_pipeline(gm: fx.GraphModule, passes: list, max_rounds: int=5) -> fx.GraphModule:"),)),
]

# a pass returning None must raise TypeError naming it: without the isinstance test this answer raises only a
# RuntimeError from its lint (a mutant below); with it, it is right (an alternative)
_ONE_CHECKED_PASS = '''
def _checked(gm, p):
    name = getattr(p, "__name__", None) or type(p).__name__
    out = p(gm)
    try:
        out.graph.lint()
    except Exception as exc:
        raise RuntimeError(f"{name}: {exc}") from None
    out.recompile()
    return out

def run_pipeline(gm, passes, max_rounds=10):
    for _ in range(max_rounds):
        code = gm.code
        for p in passes:
            gm = _checked(gm, p)
        if gm.code == code:
            break
    else:
        raise RuntimeError(f"no fixed point within max_rounds={max_rounds}")
    return gm
'''

_RUN_ALTERNATIVES = [
    Alternative("run_pipeline", "while loop, str(gm.graph) as the fingerprint, a round counter", '''
def run_pipeline(gm, passes, max_rounds=10):
    rounds = 0
    while True:
        if rounds == max_rounds:
            raise RuntimeError(f"gave up: {max_rounds} rounds and the graph still changes")
        rounds += 1
        snapshot = str(gm.graph)
        for i, p in enumerate(passes):
            label = p.__name__ if hasattr(p, "__name__") else p.__class__.__name__
            gm = p(gm)
            if not isinstance(gm, fx.GraphModule):
                raise TypeError(f"pass #{i} {label} returned {type(gm).__name__}, not a GraphModule")
            try:
                gm.graph.lint()
            except RuntimeError as err:
                raise RuntimeError(f"lint failed after pass #{i} {label}") from err
            gm.recompile()
        if str(gm.graph) == snapshot:
            return gm
'''),
    Alternative("run_pipeline", "a helper that runs one checked pass, for/else", _ONE_CHECKED_PASS.replace(
        "    out = p(gm)\n",
        "    out = p(gm)\n"
        "    if not isinstance(out, fx.GraphModule):\n"
        '        raise TypeError(f"{name} returned {type(out).__name__}, not a GraphModule")\n')),
]

_RUN_MUTANTS += [
    Mutant("run_pipeline", "a helper that runs one checked pass, but a pass returning None only fails in its lint, "
           "a RuntimeError", hint="raise TypeError naming the pass", source=_ONE_CHECKED_PASS),
    Mutant("run_pipeline", "raises TypeError only for a pass that returns None", hint="is broken too, not only one "
           "that returns None", edits=(("if not isinstance(result, fx.GraphModule):", "if result is None:"),)),
    Mutant("run_pipeline", "tests isinstance(result, nn.Module): an nn.Module that is no GraphModule gets through",
           hint="is broken too, not only one that returns None", edits=(
        ("if not isinstance(result, fx.GraphModule):", "if not isinstance(result, nn.Module):"),)),
    Mutant("run_pipeline", "lints and recompiles the GraphModule it passed in, and only then carries on with the one "
           "the pass returned", hint="carry on with it first", edits=(
        ("            gm = result\n            try:\n", "            try:\n"),
        ("            gm.recompile()\n", "            gm.recompile()\n            gm = result\n"),)),
]

# -------------------------------------------------------------------------------- optimize_for_inference

_OPTIMIZE = '''
DROPOUTS = (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout)


def _mod(gm, node):
    return gm.get_submodule(node.target) if node.op == "call_module" else None


def _sites(gm):
    return Counter(n.target for n in gm.graph.nodes if n.op == "call_module")


def _drop_dropout(gm):
    for node in list(gm.graph.nodes):
        functional = node.op == "call_function" and "dropout" in getattr(node.target, "__name__", "")
        if isinstance(_mod(gm, node), DROPOUTS) or functional:
            node.replace_all_uses_with(node.args[0])
            gm.graph.erase_node(node)
    return gm


def _drop_dead(gm):
    gm.graph.eliminate_dead_code()  # a dead user hides a Linear chain: clean up before fusing
    return gm


def _fold_bn(gm):
    sites = _sites(gm)
    for node in list(gm.graph.nodes):
        src = node.args[0] if node.args else None
        if isinstance(_mod(gm, node), nn.BatchNorm2d) and isinstance(src, fx.Node) \\
                and isinstance(_mod(gm, src), nn.Conv2d) and len(src.users) == 1 and sites[src.target] == 1 \\
                and _mod(gm, node).running_mean is not None:   # no running statistics: nothing to fold
            gm.add_submodule(src.target, fold_bn_into_conv(_mod(gm, src), _mod(gm, node)))
            node.replace_all_uses_with(src)
            gm.graph.erase_node(node)
    return gm


def _fuse_linears(gm):
    sites = _sites(gm)
    for node in list(gm.graph.nodes):
        src = node.args[0] if node.args else None
        if isinstance(_mod(gm, node), nn.Linear) and isinstance(src, fx.Node) \\
                and isinstance(_mod(gm, src), nn.Linear) and len(src.users) == 1 \\
                and sites[src.target] == 1 and sites[node.target] == 1:
            gm.add_submodule(node.target, fuse_linear_pair(_mod(gm, src), _mod(gm, node)))
            node.args = (src.args[0],)
            gm.graph.erase_node(src)
    return gm


def optimize_for_inference(model, example_inputs):
    model = copy.deepcopy(model).eval()
    gm = fx.symbolic_trace(model)
    for step in (_drop_dropout, _drop_dead, _fold_bn, _fuse_linears):
        gm = step(gm)
    gm.delete_all_unused_submodules()
    gm.graph.lint()
    gm.recompile()
    return gm.eval()
'''

_FROZEN = ("    frozen = copy.deepcopy(model).eval()  # eval BEFORE tracing: `if self.training` is decided when tracing\n")
_CHECKED = ("    with torch.no_grad():\n"
            "        torch.testing.assert_close(gm(*example_inputs), frozen(*example_inputs), rtol=1e-4, atol=1e-5)\n")
_PASSES = "    gm = run_pipeline(gm, [remove_dropout, fold_conv_bn, fuse_linear_chains, eliminate_dead_code])"

_OPT_MUTANTS = [
    Mutant("optimize_for_inference", "traces first, then calls .eval()", hint="decided once, when tracing", edits=(
        (_FROZEN + "    gm = fx.symbolic_trace(frozen)\n",
         "    frozen = copy.deepcopy(model)\n    gm = fx.symbolic_trace(frozen)\n    frozen.eval()\n"),
        (_CHECKED, ""))),
    Mutant("optimize_for_inference", "never switches to eval mode", hint="call .eval() on the result", edits=(
        (_FROZEN, "    frozen = copy.deepcopy(model)\n"),
        ("    gm.eval()  # modules created by the passes start in training mode\n" + _CHECKED, ""))),
    Mutant("optimize_for_inference", "removes dropout modules only, not F.dropout",
           hint="F.dropout is a call_function node", not_hints=("traced with training=True",), edits=(
        ("        if calls_module(gm, node, modules) or (node.op == \"call_function\" and node.target in functions):",
         "        if calls_module(gm, node, modules):"),)),
    Mutant("optimize_for_inference", "tests isinstance(m, nn.Dropout): misses nn.Dropout2d",
           hint="nn.Dropout2d is not nn.Dropout nor a subclass of it",
           not_hints=("point its users at its input and erase the node",), edits=(
        ("    modules = (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout)",
         "    modules = nn.Dropout"),)),
    Mutant("optimize_for_inference", "fuses before removing dropout", hint="remove dropout first",
           not_hints=("so a chain of any length collapses",), edits=(
        (_PASSES, "    for p in (fold_conv_bn, fuse_linear_chains, remove_dropout, eliminate_dead_code):\n"
                  "        gm = p(gm)"),)),
    Mutant("optimize_for_inference", "eliminates dead code only at the end, after fusing", hint="dead", edits=(
        (_PASSES, "    gm = run_pipeline(gm, [remove_dropout, fold_conv_bn, fuse_linear_chains])\n"
                  "    gm = eliminate_dead_code(gm)"),)),
    Mutant("optimize_for_inference", "fuses one Linear pair only", hint="chain can be fused", edits=(
        ("        gm.graph.erase_node(first)               # ...so a longer chain keeps folding into it\n",
         "        gm.graph.erase_node(first)\n        break\n"),
        (_PASSES, "    gm = eliminate_dead_code(fuse_linear_chains(fold_conv_bn(remove_dropout(gm))))"))),
    Mutant("optimize_for_inference", "no deepcopy, folds into the caller's conv in place",
           hint="copy.deepcopy(model)", edits=(
        (_FROZEN, "    frozen = model.eval()\n"),
        ("        gm.add_submodule(conv_node.target, fold_bn_into_conv(gm.get_submodule(conv_node.target), bn))\n",
         "        conv, fused = gm.get_submodule(conv_node.target), fold_bn_into_conv(gm.get_submodule(conv_node.target), bn)\n"
         "        with torch.no_grad():\n"
         "            conv.weight.copy_(fused.weight)\n"
         "            if conv.bias is None:\n"
         "                conv.bias = nn.Parameter(fused.bias.detach().clone())\n"
         "            else:\n"
         "                conv.bias.copy_(fused.bias)\n"),
        (_CHECKED, ""))),
    Mutant("optimize_for_inference", "copies the model, but checks the result against the caller's model left in "
           "training mode", hint="something ran the caller's model in training mode",
           not_hints=("work on copy.deepcopy(model)",), edits=(
        ("        torch.testing.assert_close(gm(*example_inputs), frozen(*example_inputs), rtol=1e-4, atol=1e-5)",
         "        model(*example_inputs)  # a look at the original's output"),)),
    Mutant("optimize_for_inference", "folds a conv called from two sites", hint="called from two sites", edits=(
        ("        if len(conv_node.users) != 1 or sites[conv_node.target] != 1 or bn.running_mean is None:",
         "        if len(conv_node.users) != 1 or bn.running_mean is None:"),
        (_CHECKED, ""))),
    Mutant("optimize_for_inference", "fuses into a Linear module that is shared", hint="shared", edits=(
        ("        if len(first.users) != 1 or sites[first.target] != 1 or sites[second.target] != 1:",
         "        if len(first.users) != 1 or sites[first.target] != 1:"),)),
    Mutant("optimize_for_inference", "fuses even when the first Linear's output has two users",
           hint="erased once nothing uses it", edits=(
        ("        if len(first.users) != 1 or sites[first.target] != 1 or sites[second.target] != 1:",
         "        if sites[first.target] != 1 or sites[second.target] != 1:"),)),
    Mutant("optimize_for_inference", "no dead code elimination", hint="eliminate_dead_code", edits=(
        ("    gm.graph.eliminate_dead_code()\n", ""),)),
    Mutant("optimize_for_inference", "keeps submodules the graph no longer calls",
           hint="delete_all_unused_submodules", edits=(
        ("    gm.delete_all_unused_submodules()\n", ""),)),
    Mutant("optimize_for_inference", "its own BN fold, without eps", hint="keep bn.eps",
           not_hints=("put the copy in eval mode",), edits=(
        ("        gm.add_submodule(conv_node.target, fold_bn_into_conv(gm.get_submodule(conv_node.target), bn))\n",
         "        conv = gm.get_submodule(conv_node.target)\n"
         "        fused = copy.deepcopy(conv)\n"
         "        scale = bn.running_var.rsqrt() * (bn.weight if bn.affine else 1.0)\n"
         "        bias = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)\n"
         "        with torch.no_grad():\n"
         "            fused.weight = nn.Parameter(conv.weight * scale.reshape(-1, 1, 1, 1))\n"
         "            fused.bias = nn.Parameter((bias - bn.running_mean) * scale + (bn.bias if bn.affine else 0.0))\n"
         "        gm.add_submodule(conv_node.target, fused)\n"),
        (_CHECKED, ""))),
    Mutant("optimize_for_inference", "calls torch.fx.experimental.optimization.optimize_for_inference",
           hint="before tracing", edits=(
        (_FROZEN + "    gm = fx.symbolic_trace(frozen)\n" + _PASSES + "\n",
         "    from torch.fx.experimental.optimization import optimize_for_inference as torch_optimize\n"
         "    return torch_optimize(model)\n"),)),
]

# wrong answers only a conv output with two users, a shared first Linear, a ConvTranspose2d or F.dropout2d show
_OPT_MUTANTS += [
    Mutant("optimize_for_inference", "folds a BatchNorm2d into its conv even when the conv's output has another "
           "user", hint="used by nothing else", edits=(
        ("len(conv_node.users) != 1 or sites[conv_node.target]", "sites[conv_node.target]"), (_CHECKED, ""))),
    Mutant("optimize_for_inference", "folds a BatchNorm2d into any conv (nn.modules.conv._ConvNd), a ConvTranspose2d "
           "too", hint="fold only into an nn.Conv2d", edits=(
        ("calls_module(gm, conv_node, nn.Conv2d)", "calls_module(gm, conv_node, nn.modules.conv._ConvNd)"),
        (_CHECKED, ""))),
    Mutant("optimize_for_inference", "fuses a pair into the first Linear's module without counting the call sites, "
           "so the first one's other call computes the pair", hint="called from two sites is shared", edits=(
        ("        if len(first.users) != 1 or sites[first.target] != 1 or sites[second.target] != 1:",
         "        if len(first.users) != 1:"),
        ("        gm.add_submodule(second.target, fused)  # the second node now computes the whole pair...\n"
         "        second.args = (first.args[0],) + tuple(second.args[1:])\n"
         "        gm.graph.erase_node(first)               # ...so a longer chain keeps folding into it\n",
         "        gm.add_submodule(first.target, fused)\n"
         "        second.replace_all_uses_with(first)\n"
         "        gm.graph.erase_node(second)\n"),
        (_CHECKED, ""))),
    Mutant("optimize_for_inference", "removes F.dropout but no other functional dropout (F.dropout2d, "
           "F.alpha_dropout, torch.dropout)", hint="remove every functional dropout too", edits=(
        ("F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout, F.feature_alpha_dropout,\n"
         "                 torch.dropout)", "F.dropout,)"),)),
    Mutant("optimize_for_inference", "recognises modules by their exact type: torch.nn's subclass of nn.Linear is "
           "not fused", hint="is a subclass of nn.Linear", edits=(("isinstance(gm.get_submodule(node.target), kind)",
           "type(gm.get_submodule(node.target)) in (kind if isinstance(kind, tuple) else (kind,))"),)),
]

_OPT_ALTERNATIVES = [
    Alternative("optimize_for_inference", "one ordered sweep of small passes, no run_pipeline", _OPTIMIZE),
    Alternative("optimize_for_inference", "one Linear pair per call, torch's fuse_conv_bn_eval, run_pipeline "
                "to a fixed point, passes in a 'wrong' order", '''
from torch.nn.utils.fusion import fuse_conv_bn_eval


def _submodule(gm, node, kind):
    if node is None or not isinstance(node, fx.Node) or node.op != "call_module":
        return None
    m = gm.get_submodule(node.target)
    return m if isinstance(m, kind) else None


def fuse_one_pair(gm):
    uses = Counter(n.target for n in gm.graph.nodes if n.op == "call_module")
    for node in gm.graph.nodes:
        prev = node.args[0] if node.args else None
        a, b = _submodule(gm, prev, nn.Linear), _submodule(gm, node, nn.Linear)
        if a is not None and b is not None and len(prev.users) == 1 and uses[prev.target] == uses[node.target] == 1:
            gm.add_submodule(node.target, fuse_linear_pair(a, b))
            node.args = (prev.args[0],)
            gm.graph.erase_node(prev)
            break
    gm.recompile()
    return gm


def fold_one_bn(gm):
    uses = Counter(n.target for n in gm.graph.nodes if n.op == "call_module")
    for node in gm.graph.nodes:
        prev = node.args[0] if node.args else None
        conv, bn = _submodule(gm, prev, nn.Conv2d), _submodule(gm, node, nn.BatchNorm2d)
        if conv is not None and bn is not None and bn.running_mean is not None and len(prev.users) == 1 \\
                and uses[prev.target] == 1:
            gm.add_submodule(prev.target, fuse_conv_bn_eval(conv, bn))
            node.replace_all_uses_with(prev)
            gm.graph.erase_node(node)
            break
    gm.recompile()
    return gm


def strip_dropout(gm):
    kinds = (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout)
    functions = {F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout, F.feature_alpha_dropout,
                 torch.dropout}
    for node in list(gm.graph.nodes):
        if _submodule(gm, node, kinds) is not None or (node.op == "call_function" and node.target in functions):
            node.replace_all_uses_with(node.args[0])
            gm.graph.erase_node(node)
    gm.recompile()
    return gm


def tidy(gm):
    gm.graph.eliminate_dead_code()
    gm.delete_all_unused_submodules()
    gm.recompile()
    return gm


def optimize_for_inference(model, example_inputs):
    gm = fx.symbolic_trace(copy.deepcopy(model).train(False))
    gm = run_pipeline(gm, [fuse_one_pair, fold_one_bn, strip_dropout, tidy], max_rounds=50)
    return gm.train(False)
'''),
]

_RUN_ALTERNATIVES += [
    Alternative("run_pipeline", "torch.fx.passes.infra's PassManager: steps=max_rounds, lint as its check", '''
from torch.fx.passes.infra.pass_base import PassResult
from torch.fx.passes.infra.pass_manager import PassManager


def run_pipeline(gm, passes, max_rounds=10):
    this_round = {"start": None, "changed": False}

    def as_step(p, first, last):
        name = getattr(p, "__name__", type(p).__name__)

        def step(module):
            if first:
                this_round["start"] = module.code
            out = p(module)
            if not isinstance(out, fx.GraphModule):
                raise TypeError(f"pass {name!r} returned {type(out).__name__}, expected a GraphModule")
            out.graph.lint()
            out.recompile()
            if last:
                this_round["changed"] = out.code != this_round["start"]
            # PassManager stops after a round no pass reports as modified: the last pass reports the round's
            return PassResult(out, last and this_round["changed"])
        step.__name__ = name   # PassManager names the pass that failed by it
        return step

    manager = PassManager([as_step(p, i == 0, i == len(passes) - 1) for i, p in enumerate(passes)],
                          steps=max_rounds)
    try:
        gm = manager(gm).graph_module
    except Exception as exc:   # PassManager re-raises every error as a bare Exception that names the pass
        kind = TypeError if isinstance(exc.__cause__, TypeError) else RuntimeError
        raise kind(str(exc)) from exc
    if this_round["changed"]:
        raise RuntimeError(f"no fixed point after max_rounds={max_rounds} rounds")
    return gm
'''),
]

MUTANTS = _RUN_MUTANTS + _OPT_MUTANTS
ALTERNATIVES = _RUN_ALTERNATIVES + _OPT_ALTERNATIVES

# ------------------------------------------- right answers written with another torch.fx mechanism

ALTERNATIVES += [
    Alternative('optimize_for_inference', 'remove_dropout as an fx.Transformer that hands each dropout its input', edits=(
        ("    for node in list(gm.graph.nodes):\n"
         '        if calls_module(gm, node, modules) or (node.op == "call_function" and node.target in functions):\n'
         "            node.replace_all_uses_with(node.args[0])\n"
         "            gm.graph.erase_node(node)\n"
         "    gm.graph.lint()\n"
         "    gm.recompile()\n"
         "    return gm",
         "\n"
         "    class Bypass(fx.Transformer):\n"
         "        def call_module(self, target, args, kwargs):\n"
         "            if isinstance(self.fetch_attr(target), modules):\n"
         '                return args[0] if args else kwargs["input"]\n'
         "            return super().call_module(target, args, kwargs)\n"
         "\n"
         "        def call_function(self, target, args, kwargs):\n"
         "            if target in functions:\n"
         '                return args[0] if args else kwargs["input"]\n'
         "            return super().call_function(target, args, kwargs)\n"
         "\n"
         "    out = Bypass(gm).transform()\n"
         "    out.graph.lint()\n"
         "    out.recompile()\n"
         "    return out"),)),
]

# --------------------- wrong and right answers written from the task text alone, by someone who had not read the checks

_WRONG, _RIGHT = from_task_text("ex08_pipeline")
MUTANTS += _WRONG
ALTERNATIVES += _RIGHT
