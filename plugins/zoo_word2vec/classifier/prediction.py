"""fastText's ``predict``, to the float: the labels it picks, in its order, and the probabilities it reports.

fastText ranks labels by ``std_log(p) = log(p + 1e-5)`` in float32 and reports ``exp`` of
that, so a probability ``p`` comes back as about ``p + 1e-5``. Per loss:

- softmax: ``p`` is the softmax of the output scores, in float32;
- ova and ns: ``p = sigmoid(score)`` read from fastText's table (512 steps over [-8, 8],
  0 below, 1 above: ``Loss::sigmoid``), so it moves in steps of up to 0.008;
- hs: a depth-first search from the root adds ``std_log(1 - f)`` going left and
  ``std_log(f)`` going right (``f`` the exact sigmoid of the node's score), and skips a
  subtree once its score is below ``std_log(threshold)`` or below the k-th best found.

softmax, ova and ns keep a label when ``p >= threshold`` (``Loss::findKBest``). The `k` best
are kept in a binary heap and sorted as libstdc++'s ``push_heap``/``pop_heap``/``sort_heap``
do, emulated here step for step, so labels with equal scores (common with the sigmoid table)
come out in fastText's order too.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["fasttext_probabilities", "hs_search", "k_best", "table_sigmoid"]

_MAX_SIGMOID = np.float32(8.0)
_TABLE_SIZE = 512
_SIGMOID_TABLE = np.array(
    [
        1.0 / (1.0 + float(np.exp(-(np.float32(i * 2 * 8) / np.float32(_TABLE_SIZE) - np.float32(8)))))
        for i in range(_TABLE_SIZE + 1)
    ],
    dtype=np.float32,
)


def table_sigmoid(x: np.ndarray) -> np.ndarray:
    """fastText's ``Loss::sigmoid``: the table entry below `x` (float32 arithmetic, as fastText's)."""
    x = np.asarray(x, dtype=np.float32)
    inside = np.clip(x, -_MAX_SIGMOID, _MAX_SIGMOID)
    index = ((inside + _MAX_SIGMOID) * np.float32(_TABLE_SIZE) / _MAX_SIGMOID / np.float32(2)).astype(np.int64)
    values = _SIGMOID_TABLE[np.minimum(index, _TABLE_SIZE)]
    return np.where(x < -_MAX_SIGMOID, np.float32(0), np.where(x > _MAX_SIGMOID, np.float32(1), values))


def fasttext_probabilities(logits: np.ndarray, loss: str) -> np.ndarray:
    """What fastText's ``computeOutput`` makes of the output scores ``[n, classes]`` float32 (not hs)."""
    logits = np.asarray(logits, dtype=np.float32)
    if loss in ("ova", "ns"):
        return table_sigmoid(logits)
    shifted = np.exp(logits - logits.max(-1, keepdims=True)).astype(np.float32)
    return (shifted / shifted.sum(-1, keepdims=True, dtype=np.float32)).astype(np.float32)


@njit(nogil=True, inline="always")
def _std_log(x):
    return np.float32(np.log(np.float64(np.float32(x)) + 1e-5))


@njit(nogil=True, inline="always")
def _sift_up(scores, ids, hole, top, score, label):
    """libstdc++'s ``__push_heap`` with ``comp(a, b) = a.score > b.score`` (a min-heap on scores)."""
    parent = (hole - 1) // 2
    while hole > top and scores[parent] > score:
        scores[hole], ids[hole] = scores[parent], ids[parent]
        hole = parent
        parent = (hole - 1) // 2
    scores[hole], ids[hole] = score, label


@njit(nogil=True, inline="always")
def _pop(scores, ids, last):
    """libstdc++'s ``__pop_heap``: the front moves to `last`, the heap ``[0, last)`` is mended."""
    score, label = scores[last], ids[last]
    scores[last], ids[last] = scores[0], ids[0]
    hole, child, size = 0, 0, last
    while child < (size - 1) // 2:
        child = 2 * (child + 1)
        if scores[child] > scores[child - 1]:
            child -= 1
        scores[hole], ids[hole] = scores[child], ids[child]
        hole = child
    if size % 2 == 0 and child == (size - 2) // 2:
        child = 2 * (child + 1)
        scores[hole], ids[hole] = scores[child - 1], ids[child - 1]
        hole = child - 1
    _sift_up(scores, ids, hole, 0, score, label)


@njit(nogil=True, inline="always")
def _offer(scores, ids, size, k, score, label):
    """Push ``(score, label)`` and drop the worst beyond `k`, as ``findKBest`` and ``dfs`` do; the new size."""
    _sift_up(scores, ids, size, 0, score, label)
    size += 1
    if size > k:
        _pop(scores, ids, size - 1)
        size -= 1
    return size


@njit(nogil=True, inline="always")
def _sorted(scores, ids, size):
    """libstdc++'s ``sort_heap``: best first."""
    last = size
    while last > 1:
        last -= 1
        _pop(scores, ids, last)
    return scores[:size].copy(), ids[:size].copy()


@njit(nogil=True, cache=True)
def k_best(probabilities, k, threshold):
    """fastText's ``findKBest`` and ``sort_heap`` over one text's ``[classes]`` float32 probabilities:
    ``(scores [m] float32, labels [m] int64)``, best first."""
    n = probabilities.shape[0]
    scores = np.empty(n + 1, dtype=np.float32)
    ids = np.empty(n + 1, dtype=np.int64)
    size = 0
    for i in range(n):
        p = probabilities[i]
        if p < threshold:
            continue
        score = _std_log(p)
        if size == k and score < scores[0]:
            continue
        size = _offer(scores, ids, size, k, score, i)
    return _sorted(scores, ids, size)


@njit(nogil=True, cache=True)
def hs_search(node_scores, left, right, k, threshold):
    """fastText's ``HierarchicalSoftmaxLoss::dfs`` over one text: `node_scores` ``[classes]`` float32
    (output row i is the score of inner node ``classes + i``), `left`/`right` the tree's children.
    **Returns:** ``(scores [m] float32, labels [m] int64)``, best first."""
    classes = node_scores.shape[0]
    scores = np.empty(k + 1, dtype=np.float32)
    ids = np.empty(k + 1, dtype=np.int64)
    size = 0
    floor = _std_log(threshold)
    stack_node = np.empty(2 * classes + 1, dtype=np.int64)
    stack_score = np.empty(2 * classes + 1, dtype=np.float32)
    stack_node[0], stack_score[0] = 2 * classes - 2, np.float32(0.0)
    depth = 1
    while depth:  # left subtrees first: the right child is pushed below the left
        depth -= 1
        node, score = stack_node[depth], stack_score[depth]
        if score < floor or (size == k and score < scores[0]):
            continue
        if left[node] == -1 and right[node] == -1:
            size = _offer(scores, ids, size, k, score, node)
            continue
        f = np.float32(1.0 / (np.float32(1.0) + np.exp(-np.float32(node_scores[node - classes]))))
        stack_node[depth], stack_score[depth] = right[node], np.float32(score + _std_log(f))
        stack_node[depth + 1], stack_score[depth + 1] = left[node], np.float32(score + _std_log(1.0 - f))
        depth += 2
    return _sorted(scores, ids, size)
