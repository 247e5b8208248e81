"""Grade every answer file of this folder with the course's checks, as `fxcourse validate` does."""
import glob
import os
import sys
import warnings

warnings.filterwarnings("ignore")
from autograder.coursedata.mutants import run_answer
from autograder.grader.notebook import answer_namespace, read_notebook

HERE = os.path.dirname(os.path.abspath(__file__))
nb = read_notebook("solutions/ex12_custom_ops/ex12_custom_ops.ipynb")
only = sys.argv[1:]
for path in sorted(glob.glob(os.path.join(HERE, "*_wrong_*.py")) + glob.glob(os.path.join(HERE, "*_right_*.py"))):
    base = os.path.basename(path)
    if only and not any(o in base for o in only):
        continue
    fn = base.rsplit("_", 2)[0]
    src = open(path).read()
    ns = answer_namespace(nb, {fn: src})
    passed, text = run_answer("ex12_custom_ops", fn, ns)
    wrong = "_wrong_" in base
    verdict = ("caught" if not passed else "NOT CAUGHT") if wrong else ("passes" if passed else "FAILS")
    print(f"{base:36s} {verdict:10s} {' '.join(text.split())[:600]}")
    sys.stdout.flush()
