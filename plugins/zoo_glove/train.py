"""Fitting GloVe: AdaGrad over shuffled non-zero co-occurrence entries, one compiled epoch at a time.

Each step takes a batch of B entries, computes the gradient of the weighted
least-squares loss by hand (only the touched rows), sums it per row, and
applies AdaGrad to those rows only: ``G += g²; θ -= η g / √G``. Frequent
words appear many times in one batch; AdaGrad's per-coordinate scaling keeps
their summed steps bounded by η, and each entry's gradient is clipped as in
the reference implementation. An epoch (a permutation of all entries, then
``ceil(nnz / B)`` steps under `lax.scan`) is one jit-compiled call with
static shapes: it compiles once per run. Deterministic for a key.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from jaxtyping import Array, Float, Int, PRNGKeyArray

from zoo.errors import DataError, TrainingDiverged
from zoo_glove.model import GloVe, glove_weight

__all__ = ["Entries", "entries_from_matrix", "fit_glove"]


class Entries(NamedTuple):
    """The non-zero co-occurrences, ``[nnz]`` each: word ids, context ids, log counts, weights f(X)."""

    rows: Int[Array, " nnz"]
    cols: Int[Array, " nnz"]
    log_counts: Float[Array, " nnz"]
    weights: Float[Array, " nnz"]


def entries_from_matrix(matrix: sp.spmatrix, *, x_max: float, alpha: float) -> Entries:
    """Flatten a sparse co-occurrence matrix ``[V, V]`` into `Entries` (float32 on device)."""
    coo = sp.coo_matrix(matrix)
    keep = coo.data > 0
    counts = coo.data[keep].astype(np.float32)
    if len(counts) == 0:
        raise DataError("the co-occurrence matrix is empty: no two vocabulary words share a window")
    return Entries(
        jnp.asarray(coo.row[keep], jnp.int32),
        jnp.asarray(coo.col[keep], jnp.int32),
        jnp.log(jnp.asarray(counts)),
        glove_weight(jnp.asarray(counts), x_max, alpha),
    )


class _Params(NamedTuple):
    word: Array
    context: Array
    word_bias: Array
    context_bias: Array


def _adagrad_rows(table, accum, index, grads, lr):
    """AdaGrad on the rows `index` of `table` with per-entry `grads` (summed per row first)."""
    summed = jnp.zeros_like(table).at[index].add(grads)[index]
    new_accum = accum[index] + summed**2
    step = lr * summed / jnp.sqrt(new_accum)
    return table.at[index].set(table[index] - step), accum.at[index].set(new_accum)


def _step(params: _Params, accums: _Params, batch, lr: float, clip: float):
    rows, cols, log_x, weight = batch
    w, c = params.word[rows], params.context[cols]
    diff = jnp.sum(w * c, axis=-1) + params.word_bias[rows] + params.context_bias[cols] - log_x
    fdiff = weight * diff
    grad_w = jnp.clip(fdiff[:, None] * c, -clip, clip)
    grad_c = jnp.clip(fdiff[:, None] * w, -clip, clip)
    new, acc = [], []
    for table, accum, index, grads in (
        (params.word, accums.word, rows, grad_w),
        (params.context, accums.context, cols, grad_c),
        (params.word_bias, accums.word_bias, rows, fdiff),
        (params.context_bias, accums.context_bias, cols, fdiff),
    ):
        t, a = _adagrad_rows(table, accum, index, grads, lr)
        new.append(t)
        acc.append(a)
    return _Params(*new), _Params(*acc), 0.5 * jnp.sum(fdiff * diff)


@eqx.filter_jit(donate="all-except-first")
def _epoch(entries: Entries, params: _Params, accums: _Params, key: PRNGKeyArray, batch_size: int, lr, clip):
    nnz = entries.rows.shape[0]
    steps = -(-nnz // batch_size)
    order = jax.random.permutation(key, nnz)
    order = jnp.concatenate([order, order[: steps * batch_size - nnz]]).reshape(steps, batch_size)
    valid = (jnp.arange(steps * batch_size) < nnz).reshape(steps, batch_size)

    def body(carry, xs):
        params, accums = carry
        index, mask = xs
        batch = (entries.rows[index], entries.cols[index], entries.log_counts[index], entries.weights[index] * mask)
        params, accums, cost = _step(params, accums, batch, lr, clip)
        return (params, accums), cost

    (params, accums), costs = jax.lax.scan(body, (params, accums), (order, valid))
    return params, accums, jnp.sum(costs) / nnz


def fit_glove(
    model: GloVe,
    entries: Entries,
    *,
    epochs: int = 25,
    batch_size: int = 16384,
    learning_rate: float = 0.05,
    clip: float = 100.0,
    key: PRNGKeyArray,
    callback: Callable[[int, float, float], None] | None = None,
) -> tuple[GloVe, list[dict[str, float]]]:
    """Train `model` on `entries` for `epochs` passes; return it and one record per epoch.

    **Arguments:**

    - `batch_size`: entries per AdaGrad step; `learning_rate`: η; `clip`: bound
      on each entry's gradient coordinates.
    - `key`: shuffling randomness (epoch e uses ``fold_in(key, e)``).
    - `callback(epoch, cost, entries_per_s)`: called after each epoch.

    Raises `TrainingDiverged` if the cost becomes NaN or infinite.
    """
    params = _Params(model.word, model.context, model.word_bias, model.context_bias)
    params = _Params(*(jnp.array(p) for p in params))  # own buffers: the epoch donates them
    accums = _Params(*(jnp.full_like(p, 1e-8) for p in params))
    batch_size = min(batch_size, int(entries.rows.shape[0]))
    history = []
    for epoch in range(epochs):
        start = time.perf_counter()
        params, accums, cost = _epoch(
            entries, params, accums, jax.random.fold_in(key, epoch), batch_size, learning_rate, clip
        )
        cost = float(cost)
        rate = entries.rows.shape[0] / max(time.perf_counter() - start, 1e-9)
        if not np.isfinite(cost):
            raise TrainingDiverged(
                f"GloVe's cost became {cost} in epoch {epoch + 1}; lower the learning rate ({learning_rate})"
            )
        history.append({"epoch": epoch + 1, "cost": cost, "entries_per_s": rate})
        if callback is not None:
            callback(epoch + 1, cost, rate)
    trained = eqx.tree_at(lambda m: (m.word, m.context, m.word_bias, m.context_bias), model, tuple(params))
    return trained, history
