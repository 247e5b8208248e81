"""Section 1: Linear-chain fusion (ex06's fuse_consecutive_linears), eager vs fused, next to the FLOP ratio.

The FLOP ratio (eager FLOPs / fused FLOPs) is the ideal speedup when both run at the same FLOP rate, which is
what a compute-bound shape should do. A shape is called compute-bound here when the arithmetic intensity
(FLOPs per byte of weights and activations moved, fp32) of every matmul, eager and fused, is above this
machine's balance point: peak matmul FLOP/s divided by copy bandwidth, both measured at the start of the
section with one thread. Below it, the byte ratio is the better ideal.
"""
from __future__ import annotations

import copy
import time

import torch
import torch.fx as fx
import torch.nn as nn

from .common import Config, Section, Table, Target, fmt_s, fmt_x, load_solutions, timeit

TITLE = "Linear-chain fusion: eager vs fused"
TARGET_FRACTION = 0.70

# (label, dims, batch): the headline shape first.
SHAPES = [
    ("headline", (512, 2048, 512), 64),
    ("latency", (512, 2048, 512), 1),
    ("deep chain", (1024, 1024, 1024, 1024), 128),
    ("bottleneck", (512, 128, 512), 64),
]
SMOKE_SHAPES = [("headline", (64, 256, 64), 8), ("bottleneck", (64, 16, 64), 8)]


def flops_and_bytes(dims: tuple[int, ...], batch: int) -> tuple[list[int], list[int]]:
    """Per matmul of the chain: 2*B*in*out FLOPs, and fp32 bytes of weight, bias, input and output."""
    flops, nbytes = [], []
    for a, b in zip(dims, dims[1:]):
        flops.append(2 * batch * a * b)
        nbytes.append(4 * (a * b + b + batch * a + batch * b))
    return flops, nbytes


def machine_balance(quick: bool) -> dict[str, float]:
    """Peak one-thread sgemm FLOP/s, copy bandwidth (bytes/s) and their ratio (FLOP per byte)."""
    n = 256 if quick else 1024
    a, b = torch.randn(n, n), torch.randn(n, n)
    src = torch.randn((2 if quick else 16) * 2**20)  # 8 or 64 MiB: larger than the caches
    dst = torch.empty_like(src)
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        def best(fn, reps):
            fn()
            times = []
            for _ in range(reps):
                t = time.thread_time()
                fn()
                times.append(time.thread_time() - t)
            return min(times)  # the machine's capability: CPU time of the least-disturbed run
        t_mm = best(lambda: torch.mm(a, b), 3 if quick else 7)
        t_cp = best(lambda: dst.copy_(src), 3 if quick else 7)
    finally:
        torch.set_num_threads(old)
    flops = 2 * n ** 3 / t_mm
    bandwidth = 2 * src.numel() * 4 / t_cp  # read + write
    return {"peak_flops": flops, "bandwidth": bandwidth, "balance": flops / bandwidth}


def run(cfg: Config) -> Section:
    fns = load_solutions("ex06_fusing", ["fuse_consecutive_linears"])
    fuse = fns["fuse_consecutive_linears"]
    from fxplayground import LinearChain

    sec = Section("fusion", TITLE)
    bal = machine_balance(cfg.smoke)
    sec.notes.append(
        f"Machine balance, one thread: sgemm {bal['peak_flops'] / 1e9:.1f} GFLOP/s, copy "
        f"{bal['bandwidth'] / 1e9:.1f} GB/s, so {bal['balance']:.1f} FLOP/byte; a shape is compute-bound when "
        "every matmul, eager and fused, has a higher arithmetic intensity than that.")
    rows, shapes = [], []
    for label, dims, batch in (SMOKE_SHAPES if cfg.smoke else SHAPES):
        torch.manual_seed(0)
        eager = LinearChain(dims).eval()
        fused = fuse(fx.symbolic_trace(copy.deepcopy(eager))).eval()
        linears = sum(1 for n in fused.graph.nodes
                      if n.op == "call_module" and isinstance(fused.get_submodule(n.target), nn.Linear))
        x = torch.randn(batch, dims[0])
        with torch.no_grad():
            ref, out = eager(x), fused(x)
        max_diff = float((ref - out).abs().max())
        t = timeit({"eager": eager, "fused": fused}, x, cfg=cfg)
        fl_e, by_e = flops_and_bytes(dims, batch)
        fl_f, by_f = flops_and_bytes((dims[0], dims[-1]), batch)
        w_eager = 4 * sum(a * b + b for a, b in zip(dims, dims[1:]))
        w_fused = 4 * (dims[0] * dims[-1] + dims[-1])
        flop_ratio = sum(fl_e) / sum(fl_f)
        byte_ratio = sum(by_e) / sum(by_f)
        intensity = min(f / b for f, b in zip(fl_e + fl_f, by_e + by_f))
        compute_bound = intensity > bal["balance"]
        speedup = t.cpu_speedups["fused"]
        fraction = speedup / flop_ratio
        shape = {"label": label, "dims": list(dims), "batch": batch,
                 "eager_cpu_s": t.cpu_medians["eager"], "fused_cpu_s": t.cpu_medians["fused"],
                 "eager_wall_s": t.medians["eager"], "fused_wall_s": t.medians["fused"],
                 "speedup": speedup, "spread": list(t.cpu_spread["fused"]),
                 "speedup_wall": t.speedups["fused"], "spread_wall": list(t.spread["fused"]),
                 "flop_ratio": flop_ratio, "byte_ratio": byte_ratio, "intensity": intensity,
                 "compute_bound": compute_bound, "fraction_of_flop_ratio": fraction,
                 "fraction_wall": t.speedups["fused"] / flop_ratio, "max_abs_diff": max_diff,
                 "linears_after": linears, "weight_bytes": [w_eager, w_fused],
                 "gflops_eager": sum(fl_e) / t.cpu_medians["eager"] / 1e9,
                 "gflops_fused": sum(fl_f) / t.cpu_medians["fused"] / 1e9}
        shapes.append(shape)
        rows.append([label, "→".join(map(str, dims)), str(batch),
                     f"{fmt_s(t.cpu_medians['eager'])} / {fmt_s(t.medians['eager'])}",
                     f"{fmt_s(t.cpu_medians['fused'])} / {fmt_s(t.medians['fused'])}",
                     fmt_x(speedup, t.cpu_spread["fused"]), fmt_x(t.speedups["fused"], t.spread["fused"]),
                     f"{flop_ratio:.2f}x", f"{byte_ratio:.2f}x", f"{fraction:.0%}",
                     f"{intensity:.1f} ({'compute' if compute_bound else 'memory'})",
                     f"{shape['gflops_eager']:.1f} / {shape['gflops_fused']:.1f}", f"{max_diff:.1e}",
                     f"{len(dims) - 1} → {linears}"])
    sec.tables.append(Table(
        f"median per call (CPU time / wall-clock), 1 thread, {cfg.repeats} run(s) of ≥{cfg.min_run_time:g} s "
        "per candidate and clock; ranges are over runs",
        ["shape", "dims", "batch", "eager", "fused", "speedup, CPU", "speedup, wall", "FLOP ratio (ideal)",
         "byte ratio", "CPU speedup / FLOP ratio", "intensity FLOP/B (bound)", "GFLOP/s eager / fused",
         "max |diff|", "Linear calls"], rows))
    sec.data = {"shapes": shapes, "balance": bal, "threads": 1, "repeats": cfg.repeats}
    for s in shapes:
        if s["flop_ratio"] <= 1:
            sec.targets.append(Target(
                f"{s['label']} {'→'.join(map(str, s['dims']))}, batch {s['batch']}",
                f"≥ {TARGET_FRACTION:.0%} of the FLOP ratio where compute-bound",
                f"{s['speedup']:.2f}x with a FLOP ratio of {s['flop_ratio']:.2f}x", None,
                "not applicable: fusing adds FLOPs here (the chain narrows in the middle), so the fused model is "
                "expected to be slower; fuse_consecutive_linears fuses it anyway"))
        elif not s["compute_bound"]:
            sec.targets.append(Target(
                f"{s['label']} {'→'.join(map(str, s['dims']))}, batch {s['batch']}",
                f"≥ {TARGET_FRACTION:.0%} of the FLOP ratio where compute-bound",
                f"{s['speedup']:.2f}x = {s['fraction_of_flop_ratio']:.0%} of {s['flop_ratio']:.2f}x", None,
                f"not applicable: memory-bound (intensity {s['intensity']:.1f} FLOP/B < balance "
                f"{bal['balance']:.1f}); the byte ratio {s['byte_ratio']:.2f}x is the ideal here"))
        else:
            met = s["fraction_of_flop_ratio"] >= TARGET_FRACTION
            why = "" if met else (f"the fused matmul runs at {s['gflops_fused']:.1f} GFLOP/s against "
                                  f"{s['gflops_eager']:.1f} for the eager ones: the smaller matmul uses the core "
                                  "less well")
            if s["fraction_of_flop_ratio"] > 1.05:
                why = (f"above the ideal: the fused model runs at {s['gflops_fused']:.1f} GFLOP/s against "
                       f"{s['gflops_eager']:.1f}, probably because it reads {s['weight_bytes'][1] / 2**20:.1f} MiB "
                       f"of weights per call against {s['weight_bytes'][0] / 2**20:.1f} MiB, a working set that "
                       "stays in the caches more easily")
            sec.targets.append(Target(
                f"{s['label']} {'→'.join(map(str, s['dims']))}, batch {s['batch']}",
                f"≥ {TARGET_FRACTION:.0%} of the FLOP ratio where compute-bound",
                f"{s['speedup']:.2f}x = {s['fraction_of_flop_ratio']:.0%} of {s['flop_ratio']:.2f}x (CPU time; "
                f"wall-clock {s['speedup_wall']:.2f}x = {s['fraction_wall']:.0%})", met, why))
    return sec


def plot(sec: Section, path: str) -> None:
    import matplotlib.pyplot as plt

    shapes = sec.data["shapes"]
    labels = [f"{s['label']}\n{'→'.join(map(str, s['dims']))}\nbatch {s['batch']}\n"
              f"({'compute' if s['compute_bound'] else 'memory'}-bound)" for s in shapes]
    xs = list(range(len(shapes)))
    fig, ax = plt.subplots(figsize=(2.6 * len(shapes) + 2, 4.2))
    w = 0.27
    series = [("speedup", "spread", "measured, CPU time", "#4c72b0"),
              ("speedup_wall", "spread_wall", "measured, wall-clock", "#8fb0d9")]
    for k, (key, spread, label, color) in enumerate(series):
        vals = [s[key] for s in shapes]
        err = [[s[key] - s[spread][0] for s in shapes], [s[spread][1] - s[key] for s in shapes]]
        ax.bar([x + (k - 1) * w for x in xs], vals, w, yerr=err, capsize=3, color=color, label=label)
        for x, v in zip(xs, vals):
            ax.text(x + (k - 1) * w, v, f"{v:.2f}x", ha="center", va="bottom", fontsize=7)
    ax.bar([x + w for x in xs], [s["flop_ratio"] for s in shapes], w, color="#c7c7c7", label="FLOP ratio (ideal)")
    first = True
    for x, s in zip(xs, shapes):
        if s["compute_bound"] and s["flop_ratio"] > 1:  # where the target applies
            ax.plot([x + w / 2, x + 3 * w / 2], [TARGET_FRACTION * s["flop_ratio"]] * 2, color="#d62728", lw=2,
                    label=f"target: {TARGET_FRACTION:.0%} of the FLOP ratio" if first else None)
            first = False
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_yscale("log")
    ax.set_ylim(0.1, max(max(s["flop_ratio"], s["speedup"], s["speedup_wall"]) for s in shapes) * 2)
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("fused vs eager speedup (log scale)")
    ax.set_title(f"Linear-chain fusion: median of {sec.data['repeats']} run(s), 1 thread "
                 "(whiskers: range over runs)", fontsize=10)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
