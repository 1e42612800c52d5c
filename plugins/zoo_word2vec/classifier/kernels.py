"""The compiled training loop of one fastText thread (numba): softmax, one-vs-all, hierarchical
softmax or negative sampling over the labels; and the input matrix's rows.

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
- hs (hierarchical softmax): one target drawn as for softmax; a binary logistic loss at each
  node of its path in the Huffman tree over the label counts (`zoo_word2vec.huffman`),
  positive where the path goes right.
- ns (negative sampling): one target drawn as for softmax; a binary logistic loss for it
  (positive) and for `neg` labels drawn from the label counts to the power 0.5, redrawn when
  one is the target (none with a single label).

The input matrix may store only some of its hashed rows (`stored_buckets`, `map_buckets`); a
stored row starts from the draw its index gives in the full matrix (`uniform_rows`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = [
    "LOSSES",
    "LOSS_HS",
    "LOSS_NS",
    "LOSS_OVA",
    "LOSS_SOFTMAX",
    "dense_buckets",
    "map_buckets",
    "mean_rows",
    "stored_buckets",
    "train_thread",
    "uniform_rows",
]

LOSS_SOFTMAX, LOSS_OVA, LOSS_HS, LOSS_NS = 0, 1, 2, 3
LOSSES = {"softmax": LOSS_SOFTMAX, "ova": LOSS_OVA, "hs": LOSS_HS, "ns": LOSS_NS}
"""The losses by name, as `train_thread` numbers them."""

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
def _logistic_step(row, hidden, grad, positive, lr):
    """fastText's ``binaryLogistic``: output `row` against `hidden`, a positive or negative example;
    updates `row` and adds to `grad`; returns the loss."""
    s = np.float32(0.0)
    for k in range(hidden.shape[0]):
        s += row[k] * hidden[k]
    p = 1.0 / (1.0 + math.exp(-max(min(s, 30.0), -30.0)))
    alpha = np.float32(lr * ((1.0 if positive else 0.0) - p))
    for k in range(hidden.shape[0]):
        grad[k] += alpha * row[k]
        row[k] += alpha * hidden[k]
    return -math.log((p if positive else 1.0 - p) + _LOG_FLOOR)


@njit(nogil=True, inline="always")
def _draw(state, bound):
    """A uniform integer in ``[0, bound)`` from the splitmix64 stream: ``(state, value)``."""
    state, bits = _next(state)
    return state, np.int64(bits % np.uint64(bound))


@njit(nogil=True, inline="always")
def _negative(state, cumulative, target):
    """A label drawn from `cumulative` (the noise distribution's running sums), never `target`
    (there are at least two labels): ``(state, label)``."""
    classes = cumulative.shape[0]
    while True:
        state, bits = _next(state)
        u = (bits >> np.uint64(11)) * (1.0 / 9007199254740992.0) * cumulative[classes - 1]
        lo, hi = 0, classes - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if cumulative[mid] > u:
                hi = mid
            else:
                lo = mid + 1
        if lo != target:
            return state, lo


@njit(nogil=True, inline="always")
def _line_step(out, hidden, grad, scores, positive, loss_kind, labels, tree, noise, neg, state, lr):
    """The loss of one line (`labels`: its label ids) and its updates of `out` and `grad`:
    ``(state, loss)``. `tree` is ``(offsets, nodes, codes)`` of the labels' paths (hs); `noise`
    the running sums of the noise distribution (ns)."""
    if loss_kind == LOSS_OVA:
        for j in range(labels.shape[0]):
            positive[labels[j]] = True
        loss = 0.0
        for c in range(out.shape[0]):
            loss += _logistic_step(out[c], hidden, grad, positive[c], lr)
        for j in range(labels.shape[0]):
            positive[labels[j]] = False
        return state, loss
    state, pick = _draw(state, labels.shape[0])
    target = labels[pick]
    if loss_kind == LOSS_SOFTMAX:
        return state, _softmax_step(out, hidden, grad, scores, target, lr)
    loss = 0.0
    if loss_kind == LOSS_HS:
        offsets, nodes, codes = tree
        for i in range(offsets[target], offsets[target + 1]):
            loss += _logistic_step(out[nodes[i]], hidden, grad, codes[i], lr)
        return state, loss
    loss += _logistic_step(out[target], hidden, grad, True, lr)
    for _ in range(neg if out.shape[0] > 1 else 0):
        state, other = _negative(state, noise, target)
        loss += _logistic_step(out[other], hidden, grad, False, lr)
    return state, loss


@njit(nogil=True, fastmath=True, cache=True)
def train_thread(
    inputs, out, in_offsets, in_rows, label_offsets, label_ids, tokens, first_line,
    loss_kind, tree, noise, neg, lr0, total, counts, thread, update_rate, seed,
):  # fmt: skip
    """Train until `counts` (one slot per thread, shared) adds up to `total` tokens.

    `inputs` ``[rows, dim]`` and `out` ``[classes, dim]`` float32 are updated in place; line l's
    input rows are ``in_rows[in_offsets[l]:in_offsets[l + 1]]``, its labels ``label_ids[...]``
    alike, and it counts ``tokens[l]`` tokens. `loss_kind` is one of the ``LOSS_*`` numbers;
    `tree` and `noise` serve hs and ns (`_line_step`). **Returns:** ``(summed loss, lines trained)``.
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
            state, line_loss = _line_step(
                out, hidden, grad, scores, positive, loss_kind, label_ids[la:lb], tree, noise, neg, state, lr
            )
            loss += line_loss
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
def uniform_rows(out, rows, bound, seed):
    """Fill each row j of `out` ``[n, dim]`` float32 with the uniform draws in ``[-bound, bound)`` of
    row ``rows[j]`` of a full matrix: entry ``(i, k)`` is a 32-bit integer hash (Wellons'
    lowbias32) of the counter ``i * dim + k`` offset by the seed, its top 24 bits scaled. A row's
    values depend only on its index and the seed, so a matrix that stores some of its rows holds
    exactly what the full one would (and the loop vectorises: 32-bit multiplies).
    """
    dim = out.shape[1]
    scale = np.float32(2.0 * bound / 16777216.0)
    offset = np.uint32((np.uint64(seed) * _GOLDEN) >> np.uint64(32))
    for j in range(rows.shape[0]):
        start = np.uint32(np.uint64(rows[j]) * np.uint64(dim) & np.uint64(0xFFFFFFFF)) + offset
        row = out[j]
        for k in range(dim):
            z = np.uint32(start + np.uint32(k))  # numba widens uint32 arithmetic: narrow after each step
            z = np.uint32((z ^ (z >> np.uint32(16))) * np.uint32(0x7FEB352D))
            z = np.uint32((z ^ (z >> np.uint32(15))) * np.uint32(0x846CA68B))
            z = np.uint32(z ^ (z >> np.uint32(16)))
            row[k] = np.float32(np.int32(z >> np.uint32(8))) * scale - np.float32(bound)


def stored_buckets(rows: np.ndarray, nwords: int, bucket: int) -> tuple[np.ndarray, np.ndarray]:
    """The buckets `rows` (fastText's layout: ``nwords + b``) use, sorted, and `rows` with each
    bucket row renumbered to ``nwords + `` its position among them: ``(buckets [k], rows [R])``.

    A table of `bucket` flags finds them in one pass when `bucket` is not much more than the rows
    (`dense_buckets`); a sort of the rows does past that, so a huge `bucket` over a few lines costs
    memory in proportion to the lines, not to `bucket`."""
    if dense_buckets(bucket, rows.shape[0]):
        return _stored_buckets_dense(rows, nwords, bucket)
    hashed = rows >= nwords
    kept, position = np.unique(rows[hashed] - nwords, return_inverse=True)
    mapped = rows.copy()
    mapped[hashed] = nwords + position.reshape(-1)
    return kept.astype(np.int64), mapped


def dense_buckets(bucket: int, rows: int) -> bool:
    """Whether `stored_buckets` keeps a table of `bucket` entries (12 bytes each) for `rows` rows."""
    return bucket <= max(1 << 22, 4 * rows)


@njit(nogil=True, cache=True)
def _stored_buckets_dense(rows, nwords, bucket):
    """`stored_buckets` with a flag and a position for every bucket."""
    seen = np.zeros(bucket, dtype=np.int32)
    for r in range(rows.shape[0]):
        if rows[r] >= nwords:
            seen[rows[r] - nwords] = 1
    position = np.empty(bucket, dtype=np.int64)
    count = 0
    for b in range(bucket):
        position[b] = count
        count += seen[b]
    kept = np.empty(count, dtype=np.int64)
    for b in range(bucket):
        if seen[b]:
            kept[position[b]] = b
    mapped = np.empty_like(rows)
    for r in range(rows.shape[0]):
        mapped[r] = rows[r] if rows[r] < nwords else nwords + position[rows[r] - nwords]
    return kept, mapped


@njit(nogil=True, cache=True)
def map_buckets(offsets, rows, nwords, kept, drop):
    """`rows` (fastText's layout) in a matrix that stores only the buckets `kept` (sorted): a bucket
    row becomes ``nwords + `` its position in `kept`; one not kept becomes -1 (a zero row), or
    with `drop` leaves its line. **Returns:** ``(offsets [L + 1], rows [R'])``."""
    out = np.empty_like(rows)
    new_offsets = np.zeros_like(offsets)
    k = 0
    for line in range(offsets.shape[0] - 1):
        for r in range(offsets[line], offsets[line + 1]):
            row = rows[r]
            if row >= nwords:
                b = row - nwords
                j = np.searchsorted(kept, b)
                if j < kept.shape[0] and kept[j] == b:
                    row = nwords + j
                elif drop:
                    continue
                else:
                    row = -1
            out[k] = row
            k += 1
        new_offsets[line + 1] = k
    return new_offsets, out[:k]


@njit(nogil=True, fastmath=True, cache=True)
def mean_rows(table, offsets, rows):
    """The mean of each line's rows of `table` ``[n, dim]`` float32 (zeros for a line without rows);
    a row -1 is a zero row (it counts in the mean)."""
    lines, dim = offsets.shape[0] - 1, table.shape[1]
    out = np.zeros((lines, dim), dtype=np.float32)
    for line in range(lines):
        a, b = offsets[line], offsets[line + 1]
        for r in range(a, b):
            if rows[r] < 0:
                continue
            row = table[rows[r]]
            for k in range(dim):
                out[line, k] += row[k]
        if b > a:
            scale = np.float32(1.0 / (b - a))
            for k in range(dim):
                out[line, k] *= scale
    return out
