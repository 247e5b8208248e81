"""What the checks of ex02_nodes record of a learner's result, as plain data (runs where learner code runs)."""
from __future__ import annotations

import torch.fx as fx
import torch.nn as nn

from autograder.checks.framework import CheckFailed
from autograder.checks.evidence import names_left, printed


def _hist_evidence(result, args):
    if not isinstance(result, dict):
        raise CheckFailed(f"returned {type(result).__name__}, expected a dict mapping opcode to count",
                          "build a dict such as {'placeholder': 1, 'call_module': 2, ...}; "
                          "a collections.Counter is fine too")
    out = {}
    for key, value in result.items():
        if not isinstance(key, str):
            raise CheckFailed(f"key {key!r} is a {type(key).__name__}, expected an opcode string",
                              "key the dict by node.op, a string such as 'call_module'")
        if isinstance(value, bool) or not isinstance(value, int):
            raise CheckFailed(f"the count of {key!r} is {value!r} ({type(value).__name__}), expected an int",
                              "count with += 1 or collections.Counter")
        out[key] = int(value)
    return {"counts": out, "left": names_left(args)}


def _called_evidence(result, args):
    if not isinstance(result, (list, tuple)):
        raise CheckFailed(f"returned {type(result).__name__}, expected a list of qualified module names",
                          "return a list such as ['layers.0', 'layers.1']")
    out = []
    for i, item in enumerate(result):
        if not isinstance(item, str):
            raise CheckFailed(f"item {i} is a {type(item).__name__}, expected a str: the qualified name",
                              "return the call_module node's target (a string such as 'layers.0'), "
                              + ("not the module object" if isinstance(item, nn.Module) else
                                 "not the Node itself" if isinstance(item, fx.Node) else
                                 f"not a {type(item).__name__}"))
        out.append(item)
    return out


def _cons_evidence(result, args):
    if not isinstance(result, (list, tuple)):
        gm, name = args[0], args[1]
        unknown = result is None and name not in {n.name for n in gm.graph.nodes}
        raise CheckFailed(f"returned {type(result).__name__}, expected a list of node names"
                          + (f" (for {name!r}, which no node is named, a KeyError)" if unknown else ""),
                          f"raise KeyError naming {name!r} when no node has that name, instead of returning None"
                          if unknown else "return the value instead of printing it" if result is None and printed()
                          else "end with `return` and the list: the function returned None" if result is None else
                          "return a list of names such as ['relu', 'add']")
    out = []
    for i, item in enumerate(result):
        if not isinstance(item, str):
            raise CheckFailed(f"item {i} is a {type(item).__name__}, expected a str",
                              "return the users' names (user.name), not the Node objects" if isinstance(item, fx.Node)
                              else f"return the users' names (user.name), not a {type(item).__name__}")
        out.append(item)
    return out


def _depth_evidence(result, args):
    if isinstance(result, bool) or not isinstance(result, int):
        raise CheckFailed(f"returned {type(result).__name__} {result!r}, expected an int",
                          "return the number of edges as an int")
    return result
