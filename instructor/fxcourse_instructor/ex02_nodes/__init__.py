"""The instructor's side of ex02_nodes: judges, references, `CHECKS` (judging) and hidden cases (hidden)."""
