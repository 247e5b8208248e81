"""Section 10: Conv+BN folding inside inductor: lesson 13's pattern pass (post_grad_custom_post_pass) vs lesson
06's FX pass (the course's fuse_conv_bn, ex06) vs PyTorch's fusers (torch.fx.experimental.optimization.fuse, and
inductor's own freezing) vs eager and inductor as it is, on fxplayground.SmallResNet in eval mode."""
from __future__ import annotations

import copy
import time

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from .common import Config, Section, Table, Target, fmt_s, fmt_x, load_solutions, timeit
from .convbn import _count, trained_statistics

TITLE = "Conv+BN folding inside inductor: a pattern pass vs lesson 06's FX pass vs PyTorch's fusers"
NAMES = ("eager", "FX: course fuse_conv_bn", "FX: torch fuse", "inductor", "inductor + pattern",
         "inductor + freezing")


def _pair(stride, padding, dilation, groups, eps: float, bias: bool):
    """search and replace of one convolution's form: its literal arguments are part of the pattern."""
    def conv(x, w, b=None):
        return F.conv2d(x, w, b, stride, padding, dilation, groups)

    if bias:
        def search(x, w, b, mean, var, gamma, beta):
            return F.batch_norm(conv(x, w, b), mean, var, gamma, beta, False, 0.1, eps)

        def replace(x, w, b, mean, var, gamma, beta):
            k = gamma * torch.rsqrt(var + eps)
            return conv(x, w * k.reshape(-1, 1, 1, 1), (b - mean) * k + beta)
        return search, replace

    def search(x, w, mean, var, gamma, beta):
        return F.batch_norm(conv(x, w), mean, var, gamma, beta, False, 0.1, eps)

    def replace(x, w, mean, var, gamma, beta):
        k = gamma * torch.rsqrt(var + eps)
        return conv(x, w * k.reshape(-1, 1, 1, 1), beta - mean * k)
    return search, replace


def conv_bn_pattern_pass(model: nn.Module):
    """A PatternMatcherPass holding the Conv+BN fold for every form of convolution `model` has."""
    from torch._inductor.pattern_matcher import PatternMatcherPass, fwd_only, register_replacement
    eps = {m.eps for m in model.modules() if isinstance(m, nn.BatchNorm2d)}
    forms = {(c.stride, c.padding, c.dilation, c.groups, c.bias is not None) for c in model.modules()
             if isinstance(c, nn.Conv2d)}
    pattern_pass = PatternMatcherPass()
    for e in sorted(eps):
        for stride, padding, dilation, groups, bias in sorted(forms):
            search, replace = _pair(stride, padding, dilation, groups, e, bias)
            c = 2 * groups
            inputs = [torch.randn(1, c, 8, 8), torch.randn(c, 2, 3, 3)] + [torch.randn(c) for _ in range(5 if bias
                                                                                                          else 4)]
            register_replacement(search, replace, inputs, fwd_only, pattern_pass,
                                 extra_check=(lambda m: m.kwargs["b"] is not None) if bias else (lambda m: True))
    return pattern_pass


def _compiled(model: nn.Module, x: torch.Tensor, pattern_pass, runs: list) -> dict:
    """The three inductor variants, each compiled by its first call (timed, seconds), at one thread."""
    import torch._inductor.config as inductor_config

    def fold(graph):
        runs.append(pattern_pass.apply(graph))

    inputs: list = []

    def count_inputs(graph):   # also makes this compile's backend differ from plain inductor's (its own cache entry)
        inputs.append(sum(1 for n in graph.nodes if n.op == "placeholder"))

    out, seconds = {}, {}
    for name in ("inductor", "inductor + pattern", "inductor + freezing"):
        options = {"post_grad_custom_post_pass": fold} if name == "inductor + pattern" else \
            {"post_grad_custom_post_pass": count_inputs} if name == "inductor + freezing" else {}
        fn = torch.compile(model, options=options) if options else torch.compile(model)
        start = time.perf_counter()
        with inductor_config.patch(freezing=name == "inductor + freezing"), torch.no_grad():
            fn(x)
        seconds[name] = time.perf_counter() - start
        out[name] = fn
    return {"fns": out, "seconds": seconds, "frozen_inputs": inputs}


def run(cfg: Config) -> Section:
    import torch._inductor.config as inductor_config
    from torch.fx.experimental.optimization import fuse as torch_fuse

    from fxplayground import SmallResNet

    fuse_conv_bn = load_solutions("ex06_fusing", ["fuse_conv_bn"])["fuse_conv_bn"]
    sec = Section("inductor", TITLE)
    kwargs = {"channels": 8, "blocks": 1} if cfg.smoke else {}
    size = 8 if cfg.smoke else 32
    batches = (1,) if cfg.smoke else (1, 32)
    torch.manual_seed(0)
    model = trained_statistics(SmallResNet(**kwargs)).eval()
    ours = fuse_conv_bn(fx.symbolic_trace(copy.deepcopy(model))).eval()
    theirs = torch_fuse(model)
    bns = tuple(_count(gm, nn.BatchNorm2d) for gm in (fx.symbolic_trace(model), ours, theirs))
    pattern_pass = conv_bn_pattern_pass(model)
    threads = torch.get_num_threads()
    # smoke: inductor calls the ATen kernel of every operator and builds no C++ (the smoke run checks that the
    # section works, not how fast); a full run measures the code inductor generates
    inductor_config.fallback_by_default = cfg.smoke
    rows, results = [], []
    try:
        torch.set_num_threads(1)   # inductor's code is compiled for the thread count it is timed at
        for batch in batches:
            x = torch.randn(batch, 3, size, size)
            torch._dynamo.reset()   # each batch compiles afresh (a second shape would make the batch dynamic)
            runs: list = []
            compiled = _compiled(model, x, pattern_pass, runs)
            candidates = {"eager": model, "FX: course fuse_conv_bn": ours, "FX: torch fuse": theirs,
                          **compiled["fns"]}
            with torch.no_grad():
                ref = model(x)
                diffs = {n: float((fn(x) - ref).abs().max()) for n, fn in candidates.items()}
            t = timeit(candidates, x, cfg=cfg)
            pattern, pattern_range = t.ratio("inductor + pattern", "inductor", cpu=True)
            frozen, frozen_range = t.ratio("inductor + freezing", "inductor", cpu=True)
            fx_vs, fx_range = t.ratio("inductor + pattern", "FX: course fuse_conv_bn", cpu=True)
            results.append({"batch": batch, "cpu": t.cpu_medians, "wall": t.medians, "speedup_cpu": t.cpu_speedups,
                            "spread_cpu": {k: list(v) for k, v in t.cpu_spread.items()},
                            "speedup_wall": t.speedups, "max_abs_diff": diffs, "replacements": runs,
                            "compile_s": compiled["seconds"], "frozen_inputs": compiled["frozen_inputs"],
                            "pattern_vs_inductor": pattern,
                            "freezing_vs_inductor": frozen, "pattern_vs_fx": fx_vs})
            for name in NAMES:
                rows.append([str(batch), name, fmt_s(t.cpu_medians[name]), fmt_s(t.medians[name]),
                             fmt_x(t.cpu_speedups[name], t.cpu_spread[name]), fmt_x(t.speedups[name], t.spread[name]),
                             "—" if name == "eager" else f"{diffs[name]:.1e}",
                             f"{compiled['seconds'][name]:.1f} s" if name in compiled["seconds"] else "—"])
            folded = bns[0] - bns[1]
            sec.targets.append(Target(
                f"batch {batch}: the pattern folds what lesson 06's pass folds",
                "replacements in inductor's graph = BatchNorm2d folded by fuse_conv_bn",
                f"{sum(runs)} replacement(s) in {len(runs)} graph(s); fuse_conv_bn folded {folded} of {bns[0]}",
                sum(runs) == folded))
            sec.targets.append(Target(
                f"batch {batch}: freezing made the parameters constants",
                "inductor + freezing: one placeholder (the input) in the graph its post-grad passes see",
                f"{compiled['frozen_inputs']} placeholder(s)", compiled["frozen_inputs"] == [1]))
            worst = max(diffs.values())
            sec.targets.append(Target(
                f"batch {batch}: every variant computes eager's numbers", "max |diff| vs eager ≤ 1e-4",
                ", ".join(f"{n} {d:.1e}" for n, d in diffs.items() if n != "eager"), worst <= 1e-4))
            sec.targets.append(Target(
                f"batch {batch}: inductor + pattern vs inductor, vs freezing, vs the FX pass",
                "informational: the ratios lesson 13 asks the learner to read",
                f"inductor / inductor + pattern {pattern:.2f}x (runs {pattern_range[0]:.2f}–{pattern_range[1]:.2f}); "
                f"inductor / inductor + freezing {frozen:.2f}x (runs {frozen_range[0]:.2f}–{frozen_range[1]:.2f}); "
                f"FX pass / inductor + pattern {fx_vs:.2f}x (runs {fx_range[0]:.2f}–{fx_range[1]:.2f}), CPU time",
                None))
    finally:
        inductor_config.fallback_by_default = False
        torch.set_num_threads(threads)
        torch._dynamo.reset()
    sec.tables.append(Table(
        f"SmallResNet({', '.join(f'{k}={v}' for k, v in kwargs.items())}) eval, input (batch, 3, {size}, {size}), "
        f"median per call, 1 thread, {cfg.repeats} run(s); speedups vs eager, ranges over runs; compile: the "
        "first call, which compiles (the first compile of the run also fills an empty inductor cache)",
        ["batch", "model", "CPU time", "wall-clock", "speedup, CPU", "speedup, wall", "max |diff| vs eager",
         "compile"], rows))
    sec.notes.append(
        f"BatchNorm2d calls: {bns[0]} in the traced model, {bns[1]} after the course's fuse_conv_bn, {bns[2]} after "
        "torch.fx.experimental.optimization.fuse. The pattern pass holds one replacement per form of convolution in "
        "the model (stride, padding, dilation, groups, bias or none: a pattern matches its literal arguments) and "
        "runs as post_grad_custom_post_pass; without freezing the parameters are inputs of inductor's graph, so the "
        "folded weights are computed at every call. 'inductor + freezing' is compiled with "
        "torch._inductor.config.freezing on at the first call (on torch 2.13, options={'freezing': True} freezes "
        "nothing: dynamo reads the flag while it traces): inductor's own freezing passes fold the BatchNorms into "
        "constant weights once, at compile time.")
    sec.data = {"results": results, "repeats": cfg.repeats, "input": [3, size, size], "bns": list(bns)}
    return sec


def plot(sec: Section, path: str) -> None:
    import matplotlib.pyplot as plt

    results = sec.data["results"]
    colors = ["#999999", "#c7906a", "#dd8452", "#6a8fc7", "#4c72b0", "#2a4d7f"]
    fig, ax = plt.subplots(figsize=(9, 3.8))
    w = 0.8 / len(NAMES)
    for k, name in enumerate(NAMES):
        xs = [i + (k - (len(NAMES) - 1) / 2) * w for i in range(len(results))]
        vals = [r["speedup_cpu"][name] for r in results]
        err = [[v - r["spread_cpu"][name][0] for v, r in zip(vals, results)],
               [r["spread_cpu"][name][1] - v for v, r in zip(vals, results)]]
        ax.bar(xs, vals, w, yerr=err, capsize=3, color=colors[k], label=name)
        for x, v in zip(xs, vals):
            ax.text(x, v, f"{v:.2f}", ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xticks(range(len(results)))
    ax.set_xticklabels([f"batch {r['batch']}" for r in results])
    ax.set_ylabel("speedup vs eager (CPU time)")
    ax.set_title(f"Conv+BN folding on SmallResNet: FX passes and inductor, 1 thread, median of "
                 f"{sec.data['repeats']} run(s)", fontsize=10)
    ax.legend(fontsize=7, ncol=3, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
