"""The instructor's side of ex09_dynamo: judges, references, `CHECKS` (judging) and hidden cases (hidden)."""
