"""Equivalence of two modules on seeded random inputs, reporting the largest difference and where."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

__all__ = ["Comparison", "compare_modules"]


@dataclass(frozen=True)
class Comparison:
    """Outcome of `compare_modules`: whether all trials matched, and the worst difference seen."""

    ok: bool
    trials: int
    max_abs_diff: float
    worst_trial: int
    worst_output: int
    worst_index: tuple[int, ...]
    message: str

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        return self.message


def _flatten(out: object) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flatten(o)]
    if isinstance(out, dict):
        return [t for k in sorted(out) for t in _flatten(out[k])]
    raise TypeError(f"outputs must be tensors or tuples/lists/dicts of tensors, got {type(out).__name__}")


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    idx = []
    for size in reversed(shape):
        idx.append(flat % size if size else 0)
        flat //= size if size else 1
    return tuple(reversed(idx))


def _random_like(example: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    if example.is_floating_point():
        return torch.randn(example.shape, generator=gen, dtype=example.dtype)
    if example.dtype == torch.bool:
        return torch.randint(0, 2, example.shape, generator=gen).bool()
    return torch.randint(0, 10, example.shape, generator=gen, dtype=example.dtype)


def compare_modules(
    reference: torch.nn.Module,
    candidate: torch.nn.Module,
    example_inputs: Sequence[torch.Tensor],
    *,
    trials: int = 5,
    seed: int = 0,
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> Comparison:
    """Run both modules on `trials` seeded random inputs shaped like `example_inputs` and compare outputs."""
    if trials < 1:
        raise ValueError(f"trials must be at least 1, got {trials}")
    gen = torch.Generator().manual_seed(seed)
    worst = (0.0, 0, 0, ())
    for trial in range(trials):
        inputs = [_random_like(x, gen) if isinstance(x, torch.Tensor) else x for x in example_inputs]
        with torch.no_grad():
            expected = _flatten(reference(*inputs))
            got = _flatten(candidate(*inputs))
        if len(expected) != len(got):
            return Comparison(False, trial + 1, float("inf"), trial, 0, (),
                              f"trial {trial}: reference returned {len(expected)} tensors, candidate {len(got)}")
        for i, (e, g) in enumerate(zip(expected, got)):
            if e.shape != g.shape:
                return Comparison(False, trial + 1, float("inf"), trial, i, (),
                                  f"trial {trial}, output {i}: shape {tuple(g.shape)}, expected {tuple(e.shape)}")
            if e.numel() == 0:
                continue
            diff = (e.double() - g.double()).abs()
            flat = int(torch.nan_to_num(diff, nan=float("inf")).argmax())
            d = float(diff.flatten()[flat])
            if d != d:  # nan
                d = float("inf")
            if d > worst[0] or trial == 0 and i == 0:
                worst = (d, trial, i, _unravel(flat, tuple(e.shape)))
            if not torch.allclose(g.double(), e.double(), rtol=rtol, atol=atol, equal_nan=True):
                idx = _unravel(flat, tuple(e.shape))
                return Comparison(
                    False, trial + 1, d, trial, i, idx,
                    f"outputs differ: trial {trial}, output {i}, index {idx}: "
                    f"got {float(g.flatten()[flat]):.6g}, expected {float(e.flatten()[flat]):.6g} "
                    f"(|diff| {d:.3g} > atol {atol:g} + rtol {rtol:g} * |expected|)")
    d, t, i, idx = worst
    return Comparison(True, trials, d, t, i, idx,
                      f"outputs match on {trials} random inputs (max |diff| {d:.3g} at trial {t}, output {i}, index {idx})")
