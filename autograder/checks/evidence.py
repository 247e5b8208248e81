"""Helpers for checks: describe what a learner returned as plain data, and compare it with a reference.

Also the evidence file's schema and limits (`load_evidence`): the worker that writes `evidence.pt` runs
learner code, so the file is hostile until checked, before loading (archive size, entries, compression) and
after (types, nesting depth, item counts, tensor elements), always in the judge's own limited process.
"""
from __future__ import annotations

import contextlib
import io
import re
import sys
import warnings
import zipfile
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
import torch.fx as fx

from autograder.checks.framework import CheckFailed
from autograder.checks.hints import hint_of

__all__ = [
    "qualified", "describe_graph", "graph_module_evidence", "expect", "expect_type", "expect_close",
    "expect_equal", "nodes_where", "first_difference", "unravel", "flat_outputs", "worst_difference",
    "max_difference", "first_far_tensor", "TRAINING_LOOP_HINTS", "training_loop", "quiet_one_thread", "cached_reference", "expect_trained", "lint_error", "expect_lint",
    "expect_fresh", "stale_code", "generated_code", "sole_hint", "printed",
    "EvidenceLimits", "EvidenceError",
    "check_archive", "check_plain", "load_evidence",
]


def qualified(target: Any) -> str:
    """A node target as text: strings as they are, callables by their qualified name."""
    if isinstance(target, str):
        return target
    try:
        return fx.node._get_qualified_name(target)
    except Exception:
        return getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or type(target).__name__


def _arg(a: Any) -> Any:
    if isinstance(a, fx.Node):
        return {"node": a.name}
    if isinstance(a, (list, tuple)):
        return [_arg(x) for x in a]
    if isinstance(a, dict):
        return {str(k): _arg(v) for k, v in a.items()}
    if isinstance(a, (bool, int, float, str)) or a is None:
        return a
    if isinstance(a, torch.dtype | torch.device | torch.memory_format | torch.layout):
        return str(a)
    if isinstance(a, slice):
        return {"slice": [_arg(a.start), _arg(a.stop), _arg(a.step)]}
    if callable(a):
        return {"callable": qualified(a)}
    return {"repr": repr(a)[:200]}


def describe_graph(gm: fx.GraphModule) -> list[dict]:
    """Every node as plain data: op, name, target text, args/kwargs (nodes by name), users, module type."""
    out = []
    for node in gm.graph.nodes:
        entry = {
            "op": node.op,
            "name": node.name,
            "target": qualified(node.target),
            "args": _arg(node.args),
            "kwargs": _arg(dict(node.kwargs)),
            "users": [u.name for u in node.users],
        }
        if node.op == "call_module":
            try:
                mod = gm.get_submodule(node.target)
                entry["module_type"] = f"{type(mod).__module__}.{type(mod).__qualname__}"
            except Exception:
                entry["module_type"] = None
        out.append(entry)
    return out


def graph_module_evidence(result: Any, function: str, inputs: Sequence[torch.Tensor] = (),
                          *, lint: bool = True) -> dict:
    """Standard evidence for a pass: its graph, code, lint result and outputs on `inputs` (no grad)."""
    expect_type(result, fx.GraphModule, function, "a torch.fx.GraphModule")
    evidence: dict = {"graph": describe_graph(result), "code": result.code}
    if lint:
        evidence["lint"] = lint_error(result)
    outputs = []
    with torch.no_grad():
        for x in inputs:
            try:
                # forward() directly: a GraphModule's __call__ builds its error message with torch._dynamo,
                # an import that costs seconds the first time a learner's graph raises.
                outputs.append(result.forward(*x) if isinstance(x, tuple) else result.forward(x))
            except Exception as exc:
                given = len(x) if isinstance(x, tuple) else 1
                takes = sum(1 for n in result.graph.nodes if n.op == "placeholder")
                raise CheckFailed(f"the returned GraphModule raised {type(exc).__name__}: {exc} when run",
                                  hint_of("shared.erase_no_placeholder", takes=takes, given=given)
                                  if isinstance(exc, TypeError) and takes < given else None) from None
    evidence["outputs"] = outputs
    return evidence


def expect(condition: bool, message: str, hint: str | None = None) -> None:
    """Fail with `message` (and `hint`) unless `condition` holds."""
    if not condition:
        raise CheckFailed(message, hint)


def printed() -> bool:
    """Did the learner's function print anything? While it runs, and while its evidence is taken, the check
    framework captures stdout in a StringIO."""
    return isinstance(sys.stdout, io.StringIO) and bool(sys.stdout.getvalue().strip())


def expect_type(value: Any, kind: type | tuple[type, ...], function: str, what: str) -> None:
    if not isinstance(value, kind):
        hint = None
        if value is None:   # printing is a diagnosis only when something was printed
            hint = ("shared.return_value_instead_printing" if printed() else
                    "shared.return_value_function_ended_without")
        raise CheckFailed(f"{function} returned {type(value).__name__}, expected {what}", hint)


def first_difference(got: Sequence, expected: Sequence, item: str = "item", show: Callable = repr) -> str:
    """Where two sequences first differ, in words: "<item> 3 is <show(got)>, expected <show(expected)>"."""
    for i, (g, e) in enumerate(zip(got, expected)):
        if g != e:
            return f"{item} {i} is {show(g)}, expected {show(e)}"
    if len(got) != len(expected):
        return f"{len(got)} {item}s, expected {len(expected)}"
    return "no difference"


def expect_equal(got: Any, expected: Any, what: str, hint: str | None = None) -> None:
    """Plain-data equality with a message that names the first difference."""
    if type(got) is not type(expected) and not (isinstance(got, (list, tuple)) and isinstance(expected, (list, tuple))):
        raise CheckFailed(f"{what}: got a {type(got).__name__}, expected a {type(expected).__name__} ({expected!r})",
                          hint)
    if isinstance(expected, (list, tuple)):
        if list(got) != list(expected):
            raise CheckFailed(f"{what}: {first_difference(list(got), list(expected))}", hint)
    elif got != expected:
        raise CheckFailed(f"{what}: got {got!r}, expected {expected!r}", hint)


def expect_close(got: Any, expected: torch.Tensor, what: str, *, rtol: float = 1e-5, atol: float = 1e-6,
                 hint: str | None = None) -> None:
    """Tensor closeness with the largest difference and its index in the message."""
    if not isinstance(got, torch.Tensor):
        raise CheckFailed(f"{what}: got {type(got).__name__}, expected a tensor", hint)
    if tuple(got.shape) != tuple(expected.shape):
        raise CheckFailed(f"{what}: shape {tuple(got.shape)}, expected {tuple(expected.shape)}", hint)
    if got.is_quantized:
        got = got.dequantize()
    if expected.is_quantized:
        expected = expected.dequantize()
    g, e = got.detach().double(), expected.detach().double()
    if not torch.allclose(g, e, rtol=rtol, atol=atol, equal_nan=True):
        raise CheckFailed(f"{what}: {worst_difference(g, e)}", hint)


def worst_difference(got: torch.Tensor, expected: torch.Tensor) -> str:
    """The largest difference of two tensors of one shape in words: how large, at which index, both values."""
    g, e = got.detach().double(), expected.detach().double()
    diff = torch.nan_to_num((g - e).abs(), nan=float("inf"))
    if not diff.numel():
        return "no elements to compare"
    flat = int(diff.argmax())
    return (f"differs by up to {float(diff.flatten()[flat]):.3g} at index {unravel(flat, tuple(e.shape))} "
            f"(got {float(g.flatten()[flat]):.6g}, expected {float(e.flatten()[flat]):.6g})")


def max_difference(got: torch.Tensor, expected: torch.Tensor) -> float:
    """The largest absolute difference of two tensors of one shape (0.0 when they are empty)."""
    return float((got.double() - expected.double()).abs().max()) if got.numel() else 0.0


def first_far_tensor(got: dict, expected: dict, atol: float = 1e-5, rtol: float = 1e-4, only: tuple = ()) -> str | None:
    """The first tensor of `expected` (name -> tensor; `only`: names ending so) that `got` does not match, or None."""
    if only:
        expected = {n: t for n, t in expected.items() if n.endswith(only)}
        got = {n: got[n] for n in expected if n in got}
    if set(got) != set(expected):
        missing = sorted(set(expected) - set(got))
        return (f"tensors {missing[:3]} are missing" if missing
                else f"unexpected tensors {sorted(set(got) - set(expected))[:3]}")
    for name in expected:
        x, y = got[name], expected[name]
        if x.shape != y.shape:
            return f"'{name}' has shape {tuple(x.shape)}, expected {tuple(y.shape)}"
        if not torch.allclose(x.double(), y.double(), atol=atol, rtol=rtol, equal_nan=True):
            return f"'{name}' differs by up to {max_difference(x, y):.3g}"
    return None


def expect_trained(params: dict, initial: dict, steps: int) -> None:
    """Fail when `steps` > 0 training steps left a prepared model's parameters (name -> tensor) exactly as given."""
    if steps > 0 and first_far_tensor(params, initial, atol=0, rtol=0) is None:
        raise CheckFailed(f"the parameters of the prepared model did not change after {steps} steps",
                          "shared.train_prepared_place_optimizer_torch")


@contextlib.contextmanager
def quiet_one_thread():
    """Quiet and quick references: no warnings (torch.ao.quantization and torchao warn on every call), and one
    thread (on a busy machine tiny fake-quant ops run about ten times faster on one thread than on several)."""
    threads = torch.get_num_threads()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.set_num_threads(1)
        try:
            yield
        finally:
            torch.set_num_threads(threads)


def cached_reference(cache: dict, function: str, case: Any, build: Callable[[Any], Any]) -> Any:
    """The reference of a case, built once per process (deterministic, seeded) into `cache`, quietly."""
    key = (function, case.label, getattr(case, "salt", 0))   # a hidden case's salt makes it another case
    if key not in cache:
        with quiet_one_thread():
            cache[key] = build(case)
    return cache[key]


def training_loop(prepared: torch.nn.Module, batches: list, steps: int, lr: float, variant: str = "", *,
                  set_train: bool = True) -> torch.nn.Module:
    """The reference of a graded training loop: `steps` SGD steps on the cross-entropy, step i on
    batches[i % len(batches)]. `variant` names a wrong version (a key of TRAINING_LOOP_HINTS or of an exercise's
    own hints), used only to recognise a learner's mistake. `set_train`: switch to train mode first (an exported
    PT2E model has no train mode to switch to)."""
    if set_train and variant != "eval":
        prepared.train()
    params = list(prepared.parameters())
    if variant == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(params, lr=lr)
    else:
        opt = torch.optim.SGD(params, lr={"lr_0.01": 0.01, "lr_0.001": 0.001}.get(variant, lr),
                              momentum=0.9 if variant == "momentum" else 0.0, maximize=variant == "ascent")
    n = {"plus_one": steps + 1, "minus_one": max(steps - 1, 0), "no_cycle": min(steps, len(batches)),
         "one_epoch": len(batches)}.get(variant, steps)
    for i in range(n):
        x, y = batches[i % len(batches)]
        if variant != "no_zero_grad":
            opt.zero_grad()
        out = prepared(x)
        if variant == "sum":
            loss = torch.nn.functional.cross_entropy(out, y, reduction="sum")
        elif variant == "mse":
            loss = torch.nn.functional.mse_loss(out, torch.nn.functional.one_hot(y, out.shape[-1]).float())
        else:
            loss = torch.nn.functional.cross_entropy(out, y)
        if variant == "extra_forward_before":
            with torch.no_grad():
                prepared(x)
        loss.backward()
        opt.step()
        if variant == "extra_forward_after":
            with torch.no_grad():
                prepared(x)
    if variant == "eval_after":
        prepared.eval()
    return prepared


_CYCLE_HINT = "shared.do_exactly_steps_optimizer_steps_3"

# Wrong versions of a graded training loop (`steps` SGD steps on the cross-entropy, cycling through `batches`)
# and what to say when the learner's result matches one, most common first; ex07's and ex11's judges add theirs.
TRAINING_LOOP_HINTS = {
    "plus_one": "shared.do_exactly_steps_optimizer_steps",
    "minus_one": "shared.do_exactly_steps_optimizer_steps_2",
    "no_cycle": _CYCLE_HINT,
    "one_epoch": _CYCLE_HINT,
    "no_zero_grad": "shared.zero_gradients_every_step_optimizer",
    "lr_0.01": "shared.use_learning_rate_lr_you",
    "lr_0.001": "shared.use_learning_rate_lr_you",
    "adam": "shared.use_plain_sgd_torch_optim",
    "momentum": "shared.use_plain_sgd_without_momentum",
    "sum": "shared.use_mean_cross_entropy_over",
}


def flat_outputs(out: Any) -> list:
    """A model's outputs as a list: the items of a tuple or list, or the one output alone."""
    return list(out) if isinstance(out, (tuple, list)) else [out]


def lint_error(gm: fx.GraphModule) -> str | None:
    """What gm.graph.lint() reports (its error's type and first line), or None when the graph is sound."""
    try:
        gm.graph.lint()
    except Exception as exc:  # lint reports with RuntimeError, ValueError or AssertionError
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:500]
    return None


def generated_code(gm: fx.GraphModule) -> str | None:
    """The code gm's graph generates now (what gm.recompile() would make gm.code), None where it cannot."""
    try:
        return gm.graph.python_code(root_module="self").src
    except Exception:
        return None


def stale_code(gm: fx.GraphModule) -> bool:
    """True when gm.code is not what the graph generates now: recompile() was not called after a change."""
    try:
        return gm.code != generated_code(gm)
    except Exception:
        return True


def expect_fresh(stale: bool, hint: str | None = None) -> None:
    """Fail when gm.code is stale (from stale_code): the graph was changed and recompile() not called."""
    expect(not stale, "gm.code is out of date: the graph was changed after gm.code was generated",
           hint or "shared.call_gm_recompile_after_changing")


def expect_lint(ev: dict, hint: str | None = None) -> None:
    """Fail unless the evidence's "lint" (from lint_error) is None, naming what lint found."""
    expect(ev.get("lint") is None, f"graph.lint() fails on the returned graph: {ev.get('lint')}",
           hint or "shared.graph_lint_checks_every_node")


def unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The index of element `flat` of a tensor of `shape` (torch.unravel_index imports sympy: seconds)."""
    idx = []
    for size in reversed(shape):
        idx.append(flat % size if size else 0)
        flat //= size if size else 1
    return tuple(reversed(idx))


def sole_hint(got: Any, expected: Any, mistakes: Sequence[tuple[Any, str]]) -> str | None:
    """The hint of the one known mistake whose result is `got`, or None.

    `mistakes` are (what that mistake returns on this case, its hint). A hint is confirmed only when the answer
    returns exactly what its mistake predicts, that is not the right result, and no mistake with another hint
    predicts it too: a value two mistakes share diagnoses neither.
    """
    hints = {h for value, h in mistakes if value is not None and value != expected and got == value}
    return hints.pop() if len(hints) == 1 else None


def names_left(args: Sequence) -> list[str]:
    """The names of the nodes left in the graph of the GraphModule passed first, after the call (evidence of an
    answer that removed nodes from its caller's graph)."""
    graph = getattr(args[0], "graph", None) if args else None
    return [str(n.name) for n in graph.nodes][:500] if isinstance(graph, fx.Graph) else []


def removed_nodes_hint(gm: fx.GraphModule, left: Sequence[str]) -> str | None:
    """The hint for an answer that removed nodes from the caller's graph (eliminate_dead_code), given the names
    `names_left` found after the call, or None when every node of `gm` (a fresh copy of the input) is still there."""
    removed = [n.name for n in gm.graph.nodes if n.name not in left]
    if not left or not removed:
        return None
    return hint_of("shared.your_answer_removed_from_gm", removed=', '.join(removed[:3]))


def deleted_while_called_hint(gm: fx.GraphModule, message: str) -> str | None:
    """The hint for a submodule deleted while another node still calls it, when the error `message` (a lint error
    naming the target) names a module that `gm` (a fresh copy of the input) calls from more than one node."""
    found = re.search(r"target ([\w.]+) references nonexistent attribute", message)
    if not found:
        return None
    sites = [n for n in gm.graph.nodes if n.op == "call_module" and n.target == found.group(1)]
    if len(sites) < 2:
        return None
    return hint_of("shared.module_called_from_nodes_replace", target=found.group(1), sites=len(sites))


def nodes_where(graph: list[dict], pred: Callable[[dict], bool]) -> list[dict]:
    """The described nodes for which `pred` holds."""
    return [n for n in graph if pred(n)]


# ------------------------------------------------------------------------------ the evidence file

@dataclass(frozen=True)
class EvidenceLimits:
    """What an evidence file may hold. Honest evidence is far below every one of these."""

    bytes_on_disk: int = 32 * 2**20       # the archive as written (also enforced when it is read)
    bytes_unpacked: int = 64 * 2**20      # every archive entry's size added up
    entries: int = 4096                   # archive entries (one per tensor storage, plus a few)
    depth: int = 64                       # nesting of lists, tuples and dicts
    items: int = 1_000_000                # values visited in one call's evidence (shared ones once per use)
    tensor_elements: int = 16 * 2**20     # elements of one tensor
    total_elements: int = 32 * 2**20      # elements of all tensors of one call's evidence
    string: int = 1 * 2**20               # characters of one string


class EvidenceError(ValueError):
    """The evidence breaks its schema or a limit; the message says which and by how much."""


def check_archive(data: bytes, limits: EvidenceLimits = EvidenceLimits()) -> None:
    """Before loading: a torch.save zip archive, within the size limits, and uncompressed (torch.save never
    compresses, so a compressed entry can only be a decompression bomb)."""
    if len(data) > limits.bytes_on_disk:
        raise EvidenceError(f"the evidence file is {len(data)} bytes, over the limit of {limits.bytes_on_disk}")
    if data[:4] != b"PK\x03\x04":
        raise EvidenceError("the evidence file is not a torch.save archive")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise EvidenceError(f"the evidence archive is damaged ({exc})") from None
    if len(infos) > limits.entries:
        raise EvidenceError(f"the evidence archive has {len(infos)} entries, over the limit of {limits.entries}")
    total = 0
    for info in infos:
        if info.compress_type != zipfile.ZIP_STORED:
            raise EvidenceError(f"the evidence archive entry {info.filename[:80]!r} is compressed "
                                "(torch.save stores entries uncompressed)")
        if info.file_size != info.compress_size or info.header_offset + info.file_size > len(data):
            raise EvidenceError(f"the evidence archive entry {info.filename[:80]!r} claims a size it does not have")
        total += info.file_size
        if total > limits.bytes_unpacked:
            raise EvidenceError(f"the evidence unpacks to more than {limits.bytes_unpacked} bytes")


_SCALARS = (type(None), bool, int, float, str)


def check_plain(value: Any, limits: EvidenceLimits = EvidenceLimits(), where: str = "evidence") -> None:
    """After loading: only plain data (None, bool, int, float, str, list, tuple, str-keyed dict, dense CPU
    tensors), within the depth, item, string and tensor limits. Iterative: depth never costs the stack, and
    a small structure shared many times counts every time it is used, so it cannot make the judge walk for ever.
    """
    stack = [(value, 0)]
    items = elements = 0
    while stack:
        item, depth = stack.pop()
        items += 1
        if items > limits.items:
            raise EvidenceError(f"{where} has more than {limits.items} values")
        kind = type(item)
        if kind in _SCALARS:
            if kind is str and len(item) > limits.string:
                raise EvidenceError(f"{where} has a string of {len(item)} characters, over {limits.string}")
            if kind is int and item.bit_length() > 4096:
                raise EvidenceError(f"{where} has an integer of {item.bit_length()} bits")
            continue
        if kind is torch.Tensor or kind is torch.nn.Parameter:
            if item.layout != torch.strided or item.device.type != "cpu":
                raise EvidenceError(f"{where} has a {item.layout} tensor on {item.device}; expected dense CPU ones")
            n = item.numel()
            if n > limits.tensor_elements:
                raise EvidenceError(f"{where} has a tensor of {n} elements, over the limit of {limits.tensor_elements}")
            elements += n
            if elements > limits.total_elements:
                raise EvidenceError(f"{where} has more than {limits.total_elements} tensor elements in all")
            continue
        if depth >= limits.depth:
            raise EvidenceError(f"{where} is nested more than {limits.depth} levels deep")
        if kind is list or kind is tuple:
            if len(item) > limits.items:
                raise EvidenceError(f"{where} has a list of {len(item)} values")
            stack.extend((v, depth + 1) for v in item)
        elif kind is dict:
            if len(item) > limits.items:
                raise EvidenceError(f"{where} has a dict of {len(item)} keys")
            for k, v in item.items():
                if type(k) is not str:
                    raise EvidenceError(f"{where} has a dict key of type {type(k).__name__}; expected str")
                if len(k) > limits.string:
                    raise EvidenceError(f"{where} has a dict key of {len(k)} characters")
                stack.append((v, depth + 1))
        else:
            raise EvidenceError(f"{where} holds a {kind.__name__[:60]}, which is not plain data")


def load_evidence(data: bytes, expected_calls: int,
                  limits: EvidenceLimits = EvidenceLimits()) -> tuple[dict, dict[int, str]]:
    """Load and check a worker's evidence file: (evidence, {call index: why its evidence was rejected}).

    The top level must be {"calls": [{"evidence": [...]}, ...] (at most `expected_calls`), "cell_errors":
    [{"cell": str, "error": str}], "tampered": [str], "complete": bool}; anything else raises EvidenceError.
    One call's evidence that breaks a limit is rejected alone: the other tests keep theirs."""
    check_archive(data, limits)
    try:
        ev = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
    except (RecursionError, MemoryError) as exc:
        raise EvidenceError(f"the evidence could not be loaded ({type(exc).__name__})") from None
    except Exception as exc:
        raise EvidenceError(f"the evidence could not be loaded ({type(exc).__name__}: {str(exc)[:200]})") from None
    if type(ev) is not dict or set(ev) != {"calls", "cell_errors", "tampered", "complete"}:
        raise EvidenceError("the evidence does not have the worker's shape (calls, cell_errors, tampered, complete)")
    calls, errors, tampered = ev["calls"], ev["cell_errors"], ev["tampered"]
    if type(calls) is not list or len(calls) > expected_calls:
        raise EvidenceError(f"the evidence has {len(calls) if type(calls) is list else 'no list of'} calls "
                            f"for {expected_calls} expected")
    if type(ev["complete"]) is not bool:
        raise EvidenceError("the evidence's 'complete' is not a bool")
    small = EvidenceLimits(items=10_000, depth=3, string=4000)
    if type(tampered) is not list or any(type(t) is not str for t in tampered):
        raise EvidenceError("the evidence's list of patched names is not a list of strings")
    check_plain(tampered, small, "the list of patched names")
    if type(errors) is not list or any(type(e) is not dict or type(e.get("cell")) is not str
                                       or type(e.get("error")) is not str for e in errors):
        raise EvidenceError("the evidence's cell errors are not {cell, error} strings")
    check_plain(errors, small, "the cell errors")
    rejected: dict[int, str] = {}
    for i, call in enumerate(calls):
        try:
            if type(call) is not dict or set(call) != {"evidence"} or type(call["evidence"]) is not list:
                raise EvidenceError("not {'evidence': [...]}")
            check_plain(call["evidence"], limits, "its evidence")
        except EvidenceError as exc:
            rejected[i] = str(exc)
            calls[i] = {"evidence": []}
    return ev, rejected
