"""Collecting submissions out of nbgrader's exchange, hardened against the students who wrote them.

The exchange's inbound folder holds one entry per submission, `<student>+<assignment>+<time>+<random>`, made by
`nbgrader submit` as the student; but a student can also make, change or replace entries by hand. So an entry
is collected only as follows (`collect_assignment`; nbgrader's `collect` runs it through `HardenedCollect`,
which the course's nbgrader_config.py sets as the exchange's collect step, so `fxcourse collect`, `nbgrader
collect` and the formgrader's Collect button all take this path):

- the student id the entry names must be a Unix user (the hub logs students in as the Unix users of their
  names), and that user must own the entry's folder and every file and folder collected from it: an entry made
  as another student (`nbgrader submit --student=...`) or a file written by someone else is not collected;
- each file is opened without following symbolic links and without blocking (O_NOFOLLOW, O_NONBLOCK), and only
  what fstat of that open file shows to be a regular file, of the owner, on the exchange's file system and
  within `LIMITS` is read (at most its limit + 1 bytes); a symbolic link, named pipe, socket, device or
  oversized file is skipped and reported, and the rest of the submission and of the class is collected;
- the submission's time is the latest change time (ctime) of the entry's folder and of everything collected
  from it: the kernel sets it at every change and no user can set it back. The student's own `timestamp.txt` is
  never read; collect writes this time into submitted/'s `timestamp.txt`, where nbgrader's autograde (and its
  late penalty) reads it.

Nothing in the exchange is changed. Every name from a student is reported raw in the result; whoever prints it
escapes it (`autograder.grader.engine.grading.clean_text`).
"""
from __future__ import annotations

import datetime
import errno
import fnmatch
import json
import os
import pwd
import re
import secrets
import shutil
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from nbgrader.exchange.default import ExchangeCollect
from nbgrader.utils import check_mode, parse_utc
from traitlets import Unicode

from autograder.grader.engine.grading import clean_text
from autograder.course.notebook import MAX_NOTEBOOK_BYTES

__all__ = ["CollectLimits", "LIMITS", "Collected", "Skipped", "CollectResult", "collect_assignment",
           "HardenedCollect", "TIMESTAMP_FORMAT", "collected_time"]


@dataclass(frozen=True)
class CollectLimits:
    """What one submission may hold; anything beyond is skipped and reported."""
    file_bytes: int = MAX_NOTEBOOK_BYTES  # one file: no larger than the grader reads a notebook
    submission_bytes: int = 64 * 2**20    # all files of one submission together
    names: int = 256                      # files and folders in one submission
    depth: int = 8                        # folders inside folders


LIMITS = CollectLimits()
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"  # nbgrader's own (Exchange.timestamp_format, in UTC)
SECRET = "submission_secret.txt"  # the key of the student's feedback in the exchange (nbgrader's name)
_SECRET_OK = re.compile(r"[!-~]{1,1024}")  # printable ASCII without spaces; nbgrader writes 128 hex digits
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_REPORTED_PER_STUDENT = 20  # problem lines kept per student (a flood of bad entries is counted, not listed)


@dataclass
class Collected:
    student: str
    time: str    # the trusted submission time, TIMESTAMP_FORMAT
    state: str   # "collected" (first time), "replaced" (a newer submission), "unchanged"


@dataclass
class Skipped:
    student: str  # the student id the entry names
    what: str     # the entry (without its random part), or a path inside it
    why: str

    def line(self) -> str:
        """One line, student-chosen names escaped."""
        return f"{clean_text(self.student, 200)}: {clean_text(self.what, 400)}: not collected: {clean_text(self.why)}"


@dataclass
class CollectResult:
    collected: list[Collected] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "CollectResult":
        data = json.loads(text)
        return cls([Collected(**c) for c in data["collected"]], [Skipped(**s) for s in data["skipped"]])


class _Refused(Exception):
    """An entry, or a file or folder in it, that is not collected; the message says why."""


def _size(n: int) -> str:
    if n < 2**20:
        return f"{n} bytes"
    return f"{n / 2**20:.1f} MiB" if n % 2**20 else f"{n // 2**20} MiB"


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _open_at(dir_fd: int, name: str, flags: int = 0) -> int:
    """Open `name` in the folder `dir_fd` without following a symbolic link or blocking; _Refused says why not."""
    try:
        return os.open(name, _OPEN | flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Refused("a symbolic link (only regular files and folders are collected)") from None
        if exc.errno == errno.ENXIO:
            raise _Refused("a socket (only regular files and folders are collected)") from None
        if exc.errno == errno.ENOTDIR:
            raise _Refused("not a folder") from None
        raise _Refused(f"cannot be opened: {exc.strerror}") from None


def _check_owned(st: os.stat_result, uid: int, student: str, device: int) -> None:
    if st.st_uid != uid:
        raise _Refused(f"owned by {_user_name(st.st_uid)}, not by {student}")
    if st.st_dev != device:
        raise _Refused("on another file system than the exchange (a mount)")


class _Copy:
    """One submission copied from its open entry folder into `dest`: regular files of `uid` within `limits`."""

    def __init__(self, student: str, uid: int, device: int, ignore: list[str], include: list[str],
                 limits: CollectLimits) -> None:
        self.student, self.uid, self.device = student, uid, device
        self.ignore, self.include, self.limits = ignore, include, limits
        self.names = self.bytes = 0
        self.ctime_ns = 0
        self.skipped: list[Skipped] = []
        self.full = False  # the names limit was reached: nothing more is opened

    def _skip(self, rel: str, why: str) -> None:
        self.skipped.append(Skipped(self.student, rel, why))

    def folder(self, fd: int, dest: Path, rel: str, depth: int) -> None:
        """Copy what folder `fd` (already checked) holds into `dest` (made here)."""
        dest.mkdir(mode=0o755)
        try:
            with os.scandir(fd) as listing:
                names = [entry.name for _, entry in zip(range(self.limits.names + 1), listing)]
        except OSError as exc:
            raise _Refused(f"cannot be listed: {exc.strerror}") from None
        if len(names) > self.limits.names:
            self._skip(rel or ".", f"holds more than {self.limits.names} names: only the first "
                                   f"{self.limits.names} listed were looked at")
            names.pop()
        for name in sorted(names):
            if self.full:
                return
            path = f"{rel}{name}"
            if (depth == 0 and name == "timestamp.txt") or any(fnmatch.fnmatch(name, g) for g in self.ignore):
                continue  # collect writes its own timestamp.txt; the course's ignored names, as nbgrader skips them
            self.names += 1
            if self.names > self.limits.names:
                self.full = True
                self._skip(path, f"the submission holds more than {self.limits.names} files and folders; "
                                 "this one and the rest are not collected")
                return
            try:
                self.one(fd, name, dest / name, path, depth)
            except _Refused as why:
                self._skip(path, str(why))

    def one(self, dir_fd: int, name: str, dest: Path, rel: str, depth: int) -> None:
        fd = _open_at(dir_fd, name)
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                _check_owned(st, self.uid, self.student, self.device)
                if depth + 1 > self.limits.depth:
                    raise _Refused(f"folders nested more than {self.limits.depth} deep")
                self.ctime_ns = max(self.ctime_ns, st.st_ctime_ns)
                self.folder(fd, dest, f"{rel}/", depth + 1)
                return
            if not stat.S_ISREG(st.st_mode):
                raise _Refused(f"{_kind(st.st_mode)} (only regular files and folders are collected)")
            _check_owned(st, self.uid, self.student, self.device)
            if self.include and not any(fnmatch.fnmatch(name, g) for g in self.include):
                return  # not one of the course's included names (nbgrader's CourseDirectory.include)
            if st.st_size > self.limits.file_bytes:
                raise _Refused(f"{_size(st.st_size)}, more than the limit of {_size(self.limits.file_bytes)} per file")
            room = min(self.limits.file_bytes, self.limits.submission_bytes - self.bytes)
            if st.st_size > room:
                raise _Refused(f"the submission's files would add up to more than "
                               f"{_size(self.limits.submission_bytes)}")
            data = _read_at_most(fd, room + 1)
            if len(data) > room:  # it grew after fstat
                raise _Refused(f"it grew past the limit while being read ({_size(room)} left)")
            self.ctime_ns = max(self.ctime_ns, os.fstat(fd).st_ctime_ns)
        finally:
            os.close(fd)
        out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(out, "wb") as fh:
            fh.write(data)
        self.bytes += len(data)


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks, got = [], 0
    while got < limit:
        chunk = os.read(fd, min(1 << 20, limit - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


@dataclass
class _Entry:
    name: str
    student: str
    time: datetime.datetime  # the time in its name: orders one student's entries, as nbgrader does

    @property
    def shown(self) -> str:
        """The entry without its random part (that part keeps the entry from other students: not printed)."""
        parts = self.name.rsplit("+", 3)
        return "+".join(parts[:3]) + ("+..." if len(parts) == 4 else "")


def _entries(inbound_fd: int, assignment: str, students: str, result: CollectResult) -> dict[str, list[_Entry]]:
    """The inbound entries of `assignment` by the student id they name, newest first; unreadable names reported."""
    found: dict[str, list[_Entry]] = {}
    for name in os.listdir(inbound_fd):
        parts = name.rsplit("+", 3)
        if len(parts) < 3 or parts[1] != assignment or not fnmatch.fnmatchcase(parts[0], students):
            continue
        try:
            when = parse_utc(parts[2])
        except Exception:  # noqa: BLE001  (whatever dateutil makes of a student's text, it is not a time)
            result.skipped.append(Skipped(parts[0], "+".join(parts[:3]),
                                          "its name does not end in a time as nbgrader submit writes it"))
            continue
        found.setdefault(parts[0], []).append(_Entry(name, parts[0], when))
    for entries in found.values():
        entries.sort(key=lambda e: (e.time, e.name), reverse=True)
    return found


def _open_entry(inbound_fd: int, entry: _Entry, device: int) -> tuple[int, int]:
    """(open folder, uid) of an entry whose named student is a Unix user who owns it; _Refused otherwise."""
    try:
        uid = pwd.getpwnam(entry.student).pw_uid
    except (KeyError, ValueError):
        raise _Refused(f"there is no Unix user {entry.student}") from None
    fd = _open_at(inbound_fd, entry.name, os.O_DIRECTORY)
    try:
        _check_owned(os.fstat(fd), uid, entry.student, device)
    except BaseException:
        os.close(fd)
        raise
    return fd, uid


def collected_time(folder: Path) -> datetime.datetime | None:
    """The time in a collected submission's timestamp.txt (naive UTC; the instructor's own folder), or None."""
    try:
        with open(folder / "timestamp.txt", "rb") as fh:
            return parse_utc(fh.read(256).decode("ascii").strip())
    except (OSError, ValueError, OverflowError, TypeError, UnicodeDecodeError):
        return None


def _utc(ns: int) -> datetime.datetime:
    seconds, rest = divmod(ns, 10**9)
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).replace(microsecond=rest // 1000,
                                                                                  tzinfo=None)


def _collect_one(entry: _Entry, fd: int, uid: int, device: int, dest: Path, update: bool,
                 duedate: datetime.datetime | None, ignore: list[str], include: list[str],
                 limits: CollectLimits, result: CollectResult) -> None:
    """Copy one student's chosen entry (open as `fd`) beside `dest`, then put it in place if it is new."""
    copy = _Copy(entry.student, uid, device, ignore, include, limits)
    copy.ctime_ns = os.fstat(fd).st_ctime_ns
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = dest.parent / f".{dest.name}.collecting-{secrets.token_hex(8)}"
    try:
        try:
            copy.folder(fd, work, "", 0)
        except _Refused as why:
            result.skipped.append(Skipped(entry.student, f"inbound entry {entry.shown}", str(why)))
            return
        when = _utc(copy.ctime_ns)
        stamp = when.strftime(TIMESTAMP_FORMAT)
        (work / "timestamp.txt").write_text(stamp)
        secret = work / SECRET
        if not (secret.is_file() and _SECRET_OK.fullmatch(secret.read_text("latin-1"))):
            if not any(s.what == SECRET for s in copy.skipped):
                copy._skip(SECRET, "missing or not a key as nbgrader submit writes it")
            if secret.is_dir():
                shutil.rmtree(secret)
            secret.unlink(missing_ok=True)
            # a fresh key, so that releasing the class's feedback works; this student cannot fetch theirs
            secret.write_text(secrets.token_hex(64))
        result.skipped.extend(copy.skipped)
        before = collected_time(dest) if dest.is_dir() else None
        if dest.is_dir():
            newer = before is None or when > before
            if not (update and newer) and not (duedate is not None and before != when):
                result.collected.append(Collected(entry.student, before.strftime(TIMESTAMP_FORMAT) if before
                                                  else stamp, "unchanged"))
                return
            old = dest.parent / f".{dest.name}.replaced-{secrets.token_hex(8)}"
            os.rename(dest, old)
            os.rename(work, dest)
            shutil.rmtree(old)
            result.collected.append(Collected(entry.student, stamp, "replaced"))
        else:
            os.rename(work, dest)
            result.collected.append(Collected(entry.student, stamp, "collected"))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def collect_assignment(inbound: str | Path, assignment: str, dest: Callable[[str], Path], *, students: str = "*",
                       update: bool = True, duedate: datetime.datetime | None = None,
                       ignore: list[str] | None = None, include: list[str] | None = None,
                       limits: CollectLimits = LIMITS) -> CollectResult:
    """Collect each student's latest submission of `assignment` from the exchange's `inbound` folder into
    `dest(student)`. `students`: a glob of student ids; `update`: a newer submission replaces one collected before;
    `duedate` (naive UTC, nbgrader's --before-duedate): the latest entry named before it, else the latest;
    `ignore`/`include`: nbgrader's CourseDirectory name patterns. Problems are in the result, never raised."""
    result = CollectResult()
    inbound_fd = os.open(inbound, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        device = os.fstat(inbound_fd).st_dev
        for student, entries in sorted(_entries(inbound_fd, assignment, students, result).items()):
            if duedate is not None:  # nbgrader's order: the latest before the due date first
                entries.sort(key=lambda e: e.time > duedate)
            chosen = None
            for entry in entries:
                try:
                    fd, uid = _open_entry(inbound_fd, entry, device)
                except _Refused as why:
                    result.skipped.append(Skipped(entry.student, f"inbound entry {entry.shown}", str(why)))
                    continue
                if chosen is not None:
                    os.close(fd)
                else:
                    chosen = (entry, fd, uid)
            if chosen is None:
                continue
            entry, fd, uid = chosen
            try:
                _collect_one(entry, fd, uid, device, Path(dest(student)), update, duedate,
                             list(ignore or []), list(include or []), limits, result)
            finally:
                os.close(fd)
    finally:
        os.close(inbound_fd)
    result.skipped = _capped(result.skipped)
    return result


def _capped(skipped: list[Skipped]) -> list[Skipped]:
    """At most _REPORTED_PER_STUDENT lines per student, then one that counts the rest."""
    out, count = [], {}
    for s in skipped:
        count[s.student] = count.get(s.student, 0) + 1
        if count[s.student] <= _REPORTED_PER_STUDENT:
            out.append(s)
    for student, n in count.items():
        if n > _REPORTED_PER_STUDENT:
            out.append(Skipped(student, f"and {n - _REPORTED_PER_STUDENT} more", "not listed one by one"))
    return out


class HardenedCollect(ExchangeCollect):
    """nbgrader's collect step (ExchangeFactory.collect) with `collect_assignment`'s rules; `report`: a file to
    write the result into as JSON (`fxcourse collect` reads it). The owner check is always on (check_owner is
    not read)."""

    report = Unicode("", help="Write the collect's result as JSON to this file.").tag(config=True)

    def init_src(self) -> None:
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.inbound_path = os.path.join(self.root, self.coursedir.course_id, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not check_mode(self.inbound_path, read=True, execute=True):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        self.duedate = None
        if self.before_duedate:
            from nbgrader.api import Gradebook, MissingEntry
            with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
                try:
                    self.duedate = gb.find_assignment(self.coursedir.assignment_id).duedate
                except MissingEntry:
                    pass

    def init_dest(self) -> None:
        pass

    def copy_files(self) -> None:
        assignment = self.coursedir.assignment_id
        result = collect_assignment(
            self.inbound_path, assignment,
            lambda student: Path(self.coursedir.format_path(self.coursedir.submitted_directory, student, assignment)),
            students=self.coursedir.student_id or "*", update=self.update, duedate=self.duedate,
            ignore=self.coursedir.ignore, include=self.coursedir.include)
        if not result.collected:
            self.log.warning("No submissions of '%s' for course '%s' to collect", assignment, self.coursedir.course_id)
        for c in result.collected:
            self.log.info("%s submission: %s %s (submitted %s)", c.state.capitalize(), clean_text(c.student, 200),
                          assignment, c.time)
        for s in result.skipped:
            self.log.warning("%s", s.line())
        if self.report:
            Path(self.report).write_text(result.to_json())
