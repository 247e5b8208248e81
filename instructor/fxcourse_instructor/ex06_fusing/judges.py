"""The judges of ex06_fusing (fuse_linear_pair, fold_bn_into_conv, fuse_conv_bn; chains.py: fuse_consecutive_linears):
compare a result's evidence with the reference and say what differs."""
from __future__ import annotations

import copy
import functools
import re
from collections import Counter

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from autograder.checks.hints import hint_of
from autograder.checks.framework import Case, CheckFailed
from autograder.checks.evidence import expect, expect_fresh, expect_lint, max_difference, worst_difference
from autograder.checks.randmodels import randomize_batchnorm
from autograder.checks.ex06_fusing.evidence import (
    _HYPER, _input_kind, _module_of, _other_nodes, _probe, _state, BN_FORMULA, LINEAR_FORMULA,
)


RTOL, ATOL = 1e-4, 1e-5           # float32 results
RTOL64, ATOL64 = 1e-10, 1e-12     # float64 results: float32 arithmetic anywhere on the way shows at this tolerance


# ex06's variances (0.5..1.5) by default; the tests build their models with it too
_randomize_bn = functools.partial(randomize_batchnorm, var_low=0.5, var_high=1.5)


def _changed(before: dict, after: dict) -> str | None:
    """The first difference between two _state snapshots, in words."""
    for k in before:
        if k not in after:
            return f"its {k} disappeared"
        a, b = before[k], after[k]
        if isinstance(a, torch.Tensor):
            if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype or not torch.equal(a, b):
                return f"its {k} was changed"
        elif a != b:
            return f"its training flag was changed from {a} to {b}"
    extra = [k for k in after if k not in before]
    return f"it gained {extra[0]}" if extra else None


def _close(got: torch.Tensor, expected: torch.Tensor) -> bool:
    """Within the tolerance of the expected dtype: float32's for float32, much tighter for float64."""
    rtol, atol = (RTOL64, ATOL64) if expected.dtype == torch.float64 else (RTOL, ATOL)
    return (isinstance(got, torch.Tensor) and got.shape == expected.shape
            and torch.allclose(got.double(), expected.double(), rtol=rtol, atol=atol))


def _dtype_culprit(weights: dict | None, want: torch.dtype) -> str:
    """Which module of the result holds a tensor of another dtype than `want`, in words ("" when none does)."""
    for name, wb in (weights or {}).items():
        odd = [f"{k} {t.dtype}" for k, t in wb.items() if isinstance(t, torch.Tensor) and t.dtype != want]
        if odd:
            return f": module '{name}' has {' and '.join(odd)}"
    return ""


def _float32_of(module: nn.Module, *inputs: torch.Tensor) -> torch.Tensor:
    """What `module` computes when all of it runs in float32: the size of float32's rounding on this case."""
    with torch.no_grad():
        return copy.deepcopy(module).float()(*(t.float() for t in inputs)).double()


def _expect_output(got, expected: torch.Tensor, what: str, hint: str | None, weights: dict | None = None, *,
                   diagnosed: bool = False, float32=None) -> None:
    """The output against the expected one. `hint` goes with any difference; `diagnosed` says it is a confirmed
    diagnosis, which then wins over the float32 one. `float32` (a callable) gives the expected output computed
    in float32: a float64 difference is blamed on float32 arithmetic only when it is of that size."""
    if isinstance(got, str):   # the error says what went wrong; an undiagnosed formula would not
        raise CheckFailed(f"{what}: running it raised {got}", hint if diagnosed else None)
    if tuple(got.shape) != tuple(expected.shape):
        raise CheckFailed(f"{what}: output shape {tuple(got.shape)}, expected {tuple(expected.shape)}", hint)
    if got.dtype != expected.dtype:
        raise CheckFailed(f"{what}: output dtype {got.dtype}, expected {expected.dtype}"
                          + _dtype_culprit(weights, expected.dtype),
                          hint_of("ex06.keep_dtype_original_layers_pass", dtype=expected.dtype))
    if not _close(got, expected):
        if (not diagnosed and float32 is not None and expected.dtype == torch.float64
                and torch.allclose(got.double(), expected.double(), rtol=RTOL, atol=ATOL)
                and max_difference(got, expected) <= 10 * max_difference(float32(), expected)):
            raise CheckFailed(f"{what}: {worst_difference(got, expected)}, within float32's tolerance but not "
                              "float64's",
                              "ex06.float64_results_are_compared_at")
        raise CheckFailed(f"{what}: {worst_difference(got, expected)}", hint)


def _counter_text(c: Counter) -> str:
    return ", ".join(f"{k} x{v}" for k, v in sorted(c.items())) or "none"


def _sites(gm: fx.GraphModule) -> Counter:
    return Counter(n.target for n in gm.graph.nodes if n.op == "call_module")


def _shared_changed(gm: fx.GraphModule, ev: dict, kind: type, what: str) -> None:
    """A module called from two or more sites must keep its weights (the other site still uses them)."""
    for target, count in _sites(gm).items():
        mod = _module_of(gm, next(n for n in gm.graph.nodes if n.op == "call_module" and n.target == target))
        if count < 2 or not isinstance(mod, kind) or target not in ev["weights"]:
            continue
        got = ev["weights"][target]
        same = got["weight"].shape == mod.weight.shape and torch.equal(got["weight"], mod.weight.detach())
        if same and (mod.bias is None) != (got["bias"] is None):
            same = False
        elif same and mod.bias is not None:
            same = got["bias"].shape == mod.bias.shape and torch.equal(got["bias"], mod.bias.detach())
        if not same:
            raise CheckFailed(
                f"{what} '{target}' is called from {count} sites in the original graph, and your pass changed "
                f"its weights: every other call site of '{target}' now computes something else",
                "ex06.module_called_from_more_than")


def _expect_originals_kept(ev: dict, function: str) -> None:
    """The modules the case's gm held (the traced model's own objects) keep their weights and buffers."""
    changed = ev.get("originals_changed") or []
    if changed:
        raise CheckFailed(f"{function} changed the module '{changed[0]}' that gm held in place: that object is the "
                          "traced model's own, so the model now computes something else",
                          hint_of("ex06.leave_modules_gm_holds", name=changed[0]))


def _common_graph_checks(ev: dict, gm: fx.GraphModule, kinds: tuple[type, ...], function: str) -> None:
    expect_lint(ev)
    expect_fresh(ev["stale"], "ex06.call_gm_recompile_after_changing")
    before, after = _other_nodes(gm, kinds), Counter(ev["others"])
    if before != after:
        lost, gained = before - after, after - before
        parts = ([f"removed {_counter_text(lost)}"] if lost else []) + ([f"added {_counter_text(gained)}"]
                                                                        if gained else [])
        kinds_text = " and ".join(k.__name__ for k in kinds)
        raise CheckFailed(f"{function} changed nodes other than {kinds_text} calls: {'; '.join(parts)}",
                          hint_of("ex06.only_calls_fusable_pattern_change", kinds_text=kinds_text))


def _raises_judge(case: Case, ev, why: str, hint: str) -> None:
    """A case whose inputs are invalid: the function must raise case.data['raises']."""
    want = case.data["raises"]
    if isinstance(ev, dict) and "__raised__" in ev:
        expect(want in [ev["__raised__"], *ev.get("bases", [])],
               f"raised {ev['__raised__']} ({ev['message'][:200]}), expected {want} because {why}", hint)
        return
    raise CheckFailed(f"returned a result instead of raising {want}, but {why}", hint)


def _expect_unmodified(ev: dict, inputs: dict[str, nn.Module], what: str, hint: str) -> None:
    """Each input module's state after the call (ev[name]) must equal its state in a fresh copy of the case."""
    for name, mod in inputs.items():
        change = _changed(_state(mod), ev[name])
        expect(change is None, f"the input {what} `{name}` was modified: {change}", hint)


def _pair_judge(case: Case, ev: dict) -> None:
    first, second = case.make()
    if "raises" in case.data:
        _raises_judge(case, ev, f"first.out_features={first.out_features} and second.in_features="
                                f"{second.in_features} differ: second(first(x)) cannot run",
                      "ex06.check_first_out_features_second")
        return
    x, = _probe(first)
    _expect_unmodified(ev, {"first": first, "second": second}, "layer",
                       "ex06.do_not_change_input_modules")
    expected_shape = [second.out_features, first.in_features]
    expect(ev["shape"] == expected_shape,
           f"the fused weight has shape {tuple(ev['shape'])}, expected (out, in) = {tuple(expected_shape)}",
           LINEAR_FORMULA)
    expect((ev["in"], ev["out"]) == (first.in_features, second.out_features),
           f"in_features/out_features are {ev['in']}/{ev['out']}, expected "
           f"{first.in_features}/{second.out_features}",
           "ex06.features_out_features_must_match_2")
    want = str(first.weight.dtype)
    expect(ev["dtype"] == want and ev["bias_dtype"] in (None, want),
           f"the fused layer's weight dtype is {ev['dtype']}"
           + (f" (bias {ev['bias_dtype']})" if ev["bias_dtype"] else "") + f", expected {want} like the inputs",
           "ex06.keep_dtype_nn_linear_dtype")
    with torch.no_grad():
        expected = second(first(x))
        got = ev["output"]
        hint = LINEAR_FORMULA
        if isinstance(got, torch.Tensor) and got.shape == expected.shape and not _close(got, expected):
            W1, W2 = first.weight, second.weight
            b1 = first.bias if first.bias is not None else torch.zeros(W1.shape[0], dtype=W1.dtype)
            b2 = second.bias if second.bias is not None else torch.zeros(W2.shape[0], dtype=W2.dtype)
            W = W2 @ W1
            if W1.shape[0] == W1.shape[1] == W2.shape[0] == W2.shape[1] and _close(got, x @ (W1 @ W2).T + W2 @ b1 + b2):
                hint = "ex06.w1_w2_has_wrong_orientation"
            elif _close(got, x @ W.T + b2) or _close(got, x @ W.T + W2 @ b1):
                hint = "ex06.first_bias_passes_through_second"
            elif _close(ev["weight"], W) and not (ev["bias"] is not None and _close(ev["bias"], W2 @ b1 + b2)):
                hint = hint_of("ex06.fused_weight_right_bias_not", few=_few(W2 @ b1 + b2), yours=_few(ev['bias']))
            elif ev["bias"] is not None and _close(ev["bias"], W2 @ b1 + b2) and not _close(ev["weight"], W):
                hint = "ex06.fused_bias_right_weight_not"
        _expect_output(got, expected, "fused(x) compared with second(first(x))", hint,
                       diagnosed=hint is not LINEAR_FORMULA, float32=lambda: _float32_of(nn.Sequential(first, second), x))
    shared = ev.get("shared") or []
    expect(not shared, f"the fused layer is not new: {shared[0] if shared else ''}, so changing the fused layer "
                       "would change the input layer too", "ex06.fused_layer_shares_memory_input")


def _few(t: torch.Tensor | None) -> str:
    """The first values of a tensor, to show in a message."""
    if t is None:
        return "none"
    flat = t.detach().flatten()
    return "[" + ", ".join(f"{float(v):.4g}" for v in flat[:3]) + (", ...]" if flat.numel() > 3 else "]")


def _bn_eval(bn: nn.BatchNorm2d, z: torch.Tensor, eps: float | None = None) -> torch.Tensor:
    return F.batch_norm(z, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0,
                        bn.eps if eps is None else eps)


def _fold_judge(case: Case, ev: dict) -> None:
    conv, bn = case.make()
    if "raises" in case.data:
        _raises_judge(case, ev, "this BatchNorm2d keeps no running statistics (running_mean is None): it "
                                "normalizes with batch statistics, which no fixed weights reproduce",
                      "ex06.check_bn_running_mean_none")
        return
    x, = _probe(conv)
    _expect_unmodified(ev, {"conv": conv, "bn": bn}, "module",
                       "ex06.do_not_change_inputs_place")
    for k in _HYPER:
        want = getattr(conv, k)
        want = list(want) if isinstance(want, tuple) else want
        expect(ev["hyper"][k] == want, f"the folded conv has {k}={ev['hyper'][k]!r}, expected {want!r}",
               "ex06.keep_every_setting_conv_stride")
    expect(ev["has_bias"], "the folded conv has no bias, but folding the BatchNorm creates one",
           "ex06.set_bias_even_when_conv")
    want = str(conv.weight.dtype)
    odd = [f"its {k} is {ev[d]}" for k, d in (("weight", "dtype"), ("bias", "bias_dtype")) if ev[d] != want]
    expect(not odd, f"the folded conv's dtype: {' and '.join(odd)}, expected {want} like conv.weight",
           hint_of("ex06.give_folded_weight_bias_conv", want=want))
    with torch.no_grad():
        z = conv(x)
        expected = _bn_eval(bn, z)
        got = ev["output"]
        hint = BN_FORMULA
        if isinstance(got, torch.Tensor) and got.shape == expected.shape and not _close(got, expected):
            if _close(got, _bn_eval(bn, z, eps=0.0)):
                hint = "ex06.add_bn_eps_running_var"
            else:
                hint = _fold_diagnosis(conv, bn, x, ev, got) or hint
        _expect_output(got, expected, "folded(x) compared with bn(conv(x)) in eval mode", hint,
                       diagnosed=hint is not BN_FORMULA, float32=lambda: _float32_of(nn.Sequential(conv, bn).eval(), x))


def _fold_diagnosis(conv: nn.Conv2d, bn: nn.BatchNorm2d, x: torch.Tensor, ev: dict, got: torch.Tensor) -> str | None:
    """What the folded conv's own weight and bias show about a wrong fold, or None when they show nothing sure."""
    gamma = bn.weight if bn.affine else 1.0
    beta = bn.bias if bn.affine else 0.0
    b = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
    scale = torch.rsqrt(bn.running_var + bn.eps) * gamma
    weight, bias = conv.weight * scale.reshape(-1, 1, 1, 1), (b - bn.running_mean) * scale + beta
    no_sqrt = gamma / (bn.running_var + bn.eps)
    if _close(ev["weight"], conv.weight * no_sqrt.reshape(-1, 1, 1, 1)) and not _close(ev["weight"], weight):
        return "ex06.folded_weight_conv_weight_weight"
    if conv.in_channels == conv.out_channels and conv.groups == 1:
        wrong = F.conv2d(x, conv.weight * scale.reshape(1, -1, 1, 1), bias, conv.stride, conv.padding,
                         conv.dilation, conv.groups) if conv.padding_mode == "zeros" else None
        if wrong is not None and _close(got, wrong):
            return "ex06.scale_belongs_output_channels_dim"
    w_ok = _close(ev["weight"], weight)
    b_ok = ev["bias"] is not None and _close(ev["bias"], bias)
    if w_ok and not b_ok:
        return hint_of("ex06.folded_weight_right_bias_not", few=_few(bias), yours=_few(ev['bias']))
    if b_ok and not w_ok:
        return "ex06.folded_bias_right_weight_not"
    return None


# The task text does not say what becomes of a foldable pair whose BatchNorm2d is called with its input by keyword
# (bn(input=h)): folding it and leaving it are both right, raising is not.
EITHER = "either"


def _foldable(gm: fx.GraphModule) -> dict[str, str | None]:
    """For every BatchNorm2d call: None if it must be folded, EITHER if it may be, else why it must stay."""
    sites = _sites(gm)
    out = {}
    for n in gm.graph.nodes:
        bn = _module_of(gm, n)
        if not isinstance(bn, nn.BatchNorm2d):
            continue
        src = n.args[0] if n.args else n.kwargs.get("input")
        conv = _module_of(gm, src) if isinstance(src, fx.Node) else None
        if not isinstance(conv, nn.Conv2d):
            out[n.name] = f"its input '{getattr(src, 'name', src)}' is not a Conv2d call"
        elif len(src.users) != 1:
            out[n.name] = f"the output of conv '{src.target}' has {len(src.users)} users"
        elif sites[src.target] > 1:
            out[n.name] = f"conv '{src.target}' is called from {sites[src.target]} sites"
        elif bn.running_mean is None or not bn.track_running_stats:
            out[n.name] = "it has no running statistics (track_running_stats=False): it uses batch statistics"
        else:
            out[n.name] = EITHER if n.kwargs or len(n.args) != 1 else None
    return out


_STAY_HINTS = {
    "users": "ex06.fold_only_when_conv_output",
    "sites": "ex06.conv_module_called_from_more",
    "statistics": "ex06.skip_batchnorm2d_whose_running_mean",
    "Conv2d": "ex06.fold_batchnorm2d_only_when_input",
}


def _fuse_judge(case: Case, ev: dict) -> None:
    gm, = case.make()
    if "raises" in case.data:
        if isinstance(ev, dict) and "__raised__" in ev:
            expect(case.data["raises"] in [ev["__raised__"], *ev.get("bases", [])],
                   f"raised {ev['__raised__']} ({ev['message'][:200]}), expected {case.data['raises']} because "
                   f"{case.data['where']}",
                   "ex06.raise_valueerror_yourself_before_touching")
            only = case.data.get("only")
            expect(not only or only in ev["message"], f"the ValueError's message ({ev['message'][:200]}) does not "
                   f"name '{only}', the BatchNorm2d in training mode", hint_of("ex06.say_which_module_trains",
                                                                              name=only))
            return
        raise CheckFailed(f"returned a {type(ev).__name__ if not isinstance(ev, dict) else 'GraphModule'} "
                          f"instead of raising {case.data['raises']}, but {case.data['where']}: folding uses the "
                          "running statistics, which a model in training mode does not use",
                          "ex06.raise_valueerror_when_gm_training")
    _common_graph_checks(ev, gm, (nn.Conv2d, nn.BatchNorm2d), "fuse_conv_bn")
    n_conv = sum(1 for n in gm.graph.nodes if isinstance(_module_of(gm, n), nn.Conv2d))
    got_conv = sum(1 for c in ev["calls"] if c["type"] == "Conv2d" or c["type"].endswith("Conv2d"))
    expect(got_conv == n_conv, f"the graph calls {got_conv} Conv2d module(s) after fusion, expected {n_conv} "
                               "(folding changes a conv's weights, it does not add or remove conv calls)",
           "ex06.replace_batchnorm_node_s_uses"
           if got_conv < n_conv else
           "ex06.each_folded_pair_keeps_one")
    rules = _foldable(gm)
    bn_nodes = {n.name: n for n in gm.graph.nodes if isinstance(_module_of(gm, n), nn.BatchNorm2d)}
    either = {bn_nodes[name].target for name, why in rules.items() if why == EITHER}
    remaining = Counter(c["target"] for c in ev["calls"] if c["type"] != "Conv2d" and "BatchNorm" in c["type"]
                        and c["target"] not in either)
    expected = Counter(bn_nodes[name].target for name, why in rules.items() if why not in (None, EITHER))
    if remaining != expected:
        for name, why in rules.items():
            target = bn_nodes[name].target
            if why is None and remaining[target] > 0:
                where = (f"BatchNorm2d '{target}' is still called after fusion (it follows conv "
                         f"'{bn_nodes[name].args[0].target}', whose output has one user)")
                twin = next((m for m, w in rules.items() if w is None and not remaining[bn_nodes[m].target]
                             and _pair_kind(gm, bn_nodes[m]) == _pair_kind(gm, bn_nodes[name])), None)
                if twin:
                    raise CheckFailed(f"{where}, while '{bn_nodes[twin].target}', after conv "
                                      f"'{bn_nodes[twin].args[0].target}', a pair alike but for the names, was folded",
                                      "ex06.match_nodes_module_type_isinstance")
                raise CheckFailed(where, "ex06.expected_batchnorm2d_whose_input_conv2d")
            if why not in (None, EITHER) and remaining[target] < expected[target]:
                key = next((k for k in _STAY_HINTS if k in why), "Conv2d")
                raise CheckFailed(f"BatchNorm2d '{target}' was folded, but {why}: it must stay", _STAY_HINTS[key])
        raise CheckFailed(f"BatchNorm2d calls after fusion: {_counter_text(remaining)}; expected "
                          f"{_counter_text(expected)}")
    _shared_changed(gm, ev, nn.Conv2d, "Conv2d")
    x = _probe(gm)
    with torch.no_grad():
        expected_out = gm(*x)
        got = ev["output"]
        hint = neutral = "ex06.expected_each_folded_conv_computes"
        if isinstance(got, torch.Tensor) and got.shape == expected_out.shape and not _close(got, expected_out):
            no_eps = copy.deepcopy(gm)   # the folded BatchNorms without eps, the others as they are
            for name, why in rules.items():
                if why is None:
                    no_eps.get_submodule(bn_nodes[name].target).eps = 0.0
            if _close(got, no_eps(*x)):
                hint = "ex06.add_bn_eps_running_var"
    _expect_output(got, expected_out, "the fused module's output compared with the original's in eval mode", hint,
                   ev["weights"], diagnosed=hint is not neutral, float32=lambda: _float32_of(gm, *x))
    _expect_originals_kept(ev, "fuse_conv_bn")


def _pair_kind(gm: fx.GraphModule, bn_node: fx.Node) -> tuple:
    """What makes two Conv2d -> BatchNorm2d pairs alike apart from their names: the conv's and BatchNorm's
    settings and what feeds the conv."""
    conv_node = bn_node.args[0]
    conv, bn = _module_of(gm, conv_node), _module_of(gm, bn_node)
    return (tuple(getattr(conv, k) for k in _HYPER), conv.bias is not None, bn.affine, bn.eps,
            _input_kind(gm, conv_node.args[0]))


def _fold_raise(case: Case, raised: dict) -> str | None:
    """A size mismatch folding a grouped conv: the answer built a conv without conv's groups."""
    conv, _ = case.make()
    if conv.groups > 1 and re.search(r"size of tensor|shape|size mismatch", raised["message"]):
        return hint_of("ex06.conv_has_groups_so_weight", groups=conv.groups, per_group=conv.weight.shape[1])
    return None


def _fuse_raise(case: Case, raised: dict) -> str | None:
    """A ValueError about a submodule that is not a BatchNorm2d the graph calls (a traced container, say, or a
    BatchNorm1d); an IndexError reading node.args[0] of a BatchNorm2d called with its input by keyword."""
    gm, = case.make()
    convlike = [n.args[0] for n in gm.graph.nodes if isinstance(_module_of(gm, n), nn.BatchNorm2d) and n.args
                and isinstance(n.args[0], fx.Node) and isinstance(_module_of(gm, n.args[0]), nn.modules.conv._ConvNd)
                and not isinstance(_module_of(gm, n.args[0]), nn.Conv2d)]
    if convlike and raised["__raised__"] == "RuntimeError":
        return hint_of("ex06.only_conv2d_folds", target=convlike[0].target,
                       what=type(_module_of(gm, convlike[0])).__name__)
    if raised["__raised__"] == "IndexError":
        keyword = [n for n in gm.graph.nodes if isinstance(_module_of(gm, n), nn.BatchNorm2d) and not n.args]
        return hint_of("ex06.batchnorm2d_called_by_keyword", target=keyword[0].target) if keyword else None
    if raised["__raised__"] != "ValueError":
        return None
    called_bn = {n.target for n in gm.graph.nodes if n.op == "call_module"
                 and isinstance(gm.get_submodule(n.target), nn.BatchNorm2d)}
    for name in re.findall(r"'([\w.]+)'", raised["message"]):
        try:
            module = gm.get_submodule(name)
        except AttributeError:
            continue
        if isinstance(module, nn.modules.batchnorm._BatchNorm) and not isinstance(module, nn.BatchNorm2d):
            return hint_of("ex06.only_batchnorm2d_modes_decide", name=name, what=type(module).__name__)
        if name not in called_bn and module is not gm:
            return hint_of("ex06.not_batchnorm2d_graph_calls_only", name=name, what=type(module).__name__)
    return None
