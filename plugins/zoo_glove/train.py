"""Fitting GloVe: AdaGrad over shuffled non-zero co-occurrence entries, one compiled epoch at a time.

Each step takes a batch of B entries, computes the gradient of the weighted
least-squares loss by hand for the rows they touch, and takes one AdaGrad step
per entry exactly as the reference C implementation does entry after entry
(accumulators start at 1 and sum ``(η g)²``; see `_adagrad_entries`). Entries
of the same row in one batch count each other in the accumulator, so a
frequent word occurring hundreds of times in a batch stays stable. Biases ride
along as extra columns (``[w, b, 1]·[w̃, 1, b̃] = w·w̃ + b + b̃``) and each table
keeps its accumulators beside its parameters, so a step is one gather and one
scatter-add per table. Each entry's gradient is clipped as in the reference
code. An epoch (a permutation of the entries, then ``ceil(nnz / B)`` steps
under `lax.scan`) is one jit-compiled call with static shapes: it compiles
once per run. Deterministic for a key.

With a `checkpoint` file, the state after every `checkpoint_every` epochs (and
at the end) is written in zoo's checkpoint format: the model, the AdaGrad
accumulators as its optimiser state, the epoch; a run resumed from it ends
with exactly the vectors of a run that was never stopped (epoch e shuffles with
``fold_in(key, e)``). A checkpoint is written only while every value is finite.

Progress goes as in every zoo loop (`zoo.plugin_api.Progress`): a bar on a terminal,
else one plain line an epoch (``epoch 3/25  loss 0.0421  1.23M entries/s``), and one
record an epoch in the metrics log (``log_file``, or ``zoo train --log-file``). A time
budget (``time_limit``, ``zoo train --minutes``) stops training after the epoch during
which it ran out, checkpointed there.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from jaxtyping import Array, Float, Int, PRNGKeyArray

from zoo.plugin_api import (
    DataError,
    InvalidParameterError,
    Progress,
    TrainingDiverged,
    load_checkpoint,
    open_log,
    save_checkpoint,
)
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


def _adagrad_entries(table: Array, index: Array, accum: Array, grads: Array, lr: float) -> Array:
    """The reference code's AdaGrad, one step per entry, on rows `index` ``[B]`` of
    ``table = [θ | G]`` ``[V, 2K]``, given the rows' accumulators `accum` ``[B, K]``
    and per-entry `grads` ``[B, K]``.

    As in GloVe's C code, G starts at 1 and accumulates ``(η g)²``, and an entry
    steps ``η g / √G`` with G from before it: plain SGD at rate η while G is
    near 1, AdaGrad at rate 1 once ``η² Σ g² ≫ 1``. An entry of row r also
    counts its ``n_r − 1`` batch-mates of the same row in G, standing in for
    the updates a sequential pass would have made first, so a frequent word
    that occurs hundreds of times in one batch moves about √n_r steps' worth,
    not n_r. Steps and squared steps are scatter-added together.
    """
    scaled = lr * grads
    mates = jnp.zeros(table.shape[0], grads.dtype).at[index].add(1.0)[index] - 1.0
    accum = accum + mates[:, None] * scaled**2
    update = jax.lax.optimization_barrier(jnp.concatenate([-scaled / jnp.sqrt(accum), scaled**2], axis=1))
    return table.at[index].add(update)


def _step(tables: tuple[Array, Array], batch, lr: float, clip: float):
    """One step on ``word = [w, b, 1 | G]`` and ``context = [w̃, 1, b̃ | G̃]``, whose
    parameter parts have the row dot product ``w·w̃ + b + b̃``; constant columns get no gradient."""
    rows, cols, log_x, weight = batch
    word, context = tables
    width = word.shape[1] // 2
    # one gather per table: [θ | G]; the barriers keep XLA from fusing the gathers into (and
    # recomputing them in) every consumer, and the scatters' updates from being recomputed
    word_rows, context_rows = jax.lax.optimization_barrier((word[rows], context[cols]))
    w, c = word_rows[:, :width], context_rows[:, :width]
    diff = jnp.einsum("bk,bk->b", w, c) - log_x
    fdiff = (weight * diff)[:, None]
    word_mask = jnp.ones(width).at[width - 1].set(0.0)  # the trailing 1 of [w, b, 1]
    context_mask = jnp.ones(width).at[width - 2].set(0.0)  # the 1 of [w̃, 1, b̃]
    grad_w = jnp.clip(fdiff * c, -clip, clip) * word_mask
    grad_c = jnp.clip(fdiff * w, -clip, clip) * context_mask
    word = _adagrad_entries(word, rows, word_rows[:, width:], grad_w, lr)
    context = _adagrad_entries(context, cols, context_rows[:, width:], grad_c, lr)
    return (word, context), 0.5 * jnp.sum(fdiff[:, 0] * diff)


@eqx.filter_jit(donate="all-except-first")
def _epoch(entries: Entries, tables, key: PRNGKeyArray, batch_size: int, lr, clip):
    nnz = entries.rows.shape[0]
    steps = -(-nnz // batch_size)
    order = jax.random.permutation(key, nnz)
    order = jnp.concatenate([order, order[: steps * batch_size - nnz]]).reshape(steps, batch_size)
    valid = (jnp.arange(steps * batch_size) < nnz).reshape(steps, batch_size)

    def body(tables, xs):
        index, mask = xs
        batch = (entries.rows[index], entries.cols[index], entries.log_counts[index], entries.weights[index] * mask)
        return _step(tables, batch, lr, clip)

    tables, costs = jax.lax.scan(body, tables, (order, valid))
    return tables, jnp.sum(costs) / nnz


def _extended(model: GloVe) -> tuple[Array, Array]:
    """``[w, b, 1 | G]`` and ``[w̃, 1, b̃ | G̃]`` with AdaGrad accumulators G = 1."""
    ones = jnp.ones((model.num_embeddings, 1), model.word.dtype)
    start = jnp.ones((model.num_embeddings, model.embedding_size + 2), model.word.dtype)
    word = jnp.concatenate([model.word, model.word_bias[:, None], ones, start], axis=1)
    context = jnp.concatenate([model.context, ones, model.context_bias[:, None], start], axis=1)
    return word, context


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
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: int = 1,
    resume: bool = False,
    progress: bool = True,
    description: str | None = "glove",
    log_file: str | os.PathLike | None = None,
    time_limit: float | None = None,
) -> tuple[GloVe, list[dict[str, float]]]:
    """Train `model` on `entries` for `epochs` passes; return it and one record per epoch run.

    **Arguments:**

    - `batch_size`: entries per AdaGrad step; `learning_rate`: η; `clip`: bound
      on each entry's gradient coordinates.
    - `key`: shuffling randomness (epoch e uses ``fold_in(key, e)``).
    - `callback(epoch, cost, entries_per_s)`: called after each epoch.
    - `checkpoint`, `checkpoint_every`: a file for the training state, written every
      so many epochs and at the end; with `resume`, training goes on from it if it
      exists (same model settings, entries, batch size, learning rate, clip and key).
    - `progress`, `description`: show progress on standard error (`zoo.plugin_api.Progress`):
      a bar on a terminal, else one plain line an epoch.
    - `log_file`: a JSON-lines metrics log to append to, one record an epoch (``step``:
      AdaGrad steps done, ``epoch``, ``loss``: the epoch's cost, ``lr``, ``units_per_s``:
      entries/s, ``elapsed``); default: the one of ``zoo train --log-file``, if any.
    - `time_limit`: seconds from this call: training stops after the epoch during which
      they ran out, writes `checkpoint` there (`resume` goes on from it) and says so; the
      history then ends before `epochs`.

    Raises `TrainingDiverged` if the cost (checked after each epoch) or the trained
    vectors become NaN or infinite.
    """
    deadline = _deadline(time_limit)
    batch_size = min(batch_size, int(entries.rows.shape[0]))
    run = _run_settings(entries, batch_size, key)
    settings = {"learning_rate": float(learning_rate), "clip": float(clip)}
    path = Path(checkpoint) if checkpoint is not None else None
    first, saved = 0, None
    if resume and path is not None and path.exists():
        model, tables, first = _resume(path, model, run, settings)
        saved = first
    else:
        tables = _extended(model)  # fresh buffers: each epoch donates them
    history = []
    steps = -(-int(entries.rows.shape[0]) // batch_size)  # AdaGrad steps an epoch
    with contextlib.ExitStack() as reporting:
        log = reporting.enter_context(open_log(log_file))
        bar = Progress(total=epochs, initial=first, unit="epoch", show=progress, log=log, description=description)
        reporting.enter_context(bar)
        for epoch in range(first, epochs):
            start = time.perf_counter()
            tables, cost = _epoch(entries, tables, jax.random.fold_in(key, epoch), batch_size, learning_rate, clip)
            cost = float(cost)
            rate = entries.rows.shape[0] / max(time.perf_counter() - start, 1e-9)
            if not np.isfinite(cost):
                raise _diverged("the cost", f"in epoch {epoch + 1}", learning_rate, path, saved)
            history.append({"epoch": epoch + 1, "cost": cost, "entries_per_s": rate})
            bar.advance()
            record = {"step": (epoch + 1) * steps, "epoch": epoch + 1, "loss": cost, "lr": learning_rate}
            shown = f"loss {cost:.4f}  {_rate(rate)} entries/s"
            bar.interval({**record, "units_per_s": rate, "unit": "entry"}, shown, f"epoch {epoch + 1}/{epochs}")
            if callback is not None:
                callback(epoch + 1, cost, rate)
            on_time = epoch + 1 < epochs and time.monotonic() >= deadline
            if path is not None and ((epoch + 1) % checkpoint_every == 0 or epoch + 1 == epochs or on_time):
                trained = _fitted(model, tables, learning_rate, f"after epoch {epoch + 1}", path, saved)
                position = {"epoch": epoch + 1, **run}
                state = _accumulators(tables)
                save_checkpoint(path, trained, state, step=epoch + 1, position=position, totals=settings)
                saved = epoch + 1
            if on_time:
                kept = f"; {path} resumes from there" if path is not None else ""
                bar.note(f"stopped on time: the time budget ran out after epoch {epoch + 1} of {epochs}{kept}")
                break
    done = history[-1]["epoch"] if history else first
    return _fitted(model, tables, learning_rate, f"after {done} epoch(s)", path, saved), history


def _rate(rate: float) -> str:
    """``950``, ``12.3k``, ``4.56M``: entries a second for a progress line."""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if rate >= scale:
            return f"{rate / scale:.3g}{suffix}"
    return f"{rate:.0f}"


def _deadline(time_limit: float | None) -> float:
    """The `time.monotonic` time `time_limit` seconds from now (infinity: no budget)."""
    if time_limit is None:
        return math.inf
    if isinstance(time_limit, bool) or not isinstance(time_limit, int | float) or not 0 < time_limit < math.inf:
        raise InvalidParameterError(
            f"fit_glove: time_limit={time_limit!r} is out of range: it must be a finite number of seconds > 0"
        )
    return time.monotonic() + time_limit


def _fitted(model: GloVe, tables, learning_rate: float, where: str, path: Path | None, saved: int | None) -> GloVe:
    """`model` with the parameters of `tables`; `TrainingDiverged` if any is NaN or infinite."""
    word, context = tables
    dim = model.embedding_size
    fitted = (word[:, :dim], context[:, :dim], word[:, dim], context[:, dim + 1])
    if not all(bool(jnp.all(jnp.isfinite(a))) for a in fitted):
        raise _diverged("the trained vectors", where, learning_rate, path, saved)
    return eqx.tree_at(lambda m: (m.word, m.context, m.word_bias, m.context_bias), model, fitted)


def _accumulators(tables) -> dict[str, Array]:
    """The AdaGrad accumulators ``G`` ``[V, dim + 2]`` of the word and context tables: the optimiser state."""
    word, context = tables
    width = word.shape[1] // 2
    return {"word": word[:, width:], "context": context[:, width:]}


def _run_settings(entries: Entries, batch_size: int, key: PRNGKeyArray) -> dict[str, int]:
    """What a resumed run must share with the run that wrote its checkpoint, as integers."""
    data = jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key
    words = {f"key{i}": int(v) for i, v in enumerate(np.asarray(data).ravel())}
    return {"entries": int(entries.rows.shape[0]), "batch_size": int(batch_size), **words}


def _resume(path: Path, model: GloVe, run: dict[str, int], settings: dict[str, float]):
    """The model, the extended tables and the epoch to go on from, read from the checkpoint at `path`."""
    shape = (model.num_embeddings, model.embedding_size + 2)
    like = {name: jnp.zeros(shape, model.word.dtype) for name in ("word", "context")}
    saved = load_checkpoint(path, like, model_like=model)
    stored, totals = dict(saved.position or {}), dict(saved.totals or {})
    found = {k: stored.get(k) for k in run} | {k: totals.get(k) for k in settings}
    wanted = run | settings
    differences = [f"{k}={found[k]} (this run: {wanted[k]})" for k in wanted if found[k] != wanted[k]]
    if set(stored) != {"epoch", *run} or differences:
        raise DataError(
            f"{path} is a checkpoint of another GloVe run: it has {', '.join(differences) or sorted(stored)}. "
            "Resume with the same entries, batch size, learning rate, clip and key, or start afresh with another file"
        )
    word, context = _extended(saved.model)
    width = shape[1]
    tables = (word.at[:, width:].set(saved.opt_state["word"]), context.at[:, width:].set(saved.opt_state["context"]))
    return saved.model, tables, stored["epoch"]


def _diverged(
    what: str, where: str, learning_rate: float, path: Path | None = None, saved: int | None = None
) -> TrainingDiverged:
    last = f"; the last checkpoint, {path}, holds the finite state after epoch {saved}" if saved else ""
    return TrainingDiverged(
        f"GloVe: {what} became NaN or infinite {where}; training stopped and nothing was returned or saved{last}. "
        f"Lower the learning rate ({learning_rate:g}: learning_rate=... in fit_glove, --lr in zoo train), "
        "or check the data for bad values."
    )
