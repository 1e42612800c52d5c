"""The compiled training loop of one fastText thread (numba), softmax or one-vs-all.

Each thread walks the lines from its own starting line, wrapping around, as fastText's
threads each read the file from their own offset; all of them update the shared input and
output matrices without locks (Hogwild). The learning rate decays linearly with the
tokens seen by all threads together, ``lr * (1 - tokens / (epochs * tokens_per_epoch))``;
a thread adds its tokens to its slot of the shared counter every `update_rate` tokens
(fastText's ``-lrUpdateRate``), and all stop once the slots add up to the total.

Per line (skipped without inputs or labels):
``hidden = mean of the input rows``; the loss's gradient is taken row by row of the output,
each output row updated at once (fastText's order); the accumulated gradient of `hidden`,
scaled by ``1 / |inputs|``, is added to every input row (a row listed twice gets it twice).

- softmax: one target drawn uniformly from the line's labels; ``-log p(target)``.
- one-vs-all: a binary logistic loss for every label, positive for the line's labels.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["mean_rows", "train_thread", "uniform_rows"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_LOG_FLOOR = 1e-5  # fastText's std_log adds it before the log


@njit(nogil=True, inline="always")
def _next(state):
    """splitmix64: ``(new state, 64 random bits)``."""
    state = np.uint64(state) + _GOLDEN
    z = state
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return state, z ^ (z >> np.uint64(31))


@njit(nogil=True, inline="always")
def _softmax_step(out, hidden, grad, scores, target, lr):
    classes, dim = out.shape
    top = -np.inf
    for c in range(classes):
        s = np.float32(0.0)
        row = out[c]
        for k in range(dim):
            s += row[k] * hidden[k]
        scores[c] = s
        top = max(top, s)
    total = 0.0
    for c in range(classes):
        scores[c] = math.exp(scores[c] - top)
        total += scores[c]
    for c in range(classes):
        p = scores[c] / total
        scores[c] = p
        alpha = np.float32(lr * ((1.0 if c == target else 0.0) - p))
        row = out[c]
        for k in range(dim):
            grad[k] += alpha * row[k]
            row[k] += alpha * hidden[k]
    return -math.log(scores[target] + _LOG_FLOOR)


@njit(nogil=True, inline="always")
def _ova_step(out, hidden, grad, positive, lr):
    classes, dim = out.shape
    loss = 0.0
    for c in range(classes):
        s = np.float32(0.0)
        row = out[c]
        for k in range(dim):
            s += row[k] * hidden[k]
        p = 1.0 / (1.0 + math.exp(-max(min(s, 30.0), -30.0)))
        label = 1.0 if positive[c] else 0.0
        loss -= math.log((p if positive[c] else 1.0 - p) + _LOG_FLOOR)
        alpha = np.float32(lr * (label - p))
        for k in range(dim):
            grad[k] += alpha * row[k]
            row[k] += alpha * hidden[k]
    return loss


@njit(nogil=True, fastmath=True, cache=True)
def train_thread(
    inputs, out, in_offsets, in_rows, label_offsets, label_ids, tokens, first_line,
    ova, lr0, total, counts, thread, update_rate, seed,
):  # fmt: skip
    """Train until `counts` (one slot per thread, shared) adds up to `total` tokens.

    `inputs` ``[rows, dim]`` and `out` ``[classes, dim]`` float32 are updated in place; line l's
    input rows are ``in_rows[in_offsets[l]:in_offsets[l + 1]]``, its labels ``label_ids[...]``
    alike, and it counts ``tokens[l]`` tokens. **Returns:** ``(summed loss, lines trained)``.
    """
    lines = in_offsets.shape[0] - 1
    classes, dim = out.shape
    hidden = np.zeros(dim, dtype=np.float32)
    grad = np.zeros(dim, dtype=np.float32)
    scores = np.zeros(classes, dtype=np.float64)
    positive = np.zeros(classes, dtype=np.bool_)
    state = np.uint64(seed)
    line, local, loss, trained = first_line, 0, 0.0, 0
    while True:
        done = 0
        for t in range(counts.shape[0]):
            done += counts[t]
        if done >= total:
            break
        lr = lr0 * (1.0 - done / total)
        local += tokens[line]
        a, b = in_offsets[line], in_offsets[line + 1]
        la, lb = label_offsets[line], label_offsets[line + 1]
        if b > a and lb > la:
            hidden[:] = 0.0
            grad[:] = 0.0
            for r in range(a, b):
                row = inputs[in_rows[r]]
                for k in range(dim):
                    hidden[k] += row[k]
            scale = np.float32(1.0 / (b - a))
            for k in range(dim):
                hidden[k] *= scale
            if ova:
                for j in range(la, lb):
                    positive[label_ids[j]] = True
                loss += _ova_step(out, hidden, grad, positive, lr)
                for j in range(la, lb):
                    positive[label_ids[j]] = False
            else:
                state, bits = _next(state)
                target = label_ids[la + np.int64(bits % np.uint64(lb - la))]
                loss += _softmax_step(out, hidden, grad, scores, target, lr)
            trained += 1
            for k in range(dim):
                grad[k] *= scale
            for r in range(a, b):
                row = inputs[in_rows[r]]
                for k in range(dim):
                    row[k] += grad[k]
        if local > update_rate:
            counts[thread] += local
            local = 0
        line += 1
        if line == lines:
            line = 0
    counts[thread] += local
    return loss, trained


@njit(nogil=True, fastmath=True, cache=True)
def uniform_rows(out, first, last, bound, seed):
    """Fill rows ``first:last`` of `out` ``[rows, dim]`` float32 with uniform draws in ``[-bound, bound)``.

    Entry ``(i, k)`` is a 32-bit integer hash (Wellons' lowbias32) of the counter ``i * dim + k``
    offset by the seed, its top 24 bits scaled: the draws do not depend on how the rows are split
    among threads, and the loop vectorises (32-bit multiplies).
    """
    dim = out.shape[1]
    scale = np.float32(2.0 * bound / 16777216.0)
    offset = np.uint32((np.uint64(seed) * _GOLDEN) >> np.uint64(32))
    for i in range(first, last):
        start = np.uint32(np.uint64(i) * np.uint64(dim) & np.uint64(0xFFFFFFFF)) + offset
        row = out[i]
        for k in range(dim):
            z = np.uint32(start + np.uint32(k))  # numba widens uint32 arithmetic: narrow after each step
            z = np.uint32((z ^ (z >> np.uint32(16))) * np.uint32(0x7FEB352D))
            z = np.uint32((z ^ (z >> np.uint32(15))) * np.uint32(0x846CA68B))
            z = np.uint32(z ^ (z >> np.uint32(16)))
            row[k] = np.float32(np.int32(z >> np.uint32(8))) * scale - np.float32(bound)


@njit(nogil=True, fastmath=True, cache=True)
def mean_rows(table, offsets, rows):
    """The mean of each line's rows of `table` ``[n, dim]`` float32 (zeros for a line without rows)."""
    lines, dim = offsets.shape[0] - 1, table.shape[1]
    out = np.zeros((lines, dim), dtype=np.float32)
    for line in range(lines):
        a, b = offsets[line], offsets[line + 1]
        for r in range(a, b):
            row = table[rows[r]]
            for k in range(dim):
                out[line, k] += row[k]
        if b > a:
            scale = np.float32(1.0 / (b - a))
            for k in range(dim):
                out[line, k] *= scale
    return out
