"""The memory budget: work sized from outside is refused before it allocates more than the machine has.

A file's header, a flag or a hyperparameter can ask for any size (``--dim 1e9``, a word2vec
header claiming 10^9 dimensions, a fastText ``.bin`` whose ``maxn`` makes 10^8 n-grams). Every
reader and builder estimates the bytes such a size will allocate and calls `check_memory`
first, so the answer is a `MemoryBudgetError` giving the figure and the limit, in milliseconds,
not a raw ``MemoryError``, an out-of-memory traceback from XLA or a process the kernel kills.

The limit is the memory the process can still get: the least of the machine's available memory
(``MemAvailable``), what its cgroup still allows and what its address-space/data rlimits leave.
``ZOO_MEMORY_LIMIT`` (bytes, or with a unit: ``512M``, ``8G``, ``1.5T``) sets it instead, for
one process or a whole run; `memory_limit` sets it for a block of code. ``ZOO_MEMORY_LIMIT=none``
turns the check off.

`footprint` scales the estimates within a block: ``zoo train`` multiplies a model's parameter
bytes by 4 (the parameters, their gradients and Adam's two moments).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import resource
from collections.abc import Iterator
from pathlib import Path

from zoo.errors import DataError, MemoryBudgetError

__all__ = [
    "available_memory",
    "check_memory",
    "check_search",
    "footprint",
    "format_bytes",
    "memory_limit",
    "parse_bytes",
]

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}
_LIMIT: contextvars.ContextVar[int | None] = contextvars.ContextVar("zoo_memory_limit", default=None)
_SCALE: contextvars.ContextVar[tuple[float, str]] = contextvars.ContextVar("zoo_memory_scale", default=(1.0, ""))
_HOW = (
    "set ZOO_MEMORY_LIMIT (e.g. ZOO_MEMORY_LIMIT=64G; 'none' turns the check off) if the machine really has the "
    "memory, or ask for less"
)


def parse_bytes(text: str) -> int | None:
    """``"512M"`` -> 536870912, ``"none"`` -> None; a `MemoryBudgetError` for anything else."""
    text = text.strip().lower()
    if text in ("none", "off", "0"):
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgtp]?)(?:i?b)?", text)
    if match is None:
        raise MemoryBudgetError(f"ZOO_MEMORY_LIMIT={text!r} is not a size: give bytes or e.g. 512M, 8G, 1.5T, or none")
    return int(float(match[1]) * _UNITS[match[2]])


def format_bytes(count: float) -> str:
    """``1288490188800`` -> ``"1.2 TB"``: a size for a message (decimal units)."""
    for unit, size in (("EB", 1e18), ("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{int(count)} bytes"


def _read_int(path: str) -> int | None:
    try:
        text = Path(path).read_text()[:64].split()[0]
    except (OSError, IndexError):
        return None
    return int(text) if text.isdigit() else None


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo", "rb") as handle:
            for line in handle.read(1 << 16).decode("ascii", "replace").splitlines():
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _cgroup_left() -> int | None:
    limit, used = _read_int("/sys/fs/cgroup/memory.max"), _read_int("/sys/fs/cgroup/memory.current")
    if limit is None:  # cgroup v1
        limit, used = (_read_int("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
                       _read_int("/sys/fs/cgroup/memory/memory.usage_in_bytes"))  # fmt: skip
        if limit is not None and limit >= 1 << 60:
            limit = None
    return None if limit is None else max(limit - (used or 0), 0)


def _rlimit_left() -> int | None:
    vm = {}
    try:
        with open("/proc/self/status", "rb") as handle:
            for line in handle.read(1 << 16).decode("ascii", "replace").splitlines():
                key, _, value = line.partition(":")
                if key in ("VmSize", "VmData"):
                    vm[key] = int(value.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    left = []
    for which, key in ((resource.RLIMIT_AS, "VmSize"), (getattr(resource, "RLIMIT_DATA", None), "VmData")):
        if which is None:
            continue
        soft = resource.getrlimit(which)[0]
        if soft != resource.RLIM_INFINITY and key in vm:
            left.append(max(soft - vm[key], 0))
    return min(left) if left else None


def available_memory() -> int | None:
    """The bytes this process can still allocate (see the module's docstring), None when unknown."""
    figures = [f for f in (_meminfo_available(), _cgroup_left(), _rlimit_left()) if f is not None]
    return min(figures) if figures else None


def _limit() -> tuple[int | None, str]:
    """``(limit, where it comes from)``."""
    if (set_here := _LIMIT.get()) is not None:
        return set_here, "the memory limit set for this call"
    if (text := os.environ.get("ZOO_MEMORY_LIMIT")) is not None:
        return parse_bytes(text), f"ZOO_MEMORY_LIMIT={text}"
    return available_memory(), "the memory available to this process"


def check_memory(nbytes: float, what: str, *, model: bool = False) -> None:
    """Raise `MemoryBudgetError` when `what` (``"the input matrix (2000000 x 300 float32)"``) would
    allocate `nbytes` and that passes the limit. `model`: `nbytes` are a model's parameters, which
    the `footprint` in force scales (training holds gradients and optimiser state beside them)."""
    scale, why = _SCALE.get() if model else (1.0, "")
    need = float(nbytes) * scale
    limit, source = _limit()
    if limit is None or need <= limit:
        return
    scaled = f" ({format_bytes(nbytes)} x {scale:g}: {why})" if scale != 1 else ""
    raise MemoryBudgetError(f"{what} needs {format_bytes(need)}{scaled}, over {source} ({format_bytes(limit)}): {_HOW}")


def check_search(batch: int, width: int, length: int, vocab: int, what: str, *, state_bytes: int = 0) -> None:
    """Refuse a decoding search before it is compiled: `batch` inputs, `width` hypotheses each (a
    beam's width, the samples drawn), `length` tokens, over a vocabulary of `vocab`, each
    hypothesis carrying a decoder state of `state_bytes`. Per hypothesis it holds tokens and scores
    (live and finished, ``16 * length`` bytes), a step's scores over the vocabulary and their
    ranking (``16 * vocab``) and copies of the state (4 of them, as measured: 333 bytes a sample for
    a 4-word LSTM, 10 tokens); a beam ranks ``width * vocab`` candidates with int32 indices. Past
    2^31 - 1 candidates a `DataError`, past the budget a `MemoryBudgetError`, each naming `what`."""
    if width * vocab >= 1 << 31:
        raise DataError(
            f"{what}: {width} hypotheses x a vocabulary of {vocab} are {width * vocab} candidates a step, past the "
            "2^31 - 1 a search can rank: ask for fewer hypotheses (a beam of 5-10 is usual)"
        )
    check_memory(
        batch * width * (16 * length + 16 * vocab + 4 * state_bytes + 64),
        f"{what} ({batch} inputs x {width} hypotheses x {length} tokens, a vocabulary of {vocab})",
    )


@contextlib.contextmanager
def memory_limit(nbytes: int | str | None) -> Iterator[None]:
    """Within the block, `check_memory` compares with `nbytes` (an int or ``"8G"``) instead."""
    value = parse_bytes(nbytes) if isinstance(nbytes, str) else nbytes
    token = _LIMIT.set(value)
    try:
        yield
    finally:
        _LIMIT.reset(token)


@contextlib.contextmanager
def footprint(scale: float, why: str) -> Iterator[None]:
    """Within the block, every estimate of a model's parameters (``check_memory(..., model=True)``)
    counts `scale` times; `why` says for what."""
    token = _SCALE.set((scale, why))
    try:
        yield
    finally:
        _SCALE.reset(token)
