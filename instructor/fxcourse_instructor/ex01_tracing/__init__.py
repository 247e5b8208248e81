"""The instructor's side of ex01_tracing: judges, references, `CHECKS` (judging) and hidden cases (hidden)."""
