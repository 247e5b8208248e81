"""The course as data: the list of exercises, progressive hints, quiz questions, mutants and alternatives, clauses."""
