"""The jail's trial: enter it as a worker would, then try from inside what it must forbid.

`sandbox.jail_support()` runs `python -m autograder.grader.jail.jailprobe SPEC.json` in the namespaces a worker gets,
once per grading process; the answer names each piece that did not hold.
"""
from __future__ import annotations

import json
import os
import sys

from autograder.grader.jail import userjail
from autograder.grader.jail.worker import JailError, enter_jail


def probe(spec: dict) -> dict[str, str]:
    """Enter the jail as a worker would, then test from inside what it must forbid: {property: problem}
    (empty when the jail holds). `sandbox.jail_support()` runs this once per grading process."""
    problems: dict[str, str] = {}
    try:
        enter_jail(spec)
    except JailError as exc:
        return {exc.piece: str(exc)}
    scratch = spec["scratch"]
    try:
        with open(os.path.join(scratch, "probe.txt"), "w") as f:
            f.write("x")
    except OSError as exc:
        problems["writable scratch"] = str(exc)
    for path in ("/probe-file", "/etc/probe-file", os.path.join(os.path.dirname(os.__file__), "probe-file"),
                 "/tmp/probe-file"):
        try:
            open(path, "w").close()
            problems["read-only file system"] = f"{path} could be created"
        except OSError:
            pass
    for path in ("/proc/sys/kernel/hostname", "/proc/sysrq-trigger"):
        try:
            open(path, "w").close()
            problems["read-only /proc"] = f"{path} could be opened for writing"
        except OSError:
            pass
    others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
    if others:
        problems["private /proc"] = f"/proc shows other processes ({', '.join(others[:5])})"
    cgroups = []
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            for line in f:
                path = line.strip().split(":", 2)[-1]
                cgroups.append(path)
    except OSError:
        pass
    for root, _, files in os.walk("/sys/fs/cgroup"):
        for name in files:
            if name in ("pids.max", "cgroup.procs", "memory.limit_in_bytes", "memory.max"):
                try:
                    open(os.path.join(root, name), "w").close()
                    problems["read-only cgroups"] = f"{os.path.join(root, name)} could be opened for writing"
                except OSError:
                    pass
        if root.count("/") > 6:
            break
    if os.getuid() == 0 or os.geteuid() == 0:
        problems["unprivileged uid"] = "still uid 0"
    if spec.get("userns"):
        problems.update(_user_namespace_problems(3))
    return problems


def _user_namespace_problems(limit: int) -> dict[str, str]:
    """What the jail of a grader that is not root must also hold (autograder.grader.jail.userjail): uid 0 of the
    namespace mapped to a uid other than root's, no capability, no nested user namespace, and an RLIMIT_NPROC
    that counts the namespace's processes only (the worker and its manager), never the instructor's others."""
    import ctypes
    import resource
    import signal

    problems: dict[str, str] = {}
    outside = userjail.outside_uid()
    if outside in (None, 0):
        problems["unprivileged uid"] = f"uid {os.getuid()} is uid {outside} outside the user namespace"
    with open("/proc/self/status", "rb") as f:
        status = f.read().decode("ascii", "replace")
    caps = {k: v.strip() for k, _, v in (line.partition(":") for line in status.splitlines()) if k.startswith("Cap")}
    if any(int(caps.get(k, "0"), 16) for k in ("CapEff", "CapPrm", "CapAmb", "CapBnd")):
        problems["no capability"] = f"capabilities left: {caps}"
    libc = ctypes.CDLL(None, use_errno=True)
    pid = os.fork()
    if pid == 0:  # a nested user namespace would give capabilities again (over nothing of ours, but still)
        os._exit(0 if libc.unshare(userjail.CLONE_NEWUSER) != 0 else 1)
    if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0:
        problems["no nested user namespace"] = "the worker could create a user namespace"
    # `limit` processes of this namespace's uid 0: the manager and this one run, so one more may start and a
    # second must not. Counted per real uid (Linux before 5.14), the instructor's other processes (the grader,
    # the fork server) would leave no room for the first.
    resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))
    children = []
    try:
        for _ in range(2):
            child = os.fork()
            if child == 0:
                signal.pause()
                os._exit(0)
            children.append(child)
    except OSError:
        pass
    for child in children:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
    if len(children) != 1:
        problems["a cap on the worker's processes"] = (
            f"RLIMIT_NPROC of {limit} let {len(children)} more processes start beside the worker and its manager "
            f"(Linux {os.uname().release}; from 5.14 on it counts the processes of the worker's user namespace "
            "only, before that every process of the instructor's uid)")
    return problems


def _probe_main(job_path: str) -> int:
    with open(job_path, "rb") as f:
        spec = json.loads(f.read(2**20))
    os.unlink(job_path)
    try:
        problems = probe(spec)
    except Exception as exc:  # what the trial found, not a traceback the grader would take for missing namespaces
        problems = {"jail": f"the trial stopped in the jail: {type(exc).__name__}: {exc}"}
    os.write(1, json.dumps(problems).encode() + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(_probe_main(sys.argv[1]))
