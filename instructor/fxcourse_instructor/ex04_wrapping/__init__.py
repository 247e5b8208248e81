"""The instructor's side of ex04_wrapping: judges, references, `CHECKS` (judging) and hidden cases (hidden)."""
