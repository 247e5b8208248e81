"""Section 3: quantization-aware training with quantize_fx (ex07): fp32 vs int8 after convert_fx.

For each model: train it in fp32 on a small synthetic task, then the course's path (prepare_for_qat,
qat_finetune, to_int8) from a copy of it; compare state-dict bytes (state_dict_bytes), latency at 1 and 2
threads, and test accuracy. Sizes and schedule follow lesson 07 (200 fp32 SGD steps, 100 QAT steps at lr 0.01,
batches of 128, latency on a batch of 256) and its task, four Gaussian blobs (`blobs`), carried over to
images for the exercise's ConvBNNet. The models are the lesson's QATNet() and the widest of its width sweep,
QATNet(hidden=1024); then the sweep itself (each width prepared, calibrated on one batch and converted, as the
lesson does): how the size ratio and the int8 speedup grow with the model.
"""
from __future__ import annotations

import copy
import io
import math
import re
import warnings
import zipfile

import torch
import torch.nn as nn
import torch.nn.functional as F

from .common import Config, Section, Table, Target, fmt_s, fmt_x, load_solutions, timeit

TITLE = "Quantization-aware training: fp32 vs int8 (convert_fx)"
SIZE_TARGET = 3.5


def _models(smoke: bool) -> list[tuple[str, callable, tuple[int, ...], bool]]:
    """(label, constructor, input shape without batch, linear-heavy)."""
    from fxplayground import ConvBNNet, QATNet

    if smoke:
        return [("QATNet()", lambda: QATNet(), (16,), True),
                ("ConvBNNet(channels=4)", lambda: ConvBNNet(channels=4), (3, 8, 8), False)]
    return [("QATNet()", lambda: QATNet(), (16,), True),
            ("QATNet(hidden=1024)", lambda: QATNet(hidden=1024), (16,), True),
            ("ConvBNNet(channels=16)", lambda: ConvBNNet(channels=16), (3, 16, 16), False)]


SWEEP = (64, 128, 256, 512, 1024)  # lesson 07's widths


def blobs(n: int, seed: int, shape: tuple[int, ...] = (16,)) -> tuple[torch.Tensor, torch.Tensor]:
    """Lesson 07's data: n points around four fixed centres, Gaussian noise 1.0. For (16,) exactly the lesson's;
    for (D,) the centres shrink by sqrt(16 / D), so they stay as far apart; for images (C, H, W) each class is
    a colour (a centre per channel, the same at every pixel), scaled for the per-channel mean a conv net sees."""
    scale = 0.6 * math.sqrt(16 / shape[0]) / (math.sqrt(shape[1] * shape[2]) if len(shape) == 3 else 1)
    cshape = (4, shape[0], 1, 1) if len(shape) == 3 else (4, shape[0])
    centers = scale * torch.randn(cshape, generator=torch.Generator().manual_seed(42))
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 4, (n,), generator=g)
    return centers[y] + torch.randn(n, *shape, generator=g), y


def trained_float(make, shape: tuple[int, ...], n_train: int, n_test: int, batch: int,
                  steps: int) -> tuple[nn.Module, list, tuple[torch.Tensor, torch.Tensor]]:
    """The float model both QAT flows start from, trained (seeded) on lesson 07's data and in eval mode; with the
    training batches and the test set."""
    (x_train, y_train), test = blobs(n_train, 1, shape), blobs(n_test, 2, shape)
    batches = [(x_train[i:i + batch], y_train[i:i + batch]) for i in range(0, n_train, batch)]
    torch.manual_seed(0)
    fp32 = make().train()
    opt = torch.optim.SGD(fp32.parameters(), lr=0.05, momentum=0.9)
    for step in range(steps):
        xb, yb = batches[step % len(batches)]
        opt.zero_grad()
        F.cross_entropy(fp32(xb), yb).backward()
        opt.step()
    return fp32.eval(), batches, test


def payload_bytes(model: nn.Module) -> int:
    """Bytes of tensor data inside torch.save(model.state_dict()): the file minus its zip and pickle overhead."""
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    with zipfile.ZipFile(buf) as z:
        return sum(i.file_size for i in z.infolist() if re.search(r"/data/\d+$", i.filename))


def _accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return float((model(x).argmax(1) == y).float().mean())


def run(cfg: Config) -> Section:
    fns = load_solutions("ex07_qat", ["prepare_for_qat", "qat_finetune", "to_int8", "state_dict_bytes"])
    prepare, finetune, to_int8, nbytes = (fns[k] for k in ("prepare_for_qat", "qat_finetune", "to_int8",
                                                           "state_dict_bytes"))
    sec = Section("qat", TITLE)
    n_train, n_test = (256, 256) if cfg.smoke else (4096, 2048)
    fp32_steps, qat_steps, batch, lat_batch = (4, 2, 128, 64) if cfg.smoke else (200, 100, 128, 256)
    size_rows, lat_rows, results = [], [], []
    for label, make, shape, linear_heavy in _models(cfg.smoke):
        fp32, batches, (x_test, y_test) = trained_float(make, shape, n_train, n_test, batch, fp32_steps)
        example = (batches[0][0],)
        with warnings.catch_warnings():  # torch.ao.quantization's deprecation notices (lesson 07 explains them)
            warnings.simplefilter("ignore")
            prepared = prepare(copy.deepcopy(fp32), example)
            finetune(prepared, batches, qat_steps, 0.01)
            int8 = to_int8(prepared)
        acc_fp32, acc_qat, acc_int8 = (_accuracy(fp32, x_test, y_test), _accuracy(prepared.eval(), x_test, y_test),
                                       _accuracy(int8, x_test, y_test))
        b_fp32, b_int8 = nbytes(fp32), nbytes(int8)
        p_fp32, p_int8 = payload_bytes(fp32), payload_bytes(int8)
        params = sum(p.numel() for p in fp32.parameters())
        x = x_test[:lat_batch]
        lat = {}
        for threads in (1, 2):
            t = timeit({"fp32": fp32, "int8": int8}, x, cfg=cfg, threads=threads, cpu=False)
            lat[threads] = {"fp32_s": t.medians["fp32"], "int8_s": t.medians["int8"],
                            "speedup": t.speedups["int8"], "spread": list(t.spread["int8"])}
            lat_rows.append([label, str(threads), fmt_s(t.medians["fp32"]), fmt_s(t.medians["int8"]),
                             fmt_x(t.speedups["int8"], t.spread["int8"])])
        r = {"model": label, "params": params, "linear_heavy": linear_heavy, "bytes_fp32": b_fp32,
             "bytes_int8": b_int8, "size_ratio": b_fp32 / b_int8,
             "payload_fp32": p_fp32, "payload_int8": p_int8, "payload_ratio": p_fp32 / p_int8,
             "acc_fp32": acc_fp32, "acc_qat": acc_qat, "acc_int8": acc_int8, "latency": lat, "batch": lat_batch}
        results.append(r)
        size_rows.append([label, f"{params:,}", f"{b_fp32:,}", f"{b_int8:,}", f"{b_fp32 / b_int8:.2f}x",
                          f"{p_fp32:,} → {p_int8:,} ({p_fp32 / p_int8:.2f}x)", f"{acc_fp32:.1%}", f"{acc_qat:.1%}",
                          f"{acc_int8:.1%}",
                          f"{100 * (acc_int8 - acc_fp32):+.1f} pt"])
        if linear_heavy:
            ratio = b_fp32 / b_int8
            sec.targets.append(Target(
                f"{label}: state-dict size", f"fp32/int8 ≥ {SIZE_TARGET}x (ideal 4x) for linear-heavy models",
                f"{ratio:.2f}x ({b_fp32:,} → {b_int8:,} bytes)", ratio >= SIZE_TARGET,
                "" if ratio >= SIZE_TARGET else
                f"the tensor data alone shrinks {p_fp32 / p_int8:.2f}x ({p_fp32:,} → {p_int8:,} bytes), but "
                f"torch.save adds {b_fp32 - p_fp32:,} bytes of zip records, alignment and pickle to the fp32 file "
                f"and {b_int8 - p_int8:,} to the int8 one, which stores more, smaller tensors (per-channel "
                "float64 scales, int64 zero points, activation scales): a fixed cost a model this small cannot "
                "amortize"))
    sweep, sweep_rows = [], []
    x_cal, _ = blobs(512, 1)
    from fxplayground import QATNet

    for hidden in (SWEEP[0], SWEEP[2]) if cfg.smoke else SWEEP:
        torch.manual_seed(0)
        fp32 = QATNet(hidden=hidden).eval()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prepared = prepare(copy.deepcopy(fp32), (x_cal[:batch],))
            with torch.no_grad():
                prepared.train()(x_cal)  # calibration: the observers see one batch
            int8 = to_int8(prepared)
        t = timeit({"fp32": fp32, "int8": int8}, x_cal[:lat_batch], cfg=cfg, cpu=True)
        b_fp32, b_int8 = nbytes(fp32), nbytes(int8)
        params = sum(p.numel() for p in fp32.parameters())
        sweep.append({"hidden": hidden, "params": params, "bytes_fp32": b_fp32, "bytes_int8": b_int8,
                      "size_ratio": b_fp32 / b_int8, "speedup_cpu": t.cpu_speedups["int8"],
                      "speedup_wall": t.speedups["int8"]})
        sweep_rows.append([f"QATNet(hidden={hidden})", f"{params:,}", f"{b_fp32:,}", f"{b_int8:,}",
                           f"{b_fp32 / b_int8:.2f}x", "✅" if b_fp32 / b_int8 >= SIZE_TARGET else "❌",
                           fmt_x(t.cpu_speedups["int8"], t.cpu_spread["int8"]), fmt_x(t.speedups["int8"])])
    crossing = next((r for r in sweep if r["size_ratio"] >= SIZE_TARGET), None)
    for target in sec.targets:
        if not target.met and crossing is not None:
            target.why += (f"; in the width sweep below the ratio reaches {SIZE_TARGET}x from "
                            f"QATNet(hidden={crossing['hidden']}), {crossing['params']:,} parameters "
                            f"({crossing['size_ratio']:.2f}x)")
    sec.tables.append(Table(
        f"size and accuracy: {fp32_steps} fp32 SGD steps, then {qat_steps} QAT steps (qat_finetune, lr 0.01), "
        f"batches of {batch}; {n_train} training and {n_test} test samples of lesson 07's four blobs (chance: 25%)",
        ["model", "parameters", "fp32 bytes", "int8 bytes", "fp32/int8", "tensor data only: fp32 → int8",
         "fp32 acc", "QAT (fake-quant) acc", "int8 acc", "int8 − fp32"], size_rows))
    sec.tables.append(Table(
        f"latency, batch {lat_batch}, median per call (wall-clock), {cfg.repeats} run(s); speedup = fp32 / int8",
        ["model", "threads", "fp32", "int8", "int8 speedup"], lat_rows))
    sec.tables.append(Table(
        f"lesson 07's width sweep: QATNet(hidden=h), prepared, calibrated on one batch of 512 and converted (size "
        f"does not depend on training); int8 speedup at batch {lat_batch}, 1 thread, {cfg.repeats} run(s)",
        ["model", "parameters", "fp32 bytes", "int8 bytes", "fp32/int8", f"≥ {SIZE_TARGET}x", "int8 speedup, CPU",
         "int8 speedup, wall"], sweep_rows))
    sec.notes.append("Latency is wall-clock only: at 2 threads the process's CPU time is not latency. "
                     f"Quantized engine: {torch.backends.quantized.engine}. Where a model is much slower at 2 "
                     "threads than at 1, its second intra-op thread was waiting for a core that other processes "
                     "held (look at the load average above): on a shared 2-core machine one thread is the "
                     "honest setting, as lesson 07 says.")
    sec.data = {"results": results, "sweep": sweep, "repeats": cfg.repeats}
    return sec


def _short(label: str) -> str:
    return label.replace("features=", "").replace("hidden=", "").replace("channels=", "").replace(", ", ",\n")


def plot(sec: Section, path: str) -> None:
    import matplotlib.pyplot as plt

    results = sec.data["results"]
    fig, (ax_size, ax_lat, ax_sweep) = plt.subplots(1, 3, figsize=(17, 4.2),
                                                    gridspec_kw={"width_ratios": [1, 1.4, 1]})
    names = [_short(r["model"]) for r in results]
    xs = list(range(len(results)))
    w = 0.38
    ax_size.bar([x - w / 2 for x in xs], [r["bytes_fp32"] / 1024 for r in results], w, color="#8c8c8c", label="fp32")
    ax_size.bar([x + w / 2 for x in xs], [r["bytes_int8"] / 1024 for r in results], w, color="#4c72b0", label="int8")
    for x, r in zip(xs, results):
        ax_size.text(x + w / 2, r["bytes_int8"] / 1024, f"{r['size_ratio']:.2f}x\nsmaller", ha="center",
                     va="bottom", fontsize=7)
    ax_size.set_yscale("log")
    ax_size.set_xticks(xs)
    ax_size.set_xticklabels(names, fontsize=8)
    ax_size.set_ylabel("state dict, KiB (log scale)")
    ax_size.set_title(f"size: torch.save of the state dict (target ≥ {SIZE_TARGET}x, ideal 4x)", fontsize=10)
    ax_size.legend(fontsize=8)
    w = 0.2
    bars = [("fp32", 1, "#8c8c8c"), ("int8", 1, "#4c72b0"), ("fp32", 2, "#c7c7c7"), ("int8", 2, "#dd8452")]
    for k, (kind, threads, color) in enumerate(bars):
        vals = [r["latency"][threads][f"{kind}_s"] * 1e3 for r in results]
        ax_lat.bar([x + (k - 1.5) * w for x in xs], vals, w, color=color,
                   label=f"{kind}, {threads} thread{'s' if threads > 1 else ''}")
    for x, r in zip(xs, results):
        for k, threads in ((1, 1), (3, 2)):
            v = r["latency"][threads]["int8_s"] * 1e3
            ax_lat.text(x + (k - 1.5) * w, v, f"{r['latency'][threads]['speedup']:.2f}x", ha="center",
                        va="bottom", fontsize=7)
    ax_lat.set_yscale("log")
    ax_lat.set_xticks(xs)
    ax_lat.set_xticklabels(names, fontsize=8)
    ax_lat.set_ylabel("ms per batch (wall-clock median, log scale)")
    ax_lat.set_title(f"latency, batch {results[0]['batch']}, {sec.data['repeats']} run(s); labels: int8 speedup",
                     fontsize=10)
    ax_lat.legend(fontsize=7, ncol=2)
    sweep = sec.data["sweep"]
    params = [r["params"] for r in sweep]
    ax_sweep.plot(params, [r["size_ratio"] for r in sweep], "o-", color="#4c72b0", label="size fp32/int8")
    ax_sweep.plot(params, [r["speedup_cpu"] for r in sweep], "s-", color="#dd8452", label="int8 speedup (CPU, 1 thread)")
    ax_sweep.axhline(4, color="black", lw=1, ls="--", label="ideal size ratio 4x")
    ax_sweep.axhline(SIZE_TARGET, color="#4c72b0", lw=1, ls=":", label=f"size target {SIZE_TARGET}x")
    ax_sweep.axhline(1, color="#dd8452", lw=1, ls=":", label="speedup 1x")
    for r in sweep:
        ax_sweep.annotate(str(r["hidden"]), (r["params"], r["size_ratio"]), textcoords="offset points",
                          xytext=(3, 4), fontsize=7)
    ax_sweep.set_xscale("log")
    ax_sweep.set_xlabel("parameters (log scale); labels: hidden width")
    ax_sweep.set_ylim(0, 4.4)
    ax_sweep.set_title("lesson 07's width sweep: QATNet(hidden=h)", fontsize=10)
    ax_sweep.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
