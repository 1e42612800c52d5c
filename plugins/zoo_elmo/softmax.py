"""Sampled softmax: train a big-vocabulary softmax on a few shared negative samples.

??? cite
    Jean, Cho, Memisevic & Bengio 2015, On Using Very Large Target Vocabulary for Neural
    Machine Translation; ELMo's biLM is trained this way.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray

__all__ = ["draw_log_uniform", "sampled_nll"]


def _log_uniform(vocab_size: int) -> Float[Array, " vocab"]:
    """log P(k) = log((log(k + 2) - log(k + 1)) / log(V + 1)): Zipf-like over ids sorted by frequency."""
    ranks = jnp.arange(vocab_size, dtype=jnp.float32)
    return jnp.log(jnp.log1p(1.0 / (ranks + 1.0)) / jnp.log(vocab_size + 1.0))


def draw_log_uniform(key: PRNGKeyArray, vocab_size: int, count: int) -> tuple[Int[Array, " k"], Float[Array, " vocab"]]:
    """`count` ids drawn with replacement from the log-uniform distribution, and
    ``log(count * P(id))`` (each id's expected count, in logs) for every id."""
    log_p = _log_uniform(vocab_size)
    samples = jax.random.categorical(key, log_p, shape=(count,))
    return samples, log_p + jnp.log(float(count))


def sampled_nll(
    states: Float[Array, "n dim"],
    targets: Int[Array, " n"],
    valid: Bool[Array, " n"],
    weight: Float[Array, "vocab dim"],
    bias: Float[Array, " vocab"],
    samples: Int[Array, " k"],
    log_expected: Float[Array, " vocab"],
) -> Float[Array, ""]:
    """Summed NLL of `targets` among themselves and the shared `samples`.

    Logits are corrected by the log expected count of their id, and a sample
    that equals the target is dropped, so the estimate of the full softmax's
    gradient is consistent.
    """
    true = jnp.sum(states * weight[targets], axis=-1) + bias[targets] - log_expected[targets]
    sampled = states @ weight[samples].T + bias[samples] - log_expected[samples]
    sampled = jnp.where(samples[None, :] == targets[:, None], jnp.finfo(sampled.dtype).min, sampled)
    logits = jnp.concatenate([true[:, None], sampled], axis=1).astype(jnp.float32)
    nll = jax.nn.logsumexp(logits, axis=1) - true.astype(jnp.float32)
    return jnp.sum(jnp.where(valid, nll, 0.0))
