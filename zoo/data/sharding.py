"""This process's rows of every batch: the data side of training on several processes.

Every process draws the same global batches from the same deterministic
source (same files, same seed) and keeps only its own block of rows;
`zoo.training.parallel.global_batch` joins the blocks of all processes into
one global array. The global batch, the order of batches and the position a
checkpoint records are therefore those of a single-process run, whatever the
number of processes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import numpy as np

from zoo.data.batching import BatchSource
from zoo.errors import DataError

__all__ = ["ProcessRows", "even_rows"]

Batch = dict[str, np.ndarray]


def even_rows(index: int, count: int) -> Callable[[int], slice]:
    """Rows ``[index * n / count, (index + 1) * n / count)`` of an `n`-row batch: block `index` of `count`."""
    if not 0 <= index < count:
        raise ValueError(f"block {index} of {count} does not exist")

    def rows(n: int) -> slice:
        if n % count:
            raise DataError(
                f"a batch of {n} rows cannot be split evenly over {count} processes; "
                f"choose a batch size that is a multiple of {count}"
            )
        size = n // count
        return slice(index * size, (index + 1) * size)

    return rows


class ProcessRows:
    """The rows `rows(n)` of every `n`-row batch of `source`, at the source's positions.

    **Arguments:** `source`: any `BatchSource` (its batches: dicts of arrays whose
    first axis is the example axis, all of one length); `rows`: the slice of a
    global batch of `n` rows this process keeps (`even_rows`, or
    `zoo.training.parallel.process_rows` for a mesh).
    """

    def __init__(self, source: BatchSource, rows: Callable[[int], slice]) -> None:
        self.source, self.rows = source, rows

    def iterate(self, position: Mapping[str, int] | None = None) -> Iterator[tuple[Batch, dict[str, int]]]:
        for batch, after in self.source.iterate(position):
            lengths = {name: len(array) for name, array in batch.items()}
            if len(set(lengths.values())) > 1:
                raise DataError(f"the fields of a batch have different numbers of rows, {lengths}; cannot split it")
            part = self.rows(next(iter(lengths.values()), 0))
            yield {name: array[part] for name, array in batch.items()}, after
