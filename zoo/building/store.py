"""The local model store: weights on this machine by name, ``NAME.TAG`` -> a zoo file.

Where it is: ``$ZOO_HOME`` when set, else the user's cache directory,
``$XDG_CACHE_HOME/zoo`` (``~/.cache/zoo``; ``~/Library/Caches/zoo`` on macOS,
``%LOCALAPPDATA%\\zoo\\Cache`` on Windows). Its layout::

    ROOT/models/NAME.TAG.safetensors   one zoo file per entry (a model, or word vectors)
    ROOT/index.json                    what a file does not say: its source, when it came, its size
    ROOT/.lock                         taken while an entry is added or removed

A name is two identifiers joined by a dot, each as in a model name
(`zoo.naming.names.IDENTIFIER`: lowercase letters, digits, ``-`` and ``_``,
starting with a letter or digit; at most `MAX_PART` characters): so it is
always a plain file name inside ``ROOT/models``, never ``..``, a hidden file,
a path or an absolute path. `check_name` refuses anything else, saying why.

The files are the truth and the index a record beside them: an entry is listed
and found only while its file exists, and a file the index does not know (the
index damaged, or removed by hand) is still listed, from its own metadata.
Adding and removing take an exclusive lock on ``ROOT/.lock`` and write the
index atomically (a temporary, fsynced, renamed over it), so two imports at
once, of different names or the same one, never lose or corrupt an entry;
reading needs no lock. What enters is checked and written by
`zoo.building.intake` (every file as `zoo.load` checks it); this module knows
names, places and the index only, and reads no tensor.

The store answers the ``zoo_resolve_weights`` hook: `RESOLVER` is a hook
implementation that every `zoo.naming.registry.Registry` registers when it is
made, marked ``tryfirst``, so ``zoo.build("NAME.TAG")`` finds what was
imported before any plugin is asked (a local copy wins over one a plugin would
fetch, and asking the store costs no network). Third-party resolvers keep
working: they are asked for every name the store does not hold, and one that
must come first can itself be marked ``tryfirst`` (pluggy calls the later
registered first among those).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from zoo.data.inputs import read_small
from zoo.errors import DataError, NameSyntaxError, WeightsError, close_matches
from zoo.naming.hookspecs import hookimpl
from zoo.naming.names import IDENTIFIER

__all__ = [
    "MAX_PART",
    "RESOLVER",
    "Store",
    "StoreEntry",
    "StoreResolver",
    "check_name",
    "default_store",
    "is_name",
    "store_home",
]

MAX_PART = 64
"""The longest NAME and the longest TAG of a stored name."""

INDEX_FORMAT = 1
MAX_INDEX_BYTES = 64 << 20
"""The largest index (and safetensors header) the store reads: some 100,000 entries."""
LOCK_TIMEOUT_S = 120.0
"""How long an import waits for another one to finish with the store."""

_SUFFIX = ".safetensors"


# -- where --------------------------------------------------------------------------------


def store_home(environ: Mapping[str, str] | None = None) -> Path:
    """The store's root: ``$ZOO_HOME``, else ``zoo`` in the user's cache directory."""
    environ = os.environ if environ is None else environ
    if environ.get("ZOO_HOME"):
        return Path(environ["ZOO_HOME"]).expanduser().absolute()
    if sys.platform == "win32":
        base = environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "zoo" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "zoo"
    cache = environ.get("XDG_CACHE_HOME", "")
    base = Path(cache) if os.path.isabs(cache) else Path.home() / ".cache"  # the XDG spec ignores relative ones
    return base / "zoo"


# -- names --------------------------------------------------------------------------------


def _problem(name: object) -> str | None:
    """Why `name` cannot be a stored name, or None when it can."""
    if not isinstance(name, str):
        return f"a stored name is a string, got {type(name).__name__}"
    if "/" in name or "\\" in name or name.startswith("~"):
        return "it is a path: a stored name is NAME.TAG, with no directories"
    parts = name.split(".")
    if len(parts) != 2:
        return "it must be NAME.TAG: two parts joined by one dot"
    for part, what in zip(parts, ("NAME", "TAG"), strict=True):
        if not IDENTIFIER.fullmatch(part):  # whole: a trailing newline is no part of a name
            return (
                f"its {what} {part!r} must be lowercase letters, digits, '-' and '_', starting with a letter or digit"
            )
        if len(part) > MAX_PART:
            return f"its {what} is {len(part)} characters long; at most {MAX_PART}"
    return None


def is_name(text: object) -> bool:
    """Whether `text` is a valid stored name (``NAME.TAG``)."""
    return _problem(text) is None


def check_name(name: object) -> str:
    """`name` if it is a valid stored name; else `NameSyntaxError` saying what is wrong."""
    problem = _problem(name)
    if problem is not None:
        raise NameSyntaxError(f"{name!r} is not a valid stored name: {problem} (e.g. 'glove.mine', 'seq2seq.rev-v2')")
    return name  # type: ignore[return-value]


# -- entries ------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoreEntry:
    """One stored name.

    **Arguments:**

    - `name`: ``NAME.TAG``.
    - `kind`: ``"model"`` (a file `zoo.load` rebuilds) or ``"vectors"`` (word vectors
      `zoo.vectors.KeyedVectors.load` reads).
    - `architecture`: a model's canonical name (``seq2seq+luong-general``), or what the
      vectors are (``20000 words, dim 300``).
    - `size`: the file's size in bytes.
    - `source`: where it came from (``/data/glove.txt (GloVe text)``), or ``""`` if unknown.
    - `date`: when it entered the store (ISO 8601, UTC).
    - `checksum`: the file's ``zoo.checksum``.
    - `path`: the file.
    """

    name: str
    kind: str
    architecture: str
    size: int
    source: str
    date: str
    checksum: str
    path: Path

    def record(self) -> dict[str, Any]:
        """The entry as the index keeps it (no path: the name gives it)."""
        record = asdict(self)
        del record["path"], record["name"]
        return record


class Store:
    """The model store at `root` (see the module docstring); nothing is created until something is added."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)
        self.models = self.root / "models"
        self.index_path = self.root / "index.json"

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    def path_of(self, name: str) -> Path:
        """Where the file of `name` is (or would be)."""
        return self.models / f"{check_name(name)}{_SUFFIX}"

    # -- reading ------------------------------------------------------------------------

    def _read_index(self) -> dict[str, dict[str, Any]]:
        """The index's records; a malformed index reads as empty (the files still list). One that
        cannot be read (no permission, a FIFO, a link, larger than any index) is a `WeightsError`."""
        if not os.path.lexists(self.index_path):
            return {}
        try:
            text = read_small(self.index_path, "model store index", limit=MAX_INDEX_BYTES, follow=False)
        except DataError as error:
            raise WeightsError(f"model store {self.root}: {error}") from None
        try:
            data = json.loads(text.decode("utf-8"))
        except (ValueError, RecursionError):
            return {}
        if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
            return {}
        return {k: v for k, v in data["models"].items() if is_name(k) and isinstance(v, dict)}

    def _stored_files(self) -> dict[str, Path]:
        """The entries' files: regular files (a link or anything else in their place is left out)."""
        if not os.path.lexists(self.models):
            return {}
        self._check_models_directory()
        try:
            found = {p.name[: -len(_SUFFIX)]: p for p in self.models.iterdir() if p.name.endswith(_SUFFIX)}
        except OSError as error:
            raise WeightsError(f"model store: cannot read {self.models}: {error.strerror or error}") from error
        return {name: path for name, path in found.items() if is_name(name) and _is_regular(path)}

    def _check_models_directory(self) -> None:
        if self.models.is_symlink() or (os.path.lexists(self.models) and not self.models.is_dir()):
            raise WeightsError(
                f"model store: {self.models} is a symbolic link or not a directory; the store keeps its files in its "
                "own directory: remove it (zoo recreates it)"
            )

    def _check_entry_path(self, name: str, path: Path) -> None:
        """Refuse an entry path that holds anything but a regular file: a symbolic link (the store
        would read or write its target, outside the store), a FIFO, a directory."""
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return
        except OSError as error:
            raise WeightsError(f"model store: cannot read {path}: {error.strerror or error}") from error
        if not stat.S_ISREG(info.st_mode):
            what = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a regular file"
            raise WeightsError(
                f"model store: the file of {name!r} ({path}) is {what}; the store serves and writes only its own "
                f"regular files: remove it (rm {path}) and import the file again"
            )

    def _check_recorded(self, name: str, path: Path) -> None:
        """Refuse a file that is not the one imported under `name`: its ``zoo.checksum`` (read from
        its header, cheaply) must be the one the index recorded. The file's own checksum is
        checked over its bytes when it is loaded (`zoo.load`)."""
        record = self._read_index().get(name)
        if record is None or not isinstance(record.get("checksum"), str) or not record["checksum"]:
            return  # an entry the index does not know: its file alone speaks for it
        found = _header_checksum(path)
        if found != record["checksum"]:
            what = "is not a zoo file" if found is None else f"has checksum {found[:23]}..."
            raise WeightsError(
                f"model store: the file of {name!r} ({path}) was replaced after it was imported: it {what}, but "
                f"{record['checksum'][:23]}... was imported. Import it again (zoo import FILE --as {name} --replace) "
                f"or remove it (zoo models --remove {name})"
            )

    def entries(self) -> dict[str, StoreEntry]:
        """Every stored name (sorted) and its entry; only names whose file exists."""
        records = self._read_index()
        entries = {}
        for name, path in sorted(self._stored_files().items()):
            record = records.get(name)
            entry = _from_record(name, path, record) if record is not None else None
            entries[name] = entry if entry is not None else _from_file(name, path)
        return entries

    def names(self) -> list[str]:
        return sorted(self._stored_files())

    def get(self, name: str) -> StoreEntry | None:
        """The entry of `name`, None if the store does not hold it (`name` must be valid)."""
        path = self.path_of(name)
        if not _is_regular(path):
            return None
        record = self._read_index().get(name)
        entry = _from_record(name, path, record) if record is not None else None
        return entry if entry is not None else _from_file(name, path)

    def find(self, name: str) -> Path | None:
        """The file of `name`, None if the store does not hold it or `name` is not a stored name."""
        if not is_name(name):
            return None
        path = self.path_of(name)
        if os.path.lexists(self.models):
            self._check_models_directory()
        self._check_entry_path(name, path)
        if not path.is_file():
            return None
        self._check_recorded(name, path)
        return path

    def describe_missing(self, name: str) -> str:
        """Why `name` is not found here, with the close stored names and how to add it."""
        names = self.names()
        held = f"it holds {len(names)} name{'s' if len(names) != 1 else ''}" if names else "it is empty"
        text = f"the model store ({self.root}) has no {name!r} ({held}; `zoo models` lists them)."
        text += close_matches(name, names)
        return text + (f" `zoo import FILE --as {name}` adds a file under that name." if is_name(name) else "")

    # -- writing ------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's lock (exclusive between processes); creates the store if needed."""
        try:
            self.models.mkdir(parents=True, exist_ok=True)
            handle = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError as error:
            raise _store_error(self.root, error) from error
        try:
            _lock(handle, self.root)
            try:
                yield
            finally:
                _unlock(handle)
        finally:
            os.close(handle)

    def add(
        self,
        name: str,
        write: Any,
        *,
        kind: str,
        architecture: str,
        source: str,
        checksum: str,
        replace: bool = False,
    ) -> StoreEntry:
        """Store a file under `name`: ``write(path)`` writes it (atomically) at the entry's path.

        Under the lock: refuses a name already held unless `replace`, writes, then
        records the entry in the index. Returns the entry.
        """
        path = self.path_of(name)
        if kind not in ("model", "vectors"):
            raise WeightsError(f"a stored entry is a 'model' or 'vectors', not {kind!r}")
        with self.locked():
            self._check_models_directory()
            self._check_entry_path(name, path)  # never write through a link planted at the entry's path
            if path.exists() and not replace:
                raise WeightsError(
                    f"the model store already holds {name!r}; choose another name, replace it "
                    f"(zoo import ... --replace), or remove it first (zoo models --remove {name})"
                )
            write(path)
            self._check_entry_path(name, path)
            date = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
            entry = StoreEntry(name, kind, architecture, path.stat().st_size, source, date, checksum, path)
            records = self._read_index()
            records[name] = entry.record()
            self._write_index(records)
        return entry

    def remove(self, name: str) -> StoreEntry:
        """Remove `name` (its file and its record); `WeightsError` with close names if it is not held."""
        path = self.path_of(name)
        with self.locked():
            entry = self.get(name)
            if entry is None:
                raise WeightsError(f"nothing to remove: {self.describe_missing(name)}")
            try:
                path.unlink()
            except OSError as error:
                raise _store_error(path, error) from error
            records = self._read_index()
            records.pop(name, None)
            self._write_index(records)
        return entry

    def _write_index(self, records: Mapping[str, Mapping[str, Any]]) -> None:
        """Replace the index atomically (the lock is held: no one else writes it)."""
        for stale in self.root.glob(".index.json.*.tmp"):  # left by a killed writer
            stale.unlink(missing_ok=True)
        text = json.dumps({"format": INDEX_FORMAT, "models": dict(sorted(records.items()))}, indent=1)
        temporary = self.root / f".index.json.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            with open(temporary, "x", encoding="utf-8") as handle:
                handle.write(text + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.index_path)
            _fsync_directory(self.root)
        except OSError as error:
            raise _store_error(self.index_path, error) from error
        finally:
            temporary.unlink(missing_ok=True)


def default_store(environ: Mapping[str, str] | None = None) -> Store:
    """The store at `store_home` (read from the environment at each call)."""
    return Store(store_home(environ))


# -- the hook -----------------------------------------------------------------------------


class StoreResolver:
    """The store as a ``zoo_resolve_weights`` implementation (see the module docstring)."""

    @hookimpl(tryfirst=True)
    def zoo_resolve_weights(self, name: str, tag: str) -> str | None:
        try:
            path = default_store().find(f"{name}.{tag}")
        except WeightsError as error:  # a link, a replaced file: said as the store's, not as a plugin's failure
            error.raised_by_core = True  # type: ignore[attr-defined]
            raise
        return None if path is None else str(path)


RESOLVER = StoreResolver()
"""Registered by every `Registry` under the name ``zoo.store``."""


# -- helpers ------------------------------------------------------------------------------


def _from_record(name: str, path: Path, record: Mapping[str, Any]) -> StoreEntry | None:
    """The entry the index records, or None if the record is malformed."""
    fields = {"kind": str, "architecture": str, "size": int, "source": str, "date": str, "checksum": str}
    if not all(isinstance(record.get(k), t) for k, t in fields.items()):
        return None
    try:
        size = path.stat().st_size
    except OSError:
        size = record["size"]
    return StoreEntry(name, **{k: record[k] for k in fields if k != "size"}, size=size, path=path)


def _is_regular(path: Path) -> bool:
    """Whether `path` itself (not what a link points to) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _header_checksum(path: Path) -> str | None:
    """The ``zoo.checksum`` in the safetensors header of `path`, None when it has none or is no such file."""
    try:
        with open(path, "rb") as handle:
            size = int.from_bytes(handle.read(8), "little")
            if not 2 <= size <= MAX_INDEX_BYTES:
                return None
            header = json.loads(handle.read(size).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    metadata = header.get("__metadata__") if isinstance(header, dict) else None
    value = metadata.get("zoo.checksum") if isinstance(metadata, dict) else None
    return value if isinstance(value, str) else None


def _from_file(name: str, path: Path) -> StoreEntry:
    """An entry the index does not know, described by its file's header alone."""
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="numpy") as handle:
            metadata = dict(handle.metadata() or {})
        info = path.stat()
    except Exception:  # a damaged file: listed as such, refused by zoo.load
        metadata, info = {}, None
    kind = metadata.get("zoo.kind", "model") if metadata else "?"
    architecture = metadata.get("zoo.name", "") if kind == "model" else metadata.get("zoo.kind", "unreadable file")
    date = datetime.fromtimestamp(info.st_mtime, UTC).replace(microsecond=0).isoformat() if info else ""
    return StoreEntry(
        name,
        kind,
        architecture or "?",
        info.st_size if info else 0,
        "",
        date.replace("+00:00", "Z"),
        metadata.get("zoo.checksum", ""),
        path,
    )


def _store_error(path: Path, error: OSError) -> WeightsError:
    cause = os.strerror(error.errno).lower() if error.errno else str(error)
    hint = "; set ZOO_HOME to a directory you may write to" if error.errno in (errno.EACCES, errno.EROFS) else ""
    return WeightsError(f"model store: cannot write {path}: {cause}{hint}")


def _fsync_directory(directory: Path) -> None:
    if sys.platform == "win32":
        return
    handle = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(handle)
    except OSError as error:
        if error.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(handle)


def _lock(handle: int, root: Path) -> None:
    """Take the exclusive lock on `handle`, waiting up to `LOCK_TIMEOUT_S`."""
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    while True:
        try:
            if sys.platform == "win32":
                import msvcrt

                msvcrt.locking(handle, msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK, errno.EDEADLK):
                raise _store_error(root / ".lock", error) from error
        if time.monotonic() > deadline:
            raise WeightsError(
                f"model store {root} is busy: another zoo process held its lock for {LOCK_TIMEOUT_S:.0f} s; "
                "wait for it to finish, or end it"
            )
        time.sleep(0.05)


def _unlock(handle: int) -> None:
    if sys.platform == "win32":
        import msvcrt

        with contextlib.suppress(OSError):
            os.lseek(handle, 0, os.SEEK_SET)
            msvcrt.locking(handle, msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(handle, fcntl.LOCK_UN)
