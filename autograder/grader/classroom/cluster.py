"""Grading a class on a Dask cluster: the runner of autograder.grader.classroom.runner's one pipeline on Dask workers.

`fxcourse grade --cluster tcp://HOST:8786` sends the tasks to a running Dask scheduler; `--cluster local:N`
starts N local worker processes for the run. The task is the engine's `grade_task` and the coordinator is the
engine's (`runner.grade_class`); this module only says how a task reaches a worker and comes back:

- the coordinator ships the instructor source's and each submission's bytes with each task: workers need the
  package and torch, no shared file system;
- a worker runs `grade_task` (learner code only in its jailed subprocess, judged on the worker) and returns one
  JSON text. Nothing a learner produced crosses as a pickle: the worker reads the jail's evidence with
  `weights_only=True`, and the coordinator only parses JSON.

Faults: a worker that dies mid-task has its task run again elsewhere by the scheduler; a task the scheduler
gives up after `distributed.scheduler.allowed-failures` tries (KilledWorker: it may only have waited on a worker
another submission killed) is graded once more, alone, after the others (`only_others_fault`), and reported
"not graded" only when it stops a worker then too; a lost scheduler stops the run with a message; Ctrl-C cancels
what is left (every written submission is whole). The coordinator never lets a Ctrl-C raise inside Dask's own
code: a KeyboardInterrupt there can leave one of the client's locks held, and the next call into the client
(cancelling what is left) then waits for ever. The first Ctrl-C is noted (`deferred_interrupt`) and raised
where the coordinator next looks, between two results; a second one interrupts at once.
"""
from __future__ import annotations

import re
import time
from typing import Callable, Iterator

from autograder.grader.classroom.runner import RunnerError

__all__ = ["ClusterError", "parse_cluster", "open_cluster", "as_finished", "DaskRunner"]

LOCAL_ALLOWED_FAILURES = 2  # local:N: a submission may stop a worker twice; the third time it is given up


class ClusterError(RunnerError):
    """The cluster cannot be used (bad address, scheduler unreachable or lost); the message says what to do."""


# ------------------------------------------------------------------------------------------ arguments

_LOCAL = re.compile(r"local:(\d+)")
_ADDRESS = re.compile(r"(tcp|tls)://[^\s/:]+:\d{1,5}")


def parse_cluster(text: str) -> str:
    """`local:N` (N >= 1) or `tcp://HOST:PORT` (or tls://); a ValueError saying what was expected otherwise."""
    m = _LOCAL.fullmatch(text)
    if m and int(m.group(1)) >= 1:
        return text
    if _ADDRESS.fullmatch(text):
        return text
    raise ValueError(f"expected tcp://HOST:PORT (a running Dask scheduler) or local:N (N local worker "
                     f"processes, N >= 1), got {text!r}")


# ------------------------------------------------------------------------------------------ the cluster

def open_cluster(spec: str, *, timeout: float = 10.0):
    """(client, local cluster or None) for `local:N` or a scheduler address; ClusterError if unreachable."""
    import dask
    from distributed import Client, LocalCluster

    m = _LOCAL.fullmatch(spec)
    if m:
        with dask.config.set({"distributed.scheduler.allowed-failures": LOCAL_ALLOWED_FAILURES,
                              "distributed.worker.daemon": False}):
            cluster = LocalCluster(n_workers=int(m.group(1)), threads_per_worker=1, processes=True,
                                   host="127.0.0.1", scheduler_port=0, dashboard_address=None,
                                   silence_logs=50, memory_limit=0)
            return Client(cluster, timeout=timeout), cluster
    try:
        return Client(spec, timeout=timeout), None
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {spec} ({type(exc).__name__}: {exc}); start one "
                           "with `dask scheduler` (see docs/cluster.md) or use --cluster local:N") from None


def _why_failed(exc: BaseException, allowed: int | None) -> str:
    name = type(exc).__name__
    if name == "KilledWorker":
        tries = f"{allowed + 1} times" if allowed is not None else "repeatedly"
        return (f"its grading stopped a Dask worker {tries} (KilledWorker: the scheduler gave it up after "
                "distributed.scheduler.allowed-failures); look at this submission by hand")
    if isinstance(exc, ImportError):
        return f"{name}: {str(exc)[:200]} (every worker needs the fxcourse package and torch: docs/cluster.md)"
    return f"{name}: {str(exc)[:300]}"


def as_finished(futures: list, check: Callable[[], None], poll: float = 0.05):
    """Each of `futures` as it finishes (distributed's as_completed), with `check()` called before each one and
    between short waits; never waits inside Dask's code for more than a look at its queue.

    A finished task's result stays on its worker until it is read. When that worker dies first (another
    submission killed it), Dask computes the task again and the future is no longer finished ("lost", then
    "pending"): it is waited for again, not handed on as if it had ended."""
    from distributed import as_completed

    ac = as_completed(futures)
    while True:
        check()
        if ac.has_ready():
            for fut in ac.next_batch(block=False):
                check()
                if fut.status not in ("finished", "error", "cancelled"):
                    ac.add(fut)
                    continue
                yield fut
        elif ac.is_empty():
            return
        else:
            time.sleep(poll)


def _lost(client, written: int, total: int) -> str:
    address = getattr(client.scheduler, "address", "?")
    return (f"lost the Dask scheduler at {address}: {written} of {total} submission(s) graded and written; the "
            "others keep the grades they had. Start the scheduler again (or use --cluster local:N) and rerun the "
            "same command: it grades only what is left")


class DaskRunner:
    """The engine's tasks on Dask: `spec` (local:N or a scheduler's address), or a `client` already open."""

    def __init__(self, spec: str | None = None, client=None) -> None:
        self.spec, self.client, self._local, self.allowed = spec, client, None, None

    @property
    def where(self) -> str:
        if self.spec is None:
            return "the Dask cluster"
        return f"{self.spec[6:]} local Dask worker(s)" if self.spec.startswith("local:") else \
            f"the Dask scheduler at {self.spec}"

    def describe(self, n: int) -> str:
        return ""

    def open(self) -> None:
        import logging

        import distributed  # noqa: F401  (it sets up its loggers on import: quieten them after)

        for logger in [n for n in logging.root.manager.loggerDict if n.startswith("distributed")] + [
                "distributed", "tornado", "asyncio"]:
            logging.getLogger(logger).setLevel(logging.CRITICAL + 1)  # a lost scheduler is reported once, below
        if self.client is None:
            local_run = self.spec.startswith("local:")
            print(f"starting {self.where}" if local_run else f"connecting to {self.where}", flush=True)
            self.client, self._local = open_cluster(self.spec)
        try:
            self.allowed = self.client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.allowed_failures)
        except Exception:
            self.allowed = None

    def submit(self, fn: Callable, *args, key: str, **kwargs):
        return self.client.submit(fn, *args, **kwargs, pure=False, key=key)

    def as_finished(self, futures: list, check: Callable[[], None]) -> Iterator:
        return as_finished(futures, check)

    @staticmethod
    def status(fut) -> str:
        return fut.status

    @staticmethod
    def only_others_fault(exc: BaseException) -> bool:
        return type(exc).__name__ == "KilledWorker"

    def why_failed(self, exc: BaseException) -> str:
        return _why_failed(exc, self.allowed)

    def lost(self, written: int, total: int) -> str:
        return _lost(self.client, written, total)

    def cancel(self, futures: list) -> None:
        self.client.cancel(futures)

    def close(self) -> None:
        if self.spec is None:  # a client the caller opened stays open
            return
        for closing, seconds in ((self.client, 5), (self._local, 20)):
            if closing is not None:
                try:
                    closing.close(timeout=seconds)
                except Exception:
                    pass
        self.client = self._local = None
