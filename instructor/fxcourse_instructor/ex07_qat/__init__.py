"""The instructor's side of ex07_qat: judges, references, `CHECKS` (judging) and hidden cases (hidden)."""
