"""The instructor's side of ex03_replacing: judges, references, `CHECKS` (judging) and hidden cases (hidden)."""
