"""What the checks of ex08_pipeline record of a learner's result, as plain data (runs where learner code runs)."""
from __future__ import annotations

import torch
import torch.fx as fx

from autograder.checks.randmodels import generator
from autograder.checks.evidence import expect_type, graph_module_evidence


def _pipeline_evidence(result, args):
    expect_type(result, fx.GraphModule, "run_pipeline", "a torch.fx.GraphModule")
    log = args[0]._fxcourse_log
    if log.expect_raise:  # it should have raised: do not run what it returned
        return {"returned": type(result).__name__}
    code_now = result.code
    result.recompile()
    ev = graph_module_evidence(result, "run_pipeline", [log.inputs])
    ev["stale_code"] = code_now != result.code
    ev["calls"] = [list(c) for c in log.calls]
    return ev


def _trial_inputs(example_inputs: tuple) -> list[tuple]:
    """The example itself and one seeded input shaped like it."""
    g = generator(1234)
    trials = [tuple(example_inputs)]
    for _ in range(1):
        trials.append(tuple(torch.randn(x.shape, generator=g, dtype=x.dtype) for x in example_inputs))
    return trials


def _unused_submodules(gm: fx.GraphModule) -> list[str]:
    used = {n.target for n in gm.graph.nodes if n.op in ("call_module", "get_attr")}
    unused = []
    for name, mod in gm.named_modules():
        if not name:
            continue
        own = list(mod.parameters(recurse=False)) + list(mod.buffers(recurse=False))
        if own and not any(t == name or t.startswith(name + ".") or name.startswith(t + ".") for t in used):
            unused.append(name)
    return unused


def _opt_evidence(result, args):
    expect_type(result, fx.GraphModule, "optimize_for_inference", "a torch.fx.GraphModule")
    model, example_inputs = args
    ev = graph_module_evidence(result, "optimize_for_inference", _trial_inputs(example_inputs))
    ev["training"] = [name or "(the GraphModule itself)" for name, m in result.named_modules() if m.training]
    ev["unused"] = _unused_submodules(result)
    ev["model_state"] = dict(model.state_dict())
    ev["model_training"] = [[name, bool(m.training)] for name, m in model.named_modules()]
    return ev
