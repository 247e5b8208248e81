"""`python -m benchmarks [--smoke] [--only fusion,grading] [--out BENCHMARKS.md] [--json results.json]`.

A full run writes BENCHMARKS.md at the repository root and benchmarks/plots/<section>.png. `--smoke` shrinks
every size, times everything once and writes nothing unless --out (or --json) is given; CI runs it through
tests/test_benchmarks_smoke.py to keep the benchmarks working, never to judge speed.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile

# Before torch is imported anywhere: a fresh compile cache (so torch.compile is measured cold) and no GUI.
_INDUCTOR = tempfile.mkdtemp(prefix="fxcourse-bench-inductor-")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = _INDUCTOR
os.environ.setdefault("MPLBACKEND", "Agg")

import argparse  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

# before any section imports nbformat: it spares this process jsonschema's optional grammar (autograder/__init__.py)
from autograder.course.root import package_first  # noqa: E402

from . import SECTIONS  # noqa: E402
from .common import ROOT, Config, Section, Skip, load_average, machine  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    p.add_argument("--smoke", action="store_true", help="tiny sizes, one repeat, no files unless --out/--json")
    p.add_argument("--only", help=f"comma-separated sections to run (default: all of {', '.join(SECTIONS)})")
    p.add_argument("--out", help="markdown report (default: BENCHMARKS.md at the repository root; none with --smoke)")
    p.add_argument("--plots", help="folder for the PNG plots (default: benchmarks/plots next to the default report, "
                                   "else a plots/ folder next to --out)")
    p.add_argument("--json", help="also write the raw results as JSON here")
    p.add_argument("--repeats", type=int, help="benchmark runs per comparison (default 5; 1 with --smoke)")
    p.add_argument("--min-run-time", type=float, help="seconds per candidate per run (default 0.4)")
    p.add_argument("--class-size", type=int, help="simulated students for the grading throughput (default 20)")
    p.add_argument("--class-assignment", help="the assignment the simulated class hands in (default ex01_tracing)")
    p.add_argument("--assignments", help="grading: comma-separated assignments (default: all in solutions/)")
    return p


def run_sections(keys: list[str], cfg: Config, plots: Path | None) -> list[dict]:
    """Run each section in turn; a section that cannot run is recorded as skipped or error, never fatal."""
    out = []
    for i, key in enumerate(keys, 1):
        mod = importlib.import_module(f"benchmarks.{key}")
        print(f"[{i}/{len(keys)}] {mod.TITLE} ...", flush=True)
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sec = mod.run(cfg)
        except Skip as exc:
            sec = Section(key, mod.TITLE, status="skipped", reason=str(exc))
        except Exception as exc:  # report it and go on with the other sections
            traceback.print_exc()
            sec = Section(key, mod.TITLE, status="error", reason=f"{type(exc).__name__}: {str(exc)[:300]}")
        sec.seconds = time.perf_counter() - start
        if sec.status == "ok" and plots is not None:
            try:
                plots.mkdir(parents=True, exist_ok=True)
                path = plots / f"{key}.png"
                mod.plot(sec, str(path))
                sec.plot = str(path)
            except Exception as exc:
                traceback.print_exc()
                sec.notes.append(f"plot failed: {type(exc).__name__}: {exc}")
        status = sec.status if sec.status == "ok" else f"{sec.status}: {sec.reason}"
        print(f"      {status} ({sec.seconds:.0f} s)", flush=True)
        for t in sec.targets:
            mark = {True: "met", False: "MISSED", None: "n/a"}[t.met]
            print(f"      - {mark:6} {t.name}: {t.measured}", flush=True)
        out.append(sec.to_json())
    return out


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Every grading measured here starts, keeps and stops fork servers of its own, never the user's (or a test run's)
    # that other commands share: the server's address names PYTHONPATH, so ours names a folder of this run.
    own = tempfile.mkdtemp(prefix="fxcourse-bench-server-")
    os.environ["PYTHONPATH"] = package_first(os.pathsep.join(filter(None, [own, os.environ.get("PYTHONPATH")])))
    cfg = Config.smoke_config() if args.smoke else Config()
    overrides = {k: v for k, v in (("repeats", args.repeats), ("min_run_time", args.min_run_time),
                                   ("class_size", args.class_size), ("class_assignment", args.class_assignment),
                                   ("assignments", tuple(args.assignments.split(",")) if args.assignments else None))
                 if v is not None}
    cfg = replace(cfg, **overrides)
    keys = [k.strip() for k in args.only.split(",")] if args.only else list(SECTIONS)
    unknown = [k for k in keys if k not in SECTIONS]
    if unknown:
        print(f"python -m benchmarks: unknown section {unknown[0]!r}; expected one of {', '.join(SECTIONS)}",
              file=sys.stderr)
        return 2
    out = Path(args.out).resolve() if args.out else (None if args.smoke else ROOT / "BENCHMARKS.md")
    if args.plots:
        plots = Path(args.plots).resolve()
    elif out is None:
        plots = None
    elif out == ROOT / "BENCHMARKS.md":
        plots = ROOT / "benchmarks" / "plots"
    else:
        plots = out.parent / "plots"

    import torch

    torch.set_num_threads(1)  # model timings use one thread unless a section says otherwise
    command = " ".join(["python -m benchmarks", *(argv if argv is not None else sys.argv[1:])])
    env = machine(command)
    print(f"benchmarks: torch {env['torch']}, {env['cores']}, load average {env['load average at start (1/5/15 min)']}",
          flush=True)
    start = time.perf_counter()
    try:
        sections = run_sections(keys, cfg, plots)
    finally:
        shutil.rmtree(_INDUCTOR, ignore_errors=True)
        shutil.rmtree(own, ignore_errors=True)
    result = {"env": env, "config": cfg.__dict__, "sections": sections, "seconds": time.perf_counter() - start,
              "load_end": load_average()}
    if out is not None:
        from .report import markdown

        out.parent.mkdir(parents=True, exist_ok=True)
        text = markdown(result, out)
        if args.only and out.is_file():  # some sections: put them into the report of the full run
            from .report import merge

            rerun = (f"Re-run on its own: {env.get('date', '')}, `{command}` (git {env.get('git', '?')}; load average "
                     f"at its start {env.get('load average at start (1/5/15 min)', '?')}); the machine table at the "
                     "top is the full run's.\n")
            text = merge(out.read_text(encoding="utf-8"), text, rerun)
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}" + (f" and plots in {plots}" if plots else ""))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
        print(f"wrote {args.json}")
    print(f"done in {result['seconds'] / 60:.1f} min")
    return 1 if any(s["status"] == "error" for s in sections) else 0


if __name__ == "__main__":
    sys.exit(main())
