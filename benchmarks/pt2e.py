"""Section 8: PT2E quantization-aware training (ex11) next to quantize_fx QAT (ex07) on the same models.

For each model: train it in fp32 as section 3 does (lesson 07's four blobs, 200 SGD steps), then from two copies
of it the two flows with the course's own functions and the same fine-tune (100 steps, lr 0.01, batches of 128):
quantize_fx (prepare_for_qat, qat_finetune, to_int8) and PT2E (prepare_pt2e_qat, pt2e_finetune, to_qdq). Compared
within one run: test accuracy, state-dict bytes (state_dict_bytes; the PT2E model also after deleting the float
weights convert_pt2e leaves attached but no node reads, as lesson 11 does), eager latency at batch 256 on one
thread, and the seconds each flow's steps take. Ratios only; no inductor here (lesson 11 measures that lowering).
"""
from __future__ import annotations

import copy
import time
import warnings

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from .common import Config, Section, Table, fmt_s, fmt_x, load_solutions, timeit
from .qat import trained_float

TITLE = "PT2E QAT vs quantize_fx QAT: accuracy, size, latency"


def _models(smoke: bool) -> list[tuple[str, callable, tuple[int, ...]]]:
    """(label, constructor, input shape without batch). Conv+BN is left out: convert_pt2e folds its QAT
    batch norm by pattern matching, which alone takes tens of seconds on two cores."""
    from fxplayground import QATNet

    if smoke:
        return [("QATNet()", lambda: QATNet(), (16,))]
    return [("QATNet()", lambda: QATNet(), (16,)), ("QATNet(hidden=1024)", lambda: QATNet(hidden=1024), (16,))]


def _accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return float((model(x).argmax(1) == y).float().mean())


def drop_unread(gm: fx.GraphModule) -> fx.GraphModule:
    """A copy of `gm` without the parameters and buffers that no get_attr node reads (lesson 11, section 5)."""
    gm = copy.deepcopy(gm)
    read = {n.target for n in gm.graph.nodes if n.op == "get_attr"}
    for name in [n for n, _ in gm.named_parameters()] + [n for n, _ in gm.named_buffers()]:
        if name not in read:
            owner, _, attr = name.rpartition(".")
            delattr(gm.get_submodule(owner) if owner else gm, attr)
    gm.recompile()
    return gm


def _timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def run(cfg: Config) -> Section:
    fx_fns = load_solutions("ex07_qat", ["prepare_for_qat", "qat_finetune", "to_int8", "state_dict_bytes"])
    pt2e_fns = load_solutions("ex11_pt2e", ["prepare_pt2e_qat", "pt2e_finetune", "to_qdq", "qdq_counts"])
    nbytes = fx_fns["state_dict_bytes"]
    sec = Section("pt2e", TITLE)
    n_train, n_test = (256, 256) if cfg.smoke else (4096, 2048)
    fp32_steps, qat_steps, batch, lat_batch = (4, 2, 128, 64) if cfg.smoke else (200, 100, 128, 256)
    acc_rows, size_rows, lat_rows, cost_rows, results = [], [], [], [], []
    for label, make, shape in _models(cfg.smoke):
        fp32, batches, (x_test, y_test) = trained_float(make, shape, n_train, n_test, batch, fp32_steps)
        example = (batches[0][0],)
        with warnings.catch_warnings():  # torch.ao.quantization's deprecation notices, torchao's log lines
            warnings.simplefilter("ignore")
            torch.manual_seed(1)
            fx_prepared, fx_prep_s = _timed(fx_fns["prepare_for_qat"], copy.deepcopy(fp32), example)
            _, fx_train_s = _timed(fx_fns["qat_finetune"], fx_prepared, batches, qat_steps, 0.01)
            fx_int8, fx_convert_s = _timed(fx_fns["to_int8"], fx_prepared)
            torch.manual_seed(1)
            pt_prepared, pt_prep_s = _timed(pt2e_fns["prepare_pt2e_qat"], copy.deepcopy(fp32), example)
            _, pt_train_s = _timed(pt2e_fns["pt2e_finetune"], pt_prepared, batches, qat_steps, 0.01)
            qdq, pt_convert_s = _timed(pt2e_fns["to_qdq"], pt_prepared)
        lean = drop_unread(qdq)
        acc = {"fp32": _accuracy(fp32, x_test, y_test), "fx": _accuracy(fx_int8, x_test, y_test),
               "pt2e": _accuracy(qdq, x_test, y_test)}
        size = {"fp32": nbytes(fp32), "fx": nbytes(fx_int8), "pt2e": nbytes(qdq), "pt2e_lean": nbytes(lean)}
        t = timeit({"fp32": fp32, "quantize_fx int8": fx_int8, "PT2E Q/DQ": lean}, x_test[:lat_batch], cfg=cfg)
        pt_vs_fx, pt_vs_fx_spread = t.ratio("PT2E Q/DQ", "quantize_fx int8", cpu=True)
        q, dq = pt2e_fns["qdq_counts"](qdq)
        r = {"model": label, "params": sum(p.numel() for p in fp32.parameters()), "accuracy": acc, "bytes": size,
             "latency_s": dict(t.medians), "latency_cpu_s": dict(t.cpu_medians),
             "speedup_vs_fp32_cpu": dict(t.cpu_speedups), "pt2e_vs_fx_speed": pt_vs_fx, "qdq": [q, dq],
             "seconds": {"fx": [fx_prep_s, fx_train_s, fx_convert_s], "pt2e": [pt_prep_s, pt_train_s, pt_convert_s]}}
        results.append(r)
        acc_rows.append([label, f"{r['params']:,}", f"{acc['fp32']:.1%}", f"{acc['fx']:.1%}", f"{acc['pt2e']:.1%}",
                         f"{100 * (acc['pt2e'] - acc['fx']):+.1f} pt", f"{q} / {dq}"])
        size_rows.append([label, f"{size['fp32']:,}", f"{size['fx']:,}", f"{size['pt2e']:,}", f"{size['pt2e_lean']:,}",
                          f"{size['fp32'] / size['fx']:.2f}x", f"{size['fp32'] / size['pt2e_lean']:.2f}x",
                          f"{size['pt2e_lean'] / size['fx']:.2f}x"])
        lat_rows.append([label, fmt_s(t.cpu_medians["fp32"]), fmt_s(t.cpu_medians["quantize_fx int8"]),
                         fmt_s(t.cpu_medians["PT2E Q/DQ"]),
                         fmt_x(t.cpu_speedups["quantize_fx int8"], t.cpu_spread["quantize_fx int8"]),
                         fmt_x(t.cpu_speedups["PT2E Q/DQ"], t.cpu_spread["PT2E Q/DQ"]),
                         fmt_x(pt_vs_fx, pt_vs_fx_spread)])
        cost_rows.append([label, f"{fx_prep_s:.2f} → {pt_prep_s:.2f}", f"{fx_train_s:.2f} → {pt_train_s:.2f}",
                          f"{fx_convert_s:.2f} → {pt_convert_s:.2f}",
                          f"{(pt_prep_s + pt_train_s + pt_convert_s) / (fx_prep_s + fx_train_s + fx_convert_s):.2f}x"])
    sec.tables.append(Table(
        f"accuracy: {fp32_steps} fp32 SGD steps, then the same {qat_steps} QAT steps (lr 0.01, batches of {batch}) "
        f"in each flow; {n_test} test samples of lesson 07's four blobs (chance: 25%)",
        ["model", "parameters", "fp32 acc", "quantize_fx int8 acc", "PT2E Q/DQ acc", "PT2E − quantize_fx",
         "PT2E quantize / dequantize nodes"], acc_rows))
    sec.tables.append(Table(
        "state-dict bytes (torch.save of the state dict); PT2E as convert_pt2e returns it, and without the float "
        "weights it leaves attached that no node reads",
        ["model", "fp32", "quantize_fx int8", "PT2E as converted", "PT2E, unread weights dropped",
         "fp32 / quantize_fx", "fp32 / PT2E (dropped)", "PT2E (dropped) / quantize_fx"], size_rows))
    sec.tables.append(Table(
        f"eager latency, batch {lat_batch}, 1 thread, median per call (CPU time), {cfg.repeats} run(s); speedups "
        "are fp32 / model; the last column is how many times faster PT2E is than quantize_fx (below 1: slower)",
        ["model", "fp32", "quantize_fx int8", "PT2E Q/DQ", "quantize_fx speedup", "PT2E speedup",
         "PT2E vs quantize_fx"], lat_rows))
    sec.tables.append(Table(
        "seconds of each step, quantize_fx → PT2E (wall-clock, one run): prepare (PT2E: export and prepare), "
        f"{qat_steps} fine-tune steps, convert (PT2E: move to eval and convert)",
        ["model", "prepare", "fine-tune", "convert", "PT2E / quantize_fx, all three"], cost_rows))
    sec.notes.append("The PT2E model in eager mode runs float aten.linear between quantize and dequantize nodes: a "
                     "reference representation meant for a backend such as inductor to lower into int8 kernels "
                     "(lesson 11, section 5), so its eager latency is the price of the representation, not of int8 "
                     "arithmetic. quantize_fx's modules call int8 kernels directly.")
    sec.data = {"results": results, "repeats": cfg.repeats}
    return sec


def plot(sec: Section, path: str) -> None:
    import matplotlib.pyplot as plt

    results = sec.data["results"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    names = [r["model"] for r in results]
    xs = list(range(len(results)))
    w = 0.27
    kinds = [("fp32", "fp32", "#8c8c8c"), ("fx", "quantize_fx int8", "#4c72b0"), ("pt2e", "PT2E Q/DQ", "#dd8452")]
    for k, (key, label, color) in enumerate(kinds):
        axes[0].bar([x + (k - 1) * w for x in xs], [r["accuracy"][key] for r in results], w, color=color, label=label)
        size_key = "pt2e_lean" if key == "pt2e" else key
        axes[1].bar([x + (k - 1) * w for x in xs], [r["bytes"][size_key] / 1024 for r in results], w, color=color,
                    label=label + (" (unread weights dropped)" if key == "pt2e" else ""))
        lat_key = {"fp32": "fp32", "fx": "quantize_fx int8", "pt2e": "PT2E Q/DQ"}[key]
        axes[2].bar([x + (k - 1) * w for x in xs], [r["latency_cpu_s"][lat_key] * 1e3 for r in results], w,
                    color=color, label=label)
    low = min(min(r["accuracy"].values()) for r in results)
    axes[0].set_ylim(max(0.0, low - 0.05), 1.0)
    axes[0].set_title("test accuracy", fontsize=10)
    axes[1].set_yscale("log")
    axes[1].set_title("state dict, KiB (log scale)", fontsize=10)
    axes[2].set_yscale("log")
    axes[2].set_title(f"eager latency, ms per batch (CPU time, {sec.data['repeats']} run(s))", fontsize=10)
    for ax in axes:
        ax.set_xticks(xs)
        ax.set_xticklabels(names, fontsize=8)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
