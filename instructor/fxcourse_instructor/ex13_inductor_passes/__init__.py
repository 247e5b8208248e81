"""The instructor's side of ex13_inductor_passes: judges, references, `CHECKS` (judging) and hidden cases (hidden)."""
