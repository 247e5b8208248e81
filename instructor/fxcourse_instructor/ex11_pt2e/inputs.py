"""What the cases of ex11_pt2e hand over that is a graded function's answer: a model prepared by lesson 11's flow, as
prepare_pt2e_qat must prepare it, which the cases of the functions after it receive. The worker's side, built
before learner code runs (reached through autograder.checks.keyring.inputs, never installed where learners work)."""
from __future__ import annotations

from typing import Any

import torch
import torch.fx as fx
import torch.nn as nn

from autograder.checks.evidence import quiet_one_thread
from autograder.checks.ex11_pt2e.models import (
    X86InductorQuantizer, get_default_x86_inductor_quantization_config, prepare_qat_pt2e
)


def _quantizer(**config: Any) -> X86InductorQuantizer:
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config(**{"is_qat": True, **config}))
    return quantizer


def prepare_ref(model: nn.Module, example_inputs: tuple, **config: Any) -> fx.GraphModule:
    """Lesson 11's flow. The batch dimension is dynamic, as in the lesson, so that the prepared models the other
    checks hand over train and run on batches of any size."""
    with quiet_one_thread():
        dynamic = tuple({0: torch.export.Dim("batch")} for _ in example_inputs)
        exported = torch.export.export(model.train(), example_inputs, dynamic_shapes=dynamic).module()
        return prepare_qat_pt2e(exported, _quantizer(**config))
