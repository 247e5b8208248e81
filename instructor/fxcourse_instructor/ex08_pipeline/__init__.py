"""The instructor's side of ex08_pipeline: judges, references, `CHECKS` (judging) and hidden cases (hidden)."""
