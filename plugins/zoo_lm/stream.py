"""Token streams for language models: text in, truncated-BPTT batches out.

`read_tokens` splits a text file into words (one sentence a line, each line
ending with the end-of-sentence token, as in Mikolov's Penn Treebank setup) or
into characters (`zoo.data.text.split_text`). `StreamBatches` cuts one long id
stream into `batch_size` contiguous rows and serves them `unroll` columns at a
time, so row r of one batch continues row r of the previous one: a model that
carries its state across batches reads every row as one unbroken sequence.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

from zoo.plugin_api import DataError, open_text, split_text

__all__ = ["StreamBatches", "read_text", "read_tokens"]

Batch = dict[str, np.ndarray]


def read_text(path: str | Path, *, encoding: str = "utf-8", errors: str = "strict") -> str:
    """The whole of a text file, plain or gzip, decoded with `encoding` and `errors`
    (see `zoo.data.textfile`: undecodable, binary or truncated files are a `DataError`)."""
    with open_text(path, encoding=encoding, errors=errors) as text:
        return "".join(text.pieces())


def read_tokens(path: str | Path, level: str, *, encoding: str = "utf-8", errors: str = "strict") -> list[str]:
    """`split_text` of a file (decoded as in `read_text`); a `DataError` if it holds no tokens."""
    tokens = split_text(read_text(path, encoding=encoding, errors=errors), level)
    if not tokens:
        raise DataError(f"{path} holds no text")
    return tokens


class StreamBatches:
    """Truncated-BPTT batches over one long id stream (Zaremba et al.'s layout).

    The stream of N ids becomes ``batch_size`` rows of ``N // batch_size``
    consecutive ids. Batch i of an epoch holds columns ``[i*unroll, (i+1)*unroll)``
    of every row as ``ids``, the next ids as ``targets``, ``mask`` (True on real
    positions) and ``reset`` (True on the first batch of an epoch: every row
    starts afresh there). Every batch has the same shape.

    **Arguments:**

    - `ids`: the token ids, ``[N]``.
    - `batch_size`: rows; `unroll`: columns per batch (the backpropagation window).
    - `drop_last`: True (training) drops the columns that cannot fill a whole
      batch; False (evaluation) pads the last batch and masks the padding, so
      every id but each row's first is predicted exactly once.
    """

    def __init__(
        self, ids: Sequence[int] | np.ndarray, *, batch_size: int, unroll: int, drop_last: bool = True
    ) -> None:
        if batch_size < 1 or unroll < 1:
            raise DataError(f"batch_size and unroll must be positive, got {batch_size} and {unroll}")
        ids = np.asarray(ids, dtype=np.int32)
        columns = len(ids) // batch_size
        if columns < 2:
            raise DataError(
                f"{len(ids)} tokens are too few for {batch_size} rows: each row needs at least 2; "
                "use a smaller batch size or more text"
            )
        self.rows = ids[: batch_size * columns].reshape(batch_size, columns)
        self.batch_size, self.unroll, self.drop_last = batch_size, unroll, drop_last
        predicted = columns - 1
        self.count = predicted // unroll if drop_last else -(-predicted // unroll)
        if self.count == 0:
            raise DataError(
                f"{len(ids)} tokens in {batch_size} rows give {predicted} predictions per row, "
                f"fewer than one unroll of {unroll}; lower --unroll or --batch-size"
            )

    def batches_per_epoch(self) -> int:
        return self.count

    def tokens_per_epoch(self) -> int:
        """Targets predicted in one epoch (the real positions of all its batches)."""
        predicted = self.rows.shape[1] - 1
        return self.batch_size * min(predicted, self.count * self.unroll)

    def make_batch(self, index: int) -> Batch:
        start = index * self.unroll
        width = min(self.unroll, self.rows.shape[1] - 1 - start)
        ids = np.zeros((self.batch_size, self.unroll), np.int32)
        targets = np.zeros_like(ids)
        mask = np.zeros(ids.shape, bool)
        ids[:, :width] = self.rows[:, start : start + width]
        targets[:, :width] = self.rows[:, start + 1 : start + 1 + width]
        mask[:, :width] = True
        reset = np.full(self.batch_size, index == 0)
        return {"ids": ids, "targets": targets, "mask": mask, "reset": reset}

    def iterate(self, position: Mapping[str, int] | None = None) -> Iterator[tuple[Batch, dict[str, int]]]:
        """Batches forever, epoch after epoch, from `position` (``{"epoch", "batch"}``)."""
        epoch = int((position or {}).get("epoch", 0))
        index = int((position or {}).get("batch", 0))
        while True:
            for i in range(index, self.count):
                nxt = {"epoch": epoch, "batch": i + 1} if i + 1 < self.count else {"epoch": epoch + 1, "batch": 0}
                yield self.make_batch(i), nxt
            epoch, index = epoch + 1, 0

    def __iter__(self) -> Iterator[Batch]:
        """One pass over the stream."""
        for i in range(self.count):
            yield self.make_batch(i)
