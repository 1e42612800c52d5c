"""The JAX training step: one job of corpus ids in, updated matrices out, all compiled.

Inside one `jit`: subsampling, compaction of the kept words, the dynamic window,
noise words from the alias table (and the center's path in the tree, with ``hs``),
the window blocks of `zoo_word2vec.model`,
their gradients (autodiff of the model's own block loss), and the SGD updates
as scatter-adds into the donated matrices.

Summed updates: a job's windows are trained at once from the same parameters,
so a row hit ``n`` times in one step gets the sum of ``n`` updates computed
without feedback, where sequential SGD would see each update before the next.
For frequent words (and frequent noise words) that sum overshoots and, with
large jobs, diverges. Each row's summed update is therefore divided by
``max(1, hits / max_row_hits)``: rows hit at most `max_row_hits` times get plain
SGD, hotter rows a bounded step.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int

from zoo_word2vec.model import cbow_block_loss, skipgram_block_loss
from zoo_word2vec.output_layer import Targets, joined, noise_targets, tree_targets

__all__ = [
    "Job",
    "bounded_add",
    "draw_noise",
    "layer_targets",
    "loop_batches",
    "make_step",
    "placed_outputs",
    "prepare_job",
    "subword_rows",
    "train_batch_with",
    "window_blocks",
]


@partial(jax.jit, static_argnames="window")
def window_blocks(
    tokens: Int[Array, " T"],
    keep: Float[Array, " T"],
    reach_bits: Int[Array, " T"],
    window: int,
) -> tuple[Int[Array, " T"], Int[Array, "T ctx"], Array, Int[Array, " T"]]:
    """The window blocks of a job after subsampling.

    **Arguments:**

    - `tokens`: ``[T]`` ids, -1 between sentences and as padding.
    - `keep`: ``[T]`` bool, the words that survive subsampling (False on -1).
    - `reach_bits`: ``[T]`` uint32 draws for the dynamic window.

    **Returns:** ``(centers [T], contexts [T, 2W], context_mask [T, 2W], origin [T])``:
    the kept words compacted to the front (padding after), their context word ids,
    which are real, and each kept word's position in `tokens`.
    """
    size = tokens.shape[0]
    sentence = jnp.cumsum(tokens < 0)
    origin = jnp.nonzero(keep, size=size, fill_value=0)[0]
    real = jnp.arange(size) < jnp.sum(keep)
    centers = jnp.where(real, tokens[origin], 0)
    center_sentence = jnp.where(real, sentence[origin], -1)
    reach = window - (reach_bits % window).astype(jnp.int32)
    offsets = jnp.concatenate([jnp.arange(-window, 0), jnp.arange(1, window + 1)])
    where = jnp.arange(size)[:, None] + offsets[None, :]
    inside = (where >= 0) & (where < size)
    where = jnp.clip(where, 0, size - 1)
    mask = (
        inside
        & real[:, None]
        & real[where]
        & (center_sentence[where] == center_sentence[:, None])
        & (jnp.abs(offsets)[None, :] <= reach[:, None])
    )
    return centers, jnp.where(mask, centers[where], 0), mask, origin


def draw_noise(key, shape, alias_threshold, alias_index):
    """Noise word ids of `shape` from the alias table."""
    k_bucket, k_side = jax.random.split(key)
    bucket = jax.random.randint(k_bucket, shape, 0, alias_index.shape[0])
    side = jax.random.bits(k_side, shape, jnp.uint32)
    return jnp.where(side < alias_threshold[bucket], bucket, alias_index[bucket]).astype(jnp.int32)


def bounded_add(matrix, rows, updates, weights, max_row_hits):
    """``matrix[rows] += updates``, each row's sum divided by ``max(1, hits / max_row_hits)``."""
    hits = jnp.zeros(matrix.shape[0], matrix.dtype).at[rows].add(weights)
    scale = 1.0 / jnp.maximum(1.0, hits / max_row_hits)
    return matrix.at[rows].add(updates * scale[rows][..., None])


class Job(NamedTuple):
    """A job's window blocks after subsampling (see `window_blocks`), with each center's learning rate."""

    centers: Int[Array, " T"]
    contexts: Int[Array, "T ctx"]
    mask: Bool[Array, "T ctx"]
    alpha: Float[Array, " T"]
    kept: Int[Array, ""]


def prepare_job(tables, tokens, key, alpha_start, alpha_end, *, window: int, shrink: bool = True) -> Job:
    """Subsample `tokens` ``[T]`` and build its window blocks; the learning rate falls
    linearly from `alpha_start` to `alpha_end` across the job. Without `shrink` every word
    has the whole window."""
    keep_threshold = tables[0]
    k_keep, k_reach = jax.random.split(key)
    safe = jnp.maximum(tokens, 0)
    keep = (tokens >= 0) & (jax.random.bits(k_keep, tokens.shape, jnp.uint32) < keep_threshold[safe])
    reach_bits = jax.random.bits(k_reach, tokens.shape, jnp.uint32)
    if not shrink:
        reach_bits = jnp.zeros_like(reach_bits)  # reach = window - 0
    centers, contexts, mask, origin = window_blocks(tokens, keep, reach_bits, window)
    alpha = alpha_start + (alpha_end - alpha_start) * origin.astype(jnp.float32) / tokens.shape[0]
    return Job(centers, contexts, mask, alpha, jnp.sum(keep))


def loop_batches(train_batch, params, per_window: tuple, kept, batch_windows: int):
    """Run ``train_batch(params, *slices) -> (params, loss, count)`` over consecutive
    slices of `batch_windows` windows, as many as hold kept words; sum loss and count."""

    def body(i, carry):
        params, loss, count = carry
        take = lambda a: jax.lax.dynamic_slice_in_dim(a, i * batch_windows, batch_windows)
        params, batch_loss, batch_count = train_batch(params, *(take(a) for a in per_window))
        return params, loss + batch_loss, count + batch_count

    batches = (kept + batch_windows - 1) // batch_windows
    return jax.lax.fori_loop(0, batches, body, (params, jnp.float32(0.0), jnp.int32(0)))


@functools.cache  # one compiled step per configuration, shared by every runner
def make_step(
    *,
    window: int,
    negative: int,
    cbow: bool,
    job_words: int,
    hs: bool = False,
    shrink: bool = True,
    cbow_mean: bool = True,
    subwords: bool = False,
    batch_windows: int = 128,
    max_row_hits: float = 32.0,
) -> Callable[..., tuple]:
    """A jitted ``step((W, W', W'_tree), (keep, alias_threshold, alias_index), (tree_nodes,
    tree_codes, *subword_tables), tokens [T], key, a0, a1) -> ((W, W', W'_tree), loss_sum,
    loss_count, kept_words)``; the matrices are donated (``W'`` is None with ``negative = 0``, ``W'_tree``
    and the tree None without `hs`).

    The job's windows are trained `batch_windows` at a time, in corpus order, in a
    loop inside the step (so each batch sees the previous batches' updates);
    `job_words` must be a multiple of `batch_windows`. `subwords` (CBOW): a context word
    stands for its rows ``subword_table[w, :subword_counts[w]]`` (FastText CBOW).
    """
    if job_words % batch_windows:
        raise ValueError(f"job_words={job_words} must be a multiple of batch_windows={batch_windows}")
    block_loss = partial(cbow_block_loss, mean=cbow_mean) if cbow else skipgram_block_loss

    def train_batch(params, tree, contexts, mask, outputs, alpha):
        syn0, syn1, syn1hs = params
        active = jnp.any(mask, axis=1)
        matrices, parts = layer_targets(syn1, syn1hs, tree, outputs, negative, hs)

        def total_loss(context_rows, *out_rows):
            rows, labels, weights = joined(list(out_rows), parts)
            return jnp.sum(jax.vmap(block_loss)(context_rows, mask, rows, labels, weights))

        gathered = [m[p.ids] for m, p in zip(matrices, parts, strict=True)]
        loss, grads = jax.value_and_grad(total_loss, argnums=tuple(range(1 + len(gathered))))(syn0[contexts], *gathered)
        grad_in = grads[0]
        if cbow:  # word2vec.c gives every context row the whole hidden-layer gradient (gensim: / rows for a sum)
            rows = jnp.sum(mask, axis=1)[:, None, None]
            grad_in = grad_in * rows if cbow_mean else grad_in / jnp.maximum(rows, 1)
        syn0 = bounded_add(syn0, contexts, -alpha[:, None, None] * grad_in, mask.astype(syn0.dtype), max_row_hits)
        updated = []
        for matrix, part, grad in zip(matrices, parts, grads[1:], strict=True):
            weight = (active[:, None] & (part.weights > 0)).astype(matrix.dtype)
            updated.append(bounded_add(matrix, part.ids, -alpha[:, None, None] * grad, weight, max_row_hits))
        syn1, syn1hs = placed_outputs(updated, negative, hs, syn1, syn1hs)
        count = jnp.sum(active) if cbow else jnp.sum(mask)
        return (syn0, syn1, syn1hs), loss, count

    @partial(jax.jit, donate_argnums=(0,))
    def step(params, tables, extra, tokens, key, alpha_start, alpha_end):
        tree, tables_of_subwords = extra[:2], extra[2:]
        k_job, k_noise = jax.random.split(key)
        job = prepare_job(tables, tokens, k_job, alpha_start, alpha_end, window=window, shrink=shrink)
        noise = draw_noise(k_noise, (job_words, negative), tables[1], tables[2])
        outputs = jnp.concatenate([job.centers[:, None], noise], axis=1)
        contexts, mask = job.contexts, job.mask
        if subwords:
            contexts, mask = subword_rows(*tables_of_subwords, contexts, mask)
        per_window = (contexts, mask, outputs, job.alpha)
        params, loss, count = loop_batches(
            partial(train_batch_with, train_batch, tree), params, per_window, job.kept, batch_windows
        )
        return params, loss, count, job.kept

    return step


def train_batch_with(train_batch, tree, params, *per_window):
    """`train_batch` with the tree bound (the loop slices only per-window arrays)."""
    return train_batch(params, tree, *per_window)


def subword_rows(
    subword_table: Int[Array, "V S"], subword_counts: Int[Array, " V"], contexts: Int[Array, "T ctx"], mask: Array
) -> tuple[Int[Array, "T rows"], Bool[Array, "T rows"]]:
    """Each window's context words as their input rows ``[T, ctx * S]`` and which are real."""
    ids = subword_table[contexts]
    real = mask[..., None] & (jnp.arange(ids.shape[-1]) < subword_counts[contexts][..., None])
    return ids.reshape(ids.shape[0], -1), real.reshape(ids.shape[0], -1)


def layer_targets(syn1, syn1hs, tree, outputs, negative: int, hs: bool) -> tuple[list, list[Targets]]:
    """The output matrices in use and the `Targets` of examples with targets ``outputs[..., 0]``."""
    matrices, parts = [], []
    if negative > 0:
        matrices.append(syn1)
        parts.append(noise_targets(outputs))
    if hs:
        matrices.append(syn1hs)
        parts.append(tree_targets(*tree, outputs[..., 0]))
    return matrices, parts


def placed_outputs(updated: list, negative: int, hs: bool, syn1, syn1hs) -> tuple:
    """``(W', W'_tree)`` from the updated matrices of `layer_targets`' order."""
    it = iter(updated)
    return (next(it) if negative > 0 else syn1), (next(it) if hs else syn1hs)
