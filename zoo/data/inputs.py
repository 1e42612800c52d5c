"""Opening files from outside: regular files only, metadata read with a size limit.

Every reader opens what it reads through here (the vector formats' `zoo.vectors.reading.open_binary`,
the text reader `zoo.data.textfile`, the model store's index, the hub cache's refs):

- a FIFO, a device, a socket or a directory is refused at once, with a `DataError` saying
  what it is: it is opened without blocking (``O_NONBLOCK``), so a FIFO no one writes to
  never hangs the reader, and checked with ``fstat`` on the descriptor actually read (no
  window between a check and the open);
- `read_small` reads a metadata-like file (an index, a ref) whole only up to a limit, so a
  3 GB ``index.json`` is an error, not 6 GB of memory;
- ``follow=False`` refuses a symbolic link (``O_NOFOLLOW``), for files that must be what
  they say where they are (a store's own files).

Line lengths are bounded by the text reader (`zoo.data.textfile`), formats detected from a
bounded prefix by each format's reader.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from zoo.errors import DataError

__all__ = ["MAX_METADATA_BYTES", "check_regular", "open_input", "read_small"]

MAX_METADATA_BYTES = 64 << 20
"""The most `read_small` reads by default: far above any index or ref zoo writes."""

_KINDS = [
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
]


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _not_regular(path: Path, what: str, mode: int) -> DataError:
    return DataError(f"{path}: this {what} is {_kind(mode)}; zoo reads regular files only: give the path of a file")


def check_regular(path: str | os.PathLike, what: str = "file") -> None:
    """Raise `DataError` unless `path` is a regular file (a symbolic link to one is too)."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise DataError(f"no {what} at {path}") from None
    except OSError as error:
        raise DataError(f"cannot read {path}: {error.strerror or error}") from error
    if not stat.S_ISREG(mode):
        raise _not_regular(path, what, mode)


def _open_fd(path: Path, what: str, follow: bool) -> int:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise DataError(f"no {what} at {path}") from None
    except OSError as error:
        if error.errno == errno.ELOOP and not follow:
            raise DataError(
                f"{path}: this {what} is a symbolic link, which is refused here: replace it by the file"
            ) from None
        raise DataError(f"cannot read {path}: {error.strerror or error}") from error
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise _not_regular(path, what, mode)
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return fd


def open_input(path: str | os.PathLike, what: str = "file", *, follow: bool = True) -> BinaryIO:
    """`path` opened for reading bytes, if it is a regular file (see the module docstring)."""
    return os.fdopen(_open_fd(Path(path), what, follow), "rb")


def read_small(
    path: str | os.PathLike, what: str = "file", *, limit: int = MAX_METADATA_BYTES, follow: bool = True
) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them: a larger file is a `DataError`."""
    path = Path(path)
    with os.fdopen(_open_fd(path, what, follow), "rb") as handle:
        size = os.fstat(handle.fileno()).st_size  # read(limit + 1) would allocate the whole limit up front
        data = handle.read(min(size, limit) + 1)
        if len(data) > size:  # the file grew since: read on, up to the limit
            data += handle.read(max(limit + 1 - len(data), 0))
    if len(data) > limit:
        raise DataError(
            f"{path}: this {what} is larger than {limit} bytes, far more than it should ever hold: a damaged "
            "or foreign file? Remove or replace it"
        )
    return data
