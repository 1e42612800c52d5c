"""Compiled CPU kernels of the family: skip-gram, CBOW, FastText and FastText CBOW (numba).

One call trains on one job: a slice of the encoded corpus (word ids, -1 between
sentences) with plain sequential SGD, word2vec.c style. The kernels release the
GIL, so several threads train on different jobs at once, updating the shared
matrices without locks (Hogwild, as word2vec.c and gensim do).

Per job they do everything in compiled code: subsampling, the dynamic window,
drawing negatives from the alias table, the updates, and the loss. Randomness is
a splitmix64 stream seeded per job, so a job's draws do not depend on which
thread runs it or when.

FastText's kernel is skip-gram with a composed center, updated as fastText's
``Model::update`` does: per context word in the center's window, the center's
vector (the mean of its word and n-gram rows) against that context (positive)
and K noise words (redrawn when one is the context), the output rows updated,
then the input gradient added, whole, to every one of the center's rows, so
the next context word meets the updated vector. The rows are written once per
window; the vector the next context sees is kept exactly by adding the
gradient to it (times the rows' multiplicities, for a row listed twice).

The output layer (`zoo_word2vec.output_layer`): `syn1` the negative-sampling rows
(``[0, D]`` without noise words), `syn1hs` the tree's node rows (``[0, D]`` without
hierarchical softmax) with each word's path `tree_nodes` (-1 past its end) and codes
`tree_codes` ``[V, depth]``; a pair trains against both when both are there. `shrink`
false gives every word the whole window (gensim's ``shrink_windows=False``).

`lock` (after `syn0`): ``[R]`` float32, each input row's factor on its updates (gensim's
``vectors_lockf``: 0 freezes a row), or ``[0]``: every row at 1. The output rows are never locked.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = [
    "cbow_job",
    "draw_noise",
    "fasttext_job",
    "negative_sampling",
    "next_sentence",
    "skipgram_job",
    "splitmix64",
    "tree_softmax",
]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S32 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)

SIGMOID_BINS = 2048
MAX_LOGIT = 8.0
SATURATED_LOGIT = 6.0
"""word2vec.c's and gensim's MAX_EXP: with `saturated_skip`, a tree node whose logit is at least
this far from 0 gets no update (fastText's rule, the default, clips at `MAX_LOGIT` and updates)."""


@njit(cache=True)
def _sigmoid_tables() -> tuple[np.ndarray, np.ndarray]:
    """σ(x) and log σ(x) at bin centres over [-MAX_LOGIT, MAX_LOGIT]."""
    sig = np.empty(SIGMOID_BINS, dtype=np.float32)
    logsig = np.empty(SIGMOID_BINS, dtype=np.float32)
    for i in range(SIGMOID_BINS):
        x = ((i + 0.5) / SIGMOID_BINS * 2.0 - 1.0) * MAX_LOGIT
        sig[i] = 1.0 / (1.0 + math.exp(-x))
        logsig[i] = -math.log1p(math.exp(-x))
    return sig, logsig


_SIG, _LOGSIG = _sigmoid_tables()


@njit(nogil=True, inline="always")
def splitmix64(state: np.uint64) -> tuple[np.uint64, np.uint64]:
    """One step of splitmix64: ``(new_state, 64 random bits)``."""
    state = np.uint64(state) + _GOLDEN
    z = state
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return state, z ^ (z >> _S31)


@njit(nogil=True, inline="always")
def draw_noise(state, alias_threshold, alias_index):
    """A word from the alias table: low 32 bits pick a bucket, high 32 bits the side."""
    state, bits = splitmix64(state)
    size = np.uint64(alias_index.shape[0])
    bucket = np.int64(((bits & _LOW32) * size) >> _S32)
    if np.uint32(bits >> _S32) < alias_threshold[bucket]:
        return state, bucket
    return state, np.int64(alias_index[bucket])


@njit(nogil=True, inline="always")
def _logistic_step(f, label, alpha):
    """Gradient scale ``(label - σ(f)) * alpha`` and the pair's loss ``-log σ(±f)``."""
    if f >= MAX_LOGIT:
        return (label - 1.0) * alpha, (f if label == 0.0 else 0.0)
    if f <= -MAX_LOGIT:
        return label * alpha, (-f if label == 1.0 else 0.0)
    bin_ = int((f + MAX_LOGIT) * (SIGMOID_BINS / (2.0 * MAX_LOGIT)))
    # A NaN logit (a diverging run, before its loss check stops it) converts to an
    # arbitrary integer under fastmath: clamp in integers, never read past the tables.
    bin_ = min(max(bin_, 0), SIGMOID_BINS - 1)
    sig = _SIG[bin_]
    if label == 1.0:
        return (1.0 - sig) * alpha, -_LOGSIG[bin_]
    return -sig * alpha, -_LOGSIG[SIGMOID_BINS - 1 - bin_]


@njit(nogil=True, inline="always")
def negative_sampling(hidden, grad_hidden, syn1, target, negative, alpha, state, alias_threshold, alias_index):
    """Update output rows for one positive `target` and `negative` noise words.

    Adds ``d loss / d hidden`` (times -alpha) into `grad_hidden`; returns ``(state, loss)``.
    """
    loss = 0.0
    for d in range(negative + 1):
        if d == 0:
            word, label = target, 1.0
        else:
            state, word = draw_noise(state, alias_threshold, alias_index)
            if word == target:
                continue
            label = 0.0
        loss += output_update(hidden, grad_hidden, syn1[word], label, alpha, False)
    return state, loss


@njit(nogil=True, inline="always")
def tree_softmax(hidden, grad_hidden, syn1hs, nodes, codes, alpha, saturated_skip):
    """Hierarchical softmax for one target: `hidden` against the nodes of its path `nodes`
    (-1 past its end) towards its `codes`; adds to `grad_hidden`, updates the node rows; returns the
    loss. `saturated_skip`: word2vec.c's rule, no update at a node with ``|logit| >= SATURATED_LOGIT``."""
    loss = 0.0
    for d in range(nodes.shape[0]):
        node = nodes[d]
        if node < 0:
            break
        loss += output_update(hidden, grad_hidden, syn1hs[node], np.float64(codes[d]), alpha, saturated_skip)
    return loss


@njit(nogil=True, inline="always")
def _lock(lock, row):
    """Input row `row`'s update factor: ``lock[row]``, or 1 for an empty `lock` ``[0]``."""
    if lock.shape[0] == 0:
        return np.float32(1.0)
    return lock[row]


@njit(nogil=True, inline="always")
def _reach(window, shrink, state):
    """This word's window: 1..window drawn (as word2vec.c), or the whole window without `shrink`."""
    state, bits = splitmix64(state)
    if shrink:
        return state, window - np.int64(bits % np.uint64(window))
    return state, np.int64(window)


@njit(nogil=True, inline="always")
def output_update(hidden, grad_hidden, row, label, alpha, saturated_skip):
    """One output `row` against `hidden` with `label` (1: the target, 0: noise): adds the step
    (times -alpha) to `grad_hidden`, updates `row` in place; returns the pair's loss. With
    `saturated_skip`, a logit with ``|f| >= SATURATED_LOGIT`` updates nothing."""
    f = np.float32(0.0)
    for k in range(hidden.shape[0]):
        f += hidden[k] * row[k]
    g, pair_loss = _logistic_step(f, label, alpha)
    if saturated_skip and (f >= SATURATED_LOGIT or f <= -SATURATED_LOGIT):
        return pair_loss
    g32 = np.float32(g)
    for k in range(hidden.shape[0]):
        grad_hidden[k] += g32 * row[k]
        row[k] += g32 * hidden[k]
    return pair_loss


@njit(nogil=True, inline="always")
def next_sentence(words, start, keep_threshold, state, kept):
    """Subsample the sentence at ``words[start:]`` into `kept`; return ``(end, n_kept, state, n_raw)``."""
    n, end, n_kept = words.shape[0], start, 0
    while end < n and words[end] >= 0:
        word = words[end]
        end += 1
        state, bits = splitmix64(state)
        if np.uint32(bits >> _S32) < keep_threshold[word]:
            kept[n_kept] = word
            n_kept += 1
    return end, n_kept, state, end - start


@njit(nogil=True, fastmath=True, cache=True)
def skipgram_job(
    syn0,
    lock,
    syn1,
    syn1hs,
    tree_nodes,
    tree_codes,
    shrink,
    saturated_skip,
    words,
    keep_threshold,
    alias_threshold,
    alias_index,
    window,
    negative,
    alpha_start,
    alpha_end,
    seed,
):
    """Skip-gram over one job; returns ``(loss_sum, pairs, raw_words, kept_words)`` (kept: after
    subsampling, gensim's effective words).

    Each center word's window is one small block (Ji et al. 2016): its `c` context
    words' input rows against the output rows of the center and `negative` noise
    words drawn once for the window (and, with hierarchical softmax, the nodes on the
    center's path), so each (context, center) pair still meets `negative` negatives,
    but every row is read and written once per window.

    **Arguments:**

    - `syn0`: ``[V, D]`` float32 input matrix; `lock`: its rows' update factors (see the
      module); `syn1`, `syn1hs`: the output layer (see the module), all updated in place;
      `tree_nodes`, `tree_codes`: the paths; `shrink`: windows drawn from 1..window;
      `saturated_skip`: the tree's nodes follow word2vec.c's rule (`tree_softmax`).
    - `words`: ``[n]`` int32 ids, -1 between sentences.
    - `keep_threshold`: ``[V]`` uint32 subsampling thresholds; `alias_threshold`,
      `alias_index`: the noise alias table.
    - `window`, `negative`: the maximal window and the number of noise words.
    - `alpha_start`, `alpha_end`: the learning rate at the job's first and last word.
    - `seed`: uint64 seed of this job's random stream.

    ??? cite "Ji et al. 2016, Parallelizing Word2Vec in Shared and Distributed Memory"
    """
    state = np.uint64(seed)
    dim = syn0.shape[1]
    hs = syn1hs.shape[0] > 0
    kept = np.empty(words.shape[0], dtype=np.int64)
    n_out = negative + 1 if syn1.shape[0] > 0 else 0
    outputs = np.empty(max(n_out, 1), dtype=np.int64)
    labels = np.empty(max(n_out, 1), dtype=np.float32)
    grad_in = np.empty((2 * window, dim), dtype=np.float32)
    scale = np.empty((2 * window, max(n_out, tree_nodes.shape[1])), dtype=np.float32)
    rows = np.empty(2 * window, dtype=np.int64)
    spare = np.empty(dim, dtype=np.float32)
    n = words.shape[0]
    loss, pairs, raw, effective, start = 0.0, 0, 0, 0, 0
    while start < n:
        alpha = alpha_start + (alpha_end - alpha_start) * (start / n)
        end, n_kept, state, n_raw = next_sentence(words, start, keep_threshold, state, kept)
        raw += n_raw
        effective += n_kept
        start = end + 1
        for i in range(n_kept):
            state, reach = _reach(window, shrink, state)
            lo, hi = max(0, i - reach), min(n_kept, i + reach + 1)
            if hi - lo < 2:
                continue
            count = 0
            for j in range(lo, hi):
                if j != i:
                    rows[count] = kept[j]
                    count += 1
            grad_in[:count, :] = 0.0
            if n_out > 0:
                outputs[0], labels[0] = kept[i], 1.0
                for d in range(1, n_out):
                    state, outputs[d] = draw_noise(state, alias_threshold, alias_index)
                    labels[d] = -1.0 if outputs[d] == outputs[0] else 0.0  # the center drawn as noise: skipped
                loss += _block(syn0, syn1, outputs, labels, n_out, rows, count, grad_in, scale, spare, alpha, False)
            if hs:
                nodes = tree_nodes[kept[i]]
                depth = 0
                while depth < nodes.shape[0] and nodes[depth] >= 0:
                    depth += 1
                codes = tree_codes[kept[i]]
                loss += _block(
                    syn0, syn1hs, nodes, codes, depth, rows, count, grad_in, scale, spare, alpha, saturated_skip
                )
            for a in range(count):
                x = syn0[rows[a]]
                gx = grad_in[a]
                factor = _lock(lock, rows[a])
                for k in range(dim):
                    x[k] += factor * gx[k]
            pairs += hi - lo - 1
    return loss, pairs, raw, effective


@njit(nogil=True, inline="always")
def _block(syn0, out, ids, labels, n, rows, count, grad_in, scale, spare, alpha, saturated_skip):
    """A window's block: the contexts' input rows ``syn0[rows[:count]]`` (X ``[c, D]``) against
    the output rows ``out[ids[:n]]`` (Y ``[n, D]``: the center and its noise words, or the nodes
    of the center's path) towards `labels` ``[n]`` (1, 0; below 0: skipped). Adds the contexts'
    gradients to `grad_in`, updates the output rows; returns the loss (`saturated_skip`: as
    `tree_softmax`).

    Three small products: the logits ``X Y^T`` give the gradient scales ``G [c, n]`` (in
    `scale`, ``[2 * window, >= n]``), then ``grad_in += G Y`` and ``Y += G^T X``, each over tiles
    of 2 x 4 rows so a row loaded serves several pairs (updating pair after pair, reloading
    both rows each time, was bound by loads). `spare` ``[D]`` stands for a partial tile's
    missing row. An output row listed twice gets both updates."""
    loss = 0.0
    for a in range(0, count, 2):
        loss += _scale_tile(syn0, out, ids, labels, n, rows, a, min(2, count - a), scale, alpha, saturated_skip)
    zero = np.float32(0.0)
    for a in range(0, count, 2):  # grad_in += G Y
        two = a + 1 < count
        first, second = grad_in[a], grad_in[a + 1] if two else spare
        for d in range(0, n, 4):
            m = min(4, n - d)
            w0 = _weights4(scale, a, d, m, 1, zero)
            w1 = _weights4(scale, a + 1, d, m if two else 0, 1, zero)
            ys = _rows4(out, ids, d, m)
            _add_tile(first, second, ys[0], ys[1], ys[2], ys[3], w0, w1)
    for d in range(0, n, 2):  # Y += G^T X
        two = d + 1 < n
        first, second = out[ids[d]], out[ids[d + 1]] if two else spare
        for a in range(0, count, 4):
            m = min(4, count - a)
            w0 = _weights4(scale, a, d, m, 0, zero)
            w1 = _weights4(scale, a, d + 1, m if two else 0, 0, zero)
            xs = _rows4(syn0, rows, a, m)
            _add_tile(first, second, xs[0], xs[1], xs[2], xs[3], w0, w1)
    return loss


@njit(nogil=True, inline="always")
def _rows4(matrix, ids, start, n):
    """Rows ``matrix[ids[start + i]]`` for ``i < 4``; past the `n` real ones, the first again."""
    return (
        matrix[ids[start]],
        matrix[ids[start + 1 if n > 1 else start]],
        matrix[ids[start + 2 if n > 2 else start]],
        matrix[ids[start + 3 if n > 3 else start]],
    )


@njit(nogil=True, inline="always")
def _weights4(scale, a, d, n, along_nodes, zero):
    """Four entries of `scale` from ``[a, d]`` along the nodes (`along_nodes`) or the contexts,
    `zero` past the first `n`."""
    if along_nodes:
        return (
            scale[a, d] if n > 0 else zero,
            scale[a, d + 1] if n > 1 else zero,
            scale[a, d + 2] if n > 2 else zero,
            scale[a, d + 3] if n > 3 else zero,
        )
    return (
        scale[a, d] if n > 0 else zero,
        scale[a + 1, d] if n > 1 else zero,
        scale[a + 2, d] if n > 2 else zero,
        scale[a + 3, d] if n > 3 else zero,
    )


@njit(nogil=True, inline="always")
def _add_tile(first, second, r0, r1, r2, r3, w0, w1):
    """``first += sum_i w0[i] * r_i`` and ``second += sum_i w1[i] * r_i`` over four rows ``[D]``."""
    for k in range(first.shape[0]):
        p, q, r, t = r0[k], r1[k], r2[k], r3[k]
        first[k] += w0[0] * p + w0[1] * q + w0[2] * r + w0[3] * t
        second[k] += w1[0] * p + w1[1] * q + w1[2] * r + w1[3] * t


@njit(nogil=True, inline="always")
def _pick(f0, f1, f2, f3, j):
    """The `j`-th of four values (a branch: a tuple indexed at run time would go through memory)."""
    return f0 if j == 0 else f1 if j == 1 else f2 if j == 2 else f3


@njit(nogil=True, inline="always")
def _scale_tile(syn0, out, ids, labels, depth, rows, a, m, scale, alpha, saturated_skip):
    """``scale[a + i, d]``, the gradient scale of context row ``syn0[rows[a + i]]`` (``i < m``,
    m <= 2) at output row ``out[ids[d]]`` towards ``labels[d]``, for every ``d < depth``, 2
    contexts x 4 outputs at a time (0 where the label is below 0 or `saturated_skip` skips the
    logit); returns the loss."""
    loss = 0.0
    x0, x1 = syn0[rows[a]], syn0[rows[a + 1 if m > 1 else a]]
    for d in range(0, depth, 4):
        n = min(4, depth - d)
        y0, y1, y2, y3 = _rows4(out, ids, d, n)
        f00 = f01 = f02 = f03 = f10 = f11 = f12 = f13 = np.float32(0.0)
        for k in range(x0.shape[0]):
            u, v = x0[k], x1[k]
            f00 += u * y0[k]
            f01 += u * y1[k]
            f02 += u * y2[k]
            f03 += u * y3[k]
            f10 += v * y0[k]
            f11 += v * y1[k]
            f12 += v * y2[k]
            f13 += v * y3[k]
        for i in range(m):
            for j in range(n):
                f = _pick(f00, f01, f02, f03, j) if i == 0 else _pick(f10, f11, f12, f13, j)
                label = np.float64(labels[d + j])
                if label < 0.0:
                    scale[a + i, d + j] = 0.0
                    continue
                g, pair_loss = _logistic_step(f, label, alpha)
                loss += pair_loss
                if saturated_skip and (f >= SATURATED_LOGIT or f <= -SATURATED_LOGIT):
                    g = 0.0
                scale[a + i, d + j] = np.float32(g)
    return loss


@njit(nogil=True, fastmath=True, cache=True)
def cbow_job(
    syn0,
    lock,
    syn1,
    syn1hs,
    tree_nodes,
    tree_codes,
    shrink,
    cbow_mean,
    saturated_skip,
    subwords,
    subword_counts,
    words,
    keep_threshold,
    alias_threshold,
    alias_index,
    window,
    negative,
    alpha_start,
    alpha_end,
    seed,
):
    """CBOW over one job, word2vec's and FastText's; returns ``(loss_sum, examples, raw_words,
    kept_words)``.

    The hidden vector is the mean (`cbow_mean`; else the sum) of every input row of the
    context words: word ``w``'s rows are ``subwords[w, :subword_counts[w]]`` (FastText: its
    word and n-gram rows; word2vec: its own row, ``subwords = arange(V)[:, None]``). It is
    scored against the center and `negative` noise words and, with hierarchical softmax, the
    center's path; every context row then receives the whole hidden-layer gradient, as in
    word2vec.c and fastText (divided by the rows' number for a sum, as gensim). Other
    arguments as `skipgram_job` (`saturated_skip`: word2vec's tree rule, off for FastText CBOW).
    """
    state = np.uint64(seed)
    dim = syn0.shape[1]
    hs = syn1hs.shape[0] > 0
    noise = negative if syn1.shape[0] > 0 else -1
    kept = np.empty(words.shape[0], dtype=np.int64)
    hidden = np.empty(dim, dtype=np.float32)
    grad = np.empty(dim, dtype=np.float32)
    n = words.shape[0]
    loss, examples, raw, effective, start = 0.0, 0, 0, 0, 0
    while start < n:
        alpha = alpha_start + (alpha_end - alpha_start) * (start / n)
        end, n_kept, state, n_raw = next_sentence(words, start, keep_threshold, state, kept)
        raw += n_raw
        effective += n_kept
        start = end + 1
        for i in range(n_kept):
            state, reach = _reach(window, shrink, state)
            lo, hi = max(0, i - reach), min(n_kept, i + reach + 1)
            if hi - lo < 2:
                continue
            hidden[:] = 0.0
            count = 0
            for j in range(lo, hi):
                if j != i:
                    w = kept[j]
                    for s in range(subword_counts[w]):
                        row = syn0[subwords[w, s]]
                        for k in range(dim):
                            hidden[k] += row[k]
                    count += subword_counts[w]
            scale = np.float32(1.0 / count)
            if cbow_mean:
                for k in range(dim):
                    hidden[k] *= scale
            grad[:] = 0.0
            if noise >= 0:
                state, example_loss = negative_sampling(
                    hidden, grad, syn1, kept[i], noise, alpha, state, alias_threshold, alias_index
                )
                loss += example_loss
            if hs:
                nodes, codes = tree_nodes[kept[i]], tree_codes[kept[i]]
                loss += tree_softmax(hidden, grad, syn1hs, nodes, codes, alpha, saturated_skip)
            if not cbow_mean:
                for k in range(dim):
                    grad[k] *= scale
            examples += 1
            for j in range(lo, hi):
                if j != i:
                    w = kept[j]
                    for s in range(subword_counts[w]):
                        row = syn0[subwords[w, s]]
                        factor = _lock(lock, subwords[w, s])
                        for k in range(dim):
                            row[k] += factor * grad[k]
    return loss, examples, raw, effective


_REDRAWS = 64


@njit(nogil=True, inline="always")
def _noise_other_than(target, state, alias_threshold, alias_index):
    """A noise word other than `target`, as fastText's ``getNegative`` redraws; after
    `_REDRAWS` draws that all hit `target` (a distribution concentrated on it), -1."""
    for _ in range(_REDRAWS):
        state, word = draw_noise(state, alias_threshold, alias_index)
        if word != target:
            return state, word
    return state, np.int64(-1)


@njit(nogil=True, inline="always")
def _repeat_factor(subwords, word, count, lock):
    """``sum over the word's rows of lock * multiplicity**2 / count``: how much the mean of its
    rows moves when each listed row gets a vector (times its `lock` factor) added (1 when no row
    is listed twice and none is locked)."""
    if lock.shape[0] > 0:
        moved = 0.0
        for s in range(count):
            r = subwords[word, s]
            times = 0
            for t in range(count):
                if subwords[word, t] == r:
                    times += 1
            moved += times * lock[r]  # summed over the listed rows: multiplicity**2 * lock per row
        return np.float32(moved / count)
    pairs = 0
    for s in range(1, count):
        r = subwords[word, s]
        for t in range(s):
            if subwords[word, t] == r:
                pairs += 1
    return np.float32((count + 2 * pairs) / count)


@njit(nogil=True, fastmath=True, cache=True)
def fasttext_job(
    syn0,
    lock,
    syn1,
    syn1hs,
    tree_nodes,
    tree_codes,
    shrink,
    subwords,
    subword_counts,
    words,
    keep_threshold,
    alias_threshold,
    alias_index,
    window,
    negative,
    alpha_start,
    alpha_end,
    seed,
):
    """FastText skip-gram over one job; returns ``(loss_sum, pairs, raw_words, kept_words)``.

    Per (center, context) pair, fastText's update: the center's composed vector
    `hidden` against the context and `negative` noise words, the output rows
    updated at once, the input gradient ``g`` then added to each of the center's
    rows (with hierarchical softmax the context's path is scored too). The rows receive
    the window's summed ``g`` at its end; `hidden`
    follows them exactly, ``hidden += m * g`` (`_repeat_factor`), so each pair sees
    the vector that fastText's freshly recomputed mean would be.

    **Arguments:**

    - `syn0`: ``[V + buckets, D]`` input rows, `lock` their update factors (see the module);
      `syn1`, `syn1hs`: the output layer (in place).
    - `subwords`: ``[V, S]`` each word's input rows (padded); `subword_counts`: ``[V]``.
    - the rest as `skipgram_job`.
    """
    state = np.uint64(seed)
    dim = syn0.shape[1]
    hs = syn1hs.shape[0] > 0
    n_out = negative + 1 if syn1.shape[0] > 0 else 0
    kept = np.empty(words.shape[0], dtype=np.int64)
    hidden = np.empty(dim, dtype=np.float32)
    grad = np.empty(dim, dtype=np.float32)
    total = np.empty(dim, dtype=np.float32)
    n = words.shape[0]
    loss, pairs, raw, effective, start = 0.0, 0, 0, 0, 0
    while start < n:
        alpha = alpha_start + (alpha_end - alpha_start) * (start / n)
        end, n_kept, state, n_raw = next_sentence(words, start, keep_threshold, state, kept)
        raw += n_raw
        effective += n_kept
        start = end + 1
        for i in range(n_kept):
            state, reach = _reach(window, shrink, state)
            lo, hi = max(0, i - reach), min(n_kept, i + reach + 1)
            if hi - lo < 2:
                continue
            word = kept[i]
            count = subword_counts[word]
            hidden[:] = 0.0
            for s in range(count):
                row = syn0[subwords[word, s]]
                for k in range(dim):
                    hidden[k] += row[k]
            scale = np.float32(1.0 / count)
            for k in range(dim):
                hidden[k] *= scale
            moves = _repeat_factor(subwords, word, count, lock)
            total[:] = 0.0
            for j in range(lo, hi):
                if j == i:
                    continue
                target = kept[j]
                grad[:] = 0.0
                for d in range(n_out):
                    if d == 0:
                        other, label = target, 1.0
                    else:
                        state, other = _noise_other_than(target, state, alias_threshold, alias_index)
                        if other < 0:
                            continue
                        label = 0.0
                    loss += output_update(hidden, grad, syn1[other], label, alpha, False)
                if hs:  # fastText's rule: clipped, never skipped
                    loss += tree_softmax(hidden, grad, syn1hs, tree_nodes[target], tree_codes[target], alpha, False)
                for k in range(dim):
                    total[k] += grad[k]
                    hidden[k] += moves * grad[k]
                pairs += 1
            for s in range(count):
                row = syn0[subwords[word, s]]
                factor = _lock(lock, subwords[word, s])
                for k in range(dim):
                    row[k] += factor * total[k]
    return loss, pairs, raw, effective
