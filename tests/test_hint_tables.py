"""Hints live in tables (autograder/checks/hints): the judges and the grader name a hint by its id, never by
its text, and every id they name has a text whose fields are the values they pass."""
from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest

from autograder.checks.hints import HINT_ID, all_hints, hint_of, progressive
from autograder.checks.framework import CheckFailed
from autograder.coursedata.hints import HINTS

from conftest import ROOT

# where a call takes its hint, by position (besides any `hint=` keyword)
HINT_ARG = {"CheckFailed": 1, "CaseResult": 3, "Verdict": 3, "expect": 2, "expect_equal": 3, "expect_fresh": 1,
            "expect_lint": 1, "_one_diagnosis": 3}
# functions whose return value is a hint, and names that hold hints or (value, hint) pairs
RETURNS_HINT = ("_hint", "_raise", "_diagnosis", "_mistake")


def judge_and_grader_modules() -> list[Path]:
    checks = ROOT / "autograder" / "checks"
    found = [checks / "framework.py", checks / "evidence.py", checks / "errors.py",
             ROOT / "autograder" / "grader" / "engine" / "grading.py", ROOT / "autograder" / "grader" / "engine" / "helperblame.py",
             ROOT / "autograder" / "coursedata" / "quizzes.py"]
    instructor = ROOT / "instructor" / "fxcourse_instructor"   # the judges: the instructor's side of each exercise
    for package in sorted([*checks.glob("ex[0-9][0-9]_*"), *instructor.glob("ex[0-9][0-9]_*")]):
        found += sorted(p for p in package.rglob("*.py") if p.name not in ("__init__.py", "models.py", "references.py"))
    return found


class HintFlow:
    """The expressions that reach a hint in one module, followed through names assigned in it."""

    def __init__(self, tree: ast.Module, hint_params: dict[str, int]):
        self.tree, self.params = tree, hint_params
        self.parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
        self.texts: list[ast.AST] = []   # literal hint text: what must not be there
        self.seen: set[int] = set()

    def scope(self, node):
        p = self.parents.get(node)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.Lambda)):
            p = self.parents.get(p)
        return p

    def assigned(self, name: str, at: ast.AST) -> list[ast.AST]:
        scopes, s = [], self.scope(at)
        while s is not None:
            scopes.append(s)
            s = self.scope(s)
        for sc in scopes + [self.tree]:
            values = []
            for n in ast.walk(sc):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(
                    n, (ast.AnnAssign, ast.AugAssign)) and n.value is not None else []
                for t in targets:
                    values += self.match(t, n.value, name)
            if values:
                return values
        return []

    def match(self, target, value, name):
        if isinstance(target, ast.Name):
            return [value] if target.id == name else []
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts):
            return [v for t, e in zip(target.elts, value.elts) for v in self.match(t, e, name)]
        return []

    def hint(self, e) -> None:
        if e is None or id(e) in self.seen:
            return
        self.seen.add(id(e))
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            if e.value and not HINT_ID.fullmatch(e.value):
                self.texts.append(e)
        elif isinstance(e, (ast.JoinedStr, ast.BinOp)):
            self.texts.append(e)
        elif isinstance(e, ast.IfExp):
            self.hint(e.body), self.hint(e.orelse)
        elif isinstance(e, ast.BoolOp):
            for v in e.values:
                self.hint(v)
        elif isinstance(e, ast.Name):
            for v in self.assigned(e.id, e):
                self.hint(v)
        elif isinstance(e, ast.Tuple) and len(e.elts) == 2 and isinstance(e.elts[1], ast.Lambda):
            self.hint(e.elts[0])

    def run(self) -> list[ast.AST]:
        for n in ast.walk(self.tree):
            if isinstance(n, ast.Call):
                fn = getattr(n.func, "id", None) or getattr(n.func, "attr", None)
                for k in n.keywords:
                    if k.arg == "hint":
                        self.hint(k.value)
                pos = HINT_ARG.get(fn, self.params.get(fn))
                if pos is not None and len(n.args) > pos and not any(isinstance(a, ast.Starred) for a in n.args):
                    self.hint(n.args[pos])
                if fn == "append" and getattr(n.func.value, "id", "") == "hints":
                    self.hint(n.args[0])
            elif isinstance(n, ast.FunctionDef) and n.name.endswith(RETURNS_HINT):
                for r in ast.walk(n):
                    if isinstance(r, ast.Return) and self.scope(r) is n:
                        self.hint(r.value)
            elif isinstance(n, (ast.Assign, ast.AnnAssign)):
                names = [t.id for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                         if isinstance(t, ast.Name)]
                for name in names:
                    if name == "ERROR_HINTS":
                        for rule in n.value.elts:
                            self.hint(rule.elts[2])
                    elif name.endswith(("HINTS", "_MISTAKES", "_HINT")) and isinstance(n.value, ast.Dict):
                        for v in n.value.values:
                            self.hint(v)
                    elif name.endswith(("_HINT", "_hint")) or name in ("hint", "neutral"):
                        self.hint(n.value)
                    elif name in ("hints", "readings") and isinstance(n.value, ast.List):
                        for e in n.value.elts:
                            if isinstance(e, ast.Starred) and isinstance(e.value, ast.GeneratorExp):
                                e = e.value.elt   # *((value, hint) for value in ...)
                            self.hint(e.elts[1] if isinstance(e, ast.Tuple) and len(e.elts) == 2 else e)
        return self.texts


def hints_given_as_values(tree: ast.Module) -> list[ast.AST]:
    """The values passed to hint_of that are hints themselves (an id, a table of hints): the template would show
    the id, not its text."""
    return [k.value for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "hint_of"
            for k in n.keywords
            if any(isinstance(x, ast.Constant) and isinstance(x.value, str) and HINT_ID.fullmatch(x.value)
                   or isinstance(x, ast.Name) and (x.id == "hint" or x.id.endswith(("HINTS", "_HINT", "_hint")))
                   for x in ast.walk(k.value))]


def _trees() -> dict[Path, ast.Module]:
    return {p: ast.parse(p.read_text(encoding="utf-8"), str(p)) for p in judge_and_grader_modules()}


def _hint_params(trees) -> dict[str, int]:
    """{function: position of its `hint` parameter} of the functions these modules define."""
    return {n.name: [a.arg for a in n.args.args].index("hint") for t in trees.values() for n in ast.walk(t)
            if isinstance(n, ast.FunctionDef) and "hint" in [a.arg for a in n.args.args]}


def test_judges_and_the_grader_name_hints_by_id_and_write_no_hint_text():
    trees = _trees()
    params = _hint_params(trees)
    found = [f"{p.relative_to(ROOT)}:{e.lineno}: {ast.unparse(e)[:80]}"
             for p, t in trees.items() for e in HintFlow(t, params).run()]
    assert not found, "hint text written in a judge or grader module, not named by its id:\n" + "\n".join(found)
    nested = [f"{p.relative_to(ROOT)}:{e.lineno}: {ast.unparse(e)[:80]}"
              for p, t in trees.items() for e in hints_given_as_values(t)]
    assert not nested, "a hint given to hint_of as a value (name the whole hint instead):\n" + "\n".join(nested)


def test_the_flow_finds_a_literal_hint_where_it_is_written():
    src = ('RETRY = "try again"\n'
           'def judge(ev):\n'
           '    expect(ev, "wrong", "ex05.create_graph_call_function_fn")\n'
           '    hint = "ex05.keep_original_nodes_only_add" if ev else f"look at {ev}"\n'
           '    raise CheckFailed("wrong", hint or RETRY)\n')
    texts = HintFlow(ast.parse(src), {}).run()
    assert sorted(ast.unparse(e) for e in texts) == ["'try again'", "f'look at {ev}'"]
    src = ('def judge(got):\n'
           '    name_hint = "compare the objects"\n'
           '    readings = [(1, "ex12.compare_node_target_op_not"), *((v, name_hint) for v in got)]\n'
           '    raise CheckFailed("wrong", hint_of("ex03.relu_comes_three_forms", form=FORM_HINTS["x"]))\n')
    tree = ast.parse(src)
    assert [ast.unparse(e) for e in HintFlow(tree, {}).run()] == ["'compare the objects'"]
    assert [ast.unparse(e) for e in hints_given_as_values(tree)] == ["FORM_HINTS['x']"]


def _named_ids() -> list[tuple[str, str, set[str] | None]]:
    """(where, id, the fields passed or None for a bare id) of every hint id written in the package."""
    out = []
    instructor = ROOT / "instructor" / "fxcourse_instructor"
    for path in sorted([*(ROOT / "autograder").rglob("*.py"), *instructor.glob("ex[0-9][0-9]_*/*.py")]):
        if path.parent == ROOT / "autograder" / "checks" / "hints":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = {id(n.args[0]): n for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and getattr(n.func, "id", None) == "hint_of" and n.args and isinstance(n.args[0], ast.Constant)}
        for n in ast.walk(tree):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and HINT_ID.fullmatch(n.value):
                call = calls.get(id(n))
                fields = {k.arg for k in call.keywords} if call is not None else None
                out.append((f"{path.relative_to(ROOT)}:{n.lineno}", n.value, fields))
    return out


def test_every_named_hint_has_a_text_with_the_fields_it_is_given():
    table = all_hints()
    named = _named_ids()
    assert len(named) > 500
    missing = [f"{where}: {hid}" for where, hid, _ in named if hid not in table]
    assert not missing, "hint ids with no text:\n" + "\n".join(missing)
    unused = sorted(set(table) - {hid for _, hid, _ in named})
    assert not unused, f"hint texts no check names: {unused}"
    wrong = []
    for where, hid, fields in named:
        if not fields:   # a text named bare is shown as it reads, braces and all
            continue
        wanted = {f.split(".")[0].split("[")[0] for _, f, _, _ in string.Formatter().parse(table[hid]) if f}
        if fields != wanted:
            wrong.append(f"{where}: {hid} takes {sorted(wanted)}, given {sorted(fields or [])}")
    assert not wrong, "\n".join(wrong)


def test_an_id_becomes_its_text_and_an_unknown_id_is_an_error():
    failed = CheckFailed("gm.code is out of date", "shared.call_gm_recompile_after_changing")
    assert failed.hint == "call gm.recompile() after changing the graph, so gm.code and forward are regenerated"
    assert failed.hint.id == "shared.call_gm_recompile_after_changing"
    assert str(failed).endswith("\nHint: " + failed.hint)
    assert hint_of("shared.run_cell_defines_keep_name", name="f") == "run the cell that defines f, and keep its name"
    with pytest.raises(KeyError, match="ex05.no_such_hint"):
        hint_of("ex05.no_such_hint")


def test_progressive_hints_are_the_exercise_tables():
    assert HINTS and all(HINTS[a] == progressive(a) for a in HINTS)
    assert all(len(h) == 3 for fns in HINTS.values() for h in fns.values())
