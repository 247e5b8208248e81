"""Section 4: the capstone's optimize_for_inference (ex08) vs eager vs torch.compile on lesson 08's model:
time to optimize (once) and time per inference call."""
from __future__ import annotations

import copy
import os
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.checks.randmodels import randomize_batchnorm

from .common import Config, Section, Table, Target, fmt_s, fmt_x, load_solutions, timeit

TITLE = "Pipeline: optimize_for_inference vs eager vs torch.compile"


class CapstoneNet(nn.Module):
    """Lesson 08's model: Conv+BN twice, dropout in three forms, a dead branch and a Linear chain."""

    def __init__(self, channels: int = 8, hidden: int = 32, classes: int = 10) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, channels, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.drop2d = nn.Dropout2d(0.1)
        self.bn2 = nn.BatchNorm2d(channels)
        self.fc1 = nn.Linear(channels, hidden)
        self.drop = nn.Dropout(0.2)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, classes)
        self.aux = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.bn2(self.drop2d(self.conv2(x))))
        h = self.fc1(x.mean(dim=(2, 3)))
        aux = self.aux(h)  # noqa: F841  (computed, never returned: dead code)
        h = F.dropout(h, p=0.1, training=self.training)
        return self.fc3(self.fc2(self.drop(h)))


def run(cfg: Config) -> Section:
    fns = load_solutions("ex08_pipeline", ["optimize_for_inference"])
    optimize = fns["optimize_for_inference"]
    sec = Section("pipeline", TITLE)
    torch.manual_seed(0)
    model = randomize_batchnorm(CapstoneNet(), 0).eval()  # as in lesson 08
    x = torch.randn(16, 3, 16, 16)
    with torch.no_grad():
        ref = model(x)

    opt_times = []
    for _ in range(1 if cfg.smoke else 3):
        start = time.perf_counter()
        ours = optimize(model, (x,))
        opt_times.append(time.perf_counter() - start)
    optimize_s = {"optimize_for_inference": statistics.median(opt_times)}
    candidates = {"eager": model, "optimize_for_inference": ours}
    nodes = {"eager (traced)": len(torch.fx.symbolic_trace(copy.deepcopy(model)).graph.nodes),
             "optimize_for_inference": len(ours.graph.nodes)}
    compiled, compile_note = None, ""
    if cfg.smoke:
        compile_note = "torch.compile skipped in --smoke (a cold compile takes tens of seconds)"
    else:
        try:
            import torch._inductor.config as inductor_config

            inductor_config.compile_threads = 1  # as lesson 08: compile under the thread count we measure
            for label in ("torch.compile (cold cache)", "torch.compile (warm cache)"):
                torch._dynamo.reset()
                start = time.perf_counter()
                compiled = torch.compile(copy.deepcopy(model))
                with torch.no_grad():
                    compiled(x)  # compilation happens on the first call
                optimize_s[label] = time.perf_counter() - start
            candidates["torch.compile"] = compiled
        except Exception as exc:  # no C++ compiler, or an inductor failure: report it, go on
            compiled = None
            compile_note = f"torch.compile failed here: {type(exc).__name__}: {str(exc)[:200]}"
    diffs = {}
    with torch.no_grad():
        for name, fn in candidates.items():
            diffs[name] = float((fn(x) - ref).abs().max())
    t = timeit(candidates, x, cfg=cfg)
    rows = []
    for name in candidates:
        opt = (fmt_s(optimize_s[name]) if name in optimize_s else
               " / ".join(fmt_s(v) for k, v in optimize_s.items() if k.startswith(name)) or "—")
        rows.append([name, opt, fmt_s(t.cpu_medians[name]), fmt_s(t.medians[name]),
                     fmt_x(t.cpu_speedups[name], t.cpu_spread[name]), fmt_x(t.speedups[name], t.spread[name]),
                     "—" if name == "eager" else f"{diffs[name]:.1e}"])
    sec.tables.append(Table(
        f"CapstoneNet() eval, input {tuple(x.shape)}, 1 thread; time to optimize: median of {len(opt_times)} "
        f"(ours), one cold and one warm compile (torch.compile, TORCHINDUCTOR_CACHE_DIR in a fresh temp dir); "
        f"per call: median of {cfg.repeats} run(s)",
        ["model", "time to optimize (cold / warm)", "per call, CPU", "per call, wall", "speedup, CPU",
         "speedup, wall", "max |diff| vs eager"], rows))
    sec.notes.append(f"Graph nodes: {nodes['eager (traced)']} traced, {nodes['optimize_for_inference']} after "
                     "optimize_for_inference.")
    if compile_note:
        sec.notes.append(compile_note)
    if compiled is not None:
        cold, ours_s = optimize_s["torch.compile (cold cache)"], optimize_s["optimize_for_inference"]
        extra = cold - ours_s
        gain = t.cpu_medians["optimize_for_inference"] - t.cpu_medians["torch.compile"]
        sec.notes.append(
            f"torch.compile takes {cold / ours_s:.0f}x "
            "longer to optimize (cold cache) than optimize_for_inference; " +
            (f"per call it saves {fmt_s(gain)} (CPU time), so it pays back after about {extra / gain:,.0f} calls."
             if gain > 0 else "per call it was not faster here, so its compile time is never paid back."))
    sec.targets.append(Target("optimize_for_inference beats eager", "speedup > 1 (no numeric target set)",
                              f"{t.cpu_speedups['optimize_for_inference']:.2f}x (CPU), "
                              f"{t.speedups['optimize_for_inference']:.2f}x (wall)",
                              t.cpu_speedups["optimize_for_inference"] > 1))
    sec.data = {"optimize_s": optimize_s, "cpu": t.cpu_medians, "wall": t.medians, "speedup_cpu": t.cpu_speedups,
                "speedup_wall": t.speedups, "max_abs_diff": diffs, "repeats": cfg.repeats,
                "input": list(x.shape), "nodes": nodes,
                "inductor_cache_dir": os.environ.get("TORCHINDUCTOR_CACHE_DIR", "")}
    return sec


def plot(sec: Section, path: str) -> None:
    import matplotlib.pyplot as plt

    d = sec.data
    fig, (ax_opt, ax_inf) = plt.subplots(1, 2, figsize=(11, 3.8))
    names = list(d["optimize_s"])
    colors = ["#4c72b0", "#dd8452", "#f2b48a"]
    ax_opt.bar(range(len(names)), [d["optimize_s"][n] for n in names], color=colors[: len(names)])
    for i, n in enumerate(names):
        ax_opt.text(i, d["optimize_s"][n], f"{d['optimize_s'][n]:.2g} s", ha="center", va="bottom", fontsize=8)
    ax_opt.set_xticks(range(len(names)))
    ax_opt.set_xticklabels([n.replace(" (", "\n(") for n in names], fontsize=8)
    ax_opt.set_yscale("log")
    ax_opt.set_ylabel("seconds (log scale)")
    ax_opt.set_title("time to optimize (once)", fontsize=10)
    names = list(d["cpu"])
    ax_inf.bar(range(len(names)), [d["cpu"][n] * 1e6 for n in names],
               color=["#8c8c8c", "#4c72b0", "#dd8452"][: len(names)])
    for i, n in enumerate(names):
        ax_inf.text(i, d["cpu"][n] * 1e6, f"{d['speedup_cpu'][n]:.2f}x", ha="center", va="bottom", fontsize=8)
    ax_inf.set_xticks(range(len(names)))
    ax_inf.set_xticklabels(names, fontsize=8)
    ax_inf.set_ylabel("µs per call (CPU time, median)")
    ax_inf.set_title(f"inference, input {tuple(d['input'])}, 1 thread, {d['repeats']} run(s)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
