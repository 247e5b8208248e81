"""The cases of ex14_exported_programs.

save_and_reload writes a file: each case hands it a path in a folder of its own under the temporary folder
(`tempfile.gettempdir()`: the grader's worker sets TMPDIR to its private scratch folder, the only place it may
write), and the evidence removes that folder once it has read the file.
"""
from __future__ import annotations

import itertools
import logging
import os
import shutil
import tempfile
from pathlib import Path

from autograder.checks.framework import Case
from autograder.checks.ex14_exported_programs.models import PROBE, aten, model, probes, program, submodule_io

_COUNT = itertools.count()
FOLDER = "ex14_case_"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:   # another user's process: alive
        return True
    return True


class _SuffixWarnings(logging.Filter):
    """Drops torch's warnings about a path without the .pt2 suffix, which one case gives on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "ending in .pt2" not in record.getMessage()


def quiet_suffix_warnings() -> None:
    """Install the filter on torch's .pt2 archive logger, once per process."""
    log = logging.getLogger("torch.export.pt2_archive._package")
    if not any(isinstance(f, _SuffixWarnings) for f in log.filters):
        log.addFilter(_SuffixWarnings())


def case_folder() -> Path:
    """A new folder under the temporary folder, named after this process and a counter. The folders an earlier
    case left (its function raised before the evidence could remove it) go first: this process's own, and those
    of processes that have ended."""
    root = Path(tempfile.gettempdir())
    for old in root.glob(f"{FOLDER}*_*"):
        pid = old.name[len(FOLDER):].split("_")[0]
        if pid.isdigit() and (int(pid) == os.getpid() or not _alive(int(pid))):
            shutil.rmtree(old, ignore_errors=True)
    folder = root / f"{FOLDER}{os.getpid()}_{next(_COUNT)}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _with_probes(ep, name: str, seed: int, dynamic: bool):
    object.__setattr__(ep, PROBE, probes(name, seed, dynamic))
    return ep


def _save_cases(hidden: bool) -> list[Case]:
    def case(label: str, name: str, file: str, *, as_str: bool = True, strict: bool = False, dynamic: bool = False,
             seed: int = 0, exists: bool = False) -> Case:
        def make():
            ep = _with_probes(program(name, strict=strict, dynamic=dynamic, seed=seed), name, seed, dynamic)
            if not file.endswith(".pt2"):
                quiet_suffix_warnings()
            path = case_folder() / file
            path.parent.mkdir(parents=True, exist_ok=True)
            if exists:
                path.write_bytes(b"an older file, to be replaced")
            return ep, str(path) if as_str else path
        return Case(label, make, data={"model": name, "strict": strict, "dynamic": dynamic, "seed": seed,
                                       "file": file})

    if not hidden:
        return [case("Tower(6), to tiny.pt2 in a temporary folder (a str)", "Tower(6)", "tiny.pt2"),
                case("Shared(5) with a dynamic batch, to shared.pt2 (a pathlib.Path)", "Shared(5)", "shared.pt2",
                     as_str=False, dynamic=True)]
    return [
        case("RandomTower seed 3 (unseen)", "RandomTower seed 3", "random.pt2"),
        case("Tower(4) exported with strict=True, to a file that exists already", "Tower(4)", "old.pt2",
             strict=True, exists=True),
        case("Shared(4), to a path without the .pt2 suffix", "Shared(4)", "program.bin", seed=2),
        case("RandomTower seed 9 with a dynamic batch, in a subfolder (unseen)", "RandomTower seed 9",
             "nested/deeper/model.pt2", as_str=False, dynamic=True),
    ]


def _module_cases(hidden: bool) -> list[Case]:
    def case(label: str, name: str, *, strict: bool = False, dynamic: bool = False, decompose: bool = False,
             seed: int = 0) -> Case:
        def make():
            ep = program(name, strict=strict, dynamic=dynamic, seed=seed)
            return (ep.run_decompositions() if decompose else ep),
        return Case(label, make, data={"model": name, "strict": strict, "dynamic": dynamic, "seed": seed,
                                       "decompose": decompose})

    if not hidden:
        return [case("Tower(6): a stem, two blocks, a head", "Tower(6)"),
                case("Shared(5): fc called twice, a Sequential", "Shared(5)")]
    return [
        case("Shared(5) exported with strict=True (its stack's keys are not names)", "Shared(5)", strict=True),
        case("Tower(4) decomposed to core ATen: several nodes per module", "Tower(4)", decompose=True),
        case("Pair(4): a submodule with two inputs", "Pair(4)"),
        case("RandomTower seed 3 (unseen)", "RandomTower seed 3"),
        case("RandomTower seed 9 exported with strict=True and a dynamic batch (unseen)", "RandomTower seed 9",
             strict=True, dynamic=True),
    ]


KEEPS = {
    "linear": (aten.linear.default,),
    "nothing": (),
    "layer_norm, silu": (aten.layer_norm.default, aten.silu.default),
    "gelu": (aten.gelu.default,),
    "hardswish": (aten.hardswish.default,),
    "linear, hardswish": (aten.linear.default, aten.hardswish.default),
}


def _decompose_cases(hidden: bool) -> list[Case]:
    def case(label: str, name: str, keep: str, *, dynamic: bool = False, strict: bool = False) -> Case:
        def make():
            ep = _with_probes(program(name, strict=strict, dynamic=dynamic), name, 0, dynamic)
            return ep, set(KEEPS[keep])
        return Case(label, make, data={"model": name, "keep": keep, "dynamic": dynamic, "strict": strict})

    if not hidden:
        return [case("Shared(5), keep {aten.linear.default}", "Shared(5)", "linear"),
                case("Tower(6), keep set(): everything decomposed", "Tower(6)", "nothing")]
    return [
        case("Tower(4), keep {aten.layer_norm.default, aten.silu.default}", "Tower(4)", "layer_norm, silu"),
        case("Shared(4), keep {aten.gelu.default}: core ATen already, nothing to keep", "Shared(4)", "gelu"),
        case("RandomTower seed 3, keep {aten.hardswish.default} (unseen)", "RandomTower seed 3", "hardswish"),
        case("Shared(5) with a dynamic batch, exported with strict=True, keep {aten.linear.default, "
             "aten.hardswish.default}", "Shared(5)", "linear, hardswish", dynamic=True, strict=True),
    ]


def _unflatten_cases(hidden: bool) -> list[Case]:
    def case(label: str, name: str, fqn: str | None = None, *, strict: bool = False, dynamic: bool = False,
             preserve: tuple = ()) -> Case:
        def make():
            ep = program(name, strict=strict, dynamic=dynamic, preserve=preserve)
            object.__setattr__(ep, PROBE, [a for a, _ in submodule_io(name, _fqn(name, fqn), probes(name, 0, dynamic))])
            return ep, _fqn(name, fqn)
        return Case(label, make, data={"model": name, "fqn": fqn, "strict": strict, "dynamic": dynamic,
                                       "preserve": preserve})

    if not hidden:
        return [case("Tower(6), blocks.1", "Tower(6)", "blocks.1"),
                case("Shared(5), inner (a Sequential)", "Shared(5)", "inner")]
    return [
        case("Shared(5), fc: called twice", "Shared(5)", "fc"),
        case("Pair(4), mix: two inputs, its call signature preserved at export", "Pair(4)", "mix",
             preserve=("mix",)),
        case("Tower(4) exported with strict=True, blocks.2.norm", "Tower(4)", "blocks.2.norm", strict=True),
        case("Tower(6) with a dynamic batch, blocks.0, on other batch sizes", "Tower(6)", "blocks.0", dynamic=True),
        case("RandomTower seed 9, its most deeply nested layer (unseen)", "RandomTower seed 9"),
    ]


def _fqn(name: str, fqn: str | None) -> str:
    return fqn if fqn is not None else model(name)[0].deepest()
