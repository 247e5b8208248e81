"""Try every answer file of this folder against the task text (plain Python, torch 2.13)."""
import glob
import itertools
import math
import operator
import os
import sys
import traceback
import warnings

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from torch.export import Dim, ExportedProgram, export

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
_ns = itertools.count()


def load(path, name):
    g = {"math": math, "torch": torch, "fx": fx, "nn": nn, "F": F, "Tensor": Tensor,
         "ExportedProgram": ExportedProgram, "export": export}
    exec(compile(open(path).read(), path, "exec"), g)
    return g[name]


def fresh(prefix="tt"):
    return f"{prefix}{os.getpid()}_{next(_ns)}"


# ---------------------------------------------------------------- register_scaled_gelu
def check_register(fn):
    problems = []
    ns1, ns2 = fresh(), fresh()
    op1 = fn(ns1)
    op2 = fn(ns2)
    for ns, op in ((ns1, op1), (ns2, op2)):
        if type(op).__name__ != "CustomOpDef":
            problems.append(f"returned {type(op).__name__}, not the CustomOpDef")
        if not hasattr(getattr(torch.ops, ns), "scaled_gelu"):
            problems.append(f"no {ns}::scaled_gelu")
            return problems
        packet = getattr(torch.ops, ns).scaled_gelu
        schema = str(packet.default._schema)
        if schema != f"{ns}::scaled_gelu(Tensor x, float scale) -> Tensor":
            problems.append(f"schema {schema}")
        for dtype in (torch.float32, torch.float64):
            x = torch.randn(4, 5, dtype=dtype)
            x0 = x.clone()
            y = packet(x, -0.7)
            if not torch.equal(x, x0):
                problems.append("mutates x")
            if y.dtype != dtype or not torch.allclose(y, -0.7 * F.gelu(x0), atol=1e-6):
                problems.append(f"values/dtype wrong for {dtype}")
        for inputs in ((torch.randn(3, 4, requires_grad=True), 1.5),
                       (torch.randn(2, 5, dtype=torch.float64, requires_grad=True), -0.5)):
            rep = torch.library.opcheck(packet.default, inputs, raise_exception=False)
            bad = {k: str(v).splitlines()[0][:90] for k, v in rep.items() if v != "SUCCESS"}
            if bad:
                problems.append(f"opcheck {bad}")
        xd = torch.randn(6, dtype=torch.float64, requires_grad=True)
        try:
            (g,) = torch.autograd.grad(packet(xd, 1.7).sum(), xd)
            (gr,) = torch.autograd.grad((1.7 * F.gelu(xd)).sum(), xd)
            if not torch.allclose(g, gr):
                problems.append("wrong gradient")
        except Exception as exc:
            problems.append(f"backward fails: {type(exc).__name__}: {str(exc).splitlines()[0][:90]}")

        class M(nn.Module):
            def forward(self, x):
                return packet(x + 1, 2.0) * 3

        try:
            ep = export(M(), (torch.randn(2, 3),))
            n = sum(1 for node in ep.graph.nodes if node.target is packet.default)
            if n != 1:
                problems.append(f"export has {n} op nodes")
        except Exception as exc:
            problems.append(f"export fails: {type(exc).__name__}")
    if op1 is op2:
        problems.append("same object for both namespaces")
    return sorted(set(problems))


# ---------------------------------------------------------------- count_op_nodes
def build_count_cases():
    ns, other = fresh("cnt"), fresh("cnto")
    lib = torch.library.Library(ns, "DEF")
    lib.define("shift(Tensor x, float by) -> Tensor")
    lib.define("shift.Tensor(Tensor x, Tensor by) -> Tensor")
    lib.define("shift2(Tensor x) -> Tensor")
    lib2 = torch.library.Library(other, "DEF")
    lib2.define("shift(Tensor x, float by) -> Tensor")
    for l, q in ((lib, f"{ns}::shift"), (lib, f"{ns}::shift.Tensor"), (lib, f"{ns}::shift2"), (lib2, f"{other}::shift")):
        l.impl(q.split("::")[1], lambda x, by=None: x + (by if by is not None else 0) * 1.0 if not isinstance(by, float) else x + by, "CompositeExplicitAutograd")
        torch.library.register_fake(q, lambda x, by=None: torch.empty_like(x), lib=l)
    ops = getattr(torch.ops, ns)
    ops2 = getattr(torch.ops, other)

    class Mix(nn.Module):
        def forward(self, x):
            a = ops.shift(x, 1.0)
            b = ops.shift.Tensor(a, x)
            c = ops.shift(b, 2.0)
            d = ops.shift2(c)
            e = ops2.shift(d, 3.0)
            vals, idx = torch.max(e, dim=1)
            return F.gelu(e) + F.gelu(vals[:, None]) + idx[:, None]

    ep = export(Mix(), (torch.randn(3, 4),))
    epd = export(Mix(), (torch.randn(3, 4),), dynamic_shapes=({0: Dim("b")},))
    cases = []
    for e in (ep, epd):
        cases += [(e, ops.shift, 3), (e, ops.shift.default, 2), (e, ops.shift.Tensor, 1), (e, ops.shift2, 1),
                  (e, ops2.shift, 1), (e, ops2.shift.default, 1), (e, torch.ops.aten.gelu, 2),
                  (e, torch.ops.aten.gelu.default, 2), (e, torch.ops.aten.max, 1), (e, torch.ops.aten.max.dim, 1)]
    return cases, (lib, lib2)


def check_count(fn, cases):
    problems = []
    for ep, op, want in cases:
        try:
            got = fn(ep, op)
        except Exception as exc:
            problems.append(f"raises {type(exc).__name__} for {op}")
            continue
        if got != want:
            problems.append(f"{op}: {got} != {want}")
    return sorted(set(problems))


# ---------------------------------------------------------------- replace_with_op
def scaled_gelu(x: Tensor, scale: float) -> Tensor:
    return scale * F.gelu(x)


def make_other():
    import types
    mod = types.ModuleType("other_gelus")
    mod.F = F
    exec("def scaled_gelu(x, scale):\n    return scale * F.gelu(x) + 1.0\n", mod.__dict__)
    sys.modules["other_gelus"] = mod
    mod.scaled_gelu.__module__ = "other_gelus"
    return mod.scaled_gelu


other_scaled_gelu = make_other()


class Twice(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 6)
        self.fc2 = nn.Linear(6, 3)

    def forward(self, x):
        h = scaled_gelu(self.fc1(x), scale=1.5)
        h = scaled_gelu(h, 0.5) + other_scaled_gelu(h, scale=2.0)
        return self.fc2(h)


def check_replace(fn, op):
    import torch.fx._symbolic_trace as st
    saved = dict(st._wrapped_fns_to_patch)
    try:
        return _check_replace(fn, op)
    finally:
        st._wrapped_fns_to_patch.clear()
        st._wrapped_fns_to_patch.update(saved)


def _check_replace(fn, op):
    problems = []
    m = Twice().eval()
    gm = fx.GraphModule(m, fx.Tracer(autowrap_functions=(scaled_gelu, other_scaled_gelu)).trace(m))
    before = [(n.args, dict(n.kwargs)) for n in gm.graph.nodes if n.target is scaled_gelu]
    x = torch.randn(4, 6)
    ref = gm(x)
    linted = []
    orig_lint = fx.Graph.lint

    def spy(self):
        linted.append(self)
        return orig_lint(self)

    fx.Graph.lint = spy
    try:
        out = fn(gm, scaled_gelu, op)
    except Exception as exc:
        fx.Graph.lint = orig_lint
        return [f"raises {type(exc).__name__}: {exc}"]
    fx.Graph.lint = orig_lint
    if not isinstance(out, fx.GraphModule):
        return [f"returns {type(out).__name__}"]
    if not linted or not any(g is out.graph for g in linted):
        problems.append("no lint")
    nodes = [n for n in out.graph.nodes if n.op == "call_function"]
    if any(n.target is scaled_gelu for n in nodes):
        problems.append("fn still called")
    calls = [n for n in nodes if n.target is op]
    if len(calls) != 2:
        problems.append(f"{len(calls)} nodes call op")
    def shape(args, kwargs):
        f = lambda v: "<node>" if isinstance(v, fx.Node) else repr(v)
        return tuple(f(a) for a in args), {k: f(v) for k, v in kwargs.items()}

    a = [shape(n.args, n.kwargs) for n in calls]
    b = [shape(ar, kw) for ar, kw in before]
    if a != b:
        problems.append(f"args/kwargs changed {a} vs {b}")
    if any("is_wrapped" in n.meta for n in calls):
        problems.append("is_wrapped left")
    others = [n for n in nodes if n.target is other_scaled_gelu]
    if len(others) != 1:
        problems.append("other function replaced")
    elif not others[0].meta.get("is_wrapped"):
        problems.append("other function lost its is_wrapped")
    if str(op) not in out.code and "scaled_gelu" not in out.code:
        problems.append("code does not call op")
    if "torch.ops" not in out.code:
        problems.append("not recompiled (code has no torch.ops call)")
    with torch.no_grad():
        if not torch.allclose(out(x), ref, atol=1e-6):
            problems.append("numbers changed")
    try:
        fx.symbolic_trace(nn.Linear(2, 2))
    except Exception as exc:
        problems.append(f"later symbolic_trace fails: {type(exc).__name__}")
    # a graph without fn, and a second call on the same module
    try:
        again = fn(out, scaled_gelu, op)
        if again is None:
            problems.append("second call returns None")
    except Exception as exc:
        problems.append(f"second call raises {type(exc).__name__}")
    return sorted(set(problems))


def main():
    right_reg = load(os.path.join(HERE, "register_scaled_gelu_right_03.py"), "register_scaled_gelu")
    op = getattr(torch.ops, (lambda ns: (right_reg(ns), ns)[1])(fresh("rep"))).scaled_gelu
    cases, _libs = build_count_cases()
    files = sorted(glob.glob(os.path.join(HERE, "*_wrong_*.py")) + glob.glob(os.path.join(HERE, "*_right_*.py")))
    only = sys.argv[1:]
    for path in files:
        base = os.path.basename(path)
        if only and not any(o in base for o in only):
            continue
        name = base.rsplit("_", 2)[0]
        fn = load(path, name)
        try:
            if name == "register_scaled_gelu":
                probs = check_register(fn)
            elif name == "count_op_nodes":
                probs = check_count(fn, cases)
            else:
                probs = check_replace(fn, op)
        except Exception as exc:
            probs = [f"harness error {type(exc).__name__}: {exc}"]
            traceback.print_exc()
        wrong = "_wrong_" in base
        verdict = ("OK (caught)" if probs else "NOT CAUGHT") if wrong else ("OK (passes)" if not probs else "FAILS")
        print(f"{base:38s} {verdict:12s} {probs}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
