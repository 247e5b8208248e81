"""fxcourse's grader: the check library, notebook restoration, the hardened runner and the CLI."""
