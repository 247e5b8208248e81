"""What the cases of ex07_qat hand over that is a graded function's answer: a model prepared for QAT as prepare_for_qat
must prepare it, which the cases of the functions after it receive. The worker's side, built
before learner code runs (reached through autograder.checks.keyring.inputs, never installed where learners work)."""
from __future__ import annotations

import torch.fx as fx
import torch.nn as nn
from torch.ao.quantization import get_default_qat_qconfig_mapping
from torch.ao.quantization.quantize_fx import prepare_qat_fx

from autograder.checks.evidence import quiet_one_thread


def prepare_ref(model: nn.Module, example_inputs: tuple, backend: str = "x86") -> fx.GraphModule:
    with quiet_one_thread():
        return prepare_qat_fx(model.train(), get_default_qat_qconfig_mapping(backend), example_inputs)
