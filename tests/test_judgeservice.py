"""The judge service (autograder/grader/ops/judgeservice.py) and its clients, on loopback.

The service runs in a thread of this process; its judges are the grader's judge processes, as on the hub. The
clients run where the judge side cannot be reached: keyring.judging (as framework.get_check and the check
packages use it) raises KeyMissing, as on a student's install. The hub's token check is a stand-in here (a real
hub needs its proxy and Unix users: tests/test_hub.py starts one and checks JupyterHub's HubAuth there); every
other part is the service's own.
"""
from __future__ import annotations

import http.client
import io
import json
import pickle
import threading
from pathlib import Path

import nbformat
import pytest
import torch

import autograder.checks.framework as framework
from autograder.checks import keyring, remote, run_check
from autograder.checks.framework import CheckFailed, get_check, run_cases
from autograder.grader.engine import grading
from autograder.grader.engine.judgeclient import JudgeUnavailable, with_service
from autograder.checks.evidence import EvidenceLimits
from autograder.grader.engine.judgeprotocol import MAX_BODY, MAX_HEADER, Refused
from autograder.grader.ops.judgeservice import make_server
from autograder.course.notebook import grade_id
from autograder.course.root import Course
from autograder.inline import check as inline_check
from autograder.learner.check import check as fxcourse_check
from conftest import EX01_RIGHT, ROOT

A = "ex01_tracing"
WRONG = {**EX01_RIGHT, "count_nodes": "def count_nodes(gm, op=None):\n    return len(gm.graph.nodes)\n"}
TOKEN = "token-of-ada"


def stand_in(token: str) -> str:
    """The hub's token check (judgeservice.hub_authenticator), standing in: one known student."""
    if token == TOKEN:
        return "ada"
    raise Refused("the hub does not know this token", 403)


@pytest.fixture(scope="module")
def server():
    server = make_server("127.0.0.1", 0, stand_in, judges=1)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    server.judges.stop()


@pytest.fixture
def service(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def namespace(answers: dict[str, str]) -> dict:
    ns: dict = {}
    exec("import torch", ns)  # the notebook's setup cell
    for source in answers.values():
        exec(source, ns)
    return ns


def _no_judge_side(assignment: str):
    raise keyring.KeyMissing(f"the instructor's side of {assignment} (its judges and references) is not installed "
                             "here")


@pytest.fixture
def student(service, monkeypatch):
    """This process as a student's server on the hub: no judge side, the service and a token named."""
    monkeypatch.setattr(framework, "judging_side", _no_judge_side)
    monkeypatch.setattr(keyring, "judging", _no_judge_side)
    monkeypatch.setenv(remote.URL_ENV, service)
    monkeypatch.setenv(remote.TOKEN_ENV, TOKEN)
    with pytest.raises(keyring.KeyMissing):
        get_check(A, "count_nodes")


def local_verdicts(answers: dict[str, str]) -> dict:
    """What this install's judge side says of each function: every case, the first failure, run_check's words."""
    ns, out = namespace(answers), {}
    for function in ("node_summary", "count_nodes", "outputs_match"):
        check = get_check(A, function)
        try:
            said = str(framework.run_check(A, function, ns[function]))
        except CheckFailed as exc:
            said = str(exc)
        out[function] = (run_cases(check, ns[function], check.cases(False), stop_at_first=False),
                         run_cases(check, ns[function], check.cases(False)), said,
                         [vars(r) for r in inline_check(function, assignment=A, namespace=ns).rows])
    return out


def served_verdicts(answers: dict[str, str]) -> dict:
    ns, out = namespace(answers), {}
    for function in ("node_summary", "count_nodes", "outputs_match"):
        try:
            said = str(run_check(A, function, ns[function]))
        except CheckFailed as exc:
            said = str(exc)
        out[function] = (remote.run_cases(A, function, ns[function], stop_at_first=False),
                         remote.run_cases(A, function, ns[function]), said,
                         [vars(r) for r in inline_check(function, assignment=A, namespace=ns).rows])
    return out


def _without_seconds(verdicts: dict) -> dict:
    return {f: (every, first, said, [{**row, "seconds": 0} for row in rows])
            for f, (every, first, said, rows) in verdicts.items()}


@pytest.mark.parametrize("answers", [EX01_RIGHT, WRONG], ids=["right", "wrong"])
def test_visible_verdicts_through_the_service_are_the_local_ones(answers, service, monkeypatch, capsys):
    local = local_verdicts(answers)
    monkeypatch.setenv(remote.URL_ENV, service)
    monkeypatch.setenv(remote.TOKEN_ENV, TOKEN)
    monkeypatch.setattr(framework, "judging_side", _no_judge_side)
    monkeypatch.setattr(keyring, "judging", _no_judge_side)
    capsys.readouterr()
    served = served_verdicts(answers)
    assert _without_seconds(served) == _without_seconds(local)
    log = capsys.readouterr().err
    assert f"ada: {A}.count_nodes cases [0, 1, 2, 3, 4, 5]:" in log, log  # the service judged them
    if answers is WRONG:
        every, first, said, _ = served["count_nodes"]
        assert [r.passed for r in first] == [True, False] and "counted 5 nodes, expected 2" in said
        assert sum(r.passed for r in every) < len(every)
    else:
        assert all(r.passed for f in served.values() for r in f[0])
    assert "def count_nodes" not in log and "len(gm.graph.nodes)" not in log  # nothing of the code is logged


def _raw(service: str, body: bytes, token: str | None = TOKEN, length: int | None = None) -> tuple[int, str]:
    host, port = service.rsplit("/", 1)[-1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    conn.putrequest("POST", "/judge")
    if token is not None:
        conn.putheader("Authorization", f"token {token}")
    conn.putheader("Content-Length", str(len(body) if length is None else length))
    conn.endheaders()
    if length is None:
        conn.send(body)
    response = conn.getresponse()
    status, text = response.status, json.loads(response.read())["error"]
    conn.close()
    return status, text


def _cases(cases: list[int], evidence: list | None = None, **extra) -> bytes:
    header = {"op": "cases", "assignment": A, "function": "count_nodes", "cases": cases, **extra}
    return json.dumps(header).encode() + b"\n" + remote.evidence_archive([evidence if evidence is not None
                                                                            else [5] * len(cases)])


def test_the_service_refuses_what_is_not_visible_or_malformed_and_goes_on(service, student):
    refused = [
        (_cases([0], hidden=True), 400, "hidden cases are judged only by the instructor's grader"),
        (_cases([0], salt=123), 400, "a salt builds a hidden case"),
        (_cases([6]), 400, "case 6 of count_nodes is not a visible case: count_nodes has 6 visible cases (0 to 5)"),
        (_cases([0], verdict="passed"), 400, "unknown field 'verdict'; expected op, assignment, function, cases"),
        (_cases([0], function="steal_the_key"), 400, "assignment 'ex01_tracing' has no check for 'steal_the_key'"),
        (json.dumps({"op": "tests", "tid": "t", "start": 0, "calls": [{"kind": "check", "var": "count_nodes",
                     "assignment": A, "function": "count_nodes", "hidden": True}], "plan": []}).encode() + b"\n",
         400, "calls[0]: hidden cases are judged only by the instructor's grader"),
        (json.dumps({"op": "tests", "tid": "t", "start": 0, "calls": [{"kind": "quiz", "var": "q1", "key": "B"}],
                     "plan": [{"kind": "quiz", "var": "q1", "key": "B"}]}).encode() + b"\n",
         400, "plan[0]: quiz keys stay on the instructor's side"),
        (b"no header line at all", 400, "the body must start with a JSON header line"),
        (b"{not json\n", 400, "the header line is not JSON"),
        (_cases([0]).split(b"\n")[0] + b"\n" + b"not an archive", 400, "the evidence file is not a torch.save archive"),
        (_cases([0]).split(b"\n")[0] + b"\n" + pickle.dumps({"calls": []}), 400, "not a torch.save archive"),
        (_cases([0], [torch.zeros(17 * 2**20, dtype=torch.uint8)]), 400,
         "its evidence has a tensor of 17825792 elements, over the limit of 16777216"),
    ]
    for body, status, message in refused:
        got = _raw(service, body)
        assert got[0] == status and message in got[1], (body[:120], got)
    assert _raw(service, _cases([0]), token="forged") == (403, "the hub does not know this token")
    status, text = _raw(service, _cases([0]), token=None)
    assert status == 401 and "no hub token: send 'Authorization: token ...'" in text
    status, text = _raw(service, b"", length=MAX_BODY + 1)
    assert status == 413 and f"over the limit of {MAX_BODY}" in text
    # the cap is the evidence archive's own, plus the header line; the client refuses beyond it before sending
    assert MAX_BODY == EvidenceLimits.bytes_on_disk + MAX_HEADER and remote.MAX_BODY == EvidenceLimits.bytes_on_disk
    # a hostile pickle never reaches the judge: torch.load(weights_only=True) refuses it in the judge process
    buf = io.BytesIO()
    torch.save({"calls": [{"evidence": [Path("/")]}], "cell_errors": [], "tampered": [], "complete": True}, buf)
    status, text = _raw(service, _cases([0]).split(b"\n")[0] + b"\n" + buf.getvalue())
    assert status == 400 and "the grader refused the evidence" in text, text
    # after all that, a student's honest request is judged
    ns = namespace(EX01_RIGHT)
    assert all(r.passed for r in remote.run_cases(A, "count_nodes", ns["count_nodes"]))
    with pytest.raises(remote.ServiceError, match=r"refused the request \(400\): .*hidden cases are judged only"):
        remote.post({"op": "cases", "assignment": A, "function": "count_nodes", "cases": [0], "hidden": True},
                    remote.evidence_archive([[5]]))


class _NoJudgeSideHere(grading._Judge):
    """The grader's judge process on a student's install: every test cell it judges is answered KeyMissing (the
    words its _judge_server answers with when get_check raises it)."""

    def _ask(self, header, payload, limits, again=True):
        if header.get("op") == "judge":
            return {"error": f"KeyMissing: the instructor's side of {A} (its judges and references) is not "
                             "installed here"}, ""
        return super()._ask(header, payload, limits, again)


@pytest.fixture
def wrong_notebook(tmp_path) -> Path:
    nb = nbformat.read(str(ROOT / "exercises" / A / f"{A}.ipynb"), as_version=4)
    for cell in nb.cells:
        if grade_id(cell) in WRONG:
            cell.source = WRONG[grade_id(cell)]
    path = tmp_path / A / f"{A}.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, str(path))
    return path


def test_fxcourse_check_judges_through_the_service(service, wrong_notebook, monkeypatch, capsys):
    local = grading.check_notebook(wrong_notebook, Course(ROOT), visible_only=True)
    monkeypatch.setattr(grading, "_Judge", _NoJudgeSideHere)
    monkeypatch.setattr(grading._JUDGES, "judge", None, raising=False)  # this thread's judge: made anew
    try:
        monkeypatch.setenv(remote.URL_ENV, service)
        monkeypatch.setenv(remote.TOKEN_ENV, TOKEN)
        capsys.readouterr()
        served = grading.check_notebook(wrong_notebook, Course(ROOT), visible_only=True)
        log = capsys.readouterr().err
        assert served.to_json() == local.to_json() and not served.full_tests
        count = next(t for t in served.tests if t.id == "test_count_nodes")
        assert not count.passed and "counted 5 nodes, expected 2" in count.message
        assert "ada: test test_count_nodes (1 calls): failed" in log and "ada: test test_quiz_q1" in log, log

        # neither the judge side nor a service: `fxcourse check` says what is missing and exits 2
        monkeypatch.delenv(remote.URL_ENV)
        assert fxcourse_check(str(wrong_notebook), course=str(ROOT), visible_only=True) == 2
        err = capsys.readouterr().err
        assert f"the instructor's side of {A} (its judges and references) cannot be reached here, and no " \
               f"judge service is named ({remote.URL_ENV} not set)" in err, err
        assert "Traceback" not in err
    finally:
        judge = getattr(grading._JUDGES, "judge", None)
        if judge is not None:
            judge.stop()


def test_without_the_judge_side_or_a_service_a_test_cell_fails_and_says_why(monkeypatch):
    monkeypatch.setattr(framework, "judging_side", _no_judge_side)
    monkeypatch.setattr(keyring, "judging", _no_judge_side)
    monkeypatch.delenv(remote.URL_ENV, raising=False)
    ns = namespace(EX01_RIGHT)
    with pytest.raises(CheckFailed) as failed:
        run_check(A, "count_nodes", ns["count_nodes"])
    assert f"count_nodes cannot be checked here: the instructor's side of {A}" in failed.value.message
    assert remote.URL_ENV in failed.value.message and remote.URL_ENV in failed.value.hint
    row, = inline_check("count_nodes", assignment=A, namespace=ns).rows
    assert not row.passed and remote.URL_ENV in row.message
    with pytest.raises(JudgeUnavailable, match=f"no judge service is named \\({remote.URL_ENV}"):
        with_service(_NoJudgeSideHere)()._ask({"op": "judge", "tid": "t", "calls": [
            {"kind": "check", "var": "count_nodes", "assignment": A, "function": "count_nodes"}], "start": 0},
            b"", grading.Limits.from_env())
    # with a service named, hidden cases are still not asked for
    monkeypatch.setenv(remote.URL_ENV, "http://127.0.0.1:9")
    monkeypatch.setenv(remote.TOKEN_ENV, TOKEN)
    with pytest.raises(CheckFailed, match="hidden cases are judged only by the instructor's grader"):
        run_check(A, "count_nodes", ns["count_nodes"], hidden=True)
    with pytest.raises(CheckFailed, match=r"could not be checked: the judge service at http://127.0.0.1:9/judge "
                                          r"could not be asked"):
        run_check(A, "count_nodes", ns["count_nodes"])


def test_the_hub_s_answer_decides_who_is_judged(monkeypatch):
    """judgeservice.hub_authenticator on the hub's answers (JupyterHub's HubAuth asked for the token's owner, as
    test_hub.py does for real): only a user whose token holds the service's access scope is judged for."""
    import jupyterhub.services.auth as hub_auth

    from autograder.grader.ops.judgeservice import hub_authenticator

    models = {
        "ada's": {"kind": "user", "name": "ada", "scopes": ["access:services!service=judge", "read:users:name!user=ada"]},
        "eve's": {"kind": "user", "name": "eve", "scopes": ["access:services!service=formgrader"]},
        "a service's": {"kind": "service", "name": "cron", "scopes": ["access:services!service=judge"]},
        "unknown": None,
    }

    class HubAuth:
        access_scopes = {"access:services!service=judge"}  # what the hub gives the service (JUPYTERHUB_SERVICE_NAME)

        def __init__(self, **_):
            pass

        def user_for_token(self, token, sync=True):
            if token == "hub down":
                raise ConnectionError("the hub did not answer")
            return models[token]

    monkeypatch.setattr(hub_auth, "HubAuth", HubAuth)
    authenticate = hub_authenticator()
    assert authenticate("ada's") == "ada"
    for token, status, words in (("eve's", 403, "eve may not use the judge service"),
                                 ("a service's", 403, "cron may not use the judge service"),
                                 ("unknown", 403, "the hub does not know this token"),
                                 ("hub down", 502, "the hub could not check the token")):
        with pytest.raises(Refused, match=words) as refused:
            authenticate(token)
        assert refused.value.status == status
