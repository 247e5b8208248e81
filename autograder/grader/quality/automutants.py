"""Automatic mutants: small AST changes applied to every solution function, each one run against the checks.

Hand-written mutants (instructor/fxcourse_instructor/mutants/) are the wrong answers the course's authors thought of. These are the
ones nobody chose: every place in a solution's answer cell where one of the operators below applies gives one
mutant. A mutant that changes behaviour must fail the checks; one that cannot (it computes the same thing in
every case the contract allows) is listed in `instructor/fxcourse_instructor/mutants/equivalent.py` with a one-line reason, and a
test fails when a listed one is caught (the list is stale) or an unlisted one survives.

Operators (names as they appear in a mutant's key):

* `delete`: a statement becomes `pass`;
* `negate`: a comparison is negated (`==` / `!=`, `<` / `>=`, `in` / `not in`, ...);
* `is->==`: `is` becomes `==`, `is not` becomes `!=`;
* `constant`: an int n becomes n + 1, a float x becomes 10 x (1.0 for 0.0), a bool flips;
* `dtype`: `torch.float32` and `torch.float64` trade places;
* `drop-kwarg`: one keyword argument of a call is left out;
* `skip-call`: `x.eval()`, `x.train()`, `x.clone()`, `x.detach()`, `copy.deepcopy(x)`, `copy.copy(x)` become `x`;
* `once`: a `while` loop becomes an `if` (one iteration), a `for` over `range(...)` keeps its first value;
* `and<->or`: a boolean operator trades places with the other.

Only code inside functions (and the classes they define) is mutated; names and strings are left alone.
"""
from __future__ import annotations

import ast
import signal
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["AutoMutant", "AutoOutcome", "mutants_of", "generate", "run_mutant", "evaluate_auto", "OPERATORS"]

OPERATORS = ("delete", "negate", "is->==", "constant", "dtype", "drop-kwarg", "skip-call", "once", "and<->or")
# A mutant that loops forever is caught by the clock: after CPU_TIMEOUT seconds of this process's CPU time (the
# slowest mutant that ends, ex09's graph_break_count without its reset, uses 3 once the unmutated answer has run:
# see evaluate_auto), or TIMEOUT seconds of wall time, whichever comes first. CPU time grows less than wall time
# when the machine is busy, but it grows (CI's shared cores have doubled it), hence more than three times 3.
CPU_TIMEOUT = 10.0
TIMEOUT = 30.0

_NEGATE = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE,
           ast.LtE: ast.Gt, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
_OPTEXT = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.GtE: ">=", ast.Gt: ">", ast.LtE: "<=", ast.Is: "is",
           ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}
_SKIP_METHODS = ("eval", "train", "clone", "detach")
_DTYPES = {"float32": "float64", "float64": "float32"}


@dataclass(frozen=True)
class AutoMutant:
    function: str      # the graded function whose answer cell was mutated
    key: str           # stable name: "<def>: <operator> <change> in `<source line>`" (+ " #k" when repeated)
    operator: str
    source: str        # the whole mutated answer cell


@dataclass(frozen=True)
class AutoOutcome:
    mutant: AutoMutant
    killed: bool
    detail: str        # the first failure, or "passed every case"


# ------------------------------------------------------------------------------------------ generation

class _Sites(ast.NodeVisitor):
    """Every mutation site inside functions, in a fixed order: (operator, node id, change text, line)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines, self.sites, self.depth, self.defs = lines, [], 0, []

    def _line(self, node: ast.AST) -> str:
        return self.lines[node.lineno - 1].strip() if getattr(node, "lineno", None) else ""

    def _add(self, op: str, node: ast.AST, change: str, extra: object = None) -> None:
        if self.depth:
            self.sites.append((op, id(node), change, self._line(node), self.defs[-1], extra))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.depth += 1
        self.defs.append(node.name)
        self._bodies(node)
        self.generic_visit(node)
        self.defs.pop()
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def _bodies(self, node: ast.AST) -> None:
        for field in ("body", "orelse", "finalbody"):
            for i, stmt in enumerate(getattr(node, field, []) or []):
                if isinstance(stmt, ast.Pass) or (i == 0 and field == "body" and isinstance(node, (
                        ast.FunctionDef, ast.ClassDef)) and isinstance(stmt, ast.Expr)
                        and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)):
                    continue   # docstrings and pass
                if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
                    continue   # deleting a helper definition only breaks its callers by NameError
                self._add("delete", stmt, f"`{self._line(stmt)[:60]}` -> pass")

    def generic_visit(self, node: ast.AST) -> None:
        if self.depth and not isinstance(node, ast.FunctionDef):
            if isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.ClassDef)):
                self._bodies(node)
            if isinstance(node, ast.Compare) and len(node.ops) == 1:
                op = type(node.ops[0])
                if op in _NEGATE:
                    self._add("negate", node, f"{_OPTEXT[op]} -> {_OPTEXT[_NEGATE[op]]}")
                if op in (ast.Is, ast.IsNot):
                    self._add("is->==", node, f"{_OPTEXT[op]} -> {'==' if op is ast.Is else '!='}")
            elif isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
                v = node.value
                new = (not v) if type(v) is bool else (v + 1 if type(v) is int else (v * 10 if v else 1.0))
                self._add("constant", node, f"{v!r} -> {new!r}", new)
            elif (isinstance(node, ast.Attribute) and node.attr in _DTYPES and isinstance(node.value, ast.Name)
                  and node.value.id == "torch"):
                self._add("dtype", node, f"torch.{node.attr} -> torch.{_DTYPES[node.attr]}")
            elif isinstance(node, ast.Call):
                for i, kw in enumerate(node.keywords):
                    if kw.arg is not None:
                        self._add("drop-kwarg", node, f"drop {kw.arg}=", i)
                f = node.func
                if isinstance(f, ast.Attribute) and f.attr in _SKIP_METHODS and not node.args and not node.keywords:
                    self._add("skip-call", node, f".{f.attr}() skipped")
                elif (isinstance(f, ast.Attribute) and f.attr in ("deepcopy", "copy") and isinstance(f.value, ast.Name)
                      and f.value.id == "copy" and len(node.args) == 1):
                    self._add("skip-call", node, f"copy.{f.attr}(x) -> x")
            elif isinstance(node, ast.While):
                self._add("once", node, "while -> if (one iteration)")
            elif (isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name)
                  and node.iter.func.id == "range"):
                self._add("once", node, "for over range(...): first value only")
            elif isinstance(node, ast.BoolOp):
                self._add("and<->or", node, "and -> or" if isinstance(node.op, ast.And) else "or -> and")
        super().generic_visit(node)


def _mutate(source: str, site_index: int) -> str:
    """The source with site number `site_index` (in _Sites order) changed."""
    tree = ast.parse(source)
    finder = _Sites(source.splitlines())
    finder.visit(tree)
    op, node_id, _change, _line, _def, extra = finder.sites[site_index]
    target = next(n for n in ast.walk(tree) if id(n) == node_id)
    if op == "delete":
        _replace_stmt(tree, target, ast.Pass())
    elif op == "negate":
        target.ops = [_NEGATE[type(target.ops[0])]()]
    elif op == "is->==":
        target.ops = [ast.Eq() if isinstance(target.ops[0], ast.Is) else ast.NotEq()]
    elif op == "constant":
        target.value = extra
    elif op == "dtype":
        target.attr = _DTYPES[target.attr]
    elif op == "drop-kwarg":
        del target.keywords[extra]
    elif op == "skip-call":
        _replace_expr(tree, target, target.func.value if isinstance(target.func, ast.Attribute)
                      and target.func.attr in _SKIP_METHODS else target.args[0])
    elif op == "once":
        if isinstance(target, ast.While):
            _replace_stmt(tree, target, ast.If(test=target.test, body=target.body, orelse=target.orelse))
        else:
            target.iter = ast.Subscript(value=ast.Call(func=ast.Name("list", ast.Load()), args=[target.iter],
                                                       keywords=[]),
                                        slice=ast.Slice(upper=ast.Constant(1)), ctx=ast.Load())
    elif op == "and<->or":
        target.op = ast.Or() if isinstance(target.op, ast.And) else ast.And()
    ast.fix_missing_locations(tree)
    return ast.unparse(tree) + "\n"


def _replace_stmt(tree: ast.AST, old: ast.stmt, new: ast.stmt) -> None:
    for parent in ast.walk(tree):
        for field in ("body", "orelse", "finalbody", "handlers"):
            seq = getattr(parent, field, None)
            if isinstance(seq, list) and any(s is old for s in seq):
                seq[[i for i, s in enumerate(seq) if s is old][0]] = ast.copy_location(new, old)
                return


def _replace_expr(tree: ast.AST, old: ast.expr, new: ast.expr) -> None:
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list):
                for i, v in enumerate(value):
                    if v is old:
                        value[i] = new
                        return


def mutants_of(function: str, source: str) -> list[AutoMutant]:
    """Every automatic mutant of one answer cell, in a fixed order, with stable keys."""
    finder = _Sites(source.splitlines())
    finder.visit(ast.parse(source))
    out, seen = [], {}
    for i, (op, _node, change, line, where, _extra) in enumerate(finder.sites):
        key = f"{where}: {op} {change} in `{line[:90]}`"
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            key += f" #{seen[key]}"
        mutated = _mutate(source, i)
        out.append(AutoMutant(function, key, op, mutated))
    return out


def generate(assignment: str, solutions: str | Path) -> list[AutoMutant]:
    """The automatic mutants of every graded function of `assignment` (its solution's answer cells)."""
    import importlib

    from autograder.course.notebook import answer_cells, grade_id, read_notebook

    checks = importlib.import_module(f"autograder.checks.{assignment}").CHECKS
    nb = read_notebook(Path(solutions) / assignment / f"{assignment}.ipynb")
    out = []
    for cell in answer_cells(nb):
        if grade_id(cell) in checks:
            out += mutants_of(grade_id(cell), cell.source)
    return out


# ---------------------------------------------------------------------------------------------- runs

class _TimedOut(BaseException):
    pass


@contextmanager
def _clock(seconds: float, cpu_seconds: float | None = None):
    """Raise _TimedOut in this (main) thread after `seconds` of wall time or `cpu_seconds` of the process's CPU
    time, and again every 50 ms after that.

    It rings again because one ring is not enough: the check library records whatever an answer raises as
    evidence (BaseException included), so it takes the first _TimedOut as one case's error and goes on to the
    next case, which would then run with no clock at all. The list it yields is non-empty once it has rung."""
    rang: list[bool] = []

    def _ring(signum, frame):
        rang.append(True)
        raise _TimedOut(f"still running after {cpu_seconds:g} s of CPU time" if signum == signal.SIGPROF
                        else f"still running after {seconds:.0f} s")
    clocks = [(signal.SIGALRM, signal.ITIMER_REAL, seconds)]
    if cpu_seconds is not None:
        clocks.append((signal.SIGPROF, signal.ITIMER_PROF, cpu_seconds))
    old = [signal.signal(sig, _ring) for sig, _, _ in clocks]
    for _, timer, after in clocks:
        signal.setitimer(timer, after, 0.05)
    try:
        yield rang
    finally:
        for (sig, timer, _), handler in zip(clocks, old):
            signal.setitimer(timer, 0)
            signal.signal(sig, handler)


def run_mutant(assignment: str, mutant: AutoMutant, nb) -> AutoOutcome:
    """Run one automatic mutant against every case of its function, in this process."""
    from autograder.checks.keyring import instructor
    from autograder.course.notebook import answer_namespace

    try:
        with _clock(TIMEOUT, CPU_TIMEOUT) as rang:
            ns = answer_namespace(nb, {mutant.function: mutant.source})
            passed, text = instructor("mutants").run_answer(assignment, mutant.function, ns)
    except _TimedOut as exc:
        return AutoOutcome(mutant, True, f"timed out: {exc}")
    except Exception as exc:  # the cell itself fails to run: a mutant nobody could submit unnoticed
        return AutoOutcome(mutant, True, f"the answer cell raised {type(exc).__name__}: {exc}"[:300])
    if rang:  # a ring the check library took for the answer's own error: still a time-out
        return AutoOutcome(mutant, True, "timed out: still running at the end of its time")
    return AutoOutcome(mutant, not passed, "passed every case" if passed else text.splitlines()[0][:300])


def evaluate_auto(assignment: str, solutions: str | Path) -> list[AutoOutcome]:
    """Every automatic mutant of `assignment`, run."""
    import torch

    from autograder.checks.keyring import instructor
    from autograder.course.notebook import answer_namespace, read_notebook

    nb = read_notebook(Path(solutions) / assignment / f"{assignment}.ipynb")
    mutants = generate(assignment, solutions)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        # The unmutated answer first, off the clock: the first run in a process pays for torch's lazy imports and
        # dynamo's warm-up, which would otherwise be charged to whichever mutant came first. A kill means nothing
        # unless the answer it was mutated from passes.
        for function in dict.fromkeys(m.function for m in mutants):
            passed, text = instructor("mutants").run_answer(assignment, function, answer_namespace(nb, {}))
            if not passed:
                raise AssertionError(f"{assignment}'s solution fails {function} before any mutant: {text}")
        return [run_mutant(assignment, m, nb) for m in mutants]
    finally:
        torch.set_num_threads(threads)
