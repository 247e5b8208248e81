"""Pictures of FX graphs with matplotlib alone: nodes coloured by opcode, laid out top to bottom."""
from __future__ import annotations

import re
from collections import Counter
from typing import Iterable
from typing import TYPE_CHECKING

import torch
import torch.fx as fx

from .table import _target_text

if TYPE_CHECKING:  # matplotlib is imported when something is drawn, not with the package (it costs ~1 s)
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["OP_COLORS", "graph_layout", "draw_graph", "draw_diff"]

OP_COLORS = {
    "placeholder": "#9ecae1",
    "get_attr": "#c7e9c0",
    "call_function": "#fdd0a2",
    "call_method": "#dadaeb",
    "call_module": "#fcbba1",
    "output": "#d9d9d9",
}
ADDED, REMOVED, CHANGED = "#2ca02c", "#d62728", "#ff7f0e"


def _graph(gm: fx.GraphModule | fx.Graph) -> fx.Graph:
    graph = gm.graph if isinstance(gm, fx.GraphModule) else gm
    if not isinstance(graph, fx.Graph):
        raise TypeError(f"expected a torch.fx.GraphModule or Graph, got {type(gm).__name__}")
    return graph


def graph_layout(gm: fx.GraphModule | fx.Graph) -> dict[str, tuple[float, float]]:
    """(x, y) of every node by name: y is minus the longest path from an input, x spreads each layer.

    Constants (get_attr nodes, and function calls that read only constants) sit just above their first user
    instead of in the top row, so a graph with many weights stays readable."""
    nodes = list(_graph(gm).nodes)
    layer: dict[fx.Node, int] = {}
    constant: dict[fx.Node, bool] = {}
    for node in nodes:
        layer[node] = max((layer[a] + 1 for a in node.all_input_nodes), default=0)
        constant[node] = node.op == "get_attr" or (
            node.op == "call_function" and all(constant[a] for a in node.all_input_nodes))
    for node in reversed(nodes):
        if constant[node] and node.users:
            layer[node] = min(layer[u] for u in node.users) - 1
    rows: dict[int, list[fx.Node]] = {}
    for node, depth in layer.items():
        rows.setdefault(depth, []).append(node)
    pos = {}
    for depth, nodes in rows.items():
        for i, node in enumerate(nodes):
            pos[node.name] = (i - (len(nodes) - 1) / 2, -float(depth))
    return pos


def _wrap(text: str, width: int = 14, lines: int = 3) -> str:
    """Break a long name after underscores or dots so it fits its box; past `lines` lines the start is cut
    (the end of a generated name, such as dynamo's `l_self_modules_fc_parameters_weight_`, tells nodes apart)."""
    out, line = [], ""
    for piece in re.split(r"(?<=[_.])", text):
        while len(piece) > width:  # a piece with no break in it
            if line:
                out.append(line)
                line = ""
            out.append(piece[:width])
            piece = piece[width:]
        if len(line) + len(piece) > width and line:
            out.append(line)
            line = ""
        line += piece
    out.append(line)
    if len(out) > lines:
        out = out[-lines:]
        out[0] = "\u2026" + out[0][-(width - 1):]
    return "\n".join(out)


def _label(node: fx.Node) -> str:
    target = _target_text(node)
    if node.op in ("placeholder", "output") or target == node.name:
        return _wrap(node.name)
    if isinstance(node.target, torch._ops.OpOverload):  # aten.linear.default: the operator, not the overload
        short = node.target.overloadpacket.__name__
    else:
        short = target.rsplit(".", 1)[-1] if node.op == "call_function" else target
    if short == node.name.rstrip("_0123456789"):
        return _wrap(node.name)
    return f"{_wrap(node.name, lines=2)}\n{_wrap(short, lines=1)}"


def _draw(graph: fx.Graph, ax: Axes, marks: dict[str, str], ghosts: Iterable[fx.Node] = ()) -> None:
    from matplotlib import patches

    pos = graph_layout(graph)
    for node in graph.nodes:
        x1, y1 = pos[node.name]
        for user in node.users:
            x2, y2 = pos[user.name]
            bend = 0.0 if y1 - y2 <= 1 and x1 == x2 else (0.35 if x2 >= x1 else -0.35)
            if x1 != x2 and y1 - y2 <= 1:
                bend = 0.0
            ax.annotate("", xy=(x2, y2 + 0.2), xytext=(x1, y1 - 0.2), zorder=1,
                        arrowprops=dict(arrowstyle="-|>", color="#555555", lw=1, shrinkA=0, shrinkB=0,
                                        connectionstyle=f"arc3,rad={bend}"))
    for node in graph.nodes:
        x, y = pos[node.name]
        edge = marks.get(node.name)
        box = patches.FancyBboxPatch((x - 0.42, y - 0.2), 0.84, 0.4, boxstyle="round,pad=0.02",
                                     facecolor=OP_COLORS.get(node.op, "white"),
                                     edgecolor=edge or "#333333", linewidth=3 if edge else 1,
                                     linestyle="--" if edge == REMOVED else "-", zorder=2)
        ax.add_patch(box)
        ax.text(x, y, _label(node), ha="center", va="center", fontsize=7, family="monospace", zorder=3)
    xs = [p[0] for p in pos.values()] or [0.0]
    ys = [p[1] for p in pos.values()] or [0.0]
    ax.set_xlim(min(xs) - 0.6, max(xs) + 0.6)
    ax.set_ylim(min(ys) - 0.5, max(ys) + 0.5)
    ax.set_aspect("auto")
    ax.axis("off")


def _legend(ax: Axes, extra: dict[str, str] | None = None) -> None:
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=c, edgecolor="#333333", label=op) for op, c in OP_COLORS.items()]
    for label, color in (extra or {}).items():
        handles.append(Patch(facecolor="white", edgecolor=color, linewidth=3, label=label))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)


def _figsize(graphs: list[fx.Graph], min_width: float) -> tuple[float, float]:
    """A figure size (inches) that fits the deepest graph and the widest row, for the graphs side by side."""
    rows = [Counter(y for _, y in graph_layout(g).values()) for g in graphs]
    depth = max((-min(r) for r in rows if r), default=0)
    widest = max((max(r.values()) for r in rows if r), default=1)
    return max(min_width, len(graphs) * (1.1 * widest + 1.0) + 1.0), 1.0 + 0.7 * (depth + 1)


def draw_graph(gm: fx.GraphModule | fx.Graph, ax: Axes | None = None, title: str | None = None) -> Figure:
    """Draw the graph top to bottom, one box per node coloured by opcode; returns the figure."""
    graph = _graph(gm)
    if ax is None:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=_figsize([graph], min_width=7.0))
    else:
        fig = ax.figure
    _draw(graph, ax, {})
    _legend(ax)
    if title:
        ax.set_title(title)
    return fig


def draw_diff(before: fx.GraphModule | fx.Graph, after: fx.GraphModule | fx.Graph,
              title: str | None = None) -> Figure:
    """Before and after a pass side by side: removed nodes outlined red, added green, retargeted orange."""
    g0, g1 = _graph(before), _graph(after)
    t0 = {n.name: (n.op, _target_text(n)) for n in g0.nodes}
    t1 = {n.name: (n.op, _target_text(n)) for n in g1.nodes}
    marks0 = {name: REMOVED for name in t0 if name not in t1}
    marks1 = {name: ADDED for name in t1 if name not in t0}
    marks0.update({n: CHANGED for n in t0 if n in t1 and t0[n] != t1[n]})
    marks1.update({n: CHANGED for n in t1 if n in t0 and t0[n] != t1[n]})
    import matplotlib.pyplot as plt

    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=_figsize([g0, g1], min_width=11.0))
    _draw(g0, ax0, marks0)
    _draw(g1, ax1, marks1)
    ax0.set_title(f"before: {len(t0)} nodes, {len(marks0) - sum(v == CHANGED for v in marks0.values())} removed")
    ax1.set_title(f"after: {len(t1)} nodes, {len(marks1) - sum(v == CHANGED for v in marks1.values())} added")
    _legend(ax1, {"added": ADDED, "removed": REMOVED, "changed target": CHANGED})
    if title:
        fig.suptitle(title)
    return fig
