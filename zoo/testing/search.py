"""Checks for strategies by the parameters they declare, on constructed step functions.

A strategy's registry ``params`` say what it promises:

- ``beam_size`` (a width-limited search; with ``n_best`` hypotheses returned and
  ``alpha``, the length-normalisation exponent of ``score = log P(y) / |y|^alpha``):
  width 1 with alpha 0 equals greedy decoding; n-best lists are sorted and
  distinct; a width covering every prefix finds exactly the best sequences; it
  does not stop when the best hypothesis ends while a longer one can still win.
- ``temperature`` (a sampler; ``top_k``/``top_p`` truncation): temperature 0 and
  temperature -> 0 equal greedy decoding; draws follow the model's distribution.

The reference greedy decoder and the exhaustive search here are plain Python.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zoo.builder import component_spec
from zoo.testing.base import ConformanceTests
from zoo.testing.strategies import BOS, EOS, PAD, toy_language_model

__all__ = ["SamplerTests", "WidthSearchTests", "exhaustive_search", "prefix_language_model", "reference_greedy"]

A, B = 3, 4  # the two real tokens of the constructed models (vocabulary: pad, bos, eos, a, b)


def prefix_language_model(table: dict[tuple[int, ...], dict[int, float]], default: dict[int, float]):
    """A step function whose next-token distribution depends on the whole prefix.

    `table` maps a prefix (tuple of tokens after bos) to ``{token: probability}``;
    prefixes not in it use `default`. Tokens absent from a distribution get
    probability 0 (logit -inf). The state is the prefix's node id.

    **Returns:** ``(step_fn, initial_state)``.
    """
    prefixes = [()] + [p for p in table if p]
    prefixes += [p[:i] for p in table for i in range(1, len(p)) if p[:i] not in prefixes]
    prefixes = list(dict.fromkeys(prefixes))
    other = len(prefixes)  # every unlisted prefix shares this node
    node = {p: i for i, p in enumerate(prefixes)}
    logits = np.full((other + 1, 5), -np.inf, np.float32)
    nxt = np.full((other + 1, 5), other, np.int32)
    for prefix, i in node.items():
        for token, prob in table.get(prefix, default).items():
            logits[i, token] = np.log(prob)
        for token in range(5):
            nxt[i, token] = node.get((*prefix, token), other)
    for token, prob in default.items():
        logits[other, token] = np.log(prob)
    logits_j, nxt_j = jnp.asarray(logits), jnp.asarray(nxt)

    def step(token, state):
        state = jnp.where(token == BOS, state, nxt_j[state, token])
        return logits_j[state], state

    return step, jnp.int32(0)


def random_language_model(seed: int):
    """Random prefix-dependent logits over pad, bos, eos, a, b; pad and bos impossible."""
    table = jax.random.normal(jax.random.key(seed), (5, 5)) * 1.5
    table = table.at[:, PAD].set(-jnp.inf).at[:, BOS].set(-jnp.inf)

    def step(token, state):
        logits = table[token] + jnp.where(jnp.arange(5) >= EOS, state, 0.0)
        return logits, 0.6 * state + jax.nn.one_hot(token, 5)

    return step, 0.5 * jax.random.normal(jax.random.key(seed + 1), (5,))


def reference_greedy(step_fn: Callable, state: Any, max_length: int, min_length: int = 0):
    """Argmax decoding, one Python step at a time: ``(tokens list, summed log-prob)``."""
    token, tokens, total = BOS, [], 0.0
    for t in range(max_length):
        logits, state = step_fn(jnp.int32(token), state)
        logp = np.asarray(jax.nn.log_softmax(logits.astype(jnp.float32)))
        if t + 1 < min_length:
            logp[EOS] = -np.inf
        token = int(np.argmax(logp))
        tokens.append(token)
        total += float(logp[token])
        if token == EOS:
            break
    return tokens, total


def exhaustive_search(step_fn: Callable, state: Any, max_length: int, alpha: float, tokens=(EOS, A, B)):
    """Every sequence up to `max_length` (ending in eos or cut at the limit), best first:
    a list of ``(score, tokens)`` with ``score = log P / len^alpha``."""
    results = []

    def visit(prefix, state, logp_sum, token):
        logits, state = step_fn(jnp.int32(token), state)
        logp = np.asarray(jax.nn.log_softmax(logits.astype(jnp.float32)))
        for nxt in tokens:
            total, seq = logp_sum + float(logp[nxt]), [*prefix, nxt]
            if nxt == EOS or len(seq) == max_length:
                results.append((total / len(seq) ** alpha, seq))
            else:
                visit(seq, state, total, nxt)

    visit([], state, 0.0, BOS)
    return sorted(results, key=lambda r: -r[0])


@eqx.filter_jit
def _search(strategy, step_fn, state, key):
    return strategy(step_fn, state, bos=BOS, eos=EOS, pad=PAD, key=key)


def _run(strategy, step_fn, state, key=None):
    """Decode one input, compiled once per strategy and step function."""
    return jax.device_get(_search(strategy, step_fn, state, key))


def _sequence(tokens: np.ndarray, length: int) -> list[int]:
    return [int(t) for t in tokens[:length]]


class _DeclaredStrategy(ConformanceTests):
    """Strategies whose registry params include `declares`; others skip."""

    zoo_kind: ClassVar[str] = "strategy"
    declares: ClassVar[str] = ""

    @pytest.fixture(scope="class")
    @classmethod
    def entry(cls, registry, zoo_component):
        entry = registry.component(zoo_component)
        if cls.declares not in entry.params:
            pytest.skip(f"{zoo_component!r} declares no {cls.declares!r} parameter")
        return entry

    @pytest.fixture(scope="class")
    @classmethod
    def make(cls, registry, entry):
        def make(**params):
            params = {k: v for k, v in params.items() if k in entry.params}
            return component_spec(entry.name, kind="strategy", registry=registry, **params).build()

        return make


class WidthSearchTests(_DeclaredStrategy):
    """For strategies declaring `beam_size` (see the module docstring)."""

    declares: ClassVar[str] = "beam_size"

    def test_width_one_without_length_penalty_equals_greedy(self, make):
        strategy = make(beam_size=1, n_best=1, alpha=0.0, max_length=7)
        step, states = toy_language_model()
        for row in range(states.shape[0]):
            hyps = _run(strategy, step, states[row])
            want, total = reference_greedy(step, states[row], 7)
            assert _sequence(hyps.tokens[0], int(hyps.lengths[0])) == want
            np.testing.assert_allclose(float(hyps.scores[0]), total, rtol=1e-5, atol=1e-5)

    def test_wider_search_finds_what_greedy_misses(self, make):
        # greedy takes a (0.6) but every continuation of a is poor; b (0.4) then eos (0.99) wins
        step, state = prefix_language_model(
            {(): {A: 0.6, B: 0.4}, (A,): {EOS: 0.34, A: 0.33, B: 0.33}, (B,): {EOS: 0.99, A: 0.01}},
            default={EOS: 0.5, A: 0.25, B: 0.25},
        )
        hyps = _run(make(beam_size=2, n_best=1, alpha=0.0, max_length=5), step, state)
        assert _sequence(hyps.tokens[0], int(hyps.lengths[0])) == [B, EOS]
        np.testing.assert_allclose(float(hyps.scores[0]), np.log(0.4) + np.log(0.99), rtol=1e-5)
        assert reference_greedy(step, state, 5)[0][0] == A

    def test_length_penalty_stopping_case(self, make, entry):
        # the best beam ends at once (eos 0.55), but a a a eos (0.45 * 1 * 1 * 1) wins per token
        if "alpha" not in entry.params:
            pytest.skip("this search declares no length normalisation (alpha)")
        step, state = prefix_language_model(
            {(): {EOS: 0.55, A: 0.45}, (A,): {A: 0.999, EOS: 0.001}, (A, A): {A: 0.999, EOS: 0.001}},
            default={EOS: 0.999, A: 0.001},
        )
        long = _run(make(beam_size=2, n_best=1, alpha=1.0, max_length=8), step, state)
        assert _sequence(long.tokens[0], int(long.lengths[0])) == [A, A, A, EOS], (
            "the search stopped when the best hypothesis ended, though a longer one wins after normalisation"
        )
        short = _run(make(beam_size=2, n_best=1, alpha=0.0, max_length=8), step, state)
        assert _sequence(short.tokens[0], int(short.lengths[0])) == [EOS]

    @pytest.mark.parametrize("alpha", [0.0, 0.7, 1.0])
    def test_width_covering_every_prefix_is_exact(self, make, entry, alpha):
        if alpha and "alpha" not in entry.params:
            pytest.skip("this search declares no length normalisation (alpha)")
        max_length, n = 4, 5
        strategy = make(beam_size=3 * 2 ** (max_length - 1), n_best=n, alpha=alpha, max_length=max_length)
        for seed in (0, 1):
            step, state = random_language_model(seed)
            hyps = _run(strategy, step, state)
            best = exhaustive_search(step, state, max_length, alpha)[:n]
            got = [_sequence(t, int(k)) for t, k in zip(hyps.tokens, hyps.lengths, strict=True)]
            assert got == [seq for _, seq in best]
            np.testing.assert_allclose(hyps.scores, [s for s, _ in best], rtol=1e-5, atol=1e-5)

    def test_n_best_sorted_and_distinct(self, make, entry):
        if "n_best" not in entry.params:
            pytest.skip("this search declares no n_best")
        step, states = toy_language_model()
        strategy = make(beam_size=4, n_best=4, max_length=6)
        for row in range(states.shape[0]):
            hyps = _run(strategy, step, states[row])
            assert hyps.tokens.shape[0] == 4
            assert all(a >= b for a, b in itertools.pairwise(hyps.scores)), f"not sorted: {hyps.scores}"
            seqs = {tuple(_sequence(t, int(k))) for t, k in zip(hyps.tokens, hyps.lengths, strict=True)}
            assert len(seqs) == 4, "the n-best list repeats a hypothesis"


class SamplerTests(_DeclaredStrategy):
    """For strategies declaring `temperature` (see the module docstring)."""

    declares: ClassVar[str] = "temperature"

    @pytest.mark.parametrize("temperature", [0.0, 1e-4])
    def test_temperature_to_zero_equals_greedy(self, make, temperature):
        step, states = toy_language_model()
        strategy = make(temperature=temperature, num_samples=1, top_k=0, top_p=1.0, max_length=7)
        for row in range(states.shape[0]):
            hyps = _run(strategy, step, states[row], jax.random.key(row))
            assert _sequence(hyps.tokens[0], int(hyps.lengths[0])) == reference_greedy(step, states[row], 7)[0]

    def test_draws_follow_the_distribution(self, make):
        step, state = prefix_language_model({(): {EOS: 0.5, A: 0.3, B: 0.2}}, default={EOS: 1.0})
        strategy = make(temperature=1.0, top_k=0, top_p=1.0, num_samples=1, max_length=2)
        draw = eqx.filter_jit(jax.vmap(lambda k: strategy(step, state, bos=BOS, eos=EOS, pad=PAD, key=k).tokens[0, 0]))
        first = np.asarray(draw(jax.random.split(jax.random.key(0), 4000)))
        freq = [np.mean(first == t) for t in (EOS, A, B)]
        np.testing.assert_allclose(freq, [0.5, 0.3, 0.2], atol=0.03)

    def test_truncation_keeps_only_the_head(self, make, entry):
        step, state = prefix_language_model({(): {EOS: 0.5, A: 0.3, B: 0.2}}, default={EOS: 1.0})
        for params in ({"top_k": 2}, {"top_p": 0.75}):
            if not set(params) <= set(entry.params):
                continue
            strategy = make(temperature=1.0, num_samples=1, max_length=2, **{"top_k": 0, "top_p": 1.0, **params})
            draw = eqx.filter_jit(
                jax.vmap(lambda k, s=strategy: s(step, state, bos=BOS, eos=EOS, pad=PAD, key=k).tokens[0, 0])
            )
            first = np.asarray(draw(jax.random.split(jax.random.key(1), 2000)))
            assert not np.any(first == B), f"{params} still drew a token outside the head"
            np.testing.assert_allclose(np.mean(first == EOS), 0.5 / 0.8, atol=0.04)

    def test_different_keys_give_different_draws(self, make):
        step, states = toy_language_model()
        strategy = make(temperature=1.0, num_samples=1, top_k=0, top_p=1.0, max_length=6)
        draws = {tuple(_run(strategy, step, states[0], jax.random.key(i)).tokens[0]) for i in range(8)}
        assert len(draws) > 1, "eight keys gave the same sample"
