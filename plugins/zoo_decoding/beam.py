"""Beam search with length normalisation, n-best lists and an exact stopping rule.

The search keeps `beam_size` live hypotheses and the `beam_size` best finished
ones. Each step extends every live hypothesis by every token, takes the
``2k`` best extensions by summed log-probability, moves those among the top
``k`` that end in eos to the finished list, and keeps the ``k`` best that do
not as the new live set (Sutskever et al. 2014; Wu et al. 2016 for the penalty).

Finished hypotheses are ranked by ``score(y) = log P(y) / |y|^α`` where
``|y|`` counts tokens up to and including eos. The search stops only when no
live hypothesis can still beat the last finished one it returns (the
`n_best`-th; the k-th when the whole beam is returned): log-probabilities only
fall as a hypothesis grows, so a live one with sum ``L <= 0`` can at best
reach ``L / n^α`` for the length ``n`` that divides least harshly: the
longest allowed (`max_length`) when ``α >= 0``, the shortest when ``α < 0``.
Stopping when the best beam emits eos would be wrong under the penalty:
a longer hypothesis can still overtake it.

??? cite
    Sutskever, Vinyals, Le. Sequence to Sequence Learning with Neural Networks. NeurIPS 2014.
    Wu et al. Google's Neural Machine Translation System. arXiv:1609.08144, 2016.
"""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray, PyTree

from zoo.plugin_api import DecoderStrategy, Hypotheses, StepFn, top_k

__all__ = ["BeamSearch", "length_normalise"]

_NEG_INF = -jnp.inf


def length_normalise(log_prob: Float[Array, "..."], length: Int[Array, "..."], alpha: float) -> Float[Array, "..."]:
    """``log_prob / length^alpha`` (``alpha = 0``: the plain sum; 1: the per-token mean)."""
    if alpha == 0.0:
        return log_prob
    return log_prob / jnp.power(jnp.maximum(length, 1).astype(jnp.float32), alpha)


class _Beam(NamedTuple):
    """The loop carry; `k` is the beam size, `L` the maximum length."""

    step: Int[Array, ""]  # tokens generated so far by every live hypothesis
    last: Int[Array, " k"]  # the last token of each live hypothesis
    live_tokens: Int[Array, "k L"]
    live_logp: Float[Array, " k"]  # -inf for an empty slot
    live_state: PyTree  # the step function's state, leading axis k
    done_tokens: Int[Array, "k L"]
    done_scores: Float[Array, " k"]  # normalised, sorted best first; -inf for an empty slot
    done_lengths: Int[Array, " k"]


class BeamSearch(DecoderStrategy):
    """Beam search returning the `n_best` best finished hypotheses, best first.

    **Arguments:**

    - `beam_size`: live hypotheses kept per step (k >= 1).
    - `alpha`: length-normalisation exponent α (0: none, 1: per-token average).
    - `n_best`: hypotheses returned (1 <= n_best <= beam_size).
    - `max_length`: most tokens generated, eos included; a hypothesis that
      reaches it without eos is finished there.
    - `min_length`: eos is suppressed before this many tokens.

    With ``beam_size=1, alpha=0`` it returns exactly what greedy decoding does.
    Scores are ``log P(y) / |y|^α``; slots that no sequence could fill (a
    vocabulary too small for `n_best` distinct outputs) have score -inf and length 0.
    """

    beam_size: int = eqx.field(static=True)
    alpha: float = eqx.field(static=True)
    n_best: int = eqx.field(static=True)
    max_length: int = eqx.field(static=True)
    min_length: int = eqx.field(static=True)

    def __init__(
        self, *, beam_size: int = 5, alpha: float = 0.6, n_best: int = 1, max_length: int = 50, min_length: int = 0
    ) -> None:
        if beam_size < 1:
            raise ValueError(f"beam_size must be at least 1, got {beam_size}")
        if not 1 <= n_best <= beam_size:
            raise ValueError(f"n_best must be between 1 and beam_size={beam_size}, got {n_best}")
        if max_length < 1:
            raise ValueError(f"max_length must be at least 1, got {max_length}")
        if min_length > max_length:
            raise ValueError(f"min_length={min_length} exceeds max_length={max_length}")
        self.beam_size, self.alpha, self.n_best = beam_size, float(alpha), n_best
        self.max_length, self.min_length = max_length, min_length

    @property
    def width(self) -> int:
        return self.beam_size

    @jax.named_scope("beam")
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
        k, length = self.beam_size, self.max_length
        empty = jnp.full((k, length), pad, dtype=jnp.int32)
        copies = lambda tree: jax.tree.map(lambda leaf: jnp.broadcast_to(leaf, (k, *jnp.shape(leaf))), tree)
        start = _Beam(
            step=jnp.int32(0),
            last=jnp.full((k,), bos, dtype=jnp.int32),
            live_tokens=empty,
            live_logp=jnp.full((k,), _NEG_INF, jnp.float32).at[0].set(0.0),
            live_state=copies(init_state),
            done_tokens=empty,
            done_scores=jnp.full((k,), _NEG_INF, jnp.float32),
            done_lengths=jnp.zeros((k,), jnp.int32),
        )
        # Only one hypothesis lives before the first token, so the first step runs once, not k times.
        logits, state = step_fn(jnp.int32(bos), init_state)
        first = self._extend(start, copies(logits), copies(state), eos)
        final = jax.lax.while_loop(self._can_improve, lambda beam: self._advance(beam, step_fn, eos), first)
        n = self.n_best
        return Hypotheses(tokens=final.done_tokens[:n], scores=final.done_scores[:n], lengths=final.done_lengths[:n])

    def best_reachable(self, live_logp: Float[Array, " k"], step: Int[Array, ""]) -> Float[Array, " k"]:
        """Upper bound on the normalised score any continuation of each live hypothesis can reach."""
        if self.alpha >= 0.0:
            return length_normalise(live_logp, jnp.int32(self.max_length), self.alpha)
        shortest = jnp.maximum(step + 1, self.min_length)
        return length_normalise(live_logp, shortest, self.alpha)

    def _can_improve(self, beam: _Beam) -> Bool[Array, ""]:
        # Beating the n-th finished hypothesis is what could change the returned list.
        worst_returned = beam.done_scores[self.n_best - 1]
        hope = jnp.any(self.best_reachable(beam.live_logp, beam.step) > worst_returned)
        return (beam.step < self.max_length) & hope

    def _advance(self, beam: _Beam, step_fn: StepFn, eos: int) -> _Beam:
        logits, states = jax.vmap(step_fn)(beam.last, beam.live_state)
        return self._extend(beam, logits, states, eos)

    def _extend(self, beam: _Beam, logits: Float[Array, "k vocab"], states: PyTree, eos: int) -> _Beam:
        """The next beam from every live hypothesis's next-token logits and state."""
        k, t = self.beam_size, beam.step
        logp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
        vocab = logp.shape[-1]
        too_short = t + 1 < self.min_length
        logp = jnp.where((jnp.arange(vocab) == eos) & too_short, _NEG_INF, logp)
        total = beam.live_logp[:, None] + logp  # [k, vocab]
        cand_logp, flat = top_k(total.reshape(-1), min(2 * k, k * vocab))
        cand_beam, cand_token = flat // vocab, (flat % vocab).astype(jnp.int32)
        cand_tokens = beam.live_tokens[cand_beam].at[:, t].set(cand_token)
        is_eos = cand_token == eos
        in_top_k = jnp.arange(cand_logp.shape[0]) < k
        finishing = in_top_k & (is_eos | (t + 1 == self.max_length)) & (cand_logp > _NEG_INF)
        done = self._merge_finished(beam, cand_tokens, cand_logp, finishing, t + 1)

        growing_logp = jnp.where(is_eos, _NEG_INF, cand_logp)
        live_logp, chosen = jax.lax.top_k(growing_logp, k)
        parents = cand_beam[chosen]
        return _Beam(
            step=t + 1,
            last=cand_token[chosen],
            live_tokens=cand_tokens[chosen],
            live_logp=live_logp,
            live_state=jax.tree.map(lambda leaf: leaf[parents], states),
            done_tokens=done[0],
            done_scores=done[1],
            done_lengths=done[2],
        )

    def _merge_finished(
        self,
        beam: _Beam,
        tokens: Int[Array, "c L"],
        logp: Float[Array, " c"],
        finishing: Bool[Array, " c"],
        length: Int[Array, ""],
    ) -> tuple[Array, Array, Array]:
        """The k best of the finished list and the newly finished candidates (ties: older first)."""
        scores = jnp.where(finishing, length_normalise(logp, length, self.alpha), _NEG_INF)
        all_scores = jnp.concatenate([beam.done_scores, scores])
        all_tokens = jnp.concatenate([beam.done_tokens, tokens])
        all_lengths = jnp.concatenate([beam.done_lengths, jnp.where(finishing, length, 0)])
        kept_scores, kept = jax.lax.top_k(all_scores, self.beam_size)
        return all_tokens[kept], kept_scores, all_lengths[kept]
