"""The judges of ex07_qat: compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

import copy
import io
import os
import pickle
import tempfile
from typing import Any, Callable

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.ao.quantization import FakeQuantizeBase, ObserverBase, disable_observer

from autograder.checks.hints import hint_of
from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import (TRAINING_LOOP_HINTS, cached_reference, expect, expect_trained,
                                        first_far_tensor, max_difference, training_loop)
from fxcourse_instructor.ex07_qat.references import _count_reference, _int8_reference, _prep_reference


A = "ex07_qat"


def _short(qualname: str | None) -> str:
    return (qualname or "?").rsplit(".", 1)[-1]


_CACHE: dict[tuple[str, str], Any] = {}


def _reference(function: str, case: Case, build: Callable[[Case], Any]) -> Any:
    """The reference evidence of a case, computed once per process (deterministic, seeded)."""
    return cached_reference(_CACHE, function, case, build)


def _skeleton(graph: list[dict]) -> list[tuple]:
    """What must match node by node: opcode, target, module type and the non-node arguments."""
    return [(n["op"], n["target"], n.get("module_type"), repr(n["args"]), repr(n["kwargs"])) for n in graph]


def _node_text(row: tuple) -> str:
    op, target, mtype, args, kwargs = row
    kind = f" ({_short(mtype)})" if mtype else ""
    kw = f" kwargs {kwargs}" if kwargs != "{}" else ""
    return f"{op} {target}{kind}{kw}"


MAPPING_HINT = "ex07.prepare_default_qat_mapping_get"
BACKEND_HINT = "ex07.prepare_backend_you_are_given"
FIXED_QPARAMS_HINT = "ex07.sigmoid_tanh_have_known_output"
OTHER_BACKENDS = ("x86", "qnnpack", "fbgemm", "onednn")


def _fq_configs(ev: dict) -> list:
    return [(r["node"], r.get("config"), r.get("weight_fake_quant")) for r in ev["modules"]]


def _prepared_for(case: Case, ev: dict) -> str | None:
    """The other backend whose default QAT mapping gives exactly the learner's fake-quants, if one does."""
    own = case.data["backend"]
    for backend in OTHER_BACKENDS:
        if backend != own:
            other = _reference(f"prepare_for_qat {backend}", case, lambda c, b=backend: _prep_reference(c, b))
            if _fq_configs(other) == _fq_configs(ev) and _fq_configs(other) != _fq_configs(_prep_reference_cached(case)):
                return backend
    return None


def _prep_judge(case: Case, ev: dict) -> None:
    ref = _prep_reference_cached(case)
    backend = case.data["backend"]
    fqs = [r for r in ev["modules"] if r.get("fake_quant")]
    observers = [r for r in ev["modules"] if r.get("observer")]
    if not fqs:
        if observers:
            raise CheckFailed(
                f"the graph calls {len(observers)} observers ({_short(observers[0]['type'])} at "
                f"'{observers[0]['node']}') and no fake-quantize module",
                "ex07.use_get_default_qat_qconfig")
        raise CheckFailed("the graph calls no fake-quantize module at all",
                          "ex07.prepare_prepare_qat_fx_model")
    if not ev["training"] or ev["eval_submodules"]:
        where = ", ".join(repr(n or "<root>") for n in ev["eval_submodules"]) or "the root"
        msg = f"the prepared model is not in train mode (eval mode: {where})"
        if ref["arrived_training"]:   # it came in train mode: the answer itself switched it (or the result) to eval
            raise CheckFailed(msg + "; the model was handed over in train mode",
                              "ex07.leave_prepared_model_train_mode")
        if ev["caller_training"]:     # model.train() was called, yet the result is in eval mode
            raise CheckFailed(msg + "; the model you were given is in train mode now, the prepared one is not",
                              "ex07.leave_prepared_model_train_mode_2")
        raise CheckFailed(msg + "; the model was handed over in eval mode and is still in eval mode",
                          "ex07.call_model_train_before_prepare")
    by_node = {r["node"]: r for r in ev["modules"]}
    any_qat = any(".qat." in (r.get("type") or "") for r in ev["modules"])
    for r in ref["modules"]:
        got = by_node.get(r["node"])
        if ".qat." in (r["type"] or "") and got is not None and ".qat." not in (got["type"] or ""):
            raise CheckFailed(
                f"call_module '{r['node']}' calls a {got['type']}, expected the QAT module {r['type']}"
                + ("" if any_qat else "; no module of the graph is a QAT module"),
                # prepare_fx inserts fake-quants with the QAT mapping but swaps in no QAT module at all
                None if any_qat else "ex07.use_prepare_qat_fx_not")
    got_sk, ref_sk = _skeleton(ev["graph"]), _skeleton(ref["graph"])
    for i, (g, e) in enumerate(zip(got_sk, ref_sk)):
        if g[:2] == e[:2] and g[4] != e[4] and g[4].replace("'training': False", "'training': True") == e[4]:
            raise CheckFailed(
                f"node {i} ({ev['graph'][i]['name']}) is {_node_text(g)}, expected {_node_text(e)}",
                "ex07.call_model_train_before_tracing")
    for r in ref["modules"]:
        got = by_node.get(r["node"])
        for key, what in (("config", "fake-quant"), ("weight_fake_quant", "weight fake-quant")):
            exp = r.get(key)
            if exp is None or got is None:
                continue
            have = got.get(key)
            if have != exp:
                if have is None:
                    msg = f"'{r['node']}' has no {what}, expected {_short(exp['class'])}"
                else:
                    diff = next(k for k in exp if have.get(k) != exp[k])
                    msg = (f"the {what} of '{r['node']}' has {diff}={have.get(diff)!r}, expected {exp[diff]!r} "
                           f"(backend '{backend}': {_short(exp['class'])}, range {exp['quant_min']}..{exp['quant_max']}, "
                           f"{exp['qscheme']})")
                other = _prepared_for(case, ev)
                if other is not None:
                    raise CheckFailed(msg + f"; every fake-quant is the one backend '{other}' gets", BACKEND_HINT)
                if "FixedQParams" in exp["class"] and "FixedQParams" not in ((have or {}).get("class") or ""):
                    raise CheckFailed(msg, FIXED_QPARAMS_HINT)
                raise CheckFailed(msg, MAPPING_HINT)
    if got_sk != ref_sk:
        i = next((i for i, (g, e) in enumerate(zip(got_sk, ref_sk)) if g != e), min(len(got_sk), len(ref_sk)))
        g = _node_text(got_sk[i]) if i < len(got_sk) else "missing"
        e = _node_text(ref_sk[i]) if i < len(ref_sk) else "no node"
        got_fq = sum(1 for r in ev["modules"] if r.get("fake_quant"))
        ref_fq = sum(1 for r in ref["modules"] if r.get("fake_quant"))
        raise CheckFailed(f"the prepared graph has {len(got_sk)} nodes, expected {len(ref_sk)}; node {i} is {g}, "
                          f"expected {e}" + (f"; it calls {got_fq} fake-quantize modules, the default QAT mapping "
                                             f"gives {ref_fq}" if got_fq != ref_fq else ""),
                          # the mapping decides where fake-quants go: a different number of them is its doing
                          "ex07.default_qat_mapping_get_default" if got_fq != ref_fq else
                          "ex07.prepare_model_itself_prepare_qat")
    out, exp = ev["outputs"], ref["outputs"]
    if isinstance(out, str):
        raise CheckFailed(f"the prepared model could not run in eval mode: {out}")
    if out.shape == exp.shape and torch.allclose(out, exp, rtol=1e-5, atol=1e-5):
        return
    differs = f"outputs of the prepared model (eval mode) differ from the reference by up to " \
              f"{max_difference(out, exp) if out.shape == exp.shape else float('inf'):.3g}"
    weights = first_far_tensor(ev["tensors"]["params"], ref["tensors"]["params"], atol=0, rtol=0)
    if weights is not None:
        raise CheckFailed(f"{differs}: the weights are not the model's ({weights})",
                          "ex07.do_not_change_weights_prepare")
    stats = first_far_tensor(ev["tensors"]["buffers"], ref["tensors"]["buffers"], atol=0, rtol=0)
    if stats is not None:
        raise CheckFailed(f"{differs}: the weights are the model's, but the observer statistics are not ({stats})",
                          "ex07.return_model_prepare_qat_fx")
    raise CheckFailed(differs)


def _prep_reference_cached(case: Case) -> dict:
    return _reference("prepare_for_qat", case, _prep_reference)


def _count_judge(case: Case, got: int) -> None:
    def build(case):
        gm, = case.make()
        nodes = [n for n in gm.graph.nodes if n.op == "call_module"]
        mods = [gm.get_submodule(n.target) for n in nodes]
        return {
            "expected": _count_reference(gm),
            "by_name": sum(1 for n in nodes if "activation_post_process" in n.target or "fake" in n.target.lower()),
            "by_app_name": sum(1 for n in nodes if "activation_post_process" in n.target),
            "all_fq_modules": sum(1 for m in gm.modules() if isinstance(m, FakeQuantizeBase)),
            "unique": len({n.target for n, m in zip(nodes, mods) if isinstance(m, FakeQuantizeBase)}),
            "exact_class": sum(1 for m in mods if isinstance(m, torch.ao.quantization.FakeQuantize)),
            "with_observers": sum(1 for m in mods if isinstance(m, (FakeQuantizeBase, ObserverBase))),
            "call_module": len(nodes),
            "class_name": sum(1 for m in mods if "FakeQuantize" in type(m).__name__),
            "type_is": sum(1 for m in mods if type(m) is torch.ao.quantization.FakeQuantize),
            "with_call_function": _count_reference(gm) + sum(
                1 for n in gm.graph.nodes if n.op == "call_function" and "fake_quantize" in str(n.target)),
            "first_part": sum(1 for n in nodes
                              if isinstance(getattr(gm, n.target.split(".")[0], None), FakeQuantizeBase)),
            "by_attribute": sum(1 for m in mods if hasattr(m, "fake_quant_enabled")),
            "read_only": sum(1 for n, m in zip(nodes, mods) if isinstance(m, FakeQuantizeBase) and n.users),
            "enabled_only": sum(1 for m in mods if isinstance(m, FakeQuantizeBase) and bool(m.fake_quant_enabled[0])),
        }
    ref = _reference("fake_quant_count", case, build)
    expected = ref["expected"]
    if got == expected:
        return
    hints = []
    if got in (ref["by_name"], ref["by_app_name"]):
        hints.append("ex07.select_nodes_module_type_not")
    if got == ref["all_fq_modules"] and got != ref["unique"]:
        hints.append("ex07.count_call_module_nodes_not")
    if got == ref["unique"]:
        hints.append("ex07.every_call_module_node_counts")
    if got == ref["call_module"]:
        hints.append("ex07.count_only_call_module_nodes")
    if got == ref["with_observers"]:
        hints.append("ex07.observers_are_not_fake_quantize")
    if got == ref["exact_class"]:
        hints.append("ex07.fakequantizebase_base_class_every_fake")
    if got == ref["class_name"]:
        hints.append("ex07.class_name_says_nothing_fakequantizebase")
    if got == ref["type_is"]:
        hints.append("ex07.modules_are_fusedmovingavgobsfakequantize_other")
    if got == ref["with_call_function"] != expected:
        hints.append("ex07.count_only_call_module_nodes_2")
    if got == ref["first_part"] != expected:
        hints.append("ex07.look_each_module_up_whole")
    if got == ref["by_attribute"] != expected:
        hints.append("ex07.attribute_proves_nothing_module_fake")
    if got == ref["read_only"] != expected:
        hints.append("ex07.unread_node_counts_too")
    if got == ref["enabled_only"] != expected:
        hints.append("ex07.disabled_fake_quant_counts_too")
    if got == 0:   # many mistakes count nothing (testing the node or its target, a misspelt op, ...)
        hints.append("")
    # A diagnosis is confirmed only when the count it predicts is the learner's count and no other diagnosis
    # predicts the same: when two mistakes give the same number here, naming either could blame what the
    # answer does right, so the hint stays general (another case tells them apart).
    hint = hints[0] if len(hints) == 1 and hints[0] else (
        "ex07.count_call_module_nodes_whose")
    raise CheckFailed(f"counted {got} fake-quantize nodes, expected {expected}", hint)


# Wrong versions of the loop, most common first; the judge names the first one the learner's result matches.
VARIANT_HINTS = {
    **TRAINING_LOOP_HINTS,
    "mse": "ex07.loss_cross_entropy_logits_labels",
    "ascent": "ex07.loss_went_up_step_against",
    "extra_forward_after": "ex07.run_exactly_one_forward_pass",
    "extra_forward_before": "ex07.run_exactly_one_forward_pass",
    "zero_after_step": "ex07.zero_gradients_before_each_backward",
    "clip_1": "ex07.use_gradients_they_are_no",
    "clip_5": "ex07.use_gradients_they_are_no",
    "clip_10": "ex07.use_gradients_they_are_no",
}


def _loop(prepared: nn.Module, batches: list, steps: int, lr: float, variant: str) -> nn.Module:
    """training_loop, and the wrong loops of this exercise's own: the gradients zeroed after each step instead of
    before it (the gradients the model arrived with join the first step), and clip_grad_norm_ to 1, 5 or 10."""
    if variant != "zero_after_step" and not variant.startswith("clip_"):
        return training_loop(prepared, batches, steps, lr, variant)
    prepared.train()
    opt = torch.optim.SGD(prepared.parameters(), lr=lr)
    for i in range(steps):
        x, y = batches[i % len(batches)]
        if variant != "zero_after_step":
            opt.zero_grad()
        F.cross_entropy(prepared(x), y).backward()
        if variant.startswith("clip_"):
            torch.nn.utils.clip_grad_norm_(prepared.parameters(), float(variant[5:]))
        opt.step()
        if variant == "zero_after_step":
            opt.zero_grad()
    return prepared


def _state(model: nn.Module) -> dict:
    return {"params": {n: p.detach().clone() for n, p in model.named_parameters()},
            "buffers": {n: b.detach().clone() for n, b in model.named_buffers()},
            "frozen": [n for n, p in model.named_parameters() if not p.requires_grad]}


def _loss(model: nn.Module, batches: list) -> float:
    m = copy.deepcopy(model).eval()
    m.apply(disable_observer)
    with torch.no_grad():
        return float(sum(F.cross_entropy(m(x), y) for x, y in batches) / len(batches))


def _ft_reference(case: Case) -> dict:
    prepared, batches, steps, lr = case.make()
    initial = _state(prepared)
    training_loop(prepared, batches, steps, lr)
    return {"initial": initial, "final": _state(prepared)}


def _ft_losses(case: Case) -> tuple[float, float]:
    """Mean cross-entropy on the batches before and after the reference run (observers frozen)."""
    prepared, batches, steps, lr = case.make()
    before = _loss(prepared, batches)
    return before, _loss(training_loop(prepared, batches, steps, lr), batches)


def _variant_params(case: Case, variant: str) -> dict | None:
    def build(case):
        prepared, batches, steps, lr = case.make()
        try:
            return _state(_loop(prepared, batches, steps, lr, variant))["params"]
        except Exception:
            return None
    return _reference(f"qat_finetune {variant}", case, build)


def _matches(case: Case, ev: dict, variant: str) -> bool:
    params = _variant_params(case, variant)
    return params is not None and first_far_tensor(ev["params"], params) is None


def _ft_judge(case: Case, ev: dict) -> None:
    ref = _reference("qat_finetune", case, _ft_reference)
    steps = case.data["steps"]
    trained = first_far_tensor(ev["params"], ref["final"]["params"]) is None  # prepared holds the right weights
    if not ev["same"]:
        if trained and steps > 0:
            raise CheckFailed("returned a different object from the prepared model it was given, although prepared "
                              "itself holds the right trained weights",
                              "ex07.return_prepared_itself_trained_place")
        if steps == 0:   # nothing to train: the weights cannot tell where the training went
            raise CheckFailed("returned a different object from the prepared model it was given",
                              "ex07.return_prepared_itself_same_object")
        raise CheckFailed("returned a different object from the prepared model it was given, and prepared itself "
                          "does not hold the trained weights",
                          "ex07.train_prepared_place_return_prepared")
    if not ev["training"]:
        handed_eval = case.data["eval_mode"]
        msg = (f"the model is in eval mode after qat_finetune, expected train mode (it was handed over in "
               f"{'eval' if handed_eval else 'train'} mode)")
        if not handed_eval:
            hint = "ex07.leave_model_train_mode_was"
        elif steps == 0:   # nothing trained: the answer skipped prepared.train() when there was nothing to do
            hint = "ex07.call_prepared_train_also_when"
        elif trained:
            hint = "ex07.leave_model_train_mode_when"
        elif _matches(case, ev, "eval"):
            hint = "ex07.call_prepared_train_at_start"
        else:
            hint = "ex07.qat_finetune_trains_train_mode"
        raise CheckFailed(msg, hint)
    expect(not ev.get("in_eval"), f"the model is in train mode after qat_finetune but its submodule "
           f"'{(ev.get('in_eval') or [''])[0]}' is in eval mode: expected every submodule in train mode",
           "ex07.every_submodule_trains")
    expect(ev.get("frozen", []) == ref["final"]["frozen"], f"the parameters that require no grad are "
           f"{ev.get('frozen', [])} after qat_finetune, expected {ref['final']['frozen']} as the caller left them",
           "shared.leave_requires_grad_caller_s")
    expect(not ev.get("batches_grad"), "a batch tensor requires grad after qat_finetune: the caller's batches were "
           "changed", "ex07.leave_batches_as_given")
    switched = first_far_tensor(ev["buffers"], ref["final"]["buffers"], only=("observer_enabled", "fake_quant_enabled"))
    expect(switched is None, f"the observers' and fake-quants' switches are not as the caller left them after "
           f"qat_finetune: {switched}", "ex07.leave_quant_switches")
    mismatch = first_far_tensor(ev["params"], ref["final"]["params"])
    if mismatch is not None:
        expect_trained(ev["params"], ref["initial"]["params"], steps)
        # A wrong loop is named only when it alone reproduces the learner's parameters: two wrong loops that give
        # the same parameters here (steps=3 over 2 batches: one step fewer = no cycling) leave the hint general.
        named = {text for variant, text in VARIANT_HINTS.items() if _matches(case, ev, variant)}
        before, after = _reference("qat_finetune losses", case, _ft_losses)
        raise CheckFailed(
            f"after {steps} steps the parameters differ from plain SGD on cross-entropy: {mismatch} "
            f"(the reference takes the mean loss on the batches from {before:.4f} to {after:.4f})",
            named.pop() if len(named) == 1 else
            "ex07.each_step_x_y_batches")
    mismatch = first_far_tensor(ev["buffers"], ref["final"]["buffers"])
    if mismatch is not None:
        raise CheckFailed(f"the parameters match but the fake-quant/batch-norm statistics do not: {mismatch}; the "
                          "model ran besides the training steps",
                          "ex07.run_no_forward_pass_besides")


def _quantized(t: str | None) -> bool:
    return bool(t) and (".quantized.modules" in t) and ".reference." not in t


def _int8_judge(case: Case, ev: dict) -> None:
    ref = _reference("to_int8", case, _int8_reference)
    if ev["fake_quant_left"] or ev["observers_left"]:
        left = ", ".join(ev["fake_quant_left"] or ev["observers_left"])
        if ev["same"]:
            raise CheckFailed(f"returned the prepared model it was given, which still contains fake-quantize/observer "
                              f"modules ({left})",
                              "ex07.return_graphmodule_convert_fx_returns")
        raise CheckFailed(f"the result still contains fake-quantize/observer modules ({left}): it is not converted",
                          "ex07.convert_fx_turns_them_into")
    ref_q = [t for t in ref["ev"]["types"] if _quantized(t)]
    got_q = [t for t in ev["types"] if _quantized(t)]
    if sorted(got_q) != sorted(ref_q):
        missing = sorted(set(ref_q) - set(got_q))
        refs = [t for t in ev["types"] if ".reference." in t]
        raise CheckFailed(
            f"expected quantized modules {', '.join(_short(t) for t in ref_q)}; the result has "
            f"{', '.join(_short(t) for t in got_q) or 'none'}"
            + (f" (missing {', '.join(_short(t) for t in missing)})" if missing else "")
            + (f", and reference modules {', '.join(sorted({_short(t) for t in refs}))}" if refs else ""),
            "ex07.use_convert_fx_not_convert" if refs else None)
    if ev["training"]:
        raise CheckFailed("the converted model is in train mode, expected eval mode",
                          "ex07.put_model_eval_mode_convert")
    out = ev["outputs"]
    if isinstance(out, str) or out is None:
        raise CheckFailed(f"the converted model could not run: {out}")
    exp, fake = ref["outputs"], ref["fake"]
    if out.shape != exp.shape:
        raise CheckFailed(f"output shape {tuple(out.shape)}, expected {tuple(exp.shape)}")
    tol = max(ref["out_scale"], 1e-4) * 1.01
    d_ref, d_fake = max_difference(out, exp), max_difference(out, fake)
    if d_ref <= tol:
        return
    differs = (f"outputs differ from convert_fx's by up to {d_ref:.3g} (one output quantization step is "
               f"{ref['out_scale']:.3g}); from the prepared model in eval mode by {d_fake:.3g}")
    got_p, exp_p = ev["quant"]["qparams"], ref["ev"]["quant"]["qparams"]
    moved = next((k for k in exp_p if k in got_p and abs(got_p[k] - exp_p[k]) > 1e-6 * max(1.0, abs(exp_p[k]))),
                 None)
    if moved is not None:
        raise CheckFailed(f"{differs}: the quantization parameter '{moved}' is {got_p[moved]:.6g}, convert_fx's is "
                          f"{exp_p[moved]:.6g}",
                          "ex07.convert_fx_takes_scales_observers")
    weights = first_far_tensor(ev["quant"]["weights"], ref["ev"]["quant"]["weights"], atol=0, rtol=0)
    if weights is not None and set(got_p) == set(exp_p):
        raise CheckFailed(f"{differs}: the scales are convert_fx's, the int8 weights are not ({weights})",
                          "ex07.convert_copy_prepared_without_changing")
    raise CheckFailed(differs)


# -------------------------------------------------------------------------------- state_dict_bytes

def _bytes(obj: Any) -> int:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.tell()


def _file_sizes(sd: dict) -> set[int]:
    """What torch.save(sd, path) writes for file names of 1 to 64 characters before the extension: inside its zip
    archive every record is named after the file, so the size follows the name's length."""
    sizes = set()
    with tempfile.TemporaryDirectory() as folder:
        for length in range(1, 65):
            path = os.path.join(folder, "m" * length + ".pt")
            torch.save(sd, path)
            sizes.add(os.path.getsize(path))
            os.remove(path)
    return sizes


def _size_judge(case: Case, got: int) -> None:
    def build(case):
        (model,) = case.make()
        sd = model.state_dict()
        tensors = [v for v in sd.values() if isinstance(v, torch.Tensor)]
        out = {"expected": _bytes(sd),
               "params": sum(p.numel() * p.element_size() for p in model.parameters()),
               "tensors": sum(t.numel() * t.element_size() for t in tensors),
               "files": sorted(_file_sizes(sd))}
        try:
            out["whole"] = _bytes(model)
        except Exception:
            out["whole"] = -1
        try:
            out["pickle"] = len(pickle.dumps(sd))
        except Exception:
            out["pickle"] = -1
        return out
    ref = _reference("state_dict_bytes", case, build)
    expected = ref["expected"]
    if got == expected:
        return
    hint = "ex07.serialize_torch_save_model_state"
    if got == ref["whole"]:
        hint = "ex07.save_model_state_dict_not"
    elif got == 0:   # torch.save always writes a zip archive: 0 is a size read from the wrong place
        hint = "ex07.torch_save_wrote_something_even"
    elif got in (ref["params"], ref["tensors"]):
        hint = "ex07.count_what_torch_save_writes"
    elif got in ref["files"] and got != ref["pickle"]:
        hint = "ex07.save_into_io_bytesio_not"
    raise CheckFailed(f"returned {got} bytes, expected {expected}", hint)
