"""The JAX training step of FastText (the accelerator path; built from `zoo_word2vec.jax_step`'s pieces).

The same job preparation as word2vec (subsampling, windows, noise from the alias
table, batches of windows in a loop inside one `jit`). A window is trained as
fastText's ``Model::update`` and the numba kernel train it: context by context
(a `lax.scan` over the window's slots), the center's composed vector against the
context and K noise words, the output rows' updates taken at the vector as it
stands (with ``hs``, the context's path in the tree too), and the input gradient
added to the vector before the next context
(times the rows' multiplicities, `repeat_factors`); every row of the center
receives the window's whole input gradient. Across the batch's windows the
updates are summed (`zoo_word2vec.jax_step.bounded_add`). FastText CBOW trains with
word2vec CBOW's step over the context words' subword rows (`zoo_word2vec.jax_step.make_step`
with ``subwords=True``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import partial

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int

from zoo_word2vec.jax_step import (
    bounded_add,
    draw_noise,
    layer_targets,
    loop_batches,
    placed_outputs,
    prepare_job,
    train_batch_with,
)
from zoo_word2vec.output_layer import joined

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
    labels: Bool[Array, "ctx out"],
    weights: Float[Array, "ctx out"],
    mask: Bool[Array, " ctx"],
    alpha: Float[Array, ""],
) -> tuple[Float[Array, " dim"], Float[Array, "ctx out dim"], Float[Array, ""]]:
    """One center's window, context by context: ``(input update [dim] for each of its rows,
    output row updates [ctx, out, dim], summed loss)``; rows of weight 0 (noise equal to the
    context, padding of a path) are skipped."""
    hidden = jnp.sum(jnp.where(sub_mask[:, None], sub_rows, 0.0), axis=0) / jnp.maximum(jnp.sum(sub_mask), 1)

    def context(h, slot):
        rows, label, weight, live = slot
        scores = rows @ h
        used = live & (weight > 0)
        g = jnp.where(used, (label - jax.nn.sigmoid(scores)) * alpha, 0.0)
        loss = -jnp.sum(jnp.where(used, jax.nn.log_sigmoid(jnp.where(label, scores, -scores)), 0.0))
        grad = g @ rows
        return h + moves * grad, (grad, g[:, None] * h[None, :], loss)

    _, (grads, out_updates, losses) = jax.lax.scan(context, hidden, (out_rows, labels, weights, mask))
    return jnp.sum(grads, axis=0), out_updates, jnp.sum(losses)


@functools.cache  # one compiled step per configuration, shared by every runner
def make_step(
    *,
    window: int,
    negative: int,
    job_words: int,
    hs: bool = False,
    shrink: bool = True,
    batch_windows: int = 128,
    max_row_hits: float = 32.0,
) -> Callable[..., tuple]:
    """A jitted ``step((W, W', W'_tree), tables, (tree_nodes, tree_codes, subwords,
    subword_counts), tokens [T], key, a0, a1) -> ((W, W', W'_tree), loss_sum, pairs,
    kept_words)`` (kept: the job's words after subsampling); the
    matrices are donated (None where the model has no such layer)."""
    if job_words % batch_windows:
        raise ValueError(f"job_words={job_words} must be a multiple of batch_windows={batch_windows}")

    def train_batch(params, tree, subwords, counts, outputs, mask, alpha):
        syn0, syn1, syn1hs = params
        sub_mask = jnp.arange(subwords.shape[1])[None, :] < counts[:, None]
        moves = repeat_factors(subwords, sub_mask).astype(syn0.dtype)
        matrices, parts = layer_targets(syn1, syn1hs, tree, outputs, negative, hs)
        rows, labels, weights = joined([m[p.ids] for m, p in zip(matrices, parts, strict=True)], parts)
        grad_in, out_updates, losses = jax.vmap(window_updates)(
            syn0[subwords], sub_mask, moves, rows, labels, weights, mask, alpha
        )
        active = jnp.any(mask, axis=1)
        in_weight = sub_mask & active[:, None]
        in_updates = jnp.where(in_weight[..., None], grad_in[:, None, :], 0.0)
        # a center's rows take one update per context word, as skip-gram's input rows do: count them so
        contexts = jnp.sum(mask, axis=1).astype(syn0.dtype)
        syn0 = bounded_add(syn0, subwords, in_updates, in_weight * contexts[:, None], max_row_hits)
        updated, start = [], 0
        for matrix, part in zip(matrices, parts, strict=True):
            width = part.ids.shape[-1]
            weight = (mask[..., None] & (part.weights > 0)).astype(matrix.dtype)
            piece = out_updates[..., start : start + width, :]
            updated.append(bounded_add(matrix, part.ids, piece, weight, max_row_hits))
            start += width
        syn1, syn1hs = placed_outputs(updated, negative, hs, syn1, syn1hs)
        return (syn0, syn1, syn1hs), jnp.sum(losses), jnp.sum(mask)

    @partial(jax.jit, donate_argnums=(0,))
    def step(params, tables, extra, tokens, key, alpha_start, alpha_end):
        tree, (subword_table, subword_counts) = extra[:2], extra[2:]
        k_job, k_noise = jax.random.split(key)
        job = prepare_job(tables, tokens, k_job, alpha_start, alpha_end, window=window, shrink=shrink)
        noise = draw_noise(k_noise, (*job.contexts.shape, negative), tables[1], tables[2])
        outputs = jnp.concatenate([job.contexts[..., None], noise], axis=-1)
        per_window = (subword_table[job.centers], subword_counts[job.centers], outputs, job.mask, job.alpha)
        params, loss, count = loop_batches(
            partial(train_batch_with, train_batch, tree), params, per_window, job.kept, batch_windows
        )
        return params, loss, count, job.kept

    return step
