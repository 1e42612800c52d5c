"""Token streams for language models: text in, truncated-BPTT batches out.

`read_tokens` splits a text file into words (one sentence a line, each line
ending with the end-of-sentence token, as in Mikolov's Penn Treebank setup) or
into characters. `StreamBatches` cuts one long id stream into `batch_size`
contiguous rows and serves them `unroll` columns at a time, so row r of one
batch continues row r of the previous one: a model that carries its state
across batches reads every row as one unbroken sequence.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

from zoo.data.textfile import open_text
from zoo.data.vocab import SPECIALS, Vocab
from zoo.errors import DataError

__all__ = ["LEVELS", "StreamBatches", "decode_text", "encode_text", "read_text", "read_tokens", "split_text"]

LEVELS = ("word", "char")
"""How text splits into tokens: whitespace-separated words, or single characters."""

Batch = dict[str, np.ndarray]


def _check_level(level: str) -> None:
    if level not in LEVELS:
        raise DataError(f"level must be one of {list(LEVELS)}, got {level!r}")


def read_text(path: str | Path, *, encoding: str = "utf-8", errors: str = "strict") -> str:
    """The whole of a text file, plain or gzip, decoded with `encoding` and `errors`
    (see `zoo.data.textfile`: undecodable, binary or truncated files are a `DataError`)."""
    with open_text(path, encoding=encoding, errors=errors) as text:
        return "".join(text.pieces())


def split_text(text: str, level: str, *, eos: str = SPECIALS["eos"]) -> list[str]:
    """Tokens of `text`: for ``"word"``, each non-blank line's words then `eos`;
    for ``"char"``, every character (newlines included)."""
    _check_level(level)
    if level == "char":
        return list(text)
    tokens: list[str] = []
    for line in text.splitlines():
        words = line.split()
        if words:
            tokens += [*words, eos]
    return tokens


def read_tokens(path: str | Path, level: str, *, encoding: str = "utf-8", errors: str = "strict") -> list[str]:
    """`split_text` of a file (decoded as in `read_text`); a `DataError` if it holds no tokens."""
    tokens = split_text(read_text(path, encoding=encoding, errors=errors), level)
    if not tokens:
        raise DataError(f"{path} holds no text")
    return tokens


def boundary_id(vocab: Vocab, level: str) -> int:
    """The token that stands before every text: end-of-sentence for words, newline for characters."""
    if level == "char" and "\n" in vocab:
        return vocab.id("\n")
    if "eos" in vocab.specials:
        return vocab.eos_id
    return vocab.unk_id


def encode_text(vocab: Vocab, text: str, level: str) -> np.ndarray:
    """Ids of the boundary token followed by `text`'s tokens (no end-of-sentence after the last word).

    Generation conditions on this: a model trained on a stream has always seen
    a boundary before the start of a sentence or line.
    """
    tokens = split_text(text, level)
    if level == "word" and tokens:
        tokens = tokens[:-1]  # the prompt continues: no sentence end after it
    return np.concatenate([[boundary_id(vocab, level)], vocab.encode(tokens)]).astype(np.int32)


def decode_text(vocab: Vocab, ids: Iterable[int], level: str) -> str:
    """Text of `ids`: words joined by spaces with end-of-sentence as a line break; characters joined.

    Padding, begin-of-sequence and (for characters) end-of-sequence tokens are dropped.
    """
    _check_level(level)
    roles = {vocab.special_id(r): r for r in vocab.specials if r != "unk"}
    if level == "char":
        return "".join(vocab.tokens[int(i)] for i in ids if int(i) not in roles)
    lines: list[list[str]] = [[]]
    for i in ids:
        role = roles.get(int(i))
        if role == "eos":
            lines.append([])
        elif role is None:
            lines[-1].append(vocab.tokens[int(i)])
    return "\n".join(" ".join(words) for words in lines)


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
