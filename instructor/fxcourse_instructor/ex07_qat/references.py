"""The references of ex07_qat, used by its judges only (never imported where learner code runs)."""
from __future__ import annotations

import copy

import torch
import torch.fx as fx
from torch.ao.quantization import FakeQuantizeBase, disable_observer
from torch.ao.quantization.quantize_fx import convert_fx

from autograder.checks.framework import Case
from autograder.checks.evidence import describe_graph
from autograder.checks.ex07_qat.cases import _prepare_ref
from autograder.checks.ex07_qat.evidence import _prep_evidence, _qual, _quant_params, _run


def _prep_reference(case: Case, backend: str | None = None) -> dict:
    """The reference evidence of a case, prepared for the case's backend (or for `backend`)."""
    model, example_inputs = case.make()
    arrived_training = bool(model.training)
    backend = backend or case.kwargs().get("backend", "x86")
    ev = _prep_evidence(_prepare_ref(model, example_inputs, backend), (model, example_inputs))
    return {**ev, "arrived_training": arrived_training}


def _int8_reference(case: Case) -> dict:
    (prepared,) = case.make()
    x = prepared.input_for_checks
    converted = convert_fx(copy.deepcopy(prepared).eval())
    prepared.eval()
    # A run in eval mode would otherwise still move the scales. (Convert a copy made before this: convert_fx
    # re-observes the folded Conv+BN weights, so disabling observers first changes what it produces.)
    prepared.apply(disable_observer)
    with torch.no_grad():
        fake = prepared(x)
    out_fq = [n for n in prepared.graph.nodes if n.op == "output"][0].args[0]
    out_scale = float(prepared.get_submodule(out_fq.target).scale.max()) if out_fq.op == "call_module" else 0.0
    quant_out = _run(converted, (x,))
    return {"ev": {"graph": describe_graph(converted), "types": sorted({_qual(type(m)) for m in converted.modules()}),
                   "quant": _quant_params(converted)},
            "outputs": quant_out, "fake": fake.detach(), "out_scale": out_scale}


def _count_reference(gm: fx.GraphModule) -> int:
    return sum(1 for n in gm.graph.nodes
               if n.op == "call_module" and isinstance(gm.get_submodule(n.target), FakeQuantizeBase))
