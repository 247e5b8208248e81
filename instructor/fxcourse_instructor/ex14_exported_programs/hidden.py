"""The hidden cases of ex14_exported_programs: what each case function of its `cases` builds for hidden=True (the
instructor's side: reached through autograder.checks.keyring.hidden, never installed where learners work)."""
from __future__ import annotations

from autograder.checks.framework import Case
from autograder.checks.ex14_exported_programs.models import PROBE, probes, program, submodule_io
from autograder.checks.ex14_exported_programs.cases import KEEPS, _fqn, _save_case, _with_probes


def _save_cases() -> list[Case]:
    return [
        _save_case("RandomTower seed 3 (unseen)", "RandomTower seed 3", "random.pt2"),
        _save_case("Tower(4) exported with strict=True, to a file that exists already", "Tower(4)", "old.pt2",
                   strict=True, exists=True),
        _save_case("Shared(4), to a path without the .pt2 suffix", "Shared(4)", "program.bin", seed=2),
        _save_case("RandomTower seed 9 with a dynamic batch, in a subfolder (unseen)", "RandomTower seed 9",
                   "nested/deeper/model.pt2", as_str=False, dynamic=True),
    ]


def _module_cases() -> list[Case]:
    def case(label: str, name: str, *, strict: bool = False, dynamic: bool = False, decompose: bool = False,
             seed: int = 0) -> Case:
        def make():
            ep = program(name, strict=strict, dynamic=dynamic, seed=seed)
            return (ep.run_decompositions() if decompose else ep),
        return Case(label, make, data={"model": name, "strict": strict, "dynamic": dynamic, "seed": seed,
                                       "decompose": decompose})
    return [
        case("Shared(5) exported with strict=True (its stack's keys are not names)", "Shared(5)", strict=True),
        case("Tower(4) decomposed to core ATen: several nodes per module", "Tower(4)", decompose=True),
        case("Pair(4): a submodule with two inputs", "Pair(4)"),
        case("RandomTower seed 3 (unseen)", "RandomTower seed 3"),
        case("RandomTower seed 9 exported with strict=True and a dynamic batch (unseen)", "RandomTower seed 9",
             strict=True, dynamic=True),
        case("Borrower(4): the blocks call the root's act, stack '', 'blocks.0', 'act' (unseen)", "Borrower(4)"),
        case("Sizes(4) with a dynamic batch, its forward reads x.shape[0]: a sym_size node whose stack holds only "
             "torch's stand-in entry (unseen)", "Sizes(4)", dynamic=True),
    ]


def _decompose_cases() -> list[Case]:
    def case(label: str, name: str, keep: str, *, dynamic: bool = False, strict: bool = False) -> Case:
        def make():
            ep = _with_probes(program(name, strict=strict, dynamic=dynamic), name, 0, dynamic)
            return ep, set(KEEPS[keep])
        return Case(label, make, data={"model": name, "keep": keep, "dynamic": dynamic, "strict": strict})
    return [
        case("Tower(4), keep {aten.layer_norm.default, aten.silu.default, aten.hardswish.default}: Tower calls no "
             "hardswish", "Tower(4)", "layer_norm, silu, hardswish"),
        case("Shared(4), keep {aten.gelu.default}: core ATen already, nothing to keep", "Shared(4)", "gelu"),
        case("RandomTower seed 3, keep {aten.hardswish.default} (unseen)", "RandomTower seed 3", "hardswish"),
        case("Shared(5) with a dynamic batch, exported with strict=True, keep {aten.linear.default, "
             "aten.hardswish.default}", "Shared(5)", "linear, hardswish", dynamic=True, strict=True),
        case("Prefixed(4), keep {aten.rsub.Scalar}: rsub.Tensor, another overload of rsub, is decomposed (unseen)",
             "Prefixed(4)", "rsub.Scalar"),
        # last, so that an answer an earlier case fails never pays for them
        case("Tower(6), keep {aten.hardswish.default}, which Tower never calls: decomposed as without it (unseen)",
             "Tower(6)", "hardswish"),
        case("Tower(6), keep {aten.linear.default, aten.layer_norm.default, aten.silu.default}: all it calls is kept "
             "or core ATen, so nothing changes, in a new program (unseen)", "Tower(6)", "linear, layer_norm, silu"),
        case("Shared(5), keep {aten.t.default}: ep calls no t, linear's decomposition does, and that t stays (unseen)",
             "Shared(5)", "t"),
    ]


def _unflatten_cases() -> list[Case]:
    def case(label: str, name: str, fqn: str | None = None, *, strict: bool = False, dynamic: bool = False,
             preserve: tuple = ()) -> Case:
        def make():
            ep = program(name, strict=strict, dynamic=dynamic, preserve=preserve)
            object.__setattr__(ep, PROBE, [a for a, _ in submodule_io(name, _fqn(name, fqn), probes(name, 0, dynamic))])
            return ep, _fqn(name, fqn)
        return Case(label, make, data={"model": name, "fqn": fqn, "strict": strict, "dynamic": dynamic,
                                       "preserve": preserve})
    return [
        case("Shared(5), fc: called twice", "Shared(5)", "fc"),
        case("Pair(4), mix: two inputs, its call signature preserved at export", "Pair(4)", "mix",
             preserve=("mix",)),
        case("Tower(4) exported with strict=True, blocks.2.norm", "Tower(4)", "blocks.2.norm", strict=True),
        case("Tower(6) with a dynamic batch, blocks.0, on other batch sizes", "Tower(6)", "blocks.0", dynamic=True),
        case("RandomTower seed 9, its most deeply nested layer (unseen)", "RandomTower seed 9"),
        case("Prefixed(4), head: head_pre, registered before it, is another module (unseen)", "Prefixed(4)", "head"),
    ]
