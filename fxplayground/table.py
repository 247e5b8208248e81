"""A node table of an FX graph that prints well in a terminal and renders as HTML in a notebook."""
from __future__ import annotations

import html
from dataclasses import dataclass

import torch.fx as fx

__all__ = ["NodeTable", "node_table", "format_arg"]

COLUMNS = ("op", "name", "target", "args", "users")


def format_arg(arg: object) -> str:
    """Short text for a node argument: node names as %name, containers recursively."""
    if isinstance(arg, fx.Node):
        return f"%{arg.name}"
    if isinstance(arg, (tuple, list)):
        inner = ", ".join(format_arg(a) for a in arg)
        return f"({inner},)" if isinstance(arg, tuple) and len(arg) == 1 else (
            f"({inner})" if isinstance(arg, tuple) else f"[{inner}]")
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {format_arg(v)}" for k, v in arg.items()) + "}"
    return repr(arg)


def _target_text(node: fx.Node) -> str:
    target = node.target
    if isinstance(target, str):
        return target
    return fx.node._get_qualified_name(target) if callable(target) else repr(target)


@dataclass(frozen=True)
class NodeTable:
    """Rows of (op, name, target, args, users) for every node, in graph order."""

    rows: tuple[tuple[str, str, str, str, str], ...]

    def __len__(self) -> int:
        return len(self.rows)

    def __str__(self) -> str:
        widths = [max(len(c), *(len(r[i]) for r in self.rows)) if self.rows else len(c)
                  for i, c in enumerate(COLUMNS)]
        line = "  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths))
        rule = "  ".join("-" * w for w in widths)
        body = ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in self.rows]
        return "\n".join([line.rstrip(), rule, *body])

    __repr__ = __str__

    def _repr_html_(self) -> str:
        head = "".join(f"<th style='text-align:left'>{c}</th>" for c in COLUMNS)
        body = "".join(
            "<tr>" + "".join(f"<td style='text-align:left'><code>{html.escape(v)}</code></td>"
                             for v in row) + "</tr>"
            for row in self.rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def node_table(gm: fx.GraphModule | fx.Graph) -> NodeTable:
    """The node table of a GraphModule (or a bare Graph)."""
    graph = gm.graph if isinstance(gm, fx.GraphModule) else gm
    if not isinstance(graph, fx.Graph):
        raise TypeError(f"node_table expects a torch.fx.GraphModule or Graph, got {type(gm).__name__}")
    rows = []
    for node in graph.nodes:
        args = ", ".join([format_arg(a) for a in node.args]
                         + [f"{k}={format_arg(v)}" for k, v in node.kwargs.items()])
        users = ", ".join(u.name for u in node.users)
        rows.append((node.op, node.name, _target_text(node), args, users))
    return NodeTable(tuple(rows))
