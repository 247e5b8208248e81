"""Clauses of ex08_pipeline: run_pipeline, optimize_for_inference."""
from fxcourse_instructor.clauses import Clause

CLAUSES = [
    Clause("optimize_for_inference", "a BatchNorm2d is folded only into a conv called from one site: a shared conv "
           "keeps its BatchNorms", ("random conv net seed 5 (a shared conv", "SharedConvNet"), mutant="shared conv",
           hint="keeps its BatchNorms"),
    Clause("run_pipeline", "a pass that returns something else than a GraphModule: TypeError naming it",
           ("Knots with [cancel_double_neg, forgets_return]",), mutant="no typeerror",
           hint="raise TypeError naming the pass"),
    Clause("run_pipeline", "rounds until gm.code is unchanged (a fixed point)", ("Knots with [relu_to_f_relu]",),
           mutant="fixed point = same number of nodes"),
    Clause("run_pipeline", "iterate to the fixed point, not once", ("max_rounds=4, a pass that changes the graph on its first 3",),
           mutant="runs the passes once, no fixed point"),
    Clause("run_pipeline", "a pass may return a new GraphModule", ("Knots with [cancel_double_neg (in place), drop_mul_one",
                                                                   "Knots with [relu_to_f_relu, drop_mul_one]"),
           mutant="ignores what a pass returns"),
    Clause("run_pipeline", "lint after every pass; the error names the pass", ("",),
           mutant="lints once per round, after all passes"),
    Clause("run_pipeline", "RuntimeError after max_rounds changing rounds", ("max_rounds=4, a pass that changes the graph on its first 4",),
           mutant="returns silently after max_rounds"),
    Clause("run_pipeline", "max_rounds is the number of rounds allowed", ("max_rounds=4, a pass that changes the graph on its first 3",),
           mutant="one round too few"),
    Clause("run_pipeline", "max_rounds defaults to 10", ("default max_rounds",), mutant="max_rounds defaults to 5"),
    Clause("run_pipeline", "recompile after every pass", ("Knots with a pass that edits the graph but forgets",),
           mutant="does not recompile after each pass"),
    Clause("run_pipeline", "callable objects as passes", ("a callable object MisplaceNeg()",),
           mutant="names a pass by p.__name__, which callable objects lack"),
    Clause("optimize_for_inference", "eval mode before tracing", ("TrainBranchNet",),
           mutant="traces first, then calls .eval()"),
    Clause("optimize_for_inference", "every dropout kind", ("DropBetweenNet",),
           mutant="tests isinstance(m, nn.Dropout): misses nn.Dropout2d"),
    Clause("optimize_for_inference", "the caller's model is left as it was", ("ConvBNNet (arrives in training mode",
                                                                              "random conv net seed 5"),
           mutant="no deepcopy, folds into the caller's conv in place"),
    Clause("optimize_for_inference", "the caller's weights and buffers are left as they were (eval mode is fine)",
           ("LinearChain 16 -> 32 -> 24 -> 8", "random MLP seed 3"),
           patch=("    frozen = copy.deepcopy(model).eval()", "    model.register_buffer('optimized', torch.ones(1))\n"
                  "    frozen = copy.deepcopy(model).eval()"),
           hint="must leave its inputs"),
    Clause("optimize_for_inference", "a conv called from two sites is left alone", ("SharedConvNet",),
           mutant="folds a conv called from two sites"),
    Clause("optimize_for_inference", "a Linear called from two sites is left alone", ("SharedChainNet",),
           mutant="fuses into a Linear module that is shared"),
    Clause("optimize_for_inference", "a Linear output with two users ends the chain", ("BranchyLinearNet",),
           mutant="fuses even when the first Linear's output has two users"),
    Clause("optimize_for_inference", "dead code eliminated", ("TrainBranchNet",), mutant="no dead code elimination"),
    Clause("optimize_for_inference", "eps kept", ("ConvBNNet with tiny running variances",),
           mutant="its own BN fold, without eps"),
    Clause("optimize_for_inference", "chains of any length", ("LinearChain 16 -> 32 -> 24 -> 8",
                                                              "random MLP with linear"),
           mutant="fuses one Linear pair only"),
]

# Rules the task-text audit found with no clause.
CLAUSES += [
    Clause("run_pipeline", "with no passes at all, gm is returned", ("no passes at all",),
           patch=("    for round_number in range(1, max_rounds + 1):",
                  "    if not passes:\n        raise ValueError(\"no passes to run\")\n"
                  "    for round_number in range(1, max_rounds + 1):")),
    Clause("run_pipeline", "one round runs every pass once, in the order given", ("Knots with [cancel_double_neg (in place)",
                                                                                  "Knots with [relu_to_f_relu, drop_mul_one]"),
           patch=("        for p in passes:", "        for p in reversed(passes):")),
    Clause("optimize_for_inference", "the result and all its submodules are in eval mode",
           ("LinearChain 16 -> 32 -> 24 -> 8", "random MLP seed 3"), mutant="new modules train"),
    Clause("optimize_for_inference", "no submodule the graph no longer uses", ("ConvBNNet (arrives in training mode",
                                                                               "random MLP seed 3"),
           mutant="keeps unused modules"),
]

# Rules that wrong answers written from the task text alone showed the grader did not check.
CLAUSES += [
    Clause("run_pipeline", "a pass that returns an object that is neither None nor a GraphModule (an fx.Graph): "
           "TypeError naming it", ("Knots with [cancel_double_neg, returns_graph]",),
           mutant="raises TypeError only for a pass that returns None", hint="is broken too, not only one"),
    Clause("run_pipeline", "an nn.Module that is no GraphModule is something else than a GraphModule: TypeError "
           "naming the pass", ("Knots with [wraps_in_sequential]",),
           mutant="tests isinstance(result, nn.Module): an nn.Module that is no GraphModule gets through",
           hint="is broken too, not only one"),
    Clause("run_pipeline", "the lint checks the GraphModule the pass returned", (
        "Knots with [cancel_double_neg, misplace_neg_in_copy]",),
           mutant="lints and recompiles the GraphModule it passed in, and only then carries on with the one the "
                  "pass returned", hint="carry on with it first"),
    Clause("optimize_for_inference", "a BatchNorm2d is folded only when the conv's output is used by nothing else",
           ("ConvSkipNet",), mutant="folds a BatchNorm2d into its conv even when the conv's output has another user",
           hint="used by nothing else"),
    Clause("optimize_for_inference", "only a BatchNorm2d after a Conv2d is folded: a ConvTranspose2d keeps its "
           "BatchNorm2d", ("UpsampleBNNet",),
           mutant="folds a BatchNorm2d into any conv (nn.modules.conv._ConvNd), a ConvTranspose2d too",
           hint="fold only into an nn.Conv2d"),
    Clause("optimize_for_inference", "a pair whose first Linear is called from another site is not fused",
           ("SharedFirstLinearNet",),
           mutant="fuses a pair into the first Linear's module without counting the call sites, so the first one's "
                  "other call computes the pair", hint="called from two sites is shared"),
    Clause("optimize_for_inference", "a BatchNorm2d is folded only when the conv's output is used by nothing "
           "else (an answer that checks its own numbers, and raises)", ("ConvSkipNet",),
           patch=("len(conv_node.users) != 1 or sites[conv_node.target]", "sites[conv_node.target]"),
           hint="your own check of the numbers failed on this model"),
    Clause("optimize_for_inference", "a BatchNorm2d without running statistics stays", ("BatchStatsBNNet",),
           patch=("or sites[conv_node.target] != 1 or bn.running_mean is None:", "or sites[conv_node.target] != 1:"),
           hint="has no running statistics"),
    Clause("optimize_for_inference", "a model handed over in eval mode is not switched to training mode",
           ("SharedChainNet",), patch=("rtol=1e-4, atol=1e-5)\n", "rtol=1e-4, atol=1e-5)\n    model.train()\n"),
           hint="from eval to training mode"),
    Clause("optimize_for_inference", "a Linear is any instance of nn.Linear: torch.nn's subclass of it fuses too",
           ("SubclassLinearNet",), mutant="recognises modules by their exact type: torch.nn's subclass of nn.Linear "
           "is not fused", hint="is a subclass of nn.Linear"),
    Clause("optimize_for_inference", "every functional dropout, not only F.dropout", ("FunctionalDropoutNet",),
           mutant="removes F.dropout but no other functional dropout (F.dropout2d, F.alpha_dropout, torch.dropout)",
           hint="remove every functional dropout too"),
]

_OPTIMIZED = ("every dropout kind", "a BatchNorm2d is folded only into a conv called from one site: a shared conv keeps "
              "its BatchNorms", "chains of any length", "dead code eliminated")

# The task text, sentence by sentence: the rules of the clauses that check it, or why it is no rule.
TASK_TEXT = {
    "*": {
        "Lesson 08 ran graph passes one after another, checked the graph after each of them, and kept going until "
        "nothing changed any more.": "what the lesson taught, the motivation",
        "Here you build that machinery yourself and then use it:": "introduces the list of functions",
        "`run_pipeline(gm, passes, max_rounds=10)` runs passes in order, round after round, to a fixed point, linting "
        "after every pass and naming the pass that breaks the graph;":
            "a summary of run_pipeline, whose rules its section states",
        "`optimize_for_inference(model, example_inputs)` turns a model into an inference-ready `GraphModule`: eval "
        "mode, no dropout, BatchNorm folded into convs, Linear chains fused, no dead code.":
            "a summary of optimize_for_inference, whose rules its section states",
        "Each graded function is run in a fresh process after the setup cell and all answer cells, so everything a "
        "function needs must be defined in an answer cell (the helper passes of `optimize_for_inference` go in its own "
        "cell).": "how grading runs the answers: an answer that breaks it fails every case, no rule of its own",
        "The setup cell gives you the two pieces of algebra you wrote in exercise 06, so that this exercise is about "
        "graphs, not formulas: `fold_bn_into_conv(conv, bn)` returns a new `Conv2d` computing `bn(conv(x))` in eval "
        "mode, and `fuse_linear_pair(first, second)` returns a new `Linear` computing `second(first(x))`.":
            "describes the helpers the setup cell gives",
        "Both return new modules and never change the ones you pass in.": "describes the helpers the setup cell gives",
    },
    "run_pipeline": {
        "## 1. `run_pipeline(gm, passes, max_rounds=10) -> GraphModule`": ("max_rounds defaults to 10",),
        "A *pass* is any callable that takes a `GraphModule` and returns a `GraphModule`: either the same object, "
        "changed in place, or a new one.": ("a pass may return a new GraphModule", "callable objects as passes"),
        "Always carry on with the one it returned.": ("a pass may return a new GraphModule",
                                                      "the lint checks the GraphModule the pass returned"),
        "**Rounds.** One round runs every pass once, in the order given.":
            ("one round runs every pass once, in the order given",),
        "Remember `gm.code` before the round; when the round leaves `gm.code` unchanged, the pipeline has reached its "
        "fixed point: return `gm`.": ("rounds until gm.code is unchanged (a fixed point)", "iterate to the fixed point, not once"),
        "(Compare the code, not the node count or the objects: a pass can change a node's target without changing the "
        "count, and can return a new but identical `GraphModule`.)": ("rounds until gm.code is unchanged (a fixed point)",),
        "**After every pass**, not once per round: call `gm.graph.lint()`.": (
            "lint after every pass; the error names the pass", "the lint checks the GraphModule the pass returned"),
        "If it raises, raise a `RuntimeError` whose message names the pass: its `__name__`, or `type(p).__name__` for "
        "a callable object that has no `__name__`.":
            ("lint after every pass; the error names the pass", "callable objects as passes"),
        "Then call `gm.recompile()`, so that `gm.code` is current even when a pass forgot to.": ("recompile after every pass",),
        "**`max_rounds`.** When round number `max_rounds` still changed `gm.code`, raise a `RuntimeError` that says no "
        "fixed point was reached in `max_rounds` rounds (put the number in the message).":
            ("RuntimeError after max_rounds changing rounds", "max_rounds is the number of rounds allowed"),
        "We raise rather than return: a pipeline that never settles has a pass that undoes another, and a silently "
        "half-optimised graph would hide it.": "the motivation of the rule before it",
        "With no passes at all, the first round changes nothing: return `gm`.": ("with no passes at all, gm is returned",),
        "**A pass that returns something else** than a `GraphModule` (the pass that forgot `return gm` and returns "
        "`None`, wrong snippet 11 of the lessons) is a broken pass: raise `TypeError` with a message that names it.":
            ("a pass that returns something else than a GraphModule: TypeError naming it",
             "a pass that returns an object that is neither None nor a GraphModule (an fx.Graph): TypeError naming it",
             "an nn.Module that is no GraphModule is something else than a GraphModule: TypeError naming the pass"),
        "Run `passes` in order, round after round, until a whole round leaves gm.code unchanged.":
            ("one round runs every pass once, in the order given", "rounds until gm.code is unchanged (a fixed point)"),
        "After every pass: gm.graph.lint() (a failure raises RuntimeError naming the pass) and gm.recompile().":
            ("lint after every pass; the error names the pass", "recompile after every pass"),
        "Raises RuntimeError when round `max_rounds` still changed gm.code.": ("RuntimeError after max_rounds changing rounds",),
        "**Try it** in a new cell of your own (cells you add are never graded).": "an experiment to run, never graded",
        "`cancel_one` removes one `neg(neg(x))` per call, so it needs several rounds, and one more round that finds "
        "nothing ends the pipeline.": "describes the experiment",
        "Predict the number of calls before you run it.": "an experiment to run, never graded",
        "```python\nclass Redundant(nn.Module):\n    def forward(self, x):\n        return torch.neg(torch.neg(torch.neg(torch.neg(torch.relu(x)))))\n\ncalls = []\n\n"
        "def cancel_one(gm):\n    calls.append(\"cancel_one\")\n    for node in gm.graph.nodes:\n        inner = node.args[0] if node.args else None\n"
        "        if node.target is torch.neg and isinstance(inner, fx.Node) and inner.target is torch.neg:\n"
        "            node.replace_all_uses_with(inner.args[0])\n            gm.graph.erase_node(node)\n            gm.graph.erase_node(inner)\n"
        "            break\n    gm.recompile()\n    return gm\n\nprint(run_pipeline(fx.symbolic_trace(Redundant()), [cancel_one]).code, len(calls), \"calls\")\n```": "the experiment's code",
    },
    "optimize_for_inference": {
        "## 2. `optimize_for_inference(model, example_inputs) -> GraphModule`": ("dead code eliminated",),
        "Return a `GraphModule` that computes what `model.eval()` computes (within `rtol=1e-4, atol=1e-5`) and in "
        "which:": ("eval mode before tracing", "eps kept"),
        "**no dropout** is left: no dropout module of any kind (`nn.Dropout`, `nn.Dropout2d`, ...) and no functional "
        "dropout call (`F.dropout`, ...);": ("every dropout kind", "every functional dropout, not only F.dropout"),
        "every `BatchNorm2d` that directly follows a `Conv2d` is **folded** into it, when that conv module is called "
        "from one site only and its output is used only by the BatchNorm; a `BatchNorm2d` without running statistics "
        "(`track_running_stats=False`) normalises with each batch's own, in eval mode too, and stays;":
            ("a BatchNorm2d is folded only into a conv called from one site: a shared conv keeps its BatchNorms",
             "a conv called from two sites is left alone",
             "a BatchNorm2d is folded only when the conv's output is used by nothing else",
             "only a BatchNorm2d after a Conv2d is folded: a ConvTranspose2d keeps its BatchNorm2d",
             "a BatchNorm2d without running statistics stays"),
        "every `Linear -> Linear` **chain**, of any length, is fused into one `Linear`, when the first output has one "
        "user and neither module is called from another site;":
            ("chains of any length", "a Linear output with two users ends the chain",
             "a Linear called from two sites is left alone",
             "a pair whose first Linear is called from another site is not fused",
             "a Linear is any instance of nn.Linear: torch.nn's subclass of it fuses too"),
        "**no dead node** is left (a node whose result nobody uses), and no submodule that the graph no longer uses;":
            ("dead code eliminated", "no submodule the graph no longer uses"),
        "the result and all its submodules are in **eval mode** (modules you create start in training mode).":
            ("the result and all its submodules are in eval mode",),
        "Leave `model` itself unchanged (its weights, buffers and modes; switching it to eval mode is fine, to "
        "training mode is not).":
            ("the caller's model is left as it was",
             "the caller's weights and buffers are left as they were (eval mode is fine)",
             "a model handed over in eval mode is not switched to training mode"),
        "It may arrive in training mode: think about *when* you switch to eval mode, given what tracing freezes.":
            ("eval mode before tracing",),
        "Write your helper passes in this same cell, each a `gm -> gm` function ending with `gm.graph.lint()` and "
        "`gm.recompile()`.": "a hint of method: the helpers are not graded, the result is",
        "Running them with your `run_pipeline` means their order cannot leave a pattern behind; one ordered sweep also "
        "works if you get the order right.": "a hint of method",
        "`example_inputs` is there to check your result's numbers before you return it.": "a hint of method",
        "True when `node` calls a submodule of type `kind`.": "the docstring of a helper the cell gives, already written",
        "How many call_module nodes call each submodule.": "the docstring of a helper the cell gives, already written",
        "Every dropout (module of any dropout type, or functional) is bypassed and erased.": (
            "every dropout kind", "every functional dropout, not only F.dropout"),
        "Every BatchNorm2d right after a Conv2d that is called once and feeds only it is folded into the conv.":
            ("a conv called from two sites is left alone", "eps kept",
             "a BatchNorm2d is folded only when the conv's output is used by nothing else",
             "only a BatchNorm2d after a Conv2d is folded: a ConvTranspose2d keeps its BatchNorm2d"),
        "Every Linear -> Linear pair (first output used once, both modules called once) becomes one Linear.":
            ("a Linear output with two users ends the chain", "a Linear called from two sites is left alone",
             "a pair whose first Linear is called from another site is not fused",
             "a Linear is any instance of nn.Linear: torch.nn's subclass of it fuses too"),
        "Nodes nobody uses and submodules nobody calls are removed.":
            ("dead code eliminated", "no submodule the graph no longer uses"),
        "An inference-ready GraphModule computing model.eval(): dropout removed, Conv+BN folded, Linear chains fused, "
        "dead code eliminated.": _OPTIMIZED,
        "`model` itself is left unchanged.": ("the caller's model is left as it was",),
        "**Try it** in a new cell: which nodes of `ConvBNNet` do you expect to disappear?": "an experiment, never graded",
        "```python\nprint(node_table(fx.symbolic_trace(ConvBNNet().eval())))\nprint(node_table(optimize_for_inference("
        "ConvBNNet(), (torch.randn(2, 3, 8, 8),))))\n```": "the experiment's code",
    },
}
