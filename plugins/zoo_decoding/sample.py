"""Ancestral sampling with temperature, top-k and nucleus (top-p) truncation.

At each step the next token is drawn from ``softmax(logits / T)`` restricted
to the `top_k` most probable tokens and to the smallest set whose probability
reaches `top_p` (Holtzman et al. 2020). ``T -> 0`` approaches greedy decoding;
``temperature = 0`` is exactly greedy.

??? cite
    Holtzman, Buys, Du, Forbes, Choi. The Curious Case of Neural Text Degeneration. ICLR 2020.
    Fan, Lewis, Dauphin. Hierarchical Neural Story Generation. ACL 2018 (top-k).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, PRNGKeyArray, PyTree

from zoo.plugin_api import DecoderStrategy, Hypotheses, StepFn, argmax

__all__ = ["Sampling", "truncate_logits"]


def truncate_logits(logits: Float[Array, " vocab"], top_k: int, top_p: float) -> Float[Array, " vocab"]:
    """Keep the `top_k` best logits (0: all; ties with the k-th stay) and, of those, the
    smallest set of best tokens whose probability reaches `top_p` (1.0: all); every other
    logit becomes ``finfo(float32).min``, finite, so no softmax or draw over them is NaN.
    The most probable token always survives. Float32 ``[vocab]`` in and out.
    """
    logits = logits.astype(jnp.float32)
    floor = jnp.finfo(jnp.float32).min
    vocab = logits.shape[-1]
    if 0 < top_k < vocab:
        kth = jax.lax.top_k(logits, top_k)[0][-1]
        logits = jnp.where(logits >= kth, logits, floor)
    if top_p < 1.0:
        order = jnp.argsort(-logits)
        probs = jax.nn.softmax(logits[order])
        before = jnp.cumsum(probs) - probs  # mass of strictly better tokens
        # within float error of the target mass counts as reaching it (0.5 + 0.3 reaches 0.8)
        keep_sorted = (before < top_p - 1e-6) | (jnp.arange(vocab) == 0)
        keep = jnp.zeros(vocab, bool).at[order].set(keep_sorted)
        logits = jnp.where(keep, logits, floor)
    return logits


class Sampling(DecoderStrategy):
    """Draw `num_samples` independent sequences; return them most probable first.

    **Arguments:**

    - `temperature`: divides the logits (0: always the most probable token).
    - `top_k`: sample among the k most probable tokens only (0: no limit).
    - `top_p`: sample among the smallest set of tokens with this much probability (1.0: no limit).
    - `num_samples`: sequences drawn per input (the n-best rows of the result).
    - `max_length`, `min_length`: as for every strategy (eos suppressed before `min_length`).

    A key is required. Scores are the model's own log-probability of each
    sequence (untempered, untruncated), so samples from different settings compare.
    """

    temperature: float = eqx.field(static=True)
    top_k: int = eqx.field(static=True)
    top_p: float = eqx.field(static=True)
    num_samples: int = eqx.field(static=True)
    max_length: int = eqx.field(static=True)
    min_length: int = eqx.field(static=True)

    def __init__(
        self,
        *,
        temperature: float = 1.0,
        top_k: int = 0,
        top_p: float = 1.0,
        num_samples: int = 1,
        max_length: int = 50,
        min_length: int = 0,
    ) -> None:
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        if top_k < 0:
            raise ValueError(f"top_k must be >= 0 (0 = no limit), got {top_k}")
        if not 0.0 < top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {top_p}")
        if num_samples < 1 or max_length < 1:
            raise ValueError(f"num_samples and max_length must be at least 1, got {num_samples}, {max_length}")
        self.temperature, self.top_k, self.top_p = float(temperature), top_k, float(top_p)
        self.num_samples, self.max_length, self.min_length = num_samples, max_length, min_length

    @property
    def width(self) -> int:
        return self.num_samples

    @jax.named_scope("sample")
    def __call__(
        self,
        step_fn: StepFn,
        init_state: PyTree,
        *,
        bos: int,
        eos: int,
        pad: int,
        key: PRNGKeyArray | None = None,
    ) -> Hypotheses:
        if key is None and self.temperature > 0:
            raise ValueError("sampling needs a key: decode(..., key=jax.random.key(0))")
        if key is None:
            key = jax.random.key(0)  # unused: temperature 0 draws nothing
        keys = jax.random.split(key, self.num_samples)
        tokens, scores, lengths = jax.vmap(lambda k: self._draw(step_fn, init_state, bos, eos, pad, k))(keys)
        order = jnp.argsort(-scores, stable=True)
        return Hypotheses(tokens=tokens[order], scores=scores[order], lengths=lengths[order])

    def _choose(self, logits: Array, key: PRNGKeyArray) -> Array:
        if self.temperature == 0.0:
            return argmax(logits)[1]
        # a suppressed eos (log-probability -inf) scales to the same finite floor as a truncated token
        scaled = jnp.maximum(logits / self.temperature, jnp.finfo(jnp.float32).min)
        return jax.random.categorical(key, truncate_logits(scaled, self.top_k, self.top_p)).astype(jnp.int32)

    def _draw(self, step_fn: StepFn, init_state: PyTree, bos: int, eos: int, pad: int, key: PRNGKeyArray):
        """One sequence: ``(tokens [max_length], log-prob, length)``."""

        def cond(carry):
            t, _, _, _, _, finished, _ = carry
            return (t < self.max_length) & ~finished

        def body(carry):
            t, token, state, tokens, score, _, key = carry
            key, draw = jax.random.split(key)
            logits, state = step_fn(token, state)
            logp = jax.nn.log_softmax(logits.astype(jnp.float32))
            logp = jnp.where((jnp.arange(logp.shape[0]) == eos) & (t + 1 < self.min_length), -jnp.inf, logp)
            chosen = self._choose(logp, draw)
            return t + 1, chosen, state, tokens.at[t].set(chosen), score + logp[chosen], chosen == eos, key

        tokens = jnp.full((self.max_length,), pad, dtype=jnp.int32)
        init = (jnp.int32(0), jnp.int32(bos), init_state, tokens, jnp.float32(0.0), jnp.bool_(False), key)
        length, _, _, tokens, score, _, _ = jax.lax.while_loop(cond, body, init)
        return tokens, score, length
