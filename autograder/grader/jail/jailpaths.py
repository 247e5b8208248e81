"""What the jailed worker must still read once its jail is up, and how it is kept reachable: the folders a jail
covers and those it binds back (`autograder.grader.jail.worker.enter_jail` uses these before learner code runs)."""
from __future__ import annotations

import os
import sys


def outermost(paths: list[str]) -> list[str]:
    """The paths that lie inside none of the others (binding those back brings the rest along)."""
    return sorted({p for p in paths if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in paths)})


def needed_paths() -> list[str]:
    """What the worker reads once the jail is up (lazy imports): the venv and the Python it was made from
    (standard library, site-packages) and the course's packages (autograder/ and fxplayground/ of a checkout)."""
    course = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             *(os.path.join(course, name) for name in ("autograder", "fxplayground"))]
    return sorted({os.path.realpath(p) for p in paths if os.path.isdir(p)})


def package_folders() -> list[str]:
    """The site-packages and dist-packages folders on sys.path (real paths): beside the venv's own, those a .pth
    file or PYTHONPATH adds (another environment's packages), which a root file system of the worker's own
    (autograder.grader.jail.userjail) must hold too."""
    return sorted({os.path.realpath(p) for p in sys.path if os.path.isabs(p) and os.path.isdir(p)
                   and os.path.basename(os.path.realpath(p)) in ("site-packages", "dist-packages")})


def private_ancestor(path: str, uid: int, gid: int) -> str | None:
    """The outermost folder above `path` that `uid`:`gid` (no other group) cannot pass through by its mode bits
    (a home of mode 0700 or 0750), or None."""
    folder = ""
    for part in path.strip("/").split("/")[:-1]:
        folder += "/" + part
        info = os.stat(folder)
        if not info.st_mode >> (6 if info.st_uid == uid else 3 if info.st_gid == gid else 0) & 1:
            return folder
    return None


def make_passable(top: str, path: str) -> None:
    """Make the folders from `top` (an empty tmpfs) down to `path`, each one the worker's uid can pass through."""
    folder = top
    for part in os.path.relpath(path, top).split("/"):
        folder = os.path.join(folder, part)
        if not os.path.isdir(folder):
            os.mkdir(folder)
            os.chmod(folder, 0o755)


def unreadable(paths: list[str]) -> str:
    """Why this process (the jailed worker) cannot read one of `paths`, naming the folder in the way; or ""."""
    for path in paths:
        if os.access(path, os.R_OK | os.X_OK):
            continue
        folder = ""
        for part in path.strip("/").split("/"):
            folder += "/" + part
            if not os.access(folder, os.X_OK if folder != path else os.R_OK | os.X_OK):
                break
        try:
            mode = f"mode {os.stat(folder).st_mode & 0o7777:04o}"
        except OSError as exc:
            mode = exc.strerror or str(exc)
        return f"the worker's uid cannot read {path} ({f'under {folder}, ' if folder != path else ''}{mode})"
    return ""
