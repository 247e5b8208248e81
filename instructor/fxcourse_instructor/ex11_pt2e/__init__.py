"""The instructor's side of ex11_pt2e: judges, references, `CHECKS` (judging) and hidden cases (hidden)."""
