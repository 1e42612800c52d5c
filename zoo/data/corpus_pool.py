"""Reading a corpus with several worker processes, and merging what they count in corpus order.

Tokenising is pure Python, so threads would hold one core between them; the
workers here are processes (`zoo.data.worker_pool`: fresh interpreters, never
forks, no ``__main__`` guard needed). Each reads one `CorpusPart` at a time
(`zoo.data.corpus_files.split_corpus`), and the results come back in part order,
so what is built from them does not depend on how many workers there were::

    counts = count_tokens("corpus/*.txt", workers=4)   # == count_tokens("corpus/*.txt")

Counts merge exactly: the sum of each word's counts, and the keys in order of
first appearance in the corpus (each part's keys are in its own order of first
appearance, and the parts are merged in corpus order), the order
`zoo.data.corpus.build_word_vocab` breaks frequency ties by.

Several processes of a `jax.distributed` run count one corpus together
(``count_tokens(..., across_processes=True)``): each counts its own block of the
parts (`process_share`), and the counts travel as bytes through
``jax.experimental.multihost_utils.process_allgather`` (`gather_counts`), so every
process ends with the same counts, those of one process counting alone.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from zoo.data.corpus_files import CorpusPart
from zoo.errors import DataError, DistributedError

__all__ = [
    "POOL_BYTES",
    "available_cores",
    "check_workers",
    "counts_from_bytes",
    "counts_to_bytes",
    "gather_counts",
    "merge_counts",
    "picklable",
    "pool_workers",
    "process_count",
    "process_share",
]

POOL_BYTES = 4 << 20
"""A corpus smaller than this (4 MiB of files) is read in the calling process: starting workers costs more."""


def available_cores() -> int:
    """The CPU cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def check_workers(workers: int | None) -> int:
    """The number of workers `workers` asks for (None: `available_cores`); a `DataError` unless >= 1."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise DataError(f"workers must be a whole number >= 1 (or None: one per core), got {workers!r}")
    return available_cores() if workers is None else workers


def pool_workers(parts: Sequence[CorpusPart], workers: int | None, *, given: bool = False) -> int:
    """How many worker processes reading `parts` is worth: at most `workers` (None: every core),
    at most one per part, and 1 (no pool) for a corpus under `POOL_BYTES` unless its parts were
    `given` by the caller."""
    wanted = check_workers(workers)
    if not given and sum(_size(part) for part in parts) < POOL_BYTES:
        return 1
    return max(1, min(wanted, len(parts)))


def _size(part: CorpusPart) -> int:
    stop = part.path.stat().st_size if part.stop is None else part.stop
    return max(0, stop - part.start)


def picklable(value: object) -> bool:
    """Whether `value` can be sent to a worker process (a lambda or a nested function cannot)."""
    try:
        pickle.dumps(value)
    except (pickle.PicklingError, AttributeError, TypeError):
        return False
    return True


def merge_counts(counts: Iterable[Counter[str]]) -> Counter[str]:
    """The sum of `counts`, in order: keys in order of first appearance across them."""
    merged: Counter[str] = Counter()
    for part in counts:
        merged.update(part)
    return merged


def counts_to_bytes(counts: Counter[str]) -> np.ndarray:
    """`counts` as a uint8 array (for a collective): ``[n, counts[n], lengths[n], utf-8 words]``, order kept."""
    words = [w.encode("utf-8", "surrogatepass") for w in counts]
    head = np.array([len(words)], dtype=np.int64).view(np.uint8)
    values = np.fromiter(counts.values(), dtype=np.int64, count=len(words)).view(np.uint8)
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words)).view(np.uint8)
    text = np.frombuffer(b"".join(words), dtype=np.uint8)
    return np.concatenate([head, values, lengths, text])


def counts_from_bytes(data: np.ndarray) -> Counter[str]:
    """The `Counter` `counts_to_bytes` wrote (its keys in the same order)."""
    data = np.ascontiguousarray(data, dtype=np.uint8)
    n = int(data[:8].view(np.int64)[0])
    values = data[8 : 8 + 8 * n].view(np.int64)
    lengths = data[8 + 8 * n : 8 + 16 * n].view(np.int64)
    text = data[8 + 16 * n :].tobytes()
    ends = np.cumsum(lengths)
    starts = ends - lengths
    words = (text[a:b].decode("utf-8", "surrogatepass") for a, b in zip(starts.tolist(), ends.tolist(), strict=True))
    return Counter(dict(zip(words, values.tolist(), strict=True)))


def _fingerprint(parts: Sequence[CorpusPart]) -> int:
    """A number every process computes alike from the same corpus parts (names, offsets, sizes)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(f"{part.path.name}\0{part.start}\0{part.stop}\0{part.path.stat().st_size}\n".encode())
    return int.from_bytes(digest.digest()[:7], "little")


def process_count() -> int:
    """The processes of the ``jax.distributed`` run (1 without one; JAX's backend is not started then)."""
    import jax

    return jax.process_count() if jax.distributed.is_initialized() else 1


def process_share(parts: Sequence[CorpusPart]) -> list[CorpusPart]:
    """This process's block of `parts` in a ``jax.distributed`` run: process i of P reads the parts
    ``[i * n / P, (i + 1) * n / P)`` (all of them in a run of one process)."""
    import jax

    count = process_count()
    index = jax.process_index() if count > 1 else 0
    return list(parts[index * len(parts) // count : (index + 1) * len(parts) // count])


def gather_counts(local: Counter[str] | Exception, parts: Sequence[CorpusPart]) -> Counter[str]:
    """Every process's `local` counts (those of its `process_share` of `parts`), merged in process
    order, which is part order: the same counts on every process, those of one process reading all.

    The counts travel as bytes (`counts_to_bytes`, padded to the longest) through
    ``multihost_utils.process_allgather``. Every process must call it, with the same parts (the same
    files): if one sees other files, every process raises `DistributedError`. A process whose
    counting failed passes its error as `local`: it raises it, and the others a `DistributedError`
    naming it (rather than waiting for its counts forever).
    """
    count = process_count()
    if count == 1:
        if isinstance(local, Exception):
            raise local
        return local
    import jax
    from jax.experimental import multihost_utils

    failed = isinstance(local, Exception)
    payload = counts_to_bytes(Counter() if failed else local)
    # bytes only: JAX would narrow int64 to int32 without jax_enable_x64
    head = np.array([payload.size, _fingerprint(parts), failed], dtype=np.int64).view(np.uint8)
    heads = np.ascontiguousarray(multihost_utils.process_allgather(head), dtype=np.uint8)
    heads = heads.reshape(count, 24).view(np.int64)
    if failed:
        raise local
    if heads[:, 2].any():
        which = ", ".join(str(i) for i in np.flatnonzero(heads[:, 2]).tolist())
        raise DistributedError(f"process {which} could not count its share of the corpus (its own error says why)")
    if len(set(heads[:, 1].tolist())) > 1:
        raise DistributedError(
            f"the processes of this run see different corpus files (names or sizes differ; this is process "
            f"{jax.process_index()}): give every process the same files, on a shared file system or copied alike"
        )
    padded = np.zeros(int(heads[:, 0].max()), dtype=np.uint8)
    padded[: payload.size] = payload
    gathered = np.ascontiguousarray(multihost_utils.process_allgather(padded), dtype=np.uint8).reshape(count, -1)
    return merge_counts(counts_from_bytes(gathered[i, : int(heads[i, 0])]) for i in range(count))
