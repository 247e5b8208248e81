"""The exit codes and the one-line error every `fxcourse` command shares.

Exit codes: 0 success (for `check`: full marks), 1 graded or ran but something failed (for `check`: points
lost), 2 bad input or usage (missing file, not a notebook, unknown assignment), 130 interrupted (Ctrl-C).
"""
from __future__ import annotations

import sys

__all__ = ["EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INTERRUPTED", "err"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def err(msg: str) -> int:
    """Print `fxcourse: error: msg` on stderr; returns EXIT_USAGE."""
    print(f"fxcourse: error: {msg}", file=sys.stderr)
    return EXIT_USAGE
