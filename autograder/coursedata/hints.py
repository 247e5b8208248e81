"""Progressive hints, kept as data: for each exercise and graded function, hints from a nudge to nearly the answer.

Format (add an exercise by adding one entry; nothing else needs to change)::

    HINTS = {
        "exNN_topic": {                      # the assignment id, as in solutions/exNN_topic/
            "function_name": [               # a graded function of that exercise (a key of its CHECKS)
                "hint 1: a nudge: which object or API to look at",
                "hint 2: the pieces: which attributes, calls or cases matter",
                "hint 3: nearly the answer: the shape of the code, never the full solution",
            ],
        },
    }

Rules:

* Three hints per function, in that order; `hint(fn)` in a notebook and `fxcourse hint NOTEBOOK FN` show the
  next one not yet shown, so each must make sense after the ones before it.
* Plain text, one to three short sentences each. Put code in `backticks`: the notebook shows it as code.
* Quiz questions get no progressive hints: a hint there gives the answer away, and keys live only in
  solutions/.
* Every function named here must be a graded function of its exercise (tests/test_inline.py checks this).
* Part III's exercises are in autograder/coursedata/hints_part3.py, in the same format (HINTS holds them all).
"""
from __future__ import annotations

from autograder.coursedata.hints_part3 import PART_III

__all__ = ["HINTS"]

HINTS: dict[str, dict[str, list[str]]] = {
    "ex01_tracing": {
        "node_summary": [
            "A GraphModule keeps its graph in `gm.graph`, and `gm.graph.nodes` yields every node in graph "
            "order, placeholder and output included.",
            "Each node carries two strings you need: `node.op` (for example 'call_module') and `node.name` "
            "(for example 'fc1').",
            "Build one tuple per node, op first: a list comprehension over `gm.graph.nodes` that makes "
            "`(node.op, node.name)`.",
        ],
        "count_nodes": [
            "Start from the same node list: `gm.graph.nodes`. Counting every node is one call of `len(...)`.",
            "`op=None` means every node; with `op` given, count only the nodes whose `node.op == op`.",
            "One expression covers both cases: `sum(1 for node in gm.graph.nodes if <condition>)`, where the "
            "condition is always true when `op is None`.",
        ],
        "outputs_match": [
            "Run both modules on the same `*inputs` inside `with torch.no_grad():` and keep the two outputs.",
            "Outputs of different shapes never match, even when they broadcast: compare `a.shape == b.shape` "
            "first. With `atol == 0` the outputs must be exactly equal.",
            "Exact: `torch.equal(a, b)`. Within a tolerance: `torch.allclose(a, b, rtol=0, atol=atol)`. Both "
            "return a Python bool.",
        ],
    },
        "ex02_nodes": {
            "op_histogram": [
                "Walk `gm.graph.nodes` and look at each node's `node.op`. The answer maps each opcode to the "
                "number of nodes that have it.",
                "Every node counts, including `placeholder`, `get_attr` and `output`. Only opcodes that occur "
                "become keys, so there are no zeros. Count nodes, not submodules: a module called twice is two "
                "`call_module` nodes.",
                "Start from an empty dict and add one to the entry of `node.op` for each node (`dict.get` with "
                "a default of 0 helps). Return the dict itself, not a sorted list of its items.",
            ],
            "called_modules": [
                "Only `call_module` nodes call submodules, so keep the nodes of `gm.graph.nodes` whose "
                "`node.op` is 'call_module'.",
                "For a call_module node, the qualified name is in `node.target`. `node.name` is a different "
                "string, and for nested modules they differ. Don't list what `gm.named_modules()` holds: a "
                "registered module the graph never calls is left out, and a module called twice is listed twice.",
                "Keep graph order and repeats: a list comprehension over `gm.graph.nodes` that keeps "
                "`node.target` for every `call_module` node, with no set, no sorting and no module objects.",
            ],
            "consumers": [
                "First find the node whose `node.name` equals `node_name`. Its `node.users` holds the nodes "
                "that read it.",
                "`node.users` covers uses inside lists and keyword arguments, and the output node, but it keeps "
                "them in creation order, not graph order. Look nodes up by `node.name`, never by "
                "`node.target`. An unknown name raises `KeyError` with the name in its message.",
                "Build a name-to-node dict from `gm.graph.nodes` and raise `KeyError(f'no node named "
                "{node_name!r}')` when the name is missing. Then walk `gm.graph.nodes` again and keep `n.name` "
                "for every `n` in the found node's `users`.",
            ],
            "graph_depth": [
                "You want the longest path, and `gm.graph.nodes` is already in topological order: every node "
                "comes after its inputs. One forward loop over the nodes is enough, with no graph search.",
                "Paths start only at placeholders, and with several inputs any of them can start one. A "
                "`get_attr` chain or a `torch.ones(...)` with no inputs starts nothing. Count edges, including "
                "the edge into `output`. Dead branches never reach the output, so they add nothing.",
                "Keep a dict `depth`. Placeholders get 0. Any node with inputs in `depth` (use "
                "`node.all_input_nodes`, not just `args[0]`) gets 1 plus the largest of theirs; other nodes "
                "get no entry. Return the depth of the `output` node.",
            ],
        },
        "ex03_replacing": {
            "swap_function": [
                "Loop over `gm.graph.nodes` and look at `node.op` and `node.target`. You want the "
                "`call_function` nodes whose target is the very object `old`.",
                "Compare with `is`, never by `__name__`: `torch.relu` and `F.relu` are both named 'relu'. "
                "Method calls such as `.sigmoid()` are `call_method` nodes and stay. Args and kwargs stay as "
                "they are. If no node targets `old`, nothing changes.",
                "Set `node.target = new` on every match, not only the first, and never wrap it in a lambda. "
                "Then call `gm.graph.lint()` and `gm.recompile()` (the grader reads `gm.code`) and return "
                "`gm`.",
            ],
            "relu_to_clamp": [
                "Use the same loop as in `swap_function`, but changing the target is not enough. `torch.clamp` "
                "needs its bounds, so you also rewrite the node's `args` and `kwargs`.",
                "Match only `call_function` nodes whose target `is torch.relu`. `F.relu`, `torch.relu_`, "
                "`nn.ReLU` modules and `.relu()` stay as they are. The input is `node.args[0]`, or "
                "`node.kwargs['input']` when it was passed by keyword. Change the relu node itself; don't add a "
                "clamp after it.",
                "For each match, set `node.target = torch.clamp`, `node.args = (x,)` and `node.kwargs = "
                "{'min': 0, 'max': max_value}`. Don't use `F.hardtanh` or a hard-coded 6. Then lint, recompile "
                "and return `gm`. An int `max_value` works as it is.",
            ],
            "relu_to_gelu": [
                "A ReLU can appear under three opcodes: `call_function`, `call_module` and `call_method`. Write a "
                "small `is_relu(node)` test that covers all three, then replace every match with a new "
                "`F.gelu` node.",
                "Functions: `torch.relu`, `torch.relu_` and `F.relu`, compared by identity. Methods: the "
                "targets 'relu' and 'relu_'. Modules: `isinstance(gm.get_submodule(node.target), nn.ReLU)`, "
                "which also finds nested, in-place and twice-called ReLUs. Never edit the `nn.ReLU` modules: "
                "the original model shares them.",
                "Loop over `list(graph.nodes)`. For each ReLU, create `graph.call_function(F.gelu, (x,))` "
                "inside `graph.inserting_after(node)`, with no kwargs (no `inplace`; the default is exact "
                "GELU). Then `replace_all_uses_with` and `erase_node`, and finish with "
                "`delete_all_unused_submodules()`, lint and recompile.",
            ],
            "linear_to_matmul": [
                "Each `nn.Linear` call becomes several nodes: `get_attr` nodes for its parameters and "
                "`call_function`/`call_method` nodes for the math. Create them inside "
                "`graph.inserting_before(node)`.",
                "The get_attr targets are `node.target` plus '.weight' or '.bias' (e.g. 'layers.0.weight'), so "
                "they read the same `nn.Parameter` objects. Don't clone them, wrap them in new Parameters, "
                "transpose them in place or delete the Linear. If `bias=False`, there is no add.",
                "For each Linear node: get_attr the weight, transpose it with a `call_method` 't' node, "
                "`torch.matmul` the input with it (not `torch.mm`, which is 2-d only), then `torch.add` the "
                "get_attr bias if there is one. Rewire the uses, erase the node, lint and recompile. A Linear "
                "called twice has two nodes to replace.",
            ],
        },
        "ex04_wrapping": {
            "trace_gated": [
                "The trace must not step into `gate`: make it a leaf function, so each call becomes one "
                "`call_function` node. The lesson showed two tools: `fx.wrap` and the `autowrap_functions` "
                "argument of `fx.Tracer`.",
                "`fx.wrap('gate')` belongs at the top level of the cell, outside the def; try it inside and read "
                "the error. `autowrap_modules` is for modules such as `math`. Trace the `model` you "
                "are given, not a new GatedNet, and don't redefine `gate`. Hidden models call it twice, inside "
                "submodules, with two inputs.",
                "With a tracer, `graph = tracer.trace(model)` returns a `Graph`. Wrap it with "
                "`fx.GraphModule(tracer.root, graph, name)` and return that. With `fx.wrap('gate')` above the "
                "def, a plain `fx.symbolic_trace(model)` is enough.",
            ],
            "trace_with_leaves": [
                "Subclass `fx.Tracer` and override `is_leaf_module(self, m, module_qualified_name)`. It "
                "decides, for each submodule the trace reaches, whether it stays one `call_module` node.",
                "Return True when `isinstance(m, tuple(leaf_types))`. A list must become a tuple first, and "
                "subclasses and deeply nested instances count. Otherwise return `super().is_leaf_module(...)`, "
                "so that `nn.Linear` stays a leaf and your own modules are traced through.",
                "Define the subclass inside the function so it sees `leaf_types`, then `graph = "
                "tracer.trace(model)` and return `fx.GraphModule(tracer.root, graph, ...)`. Hidden cases "
                "include `leaf_types=()` (a plain trace), `[Block]` as a list, and `(nn.Sequential,)`.",
            ],
            "trace_specialized": [
                "Start with `fx.symbolic_trace(model, concrete_args=flags)`. Then print `gm.code` and call "
                "`gm(x)`: it fails, and the code shows why.",
                "Each fixed flag leaves a guard placeholder in the signature, such as `use_extra_1`, and a check "
                "on it (`None` values too). Compare that placeholder's default with the value you fixed. A "
                "placeholder's default lives in its `node.args`.",
                "Loop over the placeholder nodes. For each one whose name is a flag name plus a `_N` suffix, "
                "set `node.args = (flags[flag],)`, matching by name, never by position. Keep every tensor "
                "placeholder, even unused ones. Then `gm.graph.lint()` and `gm.recompile()`, and return `gm`.",
            ],
        },
        "ex05_inserting": {
            "insert_after": [
                "Find the node by `node.name`. Then create the new node with `gm.graph.call_function(fn, "
                "(node,))` inside `with gm.graph.inserting_after(node):`, so it lands right after `node`.",
                "`node.replace_all_uses_with(new)` rewires every user: the output node, a user that reads it "
                "twice, uses inside lists. But by then the new node is itself a user of `node`; print "
                "`new.args` after the call to see what happened to it. An unknown name raises `KeyError` with "
                "that name, not StopIteration.",
                "Pass `delete_user_cb=lambda user: user is not new` so the new node keeps reading `node`. Then "
                "call `gm.graph.lint()` and `gm.recompile()` and return `gm`. Look the node up with "
                "`next(..., None)` and raise `KeyError(node_name)` when nothing is found.",
            ],
            "remove_dropout": [
                "For each dropout node, make its users read the tensor it receives, then remove it with "
                "`replace_all_uses_with` and `gm.graph.erase_node`. Loop over `list(gm.graph.nodes)`, since "
                "you erase while looping.",
                "Find modules by type with `isinstance(gm.get_submodule(node.target), DROPOUT_MODULES)`: "
                "Dropout2d and AlphaDropout don't subclass nn.Dropout. Find functions with `node.target in "
                "DROPOUT_FUNCTIONS`, never by name. The input is `node.args[0]`, or `node.kwargs['input']` "
                "when it was passed by keyword.",
                "After the loop, call `gm.delete_all_unused_submodules()`; a module called from two sites goes "
                "only when both calls are gone. Then lint, recompile and return `gm`. Don't swap in "
                "`nn.Identity` or only call `eval()`: the nodes themselves must be gone.",
            ],
            "record_shapes": [
                "You need every node's real value while `gm` runs. Subclass `fx.Interpreter` and override "
                "`run_node`, or run `ShapeProp(gm).propagate(*inputs)` and read `node.meta`.",
                "Keep a node only when `isinstance(value, torch.Tensor)`. Placeholders and `get_attr` "
                "parameters are kept. The int of `x.size(0)`, a `torch.Size` and the tuple from `chunk` are "
                "not, and neither is the `output` node (with ShapeProp it has a tensor_meta too). Key by "
                "`node.name`.",
                "In `run_node(self, n)`, get `value = super().run_node(n)`, record `tuple(value.shape)` under "
                "`n.name` when it qualifies, and return `value`. Run it with `YourInterpreter(gm).run(*inputs)` "
                "under `torch.no_grad()`. A scalar tensor gives `()`.",
            ],
            "linear_flops": [
                "Rows depend on the shape each Linear call actually receives, so run the graph. "
                "`ShapeProp(gm).propagate(*inputs)` stores every node's shape in `node.meta['tensor_meta']`.",
                "Count only `call_module` nodes whose module is an `nn.Linear`, found by type; `F.linear` calls "
                "don't count, and a Linear called three times counts three times. Read the shape of "
                "`node.args[0]`, not the model input, since a view may come first. Rows is the product of all "
                "dims but the last (1 for 1-D).",
                "Add up `2 * math.prod(shape[:-1]) * lin.in_features * lin.out_features` over those nodes, "
                "where `lin = gm.get_submodule(node.target)`. Return a Python int, not a float.",
            ],
        },
        "ex06_fusing": {
            "fuse_linear_pair": [
                "Expand `second(first(x)) = W2 (W1 x + b1) + b2` and collect the terms. The result is one "
                "affine map, with a new weight and a new bias.",
                "The weight is `second.weight @ first.weight`, in that order, with shape (out2, in1). The bias "
                "is `second.weight @ b1 + b2`, where a missing bias counts as zero. Hidden cases use "
                "`bias=False` on either layer or both, and float64 layers.",
                "Build `nn.Linear(first.in_features, second.out_features, ...)` with the layers' dtype. Fill it "
                "with `copy_` of detached tensors under `torch.no_grad()`. Return that one new layer, not a "
                "Sequential, and never edit `first` or `second`.",
            ],
            "fuse_consecutive_linears": [
                "Collect the chains first, then rewrite. Walk `gm.graph.nodes` in order; from each Linear call "
                "not already in a chain, follow its single user for as long as that user is the next Linear "
                "call.",
                "Find Linears with `isinstance(gm.get_submodule(node.target), nn.Linear)`, never by name. A "
                "chain goes on only while `len(node.users) == 1` and that user is a Linear; a fork, a ReLU or "
                "`F.linear` ends it. Chains can have any length, and a module may also be called elsewhere.",
                "For each chain of two or more, fold the modules with `fuse_linear_pair` and register the result "
                "under a fresh name with `gm.add_submodule`, never over the old name. Insert one "
                "`call_module` on the chain's input, `replace_all_uses_with` it, and erase the old nodes "
                "last-first. Then clean up, lint and recompile.",
            ],
            "fold_bn_into_conv": [
                "In eval mode, BatchNorm is a per-channel affine map: `scale = gamma / sqrt(running_var + "
                "eps)`, applied with a shift. Fold it into each output channel of the conv.",
                "Scale the weight along the output channels (reshape to `(-1, 1, 1, 1)`). The new bias is `(b - "
                "running_mean) * scale + beta`. No conv bias means b = 0; `affine=False` means gamma = 1 and "
                "beta = 0. Use the running statistics and `bn.eps` (hidden cases: eps=0.1, tiny variances).",
                "Start from `copy.deepcopy(conv)`: it keeps stride, padding, dilation, groups and dtype, and "
                "leaves `conv` untouched. Under `torch.no_grad()`, overwrite its weight and set `fused.bias = "
                "nn.Parameter(...)`, since it always gets a bias.",
            ],
            "fuse_conv_bn": [
                "Check the mode before anything else. Then find the `BatchNorm2d` call_module nodes whose "
                "`args[0]` is a `Conv2d` call_module node, and fold each valid pair with `fold_bn_into_conv`.",
                "Raise `ValueError` that names the culprit when `gm` or any BatchNorm2d the graph calls is in "
                "training mode (hidden: only bn2). Skip a pair when the conv output has another user, the conv "
                "is called from two or more sites, or `bn.running_mean is None`.",
                "Count call sites with a `Counter` of call_module targets. For a valid pair, "
                "`gm.add_submodule(conv_node.target, folded)`; this is safe because the conv has one site. Then "
                "make the BN's users read the conv node, erase the BN node, and clean up, lint and recompile.",
            ],
        },
        "ex07_qat": {
            "prepare_for_qat": [
                "The FX flow does this in one call: `prepare_qat_fx(model, qconfig_mapping, example_inputs)` "
                "from `torch.ao.quantization.quantize_fx`.",
                "Use the QAT mapping for the backend you are given: `get_default_qat_qconfig_mapping(backend)`. "
                "Not the post-training mapping, and not a mapping with only a global qconfig, since sigmoid and "
                "tanh need its fixed-qparams entries. `prepare_fx` inserts observers, not fake-quants.",
                "Call `model.train()` before preparing (it returns the model). Tracing freezes "
                "`F.dropout(training=self.training)`, and the hidden models arrive in eval mode. Then return "
                "what `prepare_qat_fx` gives you.",
            ],
            "fake_quant_count": [
                "Count nodes of `prepared.graph`, not modules. Only `call_module` nodes qualify; look each "
                "one's module up with `prepared.get_submodule(node.target)`.",
                "Test `isinstance(module, FakeQuantizeBase)`. It covers FakeQuantize, "
                "FusedMovingAvgObsFakeQuantize and the fixed-qparams kind, and rejects observers. Never match "
                "by name (one hidden observer is named 'fake_quant_stats'). The `weight_fake_quant` inside a QAT "
                "layer is no node.",
                "A fake-quant called from two nodes counts twice, so don't collect a set of targets. Sum 1 over "
                "the nodes that are `call_module` with a `FakeQuantizeBase` module, and return an int. A plain "
                "traced model gives 0.",
            ],
            "qat_finetune": [
                "This is an ordinary PyTorch training loop on `prepared`: `torch.optim.SGD(prepared.parameters(), "
                "lr=lr)`, cross-entropy, `backward()` and `step()`.",
                "Call `prepared.train()` first (hidden: a model handed over in eval mode), and don't switch "
                "back. Do exactly `steps` steps, where step `i` uses `batches[i % len(batches)]`. Cycle when "
                "steps exceeds the list, use only the first batches when it is smaller, and do nothing for 0.",
                "In `for i in range(steps)`: zero the gradients, compute `F.cross_entropy(prepared(x), y)`, "
                "`backward()`, `step()`. Use exactly one forward pass per step, with no extra pass to print the "
                "loss. Train in place and return `prepared` itself.",
            ],
            "to_int8": [
                "Use `convert_fx` from `torch.ao.quantization.quantize_fx`. It turns a prepared model into one "
                "with quantized modules, and its return value is your answer.",
                "Use `convert_fx`, not `convert_to_reference_fx` or dynamic quantization. Use what it returns: "
                "on torch 2.13 it also rewrites its argument. The result must be in eval mode. Don't run the "
                "prepared model on new data first; its observers would move.",
                "Convert `copy.deepcopy(prepared).eval()`, then call `.eval()` on the converted model and "
                "return it. Calling `eval()` on the prepared model after converting comes too late.",
            ],
            "state_dict_bytes": [
                "Serialize with `torch.save(model.state_dict(), buf)` into an in-memory `buf = io.BytesIO()`, "
                "not into a file and not with `pickle`.",
                "Save `model.state_dict()`, not the whole model. Buffers count too, and even an empty "
                "state_dict (`nn.ReLU()`) writes some bytes. Don't add up tensor sizes or use "
                "`sys.getsizeof`; let torch.save decide (tied weights are stored once).",
                "After saving, the size is `buf.tell()` or `len(buf.getvalue())`. Don't `seek(0)` first. Return "
                "it as an `int` in bytes, not kilobytes.",
            ],
        },
        "ex08_pipeline": {
            "run_pipeline": [
                "Use two loops: rounds 1 to `max_rounds` outside, `passes` inside. Save `gm.code` at the start "
                "of each round and compare it at the end.",
                "Always continue with what a pass returns (`gm = p(gm)`). Right after each pass, run "
                "`gm.graph.lint()` in a `try` and raise a `RuntimeError` that names the pass. For callable "
                "objects, use `getattr(p, '__name__', type(p).__name__)`. Then `gm.recompile()`.",
                "Return `gm` when a round leaves `gm.code` unchanged; compare code, not node counts or objects. "
                "No passes returns in round 1. Past `max_rounds` (default 10), raise a `RuntimeError` with the "
                "number: with 4, a pass that changes 3 times settles, and one that changes 4 times raises.",
            ],
            "optimize_for_inference": [
                "Take `copy.deepcopy(model)` and put it in eval mode before `fx.symbolic_trace`; tracing "
                "freezes `if self.training` and `F.dropout(training=...)`. Then run helper passes with your "
                "`run_pipeline`: dropout, conv+BN, Linear chains, dead code.",
                "Remove every dropout module kind and functional call. Fold conv+BN (keep `eps`) and fuse "
                "Linears only when the first output has one user and each module has one call site. For dead "
                "code, use `graph.eliminate_dead_code()` and `gm.delete_all_unused_submodules()`.",
                "Fuse one pair at a time into the second module, so that repeated rounds fold longer chains. "
                "Let the fixed point sort out the order (e.g. dropout between conv and BN). Then `gm.eval()` "
                "(new modules start in training mode), check against the copy on `example_inputs`, and return "
                "`gm`.",
            ],
        },
        "ex09_dynamo": {
            "capture_graphs": [
                "A backend is a plain function `(gm, example_inputs) -> callable`: give `torch.compile(fn, "
                "backend=...)` one of your own that keeps each `gm` it receives in a list.",
                "`torch.compile` is lazy: dynamo captures only when the compiled function is called, so call it "
                "once on `*inputs`. The backend must return something that runs the graph unchanged: `gm.forward`.",
                "Start with `torch._dynamo.reset()`, then build the list, the backend that appends to it, the "
                "compiled function, one call, and return the list. No `fullgraph=True`: a graph break means "
                "several graphs, and you want them all, in order.",
            ],
            "graph_break_count": [
                "Dynamo can tell you itself: `torch._dynamo.explain(fn)` returns a function that compiles and runs "
                "`fn` and reports what happened.",
                "The report (that function called with the inputs) has `graph_count` and `graph_break_count`: a break "
                "is where one graph ends and the next begins, so the second is the first minus one.",
                "`torch._dynamo.reset()` first, then return the report's `graph_break_count` as an `int`.",
            ],
            "compile_with_pass": [
                "Write a backend that calls `pass_fn` on the `gm` it receives, and hand it to `torch.compile(model, "
                "backend=...)`. Return what `torch.compile` returns; do not call it yourself.",
                "A pass may edit `gm` in place or build a new GraphModule: run what `pass_fn(gm)` returns. Dynamo "
                "calls the backend once per graph (graph breaks, recompiles on a new shape), so every graph goes "
                "through the pass.",
                "The backend is two lines: `new = pass_fn(gm)` and `return new.forward`. No `fullgraph=True` (a "
                "model with a break would raise), and no inductor.",
            ],
        },
        "ex10_export": {
            "export_dynamic_batch": [
                "`torch.export.export(model, args, dynamic_shapes=...)` takes the inputs as a tuple, and "
                "`dynamic_shapes` says which dimensions of each input may vary, each marked with a `Dim`.",
                "Give `dynamic_shapes` one entry per input, in the same structure as `args`: for the one input, a "
                "dict from dimension number to `Dim(\"batch\")`. A tuple spares you forward's argument name, which "
                "is not always `x`.",
                "Export with `dynamic_shapes` a tuple of one dict, `{0: Dim(\"batch\")}`, and return the "
                "`ExportedProgram` itself (not `.module()`).",
            ],
            "aten_histogram": [
                "Walk `ep.graph.nodes` and look at the nodes whose `op` is `\"call_function\"`; their `target` is "
                "an operator overload such as `torch.ops.aten.linear.default`.",
                "The key is `str(node.target)` (`\"aten.linear.default\"`), not the node's name and not the "
                "overload packet. `operator.getitem` and `cond` are call_function nodes too, and count.",
                "A dict from each key to how many call_function nodes have it (`counts.get(key, 0)` helps), on "
                "`ep.graph` as it is (no `run_decompositions()`).",
            ],
            "parameter_placeholders": [
                "The placeholders carry no values and their names are only hints: `ep.graph_signature` says what "
                "each one stands for.",
                "`graph_signature.inputs_to_parameters` and `inputs_to_buffers` each map a placeholder name to a "
                "qualified name. User inputs and lifted constants (`inputs_to_lifted_tensor_constants`) stay out.",
                "Merge the two dicts into one and return it: `{**sig.inputs_to_parameters, **sig.inputs_to_buffers}`.",
            ],
            "node_shapes": [
                "Export ran the model on fake tensors and kept each node's result in `node.meta[\"val\"]`: shapes "
                "and dtypes, no data. Read them; do not run anything.",
                "Keep only nodes whose `val` is a `torch.Tensor` (placeholders too; a list of tensors is not one). A "
                "size is a plain `int` when static and a `torch.SymInt` when symbolic.",
                "`tuple(s if isinstance(s, int) else str(s) for s in val.shape)` per node, keyed by `node.name`.",
            ],
            "swap_aten_op": [
                "The pass works on `ep.graph` itself (`ep.module()` makes a copy). Match `node.target == old`: the "
                "exact overload object, not a name.",
                "Set `node.target = new` on every matching `call_function` node; leave every other node, other "
                "overloads of the same operator included.",
                "After the loop: `ep.graph.lint()`, `ep.graph_module.recompile()` (otherwise the generated code "
                "still calls `old`), and `return ep`.",
            ],
        },
    "ex11_pt2e": {
        "prepare_pt2e_qat": [
            "Three steps, as in lesson 11: `torch.export.export(model, example_inputs).module()`, a quantizer, and "
            "`prepare_qat_pt2e(exported, quantizer)` from `torchao.quantization.pt2e.quantize_pt2e`.",
            "Export in train mode: `model.train()` first, since export freezes the mode it sees (a hidden model "
            "with dropout arrives in eval mode). The quantizer is `X86InductorQuantizer()` with "
            "`set_global(get_default_x86_inductor_quantization_config(is_qat=True))`.",
            "Without `is_qat=True` you get observers, not fake-quants; with `reduce_range` or `is_dynamic` other "
            "ranges. Build the quantizer, export `model.train()`, take `.module()`, return what "
            "`prepare_qat_pt2e` returns.",
        ],
        "pt2e_fake_quant_count": [
            "Count nodes of `prepared.graph`, not modules: only `call_module` nodes qualify, and "
            "`prepared.get_submodule(node.target)` gives each one's module.",
            "Test `isinstance(module, FakeQuantizeBase)` with torchao's class, "
            "`torchao.quantization.pt2e.FakeQuantizeBase`: lesson 07's `torch.ao.quantization` class is a "
            "different one. Never match by name or class name; observers and `_guards_fn` do not count.",
            "A fake-quant called from two nodes counts twice, so no set of targets. Sum 1 over the `call_module` "
            "nodes whose module is a `FakeQuantizeBase`, and return an int.",
        ],
        "pt2e_finetune": [
            "An ordinary training loop on `prepared`: `torch.optim.SGD(prepared.parameters(), lr=lr)`, "
            "cross-entropy, `backward()` and `step()`. No `prepared.train()`: an exported model raises on it.",
            "Do exactly `steps` steps; step `i` uses `batches[i % len(batches)]`. Cycle when steps exceeds the "
            "list, use only the first batches when it is smaller, do nothing for 0.",
            "In `for i in range(steps)`: zero the gradients, `F.cross_entropy(prepared(x), y)` (mean), "
            "`backward()`, `step()`, with one forward pass per step. Train in place and return `prepared` itself.",
        ],
        "to_qdq": [
            "Two calls from `torchao.quantization.pt2e`: `move_exported_model_to_eval(prepared)`, then "
            "`convert_pt2e(prepared)`, whose return value is your answer.",
            "`prepared.eval()` raises on an exported model, and skipping the move keeps dropout training in the "
            "converted graph. Use `convert_pt2e` with its defaults (it folds the weights' quantize nodes).",
            "Do not run the prepared model before converting: every run moves the scales. Move to eval, convert, "
            "return the converted GraphModule.",
        ],
        "qdq_counts": [
            "Look at `str(node.target)` of the `call_function` nodes: Q/DQ nodes read "
            "`quantized_decomposed.quantize_per_tensor.default`, `quantized_decomposed.dequantize_per_channel.default`, ...",
            "Count every overload (`.default` and `.tensor`) and both per-tensor and per-channel ops. "
            "'quantize' is a substring of 'dequantize', and the eager `torch.quantize_per_tensor` is no Q/DQ node.",
            "Count the targets starting with `quantized_decomposed.quantize_per_` and those starting with "
            "`quantized_decomposed.dequantize_per_`; return the two ints as a tuple, quantize first.",
        ],
    },
}
HINTS.update(PART_III)
