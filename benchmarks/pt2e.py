"""Section 8: PT2E quantization-aware training (ex11) next to quantize_fx QAT (ex07) on the same models.

For each model: train it in fp32 as section 3 does (lesson 07's four blobs, 200 SGD steps), then from two copies
of it the two flows with the course's own functions and the same fine-tune (100 steps, lr 0.01, batches of 128):
quantize_fx (prepare_for_qat, qat_finetune, to_int8) and PT2E (prepare_pt2e_qat, pt2e_finetune, to_qdq). Compared
within one run: test accuracy, state-dict bytes (state_dict_bytes; the PT2E model also after deleting the float
weights convert_pt2e leaves attached but no node reads, as lesson 11 does), eager latency at batch 256 on one
thread, and the seconds each flow's steps take. Then what compiling costs and buys: the PT2E model and the fp32
model lowered by torch.compile (inductor with freezing off, its default, and on, which alone lowers Q/DQ to int8
kernels; each compile in a fresh TORCHINDUCTOR_CACHE_DIR so it is cold), with the int8 kernels in inductor's
graph, the compile time and the calls it takes to pay back; and, on lesson 07's model, the first call and the
steady per call of no compile, torch.compile(backend="eager") and a backend of our own that returns gm.forward
(lesson 09). Ratios only, each within one run. --smoke skips the inductor compiles.
"""
from __future__ import annotations

import contextlib
import copy
import os
import shutil
import tempfile
import time
import warnings

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from .common import Config, Section, Table, Timing, fmt_s, fmt_x, load_solutions, timeit
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


def cxx_compiler() -> str | None:
    """The C++ compiler inductor would call (its config.cpp.cxx, then $CXX, g++, c++), or None when none is found."""
    try:
        import torch._inductor.config as inductor_config

        names = [c for c in inductor_config.cpp.cxx if c] if isinstance(inductor_config.cpp.cxx, (list, tuple)) else []
    except Exception:  # no inductor in this torch
        names = []
    for name in [*names, os.environ.get("CXX"), "g++", "c++"]:
        if name and shutil.which(name):
            return name
    return None


def inductor_skip_reason(smoke: bool, compiler: str | None) -> str:
    """Why the inductor rows are not measured in this run, or "" when they are."""
    if smoke:
        return "skipped in smoke run (a cold inductor compile takes tens of seconds)"
    if compiler is None:
        return ("skipped: no C++ compiler found (looked for inductor's configured compiler, $CXX, g++ and c++ on "
                "PATH); install g++ to measure the inductor lowering")
    return ""


@contextlib.contextmanager
def cold_cache():
    """TORCHINDUCTOR_CACHE_DIR in a fresh temporary folder (and inductor's in-memory caches cleared) for one compile,
    so that compile is a cold one; the previous value is restored and the folder removed afterwards."""
    folder = tempfile.mkdtemp(prefix="fxcourse-bench-pt2e-inductor-")
    try:
        from torch._inductor.runtime.cache_dir_utils import temporary_cache_dir
    except ImportError:
        temporary_cache_dir = None
    try:
        if temporary_cache_dir is not None:
            with temporary_cache_dir(folder):
                yield folder
        else:
            before = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = folder
            try:
                yield folder
            finally:
                if before is None:
                    os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
                else:
                    os.environ["TORCHINDUCTOR_CACHE_DIR"] = before
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def first_call(make, x: torch.Tensor):
    """(the callable make() returns, seconds of make() and its first call on x): for torch.compile, the compile."""
    start = time.perf_counter()
    fn = make()
    with torch.no_grad():
        fn(x)
    return fn, time.perf_counter() - start


def break_even(compile_s: float, eager_s: float, compiled_s: float) -> tuple[float | None, str]:
    """Calls after which a compile has paid for itself: compile seconds / seconds saved per call; None: never."""
    saved = eager_s - compiled_s
    if saved <= 0:
        return None, "never (not faster)"
    calls = compile_s / saved
    return calls, f"{calls:,.0f}"


FREEZING = (False, True)  # inductor's default, then freezing on: the int8 weight-pack passes run only with it


def int8_kernels(graph: fx.Graph) -> int:
    """How many oneDNN int8 linear or conv kernels an ATen graph calls (what inductor's int8 lowering puts in)."""
    return sum(n.op == "call_function" and str(n.target).startswith(("onednn.qlinear", "onednn.qconv"))
               for n in graph.nodes)


def lowered(model: nn.Module, x: torch.Tensor, freezing: bool):
    """torch.compile of a copy of `model`, compiled cold by its first call under no_grad with inductor's freezing
    on or off: (the compiled model, compile seconds, int8 kernels in the graph inductor generated code from)."""
    import torch._inductor.config as inductor_config

    kernels = []

    def count(graph: fx.Graph) -> None:  # post_grad_custom_pre_pass: sees the graph after the freezing passes
        kernels.append(int8_kernels(graph))

    with cold_cache(), inductor_config.patch(freezing=freezing, post_grad_custom_pre_pass=count):
        fn, seconds = first_call(lambda: torch.compile(copy.deepcopy(model)), x)
    return fn, seconds, sum(kernels)


def _inductor(fp32: nn.Module, qdq: fx.GraphModule, x: torch.Tensor, cfg: Config) -> tuple[dict, dict[str, Timing]]:
    """fp32 and PT2E, eager and lowered by inductor, each compile cold; with freezing off, then on, each setting
    compiled from a reset and timed in a run of its own."""
    import torch._inductor.config as inductor_config

    inductor_config.compile_threads = 1  # compile under the thread count we measure, as section 4
    out = {"compile_s": {}, "int8_kernels": {}, "max_abs_diff": {}}
    timings = {}
    for freezing in FREEZING:
        tag = "freezing on" if freezing else "freezing off"
        torch._dynamo.reset()  # else dynamo would run the fp32 model's code compiled for the other setting
        fns = {"fp32": fp32, "PT2E Q/DQ": qdq}
        for name, model in (("fp32", fp32), ("PT2E", qdq)):
            fn, out["compile_s"][f"{name}, {tag}"], out["int8_kernels"][f"{name}, {tag}"] = lowered(model, x, freezing)
            fns[f"{name} + inductor"] = fn
        with torch.no_grad():
            out["max_abs_diff"][tag] = float((fns["PT2E + inductor"](x) - qdq(x)).abs().max())
        timings[tag] = timeit(fns, x, cfg=cfg)
    return out, timings


def _backends(model: nn.Module, x: torch.Tensor, cfg: Config) -> dict:
    """Lesson 09's comparison on lesson 07's model: no compile, backend="eager", a backend returning gm.forward."""
    graphs = []

    def forward_backend(gm: fx.GraphModule, example_inputs):
        graphs.append(len(gm.graph.nodes))
        return gm.forward  # run the captured graph unchanged

    makers = {"no compile": lambda: model,
              'torch.compile(backend="eager")': lambda: torch.compile(model, backend="eager"),
              "torch.compile(backend=our gm.forward)": lambda: torch.compile(model, backend=forward_backend)}
    torch._dynamo.reset()
    torch.compile(lambda t: t + 1, backend="eager")(torch.ones(2))  # dynamo's one-time set-up, paid by no variant
    fns, first = {}, {}
    for name, make in makers.items():
        torch._dynamo.reset()
        fns[name], first[name] = first_call(make, x)
    with torch.no_grad():
        same = all(torch.equal(fn(x), model(x)) for fn in fns.values())
    t = timeit(fns, x, cfg=cfg)
    base = "no compile"
    steady = {name: t.ratio(base, name, cpu=True) for name in fns}
    return {"first_call_s": first, "latency_cpu_s": dict(t.cpu_medians), "latency_s": dict(t.medians),
            "per_call_vs_eager": {n: v[0] for n, v in steady.items()},
            "per_call_spread": {n: list(v[1]) for n, v in steady.items()},
            "first_call_vs_eager": {n: first[n] / first[base] for n in fns},
            "graph_nodes": graphs, "outputs_equal": same}


def run(cfg: Config) -> Section:
    fx_fns = load_solutions("ex07_qat", ["prepare_for_qat", "qat_finetune", "to_int8", "state_dict_bytes"])
    pt2e_fns = load_solutions("ex11_pt2e", ["prepare_pt2e_qat", "pt2e_finetune", "to_qdq", "qdq_counts"])
    nbytes = fx_fns["state_dict_bytes"]
    sec = Section("pt2e", TITLE)
    n_train, n_test = (256, 256) if cfg.smoke else (4096, 2048)
    fp32_steps, qat_steps, batch, lat_batch = (4, 2, 128, 64) if cfg.smoke else (200, 100, 128, 256)
    acc_rows, size_rows, lat_rows, cost_rows, results = [], [], [], [], []
    compiler = cxx_compiler()
    ind_rows, ind_skip = [], inductor_skip_reason(cfg.smoke, compiler)
    first_fp32 = None
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
        if first_fp32 is None:
            first_fp32, first_x = fp32, x_test[:lat_batch]
        if ind_skip:
            r["inductor"] = {"skipped": ind_skip}
            ind_rows.append([label, "—", ind_skip] + ["—"] * 7)
        else:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ind, ti = _inductor(fp32, lean, x_test[:lat_batch], cfg)
            except Exception as exc:  # an inductor failure here: report it, go on
                ind, ti = {"skipped": f"inductor failed: {type(exc).__name__}: {str(exc)[:200]}"}, None
            if ti is None:
                r["inductor"] = ind
                ind_rows.append([label, "—", ind["skipped"]] + ["—"] * 7)
            else:
                ind.update({"latency_cpu_s": {}, "latency_s": {}, "compiler": compiler})
                for tag, t_ind in ti.items():
                    med = t_ind.cpu_medians
                    ind["latency_cpu_s"][tag], ind["latency_s"][tag] = dict(med), dict(t_ind.medians)
                    calls, calls_text = break_even(ind["compile_s"][f"PT2E, {tag}"], med["PT2E Q/DQ"],
                                                   med["PT2E + inductor"])
                    vs_fp32, vs_fp32_spread = t_ind.ratio("PT2E + inductor", "fp32 + inductor", cpu=True)
                    vs_eager, vs_eager_spread = t_ind.ratio("PT2E + inductor", "PT2E Q/DQ", cpu=True)
                    ind[tag] = {"break_even_calls": calls, "pt2e_inductor_vs_fp32_inductor": vs_fp32,
                                "pt2e_inductor_vs_pt2e_eager": vs_eager}
                    ind_rows.append([label, tag.split()[1], f"{ind['int8_kernels'][f'PT2E, {tag}']}",
                                     fmt_s(med["fp32 + inductor"]), fmt_s(med["PT2E + inductor"]),
                                     fmt_x(vs_fp32, vs_fp32_spread), fmt_x(vs_eager, vs_eager_spread),
                                     f"{ind['compile_s'][f'fp32, {tag}']:.1f} s",
                                     f"{ind['compile_s'][f'PT2E, {tag}']:.1f} s", calls_text])
                r["inductor"] = ind
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
    sec.tables.append(Table(
        f"lowered by torch.compile (inductor, {compiler or 'no C++ compiler'}) with torch._inductor.config.freezing "
        f"off (the default) and on, compiled and run under torch.no_grad(); batch {lat_batch}, 1 thread, median per "
        f"call (CPU time), {cfg.repeats} run(s); int8 kernels = oneDNN int8 linear calls in the graph inductor "
        "generated code from (counted by a post_grad_custom_pre_pass); compile = wall seconds of the first call, "
        "each with TORCHINDUCTOR_CACHE_DIR in a fresh temporary folder (a cold compile); PT2E vs fp32 is how many "
        "times faster the lowered PT2E model is than the fp32 model lowered with the same setting; break-even = "
        "compile seconds / seconds saved per call against the eager PT2E model",
        ["model", "freezing", "int8 kernels", "fp32 + inductor", "PT2E + inductor", "PT2E vs fp32, both lowered",
         "PT2E lowered vs PT2E eager", "fp32 compile", "PT2E compile", "break-even (calls)"], ind_rows))
    if ind_skip:
        sec.notes.append(f"Inductor rows: {ind_skip}.")
    else:
        sec.notes.append("Inductor rows: inductor replaces the quantize/dequantize patterns with int8 kernels only in "
                         "its freezing passes (torch._inductor.config.freezing = True, inference under no_grad); "
                         "with freezing off its graph keeps dequantize, a float addmm and quantize for every layer "
                         "(int8 kernels: 0), which it fuses into float kernels of its own. Lesson 11, section 5 "
                         "shows both graphs. The first inductor compile of the process (the first model's fp32 one) "
                         "also pays inductor's one-time set-up, so compare the later compiles with each other. Each "
                         "setting is compiled after torch._dynamo.reset() and timed in a run of its own (fp32 and "
                         "PT2E, eager and lowered), separate from the eager table's: compare within a row.")
    torch._dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        backends = _backends(first_fp32, first_x, cfg)
    torch._dynamo.reset()
    bk_rows = [[name, fmt_s(backends["first_call_s"][name]), f"{backends['first_call_vs_eager'][name]:,.0f}x",
                fmt_s(backends["latency_cpu_s"][name]),
                fmt_x(backends["per_call_vs_eager"][name], tuple(backends["per_call_spread"][name]))]
               for name in backends["first_call_s"]]
    sec.tables.append(Table(
        f"what a backend costs, lesson 07's model ({_models(cfg.smoke)[0][0]}, fp32), batch {lat_batch}, 1 thread: "
        "first call (wall, the capture and compile; torch._dynamo.reset() before each) and steady per call (CPU "
        f"time, median, {cfg.repeats} run(s)), each as a ratio to no compile (above 1: costs more)",
        ["variant", "first call", "first call / no compile", "per call", "per call / no compile"], bk_rows))
    sec.notes.append("The PT2E model in eager mode runs float aten.linear between quantize and dequantize nodes: a "
                     "reference representation meant for a backend to lower into int8 kernels (inductor does with "
                     "freezing on: lesson 11, section 5), so its eager latency is the price of the representation, "
                     "not of int8 arithmetic. quantize_fx's modules call int8 kernels directly.")
    sec.data = {"results": results, "repeats": cfg.repeats, "backends": backends, "compiler": compiler,
                "inductor_skipped": ind_skip}
    return sec


def plot(sec: Section, path: str) -> None:
    import matplotlib.pyplot as plt

    results = sec.data["results"]
    fig, axes = plt.subplots(1, 4, figsize=(20, 4))
    names = [r["model"] for r in results]
    xs = list(range(len(results)))
    w = 0.27
    lowered = [r for r in results if "latency_cpu_s" in r.get("inductor", {})]
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
    axes[2].set_title(f"latency, ms per batch (CPU time, {sec.data['repeats']} run(s))\nbars eager"
                      + ("; markers + inductor (X freezing off, * on)" if lowered else ""), fontsize=10)
    for k, r in enumerate(lowered):
        for tag, marker in (("freezing off", "X"), ("freezing on", "*")):
            axes[2].scatter([xs[results.index(r)] - w, xs[results.index(r)] + w],
                            [r["inductor"]["latency_cpu_s"][tag]["fp32 + inductor"] * 1e3,
                             r["inductor"]["latency_cpu_s"][tag]["PT2E + inductor"] * 1e3],
                            marker=marker, s=140 if marker == "*" else 70, color=["#8c8c8c", "#dd8452"],
                            edgecolors="black", zorder=3,
                            label=f"+ inductor, {tag} (fp32, PT2E)" if k == 0 else None)
    bk = sec.data["backends"]
    names_bk = list(bk["first_call_s"])
    short = ["no compile", "backend=eager", "our backend"][: len(names_bk)]
    bx = list(range(len(names_bk)))
    axes[3].bar([x - 0.2 for x in bx], [bk["first_call_vs_eager"][n] for n in names_bk], 0.4, color="#55a868",
                label="first call / no compile")
    axes[3].bar([x + 0.2 for x in bx], [bk["per_call_vs_eager"][n] for n in names_bk], 0.4, color="#8172b2",
                label="per call / no compile")
    axes[3].set_yscale("log")
    axes[3].set_xticks(bx)
    axes[3].set_xticklabels(short, fontsize=8)
    axes[3].set_title("torch.compile backends, lesson 07's model (log scale)", fontsize=10)
    axes[3].legend(fontsize=7)
    for ax in axes[:3]:
        ax.set_xticks(xs)
        ax.set_xticklabels(names, fontsize=8)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
