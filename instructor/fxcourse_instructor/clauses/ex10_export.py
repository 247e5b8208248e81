"""Clauses of ex10_export: export_dynamic_batch, aten_histogram, parameter_placeholders, node_shapes, swap_aten_op."""
from fxcourse_instructor.clauses import Clause

CLAUSES = [
    Clause("export_dynamic_batch", "dimension 0 is dynamic: other batch sizes run", ("PatchNet(6)",
                                                                                     "RandomStack seed 5 on a batch of 3"),
           mutant="no dynamic_shapes: the program is fixed to the example's batch"),
    Clause("export_dynamic_batch", "whatever forward calls its argument", ("Tagger(8)",
                                                                           "Sequence(5, 4): only the batch dimension may vary"),
           mutant="a dynamic_shapes dict keyed by 'x': forward's argument may be called otherwise"),
    Clause("export_dynamic_batch", "only dimension 0", ("Sequence(5, 4)",),
           mutant="every dimension dynamic (Dim.AUTO): steps and features vary too"),
    Clause("export_dynamic_batch", "an ExportedProgram", ("PatchNet(6)", "RandomStack seed 5 on a batch of 3"),
           mutant="returns ep.module() instead of the ExportedProgram"),
    Clause("export_dynamic_batch", "any batch size: the batch's range has no upper bound", ("PatchNet(6)",
                                                                                            "RandomStack seed 5 on a batch of 3"),
           mutant="Dim(\"batch\", max=4): the range refuses larger batches", hint="its range ends at"),
    Clause("export_dynamic_batch", "the caller's model keeps its mode", ("Sequence(5, 4) in training mode",),
           mutant="puts the caller's model in eval mode before exporting", hint="switched from training to eval"),
    Clause("export_dynamic_batch", "exported on example_input itself, in its dtype", ("PatchNet(4) in float64",),
           mutant="exports on a fresh float32 example of batch 2 made with torch.randn", hint="export example_input as it is"),
    Clause("aten_histogram", "call_function nodes only", ("PatchNet(6)", "RandomStack seed 5"),
           mutant="counts every node, placeholders and output included"),
    Clause("aten_histogram", "keyed by str(node.target), the overload", ("PatchNet(6)", "RandomStack seed 5"),
           mutant="keys by the operator packet: aten.linear for every overload"),
    Clause("aten_histogram", "getitem and cond count", ("CondRouter(4)",),
           mutant="counts aten operators only: getitem and cond are left out"),
    Clause("aten_histogram", "the graph as it is", ("PatchNet(6)", "RandomStack seed 5"),
           mutant="decomposes to core ATen first"),
    Clause("aten_histogram", "the nodes of ep.graph only, not those of torch.cond's subgraphs", ("CondRouter(4)",),
           mutant="counts the nodes inside torch.cond's subgraphs too", hint="ep.graph only"),
    Clause("aten_histogram", "every node counts once", ("PatchNet(6)", "RandomStack seed 5"),
           mutant="counts.get(key, 1): every count stays 1", hint="the counts are not"),
    Clause("parameter_placeholders", "buffers too", ("PatchNet(6)", "Tagger(6)"),
           mutant="parameters only, no buffers"),
    Clause("parameter_placeholders", "user inputs are not in the dict", ("PatchNet(6)", "RandomStack seed 5"),
           mutant="includes the user inputs, mapped to themselves"),
    Clause("parameter_placeholders", "lifted constants are not in the dict", ("Tagger(8)", "Tagger(6)"),
           mutant="lifted constants included: every placeholder but the user inputs"),
    Clause("parameter_placeholders", "non-persistent buffers are buffers", ("Tagger(8)", "Tagger(6)"),
           mutant="zips the placeholders with the state_dict: non-persistent buffers are not in it"),
    Clause("parameter_placeholders", "the values are fully qualified names", ("PatchNet(6)", "RandomStack seed 5"),
           mutant="the attribute's own name as the value: 'weight' for conv.weight", hint="fully qualified name"),
    Clause("parameter_placeholders", "the values are names (str), not tensors", ("PatchNet(6)", "RandomStack seed 5"),
           mutant="the tensors as values, not their names", hint="not to the tensor"),
    Clause("node_shapes", "symbolic sizes as str", ("Tagger(8)", "RandomStack seed 12"),
           mutant="int() of every size: a symbolic size becomes the example's value"),
    Clause("node_shapes", "static sizes as int", ("PatchNet(6)", "RandomStack seed 5"),
           mutant="every size as a str, static ones too"),
    Clause("node_shapes", "placeholders included", ("PatchNet(6)", "RandomStack seed 5"),
           mutant="call_function nodes only: placeholders are left out"),
    Clause("node_shapes", "a node with several tensors is left out", ("Tagger(8)", "RandomStack seed 5"),
           mutant="keeps a node whose val is a list of tensors, by its first tensor"),
    Clause("node_shapes", "a symbolic size is a str, not the SymInt itself", ("Tagger(8)", "RandomStack seed 12"),
           mutant="tuple(val.shape): symbolic sizes stay torch.SymInt objects", hint="torch.SymInt"),
    Clause("swap_aten_op", "the generated code matches the graph", ("PatchNet(6)",
                                                                    "Sums(5): sum.dim_IntList -> mean.dim"),
           mutant="no recompile: the generated code still calls the old operator"),
    Clause("swap_aten_op", "other overloads stay", ("Sums(5)",),
           mutant="matches the operator packet: every overload of sum is swapped"),
    Clause("swap_aten_op", "every matching node", ("Tagger(8)", "Tagger(6): relu -> sigmoid"),
           mutant="swaps the first matching node only"),
    Clause("swap_aten_op", "ep itself changes", ("PatchNet(6)", "Sums(5): sum.dim_IntList -> mean.dim"),
           mutant="edits ep.module(), a copy, and returns ep unchanged"),
    Clause("swap_aten_op", "every node keeps its name and place", ("PatchNet(6)",
                                                                   "Sums(5): sum.dim_IntList -> mean.dim"),
           mutant="inserts a new node per match and erases the old one: names change", hint="keep every node"),
    Clause("swap_aten_op", "other operators stay: no decomposition", ("PatchNet(6)",
                                                                      "Sums(5): sum.dim_IntList -> mean.dim"),
           mutant="decomposes to core ATen first", hint="operators the program did not call"),
    # rules the answers written from the task text alone broke
    Clause("export_dynamic_batch", "the batch has no upper bound (a Dim without max=)", ("PatchNet(6)",
                                                                                         "RandomStack seed 5 on a batch of 3"),
           mutant="max bound: Use Dim('batch') without max=.", hint="without max="),
    Clause("export_dynamic_batch", "the model is exported in the mode it is in, not as an eval copy",
           ("PatchNet(4) in training mode",),
           mutant="exports eval copy: Export the model in its own mode; an eval copy of a training model computes "
                  "with running statistics instead of batch statistics.", hint="an eval-mode export"),
    Clause("export_dynamic_batch", "example_input is exported as it is, in its own dtype", ("PatchNet(4) in float64",),
           mutant="casts float: Do not convert the example (.float()); export it as it is.",
           hint="in its own dtype"),
    Clause("node_shapes", "a 0-d tensor has shape ()", ("PatchNet(6)", "CondRouter"),
           mutant="skips scalars: A 0-d tensor (the result of sum()) is a tensor too: its shape is ().",
           hint="a 0-d tensor is a tensor too"),
    Clause("node_shapes", "the shapes are read from the fake tensors of ep.graph, the program is not run",
           ("PatchNet(6)", "RandomStack seed 5"),
           mutant="runs program: Read node.meta['val'], no real run: a run gives concrete sizes, not the symbols.",
           hint="do not run the program"),
    Clause("swap_aten_op", "nodes of ep.graph only: the branches of torch.cond stay", ("CondRouter(4)",),
           mutant="also subgraphs: Change ep.graph only; the graphs of torch.cond's branches are other graphs.",
           hint="swap the nodes of ep.graph only"),
]

# Rules that wrong answers once with full marks broke, each with the hidden case that now catches it.
CLAUSES += [
    Clause("aten_histogram", "the key is str(node.target) itself: an operator of another namespace keeps its own",
           ("Namesakes(4)",), mutant="writes 'aten.' before every operator overload's name, whatever its namespace",
           hint="is an operator of its own namespace"),
    Clause("parameter_placeholders", "the qualified name of what the placeholder carries, not one rebuilt from the "
           "placeholder's name", ("Namesakes(4)",),
           mutant="finds the qualified name whose dots made underscores give the placeholder's",
           hint="does not say where its dots were"),
    Clause("swap_aten_op", "only the overload old itself: an operator of the same name in another namespace stays",
           ("Namesakes(4): relu -> sigmoid",), mutant="matches old's name and overload, whatever the namespace",
           hint="another operator, in another namespace"),
]

# The task text, sentence by sentence: the rules of the clauses that check it, or why it is no rule.
TASK_TEXT = {
    '*': {
        'After lesson 10 you can export a model, read its graph signature, its ATen targets and the fake tensors in '
        '`node.meta["val"]`.':
            "what the lesson taught, the motivation",
        'Here you write five small tools on `ExportedProgram`s:':
            "introduces the list of functions",
        '`export_dynamic_batch`: export with a dynamic batch dimension;':
            "a summary of export_dynamic_batch, whose rules its section states",
        '`aten_histogram`: how often each ATen operator overload is called;':
            "a summary of aten_histogram, whose rules its section states",
        '`parameter_placeholders`: which placeholder carries which parameter or buffer;':
            "a summary of parameter_placeholders, whose rules its section states",
        "`node_shapes`: every node's shape, read without running the program;":
            "a summary of node_shapes, whose rules its section states",
        '`swap_aten_op`: a pass on the exported graph that swaps one operator overload for another.':
            "a summary of swap_aten_op, whose rules its section states",
    },
    'export_dynamic_batch': {
        '## 1. `export_dynamic_batch(model, example_input) -> ExportedProgram`':
            ("an ExportedProgram",),
        "Export `model` on `example_input` (one tensor, the model's only input) with **dimension 0 dynamic**, so "
        'that `ep.module()` runs on other batch sizes, batches of 1 included.':
            ("dimension 0 is dynamic: other batch sizes run", "any batch size: the batch's range has no upper bound"),
        'Only dimension 0: the other sizes stay those of the example, and the batch has no upper bound (a `Dim` '
        'without `max=`).':
            ("only dimension 0", "the batch has no upper bound (a Dim without max=)"),
        "The models' `forward` methods do not all call their argument `x`.":
            ("whatever forward calls its argument",),
        'Export `example_input` itself (a float64 model gets a float64 example) and leave the model as it is, in the '
        'mode it is in.':
            ('exported on example_input itself, in its dtype', 'example_input is exported as it is, in its own dtype',
             "the caller's model keeps its mode", 'the model is exported in the mode it is in, not as an eval copy'),
        'Return the `ExportedProgram` itself, not `ep.module()`.':
            ("an ExportedProgram",),
        'torch.export.export of `model` on `example_input`, with dimension 0 of the input dynamic.':
            ("dimension 0 is dynamic: other batch sizes run",),
    },
    'aten_histogram': {
        '## 2. `aten_histogram(ep) -> dict[str, int]`':
            ("every node counts once",),
        'Count the `call_function` nodes of `ep.graph` per `str(node.target)`, for example `{"aten.conv2d.default": '
        '2, "aten.linear.default": 1, ...}`: only targets present, every `call_function` node (`operator.getitem` '
        'and `torch.cond` included), the graph as it is (no decomposition).':
            ('call_function nodes only', 'keyed by str(node.target), the overload', 'getitem and cond count',
             'the graph as it is', 'every node counts once',
             "the key is str(node.target) itself: an operator of another namespace keeps its own"),
        "Only the nodes of `ep.graph` itself: the nodes inside `torch.cond`'s branches belong to its subgraphs and "
        'are not counted.':
            ("the nodes of ep.graph only, not those of torch.cond's subgraphs",),
        'Count of call_function nodes per str(node.target), only targets present.':
            ("call_function nodes only", "keyed by str(node.target), the overload"),
    },
    'parameter_placeholders': {
        '## 3. `parameter_placeholders(ep) -> dict[str, str]`':
            ("the values are names (str), not tensors",),
        'Map each placeholder that carries a **parameter or a buffer** to the fully qualified name (a `str`, with '
        'the submodules\' path) of what it carries: `{"p_conv_weight": "conv.weight", "b_bn_running_mean": '
        '"bn.running_mean", ...}`.':
            ("buffers too", "the values are fully qualified names", "the values are names (str), not tensors",
             "the qualified name of what the placeholder carries, not one rebuilt from the placeholder's name"),
        'User inputs are not in the dict, and neither are lifted constants (a plain tensor attribute of a module '
        'becomes a placeholder `c_...`).':
            ("user inputs are not in the dict", "lifted constants are not in the dict"),
        'Non-persistent buffers are buffers.':
            ("non-persistent buffers are buffers",),
        'Placeholder name -> fully qualified name of the parameter or buffer it carries.':
            ("the values are fully qualified names", "buffers too"),
    },
    'node_shapes': {
        '## 4. `node_shapes(ep) -> dict[str, tuple]`':
            ("static sizes as int",),
        'For every node whose `node.meta["val"]` is a tensor (placeholders included), its shape as a tuple: a static '
        'size as an `int`, a symbolic size (a `torch.SymInt`, in a program with a dynamic dimension) as `str(size)`, '
        'for example `("s35", 8)`.':
            ('placeholders included', 'static sizes as int', 'symbolic sizes as str',
             'a symbolic size is a str, not the SymInt itself', 'a 0-d tensor has shape ()'),
        'Read the shapes from the fake tensors: do not run the program.':
            ("the shapes are read from the fake tensors of ep.graph, the program is not run",),
        'Nodes whose `val` is not one tensor (a list of tensors, nothing) are left out.':
            ("a node with several tensors is left out",),
        'Node name -> shape of its meta["val"] tensor: ints where static, str(size) where symbolic.':
            ("static sizes as int", "symbolic sizes as str"),
    },
    'swap_aten_op': {
        '## 5. `swap_aten_op(ep, old, new) -> ExportedProgram`':
            ("ep itself changes",),
        'Every `call_function` node of `ep.graph` whose target is the overload `old` (for example '
        '`aten.relu.default`) targets `new` afterwards.':
            ("every matching node", "nodes of ep.graph only: the branches of torch.cond stay",
             "only the overload old itself: an operator of the same name in another namespace stays"),
        'Nothing else changes: other overloads of the same operator (`aten.sum.default` next to '
        '`aten.sum.dim_IntList`) and other operators stay, every node keeps its name and place.':
            ("other overloads stay", "other operators stay: no decomposition", "every node keeps its name and place",
             "only the overload old itself: an operator of the same name in another namespace stays"),
        'The graph lints, the generated code matches the graph (`ep.graph_module.recompile()`), and the returned '
        'program runs (`ep.module()`).':
            ("the generated code matches the graph",),
        'Changing `ep` and returning it is fine.':
            ("ep itself changes",),
        'Every call_function node targeting the overload `old` targets `new`; lint, recompile, return ep.':
            ("every matching node", "the generated code matches the graph", "ep itself changes"),
    },
}
