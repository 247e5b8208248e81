"""The instructor's side of ex14_exported_programs: judges, references, `CHECKS` (judging) and hidden cases (hidden)."""
