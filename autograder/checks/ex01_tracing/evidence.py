"""What the checks of ex01_tracing record of a learner's result, as plain data (runs where learner code runs)."""
from __future__ import annotations

import torch

from autograder.checks.framework import CheckFailed
from autograder.checks.evidence import expect_type, names_left
from autograder.checks.ex01_tracing.cases import _Op


def _summary_evidence(result, args):
    expect_type(result, (list, tuple), "node_summary", "a list of (op, name) tuples")
    rows = []
    for i, row in enumerate(result):
        if not (isinstance(row, (tuple, list)) and len(row) == 2 and all(isinstance(v, str) for v in row)):
            raise CheckFailed(f"item {i} is {row!r}, expected a tuple of two strings (op, name)",
                              "ex01.node_op_node_name_are")
        rows.append((str(row[0]), str(row[1])))
    return {"rows": rows, "tuples": all(type(r) is tuple for r in result), "left": names_left(args)}


def _count_evidence(result, args):
    if isinstance(result, bool) or not isinstance(result, int):
        raise CheckFailed(f"returned {type(result).__name__} {result!r}, expected an int",
                          "ex01.return_len_sum_int")
    op = next((a for a in args[1:] if isinstance(a, _Op)), None)
    return {"count": result, "asked": list(args[0].__dict__.get("_fxcourse_asked", [])),
            "op_used": list(op.__dict__.get("log", [])) if op is not None else None, "left": names_left(args)}


def _match_evidence(result, args):
    if isinstance(result, torch.Tensor):
        raise CheckFailed("returned a tensor, expected a Python bool",
                          "ex01.torch_equal_returns_bool_tensor")
    if not isinstance(result, bool):
        raise CheckFailed(f"returned {type(result).__name__}, expected a Python bool")
    runs, compared = args[0].__dict__.get("_fxcourse_runs", ([], []))
    return {"result": result, "runs": list(runs), "compared": list(compared)}
