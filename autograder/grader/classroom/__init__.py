"""Grading a class: `fxcourse grade`'s checks (`batch`), the engine run for every submission by local grading
threads or on Dask (`runner`, `cluster`), the one writer into the gradebook (`gradebook`) and what a run prints
(`grade_progress`)."""
