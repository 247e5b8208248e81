"""The instructor's side of ex06_fusing: judges, references, `CHECKS` (judging) and hidden cases (hidden)."""
