"""Write autograder/coursedata/mutants/task_text/ex12_custom_ops.json from the answer files of this folder."""
import glob
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = ("import math\n\nimport torch\nimport torch.fx as fx\nimport torch.nn.functional as F\nfrom torch import Tensor\n"
          "from torch.export import ExportedProgram\n\n")
HINTS = {  # file -> (hint, not_hints)
    "register_scaled_gelu_wrong_01": ("not a namespace of your own", ()),
    "register_scaled_gelu_wrong_02": ("register_fake", ()),
    "register_scaled_gelu_wrong_03": ("register_autograd", ()),
    "register_scaled_gelu_wrong_04": ("x's shape and dtype", ()),
    "register_scaled_gelu_wrong_05": ("approximate", ()),
    "register_scaled_gelu_wrong_06": ("not F.gelu(scale * x)", ("approximate",)),
    "register_scaled_gelu_wrong_07": ("the x * phi(x) term", ("multiply by scale", "not scale alone")),
    "register_scaled_gelu_wrong_08": ("one gradient per input", ("register_autograd(backward, setup_context",)),
    "register_scaled_gelu_wrong_09": ("None for the float", ("register_autograd(backward, setup_context",)),
    "register_scaled_gelu_wrong_10": ("leave x alone", ()),
    "register_scaled_gelu_wrong_11": ("annotate scale as float", ()),
    "register_scaled_gelu_wrong_12": ("the operator is called scaled_gelu", ()),
    "register_scaled_gelu_wrong_14": ("not x itself", ("without a fake kernel",)),
    "register_scaled_gelu_wrong_15": ("keep x's shape and dtype", ()),
    "register_scaled_gelu_wrong_16": ("the namespace of an earlier call", ("not a namespace of your own",)),
    "register_scaled_gelu_wrong_17": ("so mutates_args=()", ()),
    "register_scaled_gelu_wrong_18": ("multiply by scale", ()),
    "count_op_nodes_wrong_01": ("compare node.target.overloadpacket with op", ()),
    "count_op_nodes_wrong_02": ("compare node.target.overloadpacket with op", ()),
    "count_op_nodes_wrong_03": ("not a packet: count the nodes whose target == op", ()),
    "count_op_nodes_wrong_04": ("not its other overloads", ("not their names", "not node names")),
    "count_op_nodes_wrong_05": ("not their names", ("not node names",)),
    "count_op_nodes_wrong_06": ("not their names", ("not node names",)),
    "count_op_nodes_wrong_07": ("operator.getitem", ()),
    "count_op_nodes_wrong_08": ("not node names", ("not their names",)),
    "count_op_nodes_wrong_09": ("not its other overloads", ("not their names", "not node names")),
    "count_op_nodes_wrong_10": ("every call_function node", ("overload packet here",)),
    "count_op_nodes_wrong_11": ("not only op.default", ()),
    "replace_with_op_wrong_01": ("is_wrapped", ()),
    "replace_with_op_wrong_02": ("another function, even one of the same name, stays", ()),
    "replace_with_op_wrong_03": ("recompile", ()),
    "replace_with_op_wrong_04": ("call gm.graph.lint()", ()),
    "replace_with_op_wrong_05": ("keep the node's args and kwargs", ()),
    "replace_with_op_wrong_06": ("keep the node's args and kwargs", ()),
    "replace_with_op_wrong_07": ("do not stop at the first", ()),
    "replace_with_op_wrong_08": ("another function, even one of the same name, stays", ()),
    "replace_with_op_wrong_09": ("a graph without a call of fn is no error", ()),
    "replace_with_op_wrong_10": ("ended without a `return`", ("instead of printing",)),
    "replace_with_op_wrong_11": ("op itself", ()),
    "replace_with_op_wrong_12": ("erase each old node", ()),
    "replace_with_op_wrong_13": ("op itself", ()),
}
# Judged right after all: the task asks for the object custom_op returns, and the checks accept the packet the
# operator defines as well (as the course's own Library-based alternative returns it).
RIGHT_AFTER_ALL = {
    "register_scaled_gelu_wrong_13": "returns the packet torch.ops.<namespace>.scaled_gelu, not the CustomOpDef: "
                                     "the checks take any form of the operator",
}


def split(path):
    lines = open(path).read().splitlines()
    why = []
    while lines and lines[0].startswith("#"):
        why.append(lines.pop(0).lstrip("# ").strip())
    text = " ".join(why)
    for tag in ("WRONG:", "RIGHT:"):
        text = text.replace(tag, "").strip()
    return text, "\n".join(lines).strip("\n") + "\n"


items = []
for fn in ("register_scaled_gelu", "count_op_nodes", "replace_with_op"):
    for kind in ("wrong", "right"):
        for path in sorted(glob.glob(os.path.join(HERE, f"{fn}_{kind}_*.py"))):
            name = os.path.basename(path)[:-3]
            why, body = split(path)
            entry = {"kind": kind, "function": fn, "why": why, "source": HEADER + body}
            if name in RIGHT_AFTER_ALL:
                entry.update(kind="right", why=RIGHT_AFTER_ALL[name])
            elif kind == "wrong":
                hint, not_hints = HINTS[name]
                entry["hint"] = hint
                if not_hints:
                    entry["not_hints"] = list(not_hints)
            items.append(entry)
out = os.path.join(HERE, "..", "..", "autograder", "coursedata", "mutants", "task_text", "ex12_custom_ops.json")
with open(out, "w", encoding="utf-8") as f:
    json.dump(items, f, indent=1, ensure_ascii=False)
    f.write("\n")
print(len(items), "answers:", sum(i["kind"] == "wrong" for i in items), "wrong,", sum(i["kind"] == "right" for i in items), "right")
