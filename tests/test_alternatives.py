"""Every graded function that works on graphs has a right answer written with another torch.fx mechanism than
its solution's, and it passes (the exercise tests run every alternative)."""
from __future__ import annotations

import re

import pytest

from autograder.coursedata.exercises import functions
from fxcourse_instructor.mutants import load
from autograder.course.notebook import answer_cells, grade_id, read_notebook
from conftest import ROOT, assignments

MECHANISMS = {
    "fx.Transformer": r"\bTransformer\b", "fx.Interpreter": r"\bInterpreter\b", "Graph.find_nodes": r"\.find_nodes\(",
    "Graph.node_copy": r"\.node_copy\(", "replace_pattern": r"\breplace_pattern\(", "ShapeProp": r"\bShapeProp\b",
    "fx.wrap": r"\bfx\.wrap\(", "a Tracer subclass": r"class \w+\(fx\.Tracer\)", "autowrap": r"autowrap_",
    "concrete_args": r"concrete_args", "optimization.fuse": r"optimization import fuse\b",
    "Tracer.call_module": r"def call_module\(self, m, forward", "tracing a subclass whose forward fixes values":
        r"__class__ = type\(",
    "fx.symbolic_trace": r"\bsymbolic_trace\(", "passes.infra PassManager": r"\bPassManager\b",
    "a stream of one's own (write())": r"def write\(self",
    "a torch.compile backend of one's own": r"\bbackend\s*=\s*(?![\"'])\w", "a Dim hint": r"\bDim\.(AUTO|DYNAMIC)\b",
    "torch.library.Library": r"\blibrary\.Library\(",
    "an open file handed to torch.export.save and load": r"\bopen\([^)]*[\"']wb[\"']",
    "torch._decomp's core ATen table": r"\bcore_aten_decompositions\(", "nn.Module.named_modules": r"\.named_modules\(",
}
# Functions whose answer is not graph code: no torch.fx mechanism applies, only the APIs the task names.
EXEMPT = {
    ("ex07_qat", "to_int8"): "convert_fx is the only public way from a prepared GraphModule to int8 modules: it "
        "reads prepare's state kept in prepared.meta, which a Transformer, node_copy or replace_pattern does not "
        "carry, and a QConfigMapping given to it must repeat prepare's (the backend is not passed) or skip modules; "
        "what may vary, the copy and the eval mode, other alternatives vary",
    ("ex13_inductor_passes", "make_pattern_pass"): "a PatternMatcherPass is filled by inductor's register_replacement "
        "only (the pattern is traced from the two functions; no torch.fx mechanism builds a pattern entry); the "
        "alternative names the pass and hands the pass dicts as a list",
    ("ex11_pt2e", "to_qdq"): "the graph must be rewritten by move_exported_model_to_eval and convert_pt2e themselves "
                              "(a hand-made dropout or batch-norm rewrite is not the contract); the alternative "
                              "calls them in the other order",
}


def _mechanisms(source: str) -> set[str]:
    return {name for name, pattern in MECHANISMS.items() if re.search(pattern, source)}


@pytest.mark.parametrize("assignment", assignments())
def test_a_right_answer_with_another_fx_mechanism(assignment):
    nb = read_notebook(ROOT / "solutions" / assignment / f"{assignment}.ipynb")
    solution = {grade_id(c): c.source for c in answer_cells(nb)}
    _, alternatives = load(assignment)
    missing = []
    for fn in functions(assignment):
        if (assignment, fn) in EXEMPT:
            continue
        own = _mechanisms(solution[fn])
        if not any(_mechanisms(a.cell(solution[fn])) - own for a in alternatives if a.function == fn):
            missing.append(f"{fn} (the solution uses {sorted(own) or 'none of them'})")
    assert not missing, "no alternative with another fx mechanism: " + "; ".join(missing)


def test_exemptions_name_graded_functions():
    for (assignment, fn), why in EXEMPT.items():
        assert fn in functions(assignment) and why.strip()
