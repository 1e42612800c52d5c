"""Static-shape batches: padding, masks, length buckets, resumable order.

A batch source yields ``(batch, position)`` pairs, where `position` is a small
JSON-able dict saying where the *next* batch starts; passing it back to
`iterate` resumes exactly there (checkpoints store it). Batch shapes come from
a fixed set (one per length bucket), so a jit-compiled step compiles once per
bucket and never again.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Protocol

import numpy as np

from zoo.errors import DataError
from zoo.naming.domains import check_count

__all__ = ["ArrayBatches", "BatchSource", "SequenceBatches", "bucket_boundaries", "pad_sequences"]

Batch = dict[str, np.ndarray]
Position = dict[str, int]


class BatchSource(Protocol):
    """Anything `zoo.train` can draw batches from."""

    def iterate(self, position: Mapping[str, int] | None = None) -> Iterator[tuple[Batch, Position]]:
        """Yield batches forever (epoch after epoch) from `position` (None: the start)."""
        ...


def pad_sequences(
    sequences: Sequence[Sequence[int]], *, pad_id: int, length: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Right-pad int sequences to `length` (default: the longest).

    **Returns:** ``(ids [n, length] int32, mask [n, length] bool)``.
    """
    width = max((len(s) for s in sequences), default=0) if length is None else length
    ids = np.full((len(sequences), width), pad_id, dtype=np.int32)
    mask = np.zeros((len(sequences), width), dtype=bool)
    for row, seq in enumerate(sequences):
        if len(seq) > width:
            raise DataError(f"sequence {row} has {len(seq)} tokens, more than the length {width}")
        ids[row, : len(seq)] = seq
        mask[row, : len(seq)] = True
    return ids, mask


def bucket_boundaries(lengths: Sequence[int], count: int = 4, *, batch_size: int = 1) -> list[int]:
    """Up to `count` bucket widths that pad the fewest positions; the last covers the longest.

    Every example is padded to its bucket's width and each bucket's last batch is
    filled up to `batch_size` rows, so a bucket of width w holding n examples costs
    ``w * ceil(n / batch_size) * batch_size`` positions. The widths minimising the
    sum are found exactly by dynamic programming over the distinct lengths
    (O(count x distinct lengths^2) in NumPy): on skewed length distributions this
    pads far less than quantile widths, whose last bucket spans the whole long tail.
    """
    if not len(lengths):
        raise DataError("no sequences to bucket")
    if count < 1 or batch_size < 1:
        raise ValueError(f"count and batch_size must be positive, got {count} and {batch_size}")
    widths, counts = np.unique(np.asarray(lengths, dtype=np.int64), return_counts=True)
    below = np.concatenate([[0], np.cumsum(counts)])  # below[i]: examples shorter than widths[i]
    m = len(widths)
    # best[i]: least cost of bucketing the first i distinct lengths; cuts[k][i]: where its last bucket starts
    best = np.full(m + 1, np.inf)
    best[0] = 0.0
    cuts = []
    for _ in range(min(count, m)):
        new, cut = np.full(m + 1, np.inf), np.zeros(m + 1, dtype=np.int64)
        new[0] = 0.0
        for i in range(1, m + 1):  # a bucket of width widths[i-1] holding distinct lengths j..i-1
            sizes = below[i] - below[:i]
            cost = best[:i] + widths[i - 1] * (-(-sizes // batch_size) * batch_size)
            cut[i] = int(np.argmin(cost))
            new[i] = cost[cut[i]]
        best = new
        cuts.append(cut)
    bounds, i = [], m
    for cut in reversed(cuts):
        if i == 0:
            break
        bounds.append(int(widths[i - 1]))
        i = cut[i]
    return sorted(bounds)


class SequenceBatches:
    """Batches of padded sequence fields, grouped into length buckets.

    **Arguments:**

    - `fields`: name -> list of int sequences, all lists equally long
      (e.g. ``{"src": [...], "tgt": [...]}``). Each batch holds ``name [B, W]``
      and ``name_mask [B, W]``.
    - `batch_size`: rows per batch; the last batch of a bucket is filled with
      empty (all-pad, all-masked) rows, so every batch has the same row count.
    - `pad_id`: pad value; `buckets`: widths (default: the 4 widths that pad
      the fewest positions of the longest field, see `bucket_boundaries`);
      `seed`: order of examples and batches, per epoch; `shuffle`: False keeps
      the data order (evaluation).
    """

    def __init__(
        self,
        fields: Mapping[str, Sequence[Sequence[int]]],
        *,
        batch_size: int,
        pad_id: int = 0,
        buckets: Sequence[int] | None = None,
        seed: int = 0,
        shuffle: bool = True,
    ) -> None:
        check_count(batch_size, "batch_size")
        sizes = {name: len(values) for name, values in fields.items()}
        if len(set(sizes.values())) != 1:
            raise DataError(f"every field needs the same number of examples, got {sizes}")
        self.fields = {name: [np.asarray(s, dtype=np.int32) for s in values] for name, values in fields.items()}
        self.size = next(iter(sizes.values()))
        if self.size == 0:
            raise DataError("no examples to batch")
        longest = [max(len(self.fields[n][i]) for n in self.fields) for i in range(self.size)]
        self.buckets = sorted(buckets) if buckets else bucket_boundaries(longest, batch_size=batch_size)
        if max(longest) > self.buckets[-1]:
            raise DataError(f"an example has {max(longest)} tokens, more than the widest bucket {self.buckets[-1]}")
        self.bucket_of = np.searchsorted(self.buckets, longest)
        self.batch_size, self.pad_id, self.seed, self.shuffle = batch_size, pad_id, seed, shuffle

    def epoch_plan(self, epoch: int) -> list[tuple[int, np.ndarray]]:
        """``(bucket, example indices)`` per batch for one epoch (deterministic)."""
        rng = np.random.default_rng([self.seed, epoch])
        plan = []
        for bucket in range(len(self.buckets)):
            members = np.flatnonzero(self.bucket_of == bucket)
            if self.shuffle:
                members = rng.permutation(members)
            plan += [(bucket, members[i : i + self.batch_size]) for i in range(0, len(members), self.batch_size)]
        if self.shuffle:
            plan = [plan[i] for i in rng.permutation(len(plan))]
        return plan

    def batches_per_epoch(self) -> int:
        return len(self.epoch_plan(0))

    def make_batch(self, bucket: int, indices: np.ndarray) -> Batch:
        width = self.buckets[bucket]
        batch: Batch = {}
        for name, values in self.fields.items():
            rows = [values[i] for i in indices] + [[]] * (self.batch_size - len(indices))
            batch[name], batch[f"{name}_mask"] = pad_sequences(rows, pad_id=self.pad_id, length=width)
        return batch

    def iterate(self, position: Mapping[str, int] | None = None) -> Iterator[tuple[Batch, Position]]:
        epoch = int((position or {}).get("epoch", 0))
        index = int((position or {}).get("batch", 0))
        while True:
            plan = self.epoch_plan(epoch)
            for i in range(index, len(plan)):
                nxt = {"epoch": epoch, "batch": i + 1} if i + 1 < len(plan) else {"epoch": epoch + 1, "batch": 0}
                yield self.make_batch(*plan[i]), nxt
            epoch, index = epoch + 1, 0

    def __iter__(self) -> Iterator[Batch]:
        """One pass over the data (no repetition)."""
        for bucket, indices in self.epoch_plan(0):
            yield self.make_batch(bucket, indices)


class ArrayBatches:
    """Row batches of equally long arrays (already padded), reshuffled per epoch.

    **Arguments:** `arrays`: name -> array with the example axis first;
    `batch_size`; `seed`; `shuffle`; `drop_last` (default True keeps shapes static).
    """

    def __init__(
        self,
        arrays: Mapping[str, np.ndarray],
        *,
        batch_size: int,
        seed: int = 0,
        shuffle: bool = True,
        drop_last: bool = True,
    ) -> None:
        check_count(batch_size, "batch_size")
        lengths = {k: len(v) for k, v in arrays.items()}
        if len(set(lengths.values())) != 1:
            raise DataError(f"arrays need the same first dimension, got {lengths}")
        self.arrays = {k: np.asarray(v) for k, v in arrays.items()}
        self.size = next(iter(lengths.values()))
        if self.size < batch_size and drop_last:
            raise DataError(f"{self.size} examples cannot fill one batch of {batch_size}")
        self.batch_size, self.seed, self.shuffle, self.drop_last = batch_size, seed, shuffle, drop_last

    def _order(self, epoch: int) -> np.ndarray:
        if not self.shuffle:
            return np.arange(self.size)
        return np.random.default_rng([self.seed, epoch]).permutation(self.size)

    def batches_per_epoch(self) -> int:
        full, rest = divmod(self.size, self.batch_size)
        return full + (0 if self.drop_last or rest == 0 else 1)

    def iterate(self, position: Mapping[str, int] | None = None) -> Iterator[tuple[Batch, Position]]:
        epoch = int((position or {}).get("epoch", 0))
        index = int((position or {}).get("batch", 0))
        count = self.batches_per_epoch()
        while True:
            order = self._order(epoch)
            for i in range(index, count):
                rows = order[i * self.batch_size : (i + 1) * self.batch_size]
                nxt = {"epoch": epoch, "batch": i + 1} if i + 1 < count else {"epoch": epoch + 1, "batch": 0}
                yield {k: v[rows] for k, v in self.arrays.items()}, nxt
            epoch, index = epoch + 1, 0
