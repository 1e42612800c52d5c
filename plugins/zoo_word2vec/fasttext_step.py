"""The JAX training step of FastText (the accelerator path; built from `zoo_word2vec.jax_step`'s pieces).

The same job preparation as word2vec (subsampling, windows, noise from the alias
table, batches of windows in a loop inside one `jit`); a block is one center's
composed vector against, per context, the context word and K noise words. As in
the numba kernel, every row of the center receives the whole input gradient.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import partial

import jax
import jax.numpy as jnp

from zoo_word2vec.fasttext_model import block_loss
from zoo_word2vec.jax_step import bounded_add, draw_noise, loop_batches, prepare_job

__all__ = ["make_step"]


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

        def total_loss(sub_rows, out_rows):
            return jnp.sum(jax.vmap(block_loss)(sub_rows, sub_mask, out_rows, outputs, mask))

        loss, (grad_in, grad_out) = jax.value_and_grad(total_loss, argnums=(0, 1))(syn0[subwords], syn1[outputs])
        grad_in = grad_in * counts[:, None, None]  # undo the mean: each row gets the whole gradient
        active = jnp.any(mask, axis=1)
        in_weight = sub_mask & active[:, None]
        noise_ok = (jnp.arange(negative + 1) == 0) | (outputs != outputs[..., :1])
        out_weight = mask[..., None] & noise_ok
        syn0 = bounded_add(syn0, subwords, -alpha[:, None, None] * grad_in, in_weight.astype(syn0.dtype), max_row_hits)
        syn1 = bounded_add(
            syn1, outputs, -alpha[:, None, None, None] * grad_out, out_weight.astype(syn1.dtype), max_row_hits
        )
        return (syn0, syn1), loss, jnp.sum(mask)

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
