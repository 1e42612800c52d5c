"""Labelled lines as integer arrays (`EncodedLines`): what training and featurising read.

A line is its text tokens and its labels. Both are kept as ids into the distinct tokens and
labels seen, in first-seen order, with CSR offsets per line; a token's fastText hash
(`zoo_word2vec.classifier.hashing`) is computed once per distinct token. fastText-format files
are read into this form by compiled code (`zoo_word2vec.classifier.reading`); lists of tokens
(`EncodedLines.from_lists`) give the same arrays.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from zoo.plugin_api import DataError
from zoo_word2vec.classifier.hashing import hash_strings

__all__ = ["EncodedLines", "csr"]


def csr(parts: Iterable[Sequence[int]], dtype: type = np.int32) -> tuple[np.ndarray, np.ndarray]:
    """Lists of ids as ``(offsets [L + 1] int64, ids [N] dtype)``."""
    parts = list(parts)
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in parts], out=offsets[1:])
    return offsets, np.fromiter((x for p in parts for x in p), dtype=dtype, count=int(offsets[-1]))


@njit(nogil=True, cache=True)
def _first_seen(ids: np.ndarray, size: int) -> np.ndarray:
    first = np.full(size, ids.shape[0], dtype=np.int64)
    for p in range(ids.shape[0] - 1, -1, -1):
        first[ids[p]] = p
    return first


def _take_lines(offsets: np.ndarray, ids: np.ndarray, lines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The CSR rows `lines` of ``(offsets, ids)``, in that order."""
    sizes = offsets[lines + 1] - offsets[lines]
    new = np.zeros(lines.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=new[1:])
    starts = np.repeat(offsets[lines] - new[:-1], sizes)
    return new, ids[np.arange(int(new[-1]), dtype=np.int64) + starts]


@dataclass(frozen=True, eq=False)
class EncodedLines:
    """Lines of text tokens and labels as ids.

    **Fields:**

    - `tokens`: the distinct text tokens, first seen first; `hashes` ``[W]`` int32 their hashes.
    - `ids` ``[T]`` int32 and `offsets` ``[L + 1]`` int64: line l's tokens are
      ``tokens[i] for i in ids[offsets[l]:offsets[l + 1]]``.
    - `labels`: the distinct labels, first seen first; `label_ids` ``[K]`` int32 and
      `label_offsets` ``[L + 1]`` int64 each line's labels alike.
    """

    tokens: list[str]
    hashes: np.ndarray
    ids: np.ndarray
    offsets: np.ndarray
    labels: list[str]
    label_ids: np.ndarray
    label_offsets: np.ndarray

    def __post_init__(self) -> None:
        if self.offsets.shape != self.label_offsets.shape or len(self.hashes) != len(self.tokens):
            raise DataError(f"{self.offsets.size - 1} lines of text but {self.label_offsets.size - 1} of labels")

    def __len__(self) -> int:
        return self.offsets.size - 1

    @classmethod
    def from_lists(cls, texts: Sequence[Sequence[str]], labels: Sequence[Sequence[str]]) -> EncodedLines:
        """The arrays of `texts` (token lists) and `labels` (one sequence of labels per text)."""
        if len(texts) != len(labels):
            raise DataError(f"{len(texts)} texts but {len(labels)} label lists")
        index: dict[str, int] = {}
        offsets, ids = csr([index.setdefault(t, len(index)) for t in text] for text in texts)
        label_index: dict[str, int] = {}
        label_offsets, label_ids = csr([label_index.setdefault(y, len(label_index)) for y in ys] for ys in labels)
        tokens = list(index)
        return cls(tokens, hash_strings(tokens), ids, offsets, list(label_index), label_ids, label_offsets)

    def subset(self, lines: Iterable[int]) -> EncodedLines:
        """The lines `lines`, in that order (the distinct tokens and labels kept as they are)."""
        lines = np.asarray(list(lines), dtype=np.int64).reshape(-1)
        if lines.size and (lines.min() < -len(self) or lines.max() >= len(self)):
            raise IndexError(f"line index out of range for {len(self)} lines")
        lines = lines % max(len(self), 1)
        offsets, ids = _take_lines(self.offsets, self.ids, lines)
        label_offsets, label_ids = _take_lines(self.label_offsets, self.label_ids, lines)
        return EncodedLines(self.tokens, self.hashes, ids, offsets, self.labels, label_ids, label_offsets)

    def texts(self) -> list[list[str]]:
        """Each line's tokens as strings."""
        tokens, ids = self.tokens, self.ids.tolist()
        bounds = self.offsets.tolist()
        return [[tokens[i] for i in ids[a:b]] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]

    def line_labels(self) -> list[tuple[str, ...]]:
        """Each line's labels as strings."""
        labels, ids = self.labels, self.label_ids.tolist()
        bounds = self.label_offsets.tolist()
        return [tuple(labels[i] for i in ids[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]

    def token_counts(self) -> np.ndarray:
        """How often each distinct token occurs ``[W]`` int64."""
        return np.bincount(self.ids, minlength=len(self.tokens)).astype(np.int64)

    def label_counts(self) -> np.ndarray:
        """How often each distinct label occurs ``[N]`` int64."""
        return np.bincount(self.label_ids, minlength=len(self.labels)).astype(np.int64)

    def tokens_per_line(self) -> np.ndarray:
        """fastText's token count of each line ``[L]`` int64: its words, its labels and ``</s>``."""
        return np.diff(self.offsets) + np.diff(self.label_offsets) + 1

    def first_seen(self) -> np.ndarray:
        """Where each distinct token first occurs among the lines' tokens ``[W]`` int64 (one past the
        last token for a token of none of the lines, as after `subset`)."""
        return _first_seen(self.ids, len(self.tokens))
