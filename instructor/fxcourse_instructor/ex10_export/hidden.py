"""The hidden cases of ex10_export: what each case function of its `cases` builds for hidden=True (the
instructor's side: reached through autograder.checks.keyring.hidden, never installed where learners work)."""
from __future__ import annotations

import torch

from autograder.checks.framework import Case
from autograder.checks.ex10_export.models import PROBE, _gen, _model
from autograder.checks.ex10_export.cases import SWAPS, _ep_case, _program


def _ep_cases() -> list[Case]:
    return [
        _ep_case("RandomStack seed 5, exported (unseen)", "RandomStack seed 5"),
        _ep_case("RandomStack seed 12, exported with a dynamic batch (unseen)", "RandomStack seed 12", dynamic=True),
        _ep_case("CondRouter(4): torch.cond with two subgraphs", "CondRouter(4)"),
        _ep_case("Sequence(5, 4), exported with a dynamic batch", "Sequence(5, 4)", dynamic=True),
        _ep_case("Tagger(6), exported: a non-persistent buffer, a lifted constant, a chunk (unseen)", "Tagger(6)"),
        _ep_case("Namesakes(4): the Linears a.b and a_b (p_a_b_weight, p_a_b_weight_1), aten.relu and fxc10.relu "
                 "(unseen)", "Namesakes(4)"),
        _ep_case("DeadEnds(4): a sin nobody reads, add with alpha=, div.Tensor beside div.Tensor_mode (unseen)",
                 "DeadEnds(4)"),
    ]


def _export_cases() -> list[Case]:
    def case(name: str, seed: int = 0, batches: tuple = (1, 5), dtype=torch.float32, train: bool = False):
        def make():
            model, x = _model(name, seed)
            model.to(dtype).train(train)   # Sequence computes the same in training mode: no dropout, no BatchNorm
            object.__setattr__(model, PROBE, [torch.randn(b, *x.shape[1:], generator=_gen(seed + b), dtype=dtype)
                                              for b in batches])
            return model, x.to(dtype)
        return make
    return [
        Case("RandomStack seed 5 on a batch of 3 (unseen)", case("RandomStack seed 5", 0, (2, 9))),
        Case("Sequence(5, 4): only the batch dimension may vary", case("Sequence(5, 4)", 0, (1, 6))),
        Case("PatchNet(4) in float64", case("PatchNet(4)", 3, (1, 7), dtype=torch.float64)),
        Case("Sequence(5, 4) in training mode: the caller's model stays as it is",
             case("Sequence(5, 4)", 4, (2, 8), train=True)),
        # export freezes the mode it sees: in training mode batch norm normalises with the batch's statistics
        Case("PatchNet(4) in training mode: batch norm uses the batch's statistics",
             case("PatchNet(4)", 5, (2, 4), train=True)),
    ]


def _swap_cases() -> list[Case]:
    def case(label: str, name: str, swap: str, dynamic: bool = False) -> Case:
        old, new = SWAPS[swap]
        def make():
            ep, _, x = _program(name, dynamic)
            object.__setattr__(ep, PROBE, x)
            return ep, old, new
        return Case(label, make, data={"model": name, "dynamic": dynamic, "swap": swap})
    return [
        case("Sums(5): sum.dim_IntList -> mean.dim (sum.default stays)", "Sums(5)", "sum.dim_IntList -> mean.dim"),
        case("RandomStack seed 12 with a dynamic batch: relu -> sigmoid (unseen)", "RandomStack seed 12",
             "relu -> sigmoid", dynamic=True),
        case("Tagger(6): gelu -> relu, an operator the program does not call", "Tagger(6)", "gelu -> relu"),
        case("Tagger(6): relu -> sigmoid, two relus beside a leaky_relu (unseen)", "Tagger(6)", "relu -> sigmoid"),
        case("CondRouter(4): relu -> sigmoid (the relu in a torch.cond branch is another graph's)", "CondRouter(4)",
             "relu -> sigmoid"),
        case("Namesakes(4): relu -> sigmoid; fxc10.relu, another operator of the same name, stays (unseen)",
             "Namesakes(4)", "relu -> sigmoid"),
        case("DeadEnds(4): add.Tensor -> sub.Tensor, its alpha= kept; a sin nobody reads stays (unseen)", "DeadEnds(4)",
             "add.Tensor -> sub.Tensor"),
        case("DeadEnds(4): div.Tensor -> mul.Tensor; div.Tensor_mode, another overload, stays (unseen)",
             "DeadEnds(4)", "div.Tensor -> mul.Tensor"),
    ]
