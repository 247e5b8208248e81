"""What a graded function may not change in its arguments: `args_state` takes a snapshot of them as plain data
(the check framework takes one before and one after each call), and `state_change` names, in words, the first
difference between two snapshots."""
from __future__ import annotations

import torch

__all__ = ["args_state", "state_change"]


def args_state(args: tuple) -> list:
    """What a function may not change in its arguments, as plain data: per module its parameters and
    buffers, which parameters require grad, every submodule's training flag and, for a GraphModule, its graph and
    its generated code; tensors themselves."""
    out = []
    for a in args:
        if isinstance(a, torch.nn.Module):
            state = {k: v.detach().clone() for k, v in a.state_dict(keep_vars=True).items()
                     if isinstance(v, torch.Tensor)}
            entry = {"type": type(a).__name__, "state": state,
                     "training": [[name, bool(m.training)] for name, m in a.named_modules()],
                     "frozen": [name for name, p in a.named_parameters() if not p.requires_grad]}
            if isinstance(a, torch.fx.GraphModule):
                entry["graph"], entry["code"] = str(a.graph), a.code   # code: what runs till the next recompile()
            entry["hooks"] = [[name, n] for name, m in a.named_modules()
                              for n in [len(m._forward_hooks) + len(m._forward_pre_hooks) + len(m._backward_hooks)]
                              if n]
            out.append(entry)
        elif isinstance(a, torch.Tensor):
            out.append({"tensor": a.detach().clone()})
        else:
            out.append(None)
    return out


def state_change(before: list, after: list, modes: bool = True) -> str | None:
    """The first difference between two args_state snapshots, in words, or None (modes: training flags too)."""
    for i, (b, a) in enumerate(zip(before, after)):
        what = f"argument {i + 1}"
        if b is None or a is None:
            continue
        if "tensor" in b:
            t, u = b["tensor"], a.get("tensor")
            if not isinstance(u, torch.Tensor) or t.shape != u.shape or t.dtype != u.dtype or not torch.equal(t, u):
                return f"{what} (a tensor) was changed"
            continue
        what = f"{what} (the {b['type']} passed in)"
        if b.get("graph") != a.get("graph"):
            return f"{what}: its graph was changed"
        if b.get("code") != a.get("code"):
            return f"{what}: its generated code was changed (recompile() ran on a graph edited since its last one)"
        if b.get("hooks", []) != a.get("hooks", []):
            gained = [n for n, k in a.get("hooks", []) if k > dict(b.get("hooks", [])).get(n, 0)]
            where = f" on {gained[0] or 'the model itself'}" if gained else ""
            return f"{what}: hooks were left{where}" if gained else f"{what}: its hooks were removed"
        if modes and b["training"] != a["training"]:
            changed = [n for (n, t), (_, u) in zip(b["training"], a["training"]) if t != u] \
                if len(b["training"]) == len(a["training"]) else []
            name = (changed[0] or "the model itself") if changed else "a submodule"
            was = dict((n, t) for n, t in b["training"]).get(changed[0]) if changed else None
            mode = "" if was is None else f" from {'training' if was else 'eval'} to {'eval' if was else 'training'} mode"
            return f"{what}: the mode of {name} was switched{mode}"
        if b.get("frozen", []) != a.get("frozen", []):
            name = sorted(set(b.get("frozen", [])) ^ set(a.get("frozen", [])))[0]
            return (f"{what}: its parameter {name} " +
                    ("no longer requires grad" if name in a.get("frozen", []) else "requires grad now"))
        for k, t in b["state"].items():
            u = a["state"].get(k)
            if not isinstance(u, torch.Tensor) or t.shape != u.shape or t.dtype != u.dtype or not torch.equal(t, u):
                return f"{what}: its {k} was changed" if u is not None else f"{what}: its {k} disappeared"
        extra = [k for k in a["state"] if k not in b["state"]]
        if extra:
            return f"{what}: it gained {extra[0]}"
    return None
