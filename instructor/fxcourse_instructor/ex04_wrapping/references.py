"""The references of ex04_wrapping, used by its judges only (never imported where learner code runs)."""
from __future__ import annotations

import torch.fx as fx
import torch.nn as nn


class ReferenceLeafTracer(fx.Tracer):
    """The reference: instances of leaf_types are leaves, and so is everything torch.nn makes a leaf."""

    def __init__(self, leaf_types) -> None:
        super().__init__()
        self.leaf_types = tuple(leaf_types)

    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        return isinstance(m, self.leaf_types) or super().is_leaf_module(m, module_qualified_name)
