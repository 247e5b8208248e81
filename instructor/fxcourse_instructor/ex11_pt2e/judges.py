"""The judges of ex11_pt2e: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

from typing import Any

import torch

from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import (
    TRAINING_LOOP_HINTS, expect, expect_trained, first_far_tensor, max_difference as _max_diff, training_loop,
)
from autograder.checks.ex11_pt2e.models import (
    FakeQuantizeBase, FusedMovingAvgObsFakeQuantize, ObserverBase, convert_pt2e, move_exported_model_to_eval,
    move_exported_model_to_train,
)
from autograder.checks.ex11_pt2e.evidence import _dropouts, _module_of, _ops, _run, _state
from fxcourse_instructor.ex11_pt2e.references import _prep_reference, _reference


def _short(qualname: str | None) -> str:
    return (qualname or "?").rsplit(".", 1)[-1]


QUANTIZER_HINT = "ex11.quantizer_x86inductorquantizer_quantizer_set_glo"


def _reads_of(rows: list[dict], node: str) -> str:
    """What the fake-quant node `node` rounds, from the evidence rows."""
    return next((r["reads"] for r in rows if r["node"] == node), "?")


def _one_diagnosis(got: Any, ref: dict, diagnoses: dict[str, str], otherwise: str) -> str:
    """The hint of the one mistake whose count (ref[key]) is the learner's, else `otherwise`: when two mistakes
    give the same number in a case, another case tells them apart."""
    hits = [text for key, text in diagnoses.items() if ref[key] == got]
    return hits[0] if len(hits) == 1 else otherwise


def _prep_judge(case: Case, ev: dict) -> None:
    ref = _reference("prepare_pt2e_qat", case, _prep_reference)
    fqs = ev["fake_quants"]
    if not fqs:
        if ev["observers"]:
            name, kind = ev["observers"][0]
            raise CheckFailed(
                f"the graph calls {len(ev['observers'])} observers ({_short(kind)} at '{name}') and no "
                f"fake-quantize module; expected {len(ref['fake_quants'])} fake-quants",
                "ex11.configure_quantizer_qat_get_default")
        if ev["modules"]:
            name, kind = ev["modules"][0]
            raise CheckFailed(
                f"the graph calls modules ('{name}' is a {_short(kind)}) and no fake-quantize module: it is not "
                f"an exported ATen graph",
                "ex11.capture_model_torch_export_export")
        raise CheckFailed(f"the graph calls no fake-quantize module; expected {len(ref['fake_quants'])}",
                          "ex11.give_quantizer_global_config_before")
    if ev["is_qat"] is False and ref["is_qat"]:
        raise CheckFailed(
            "the model was prepared by prepare_pt2e, for post-training calibration: torchao recorded is_qat=False "
            "in the prepared model's meta",
            "ex11.prepare_prepare_qat_pt2e_exported")
    if ev["moved_to_eval"] and not ref["moved_to_eval"]:
        raise CheckFailed("the prepared model was moved to eval with move_exported_model_to_eval (torchao marked it "
                          "not training): its dropout and batch norm would no longer train",
                          "ex11.return_what_prepare_qat_pt2e")
    got_drop = dict((n, t) for n, t in ev["dropouts"])
    for name, train in ref["dropouts"]:
        if name in got_drop and got_drop[name] != train:
            raise CheckFailed(
                f"node '{name}' runs aten.dropout.default with train={got_drop[name]}, expected train={train}: "
                f"the model was exported in eval mode",
                "ex11.export_model_train_mode_torch")
    if ev["ops"] != ref["ops"]:
        missing = {k: v for k, v in ref["ops"].items() if ev["ops"].get(k) != v}
        extra = {k: v for k, v in ev["ops"].items() if k not in ref["ops"]}
        what = next(iter(missing.items()), None) or next(iter(extra.items()))
        raise CheckFailed(
            f"the prepared graph calls {what[0]} {ev['ops'].get(what[0], 0)} times, expected "
            f"{ref['ops'].get(what[0], 0)}",
            "ex11.export_model_you_are_given")
    if len(fqs) != len(ref["fake_quants"]):
        raise CheckFailed(f"the graph calls {len(fqs)} fake-quantize modules, expected {len(ref['fake_quants'])}",
                          QUANTIZER_HINT)
    by_reads = {r["reads"]: r for r in fqs}
    for exp in ref["fake_quants"]:
        got = by_reads.get(exp["reads"])
        if got is None:
            raise CheckFailed(f"no fake-quantize node rounds {exp['reads']}; expected {exp['node']} "
                              f"({_short(exp['class'])})", QUANTIZER_HINT)
        for key in ("class", "dtype", "quant_min", "quant_max", "qscheme", "ch_axis"):
            if got[key] != exp[key]:
                show = _short if key == "class" else (lambda v: v)
                raise CheckFailed(
                    f"the fake-quant '{got['node']}' on {exp['reads']} has {key} {show(got[key])!r}, expected "
                    f"{show(exp[key])!r} ({exp['dtype']} over {exp['quant_min']}..{exp['quant_max']}, "
                    f"{exp['qscheme']})", QUANTIZER_HINT)
    seen = [r["node"] for r in fqs if r["seen"]]
    if seen and not any(r["seen"] for r in ref["fake_quants"]):
        raise CheckFailed(
            f"{len(seen)} of {len(fqs)} fake-quants already hold statistics ('{seen[0]}' on "
            f"{_reads_of(fqs, seen[0])}): the prepared model ran on data before it was returned",
            "ex11.return_what_prepare_qat_pt2e_2")
    out, exp = ev["outputs"], ref["outputs"]
    if isinstance(out, str):
        raise CheckFailed(f"the prepared model could not run on the example inputs: {out}")
    if out.shape != exp.shape or not torch.allclose(out, exp, rtol=1e-4, atol=1e-5):
        diff = _max_diff(out, exp) if out.shape == exp.shape else float("inf")
        raise CheckFailed(f"outputs of the prepared model differ from the reference's by up to {diff:.3g}",
                          "ex11.prepare_model_you_are_given")


# What to say when a count of pt2e_fake_quant_count is the one a usual mistake gives (see _diagnostic).
COUNT_MISTAKES = {
    "by_app_name": "ex11.select_nodes_module_type_not",
    "by_fake_name": "ex11.select_nodes_module_type_not_2",
    "unique": "ex11.count_nodes_every_call_module",
    "all_modules": "ex11.count_call_module_nodes_not",
    "with_observers": "ex11.observers_are_not_fake_quantize",
    "call_module": "ex11.count_only_call_module_nodes",
    "exact_fused": "ex11.fakequantizebase_base_class_every_fake",
    "torch_ao": "ex11.pt2e_s_fake_quants_are",
    "class_name": "ex11.class_name_says_nothing_test",
    "duck_typed": "ex11.attribute_such_fake_quant_enabled",
    "root_only": "ex11.dotted_target_get_submodule",
}


def _count_judge(case: Case, got: int) -> None:
    def build(case):
        (gm,) = case.make()
        nodes = [n for n in gm.graph.nodes if n.op == "call_module"]
        mods = [_module_of(gm, n) for n in nodes]
        fq = [isinstance(m, FakeQuantizeBase) for m in mods]
        return {
            "expected": sum(fq),
            "by_app_name": sum(1 for n in nodes if "activation_post_process" in n.target),
            "by_fake_name": sum(1 for n in nodes if "fake" in n.target.lower()),
            "unique": len({n.target for n, f in zip(nodes, fq) if f}),
            "all_modules": sum(1 for m in gm.modules() if isinstance(m, FakeQuantizeBase)),
            "with_observers": sum(1 for m in mods if isinstance(m, (FakeQuantizeBase, ObserverBase))),
            "call_module": len(nodes),
            "exact_fused": sum(1 for m in mods if type(m) is FusedMovingAvgObsFakeQuantize),
            "torch_ao": sum(1 for m in mods if isinstance(m, torch.ao.quantization.FakeQuantizeBase)),
            "class_name": sum(1 for m in mods if "FakeQuantize" in type(m).__name__),
            "duck_typed": sum(1 for m in mods if hasattr(m, "fake_quant_enabled")),
            "root_only": sum(1 for n, f in zip(nodes, fq) if f and "." not in n.target),
        }
    ref = _reference("pt2e_fake_quant_count", case, build)
    expected = ref["expected"]
    if got == expected:
        return
    hint = _one_diagnosis(got, ref, COUNT_MISTAKES, "ex11.count_call_module_nodes_whose")
    raise CheckFailed(f"counted {got} fake-quantize nodes, expected {expected}", hint)


# Wrong versions of the loop, most common first; the judge names the first one the learner's result matches.
VARIANT_HINTS = {
    **TRAINING_LOOP_HINTS,
    "extra_forward_after": "ex11.run_exactly_one_forward_pass",
}
# Wrong step counts, recognised by running the right loop for that many steps (cycling gives the batches in the
# order a loop over every batch within each step takes them).
STEP_COUNT_HINTS = {
    "one_step": ("ex11.do_steps_optimizer_steps_i", lambda steps, n: 1),
    "every_batch_each_step": ("ex11.each_step_one_optimizer_step", lambda steps, n: steps * n),
}


def _ft_reference(case: Case) -> dict:
    prepared, batches, steps, lr = case.make()
    initial = _state(prepared)
    training_loop(prepared, batches, steps, lr, set_train=False)
    return {"initial": initial, "final": _state(prepared), "dropouts": _dropouts(prepared)}


def _variant(case: Case, variant: str) -> dict | None:
    def build(case):
        prepared, batches, steps, lr = case.make()
        loop_variant = variant
        if variant in STEP_COUNT_HINTS:
            steps, loop_variant = STEP_COUNT_HINTS[variant][1](steps, len(batches)), ""
        if variant == "moved_to_train":   # allowed: the PT2E way to train mode (dropout draws through other ops)
            move_exported_model_to_train(prepared)
            loop_variant = ""
        if variant.startswith("weight_decay_"):
            # SGD's weight_decay adds wd * p to each gradient before the step: the same, as a gradient hook
            decay = float(variant.removeprefix("weight_decay_"))
            for p in prepared.parameters():
                p.register_hook(lambda grad, p=p: grad.add(p.detach(), alpha=decay))
            loop_variant = ""
        try:
            return _state(training_loop(prepared, batches, steps, lr, loop_variant, set_train=False))
        except Exception:
            return None
    return _reference(f"pt2e_finetune {variant}", case, build)


WEIGHT_DECAY_HINT = "ex11.use_plain_sgd_torch_optim"
# weight decays learners write, tried only once the usual mistakes are ruled out; a larger one shows by its
# direction (_shrunk_towards_zero)
WEIGHT_DECAYS = ("1e-05", "0.0001", "0.0005", "0.001", "0.005", "0.01")


def _shrunk_towards_zero(got: dict, final: dict, initial: dict) -> bool:
    """Whether the learner's parameters differ from the reference's final ones along -initial, what a large
    weight decay adds to every step (-lr * wd * p) and no mistake in the gradient gives (cosine above 0.95;
    the usual training-loop mistakes give below 0.15 on these cases)."""
    try:
        diff = torch.cat([(got[n] - final[n]).double().flatten() for n in final])
        towards = torch.cat([-initial[n].double().flatten() for n in final])
    except (KeyError, RuntimeError):
        return False
    norm = diff.norm() * towards.norm()
    return bool(norm > 0) and float(diff @ towards / norm) > 0.95


def _matches(ev: dict, state: dict | None) -> bool:
    """Whether the learner's parameters and fake-quant statistics are those of a wrong loop's `state`."""
    return (state is not None and first_far_tensor(ev["params"], state["params"]) is None
            and first_far_tensor(ev["buffers"], state["buffers"]) is None)


def _ft_judge(case: Case, ev: dict) -> None:
    ref = _reference("pt2e_finetune", case, _ft_reference)
    if not ev["same"]:
        raise CheckFailed("returned a different object from the prepared model it was given",
                          "ex11.train_prepared_place_return_prepared")
    steps = case.data["steps"]
    mismatch = first_far_tensor(ev["params"], ref["final"]["params"])
    # move_exported_model_to_eval renames the dropout nodes it rewrites: compare how many still train
    frozen = [name for name, train in ev["dropouts"] if not train]
    if sum(t for _, t in ev["dropouts"]) >= sum(t for _, t in ref["dropouts"]):
        frozen = []
    if frozen and mismatch is not None:
        raise CheckFailed(f"node '{frozen[0]}' runs aten.dropout.default with train=False: the model was moved to "
                          f"eval and trained with dropout off, and after {steps} steps {mismatch}",
                          "ex11.train_model_arrives_ready_train")
    if frozen:
        raise CheckFailed(f"the parameters are right, but node '{frozen[0]}' runs aten.dropout.default with "
                          f"train=False: the model was moved to eval after training",
                          "ex11.leave_prepared_ready_train_arrived")
    if mismatch is not None and ev["dropouts"] and _matches(ev, _variant(case, "moved_to_train")):
        return   # moved to train mode with move_exported_model_to_train first, which the task allows
    if mismatch is not None:
        expect_trained(ev["params"], ref["initial"]["params"], steps)
        hint = next((text for variant, text in VARIANT_HINTS.items() if _matches(ev, _variant(case, variant))), None)
        hint = hint or next((text for variant, (text, _) in STEP_COUNT_HINTS.items()
                             if _matches(ev, _variant(case, variant))), None)
        if hint is None and (_shrunk_towards_zero(ev["params"], ref["final"]["params"], ref["initial"]["params"])
                             or any(_matches(ev, _variant(case, f"weight_decay_{wd}")) for wd in WEIGHT_DECAYS)):
            hint = WEIGHT_DECAY_HINT
        raise CheckFailed(f"after {steps} steps the parameters differ from plain SGD on cross-entropy: {mismatch}",
                          hint or "ex11.each_step_x_y_batches")
    switched = first_far_tensor(ev["buffers"], ref["final"]["buffers"], only=("observer_enabled", "fake_quant_enabled"))
    expect(switched is None, f"the observers' and fake-quants' switches are not as they arrived after "
           f"pt2e_finetune: {switched}", "ex11.leave_quant_switches")
    mismatch = first_far_tensor(ev["buffers"], ref["final"]["buffers"])
    if mismatch is not None:
        raise CheckFailed(f"the parameters match but the fake-quant statistics do not: {mismatch}",
                          VARIANT_HINTS["extra_forward_after"])


def _qdq_reference(case: Case) -> dict:
    (prepared,) = case.make()
    x = prepared.input_for_checks
    move_exported_model_to_eval(prepared)
    converted = convert_pt2e(prepared)
    return {"ops": _ops(converted), "dropouts": _dropouts(converted), "outputs": _run(converted, (x,)),
            "same": converted is prepared}


def _qdq_judge(case: Case, ev: dict) -> None:
    ref = _reference("to_qdq", case, _qdq_reference)
    if ev["left"]:
        raise CheckFailed(f"the result still runs fake-quantize/observer modules ({', '.join(ev['left'])})",
                          "ex11.convert_convert_pt2e_return_graphmodule")
    if ev.get("same") and not ref.get("same", True):
        raise CheckFailed("returned the prepared model it was given, not the converted one",
                          "ex11.return_graphmodule_convert_pt2e_returns")
    got_drop = dict((n, t) for n, t in ev["dropouts"])
    for name, train in ref["dropouts"]:
        if got_drop.get(name) is True:
            raise CheckFailed(f"node '{name}' still runs aten.dropout.default with train=True, expected train=False",
                              "ex11.call_move_exported_model_eval_2")
    if ev["ops"] != ref["ops"]:
        keys = [k for k in {**ref["ops"], **ev["ops"]} if ev["ops"].get(k, 0) != ref["ops"].get(k, 0)]
        k = keys[0]
        hint = "ex11.convert_moved_eval_model_convert"
        if k.startswith("quantized_decomposed.quantize_per_channel") and ev["ops"].get(k, 0) > ref["ops"].get(k, 0):
            hint = "ex11.keep_convert_pt2e_s_default"
        raise CheckFailed(f"the converted graph calls {k} {ev['ops'].get(k, 0)} times, expected "
                          f"{ref['ops'].get(k, 0)}", hint)
    outs, exp = ev["outputs"], ref["outputs"]
    if outs is None or isinstance(outs[0], str):
        raise CheckFailed(f"the converted model could not run: {outs[0] if outs else 'no input'}")
    out = outs[0]
    if out.shape != exp.shape:
        raise CheckFailed(f"output shape {tuple(out.shape)}, expected {tuple(exp.shape)}")
    if not torch.equal(outs[0], outs[1]):
        raise CheckFailed("the converted model gives different outputs on the same input in two runs: a random op "
                          "still trains", "ex11.call_move_exported_model_eval")
    if not torch.allclose(out, exp, rtol=1e-4, atol=1e-5):
        raise CheckFailed(f"outputs differ from the reference's converted model by up to {_max_diff(out, exp):.3g}",
                          "ex11.do_not_run_prepared_model")


# What to say when the counts of qdq_counts are the ones a usual mistake gives (see _handmade_qdq).
QDQ_MISTAKES = {
    "default_only": "ex11.count_every_overload_quantize_per",
    "per_tensor_only": "ex11.count_per_channel_nodes_too",
    "substring": "ex11.quantize_substring_dequantize_match_start",
    "eager_too": "ex11.count_only_quantized_decomposed_ops",
    "dotted_text": "ex11.aten_quantize_not_quantized_decomposed",
    "by_name": "ex11.select_nodes_target_not_name",
    "unique": "ex11.count_nodes_not_distinct_targets",
    "qd_not_dq": "ex11.not_every_quantized_decomposed_op",
}


def _qdq_count_judge(case: Case, got: list) -> None:
    def build(case):
        (gm,) = case.make()
        fn = [n for n in gm.graph.nodes if n.op == "call_function"]
        text = [str(n.target) for n in fn]
        def count(pred):
            return sum(1 for t in text if pred(t))
        qd = "quantized_decomposed."
        return {
            "expected": [count(lambda t: t.startswith(qd + "quantize_per_")),
                         count(lambda t: t.startswith(qd + "dequantize_per_"))],
            "default_only": [count(lambda t: t.startswith(qd + "quantize_per_") and t.endswith(".default")),
                             count(lambda t: t.startswith(qd + "dequantize_per_") and t.endswith(".default"))],
            "per_tensor_only": [count(lambda t: t.startswith(qd + "quantize_per_tensor")),
                                count(lambda t: t.startswith(qd + "dequantize_per_tensor"))],
            "substring": [count(lambda t: "quantize" in t), count(lambda t: "dequantize" in t)],
            "eager_too": [count(lambda t: "quantize_per_" in t and "dequantize" not in t),
                          count(lambda t: "dequantize_per_" in t)],
            "dotted_text": [count(lambda t: ".quantize_per" in t), count(lambda t: ".dequantize_per" in t)],
            # by name, over every node, as a name-based count goes (get_attr nodes of folded weights have such names)
            "by_name": [sum(1 for n in gm.graph.nodes if n.name.startswith("quantize_per_")),
                        sum(1 for n in gm.graph.nodes if n.name.startswith("dequantize_per_"))],
            "unique": [len({t for t in text if t.startswith(qd + "quantize_per_")}),
                       len({t for t in text if t.startswith(qd + "dequantize_per_")})],
            "qd_not_dq": [count(lambda t: t.startswith(qd) and "dequantize" not in t),
                          count(lambda t: t.startswith(qd + "dequantize_per_"))],
        }
    ref = _reference("qdq_counts", case, build)
    expected = ref["expected"]
    if got == expected:
        return
    if got == expected[::-1]:
        hint = "ex11.return_quantize_dequantize_order"
    else:
        hint = _one_diagnosis(got, ref, QDQ_MISTAKES, "ex11.count_call_function_nodes_whose")
    raise CheckFailed(f"counted {tuple(got)} (quantize, dequantize) nodes, expected {tuple(expected)}", hint)


_EXPORTED_TRAIN_EVAL = "Calling train() or eval() is not supported for exported models"


def _ft_raise(case: Case, raised: dict) -> str | None:
    """pt2e_finetune called prepared.train(), which an exported model refuses."""
    if _EXPORTED_TRAIN_EVAL in str(raised.get("message")):
        return "ex11.do_not_call_prepared_train"
    return None


def _qdq_raise(case: Case, raised: dict) -> str | None:
    """to_qdq called prepared.eval(), which an exported model refuses."""
    if _EXPORTED_TRAIN_EVAL in str(raised.get("message")):
        return "ex11.prepared_eval_raises_exported_model"
    return None
