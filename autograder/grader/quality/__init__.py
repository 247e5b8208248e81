"""The checks measured with the course's own answers: mutants written by hand and made by AST edits must fail,
alternatives must pass (`validate`, `automutants`, `killrates`)."""
