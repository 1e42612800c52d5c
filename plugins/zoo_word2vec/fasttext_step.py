"""The JAX training step of FastText (the accelerator path; built from `zoo_word2vec.jax_step`'s pieces).

The same job preparation as word2vec (subsampling, windows, noise from the alias
table, batches of windows in a loop inside one `jit`). A window is trained as
fastText's ``Model::update`` and the numba kernel train it: context by context
(a `lax.scan` over the window's slots), the center's composed vector against the
context and K noise words, the output rows' updates taken at the vector as it
stands, and the input gradient added to the vector before the next context
(times the rows' multiplicities, `repeat_factors`); every row of the center
receives the window's whole input gradient. Across the batch's windows the
updates are summed (`zoo_word2vec.jax_step.bounded_add`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import partial

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int

from zoo_word2vec.jax_step import bounded_add, draw_noise, loop_batches, prepare_job

__all__ = ["make_step", "repeat_factors", "window_updates"]


def repeat_factors(subwords: Int[Array, "B sub"], sub_mask: Bool[Array, "B sub"]) -> Float[Array, " B"]:
    """How far the mean of each center's rows moves when every listed row gets ``g`` added,
    in units of ``g``: ``sum over its rows of multiplicity**2 / count`` (1 without repeats)."""
    same = (subwords[:, :, None] == subwords[:, None, :]) & sub_mask[:, :, None] & sub_mask[:, None, :]
    return jnp.sum(same, axis=(1, 2)) / jnp.maximum(jnp.sum(sub_mask, axis=1), 1)


def window_updates(
    sub_rows: Float[Array, "sub dim"],
    sub_mask: Bool[Array, " sub"],
    moves: Float[Array, ""],
    out_rows: Float[Array, "ctx out dim"],
    outputs: Int[Array, "ctx out"],
    mask: Bool[Array, " ctx"],
    alpha: Float[Array, ""],
) -> tuple[Float[Array, " dim"], Float[Array, "ctx out dim"], Float[Array, ""]]:
    """One center's window, context by context: ``(input update [dim] for each of its rows,
    output row updates [ctx, out, dim], summed loss)``; noise equal to its context is skipped."""
    hidden = jnp.sum(jnp.where(sub_mask[:, None], sub_rows, 0.0), axis=0) / jnp.maximum(jnp.sum(sub_mask), 1)
    positive = jnp.arange(outputs.shape[1]) == 0

    def context(h, slot):
        rows, ids, live = slot
        scores = rows @ h
        used = live & (positive | (ids != ids[0]))
        g = jnp.where(used, (positive - jax.nn.sigmoid(scores)) * alpha, 0.0)
        loss = -jnp.sum(jnp.where(used, jax.nn.log_sigmoid(jnp.where(positive, scores, -scores)), 0.0))
        grad = g @ rows
        return h + moves * grad, (grad, g[:, None] * h[None, :], loss)

    _, (grads, out_updates, losses) = jax.lax.scan(context, hidden, (out_rows, outputs, mask))
    return jnp.sum(grads, axis=0), out_updates, jnp.sum(losses)


@functools.cache  # one compiled step per configuration, shared by every runner
def make_step(
    *, window: int, negative: int, job_words: int, batch_windows: int = 128, max_row_hits: float = 32.0
) -> Callable[..., tuple]:
    """A jitted ``step((W, W'), tables, (subwords, subword_counts), tokens [T], key, a0, a1)
    -> ((W, W'), loss_sum, pairs)``; the matrices are donated."""
    if job_words % batch_windows:
        raise ValueError(f"job_words={job_words} must be a multiple of batch_windows={batch_windows}")

    def train_batch(params, subwords, counts, outputs, mask, alpha):
        syn0, syn1 = params
        sub_mask = jnp.arange(subwords.shape[1])[None, :] < counts[:, None]
        moves = repeat_factors(subwords, sub_mask).astype(syn0.dtype)
        grad_in, out_updates, losses = jax.vmap(window_updates)(
            syn0[subwords], sub_mask, moves, syn1[outputs], outputs, mask, alpha
        )
        active = jnp.any(mask, axis=1)
        in_weight = sub_mask & active[:, None]
        in_updates = jnp.where(in_weight[..., None], grad_in[:, None, :], 0.0)
        noise_ok = (jnp.arange(negative + 1) == 0) | (outputs != outputs[..., :1])
        out_weight = mask[..., None] & noise_ok
        # a center's rows take one update per context word, as skip-gram's input rows do: count them so
        contexts = jnp.sum(mask, axis=1).astype(syn0.dtype)
        syn0 = bounded_add(syn0, subwords, in_updates, in_weight * contexts[:, None], max_row_hits)
        syn1 = bounded_add(syn1, outputs, out_updates, out_weight.astype(syn1.dtype), max_row_hits)
        return (syn0, syn1), jnp.sum(losses), jnp.sum(mask)

    @partial(jax.jit, donate_argnums=(0,))
    def step(params, tables, extra, tokens, key, alpha_start, alpha_end):
        subword_table, subword_counts = extra
        k_job, k_noise = jax.random.split(key)
        job = prepare_job(tables, tokens, k_job, alpha_start, alpha_end, window=window)
        noise = draw_noise(k_noise, (*job.contexts.shape, negative), tables[1], tables[2])
        outputs = jnp.concatenate([job.contexts[..., None], noise], axis=-1)
        per_window = (subword_table[job.centers], subword_counts[job.centers], outputs, job.mask, job.alpha)
        return loop_batches(train_batch, params, per_window, job.kept, batch_windows)

    return step
