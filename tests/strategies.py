"""Hypothesis strategies for random models: depth, widths, branches, shared modules, biases on and off,
float32/float64, BatchNorm affine on and off, padding modes, tuple outputs."""
from __future__ import annotations

import torch
from hypothesis import strategies as st

from autograder.checks.randmodels import SpecConvNet, SpecMLP

DTYPES = st.sampled_from([torch.float32, torch.float64])


@st.composite
def mlps(draw, kinds=SpecMLP.STEPS, min_depth=1, max_depth=6):
    """(model, input): a SpecMLP of drawn depth, width, steps, biases, dtype and output kind."""
    width = draw(st.sampled_from([2, 3, 4, 6, 8]))
    steps = draw(st.lists(st.tuples(st.sampled_from(kinds), st.booleans(), st.sampled_from([1, 2, 5, 9])),
                          min_size=min_depth, max_size=max_depth))
    dtype = draw(DTYPES)
    seed = draw(st.integers(0, 2**16))
    model = SpecMLP(width, steps, head_bias=draw(st.booleans()), tuple_out=draw(st.booleans()), seed=seed,
                    dtype=dtype)
    lead = draw(st.sampled_from([(3,), (1,), (2, 3)]))
    x = torch.randn(*lead, width, generator=torch.Generator().manual_seed(seed), dtype=dtype)
    return model, x


@st.composite
def convnets(draw):
    """(model, input): a SpecConvNet of drawn blocks (kernel, bias, affine, padding mode), sharing and dtype."""
    channels = draw(st.sampled_from([2, 3, 4]))
    blocks = draw(st.lists(st.tuples(st.sampled_from([1, 3]), st.booleans(), st.booleans(),
                                     st.sampled_from(["zeros", "reflect", "replicate", "circular"]), st.booleans()),
                           min_size=1, max_size=3))
    dtype = draw(DTYPES)
    seed = draw(st.integers(0, 2**16))
    model = SpecConvNet(channels, blocks, shared_tail=draw(st.booleans()), tuple_out=draw(st.booleans()),
                        seed=seed, dtype=dtype)
    x = torch.randn(2, 3, 5, 5, generator=torch.Generator().manual_seed(seed), dtype=dtype)
    return model, x
