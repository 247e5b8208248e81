"""The learner's tools: check, progress, watch, reset, hints and lab, each one `fxcourse` command's work."""
