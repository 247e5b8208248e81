"""`fxcourse lab`: the course in JupyterLab, or every lesson run top to bottom without a server."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from autograder.course.console import EXIT_FAILED, EXIT_OK, err
from autograder.course.root import find_course

__all__ = ["lab"]


def lab(no_browser: bool = False, headless: bool = False, port: int = 8888, timeout: float = 600,
        course: str | None = None) -> int:
    """JupyterLab on lessons/ until Ctrl-C; `headless`: run each lesson in a fresh kernel (exit 1 if one fails)."""
    found = find_course(Path.cwd(), course)
    if headless:
        from autograder.grader.jail.headless import run_notebooks

        lessons = sorted((found.root / "lessons").glob("*.ipynb"))
        if not lessons:
            return err(f"no lessons in {found.root / 'lessons'}")
        return EXIT_FAILED if run_notebooks(lessons, timeout=timeout) else EXIT_OK
    if shutil.which("jupyter") is None:
        return err("jupyter is not installed: pip install -e .")
    cmd = ["jupyter", "lab", f"--ServerApp.root_dir={found.root}", "--LabApp.default_url=/lab/tree/lessons",
           f"--ServerApp.port={port}"]
    if no_browser:
        cmd.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    print("starting JupyterLab on lessons/ (Ctrl-C to stop):", " ".join(cmd))
    try:
        return subprocess.call(cmd)
    except KeyboardInterrupt:
        return EXIT_OK
