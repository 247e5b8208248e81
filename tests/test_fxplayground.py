"""fxplayground: every public function, on structure and on numbers."""
from __future__ import annotations

import subprocess
import sys

import matplotlib
import pytest
import torch
import torch.fx as fx
import torch.nn as nn

import fxplayground as fp

matplotlib.use("Agg")

MODELS = [(fp.TinyNet, (3, 4)), (fp.Net, (3, 8)), (fp.ThreeReluNet, (3, 8)), (fp.DropoutNet, (3, 6)),
          (fp.LinearChain, (2, 512)), (fp.ConvBNNet, (2, 3, 8, 8)), (fp.SharedConvNet, (2, 4, 6, 6)),
          (fp.SmallResNet, (2, 3, 8, 8)), (fp.QATNet, (5, 16))]


@pytest.mark.parametrize("cls,shape", MODELS, ids=[m[0].__name__ for m in MODELS])
def test_models_trace_and_match_eager(cls, shape):
    model = cls().eval()
    gm = fx.symbolic_trace(model)
    x = torch.randn(*shape)
    with torch.no_grad():
        assert torch.allclose(gm(x), model(x), atol=1e-6)


def test_seed_models_have_the_curriculum_shapes():
    t, n = fp.TinyNet(), fp.Net()
    assert (t.fc1.in_features, t.fc1.out_features, t.fc2.out_features) == (4, 8, 2)
    assert (n.fc1.in_features, n.fc1.out_features, n.fc2.out_features) == (8, 16, 4)
    ops = [node.op for node in fx.symbolic_trace(fp.ThreeReluNet()).graph.nodes]
    assert {"call_function", "call_method", "call_module"} <= set(ops)


def test_node_table_lists_every_node_with_args_and_users():
    gm = fx.symbolic_trace(fp.TinyNet())
    table = fp.node_table(gm)
    assert [r[1] for r in table.rows] == [n.name for n in gm.graph.nodes]
    relu = next(r for r in table.rows if r[1] == "relu")
    assert relu == ("call_function", "relu", "torch.relu", "%fc1", "fc2")
    text = str(table)
    assert text.splitlines()[0].split() == ["op", "name", "target", "args", "users"]
    assert "<table>" in table._repr_html_() and "%fc1" in table._repr_html_()
    assert len(fp.node_table(gm.graph)) == 5
    with pytest.raises(TypeError, match="GraphModule or Graph"):
        fp.node_table(nn.Linear(2, 2))


def test_node_table_escapes_html():
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(torch.add, (x, "<b>")))
    assert "<b>" not in fp.node_table(g)._repr_html_()


def test_graph_layout_is_top_to_bottom_by_longest_path():
    gm = fx.symbolic_trace(fp.ThreeReluNet())
    pos = fp.graph_layout(gm)
    for node in gm.graph.nodes:
        for user in node.users:
            assert pos[user.name][1] < pos[node.name][1], f"{user.name} is not below {node.name}"
    assert pos["add"][1] == pos["act"][1] - 1  # the skip edge does not pull add up


def test_draw_graph_draws_one_box_per_node_coloured_by_opcode():
    gm = fx.symbolic_trace(fp.ThreeReluNet())
    fig = fp.draw_graph(gm, title="t")
    ax = fig.axes[0]
    boxes = [p for p in ax.patches]
    assert len(boxes) == len(gm.graph.nodes)
    colours = {matplotlib.colors.to_hex(b.get_facecolor()) for b in boxes}
    assert colours == {fp.draw.OP_COLORS[n.op] for n in gm.graph.nodes}
    assert ax.get_title() == "t"


def test_aten_nodes_are_labelled_with_their_operator_not_the_overload():
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(torch.ops.aten.sigmoid.default, (x,), name="act"))
    labels = [t.get_text() for t in fp.draw_graph(g).axes[0].texts]
    assert "act\nsigmoid" in labels, labels


def test_constants_sit_just_above_their_first_user_and_wide_graphs_get_wide_figures():
    g = fx.Graph()
    x = g.placeholder("x")
    h = g.call_function(torch.relu, (x,))
    h = g.call_function(torch.relu, (h,))
    w = g.get_attr("w")
    w_t = g.call_function(torch.t, (w,))  # reads only a constant: a constant too
    out = g.call_function(torch.matmul, (h, w_t))
    g.output(out)
    pos = fp.graph_layout(g)
    assert pos["t"][1] == pos["matmul"][1] + 1 and pos["w"][1] == pos["t"][1] + 1
    assert pos["x"][1] == 0.0  # inputs stay on top
    wide = fx.Graph()
    xs = [wide.placeholder(f"x{i}") for i in range(12)]
    wide.output(wide.call_function(torch.stack, (xs,)))
    assert fp.draw_graph(wide).get_size_inches()[0] > fp.draw_graph(g).get_size_inches()[0]


def test_long_generated_names_are_wrapped_to_fit_their_boxes():
    g = fx.Graph()
    w = g.placeholder("l_self_modules_inp_parameters_weight_")
    x = g.placeholder("l_x_")
    g.output(g.call_function(torch.matmul, (x, w)))
    labels = [t.get_text() for t in fp.draw_graph(g).axes[0].texts]
    assert all(len(line) <= 14 for label in labels for line in label.splitlines()), labels
    weight = next(label for label in labels if "weight" in label)
    assert weight.endswith("weight_") and len(weight.splitlines()) <= 3  # the telling end is kept
    assert "l_x_" in labels


def test_draw_diff_marks_added_removed_and_changed_nodes():
    before = fx.symbolic_trace(fp.TinyNet())
    after = fx.symbolic_trace(fp.TinyNet())
    relu = next(n for n in after.graph.nodes if n.name == "relu")
    with after.graph.inserting_after(relu):
        new = after.graph.call_function(torch.sigmoid, (relu,))
    relu.replace_all_uses_with(new, delete_user_cb=lambda u: u is not new)
    fc1 = next(n for n in after.graph.nodes if n.name == "fc1")
    fc1.target = "fc2"
    after.recompile()
    fig = fp.draw_diff(before, after)
    edges = [matplotlib.colors.to_hex(p.get_edgecolor()) for p in fig.axes[1].patches]
    assert edges.count(fp.draw.ADDED) == 1 and edges.count(fp.draw.CHANGED) == 1
    assert "1 added" in fig.axes[1].get_title()


def test_compare_modules_reports_the_largest_difference_and_where():
    model = fp.TinyNet()
    gm = fx.symbolic_trace(model)
    same = fp.compare_modules(model, gm, [torch.randn(4, 4)], trials=3)
    assert same.ok and bool(same) and same.max_abs_diff == 0.0 and same.trials == 3
    other = fx.symbolic_trace(fp.TinyNet())
    other.load_state_dict(model.state_dict())
    with torch.no_grad():
        other.fc2.bias[1] += 0.25
    diff = fp.compare_modules(model, other, [torch.randn(4, 4)])
    assert not diff.ok and diff.worst_index[1] == 1 and abs(diff.max_abs_diff - 0.25) < 1e-5
    assert "output 0" in diff.message and "index" in diff.message


def test_compare_modules_catches_shape_and_arity_differences():
    a = nn.Linear(3, 2)
    b = nn.Sequential(nn.Linear(3, 2), nn.Flatten(0))
    r = fp.compare_modules(a, b, [torch.randn(2, 3)])
    assert not r.ok and "shape" in r.message
    with pytest.raises(ValueError):
        fp.compare_modules(a, a, [torch.randn(2, 3)], trials=0)


def test_compare_modules_is_seeded():
    m1, m2 = nn.Linear(3, 3), nn.Linear(3, 3)
    r1 = fp.compare_modules(m1, m2, [torch.zeros(2, 3)], seed=7)
    r2 = fp.compare_modules(m1, m2, [torch.zeros(2, 3)], seed=7)
    assert r1.max_abs_diff == r2.max_abs_diff and r1.worst_index == r2.worst_index


# Run in a fresh interpreter: fxplayground.bench reloaded as if this torch were a CPU build, then a CUDA build
# on a machine without CUDA (torch.utils.cpp_extension's condition for its warning, pretended).
CUDA_BUILD_ON_A_CPU = """
import importlib, logging, sys, tempfile
import torch
torch.version.cuda = None
import fxplayground.bench
print("cpu build, imported:", "torch.utils.cpp_extension" in sys.modules)
torch.version.cuda, torch.cuda._is_compiled, torch.cuda.is_available = "13.0", lambda: True, lambda: False
import os; os.environ["CUDA_HOME"] = tempfile.gettempdir()
logging.getLogger("torch.utils.cpp_extension").setLevel(logging.INFO)
importlib.reload(fxplayground.bench)
print("cuda build, imported:", "torch.utils.cpp_extension" in sys.modules,
      "level:", logging.getLogger("torch.utils.cpp_extension").level, flush=True)
print("the warning, without fxplayground:", file=sys.stderr, flush=True)
importlib.reload(sys.modules["torch.utils.cpp_extension"])
"""


def test_a_cuda_build_run_on_a_cpu_imports_the_extension_module_quietly_with_the_package():
    """On a CUDA build of torch run on a CPU, the first import of torch.utils.cpp_extension logs "No CUDA runtime
    is found": by torch.utils.benchmark, or by inductor at a lesson's first torch.compile, in the middle of the
    lesson's output. fxplayground imports it with the package there, with its logger quieted and then restored;
    a CPU build pays for the import only when it benchmarks."""
    r = subprocess.run([sys.executable, "-c", CUDA_BUILD_ON_A_CPU], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["cpu build, imported: False", "cuda build, imported: True level: 20"], r.stdout
    before, _, after = r.stderr.partition("the warning, without fxplayground:")
    assert "No CUDA runtime is found" not in before and "No CUDA runtime is found" in after, r.stderr


def test_benchmark_reports_medians_and_speedups():
    calls = {"a": 0, "b": 0}

    def make(name):
        def fn(x):
            calls[name] += 1
            return x @ x
        return fn

    x = torch.randn(16, 16)
    res = fp.benchmark({"a": make("a"), "b": make("b")}, x, min_run_time=0.03)
    assert set(res.medians) == {"a", "b"} and res.baseline == "a"
    assert calls["a"] > 3 and calls["b"] > 3  # warm-up plus repeated, interleaved rounds
    assert all(m > 0 for m in res.medians.values()) and all(i >= 0 for i in res.iqrs.values())
    assert res.speedup("a") == 1.0 and res.speedup("b") == res.medians["a"] / res.medians["b"]
    assert "speedup vs a" in str(res)
    with pytest.raises(ValueError):
        fp.benchmark({}, x)
