"""What the checks of ex02_nodes record of a learner's result, as plain data (runs where learner code runs)."""
from __future__ import annotations

import torch.fx as fx
import torch.nn as nn

from autograder.checks.framework import CheckFailed
from autograder.checks.evidence import names_left, printed
from autograder.checks.hints import hint_of


def _hist_evidence(result, args):
    if not isinstance(result, dict):
        raise CheckFailed(f"returned {type(result).__name__}, expected a dict mapping opcode to count",
                          "ex02.build_dict_such_collections_counter")
    out = {}
    for key, value in result.items():
        if not isinstance(key, str):
            raise CheckFailed(f"key {key!r} is a {type(key).__name__}, expected an opcode string",
                              "ex02.key_dict_node_op_string")
        if isinstance(value, bool) or not isinstance(value, int):
            raise CheckFailed(f"the count of {key!r} is {value!r} ({type(value).__name__}), expected an int",
                              "ex02.count_1_collections_counter")
        out[key] = int(value)
    return {"counts": out, "left": names_left(args)}


def _called_evidence(result, args):
    if not isinstance(result, (list, tuple)):
        raise CheckFailed(f"returned {type(result).__name__}, expected a list of qualified module names",
                          "ex02.return_list_such_layers_0")
    out = []
    for i, item in enumerate(result):
        if not isinstance(item, str):
            raise CheckFailed(f"item {i} is a {type(item).__name__}, expected a str: the qualified name",
                              ("ex02.return_call_module_node_s" if isinstance(item, nn.Module) else
                               "ex02.return_call_module_node_s_2" if isinstance(item, fx.Node) else
                               hint_of("ex02.return_call_module_node_s_3", name=type(item).__name__)))
        out.append(item)
    return out


def _cons_evidence(result, args):
    if not isinstance(result, (list, tuple)):
        gm, name = args[0], args[1]
        unknown = result is None and name not in {n.name for n in gm.graph.nodes}
        raise CheckFailed(f"returned {type(result).__name__}, expected a list of node names"
                          + (f" (for {name!r}, which no node is named, a KeyError)" if unknown else ""),
                          hint_of("ex02.raise_keyerror_naming_when_no", name=name)
                          if unknown else "shared.return_value_instead_printing" if result is None and printed()
                          else "ex02.end_return_list_function_returned" if result is None else
                          "ex02.return_list_names_such_relu")
    out = []
    for i, item in enumerate(result):
        if not isinstance(item, str):
            raise CheckFailed(f"item {i} is a {type(item).__name__}, expected a str",
                              "ex02.return_users_names_user_name" if isinstance(item, fx.Node)
                              else hint_of("ex02.return_users_names_user_name_2", name=type(item).__name__))
        out.append(item)
    return out


def _depth_evidence(result, args):
    if isinstance(result, bool) or not isinstance(result, int):
        raise CheckFailed(f"returned {type(result).__name__} {result!r}, expected an int",
                          "ex02.return_number_edges_int")
    return result
