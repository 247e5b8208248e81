"""The instructor's side of the fxcourse checks: never installed where learners work.

One package per exercise (`exNN_topic/`: `judging` with `CHECKS`, its judges and references, and `hidden`, the
hidden cases), the mutants that measure the checks (`mutants/`) and the clauses of the task texts (`clauses/`).
It sits in the course folder's `instructor/` beside `solutions/` (mode 700 with the rest of it), and
`autograder.checks.keyring` is the only way the autograder finds it.
"""
