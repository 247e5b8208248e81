"""fxplayground: the small helper library of the fxcourse lessons and exercises."""
from .bench import BenchResult, benchmark
from .compare import Comparison, compare_modules
from .draw import draw_diff, draw_graph, graph_layout
from .models import (ConvBNNet, DropoutNet, LinearChain, Net, QATNet, ResidualBlock, SharedConvNet,
                     SmallResNet, ThreeReluNet, TinyNet)
from .table import NodeTable, node_table

__all__ = [
    "BenchResult", "benchmark", "Comparison", "compare_modules", "draw_diff", "draw_graph", "graph_layout",
    "NodeTable", "node_table", "TinyNet", "Net", "ThreeReluNet", "DropoutNet", "LinearChain", "ConvBNNet",
    "SharedConvNet", "ResidualBlock", "SmallResNet", "QATNet",
]
