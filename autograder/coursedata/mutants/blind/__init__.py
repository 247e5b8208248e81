"""Answers written from each exercise's task text alone, by someone who had not read the checks: per exercise a
module with MUTANTS (wrong answers, each with the diagnosis its failure must give) and ALTERNATIVES (right
answers), which the exercise's own module of mutants adds to its lists."""
