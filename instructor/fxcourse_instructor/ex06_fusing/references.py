"""The references of ex06_fusing's algebra, used by its judges only (never imported where learner code runs)."""
from __future__ import annotations

import copy

import torch
import torch.nn as nn


def _reference_fuse_linear_pair(first: nn.Linear, second: nn.Linear) -> nn.Linear:
    if first.out_features != second.in_features:
        raise ValueError(f"widths {first.out_features} and {second.in_features} do not meet")
    w1, w2 = first.weight.detach(), second.weight.detach()
    b = torch.zeros(second.out_features, dtype=w1.dtype)
    if first.bias is not None:
        b = b + w2 @ first.bias.detach()
    if second.bias is not None:
        b = b + second.bias.detach()
    fused = nn.Linear(first.in_features, second.out_features, dtype=w1.dtype)
    with torch.no_grad():
        fused.weight.copy_(w2 @ w1)
        fused.bias.copy_(b)
    return fused


def _reference_fold_bn_into_conv(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    if bn.running_mean is None:
        raise ValueError("no running statistics")
    fused = copy.deepcopy(conv)
    with torch.no_grad():
        scale = torch.rsqrt(bn.running_var + bn.eps) * (bn.weight if bn.weight is not None else 1.0)
        b = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
        shift = (b - bn.running_mean) * scale + (bn.bias if bn.bias is not None else 0.0)
        fused.weight.copy_(conv.weight * scale.reshape(-1, 1, 1, 1))
        fused.bias = nn.Parameter(shift.to(conv.weight.dtype))
    return fused
