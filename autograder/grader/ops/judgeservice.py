"""The judge service: judges a student's evidence of the visible cases for them, on the instructor's side.

On a student's install the exercises' judge side (judges, references, hidden cases) cannot be reached
(autograder.checks.keyring.KeyMissing); the hub runs this service as the instructor, in the course folder, and
the student's process sends it what it ran (autograder.checks.remote): the evidence of the visible cases, in the
worker's format (autograder.checks.evidence.load_evidence reads it: plain data, never pickle). The service builds
the cases itself from the assignment, the function and the case index, judges in the grader's judge process under
its limits (grading._Judge) and answers the verdicts. What a student can learn from it: the verdicts of the
visible cases, which their own copy shows anyway.

One request: POST /judge, its body a JSON header line, then the evidence archive. Two kinds (`op`):

* "cases": {"op", "assignment", "function", "cases": [visible case indices]}; the evidence holds one call whose
  evidence lists those cases in order. Answer: {"results": [{"label", "passed", "message", "hint"}, ...]}.
* "tests": {"op", "tid", "calls": [calls of one test cell], "start", "plan": [every call of the evidence],
  "last_step"}, a call being {"kind": "check", "var", "assignment", "function"} or {"kind": "quiz", "var",
  "choices", "section"}; the evidence is the worker's, of the whole notebook. Answer: {"passed", "message",
  "hint", "cases"}, as the grader's judge answers a test cell (`fxcourse check`).

Refused with a 4xx and a message naming what was wrong: no or a bad hub token (401/403), a body over the cap (413),
a header that is not this shape, a hidden case, a salt, a quiz key or a secret (400). Nothing of a request's code
or evidence is logged: one line per request, who asked, what, and how it ended.
"""
from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from autograder.grader.engine.judgeprotocol import MAX_BODY, Refused, parse_header, split_body

__all__ = ["serve", "make_server", "hub_authenticator", "Judges"]

READ_TIMEOUT = 30  # seconds a client may take to send its request


# ------------------------------------------------------------------------------------------------ judging

class Judges:
    """A few of the grader's judge processes (grading._Judge), each taking one request at a time."""

    def __init__(self, n: int) -> None:
        from autograder.grader.engine.grading import _Judge
        from autograder.grader.jail.sandbox import Limits

        self.limits = Limits.from_env()
        self.free: queue.Queue = queue.Queue()
        for _ in range(max(1, n)):
            self.free.put(_Judge())

    def judge(self, req: dict, evidence: bytes) -> dict:
        from autograder.grader.jail.sandbox import WorkerOutcome

        try:
            judge = self.free.get(timeout=120)
        except queue.Empty:
            raise Refused("the judge service is busy: try again in a minute", 503) from None
        try:
            outcome = WorkerOutcome(None, "ok", evidence_bytes=evidence)
            expected = 1 if req["op"] == "cases" else len(req["plan"])
            summary = judge.load(outcome, expected, self.limits)
            if not summary.get("ok"):
                raise Refused(str(summary.get("error", "the evidence could not be loaded")))
            if req["op"] == "cases":
                answer, why = judge._ask({"op": "cases", "assignment": req["assignment"], "function": req["function"],
                                          "cases": req["cases"]}, b"", self.limits)
                if answer is None:
                    raise Refused(f"judging stopped: {why}", 422)
                if "refused" in answer:
                    raise Refused(str(answer["refused"]))
                if "error" in answer:
                    raise Refused(f"the judge could not judge this evidence: {answer['error']}", 422)
                return {"results": answer["results"]}
            passed, message, hint, cases = judge.judge(req["tid"], req["calls"], req["start"], outcome,
                                                       len(req["plan"]), self.limits, b"", req["plan"])
            return {"passed": passed, "message": message, "hint": hint, "cases": cases}
        finally:
            self.free.put(judge)

    def stop(self) -> None:
        """End the judge processes (a later request starts them again)."""
        for judge in list(self.free.queue):
            judge.stop()


# ---------------------------------------------------------------------------------------------- the server

def hub_authenticator() -> Callable[[str], str]:
    """token -> the hub user's name, for a user whose token holds this service's access scope (the hub's role
    for the students' and instructors' groups); Refused(401/403) otherwise. JupyterHub's HubAuth, as the
    service's environment configures it (JUPYTERHUB_API_TOKEN, JUPYTERHUB_API_URL, JUPYTERHUB_SERVICE_NAME)."""
    from jupyterhub.services.auth import HubAuth, check_scopes

    auth = HubAuth(cache_max_age=60)

    def authenticate(token: str) -> str:
        try:
            model = auth.user_for_token(token, sync=True)
        except Exception as exc:
            raise Refused(f"the hub could not check the token ({type(exc).__name__}): try again", 502) from None
        if not model or not model.get("name"):
            raise Refused("the hub does not know this token: send the token of your server "
                          "(JUPYTERHUB_API_TOKEN) as 'Authorization: token ...'", 403)
        if model.get("kind", "user") != "user" or not check_scopes(auth.access_scopes, set(model.get("scopes", []))):
            raise Refused(f"{model['name']} may not use the judge service: it is for the course's students and "
                          "instructors", 403)
        return str(model["name"])

    return authenticate


def _log(line: str) -> None:
    print(f"[judge service {time.strftime('%H:%M:%S')}] {line}", file=sys.stderr, flush=True)


def _summary(req: dict, answer: dict) -> str:
    """What the log says of a judged request: what was asked and how many cases passed, no message."""
    if req["op"] == "cases":
        passed = sum(bool(r["passed"]) for r in answer["results"])
        return f"{req['assignment']}.{req['function']} cases {req['cases'][:20]}: {passed} of {len(answer['results'])} passed"
    return f"test {req['tid']} ({len(req['calls'])} calls): {'passed' if answer['passed'] else 'failed'}"


def make_server(host: str, port: int, authenticate: Callable[[str], str], judges: int = 2) -> ThreadingHTTPServer:
    """The service on (host, port): POST /judge, GET / (a health line). `authenticate(token) -> user name`
    raises Refused for a token that may not use it."""
    pool = Judges(judges)

    class Handler(BaseHTTPRequestHandler):
        timeout = READ_TIMEOUT
        server_version = "fxcourse-judge"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (http.server's signature)
            pass  # one line per request, by _log, and never a request's content

        def _answer(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            self._answer(200, {"service": "fxcourse judge", "judge": "POST /judge"})

        def do_POST(self) -> None:  # noqa: N802
            user, req = "-", None
            try:
                if self.path.rstrip("/").rsplit("/", 1)[-1] != "judge":
                    raise Refused(f"no such endpoint {self.path[:80]!r}: POST /judge", 404)
                try:
                    size = int(self.headers.get("Content-Length", ""))
                except ValueError:
                    raise Refused("the request has no Content-Length: send the body's size", 411) from None
                if size < 0 or size > MAX_BODY:
                    raise Refused(f"the request is {size} bytes, over the limit of {MAX_BODY} (the evidence of "
                                  "the visible cases is far smaller)", 413)
                body = self.rfile.read(size)  # read before any answer: the client then always reads the answer
                if len(body) != size:
                    raise Refused(f"the request ended after {len(body)} of the {size} bytes announced")
                match = self.headers.get("Authorization", "").split(None, 1)
                if len(match) != 2 or match[0].lower() not in ("token", "bearer"):
                    raise Refused("no hub token: send 'Authorization: token ...' with your server's "
                                  "JUPYTERHUB_API_TOKEN", 401)
                user = authenticate(match[1].strip())
                header, evidence = split_body(body)
                req = parse_header(header)
                answer = pool.judge(req, evidence)
                _log(f"{user}: {_summary(req, answer)}")
                self._answer(200, answer)
            except Refused as exc:
                what = f"{req['op']} request" if req else "request"
                _log(f"{user}: {what} refused ({exc.status})" + (f": {str(exc)[:80]}" if exc.status >= 500 else ""))
                self._answer(exc.status, {"error": str(exc)})
            except Exception as exc:  # a bug here: this request fails, the service goes on
                _log(f"{user}: request failed ({type(exc).__name__})")
                self._answer(500, {"error": f"the judge service failed on this request ({type(exc).__name__})"})

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    server.judges = pool  # type: ignore[attr-defined]
    return server


def serve(port: int | None = None, host: str = "127.0.0.1", judges: int = 2, course: str | None = None) -> int:
    """`fxcourse judge-service`: serve until stopped, as the hub starts it (its port from JUPYTERHUB_SERVICE_URL),
    in the course folder (`course`, else the current one)."""
    from urllib.parse import urlparse

    if course:
        os.chdir(course)

    if port is None:
        url = urlparse(os.environ.get("JUPYTERHUB_SERVICE_URL", ""))
        if not url.port:
            raise SystemExit("fxcourse judge-service: give --port, or run it as a hub service "
                             "(JUPYTERHUB_SERVICE_URL names its address)")
        host, port = url.hostname or host, url.port
    from autograder.grader.jail import forkserver

    forkserver.prestart()  # the judge processes' imports, done before the first student asks
    server = make_server(host, port, hub_authenticator(), judges)
    pool = server.judges  # type: ignore[attr-defined]
    _log(f"judging on {host}:{port} with {max(1, judges)} judge process(es), as uid {os.getuid()} in {os.getcwd()}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        thread.join()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        pool.stop()
    return 0
