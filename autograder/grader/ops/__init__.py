"""Course operations around grading: nbgrader's own commands with the course's configuration (`nbgrader`), the
exchange (`exchange`) and the hardened collect (`collect`)."""
