"""The engine: one submission restored on the instructor's source, run in the jail, judged, and turned into
grades (`grading`), with nbgrader's hardened preprocessors (`preprocessors`), the course secret hidden cases are
drawn from (`secret`) and the blame of a wrong helper (`helperblame`)."""
