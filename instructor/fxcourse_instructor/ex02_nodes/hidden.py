"""The hidden cases of ex02_nodes: what each case function of its `cases` builds for hidden=True (the
instructor's side: reached through autograder.checks.keyring.hidden, never installed where learners work)."""
from __future__ import annotations

import torch.fx as fx
import torch.nn as nn

from fxplayground import Net, SmallResNet, ThreeReluNet, TinyNet

from autograder.checks.framework import Case, given_again
from autograder.checks.randmodels import (
    edited_not_recompiled, manual_seed, negate_in_place, random_mlp, split_in_two, with_unread_call
)
from autograder.checks.ex02_nodes.models import (
    CallOrder, DeadBranch, DictOutput, InputNamed, NestedUses, NoModules, Outer, ParamChain, ReadsBias, Relus,
    SecondInputDeeper, SequentialBlock, ShallowFirst, SixOps, Square, Stacked, TwoOutputs, UnusedCall
)
from autograder.checks.ex02_nodes.cases import (
    _args0_neither, _called_with_nothing, _cons_case, _constant_source, _getattr_twice, _graph_only, _interleaved,
    _long_keyword_branch, _module_inserted_first, _renamed_modules, _traced, _two_users_out_of_order,
    _users_out_of_order, _with_spare
)


class _LeafSequential(fx.Tracer):
    """A tracer that keeps every nn.Sequential as one call, as a pass's author may: call_module nodes of modules
    with children."""

    def is_leaf_module(self, m, qualname: str) -> bool:
        return isinstance(m, nn.Sequential) or super().is_leaf_module(m, qualname)


def _leaf_sequential() -> fx.GraphModule:
    model = SequentialBlock()
    return fx.GraphModule(model, _LeafSequential().trace(model))


def _split_net() -> fx.GraphModule:
    manual_seed(7)
    return split_in_two(Net(), ("x", "fc1"))


def _hist_cases() -> list[Case]:
    return [
        Case("a model with all six opcodes and enc.0 called twice (unseen)", _traced(SixOps)),
        Case("a model with a parameter chain (get_attr) (unseen)", _traced(ParamChain)),
        Case("a block list used twice (unseen)", _traced(Outer)),
        Case("a model with two inputs (unseen)", _traced(SecondInputDeeper)),
        Case("a model without submodules (unseen)", _traced(NoModules)),
        Case("an unused chain: dead nodes count too (unseen)", _traced(DeadBranch)),
        Case("a Linear's bias read as a tensor: get_attr 'fc.bias' (unseen)", _traced(ReadsBias)),
        Case("two get_attr nodes of one target, 'w' (hand-made graph)", _graph_only(_getattr_twice)),
        Case("TinyNet with a node a pass inserted, gm not recompiled yet (unseen)",
             lambda: (edited_not_recompiled(TinyNet()),)),
        Case("Net split in two GraphModules by split_module, each with a graph of its own (unseen)",
             _graph_only(_split_net)),
    ] + [Case(f"random model seed {s}", _traced(lambda s=s: random_mlp(s))) for s in (21, 22)] + [_negated_again()]


def _negated_again() -> Case:
    return given_again("TinyNet's trace given again, after a pass put torch.neg after its output in place (unseen)",
                       _traced(TinyNet), negate_in_place)


def _called_cases() -> list[Case]:
    return [
        Case("a ModuleList applied in a loop (unseen)", _traced(Stacked)),
        Case("a registered submodule that the graph never calls (unseen)", _with_spare),
        Case("modules registered a, b but called b, a, b (unseen)", _traced(CallOrder)),
        Case("a model with all six opcodes and enc.0 called twice (unseen)", _traced(SixOps)),
        Case("blocks nested two levels deep, one used twice (unseen)", _traced(Outer)),
        Case("call_module nodes named unlike their targets (unseen)", _graph_only(_renamed_modules)),
        Case("SmallResNet (unseen)", _traced(lambda: SmallResNet(channels=4, blocks=2))),
        Case("a model without submodules (unseen)", _traced(NoModules)),
        Case("a module called for nothing: its result is never used (unseen)", _traced(UnusedCall)),
        Case("a module called with no argument at all, so no path from the input leads to it (hand-made graph)",
             _graph_only(_called_with_nothing)),
        Case("an nn.Sequential kept whole by its tracer: a call_module node of a module with children (unseen)",
             _graph_only(_leaf_sequential)),
        Case("Net split in two GraphModules by split_module, each with a graph of its own (unseen)",
             _graph_only(_split_net)),
        Case("Net with a call_module node a pass inserted first, not recompiled (graph order is not the order the "
             "nodes were made in)", _graph_only(_module_inserted_first)),
        Case("random model with a shared layer, seed 23",
             _traced(lambda: random_mlp(23, steps=("shared", "relu_mod", "chain", "residual")))),
        given_again("TinyNet's trace given again, after a pass added a call of fc1 on its input in place (unseen)",
                    _traced(TinyNet), lambda gm: with_unread_call(gm, "fc1")),
    ]


def _cons_cases() -> list[Case]:
    return [
        _cons_case("a node used twice by one mul, node 'fc' (unseen)", _traced(Square), "fc"),
        _cons_case("a node used inside a list and as a keyword, node 'fc' (unseen)", _traced(NestedUses), "fc"),
        _cons_case("a node that is also returned, node 'fc' (unseen)", _traced(TwoOutputs), "fc"),
        _cons_case("users created out of graph order, node 'x' (hand-made graph)",
                   _graph_only(_users_out_of_order), "x"),
        _cons_case("'enc.0' is a target, not a node name (unseen)", _traced(SixOps), "enc.0", raises=True),
        _cons_case("a node named 'enc_0' whose target is 'enc.0' (unseen)", _traced(SixOps), "enc_0"),
        _cons_case("a get_attr node, node 'scale' (unseen)", _traced(SixOps), "scale"),
        _cons_case("a dead node, node 'tanh' (unseen)", _traced(DeadBranch), "tanh"),
        _cons_case("the output node itself (unseen)", _traced(DeadBranch), "output"),
        _cons_case("ThreeReluNet, unknown node 'relu_7'", _traced(ThreeReluNet), "relu_7", raises=True),
        _cons_case("a dict output holding a tuple holding a list, node 'relu' (unseen)", _traced(DictOutput), "relu"),
        _cons_case("nodes relu and relu_1, node 'relu' (unseen)", _traced(Relus), "relu"),
        _cons_case("an input named input, whose placeholder is input_1: 'input' is its target, not a node name "
                   "(unseen)", _traced(InputNamed), "input", raises=True),
        _cons_case("two users created out of graph order, node 'x' (hand-made graph)",
                   _graph_only(_two_users_out_of_order), "x"),
        _cons_case("random model, node 'x'",
                   _traced(lambda: random_mlp(24, steps=("residual", "branch", "shared"))), "x"),
        given_again("TinyNet's trace given again, after a pass put torch.neg after node 'fc2' in place, node 'fc2' "
                    "(unseen)", lambda: (fx.symbolic_trace(TinyNet()), "fc2"),
                    lambda gm, name: negate_in_place(gm, name), data={"node": "fc2"}),
    ]


def _depth_cases() -> list[Case]:
    return [
        Case("a skip connection (ThreeReluNet, unseen)", _traced(ThreeReluNet)),
        Case("args[0] leads neither the longest nor the shortest way (hand-made graph)",
             _graph_only(_args0_neither)),
        Case("the short branch is args[0] of the last add (unseen)", _traced(ShallowFirst)),
        Case("the longest branch is a keyword argument (other=) of the last add (hand-made graph)",
             _graph_only(_long_keyword_branch)),
        Case("a long chain starting at a parameter (get_attr) (unseen)", _traced(ParamChain)),
        Case("a long chain starting at torch.ones, no input (hand-made graph)", _graph_only(_constant_source)),
        Case("two inputs, the second one deeper (unseen)", _traced(SecondInputDeeper)),
        Case("an unused chain longer than the live path (unseen)", _traced(DeadBranch)),
        Case("two branches interleaved in graph order (hand-made graph)", _graph_only(_interleaved)),
        Case("SmallResNet with two residual blocks (unseen)", _traced(lambda: SmallResNet(channels=4, blocks=2))),
        Case("a dict output holding a tuple holding a list (unseen)", _traced(DictOutput)),
    ] + [Case(f"random model seed {s}", _traced(lambda s=s: random_mlp(s))) for s in (25, 26)] + [_negated_again()]
