"""A local demo of the course on JupyterHub, on 127.0.0.1 only, and the set-up steps it shares with the tests.

Run as root (the hub starts each user's server as that user):

    sudo FXCOURSE_DEMO_USERS=1 .venv/bin/python deploy/jupyterhub/demo.py   # make demo users, print them, start
    sudo .venv/bin/python deploy/jupyterhub/demo.py                          # start again with the same users
    sudo .venv/bin/python deploy/jupyterhub/demo.py --remove-users           # remove the demo users and folder

Demo users are made only when FXCOURSE_DEMO_USERS=1 is set: an instructor and two students with random
passwords, in two Unix groups, homes readable by their owner only. The demo keeps its course folder, exchange
and hub state in FXCOURSE_DEMO_DIR (default /srv/fxcourse-demo). Ctrl-C stops the hub.
"""
from __future__ import annotations

import argparse
import grp
import json
import os
import pwd
import secrets
import shutil
import stat
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CONFIG = HERE / "jupyterhub_config.py"
VENV = Path(sys.prefix)
DEMO_DIR = Path(os.environ.get("FXCOURSE_DEMO_DIR", "/srv/fxcourse-demo"))


# ------------------------------------------------------------------------------------------ Unix users

def create_group(name: str) -> None:
    subprocess.run(["groupadd", name], check=True)


def create_user(name: str, group: str, home: Path) -> str:
    """A Unix user in `group` (besides their own), home readable by them only; returns a random password."""
    home.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["useradd", "--create-home", "--home-dir", str(home), "--shell", "/bin/bash",
                    "--user-group", "--groups", group, name], check=True)
    os.chmod(home, 0o700)
    password = secrets.token_urlsafe(12)
    subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True)
    return password


def remove_user(name: str) -> None:
    """Remove a user and their home; fails (naming the reason) while they still run processes."""
    try:
        pwd.getpwnam(name)
    except KeyError:
        return
    r = subprocess.run(["userdel", "--remove", name], capture_output=True, text=True)
    try:
        pwd.getpwnam(name)
    except KeyError:
        return
    raise RuntimeError(f"could not remove the user {name}: {r.stderr.strip()}")


def remove_group(name: str) -> None:
    try:
        grp.getgrnam(name)
    except KeyError:
        return
    subprocess.run(["groupdel", name], check=False)


def as_user(user: str, *cmd: str, cwd: str | Path | None = None, env: dict[str, str] | None = None,
            input_text: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run a command as `user` with runuser, in their home's environment (HOME, USER, PATH with the venv)."""
    home = pwd.getpwnam(user).pw_dir
    base = {"PATH": f"{VENV / 'bin'}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": home,
            "PYTHONWARNINGS": "ignore::DeprecationWarning", "MPLBACKEND": "Agg"}
    full = [*(f"{k}={v}" for k, v in {**base, **(env or {})}.items())]
    return subprocess.run(["runuser", "-u", user, "--", "env", "-i", *full, *cmd], cwd=cwd or home,
                          capture_output=True, text=True, timeout=timeout, input=input_text,
                          stdin=subprocess.DEVNULL if input_text is None else None)


# -------------------------------------------------------------------------------- what the users reach

def blocked_path(user: str, path: Path) -> Path | None:
    """The first folder on the way to `path` that `user` cannot enter, or None."""
    pw = pwd.getpwnam(user)
    groups = {g.gr_gid for g in grp.getgrall() if user in g.gr_mem} | {pw.pw_gid}
    for folder in [*reversed(path.resolve().parents), path.resolve()]:
        st = folder.stat()
        if st.st_uid == pw.pw_uid:
            bit = stat.S_IXUSR
        elif st.st_gid in groups:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if not st.st_mode & bit:
            return folder
    return None


def environment_paths() -> list[Path]:
    """What each user's server runs: the venv's jupyterhub-singleuser, the course's code, and the Python the
    venv was made from (its python links there, and its standard library lies there: pyenv's is under /root)."""
    paths = [VENV / "bin" / "jupyterhub-singleuser", REPO / "autograder", (VENV / "bin" / "python").resolve()]
    if VENV.resolve() == Path(sys.prefix).resolve():
        paths.append(Path(sys.base_prefix))
    return paths


def check_environment(user: str) -> None:
    """The course's environment must run as `user`: the spawner starts VENV/bin/jupyterhub-singleuser as them."""
    for target in environment_paths():
        where = blocked_path(user, target)
        if where is not None:
            raise SystemExit(f"{user} cannot reach {target}: {where} is not open to them (mode "
                             f"{stat.S_IMODE(where.stat().st_mode):04o}). Install the course where every user "
                             "can read and run it (for example /opt/fxcourse), from a Python they can run too "
                             "(for example /usr/bin/python3, not pyenv's under /root), see docs/jupyterhub.md")
    # autograder first: importing it spares the process jsonschema's optional grammar (autograder/__init__.py)
    r = as_user(user, str(VENV / "bin" / "python"), "-c", "import autograder, jupyterhub, nbgrader, fxplayground",
                cwd="/")
    if r.returncode != 0:
        raise SystemExit(f"{user} cannot import the course's packages with {VENV / 'bin' / 'python'}:\n{r.stderr}")


# ------------------------------------------------------------------------------- course and exchange

def make_exchange(path: Path) -> Path:
    """nbgrader's exchange: every user may create entries, only their owner may remove them (1777)."""
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o1777)
    return path


def make_course(instructor: str, root: Path, assignments: list[str]) -> Path:
    """The instructor's course folder (theirs alone, mode 700): solutions/ of `assignments`, generated, and the
    instructor's side of the checks (instructor/, which the hub's venv never holds)."""
    root.mkdir(parents=True, exist_ok=True)
    if not (root / "instructor").is_dir():
        shutil.copytree(REPO / "instructor", root / "instructor", ignore=shutil.ignore_patterns("__pycache__"))
    for name in assignments:
        if not (root / "solutions" / name).is_dir():
            shutil.copytree(REPO / "solutions" / name, root / "solutions" / name,
                            ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    pw = pwd.getpwnam(instructor)
    for dirpath, dirnames, filenames in os.walk(root):
        for entry in [dirpath, *(os.path.join(dirpath, f) for f in filenames)]:
            os.chown(entry, pw.pw_uid, pw.pw_gid)
    os.chmod(root, 0o700)
    for name in assignments:
        r = as_user(instructor, str(VENV / "bin" / "fxcourse"), "generate", name, "--course", str(root), cwd=root)
        if r.returncode != 0:
            raise SystemExit(f"fxcourse generate {name} failed:\n{r.stdout}{r.stderr}")
    return root


def hub_environment(course_root: Path, exchange: Path, state: Path, port: int, instructors: str,
                    students: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))}
    env.update({"FXCOURSE_COURSE_ROOT": str(course_root), "FXCOURSE_EXCHANGE": str(exchange),
                "FXCOURSE_HUB_STATE": str(state), "FXCOURSE_HUB_IP": "127.0.0.1", "FXCOURSE_HUB_PORT": str(port),
                "FXCOURSE_INSTRUCTORS": instructors, "FXCOURSE_STUDENTS": students,
                "FXCOURSE_VENV": str(VENV), "PATH": f"{VENV / 'bin'}:{env.get('PATH', os.defpath)}"})
    return env


def hub_command() -> list[str]:
    return [str(VENV / "bin" / "jupyterhub"), "-f", str(CONFIG)]


# ------------------------------------------------------------------------------------------------ demo

def _record() -> Path:
    return DEMO_DIR / "demo-users.json"


def _make_demo_users() -> dict:
    if _record().is_file():
        raise SystemExit(f"demo users exist already ({_record()}): start without FXCOURSE_DEMO_USERS, or remove "
                         "them first with --remove-users")
    DEMO_DIR.mkdir(parents=True, exist_ok=True)
    os.chmod(DEMO_DIR, 0o755)
    state = {"groups": ["fxdemo-instructors", "fxdemo-students"], "users": {}}
    _record().write_text(json.dumps(state))
    os.chmod(_record(), 0o600)
    for group in state["groups"]:
        create_group(group)
    homes = DEMO_DIR / "home"
    for name, group in (("fxdemo-teacher", "fxdemo-instructors"), ("fxdemo-ada", "fxdemo-students"),
                        ("fxdemo-bob", "fxdemo-students")):
        state["users"][name] = create_user(name, group, homes / name)
        _record().write_text(json.dumps(state))
    return state


def remove_demo() -> None:
    if not _record().is_file():
        print(f"no demo users recorded in {_record()}: nothing to remove")
        return
    pid_file = DEMO_DIR / "hub-state" / "jupyterhub.pid"
    if pid_file.is_file() and Path(f"/proc/{pid_file.read_text().strip()}").exists():
        raise SystemExit(f"the demo hub is running (pid {pid_file.read_text().strip()}): stop it first (Ctrl-C)")
    state = json.loads(_record().read_text())
    for name in state["users"]:
        remove_user(name)
        print(f"removed user {name}")
    for group in state["groups"]:
        remove_group(group)
    shutil.rmtree(DEMO_DIR, ignore_errors=True)
    print(f"removed {DEMO_DIR}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="A local demo hub of the course on 127.0.0.1.")
    p.add_argument("--remove-users", action="store_true", help="remove the demo users, groups and folder; exit")
    p.add_argument("--port", type=int, default=8000)
    args = p.parse_args(argv)
    if os.geteuid() != 0:
        raise SystemExit("run as root: the hub starts each user's JupyterLab as that Unix user")
    if args.remove_users:
        remove_demo()
        return 0
    if os.environ.get("FXCOURSE_DEMO_USERS") == "1":
        state = _make_demo_users()
    elif _record().is_file():
        state = json.loads(_record().read_text())
    else:
        raise SystemExit("no demo users: set FXCOURSE_DEMO_USERS=1 to create them (an instructor and two students "
                         "with random passwords), or run jupyterhub with jupyterhub_config.py for real users")
    instructor = next(u for u in state["users"] if "teacher" in u)
    for user in state["users"]:
        check_environment(user)
    course = make_course(instructor, DEMO_DIR / "course", ["ex01_tracing"])
    exchange = make_exchange(DEMO_DIR / "exchange")
    hub_state = DEMO_DIR / "hub-state"
    print("demo users (Unix accounts; log in at the hub's page):")
    for user, password in state["users"].items():
        print(f"  {user:<16} {password}")
    print(f"the instructor's course folder: {course}; release ex01 with\n"
          f"  runuser -u {instructor} -- {VENV / 'bin' / 'fxcourse'} release ex01_tracing --course {course} "
          f"--exchange {exchange}")
    print(f"hub: http://127.0.0.1:{args.port}/  (Ctrl-C stops it; --remove-users removes the demo users)",
          flush=True)
    env = hub_environment(course, exchange, hub_state, args.port, *state["groups"])
    try:
        return subprocess.call(hub_command(), env=env, cwd=DEMO_DIR)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
