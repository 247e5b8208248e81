"""The course's benchmarks: `python -m benchmarks` (or `make bench`) measures, side by side in one run, what
the lessons claim about speed, size and grading cost, and writes BENCHMARKS.md plus benchmarks/plots/*.png.

One module per section, each with `TITLE`, `run(cfg) -> Section` and `plot(section, path)`:

| key        | module                 | what it measures                                                  |
|------------|------------------------|-------------------------------------------------------------------|
| `fusion`   | benchmarks.fusion      | Linear-chain fusion (ex06): eager vs fused, speedup vs FLOP ratio |
| `convbn`   | benchmarks.convbn      | Conv+BN folding (ex06) vs torch.fx's `fuse` vs eager              |
| `qat`      | benchmarks.qat         | QAT (ex07): fp32 vs int8 size, latency at 1 and 2 threads, accuracy |
| `pipeline` | benchmarks.pipeline    | optimize_for_inference (ex08) vs eager vs torch.compile           |
| `grading`  | benchmarks.grading     | fxcourse check / hardened grade / plain nbgrader autograde        |
| `cluster`  | benchmarks.cluster     | --jobs 1 / --jobs 2 / --cluster local:2, scheduler overhead, projection |
| `lessons`  | benchmarks.lessons     | seconds for each lesson top to bottom                             |
| `pt2e`     | benchmarks.pt2e        | PT2E QAT (ex11) vs quantize_fx QAT (ex07): accuracy, size, latency |
| `classreport` | benchmarks.classreport | `fxcourse report` on 500 students x 14 assignments, each part timed |
| `inductor` | benchmarks.inductor    | Conv+BN folding (ex13) as an inductor pattern vs lesson 06's FX pass vs PyTorch's fusers |

Benchmarks are never timed assertions: tests/test_benchmarks_smoke.py runs `--smoke` and checks the shape of
the results only.
"""
SECTIONS = ("fusion", "convbn", "qat", "pipeline", "grading", "cluster", "lessons", "pt2e", "classreport", "inductor")

__all__ = ["SECTIONS"]
