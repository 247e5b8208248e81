"""The grader, by job: `engine` (one submission: restore, jail, judge, grades), `jail` (the worker's processes and
the fork server), `classroom` (a class graded locally or on Dask, the one writer into the gradebook), `quality`
(validation and mutants), `ops` (nbgrader's commands and the exchange) and `report` (the class report)."""
