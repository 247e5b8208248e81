"""What differs between the dict a learner's function returned and the one expected, in a few words (the
judges of ex10 and ex14)."""
from __future__ import annotations

WRONG = "{key!r} is {got!r}, expected {expected!r}"


def dict_diff(got: dict, expected: dict, most: int = 4, wrong: str = WRONG) -> str:
    """The missing and the unexpected keys (the first `most` of each), and the first key whose value is wrong
    (`wrong` says it, given key, got and expected)."""
    missing = [k for k in expected if k not in got]
    extra = [k for k in got if k not in expected]
    wrongs = [k for k in expected if k in got and got[k] != expected[k]]
    parts = []
    for what, keys in (("missing", missing), ("unexpected", extra)):
        if keys:
            parts.append(f"{what} {', '.join(repr(k) for k in keys[:most])}" + (" ..." if len(keys) > most else ""))
    if wrongs:
        k = wrongs[0]
        parts.append(wrong.format(key=k, got=got[k], expected=expected[k]))
    return "; ".join(parts)
