"""The hardened grader: restoring submissions, the jailed workers and their fork server, judging, and nbgrader batches."""
