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

from autograder.checks import keyring
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


UNSAVED = "_ex14_not_saved"   # node meta of a save case's program, which no file holds


def _save_case(label: str, name: str, file: str, *, as_str: bool = True, strict: bool = False,
               dynamic: bool = False, seed: int = 0, exists: bool = False) -> Case:
    """One case of save_program: `name`'s program, to `file` in the case's folder (a str, or a Path)."""
    def make():
        ep = _with_probes(program(name, strict=strict, dynamic=dynamic, seed=seed), name, seed, dynamic)
        for node in ep.graph.nodes:   # a mark torch.export.save does not write: a program read back lacks it
            node.meta[UNSAVED] = True
        if not file.endswith(".pt2"):
            quiet_suffix_warnings()
        path = case_folder() / file
        path.parent.mkdir(parents=True, exist_ok=True)
        if exists:
            path.write_bytes(b"an older file, to be replaced")
        return ep, str(path) if as_str else path
    return Case(label, make, data={"model": name, "strict": strict, "dynamic": dynamic, "seed": seed,
                                   "file": file})


def _save_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex14_exported_programs")._save_cases()

    return [_save_case("Tower(6), to tiny.pt2 in a temporary folder (a str)", "Tower(6)", "tiny.pt2"),
            _save_case("Shared(5) with a dynamic batch, to shared.pt2 (a pathlib.Path)", "Shared(5)",
                       "shared.pt2", as_str=False, dynamic=True)]


def _module_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex14_exported_programs")._module_cases()

    def case(label: str, name: str, *, strict: bool = False, dynamic: bool = False, decompose: bool = False,
             seed: int = 0) -> Case:
        def make():
            ep = program(name, strict=strict, dynamic=dynamic, seed=seed)
            return (ep.run_decompositions() if decompose else ep),
        return Case(label, make, data={"model": name, "strict": strict, "dynamic": dynamic, "seed": seed,
                                       "decompose": decompose})
    return [case("Tower(6): a stem, two blocks, a head", "Tower(6)"),
            case("Shared(5): fc called twice, a Sequential", "Shared(5)")]


KEEPS = {
    "linear": (aten.linear.default,),
    "nothing": (),
    "layer_norm, silu, hardswish": (aten.layer_norm.default, aten.silu.default, aten.hardswish.default),
    "gelu": (aten.gelu.default,),
    "hardswish": (aten.hardswish.default,),
    "linear, hardswish": (aten.linear.default, aten.hardswish.default),
    "rsub.Scalar": (aten.rsub.Scalar,),
    "linear, layer_norm, silu": (aten.linear.default, aten.layer_norm.default, aten.silu.default),
    "t": (aten.t.default,),
}


def _decompose_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex14_exported_programs")._decompose_cases()

    def case(label: str, name: str, keep: str, *, dynamic: bool = False, strict: bool = False) -> Case:
        def make():
            ep = _with_probes(program(name, strict=strict, dynamic=dynamic), name, 0, dynamic)
            return ep, set(KEEPS[keep])
        return Case(label, make, data={"model": name, "keep": keep, "dynamic": dynamic, "strict": strict})
    return [case("Shared(5), keep {aten.linear.default}", "Shared(5)", "linear"),
            case("Tower(6), keep set(): everything decomposed", "Tower(6)", "nothing")]


def _unflatten_cases(hidden: bool) -> list[Case]:
    if hidden:
        return keyring.hidden("ex14_exported_programs")._unflatten_cases()

    def case(label: str, name: str, fqn: str | None = None, *, strict: bool = False, dynamic: bool = False,
             preserve: tuple = ()) -> Case:
        def make():
            ep = program(name, strict=strict, dynamic=dynamic, preserve=preserve)
            object.__setattr__(ep, PROBE, [a for a, _ in submodule_io(name, _fqn(name, fqn), probes(name, 0, dynamic))])
            return ep, _fqn(name, fqn)
        return Case(label, make, data={"model": name, "fqn": fqn, "strict": strict, "dynamic": dynamic,
                                       "preserve": preserve})
    return [case("Tower(6), blocks.1", "Tower(6)", "blocks.1"),
            case("Shared(5), inner (a Sequential)", "Shared(5)", "inner")]


def _fqn(name: str, fqn: str | None) -> str:
    return fqn if fqn is not None else model(name)[0].deepest()
