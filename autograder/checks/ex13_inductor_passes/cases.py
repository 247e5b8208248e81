"""The cases of ex13_inductor_passes.

Every case builds its inputs afresh: the ATen graphs are traced anew (a pass changes its graph in place), the
passes are the course's own (`models.reference_pass`), and a compile case resets dynamo first, so that no case
meets a model an earlier case compiled. The cases of make_pattern_pass run in order in one process: a pass an
answer keeps between calls meets the next case's replacement.

A torch.compile with inductor costs seconds: compile_with_post_grad_pass has one visible and one hidden case,
and each calls the compiled model on two inputs of one shape (one compile for both). While a compile case runs,
inductor's `fallback_by_default` is on: every operator of the compiled graph is a call of its ATen kernel, so no
C++ is built (a grading worker starts with an empty inductor cache, and building the kernels of both models cost
30 s there, the precompiled header alone 150 MB). Every pass runs as in any compile, the custom ones included;
only the code generated after them differs.
"""
from __future__ import annotations

import torch

from autograder.checks import keyring
from autograder.checks.framework import Case
from autograder.checks.ex13_inductor_passes.models import (COMPILED, aten_graph, compiled_model, recording_pass_class,
                                                           reference_pass, replacement)

PROBE = "_ex13_probe"
GRAPH = "_ex13_graph"     # on an apply case's gm: the fx.Graph it held when it was handed over
UPDATE = "_ex13_update"   # on a compile case's model: the weight the caller changes after the first calls
CONFIG_KEYS = ("pre_grad_custom_pass", "post_grad_custom_pre_pass", "post_grad_custom_post_pass",
               "joint_custom_pre_pass", "joint_custom_post_pass", "freezing")

MM_RELU, MUL_ADD, CONV_BN = "relu(mm) -> clamp_min(mm)", "x * y + z -> addcmul", "batch_norm(conv) -> folded conv"
RELU_RELU, MM_T_RELU = "relu(relu(x)) -> relu(x)", "relu(x @ w.t()) -> clamp_min(x @ w.t())"


class ExampleInputs(list):
    """The example inputs of a replacement, a list that also names the graphs its case applies the pass to."""

    graphs: tuple[str, ...] = ()


def _make_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex13_inductor_passes")._make_cases()

    def case(label: str, name: str, graphs: tuple[str, ...]) -> Case:
        def make():
            search, replace, inputs = replacement(name)
            inputs = ExampleInputs(inputs)
            inputs.graphs = graphs
            return search, replace, inputs
        return Case(label, make, data={"replacement": name, "graphs": graphs})
    return [case("relu(mm) -> clamp_min(mm), applied to an MLP (three matches) and to a graph where the mm has "
                 "two users", MM_RELU, ("mlp", "shared")),
            case("x * y + z -> addcmul, applied to a graph that holds a relu(mm) too", MUL_ADD, ("mixed",))]


def apply_case(label: str, graph: str, name: str, seed: int = 0) -> Case:
    """One case of apply_pattern_pass: the ATen graph `graph` and the course's pass of the replacement `name`."""
    def make():
        gm, inputs = aten_graph(graph, seed)
        object.__setattr__(gm, PROBE, inputs)
        object.__setattr__(gm, GRAPH, gm.graph)
        return gm, reference_pass(name)
    return Case(label, make, data={"graph": graph, "replacement": name, "seed": seed})


def _apply_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex13_inductor_passes")._apply_cases()

    case = apply_case
    return [case("an MLP, relu(mm): three matches", "mlp", MM_RELU),
            case("relu(mm) feeding x * y + z, the pass x * y + z: two matches", "mixed", MUL_ADD)]


def config_state() -> list:
    """Which of inductor's pass settings are set (the course leaves them all at their defaults)."""
    import torch._inductor.config as config
    return [[key, getattr(config, key) not in (None, False, [], ())] for key in CONFIG_KEYS]


def config_values() -> dict:
    """Every setting of torch._inductor.config but fallback_by_default (which a compile case sets itself).

    Numbers, strings and containers are copies, compared by value; any other value (a pass object, a function) is
    the setting's own object, compared by identity: a copy of a pass object equals nothing, so a pass another
    library had set (torchao's x86 quantizer sets pre_grad_custom_pass when it is imported) would otherwise read as
    changed by every answer."""
    import torch._inductor.config as config
    values = config.get_config_copy()
    values.pop("fallback_by_default", None)
    for key, value in values.items():
        if not isinstance(value, (type(None), bool, int, float, str, bytes, tuple, list, dict, set, frozenset)):
            values[key] = getattr(config, key)
    return values


def changed_settings(before: dict) -> list[str]:
    """The settings of inductor's config whose values differ from `before` (config_values)."""
    after = config_values()
    changed = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        try:
            same = old is new or bool(old == new)
        except Exception:
            same = False
        if not same:
            changed.append(key)
    return changed


def restore_config() -> None:
    import torch._inductor.config as config
    for key in CONFIG_KEYS:
        setattr(config, key, False if key == "freezing" else None)


def build_nothing(on: bool) -> None:
    """Inductor calls the ATen kernel of every operator (on) or generates code as it does by default (off)."""
    import torch._inductor.config as config
    config.fallback_by_default = on


def callers_hook(graph) -> None:
    """A post-grad hook the caller had set before calling compile_with_post_grad_pass: it changes nothing, and it
    must still be set when that function returns."""


def _compile_case(label: str, name: str, seed: int = 0, update: str = "", caller_hook: bool = False) -> Case:
    """One case of compile_with_pass: `name` compiled with the course's pattern pass, recording what it saw (with
    `update`, the name of a weight: the compiled model is called once more after that weight changed in place;
    with `caller_hook`, inductor's post_grad_custom_post_pass is callers_hook when the answer is called)."""
    def make():
        import torch._inductor.config as config
        torch._dynamo.reset()
        build_nothing(True)
        config.post_grad_custom_post_pass = callers_hook if caller_hook else None
        model, inputs = compiled_model(name, seed)
        object.__setattr__(model, PROBE, inputs)
        object.__setattr__(model, UPDATE, update)
        pattern_pass = reference_pass(COMPILED[name][2], recording_pass_class())
        pattern_pass.config_before = config_state()
        pattern_pass.values_before = config_values()
        return model, pattern_pass
    return Case(label, make, data={"model": name, "seed": seed, "update": update, "caller_hook": caller_hook})


def _compile_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex13_inductor_passes")._compile_cases()

    return [_compile_case("TwoLayers(6), the pass relu(mm) -> clamp_min(mm)", "TwoLayers(6)")]
