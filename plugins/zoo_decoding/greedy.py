"""Greedy decoding: the most probable token at every step."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import PRNGKeyArray, PyTree

from zoo.plugin_api import DecoderStrategy, Hypotheses, StepFn, argmax

__all__ = ["GreedySearch"]


class GreedySearch(DecoderStrategy):
    """Pick ``argmax_y log P(y | y_<t)`` until eos or `max_length` tokens.

    The score is the summed log-probability of the tokens chosen (eos
    included). Returns one hypothesis (``n_best = 1``); tokens after eos are pad.

    **Arguments:** `max_length`: most tokens generated, eos included;
    `min_length`: fewest tokens generated, eos included (eos is suppressed before).
    """

    max_length: int = eqx.field(static=True)
    min_length: int = eqx.field(static=True)

    def __init__(self, *, max_length: int = 50, min_length: int = 0) -> None:
        if max_length < 1:
            raise ValueError(f"max_length must be at least 1, got {max_length}")
        self.max_length, self.min_length = max_length, min_length

    @jax.named_scope("greedy")
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
        tokens = jnp.full((self.max_length,), pad, dtype=jnp.int32)

        def cond(carry):
            t, _, _, _, _, done = carry
            return (t < self.max_length) & ~done

        def body(carry):
            t, token, state, tokens, score, _ = carry
            logits, state = step_fn(token, state)
            logp = jax.nn.log_softmax(logits.astype(jnp.float32))
            logp = jnp.where((jnp.arange(logp.shape[0]) == eos) & (t + 1 < self.min_length), -jnp.inf, logp)
            best, chosen = argmax(logp)  # best is logp[chosen]
            return t + 1, chosen, state, tokens.at[t].set(chosen), score + best, chosen == eos

        init = (jnp.int32(0), jnp.int32(bos), init_state, tokens, jnp.float32(0.0), jnp.bool_(False))
        length, _, _, tokens, score, _ = jax.lax.while_loop(cond, body, init)
        return Hypotheses(tokens=tokens[None], scores=score[None], lengths=length[None])
