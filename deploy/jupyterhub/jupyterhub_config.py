"""JupyterHub configuration for one fxcourse class.

- Instructor and students are Unix users of this machine: the hub logs them in with PAM (JupyterHub's default
  PAMAuthenticator) and starts each one's JupyterLab as that user (LocalProcessSpawner), so the filesystem
  keeps their work apart.
- Everyone shares one nbgrader exchange directory; the students' JupyterLab has nbgrader's Assignments tab and
  Validate button, not the instructor's tools.
- nbgrader's formgrader runs as a hub service, as the instructor's Unix user on the course folder, and only
  members of the instructors' Unix group may open it (a JupyterHub role on a group).
- The judge service (`fxcourse judge-service`) runs as the instructor too, in the course folder: the students'
  test cells, check() and Validate send it the evidence of their visible cases (FXCOURSE_JUDGE_URL, set for
  every user's server) with their server's hub token, and it answers the verdicts; the judges, references and
  hidden cases stay on the instructor's side. Only the students' and instructors' groups may use it (a role).

Everything is set from the environment (defaults in brackets); `demo.py` beside this file sets it for a demo:

  FXCOURSE_COURSE_ROOT   the instructor's course folder, holding solutions/ (required)
  FXCOURSE_INSTRUCTOR    the Unix user who owns it [the folder's owner]
  FXCOURSE_INSTRUCTORS   Unix group of the instructors [fxcourse-instructors]
  FXCOURSE_STUDENTS      Unix group of the students [fxcourse-students]
  FXCOURSE_EXCHANGE      nbgrader exchange directory, mode 1777 [/srv/nbgrader/exchange]
  FXCOURSE_HUB_IP, FXCOURSE_HUB_PORT   where the hub listens [127.0.0.1, 8000]
  FXCOURSE_HUB_STATE     folder for the hub's database, cookie secret and proxy token [./hub-state]
  FXCOURSE_VENV          the environment with jupyterhub, nbgrader and fxcourse [the one running the hub]

Start it as root (the spawner and the service switch to each user):  jupyterhub -f deploy/jupyterhub/jupyterhub_config.py
"""
import grp
import os
import pwd
import socket
import sys
from pathlib import Path

c = get_config()  # noqa: F821  (provided by JupyterHub when it loads this file)

HERE = Path(__file__).resolve().parent
VENV = Path(os.environ.get("FXCOURSE_VENV", sys.prefix))
COURSE_ROOT = Path(os.environ["FXCOURSE_COURSE_ROOT"]).resolve() if os.environ.get("FXCOURSE_COURSE_ROOT") else None
if COURSE_ROOT is None or not (COURSE_ROOT / "solutions").is_dir():
    raise SystemExit(f"FXCOURSE_COURSE_ROOT must name the instructor's course folder (with solutions/), got "
                     f"{os.environ.get('FXCOURSE_COURSE_ROOT')!r}")
INSTRUCTOR = os.environ.get("FXCOURSE_INSTRUCTOR") or pwd.getpwuid(COURSE_ROOT.stat().st_uid).pw_name
INSTRUCTORS = os.environ.get("FXCOURSE_INSTRUCTORS", "fxcourse-instructors")
STUDENTS = os.environ.get("FXCOURSE_STUDENTS", "fxcourse-students")
EXCHANGE = Path(os.environ.get("FXCOURSE_EXCHANGE", "/srv/nbgrader/exchange"))
STATE = Path(os.environ.get("FXCOURSE_HUB_STATE", "hub-state")).resolve()
SERVICE = "formgrader"  # the formgrader's address: /services/formgrader/formgrader
JUDGE = "judge"  # the judge service (autograder/grader/ops/judgeservice.py)


def _members(group: str) -> list[str]:
    """Unix members of a group: its member list and the users whose primary group it is."""
    try:
        g = grp.getgrnam(group)
    except KeyError:
        raise SystemExit(f"Unix group {group!r} does not exist: create it and add the course's users to it")
    return sorted(set(g.gr_mem) | {u.pw_name for u in pwd.getpwall() if u.pw_gid == g.gr_gid})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


STATE.mkdir(mode=0o700, parents=True, exist_ok=True)
os.chmod(STATE, 0o700)

# -- the hub and its proxy (configurable-http-proxy, started by the hub)
c.JupyterHub.ip = os.environ.get("FXCOURSE_HUB_IP", "127.0.0.1")
c.JupyterHub.port = int(os.environ.get("FXCOURSE_HUB_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = _free_port()
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{_free_port()}"
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
c.JupyterHub.cleanup_servers = True

# -- who may log in: the course's two Unix groups, through PAM
c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_groups = {INSTRUCTORS, STUDENTS}
c.PAMAuthenticator.open_sessions = False  # no systemd-logind session per login
instructors = _members(INSTRUCTORS)
if INSTRUCTOR not in instructors:
    raise SystemExit(f"{INSTRUCTOR}, who owns {COURSE_ROOT}, is not in the Unix group {INSTRUCTORS}")

# -- each user's JupyterLab: the course's environment, started as that user in their home
SINGLEUSER_ENV = {
    "PATH": f"{VENV / 'bin'}:/usr/local/bin:/usr/bin:/bin",
    # nbgrader's student configuration (course id, exchange) and the labs' settings
    "JUPYTER_CONFIG_PATH": str(HERE / "singleuser"),
    "FXCOURSE_EXCHANGE": str(EXCHANGE),
    "MPLBACKEND": "module://matplotlib_inline.backend_inline",
}
STUDENT_NAMES = set(_members(STUDENTS))


def _home(spawner) -> str:
    return pwd.getpwnam(spawner.user.name).pw_dir


def _config_dir(spawner) -> str:
    # students: the course's read-only Jupyter config folder (its custom.css makes Validate say that it ran the
    # visible tests only); their lab settings and workspaces stay in their home
    return str(HERE / "student") if spawner.user.name in STUDENT_NAMES else f"{_home(spawner)}/.jupyter"


judge_port = _free_port()
JUDGE_URL = f"http://127.0.0.1:{judge_port}"  # servers run on this machine: they reach the service directly

c.Spawner.cmd = [str(VENV / "bin" / "jupyterhub-singleuser")]
c.Spawner.environment = {
    **SINGLEUSER_ENV,
    "FXCOURSE_JUDGE_URL": JUDGE_URL,  # where test cells, check() and `fxcourse check` send their visible cases
    "JUPYTER_CONFIG_DIR": _config_dir,
    "JUPYTERLAB_SETTINGS_DIR": lambda spawner: f"{_home(spawner)}/.jupyter/lab/user-settings",
    "JUPYTERLAB_WORKSPACES_DIR": lambda spawner: f"{_home(spawner)}/.jupyter/lab/workspaces",
}
# each server's JUPYTERHUB_API_TOKEN (what its kernels show the judge service) may also use the judge service:
# the hub gives a token only the scopes its user holds, so only the course's two groups' tokens can (see the role)
c.Spawner.server_token_scopes = ["users:activity!user", "access:servers!server", f"access:services!service={JUDGE}"]
c.Spawner.notebook_dir = "~"
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120

# -- formgrader: a hub service running JupyterLab's server as the instructor, on the course folder
service_port = _free_port()
c.JupyterHub.services = [{
    "name": SERVICE,
    "url": f"http://127.0.0.1:{service_port}",
    "command": [str(VENV / "bin" / "jupyterhub-singleuser"), f"--port={service_port}", "--ip=127.0.0.1",
                f"--ServerApp.root_dir={COURSE_ROOT}"],
    "user": INSTRUCTOR,
    "cwd": str(COURSE_ROOT),
    "environment": {**SINGLEUSER_ENV, "JUPYTER_CONFIG_PATH": str(HERE / "formgrader"),
                    "FXCOURSE_COURSE_ROOT": str(COURSE_ROOT), "HOME": pwd.getpwnam(INSTRUCTOR).pw_dir,
                    "JUPYTERHUB_DEFAULT_URL": "/formgrader"},
    "oauth_no_confirm": True,
}, {
    # the judge service: judges the evidence of visible cases that students' servers send (docs/jupyterhub.md)
    "name": JUDGE,
    "url": JUDGE_URL,
    "command": [str(VENV / "bin" / "fxcourse"), "judge-service"],  # its port: from JUPYTERHUB_SERVICE_URL
    "user": INSTRUCTOR,
    "cwd": str(COURSE_ROOT),
    "environment": {"PATH": SINGLEUSER_ENV["PATH"], "FXCOURSE_COURSE_ROOT": str(COURSE_ROOT),
                    "HOME": pwd.getpwnam(INSTRUCTOR).pw_dir},
}]
c.JupyterHub.load_groups = {"instructors": {"users": instructors}, "students": {"users": _members(STUDENTS)}}
c.JupyterHub.load_roles = [
    # only the instructors' group may open the formgrader; students get the hub's default user role
    {"name": "formgrader-access", "groups": ["instructors"],
     "scopes": [f"access:services!service={SERVICE}", "list:services", f"read:services!service={SERVICE}"]},
    # the course's students and instructors may have their visible tests judged by the judge service
    {"name": "judge-access", "groups": ["instructors", "students"], "scopes": [f"access:services!service={JUDGE}"]},
]
