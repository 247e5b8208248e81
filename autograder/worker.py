"""The jailed worker: runs a learner's notebook cells and calls their functions, returning plain evidence.

Started by `autograder.sandbox` as `python -m autograder.worker JOB.json` inside fresh Linux namespaces when
the machine allows it (no network, the course folders hidden, its own process tree, an unprivileged user),
always with resource limits. It writes `evidence.pt` (torch.save of plain data only) and `progress.txt` in its
scratch folder. It never sees the instructor source: the job carries only the cells to run and the checks
to call.
"""
from __future__ import annotations

import builtins
import json
import os
import sys
import types
from pathlib import Path


class _CappedWriter:
    """A text stream that keeps the first `limit` characters and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit, self.kept, self.dropped = limit, [], 0
        self.size = 0

    def write(self, text: str) -> int:
        text = str(text)
        room = self.limit - self.size
        if room > 0:
            self.kept.append(text[:room])
            self.size += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return "utf-8"


def _log(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(text + "\n")


def _mount(*args: str) -> bool:
    import subprocess
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def _drop_capabilities() -> None:
    """Stay uid 0 (the Python install may live under a private home) but keep no capability at all."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_securebits, pr_capbset_drop, pr_set_no_new_privs = 28, 24, 38
    # NOROOT, NO_SETUID_FIXUP, KEEP_CAPS off, NO_CAP_AMBIENT_RAISE, each with its lock bit.
    libc.prctl(pr_set_securebits, 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x80, 0, 0, 0)
    for cap in range(64):
        libc.prctl(pr_capbset_drop, cap, 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    header, data = Header(0x20080522, 0), (Data * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")
    libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0)


def _jail(job: dict) -> None:
    """Hide the course and the other workers, drop privileges and set limits, before any learner code."""
    import resource

    own_ns = os.readlink("/proc/self/ns/mnt") if os.path.exists("/proc/self/ns/mnt") else None
    if job.get("namespaces") and own_ns is not None and own_ns != job.get("host_mnt_ns"):
        # The working directory keeps the worker's own scratch folder reachable once its parent is covered.
        for folder in ("/tmp", "/var/tmp", "/dev/shm", *job.get("hide", [])):
            if os.path.isdir(folder):
                _mount("-t", "tmpfs", "-o", "size=64m,mode=1777" if folder in ("/tmp", "/var/tmp", "/dev/shm")
                       else "size=1m,mode=000", "tmpfs", folder)
            elif os.path.isfile(folder):
                _mount("--bind", "/dev/null", folder)
        _drop_capabilities()
    limits = job.get("limits", {})
    for name, value in (("RLIMIT_AS", limits.get("memory")), ("RLIMIT_FSIZE", limits.get("output")),
                        ("RLIMIT_CORE", 0), ("RLIMIT_NOFILE", 256)):
        if value is not None:
            resource.setrlimit(getattr(resource, name), (value, value))
    if limits.get("cpu"):
        used = int(resource.getrusage(resource.RUSAGE_SELF).ru_utime + resource.getrusage(resource.RUSAGE_SELF).ru_stime)
        resource.setrlimit(resource.RLIMIT_CPU, (used + limits["cpu"], used + limits["cpu"] + 2))


def _snapshot(modules: list[types.ModuleType]) -> dict[str, dict[str, object]]:
    """Every attribute of the modules (and their classes) the grader relies on, kept by reference."""
    snap = {}
    for mod in modules:
        snap[mod.__name__] = dict(vars(mod))
        for k, v in list(vars(mod).items()):
            if isinstance(v, type) and v.__module__ == mod.__name__:
                snap[f"{mod.__name__}.{k}"] = dict(vars(v))
    return snap


def _torch_rewrap(new: object, old: object) -> bool:
    """torch wraps some of its own functions when a part of it loads (dynamo wraps torch.manual_seed):
    a wrapper whose code lives in torch's package and that unwraps to the original is not tampering."""
    import inspect

    import torch

    code = getattr(new, "__code__", None)
    home = os.path.dirname(os.path.abspath(torch.__file__))
    try:
        return code is not None and os.path.abspath(code.co_filename).startswith(home) \
            and inspect.unwrap(new) is old
    except ValueError:
        return False


def _tampered(before: dict[str, dict[str, object]], modules: list[types.ModuleType]) -> list[str]:
    after = _snapshot(modules)
    changed = []
    for name, attrs in before.items():
        now = after.get(name, {})
        for attr, old in attrs.items():
            new = now.get(attr, _tampered)
            if new is not old and not attr.startswith("__") and not _torch_rewrap(new, old):
                changed.append(f"{name}.{attr}")
    return changed


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    os.chdir(job["scratch"])
    scratch = Path(".")  # relative on purpose: the absolute path is covered once the jail is up
    progress = scratch / "progress.txt"

    # Import everything the checks need before the course folders are hidden and learner code runs.
    import warnings
    warnings.simplefilter("ignore")
    import matplotlib
    matplotlib.use("Agg")
    import torch
    import torch.fx
    import torch.nn.functional
    from IPython.core.interactiveshell import InteractiveShell

    import autograder.core as core
    import autograder.evidence as evidence
    import autograder.randmodels
    import fxplayground
    from autograder.checks import run_check  # noqa: F401  (imported so test-style code finds it)
    assignments = sorted({c["assignment"] for c in job["calls"] if c["kind"] == "check"})
    check_modules = [__import__(f"autograder.checks.{a}", fromlist=["CHECKS"]) for a in assignments]
    checks = {(c["assignment"], c["function"]): core.get_check(c["assignment"], c["function"])
              for c in job["calls"] if c["kind"] == "check"}
    cases = {(c["assignment"], c["function"], c["hidden"]): checks[(c["assignment"], c["function"])].cases(
        c["hidden"]) for c in job["calls"] if c["kind"] == "check"}
    collect, quiz_evidence, save = core.collect_evidence, core.quiz_evidence, torch.save
    guarded = [core, evidence, autograder.randmodels, torch, torch.fx, torch.fx.graph, torch.fx.node,
               torch.fx.graph_module, torch.nn.functional, builtins, *check_modules]
    before = _snapshot(guarded)

    from traitlets.config import Config
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    import autograder.hints  # noqa: F401  (everything from the package is loaded before the course is hidden)

    _jail(job)
    import signal

    def _over_cpu(signum, frame):  # the soft CPU limit: say so, then stop (the hard limit follows anyway)
        _log(progress, "cpu-limit")
        os._exit(124)

    signal.signal(signal.SIGXCPU, _over_cpu)
    # Learner output goes to a capped buffer: a flood cannot fill the disk or break the grader's own writes.
    sys.stdout = sys.stderr = _CappedWriter(job.get("limits", {}).get("output") or 2**20)

    shell.user_ns["__name__"] = "__main__"
    cell_errors = []
    for i, cell in enumerate(job["cells"]):
        _log(progress, f"cell {cell['id']}")
        result = shell.run_cell(cell["source"], store_history=False, silent=False)
        if not result.success:
            err = result.error_in_exec or result.error_before_exec
            cell_errors.append({"cell": cell["id"], "error": f"{type(err).__name__}: {err}"[:500]})
    ns = shell.user_ns

    out: dict = {"calls": [], "cell_errors": cell_errors, "tampered": [], "complete": False}

    def checkpoint(complete: bool = False) -> None:
        """Save the evidence so far: a crash in a later call keeps what the earlier calls found."""
        out["tampered"] = _tampered(before, guarded)
        out["complete"] = complete
        save(out, scratch / "evidence.tmp")
        os.replace(scratch / "evidence.tmp", scratch / "evidence.pt")

    checkpoint()
    for call in job["calls"]:
        if call["kind"] == "quiz":
            _log(progress, f"quiz {call['var']}")
            out["calls"].append({"evidence": [quiz_evidence(ns.get(call["var"], NotImplementedError()))]})
            checkpoint()
            continue
        key = (call["assignment"], call["function"])
        fn = ns.get(call["var"])
        evs = []
        for case in cases[(*key, call["hidden"])]:
            _log(progress, f"case {call['function']}|{case.label}")
            evs.append(collect(checks[key], fn, case))
        out["calls"].append({"evidence": evs})
        checkpoint()
    checkpoint(complete=True)
    _log(progress, "done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
