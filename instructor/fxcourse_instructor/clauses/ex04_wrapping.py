"""Clauses of ex04_wrapping: trace_gated, trace_with_leaves, trace_specialized."""
from fxcourse_instructor.clauses import Clause

CLAUSES = [
    Clause("trace_gated", "gate is one call_function node", ("the notebook's GatedNet", "GatedNet"),
           mutant="plain symbolic_trace: gate's data-dependent if raises"),
    Clause("trace_gated", "outputs match on both sides of the branch", ("the notebook's GatedNet", "GatedNet"),
           mutant="a Tracer whose to_bool says True: the relu branch is frozen and gate traced through"),
    Clause("trace_gated", "traces the model it is given", ("GatedNet(4, 10, 2), other weights",),
           mutant="traces a new GatedNet instead of the model it is given"),
    Clause("trace_gated", "the model is left as it was (its training flag too)", ("the notebook's GatedNet",
                                                                                  "GatedNet"),
           patch=("    tracer = fx.Tracer(", "    model.eval()\n    tracer = fx.Tracer("), hint="must leave its inputs"),
    Clause("trace_gated", "returns a GraphModule", ("the notebook's GatedNet", "GatedNet"),
           mutant="returns the Tracer's Graph"),
    Clause("trace_with_leaves", "instances of subclasses are leaves too", ("a subclass of Block",),
           mutant="exact type match, so subclasses are traced through"),
    Clause("trace_with_leaves", "torch's own modules stay leaves", ("MixerNet, leaf_types=(RowNorm,)",
                                                                    "Blocks nested in Sequentials and one called twice"),
           mutant="drops the default rule, so nn.Linear is traced through"),
    Clause("trace_with_leaves", "leaf_types may be a list", ("Blocks nested in Sequentials",),
           mutant="passes leaf_types to isinstance as it comes (a list fails)"),
    Clause("trace_with_leaves", "nested leaves, not only direct children", ("a subclass of RowNorm nested",),
           mutant="leaves chosen by name among the direct children only"),
    Clause("trace_with_leaves", "the model is left as it was", ("MixerNet, leaf_types=(RowNorm,)",
                                                                "Blocks nested in Sequentials and one called twice"),
           patch=("    tracer = LeafTracer()", "    model.eval()\n    tracer = LeafTracer()"),
           hint="must leave its inputs"),
    Clause("trace_specialized", "gm(x) runs with tensors only (guard defaults fixed)", ("FlagNet, use_extra=False",
                                                                                        "FlagNet, repeats=2"),
           mutant="concrete_args alone: the guard placeholders keep their original defaults"),
    Clause("trace_specialized", "flags by name, in any order", ("FlagNet, repeats=2, use_extra=True",),
           mutant="maps the flag values onto the parameters by position"),
    Clause("trace_specialized", "non-bool flags (ints, strings, None) too", ("depth=2, act='tanh'",),
           mutant="fixes only the bool flags"),
    Clause("trace_specialized", "tensor inputs stay, even unused ones", ("two tensor inputs, use_y=False",),
           mutant="erases the guards, then every unused placeholder, tensor inputs included"),
    Clause("trace_specialized", "gm.code is regenerated", ("FlagNet, use_extra=False", "FlagNet, repeats=2"),
           mutant="sets the defaults but forgets gm.recompile()"),
]

# Rules the task-text audit found with no clause.
CLAUSES += [
    Clause("trace_specialized", "the model is left as it was", ("FlagNet, use_extra=False", "FlagNet, repeats=2"),
           patch=("    gm = fx.symbolic_trace(model, concrete_args=flags)",
                  "    model.eval()\n    gm = fx.symbolic_trace(model, concrete_args=flags)"),
           hint="must leave its inputs"),
    Clause("trace_with_leaves", "an empty leaf_types gives a plain trace", ("a random model, leaf_types=()",),
           patch=("    leaves = tuple(leaf_types)", "    if not leaf_types:\n        raise ValueError(\"no leaf types\")\n"
                  "    leaves = tuple(leaf_types)")),
    Clause("trace_with_leaves", "nn.Sequential containers are traced through", ("Blocks nested in Sequentials",),
           patch=("or super().is_leaf_module(m, module_qualified_name)", "or m.__module__.startswith(\"torch.nn\")")),
    Clause("trace_gated", "every call of gate, inside submodules too", ("gate called inside two submodules",),
           patch=("    tracer = fx.Tracer(autowrap_functions=(gate,))",
                  "    class _Tracer(fx.Tracer):\n        def is_leaf_module(self, m, qualified_name):\n"
                  "            return True\n\n    tracer = _Tracer(autowrap_functions=(gate,))")),
]

CLAUSES += [
    Clause("trace_gated", "gate is not redefined: the models call the notebook's own gate", ("the notebook's GatedNet",
                                                                                             "GatedNet"),
           source="def gate(x):\n    return torch.relu(x)\n\n\ndef trace_gated(model):\n"
                  "    return fx.symbolic_trace(model)\n"),
]

# Rules that wrong answers once with full marks broke, each with the hidden case that now catches it.
CLAUSES += [
    Clause("trace_gated", "the trace is of model in the mode it is in (its forward may read self.training)",
           ("a model in training mode whose forward reads self.training",),
           mutant="traces a copy switched to eval mode: the caller's model is untouched, but its forward reads "
                  "self.training", hint="mode it is in"),
    Clause("trace_gated", "the model's submodules keep their mode (the GraphModule shares them)",
           ("a model in eval mode",), mutant="returns the GraphModule switched to training mode: it shares the "
           "model's submodules, so their mode changes too", hint="leave its mode as it was"),
    Clause("trace_with_leaves", "the model's submodules keep their mode (the GraphModule shares them)",
           ("a module of the model's own with no parameters or children",),
           mutant="returns the GraphModule switched to training mode: it shares the model's submodules, so their "
                  "mode changes too", hint="leave its mode as it was"),
    Clause("trace_specialized", "the model's submodules keep their mode (the GraphModule shares them)",
           ("rectify=True adds torch.relu_(h)",),
           mutant="returns the GraphModule switched to training mode: it shares the model's submodules, so their "
                  "mode changes too", hint="leave its mode as it was"),
    Clause("trace_with_leaves", "leaves are chosen by class, not class name: another class named like a leaf type "
           "is traced through", ("another class named Block",),
           mutant="compares class names along the MRO, so another class named Block is kept whole",
           hint="compare classes, not their names"),
    Clause("trace_with_leaves", "your own modules are traced through, even one without parameters or children",
           ("a module of the model's own with no parameters or children",),
           mutant="also keeps whole every module without children or parameters", hint="not an instance of leaf_types"),
    Clause("trace_specialized", "every call the trace recorded stays, an in-place call whose result nobody reads too",
           ("rectify=True adds torch.relu_(h)",),
           mutant="erases the guards, then every call_function node without users: an in-place torch.relu_ goes too",
           hint="keep every call the trace recorded"),
]

_ONLY_TRACES = (("trace_gated", "the model is left as it was (its training flag too)"),
                ("trace_with_leaves", "the model is left as it was"),
                ("trace_specialized", "the model is left as it was"),
                ("trace_gated", "the model's submodules keep their mode (the GraphModule shares them)"),
                ("trace_with_leaves", "the model's submodules keep their mode (the GraphModule shares them)"),
                ("trace_specialized", "the model's submodules keep their mode (the GraphModule shares them)"))

# The task text, sentence by sentence: the rules of the clauses that check it, or why it is no rule.
TASK_TEXT = {
    "*": {
        "After lesson 04 you know why `torch.fx.symbolic_trace` gives up on some models (a Python `if` on tensor "
        "data, a loop over a tensor, a Python flag in `forward`) and which tool gets the trace through each time: a "
        "leaf function, a leaf module, fixed Python values.": "what the lesson taught, the motivation",
        "Here you write those three tools as functions that work on any model, not only on the examples below.":
            (("trace_gated", "traces the model it is given"), ("trace_with_leaves", "nested leaves, not only direct "
             "children"), ("trace_specialized", "non-bool flags (ints, strings, None) too")),
        "Each of them only traces: the `model` passed in is left as it was (its weights, and its mode: do not call "
        "`model.eval()` on the caller's model).": _ONLY_TRACES,
        "The cell after it runs the visible checks; the grader runs more, on models you have not seen, and compares "
        "the structure of your graphs and their outputs with the original models.":
            "how grading works; what the functions must do on those models is stated in their own sections",
    },
    "trace_gated": {
        "## 1. `trace_gated(model) -> GraphModule`": ("returns a GraphModule",),
        "`GatedNet.forward` calls the helper `gate`, and `gate` branches on `x.sum() > 0`: a question about the "
        "data, which a `Proxy` cannot answer.": "explains why plain tracing fails",
        "Plain `symbolic_trace` stops with a `TraceError` (run the next cell).": "explains why plain tracing fails",
        "Return a `GraphModule` of `model` in which **every call of `gate` is one `call_function` node** (the body "
        "of `gate` is not traced) and everything else is traced as usual.":
            ("gate is one call_function node", "every call of gate, inside submodules too", "returns a GraphModule"),
        "The module must compute what `model` computes, for inputs on both sides of `gate`'s branch.":
            ("outputs match on both sides of the branch",
             "the trace is of model in the mode it is in (its forward may read self.training)"),
        "The grader also calls `trace_gated` on models you have not seen whose `forward` calls this same "
        "notebook-level `gate`: twice, from inside submodules, with two tensor inputs.":
            ("every call of gate, inside submodules too", "traces the model it is given"),
        "Two tools from the lesson do it: `fx.wrap(\"gate\")` at the **top level** of the answer cell (outside the "
        "`def`; try it inside the function and read the error), or an `fx.Tracer` built with "
        "`autowrap_functions=(gate,)`.": "a hint of method: two ways the alternatives (mutants/) show both pass",
        "Either is fine.": "a freedom, not a constraint",
        "Do not redefine `gate`.": ("gate is not redefined: the models call the notebook's own gate",),
        "A `Tracer` returns a `Graph`; the function returns a `GraphModule`.": ("returns a GraphModule",),
        "Trace `model` with the notebook's `gate` kept as one call_function node per call.":
            ("gate is one call_function node", "traces the model it is given"),
    },
    "trace_with_leaves": {
        "## 2. `trace_with_leaves(model, leaf_types) -> GraphModule`": ("instances of subclasses are leaves too",),
        "`leaf_types` is a tuple or a list of `nn.Module` subclasses.": ("leaf_types may be a list",),
        "Return a `GraphModule` of `model` in which every submodule that is an instance of one of these types "
        "(subclasses count, as with `isinstance`), however deeply nested, is **one `call_module` node**, and nothing "
        "inside it is traced.": ("instances of subclasses are leaves too", "nested leaves, not only direct children",
                                   "leaves are chosen by class, not class name: another class named like a leaf type "
                                   "is traced through"),
        "Every other module is handled as usual: `torch.nn` layers such as `nn.Linear` stay `call_module` nodes, your "
        "own modules and `nn.Sequential` containers are traced through.":
            ("torch's own modules stay leaves", "nn.Sequential containers are traced through",
             "your own modules are traced through, even one without parameters or children"),
        "An empty `leaf_types` gives a plain trace.": ("an empty leaf_types gives a plain trace",),
        "`MixerNet`'s `RowNorm` loops over the rows of its input, which tracing cannot do: as a leaf it simply runs "
        "when the `GraphModule` runs.": "explains why a leaf module helps",
        "Trace `model`, keeping instances of `leaf_types` as single call_module nodes.":
            ("instances of subclasses are leaves too",),
    },
    "trace_specialized": {
        "## 3. `trace_specialized(model, **flags) -> GraphModule`": ("gm(x) runs with tensors only (guard defaults fixed)",),
        "Each keyword in `flags` names a Python-valued argument of `model.forward` (a `bool`, `int`, `float`, `str` "
        "or `None`).": ("non-bool flags (ints, strings, None) too", "flags by name, in any order"),
        "Return a `GraphModule` traced with these values fixed through `concrete_args`, so that Python `if`s and "
        "loops on them are decided while tracing.": ("gm(x) runs with tensors only (guard defaults fixed)",
                                                      "gm.code is regenerated"),
        "The returned module is called with **the tensor inputs only**: `gm(x)` (or `gm(x, y)` for a model with two "
        "tensor inputs) must equal `model(x, **flags)`.": ("gm(x) runs with tensors only (guard defaults fixed)",
                                                           "every call the trace recorded stays, an in-place call "
                                                           "whose result nobody reads too"),
        "Flags may come in any order.": ("flags by name, in any order",),
        "A flag may leave a tensor input unused: keep every tensor input anyway.":
            ("tensor inputs stay, even unused ones",),
        "Every argument that a Python `if` or loop depends on is given in `flags`.":
            "an assumption the answer may make: every case gives them",
        "Before you submit, trace `FlagNet` with `concrete_args={\"use_extra\": False}`, print `gm.code` and call "
        "`gm(x)`.": "a hint of method: an experiment to run",
        "Which placeholders are there, and what are their defaults?": "a hint of method: a question to answer",
        "Trace `model` with its Python-valued arguments fixed to `flags`; call the result with tensors only.":
            ("gm(x) runs with tensors only (guard defaults fixed)",),
    },
}
