"""The instructor's side of ex12_custom_ops: judges, references, `CHECKS` (judging) and hidden cases (hidden)."""
