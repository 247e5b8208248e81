"""A PostgreSQL gradebook: grade, feedback, export and formgrader against a real server from Debian's
`postgresql` package (.ci/deps-postgres.sh), started by the test in a temporary folder as an unprivileged user,
on loopback, and stopped afterwards. Two graders writing at once give the scores of the SQLite path."""
from __future__ import annotations

import csv
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from test_cluster import A, _free_port, fxcourse, hand_in, kind_of, new_course

pytestmark = pytest.mark.kernel
STUDENTS = ["alice_correct", "bob_wrong", "carol_empty", "dave_right"]
REQUIRED = os.environ.get("FXCOURSE_REQUIRE_POSTGRES") == "1"


def _missing(why: str):
    if REQUIRED:
        pytest.fail(why)
    pytest.skip(why)


def _as(user: str, *cmd: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["runuser", "-u", user, "--", *cmd], capture_output=True, text=True, timeout=120, **kw)


@pytest.fixture(scope="module")
def postgres():
    """postgresql://postgres@127.0.0.1:PORT/fxcourse on a database cluster of its own; everything removed after."""
    bins = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not bins:
        _missing("PostgreSQL is not installed (.ci/deps-postgres.sh installs Debian's postgresql)")
    try:
        import psycopg  # noqa: F401  (SQLAlchemy's driver for postgresql:// URLs)
    except ImportError:
        _missing("psycopg is not installed (pip install -e .[postgres], or .ci/deps-postgres.sh)")
    if os.geteuid() != 0 or not shutil.which("runuser") or not shutil.which("useradd"):
        _missing("starting PostgreSQL as an unprivileged user needs root, useradd and runuser")
    bin_dir = bins[-1].parent
    user = f"fxpg{os.getpid()}"
    subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user], check=True,
                   capture_output=True)
    home = Path(tempfile.mkdtemp(prefix="fxcourse-pg-"))
    data, port = home / "data", _free_port()
    started = False
    try:
        uid = pwd.getpwnam(user).pw_uid
        os.chown(home, uid, -1)
        os.chmod(home, 0o700)
        r = _as(user, str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                "--no-sync", cwd=home)
        assert r.returncode == 0, r.stdout + r.stderr
        r = _as(user, str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(home / "server.log"), "-w", "-t", "60",
                "-o", f"-c listen_addresses=127.0.0.1 -p {port} -k {home} -c fsync=off", "start", cwd=home)
        assert r.returncode == 0, r.stdout + r.stderr + (home / "server.log").read_text(errors="replace")
        started = True
        r = _as(user, str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "fxcourse",
                cwd=home)
        assert r.returncode == 0, r.stdout + r.stderr
        yield f"postgresql://postgres@127.0.0.1:{port}/fxcourse"
    finally:
        if started:
            _as(user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop", cwd=home)
        shutil.rmtree(home, ignore_errors=True)
        subprocess.run(["userdel", user], capture_output=True)


def _scores(url: str) -> dict[str, dict[str, float]]:
    from nbgrader.api import Gradebook

    with Gradebook(url, "fxcourse") as gb:
        subs = gb.assignment_submissions(A)
        assert len({s.student_id for s in subs}) == len(subs), "a submission is in the gradebook twice"
        return {s.student_id: {g.name: float(g.score) for g in s.notebooks[0].grades} for s in subs}


@pytest.fixture(scope="module")
def generated(tmp_path_factory, generated_course) -> Path:
    """ex01 generated once (`fxcourse generate`) for every course of this module, which copy it."""
    return new_course(generated_course, tmp_path_factory.mktemp("generated"), [])


def course_of(generated: Path, root: Path, students: list[str]) -> Path:
    """A course at `root` as test_cluster.new_course makes it, copied from the one generated for the module."""
    shutil.copytree(generated, root)
    for student in students:
        hand_in(root, student, kind_of(student))
    return root


@pytest.fixture(scope="module")
def sqlite_scores(generated, tmp_path_factory) -> dict[str, dict[str, float]]:
    root = course_of(generated, tmp_path_factory.mktemp("sqlite") / "course", STUDENTS)
    r = fxcourse(root, "grade", A, "--jobs", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    return _scores(f"sqlite:///{root / 'gradebook.db'}")


def test_two_graders_at_once_on_postgresql_give_the_sqlite_scores(postgres, sqlite_scores, generated, tmp_path):
    first = course_of(generated, tmp_path / "first", STUDENTS)
    second = course_of(generated, tmp_path / "second", STUDENTS)
    # The second course finds the gradebook in its nbgrader configuration, the first is told with --db.
    (second / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.db_url = {postgres!r}\n")
    r = fxcourse(first, "grade", A, "--db", postgres, "--student", STUDENTS[0])  # adds ex01 to the new gradebook
    assert r.returncode == 0 and f"{STUDENTS[0]:<20} 10 / 10" in r.stdout, r.stdout + r.stderr
    graders = [subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", A, *argv, "--course", str(root)],
                                cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for root, argv in ((first, ["--db", postgres, "--jobs", "2"]),
                                  (second, ["--cluster", "local:1", "--regrade"]))]
    outs = [g.communicate(timeout=900)[0] for g in graders]
    assert [g.returncode for g in graders] == [0, 0], outs
    assert f"grading {A}: {len(STUDENTS)} submission(s)" in outs[1], outs[1]
    assert _scores(postgres) == sqlite_scores
    for root in (first, second):  # nothing went to the SQLite gradebooks `fxcourse generate` made
        assert _scores(f"sqlite:///{root / 'gradebook.db'}") == {}

    out = tmp_path / "grades.csv"
    r = fxcourse(first, "export", "--db", postgres, "--to", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {row["student_id"]: float(row["score"]) for row in csv.DictReader(out.open())}
    assert rows == {s: sum(cells.values()) for s, cells in sqlite_scores.items()}

    r = fxcourse(second, "feedback", A)
    assert r.returncode == 0, r.stdout + r.stderr
    bob = (second / "feedback" / "bob_wrong" / A / f"{A}.html").read_text()
    assert "counted 5 nodes, expected 2" in bob and "BEGIN HIDDEN TESTS" not in bob


def test_formgrader_reads_the_postgresql_gradebook(postgres, sqlite_scores, generated, tmp_path):
    """nbgrader's formgrader, in a Jupyter server on loopback, serves the scores from CourseDirectory.db_url."""
    root = course_of(generated, tmp_path / "course", STUDENTS[:2])
    (root / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.db_url = {postgres!r}\n"
                                             "c.CourseDirectory.course_id = 'fxcourse'\n")
    r = fxcourse(root, "grade", A)  # the gradebook from nbgrader_config.py; autograded/ in this course root
    assert r.returncode == 0, r.stdout + r.stderr
    port, token = _free_port(), os.urandom(8).hex()
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", f"--ServerApp.port={port}", "--ServerApp.ip=127.0.0.1",
         f"--IdentityProvider.token={token}", "--ServerApp.open_browser=False", f"--ServerApp.root_dir={root}",
         "--allow-root", "--ServerApp.jpserver_extensions={'nbgrader.server_extensions.formgrader': True}"],
        cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        env=dict(os.environ, JUPYTER_CONFIG_PATH=str(Path(__file__).resolve().parent.parent / "autograder")))
    try:
        url = f"http://127.0.0.1:{port}/formgrader/api/submissions/{A}?token={token}"
        deadline, body = time.monotonic() + 120, None
        while body is None:
            try:
                body = json.loads(urllib.request.urlopen(url, timeout=5).read())
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "the formgrader did not answer"
                time.sleep(0.5)
        got = {s["student"]: s["score"] for s in body if s.get("autograded")}
        assert set(got) >= set(STUDENTS[:2])
        assert got == {s: sum(sqlite_scores[s].values()) for s in got}
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)


def test_report_reads_a_postgresql_gradebook_as_it_reads_sqlite(postgres, tmp_path):
    """`fxcourse report --db postgresql://...` on a known class (a database of its own on the same server) gives
    the numbers the same class gives from SQLite."""
    import psycopg

    from autograder.grader.classroom.gradebook import parse_db_url, submission_scores
    from autograder.grader.report.synthetic import make_class
    from conftest import ROOT

    url = postgres.rsplit("/", 1)[0] + "/fxreport"
    with psycopg.connect(postgres, autocommit=True) as conn:
        conn.execute("CREATE DATABASE fxreport")
    on_pg = make_class(ROOT, tmp_path / "pg", [A], 12, copies=1, forced=1, url=parse_db_url(url))
    on_sqlite = make_class(ROOT, tmp_path / "sqlite", [A], 12, copies=1, forced=1)
    reports = []
    for truth, db in ((on_pg, url), (on_sqlite, on_sqlite.url)):
        r = fxcourse(truth.root, "report", "--db", db, "--out", str(truth.root / "out"))
        assert r.returncode == 0, r.stdout + r.stderr
        reports.append(json.loads((truth.root / "out" / "report.json").read_text(encoding="utf-8")))
    pg, lite = reports
    assert pg["students"] == 12 and pg["assignments"][0]["submitted"] > 0
    assert pg["assignments"][0]["scores"] == sorted(s for _, s, _ in submission_scores(parse_db_url(url), A))
    for key in ("assignments", "items", "mistakes"):
        assert pg[key] == lite[key], key
