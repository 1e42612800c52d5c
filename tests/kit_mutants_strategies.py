"""Decoding strategies with one contract broken each: what the conformance kit must catch.

Each is a small subclass of a built-in strategy (or a copy of one method of it, the one
deliberate change marked ``MUTATION``); `tests/test_kit_catches_strategies.py` installs each
as a third-party plugin and asserts the kit fails the check named for the broken contract.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from zoo.interfaces import Hypotheses
from zoo.nn import top_k
from zoo_decoding.beam import BeamSearch, _Beam
from zoo_decoding.greedy import GreedySearch
from zoo_decoding.sample import Sampling, truncate_logits

__all__ = [
    "CountsLengthWithoutEos",
    "DrawsSharper",
    "EosFilledTail",
    "FixedKey",
    "IgnoresMinLength",
    "KeyFromNumpy",
    "LetsKPlusOneFinish",
    "NucleusNamedP",
    "NucleusNamedPIgnored",
    "NucleusDropsTheCrossingToken",
    "RepeatsTheBest",
    "ReusesTheKeyAtEachStep",
    "SamplesAtZeroTemperature",
    "StopsWhenTheTopBeamEnds",
    "UnsortedSamples",
]


class EosFilledTail(BeamSearch):
    """Fills every position after the end with eos instead of pad."""

    def __call__(self, step_fn, init_state, *, bos, eos, pad, key=None):
        hyps = super().__call__(step_fn, init_state, bos=bos, eos=eos, pad=pad, key=key)
        after = jnp.arange(self.max_length)[None, :] >= hyps.lengths[:, None]
        return hyps._replace(tokens=jnp.where(after & (hyps.lengths[:, None] > 0), eos, hyps.tokens))


class UnsortedSamples(Sampling):
    """Returns its draws in the order it drew them, not most probable first."""

    def __call__(self, step_fn, init_state, *, bos, eos, pad, key=None):
        keys = jax.random.split(key, self.num_samples)
        tokens, scores, lengths = jax.vmap(lambda k: self._draw(step_fn, init_state, bos, eos, pad, k))(keys)
        return Hypotheses(tokens=tokens, scores=scores, lengths=lengths)


class IgnoresMinLength(GreedySearch):
    """Decodes as if `min_length` were 0."""

    def __call__(self, step_fn, init_state, *, bos, eos, pad, key=None):
        return GreedySearch(max_length=self.max_length)(step_fn, init_state, bos=bos, eos=eos, pad=pad, key=key)


class KeyFromNumpy(Sampling):
    """Draws with a key from NumPy's global generator, taken at trace time: two calls differ."""

    def __call__(self, step_fn, init_state, *, bos, eos, pad, key=None):
        own = jax.random.key(int(np.random.randint(2**31)))
        return super().__call__(step_fn, init_state, bos=bos, eos=eos, pad=pad, key=own)


class FixedKey(Sampling):
    """Ignores the key it is given: every key draws the same samples."""

    def __call__(self, step_fn, init_state, *, bos, eos, pad, key=None):
        return super().__call__(step_fn, init_state, bos=bos, eos=eos, pad=pad, key=jax.random.key(0))


class SamplesAtZeroTemperature(Sampling):
    """Treats temperature 0 as 'unset' and samples at temperature 1."""

    def _choose(self, logits, key):
        logits = truncate_logits(logits / (self.temperature or 1.0), self.top_k, self.top_p)
        return jax.random.categorical(key, logits).astype(jnp.int32)


class DrawsSharper(Sampling):
    """Gumbel-max with the noise halved: draws from softmax(2 logits / T), not softmax(logits / T)."""

    def _choose(self, logits, key):
        if self.temperature == 0.0:
            return jnp.argmax(logits).astype(jnp.int32)
        logits = truncate_logits(logits / self.temperature, self.top_k, self.top_p)
        return jnp.argmax(logits + 0.5 * jax.random.gumbel(key, logits.shape)).astype(jnp.int32)


def _nucleus_without_the_crossing_token(logits, top_k, top_p):
    """`truncate_logits` with the nucleus cut one token short (the token that reaches top_p is dropped)."""
    logits = truncate_logits(logits, top_k, 1.0)
    if top_p < 1.0:
        order = jnp.argsort(-logits)
        keep_sorted = jnp.cumsum(jax.nn.softmax(logits[order])) < top_p  # MUTATION: mass including the token
        keep = jnp.zeros(logits.shape[-1], bool).at[order].set(keep_sorted.at[0].set(True))
        logits = jnp.where(keep, logits, -jnp.inf)
    return logits


class NucleusDropsTheCrossingToken(Sampling):
    """Top-p keeps only the tokens before the one whose mass reaches `top_p`."""

    def _choose(self, logits, key):
        if self.temperature == 0.0:
            return jnp.argmax(logits).astype(jnp.int32)
        logits = _nucleus_without_the_crossing_token(logits / self.temperature, self.top_k, self.top_p)
        return jax.random.categorical(key, logits).astype(jnp.int32)


class LetsKPlusOneFinish(BeamSearch):
    """Lets the best k + 1 candidates of a step finish, not the best k (`BeamSearch._extend`, one change)."""

    def _extend(self, beam, logits, states, eos):
        k, t = self.beam_size, beam.step
        logp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
        vocab = logp.shape[-1]
        logp = jnp.where((jnp.arange(vocab) == eos) & (t + 1 < self.min_length), -jnp.inf, logp)
        total = beam.live_logp[:, None] + logp
        cand_logp, flat = top_k(total.reshape(-1), min(2 * k, k * vocab))
        cand_beam, cand_token = flat // vocab, (flat % vocab).astype(jnp.int32)
        cand_tokens = beam.live_tokens[cand_beam].at[:, t].set(cand_token)
        is_eos = cand_token == eos
        in_top = jnp.arange(cand_logp.shape[0]) < k + 1  # MUTATION: k + 1, not k
        finishing = in_top & (is_eos | (t + 1 == self.max_length)) & (cand_logp > -jnp.inf)
        done = self._merge_finished(beam, cand_tokens, cand_logp, finishing, t + 1)
        live_logp, chosen = jax.lax.top_k(jnp.where(is_eos, -jnp.inf, cand_logp), k)
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


class RepeatsTheBest(BeamSearch):
    """Returns the best hypothesis in every n-best slot."""

    def __call__(self, step_fn, init_state, *, bos, eos, pad, key=None):
        hyps = super().__call__(step_fn, init_state, bos=bos, eos=eos, pad=pad, key=key)
        return jax.tree.map(lambda a: jnp.broadcast_to(a[:1], a.shape), hyps)


class StopsWhenTheTopBeamEnds(BeamSearch):
    """Bounds a live hypothesis by its score at its current length, as if it could not grow:
    the search stops once a finished hypothesis leads, though a longer one can still win
    under length normalisation (exact when alpha = 0)."""

    def best_reachable(self, live_logp, step):
        from zoo_decoding.beam import length_normalise

        return length_normalise(live_logp, step, self.alpha)  # MUTATION: not the best reachable length


class CountsLengthWithoutEos(BeamSearch):
    """Normalises by the length without eos, ``log P / (|y| - 1)^alpha`` (`BeamSearch._merge_finished`, one change)."""

    def _merge_finished(self, beam, tokens, logp, finishing, length):
        from zoo_decoding.beam import length_normalise

        scores = jnp.where(finishing, length_normalise(logp, length - 1, self.alpha), -jnp.inf)  # MUTATION: - 1
        all_scores = jnp.concatenate([beam.done_scores, scores])
        all_tokens = jnp.concatenate([beam.done_tokens, tokens])
        all_lengths = jnp.concatenate([beam.done_lengths, jnp.where(finishing, length, 0)])
        kept_scores, kept = jax.lax.top_k(all_scores, self.beam_size)
        return all_tokens[kept], kept_scores, all_lengths[kept]


class ReusesTheKeyAtEachStep(Sampling):
    """Draws every step of a sample with that sample's one key (never split): on a model whose
    steps are alike, each row repeats its first token."""

    def _draw(self, step_fn, init_state, bos, eos, pad, key):
        def cond(carry):
            t, _, _, _, _, finished = carry
            return (t < self.max_length) & ~finished

        def body(carry):
            t, token, state, tokens, score, _ = carry
            logits, state = step_fn(token, state)
            logp = jax.nn.log_softmax(logits.astype(jnp.float32))
            logp = jnp.where((jnp.arange(logp.shape[0]) == eos) & (t + 1 < self.min_length), -jnp.inf, logp)
            chosen = self._choose(logp, key)  # MUTATION: the same key at every step
            return t + 1, chosen, state, tokens.at[t].set(chosen), score + logp[chosen], chosen == eos

        tokens = jnp.full((self.max_length,), pad, dtype=jnp.int32)
        init = (jnp.int32(0), jnp.int32(bos), init_state, tokens, jnp.float32(0.0), jnp.bool_(False))
        length, _, _, tokens, score, _ = jax.lax.while_loop(cond, body, init)
        return tokens, score, length


class NucleusNamedP(Sampling):
    """Control: `sample` with its nucleus parameter named `p` (a correct sampler)."""

    def __init__(self, *, temperature=1.0, top_k=0, p=1.0, num_samples=1, max_length=50, min_length=0):
        super().__init__(
            temperature=temperature, top_k=top_k, top_p=p, num_samples=num_samples,
            max_length=max_length, min_length=min_length,
        )  # fmt: skip


class NucleusNamedPIgnored(Sampling):
    """A nucleus sampler whose `p` does nothing: it never truncates by mass."""

    def __init__(self, *, temperature=1.0, top_k=0, p=1.0, num_samples=1, max_length=50, min_length=0):
        super().__init__(
            temperature=temperature, top_k=top_k, top_p=1.0, num_samples=num_samples,
            max_length=max_length, min_length=min_length,
        )  # fmt: skip
