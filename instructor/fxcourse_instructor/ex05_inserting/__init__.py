"""The instructor's side of ex05_inserting: judges, references, `CHECKS` (judging) and hidden cases (hidden)."""
