"""Safe writing of files: saves that never harm what is already on disk.

`write_atomic` writes a safetensors file so that a reader, a power cut or a
``kill -9`` only ever finds the old file whole or the new file whole:

- A symlink at the path is followed: its final target is written and the link
  stays a link (as ``open(path, "w")`` would). A dangling link creates its target.
- Anything at the target that is not a regular file (a directory, a device
  such as ``/dev/null``, a FIFO, a socket) is refused, never replaced. So is a
  file its user may not write (read-only mode), as ``open`` would refuse it.
- A new file gets the mode ``open()`` gives one (``0o666 & ~umask``); a save
  over an existing file keeps its permission bits (and its owner where the
  system allows it).
- The data is written into a private temporary directory (mode 0700) in the
  target's directory, named after the target (``.NAME.HOST.PID.RANDOM.tmp``),
  fsynced, renamed over the target, then the directory is fsynced.
- Every failure, ``KeyboardInterrupt`` included, removes the temporary. Before
  each save, temporaries of the same target whose writer died (its pid is gone
  from this host, or, written elsewhere, untouched for `STALE_AFTER_S`) are
  removed; no other file is touched.
- Every OS or safetensors error becomes a `WeightsError` naming the path and
  the cause in words (``no space left on the device``, ``permission denied``).

`check_writable` is the cheap check to run before costly work, and
`output_path` is that check as an ``argparse`` type, so a bad ``--out`` is a
usage error before anything trains.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import hashlib
import os
import re
import secrets
import socket
import stat
import time
from pathlib import Path

from zoo.errors import DataError, WeightsError

__all__ = ["STALE_AFTER_S", "check_writable", "is_safetensors", "output_path", "sweep_temporaries", "write_atomic"]

STALE_AFTER_S = 30 * 60
"""A temporary whose writer cannot be asked (another host) is stale when untouched this long."""

_DATA = "data"
_HOST = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:32] or "host"
_CAUSES = {
    errno.ENOSPC: ("no space left on the device", "free some space or save elsewhere"),
    errno.EDQUOT: ("the disk quota is exceeded", "free some space or save elsewhere"),
    errno.EFBIG: ("the file is too large for the file system or the process's file size limit", "save elsewhere"),
    errno.EACCES: ("permission denied", "save to a directory you may write to, or change its permissions"),
    errno.EPERM: ("operation not permitted", "save to a directory you may write to, or change its permissions"),
    errno.EROFS: ("read-only file system", "save to a writable file system"),
    errno.EISDIR: ("it is a directory", "give the path of a file"),
    errno.ENOTDIR: ("a part of the path is not a directory", "check the directories in the path"),
    errno.ENOENT: ("no such file or directory", "check the directories in the path"),
    errno.ENAMETOOLONG: ("the file name is too long", "choose a shorter name"),
    errno.ELOOP: ("too many levels of symbolic links", "check the symbolic links in the path"),
    errno.EIO: ("input/output error on the device", "check the disk"),
}
_KINDS = [
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
]


# -- messages -------------------------------------------------------------------------------


def _errno(error: BaseException) -> int | None:
    """The errno of an OSError, or the one a SafetensorError quotes (``... (os error 28)``)."""
    if isinstance(error, OSError):
        return error.errno
    found = re.search(r"os error (\d+)", str(error))
    return int(found.group(1)) if found else None


def _error(where: str, error: BaseException) -> WeightsError:
    """A `WeightsError` naming the path and, in words, why `error` happened."""
    code = _errno(error)
    if code in _CAUSES:
        cause, advice = _CAUSES[code]
        return WeightsError(f"cannot save to {where}: {cause}; {advice}")
    cause = os.strerror(code).lower() if code else str(error)
    return WeightsError(f"cannot save to {where}: {cause}")


def _where(path: Path, target: Path) -> str:
    """`path` as the user gave it, with the file it leads to when that differs."""
    return str(path) if Path(os.path.abspath(path)) == target else f"{path} (which leads to {target})"


# -- the target -----------------------------------------------------------------------------


def _existing(target: Path, where: str) -> os.stat_result | None:
    """The status of the regular file at `target`, None if there is none; refuse anything else."""
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise _error(where, error) from error
    if not stat.S_ISREG(info.st_mode):
        kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
        raise WeightsError(
            f"cannot save to {where}: it is {kind}, and a save replaces what is at its path; "
            "give the path of a regular file (new or existing)"
        )
    if not os.access(target, os.W_OK):
        if os.statvfs(target).f_flag & os.ST_RDONLY:
            raise _error(where, OSError(errno.EROFS, os.strerror(errno.EROFS)))
        raise WeightsError(
            f"cannot save to {where}: permission denied (the file is read-only); "
            "make it writable (chmod u+w) or save elsewhere"
        )
    return info


def _nearest_directory(directory: Path, where: str) -> Path:
    """`directory`, or its nearest existing ancestor; `WeightsError` if that is not a directory."""
    while not os.path.lexists(directory) and directory != directory.parent:
        directory = directory.parent
    if not directory.is_dir():
        raise WeightsError(f"cannot save to {where}: {directory} is not a directory; check the directories in the path")
    return directory


def _make_directory(directory: Path, where: str) -> None:
    """Create `directory` and its missing parents."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except FileExistsError as error:  # a part of the path is a file
        raise _error(where, OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))) from error
    except OSError as error:
        raise _error(where, error) from error


# -- temporaries ----------------------------------------------------------------------------


def _prefix(name: str) -> str:
    """Start of the temporaries' names for the target `name` (long names are shortened by a hash)."""
    if len(name) > 120:
        name = name[:96] + "~" + hashlib.sha256(name.encode()).hexdigest()[:16]
    return f".{name}."


def _make_private(directory: Path, name: str) -> Path:
    """A new empty directory only we may enter, in `directory`, named after the target `name`."""
    while True:
        private = directory / f"{_prefix(name)}{_HOST}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            os.mkdir(private, 0o700)
        except FileExistsError:
            continue
        os.chmod(private, 0o700)  # whatever the umask, we must be able to write in it
        return private


def _remove_private(private: Path) -> None:
    """Remove a temporary directory and the files a writer left in it; leave anything unexpected."""
    try:
        with os.scandir(private) as entries:
            for entry in entries:
                if entry.is_file(follow_symlinks=False):
                    Path(entry.path).unlink(missing_ok=True)
        os.rmdir(private)
    except OSError:
        pass


def _alive(pid: int) -> bool:
    """Whether a process `pid` exists on this host (a zombie counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _is_stale(entry: os.DirEntry, pattern: re.Pattern, legacy: re.Pattern, now: float) -> bool:
    try:
        old = now - entry.stat(follow_symlinks=False).st_mtime > STALE_AFTER_S
    except OSError:  # removed meanwhile
        return False
    match = pattern.match(entry.name)
    if match is not None and entry.is_dir(follow_symlinks=False):
        if match["host"] == _HOST:
            return not _alive(int(match["pid"]))
        return old
    # the single temporary file of earlier zoo versions: its writer cannot be asked
    return legacy.match(entry.name) is not None and entry.is_file(follow_symlinks=False) and old


def sweep_temporaries(path: str | os.PathLike) -> int:
    """Remove the temporaries of `path` (after its symlinks) that killed writers left; return how many.

    Only names made by `write_atomic` for this very target are considered: a
    temporary is removed when its writer's pid is gone from this host or, for
    one written on another host, when it was untouched for `STALE_AFTER_S`.
    """
    target = Path(os.path.realpath(path))
    prefix = _prefix(target.name)
    pattern = re.compile(rf"^{re.escape(prefix)}(?P<host>[A-Za-z0-9-]+)\.(?P<pid>\d+)\.[0-9a-f]{{8}}\.tmp$")
    legacy = re.compile(rf"^{re.escape(prefix)}[a-z0-9_]{{8}}\.tmp$")
    removed, now = 0, time.time()
    try:
        with os.scandir(target.parent) as entries:
            stale = [e for e in entries if e.name.startswith(prefix) and _is_stale(e, pattern, legacy, now)]
    except OSError:
        return 0
    for entry in stale:
        if entry.is_dir(follow_symlinks=False):
            _remove_private(Path(entry.path))
        else:
            Path(entry.path).unlink(missing_ok=True)
        removed += not os.path.lexists(entry.path)
    return removed


# -- writing --------------------------------------------------------------------------------


def _new_file_mode(file: Path, probe: bytes = b"") -> int:
    """Create `file` as ``open()`` would (mode 0o666 less the umask), write `probe`; return its mode."""
    handle = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        if probe:
            os.write(handle, probe)
        return stat.S_IMODE(os.fstat(handle).st_mode)
    finally:
        os.close(handle)


def _fsync(path: Path, *, directory: bool = False) -> None:
    flags = os.O_RDONLY | (os.O_DIRECTORY if directory else 0)
    handle = os.open(path, flags)
    try:
        os.fsync(handle)
    except OSError as error:
        if not directory or error.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(handle)


def _adopt(file: Path, mode: int, existing: os.stat_result | None) -> None:
    """Give `file` the mode (and, where allowed, the owner) of the file it will replace."""
    if existing is not None:
        mode = existing.st_mode & 0o777
        mine = os.stat(file)
        if (mine.st_uid, mine.st_gid) != (existing.st_uid, existing.st_gid):
            with contextlib.suppress(PermissionError):
                os.chown(file, existing.st_uid, existing.st_gid)
    os.chmod(file, mode)


def write_atomic(path: str | os.PathLike, tensors: dict, metadata: dict[str, str]) -> None:
    """Write `tensors` (name -> contiguous numpy array) and string `metadata` as a safetensors file at `path`.

    Atomic and safe as this module's docstring says: a symlink's target is
    written, a non-regular file is refused, the mode follows the umask (or the
    replaced file), the data is fsynced before the rename and the directory
    after, missing parent directories are created, and every failure removes
    the temporary and raises `WeightsError` naming the path and the cause.
    """
    from safetensors import SafetensorError
    from safetensors.numpy import save_file

    path = Path(path)
    target = Path(os.path.realpath(path))
    where = _where(path, target)
    existing = _existing(target, where)
    _make_directory(target.parent, where)
    sweep_temporaries(target)
    private = None
    try:
        private = _make_private(target.parent, target.name)
        data = private / _DATA
        mode = _new_file_mode(data)
        save_file(tensors, str(data), metadata=metadata)
        _adopt(data, mode, existing)
        _fsync(data)
        _existing(target, where)  # again, just before the rename: nothing else may have taken its place
        os.replace(data, target)
        _fsync(target.parent, directory=True)
    except (OSError, SafetensorError) as error:
        raise _error(where, error) from error
    finally:
        if private is not None:
            _remove_private(private)


def check_writable(path: str | os.PathLike) -> Path:
    """Check cheaply that `write_atomic` could write `path` now; return the file it would write.

    Refuses, with the messages `write_atomic` gives, a target that is not a
    regular file or is read-only, and a directory that does not accept new
    files (a probe temporary is created, written and removed there). Missing
    parent directories are not created here (`write_atomic` creates them):
    their nearest existing ancestor must accept new entries instead.
    """
    path = Path(path)
    target = Path(os.path.realpath(path))
    where = _where(path, target)
    _existing(target, where)
    directory = _nearest_directory(target.parent, where)
    private = None
    try:
        private = _make_private(directory, target.name)
        _new_file_mode(private / _DATA, probe=b"\0")
    except OSError as error:
        raise _error(where, error) from error
    finally:
        if private is not None:
            _remove_private(private)
    return target


def output_path(text: str) -> Path:
    """An ``argparse`` ``type=`` for output files: the path, checked by `check_writable` at parse time."""
    try:
        check_writable(text)
    except WeightsError as error:
        raise argparse.ArgumentTypeError(str(error)) from error
    return Path(text)


def is_safetensors(path: Path) -> bool:
    """Whether `path` starts like a safetensors file (an 8-byte header length, then JSON)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(9)
    except OSError as error:
        raise DataError(f"cannot read {path}: {error.strerror or error}") from error
    return len(head) == 9 and head[8:9] == b"{" and int.from_bytes(head[:8], "little") < (1 << 30)
