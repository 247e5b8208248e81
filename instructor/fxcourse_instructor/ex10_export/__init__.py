"""The instructor's side of ex10_export: judges, references, `CHECKS` (judging) and hidden cases (hidden)."""
