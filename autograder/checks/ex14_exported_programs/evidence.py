"""What the checks of ex14_exported_programs record of a learner's result, as plain data (runs where learner code
runs)."""
from __future__ import annotations

import shutil
import zipfile
from pathlib import Path
from typing import Any

import torch
import torch.nn as nn

from autograder.checks.framework import CheckFailed
from autograder.checks.ex14_exported_programs.cases import FOLDER, UNSAVED
from autograder.checks.ex14_exported_programs.models import PROBE


def error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"


def histogram(graph) -> dict:
    out: dict = {}
    for n in graph.nodes:
        if n.op == "call_function":
            out[str(n.target)] = out.get(str(n.target), 0) + 1
    return out


def expect_program(result: Any, function: str) -> None:
    from torch.export import ExportedProgram
    if not isinstance(result, ExportedProgram):
        raise CheckFailed(f"{function} returned {type(result).__name__}, expected a torch.export.ExportedProgram",
                          "shared.return_value_instead_printing" if result is None else
                          "ex14.return_exportedprogram_itself_ep_module")


def run_program(ep, inputs: list) -> list:
    """The program's outputs on each input (an error's text where it raises)."""
    out = []
    try:
        module = ep.module()
    except Exception as exc:
        return [error(exc)] * len(inputs)
    for x in inputs:
        try:
            with torch.no_grad():
                out.append(module(x))
        except Exception as exc:
            out.append(error(exc))
    return out


def _save_evidence(result: Any, args: tuple) -> dict:
    ep, path = args
    path = Path(path)
    try:
        expect_program(result, "save_and_reload")
        ev: dict = {"same": result is ep, "file": path.is_file(), "zip": path.is_file() and zipfile.is_zipfile(path)}
        ev["loads"] = _loads(path) if ev["file"] else None
        ev["histogram"] = histogram(result.graph)
        ev["unsaved"] = any(UNSAVED in n.meta for n in result.graph.nodes)
        ev["outputs"] = run_program(result, getattr(ep, PROBE))
        ev["others"] = sorted(str(p.relative_to(path.parent)) for p in path.parent.rglob("*")
                              if p.is_file() and p != path)[:5]
        return ev
    finally:
        _remove_case_folder(path)


def _loads(path: Path) -> Any:
    from torch.export import load
    try:
        load(path)
    except Exception as exc:
        return error(exc)
    return "ok"


def _remove_case_folder(path: Path) -> None:
    """The case's own folder (never anything above it) goes once its file was read."""
    for folder in [path.parent, *path.parents]:
        if folder.name.startswith(FOLDER):
            shutil.rmtree(folder, ignore_errors=True)
            return


def _module_evidence(result: Any, args: tuple) -> dict:
    if not isinstance(result, dict):
        raise CheckFailed(f"module_of_nodes returned {type(result).__name__}, expected a dict",
                          "shared.return_value_instead_printing" if result is None else
                          "ex14.build_return_dict_from_node")
    out = {}
    for k, v in result.items():
        if not isinstance(k, str):
            raise CheckFailed(f"module_of_nodes: the key {k!r} is a {type(k).__name__}, expected a node's name, a str",
                              "ex14.use_node_name_key_not")
        out[k] = v if isinstance(v, str) else {"type": type(v).__name__, "repr": repr(v)[:80]}
    return out


def _decompose_evidence(result: Any, args: tuple) -> dict:
    ep, keep = args
    expect_program(result, "decompose_except")
    return {"histogram": histogram(result.graph), "outputs": run_program(result, getattr(ep, PROBE)),
            "argument": histogram(ep.graph), "same": result is ep}


def _unflatten_evidence(result: Any, args: tuple) -> dict:
    ep, fqn = args
    if not isinstance(result, nn.Module):
        raise CheckFailed(f"unflatten_module returned {type(result).__name__}, expected an nn.Module",
                          "shared.return_value_instead_printing" if result is None else
                          "ex14.return_submodule_torch_export_unflatten")
    outputs = []
    for inputs in getattr(ep, PROBE):
        try:
            with torch.no_grad():
                got = result(*inputs)
            outputs.append(got if isinstance(got, torch.Tensor) else f"returned {type(got).__name__}, not a tensor")
        except Exception as exc:
            outputs.append(error(exc))
    return {"type": type(result).__name__, "outputs": outputs, "graph": isinstance(getattr(result, "graph", None),
                                                                                  torch.fx.Graph),
            "children": sorted(n for n, _ in result.named_children())[:8]}
