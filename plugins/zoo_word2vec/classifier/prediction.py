"""fastText's ``predict``, to the float: the scores it ranks labels by and the probabilities it reports.

fastText ranks labels by ``log(p + 1e-5)`` in float32 (its ``std_log``) and reports
``exp`` of that, so a probability ``p`` comes back as about ``p + 1e-5``. Per loss:

- softmax: ``p`` is the softmax of the output scores, in float32;
- ova and ns: ``p = sigmoid(score)`` read from fastText's table (512 steps over [-8, 8],
  0 below, 1 above: ``Loss::sigmoid``), so it moves in steps of up to 0.008;
- hs: a label's score is the sum along its path of ``log(sigmoid + 1e-5)`` or
  ``log(1 - sigmoid + 1e-5)`` (the exact sigmoid), as fastText's depth-first search adds them.

A label is kept when ``p >= threshold`` (hs: when its score is at least
``log(threshold + 1e-5)``); the `k` best are returned, best first.
"""

from __future__ import annotations

import numpy as np

from zoo_word2vec.classifier.objectives import path_matrices
from zoo_word2vec.classifier.tree import huffman_tree

__all__ = ["fasttext_scores", "table_sigmoid", "top_k"]

_MAX_SIGMOID = np.float32(8.0)
_TABLE_SIZE = 512
_FLOOR = 1e-5
_SIGMOID_TABLE = np.array(
    [1.0 / (1.0 + np.exp(-float(np.float32(i * 2 * 8) / np.float32(_TABLE_SIZE) - np.float32(8))))
     for i in range(_TABLE_SIZE + 1)],
    dtype=np.float32,
)  # fmt: skip


def table_sigmoid(x: np.ndarray) -> np.ndarray:
    """fastText's ``Loss::sigmoid``: the table entry below `x` (float32 arithmetic, as fastText's)."""
    x = np.asarray(x, dtype=np.float32)
    inside = np.clip(x, -_MAX_SIGMOID, _MAX_SIGMOID)
    index = ((inside + _MAX_SIGMOID) * np.float32(_TABLE_SIZE) / _MAX_SIGMOID / np.float32(2)).astype(np.int64)
    values = _SIGMOID_TABLE[np.minimum(index, _TABLE_SIZE)]
    return np.where(x < -_MAX_SIGMOID, np.float32(0), np.where(x > _MAX_SIGMOID, np.float32(1), values))


def _std_log(p: np.ndarray) -> np.ndarray:
    return np.log(np.asarray(p, dtype=np.float64) + _FLOOR).astype(np.float32)


def _softmax32(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(-1, keepdims=True)).astype(np.float32)
    return (shifted / shifted.sum(-1, keepdims=True, dtype=np.float32)).astype(np.float32)


def fasttext_scores(
    logits: np.ndarray, loss: str, counts: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(scores [n, classes] float32, kept [n, classes] bool)``: fastText's ranking score of each label
    (``std_log`` of its probability) and whether the threshold keeps it."""
    logits = np.asarray(logits, dtype=np.float32)
    if loss == "hs":
        right, left = path_matrices(huffman_tree(counts), logits.shape[-1])
        f = (1.0 / (1.0 + np.exp(-logits[:, : right.shape[0]].astype(np.float64)))).astype(np.float32)
        scores = (_std_log(f) @ right + _std_log(1.0 - f) @ left).astype(np.float32)
        return scores, scores >= _std_log(np.float32(threshold))
    p = table_sigmoid(logits) if loss in ("ova", "ns") else _softmax32(logits)
    return _std_log(p), p >= np.float32(threshold)


def top_k(scores: np.ndarray, kept: np.ndarray, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per row: the indices of the `k` best kept scores (``k = -1``: all), best first, and the
    probabilities fastText reports for them (``exp`` of the float32 score)."""
    limit = scores.shape[1] if k == -1 else min(k, scores.shape[1])
    out = []
    for row, keep in zip(scores, kept, strict=True):
        order = np.argsort(-row, kind="stable")
        order = order[keep[order]][:limit]
        out.append((order, np.exp(row[order]).astype(np.float32)))
    return out
