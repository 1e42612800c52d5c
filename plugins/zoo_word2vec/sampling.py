"""The sampling tables word2vec training draws from, built once from the vocabulary counts.

- Frequent-word subsampling (Mikolov et al. 2013, as word2vec.c computes it): a word
  of corpus frequency ``f = count / total`` is kept with probability
  ``min(1, (sqrt(f / s) + 1) * s / f)`` for the threshold ``s`` (`sample`).
- Negative sampling noise: ``P_n(w) ∝ count(w) ** 0.75``, drawn in O(1) from a
  Walker alias table (exact, unlike word2vec.c's 10^8-entry unigram table).

Both are stored as 32-bit integer thresholds, so the compiled CPU kernels and the
JAX path compare the same uniform 32-bit draws against the same numbers.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from zoo.plugin_api import DataError

__all__ = ["AliasTable", "alias_table", "keep_probabilities", "keep_thresholds", "noise_distribution"]

_TWO_32 = float(1 << 32)


def keep_probabilities(counts: np.ndarray, sample: float) -> np.ndarray:
    """Probability ``[V]`` of keeping each occurrence of each word (1 where `sample` is 0).

    **Arguments:**

    - `counts`: ``[V]`` corpus counts (words with count 0 are never seen; they get 1).
    - `sample`: the threshold ``s``; 0 disables subsampling.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if sample < 0:
        raise DataError(f"sample must be >= 0 (0 disables subsampling), got {sample}")
    if sample == 0:
        return np.ones_like(counts)
    threshold = sample * counts.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        keep = (np.sqrt(counts / threshold) + 1.0) * threshold / counts
    return np.where(counts > 0, np.minimum(keep, 1.0), 1.0)


def keep_thresholds(counts: np.ndarray, sample: float) -> np.ndarray:
    """`keep_probabilities` as uint32: keep when a uniform 32-bit draw is below it (``2**32 - 1`` = always)."""
    scaled = np.round(keep_probabilities(counts, sample) * _TWO_32)
    return np.minimum(scaled, _TWO_32 - 1).astype(np.uint32)


def noise_distribution(counts: np.ndarray, exponent: float = 0.75) -> np.ndarray:
    """``counts ** exponent`` normalised to sum to 1 (``[V]``, float64)."""
    weights = np.power(np.asarray(counts, dtype=np.float64), exponent)
    weights[np.asarray(counts) <= 0] = 0.0
    total = weights.sum()
    if total <= 0:
        raise DataError("no word has a positive count: cannot draw negative samples")
    return weights / total


class AliasTable(NamedTuple):
    """Walker's alias method: draw bucket ``i`` uniformly, keep it when a uniform
    32-bit draw is below ``threshold[i]``, else take ``alias[i]``.

    - `threshold`: ``[V]`` uint32 (``2**32 - 1`` = always keep).
    - `alias`: ``[V]`` int32.
    """

    threshold: np.ndarray
    alias: np.ndarray

    def probabilities(self) -> np.ndarray:
        """The distribution the table draws from (``[V]``), for checks."""
        size = len(self.alias)
        own = self.threshold.astype(np.float64) / _TWO_32
        own[self.threshold == np.iinfo(np.uint32).max] = 1.0
        probs = own / size
        np.add.at(probs, self.alias, (1.0 - own) / size)
        return probs


def alias_table(probabilities: np.ndarray) -> AliasTable:
    """Build the alias table of a distribution ``[V]`` (Vose's O(V) construction)."""
    probs = np.asarray(probabilities, dtype=np.float64)
    size = len(probs)
    scaled = probs * size / probs.sum()
    alias = np.arange(size, dtype=np.int32)
    small = [i for i in range(size) if scaled[i] < 1.0]
    large = [i for i in range(size) if scaled[i] >= 1.0]
    while small and large:
        lo, hi = small.pop(), large.pop()
        alias[lo] = hi
        scaled[hi] -= 1.0 - scaled[lo]
        (small if scaled[hi] < 1.0 else large).append(hi)
    for i in small + large:  # leftovers are 1 up to rounding
        scaled[i] = 1.0
    threshold = np.minimum(np.round(scaled * _TWO_32), _TWO_32 - 1).astype(np.uint32)
    return AliasTable(threshold, alias)
