"""Similar submissions: pairs of students whose answer cells are alike beyond chance, and pairs that share the
same rare wrong diagnoses. It only flags: nothing here reads or changes a grade.

Fingerprints (`fingerprints`): each answer cell is parsed, and every statement (at any depth) becomes a token
string of its own, without names (variables, arguments, the function's name), literals, comments or docstrings,
and without the statements nested in it (they are statements of their own); attribute names, keywords and
imports stay, as they name the API the code uses. Each statement's token 4-grams are hashed and winnowed (the
smallest hash of every 4 consecutive ones), and a cell's fingerprint is the SET of its statements' winnowed hashes:
renaming, changed literals and comments, and statements in another order leave it as it was. The hashes of the
release's own code of that cell (the stub every student starts from) are taken out.

Beyond chance (`similar_pairs`): what a whole class writes alike is what the task forces. A fingerprint held by
`df` of the `n` students who answered a function weighs log(n / df) (its surprise), and only RARE ones count:
held by at most 5% of the class, the limit kept between 3 and 20 students. Two cells that share rare
fingerprints score the weight of the rarest one they share (the fingerprints of one statement come together, so
they are one piece of evidence, not several), and a pair's code score is the sum of its cells' scores over every
function of every assignment. The same is done with failed tests' confirmed diagnoses (the hint the checks
chose): a rare diagnosis shared by two students weighs log(n / count).

Pairs are found through an inverted index from each rare fingerprint (or diagnosis) to the students holding it:
at most 190 pair updates per rare fingerprint (20 holders), so the work grows with the number of answer cells,
not with the n**2 pairs of the class times its functions that comparing every pair's cells costs.

A pair's score adds up, cell by cell, the larger of the two (a copied wrong answer is alike in code and in
diagnosis: one piece of evidence). What chance gives is measured, not assumed: random pairings made function by
function (each function's cells from two students drawn at random, so that no pairing is the same two students
across functions) score what unrelated cells share by coincidence. A pair is flagged when its score is above the
mean of those random pairings plus Z_FLAG standard deviations, with evidence in at least two answer cells.
Ranked by score.
"""
from __future__ import annotations

import ast
import math
import random
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

__all__ = ["fingerprints", "Pair", "Similarity", "similar_pairs", "K", "WINDOW", "RARE", "MAX_RARE", "Z_FLAG"]

K = 4           # tokens per hashed k-gram
WINDOW = 4      # k-grams per winnowing window
RARE = 0.05     # a fingerprint held by at most this share of the class is rare (MIN_RARE to MAX_RARE students)
MIN_RARE = 3
MAX_RARE = 20   # so that the pairs one fingerprint gives stay few however large the class
Z_FLAG = 8.0    # standard deviations above the random pairings' mean
NULL_PAIRS = 10  # random pairings per student (at most MAX_NULL)
MAX_NULL = 2000


def _is_docstring(node: ast.AST) -> bool:
    return type(node) is ast.Expr and type(node.value) is ast.Constant and isinstance(node.value.value, str)


def _tokens(node: ast.AST, out: list[str], statements: list[list[str]]) -> None:
    """Append `node`'s tokens to `out`; each statement met inside starts a token list of its own in `statements`."""
    kind = type(node)
    if kind is ast.Constant:
        out.append("C")
        return
    if kind is ast.Name or kind is ast.arg:
        out.append("N")
        return
    if kind in _CONTEXTS:
        return
    out.append(kind.__name__)
    if kind is ast.Attribute:
        out.append("." + node.attr)
    elif kind is ast.keyword:
        out.append(f"{node.arg}=")
    elif kind is ast.alias:
        out.append(node.name)
    for name in node._fields:
        value = getattr(node, name, None)
        if type(value) is list:
            for item in value:
                if isinstance(item, ast.stmt):
                    if not _is_docstring(item):  # a docstring (or a bare string) is prose, not code
                        own: list[str] = []
                        statements.append(own)
                        _tokens(item, own, statements)
                elif isinstance(item, ast.AST):
                    _tokens(item, out, statements)
        elif isinstance(value, ast.AST):
            _tokens(value, out, statements)


_CONTEXTS = (ast.Load, ast.Store, ast.Del)


def _winnow(hashes: list[int]) -> set[int]:
    if len(hashes) <= WINDOW:
        return {min(hashes)}
    return {min(hashes[i:i + WINDOW]) for i in range(len(hashes) - WINDOW + 1)}


def fingerprints(source: str) -> set[int]:
    """The fingerprint of one answer cell: its statements' winnowed token hashes (empty when it does not parse)."""
    try:
        statements: list[list[str]] = []
        _tokens(ast.parse(source), [], statements)
    except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError):
        return set()
    found: set[int] = set()
    for tokens in statements:
        grams = ["\x1f".join(tokens[i:i + K]) for i in range(max(1, len(tokens) - K + 1))]
        found |= _winnow([zlib.crc32(g.encode()) for g in grams])
    return found


@dataclass
class Pair:
    a: str
    b: str
    code: float = 0.0                     # shared rare fingerprints' weight (nats)
    diagnoses: float = 0.0                # shared rare diagnoses' weight (nats)
    functions: dict[str, float] = field(default_factory=dict)          # "assignment/function" -> shared weight
    shared_diagnoses: list[tuple[str, str, int, float]] = field(default_factory=list)  # where, diagnosis,
    #                                                                                      students, weight
    flagged: bool = False
    why: str = ""

    score: float = 0.0                    # per answer cell the larger of the two, summed

    def total(self) -> float:
        """A cell's alike code and its rare diagnosis are mostly one piece of evidence (the same wrong answer):
        per cell the larger of the two counts."""
        diag: dict[str, float] = {}
        for where, _, _, w in self.shared_diagnoses:
            diag[where] = diag.get(where, 0.0) + w
        cells = set(self.functions) | set(diag)
        self.score = sum(max(self.functions.get(c, 0.0), diag.get(c, 0.0)) for c in cells)
        return self.score


@dataclass
class Similarity:
    pairs: list[Pair]                     # flagged first, then by score; at most a few unflagged ones kept
    threshold: float                      # a pair's score (nats) above this is beyond chance
    chance: tuple[float, float]           # mean, std of the random pairings' score
    candidates: int                       # pairs that share anything rare
    updates: int                          # pair updates made through the inverted index (the work done)
    documents: int                        # answer cells fingerprinted
    scores: list[float] = field(default_factory=list)   # every candidate pair's score (for the histogram)
    method: str = " ".join(part.replace("\n", " ").strip() for part in (__doc__ or "").split("\n\n")[1:])


def _rare_sets(holders: dict[str, Any], n: int) -> tuple[dict[str, dict[Any, float]], int]:
    """{student: {rare item: weight}} of one function's cells (or diagnoses), and the rare limit used."""
    df: Counter = Counter()
    for items in holders.values():
        df.update(items)
    limit = min(MAX_RARE, max(MIN_RARE, math.ceil(RARE * n)))
    rare = {item: math.log(n / count) for item, count in df.items() if 2 <= count <= limit}
    return {s: {i: rare[i] for i in items if i in rare} for s, items in holders.items()}, limit


def _null(docs: list[tuple[list[str], dict[str, dict[Any, float]], dict[str, dict[Any, float]]]], students: int,
          rng: random.Random) -> tuple[float, float]:
    """Mean and std of the score of random pairings made function by function: for each function, two of the
    students who answered it, drawn at random; their cells' shared rare code and shared rare diagnosis."""
    samples = min(MAX_NULL, NULL_PAIRS * max(students, 1))
    docs = [d for d in docs if len(d[0]) >= 2]
    if not docs:
        return 0.0, 0.0
    scores = []
    for _ in range(samples):
        total = 0.0
        for who, code, diag in docs:
            a, b = rng.sample(who, 2)
            x, y = code.get(a, {}), code.get(b, {})
            da, db = diag.get(a, {}), diag.get(b, {})
            total += max(max((w for item, w in x.items() if item in y), default=0.0),
                         sum(w for item, w in da.items() if item in db))
        scores.append(total)
    mean = sum(scores) / len(scores)
    return mean, math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))


def similar_pairs(cells: dict[str, dict[str, set[int]]], diagnoses: dict[str, dict[str, str]],
                  class_size: dict[str, int], keep_unflagged: int = 10, seed: int = 0) -> Similarity:
    """Pairs alike beyond chance.

    `cells`: {"assignment/function": {student: fingerprint}}; `diagnoses`: {"assignment/function": {student: the
    diagnosis of their failed test}}; `class_size`: {"assignment/function": students who handed it in}.
    """
    rng = random.Random(seed)
    pairs: dict[tuple[str, str], Pair] = {}

    def pair(a: str, b: str) -> Pair:
        key = (a, b) if a < b else (b, a)
        if key not in pairs:
            pairs[key] = Pair(*key)
        return pairs[key]

    docs, everyone, updates = {}, set(), 0
    for where, holders in cells.items():
        everyone |= set(holders)
        weighted, _ = _rare_sets({s: fp for s, fp in holders.items() if fp}, class_size.get(where, len(holders)))
        docs[where] = (sorted(holders), weighted, {})
        index: dict[int, list[str]] = defaultdict(list)
        for student, items in weighted.items():
            for item in items:
                index[item].append(student)
        shared: dict[tuple[str, str], float] = defaultdict(float)
        for item, who in index.items():
            w = weighted[who[0]][item]
            updates += len(who) * (len(who) - 1) // 2
            for a, b in combinations(sorted(who), 2):
                if w > shared[(a, b)]:
                    shared[(a, b)] = w
        for (a, b), w in shared.items():
            p = pair(a, b)
            p.code += w
            p.functions[where] = w
    for where, holders in diagnoses.items():
        n = class_size.get(where, len(holders))
        weighted, _ = _rare_sets({s: {d} for s, d in holders.items()}, n)
        if where in docs:
            docs[where][2].update(weighted)
        by_diagnosis: dict[str, list[str]] = defaultdict(list)
        for student, items in weighted.items():
            for item in items:
                by_diagnosis[item].append(student)
        for diagnosis, who in by_diagnosis.items():
            w = weighted[who[0]][diagnosis]
            updates += len(who) * (len(who) - 1) // 2
            for a, b in combinations(sorted(who), 2):
                p = pair(a, b)
                p.diagnoses += w
                p.shared_diagnoses.append((where, diagnosis, len(who), w))
    chance = _null(list(docs.values()), len(everyone), rng)
    limit = chance[0] + Z_FLAG * chance[1]
    for p in pairs.values():
        p.total()
        cells_alike = set(p.functions) | {d[0] for d in p.shared_diagnoses}
        p.flagged = p.score > limit and len(cells_alike) >= 2
        if p.flagged:
            p.why = (f"{p.score:.1f} nats shared in {len(cells_alike)} answer cells ({p.code:.1f} of rare code in "
                     f"{len(p.functions)}, {p.diagnoses:.1f} of rare wrong diagnoses in {len(p.shared_diagnoses)}); "
                     f"chance gives {chance[0]:.1f} ± {chance[1]:.1f}")
    ranked = sorted(pairs.values(), key=lambda p: (not p.flagged, -p.score, p.a, p.b))
    flagged = [p for p in ranked if p.flagged]
    return Similarity(flagged + [p for p in ranked if not p.flagged][:keep_unflagged], limit, chance,
                      len(pairs), updates, sum(len(h) for h in cells.values()), [p.score for p in pairs.values()])
