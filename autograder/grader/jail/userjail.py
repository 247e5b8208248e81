"""The jail for a grader that is not root: an unprivileged user namespace, and a root file system of the worker's own.

Without root, the grading process (an instructor's `fxcourse grade`, or formgrader's autograde button in the
instructor's notebook server) cannot mount anything or switch to another uid. The kernel lets any user create a
user namespace in which that user's uid and gid, and only those, are mapped (to 1990000000: `enter_namespaces`,
setgroups denied, uid and gid maps of one line each), and, together with it, new mount, pid, network, IPC and
UTS namespaces owned by it. The worker, pid 1 of the new pid namespace, holds every capability there (over those
namespaces only) until it gives them up, and outside it stays the instructor's uid. Since it may read whatever
the instructor may read, its file system is built anew instead of being the machine's with some folders covered
(`build_root`): an empty tmpfs holding
the system's folders (/usr, /etc, /sys and the /bin, /lib links), /dev's null, zero, full, random and urandom,
the interpreter's prefix, the venv and the course's packages (each bound at its own path, wherever it lies: a
home of mode 0700 included), a new /proc of the pid namespace and the scratch tmpfs. That tree becomes the root
(pivot_root) and the machine's root is detached: the instructor's home, the course folder, the exchange, /tmp,
/run, /srv, /opt and /home are not there at all, not covered. Then every mount is made read-only but scratch,
nested user namespaces are turned off (user.max_user_namespaces = 0 inside), and the worker gives up every
capability (`drop_capabilities`): it runs as uid 1990000000 of its namespace (the instructor's uid outside),
without any capability, unable to regain one.

The processes cap: no pids cgroup can be made without root here, so RLIMIT_NPROC does it. From Linux 5.14 on it
counts the processes of a uid in each user namespace (and charges each one to every namespace above), so in the
worker's own namespace it counts the worker's processes and threads and its manager, never the instructor's
other processes; before 5.14 it counts every process of the real uid, and the jail's trial
(autograder.grader.jail.jailprobe) refuses.

The worker's scratch is a tmpfs that only exists in its namespaces. The process that waits for the worker (the
fork server's manager, or `python -m autograder.grader.jail.userjail`, which plays `unshare --fork --kill-child`)
copies the two files the grader reads (progress.txt, evidence.pt: regular files only, bounded) into the
grader's scratch folder once the worker has ended (`copy_out`).

Stdlib only: the fork server's manager and the worker call it from already-initialised interpreters.
"""
from __future__ import annotations

import ctypes
import os
import signal
import stat
import sys

CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID = 0x10000000, 0x00020000, 0x20000000
CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS = 0x40000000, 0x08000000, 0x04000000
NAMESPACES = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "sys")   # the system's, read-only
DEVICES = ("null", "zero", "full", "random", "urandom")
COPIED = (("progress.txt", 4 * 2**20), ("evidence.pt", 32 * 2**20))  # what the grader reads (sandbox's limits)
MNT_DETACH = 2
PIECE = "unprivileged user namespaces"
INSIDE = int(os.environ.get("FXCOURSE_JAIL_UID_BASE", "1990000000"))  # the grader's uid and gid, seen inside


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def unshare(flags: int) -> None:
    """unshare(2) of `flags` (CLONE_NEW*); OSError on refusal."""
    if _libc().unshare(flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare: {os.strerror(err)}")


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return ""


def refusal(what: str) -> str:
    """Why the kernel refused an unprivileged user namespace (`what`: the failure), naming the setting that
    turns them off where one does."""
    if _read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
        why = ("the kernel setting kernel.unprivileged_userns_clone is 0 (Debian's switch): set it to 1 "
               "(sysctl -w kernel.unprivileged_userns_clone=1, and in /etc/sysctl.d/ to keep it)")
    elif _read("/proc/sys/user/max_user_namespaces") == "0":
        why = ("the kernel setting user.max_user_namespaces is 0: set it to a positive number "
               "(sysctl -w user.max_user_namespaces=10000, and in /etc/sysctl.d/ to keep it)")
    elif _read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
        why = ("AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1, "
               "Ubuntu 23.10 and later): give the venv's Python an AppArmor profile with `userns,` or set the "
               "setting to 0")
    else:
        why = "no kernel setting that turns them off is set here"
    return f"{what} ({why}); or grade as root"


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def enter_namespaces() -> None:
    """Move this process (single-threaded, not root) into new user, mount, network, IPC and UTS namespaces, its
    children into a new pid namespace, with every capability there (none outside); its uid and gid read INSIDE
    there, not root's. Its children must not exec (a program run by another uid than 0 gets no capability):
    they fork and import. OSError naming the setting on refusal."""
    uid, gid = os.geteuid(), os.getegid()
    try:
        unshare(NAMESPACES)
    except OSError as exc:
        raise OSError(exc.errno, refusal(f"unshare of a user namespace: {os.strerror(exc.errno)}")) from None
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{INSIDE} {uid} 1")
        _write("/proc/self/gid_map", f"{INSIDE} {gid} 1")
    except OSError as exc:
        raise OSError(exc.errno, refusal(f"mapping uid {uid} into the user namespace: {exc.strerror}")) from None
    from autograder.grader.jail.mounts import MS_PRIVATE, MS_REC, mount

    try:
        mount(None, "/", None, MS_REC | MS_PRIVATE)  # what unshare(1) does: no mount leaks back
    except OSError as exc:
        raise OSError(exc.errno, refusal(str(exc))) from None


def _passable(top: str, path: str) -> str:
    """`path` made in the tree at `top` (folders of mode 0755 on the way); the path inside that tree."""
    inside = top.rstrip("/") + path
    os.makedirs(inside, mode=0o755, exist_ok=True)
    return inside


def _bind_file(source: str, target: str) -> None:
    from autograder.grader.jail.mounts import MS_BIND, mount

    os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o644))
    mount(source, target, None, MS_BIND)


def build_root(spec: dict, needed: list[str]) -> None:
    """Make the worker's root file system and pivot into it (see the module's text); as pid 1, root of the user
    namespace, with the grader's scratch folder as working directory. `needed`: what stays readable (outermost
    folders). Ends with every mount read-only but the scratch tmpfs, the working directory in it. OSError
    names the step."""
    import shutil

    from autograder.grader.jail.mounts import (MS_BIND, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_REC, MS_REMOUNT,
                                          _read_only_everywhere, mount)

    scratch = os.path.abspath(spec["scratch"])
    held = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)) for path in needed]
    try:
        top = scratch  # the new root's tmpfs goes over the grader's scratch folder, still our working directory
        mount("tmpfs", top, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=755")
        for name in SYSTEM:
            source = "/" + name
            if os.path.islink(source):
                os.symlink(os.readlink(source), os.path.join(top, name))
            elif os.path.isdir(source):
                mount(source, _passable(top, source), None, MS_BIND | MS_REC)
        dev = _passable(top, "/dev")
        mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,nr_inodes=64,mode=755")
        for name in DEVICES:
            _bind_file(f"/dev/{name}", os.path.join(dev, name))
        for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                             ("stderr", "/proc/self/fd/2")):
            os.symlink(target, os.path.join(dev, name))
        os.mkdir(os.path.join(dev, "shm"), 0o755)
        for folder in ("/tmp", "/var/tmp", "/run"):
            _passable(top, folder)
        for path, fd in held:
            if not any(path == "/" + s or path.startswith(f"/{s}/") for s in SYSTEM):  # there already
                mount(f"/proc/self/fd/{fd}", _passable(top, path), None, MS_BIND | MS_REC)
        inside = _passable(top, scratch)
        mount("tmpfs", inside, "tmpfs", MS_NOSUID | MS_NODEV,
              f"size={max(int(spec['scratch_size']), 2**16)},nr_inodes=16384,mode=0700")
        # what the imports wrote in the grader's folder (caches, config folders), never the grader's output file
        for entry in os.scandir("."):
            if entry.name != "stdout.txt":
                target = os.path.join(inside, entry.name)
                if entry.is_dir(follow_symlinks=False):
                    shutil.copytree(entry.name, target, symlinks=True)
                else:
                    shutil.copy2(entry.name, target, follow_symlinks=False)
        for path in spec.get("hide", []):  # a course folder that lies under the system's folders
            there = top + path
            if any(n == path or n.startswith(path.rstrip("/") + "/") for n in needed) or not os.path.lexists(there):
                continue
            if os.path.isdir(there) and not os.path.islink(there):
                mount("tmpfs", there, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,nr_inodes=4,mode=000")
            elif os.path.isfile(there) and not os.path.islink(there):
                mount("/dev/null", there, None, MS_BIND)
        proc = _passable(top, "/proc")
        mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)  # while the machine's /proc is still there
        _write(os.path.join(proc, "sys/user/max_user_namespaces"), "0")  # no nested user namespace
    finally:
        for _, fd in held:
            os.close(fd)
    os.chdir(top)
    libc = _libc()
    if libc.syscall(_SYS_PIVOT_ROOT, b".", b".") != 0:  # the old root now lies on top of the new one
        err = ctypes.get_errno()
        raise OSError(err, f"pivot_root: {os.strerror(err)}")
    if libc.umount2(b".", MNT_DETACH) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"detaching the machine's root: {os.strerror(err)}")
    os.chdir("/")
    _read_only_everywhere()
    mount(None, scratch, None, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV)
    os.chdir(scratch)


_MACHINE = os.uname().machine  # glibc wraps neither pivot_root nor (in every version) capset: their numbers
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "ppc64le": 203, "s390x": 217, "riscv64": 41}.get(_MACHINE, 155)
_SYS_CAPSET = {"x86_64": 126, "aarch64": 91, "ppc64le": 184, "s390x": 185, "riscv64": 91}.get(_MACHINE, 126)


def drop_capabilities() -> None:
    """Give up every capability for good (securebits locked, bounding and ambient sets emptied, capset to
    nothing, no_new_privs)."""
    libc = _libc()
    pr_set_securebits, pr_capbset_drop, pr_cap_ambient, pr_set_no_new_privs, pr_set_dumpable = 28, 24, 47, 38, 4
    if libc.prctl(pr_set_securebits, 0x01 | 0x02 | 0x08 | 0x20 | 0x40 | 0x80, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"cannot lock the securebits: {os.strerror(ctypes.get_errno())}")
    for cap in range(64):
        libc.prctl(pr_capbset_drop, cap, 0, 0, 0)
    libc.prctl(pr_cap_ambient, 4, 0, 0, 0)  # PR_CAP_AMBIENT_CLEAR_ALL
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()                  # effective, permitted, inheritable: nothing, twice
    if libc.syscall(_SYS_CAPSET, header, data) != 0:
        raise OSError(ctypes.get_errno(), f"capset: {os.strerror(ctypes.get_errno())}")
    libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0)
    libc.prctl(pr_set_dumpable, 1, 0, 0, 0)
    status = _read("/proc/self/status")
    caps = {k: v.strip() for k, _, v in (line.partition(":") for line in status.splitlines()) if k.startswith("Cap")}
    if any(int(caps.get(k, "0"), 16) for k in ("CapEff", "CapPrm", "CapAmb", "CapBnd")):
        raise OSError(0, f"capabilities left after giving them up: {caps}")


def outside_uid() -> int | None:
    """The uid outside the user namespace that this process's uid is (its uid_map), or None when not mapped."""
    for line in _read("/proc/self/uid_map").splitlines():
        inner, outer, count = (int(x) for x in line.split())
        if inner <= os.getuid() < inner + count:
            return outer + os.getuid() - inner
    return None


def copy_out(scratch: str, into: int) -> None:
    """Copy what the grader reads from the worker's scratch tmpfs (at `scratch` in this process's view) into the
    grader's folder (descriptor `into`): regular files only, each cut one byte past its limit (the grader then
    refuses it as too large). Nothing when `scratch` is that folder itself (the jail was never built)."""
    try:
        src = os.open(scratch, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        a, b = os.fstat(src), os.fstat(into)
        if (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino):
            return
        for name, limit in COPIED:
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC,
                             dir_fd=src)
            except OSError:
                continue
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    continue
                out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                              dir_fd=into)
                try:
                    left = limit + 1
                    while left > 0:
                        chunk = os.read(fd, min(left, 2**20))
                        if not chunk:
                            break
                        os.write(out, chunk)
                        left -= len(chunk)
                finally:
                    os.close(out)
            except OSError:
                pass
            finally:
                os.close(fd)
    finally:
        os.close(src)


def die_with_parent(parent: int) -> None:
    """SIGKILL when the parent goes (PR_SET_PDEATHSIG); exit now if it already went (in a new pid namespace the
    parent is outside it: its pid reads 0)."""
    _libc().prctl(1, signal.SIGKILL, 0, 0, 0)
    if os.getppid() not in (parent, 0):
        os._exit(1)


def exit_after(body) -> None:
    """In a forked child: run `body`, then leave with its exit code (SystemExit's; 1 after printing the traceback of
    anything else), the standard streams flushed and the interpreter's teardown skipped."""
    code = 1
    try:
        code = body() or 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        try:
            traceback.print_exc()
        except BaseException:
            pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        os._exit(code)


def main(argv: list[str]) -> int:
    """`python -m autograder.grader.jail.userjail SCRATCH -- PYTHON -s -m MODULE ARGS`: run MODULE (the worker,
    or the jail's trial) as pid 1 of new namespaces (enter_namespaces), forked from this process, not executed;
    wait for it, copy its files out of its scratch into SCRATCH, and exit with its exit code (128 + the signal
    that killed it)."""
    die_with_parent(os.getppid())
    scratch, cmd = argv[0], argv[argv.index("--") + 1:]
    cmd = cmd[cmd.index("-m") + 1:]  # [python, -s,] -m MODULE ARGS: the module and its arguments
    try:
        enter_namespaces()
    except OSError as exc:
        os.write(2, f"fxcourse-jail-error: {exc.strerror or exc}\n".encode())
        return 97
    into = os.open(scratch, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    me = os.getpid()
    pid = os.fork()
    if pid == 0:
        def body() -> None:
            import runpy

            die_with_parent(me)
            os.close(into)
            sys.argv = [cmd[0], *cmd[1:]]
            runpy.run_module(cmd[0], run_name="__main__", alter_sys=True)

        exit_after(body)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):  # the worker goes with us, and goes first
        signal.signal(sig, lambda s, _f: os.kill(pid, signal.SIGKILL))
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    copy_out(scratch, into)
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.stdout.flush()
    os._exit(main(sys.argv[1:]))
