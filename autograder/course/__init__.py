"""What the learner's tools and the grader share: where a course lives (`root`), reading notebooks and telling
their cells apart (`notebook`), which assignment a notebook is and what its test cells ask (`plan`), and the exit
codes and one-line errors of every command (`console`)."""
