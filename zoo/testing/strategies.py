"""Checks for decoding strategies, run on a synthetic step function."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zoo.builder import component_spec
from zoo.interfaces import DecoderStrategy, Hypotheses
from zoo.testing.base import ConformanceTests, assert_trees_close

__all__ = ["StrategyTests", "toy_language_model"]

PAD, BOS, EOS, VOCAB = 0, 1, 2, 9


def toy_language_model(seed: int = 0, eos_bias: float = 0.0):
    """A small stateful step function: ``logits = T[token] + h``, ``h' = 0.5 h + onehot(token)``.

    **Returns:** ``(step_fn, initial states [4, VOCAB])``.
    """
    table = 2.0 * jax.random.normal(jax.random.key(seed), (VOCAB, VOCAB))
    table = table.at[:, EOS].add(eos_bias).at[:, PAD].set(-1e4).at[:, BOS].set(-1e4)

    def step(token, state):
        return table[token] + state, 0.5 * state + jax.nn.one_hot(token, VOCAB)

    states = 0.5 * jax.random.normal(jax.random.key(seed + 1), (4, VOCAB))
    return step, states


@eqx.filter_jit
def _decode(strategy, state, key):
    step, _ = toy_language_model()
    return strategy(step, state, bos=BOS, eos=EOS, pad=PAD, key=key)


@eqx.filter_jit
def _decode_batch(strategy, states, keys):
    step, _ = toy_language_model()
    return jax.vmap(lambda s, k: strategy(step, s, bos=BOS, eos=EOS, pad=PAD, key=k))(states, keys)


class StrategyTests(ConformanceTests):
    """Shapes, pads after eos, sorted scores, jit, batch-size invariance, keys."""

    zoo_kind: ClassVar[str] = "strategy"

    @pytest.fixture(scope="class")
    @classmethod
    def entry(cls, registry, zoo_component):
        return registry.component(zoo_component)

    @pytest.fixture(scope="class")
    @classmethod
    def strategy(cls, registry, entry):
        return component_spec(entry.name, kind="strategy", registry=registry, **entry.test).build()

    def run(self, strategy, state, key=None) -> Hypotheses:
        return _decode(strategy, state, key)

    @pytest.fixture(scope="class")
    @classmethod
    def states(cls):
        return toy_language_model()[1]

    def test_is_a_strategy(self, strategy):
        assert isinstance(strategy, DecoderStrategy)
        assert strategy.max_length >= 1

    def test_shapes(self, strategy, states):
        hyps = self.run(strategy, states[0], jax.random.key(0))
        n = hyps.tokens.shape[0]
        assert hyps.tokens.shape == (n, strategy.max_length)
        assert hyps.scores.shape == (n,) and hyps.lengths.shape == (n,)
        assert jnp.issubdtype(hyps.tokens.dtype, jnp.integer)

    def test_pad_after_eos_and_lengths(self, strategy, states):
        for row in range(states.shape[0]):
            hyps = jax.device_get(self.run(strategy, states[row], jax.random.key(row)))
            for tokens, length, score in zip(hyps.tokens, hyps.lengths, hyps.scores, strict=True):
                if score == -np.inf:  # an empty n-best slot: no sequence left to fill it
                    assert length == 0 and np.all(tokens == PAD), "an empty slot must hold only pad"
                    continue
                assert 1 <= length <= strategy.max_length
                assert np.all(tokens[length:] == PAD), f"tokens after the end must be pad: {tokens}"
                assert not np.any(tokens[: length - 1] == EOS), f"eos before the end: {tokens}"
                if length < strategy.max_length:
                    assert tokens[length - 1] == EOS, f"a hypothesis shorter than max_length must end in eos: {tokens}"

    def test_scores_sorted_best_first(self, strategy, states):
        hyps = self.run(strategy, states[1], jax.random.key(1))
        assert bool(jnp.all(hyps.scores[:-1] >= hyps.scores[1:] - 1e-6)), f"scores not sorted: {hyps.scores}"

    def test_min_length_is_respected(self, registry, entry, states):
        if "min_length" not in entry.params:
            pytest.skip("this strategy declares no min_length")
        params = {**entry.test, "min_length": 4, "max_length": max(6, entry.test.get("max_length", 6))}
        strategy = component_spec(entry.name, kind="strategy", registry=registry, **params).build()
        step, _ = toy_language_model(eos_bias=6.0)  # eos is by far the likeliest token
        keys = jax.random.split(jax.random.key(3), states.shape[0])
        hyps = jax.device_get(
            eqx.filter_jit(jax.vmap(lambda st, k: strategy(step, st, bos=BOS, eos=EOS, pad=PAD, key=k)))(states, keys)
        )
        real = hyps.scores > -np.inf
        assert np.all(hyps.lengths[real] >= 4), f"min_length=4 but lengths are {hyps.lengths}"

    def test_eager_matches_jit(self, strategy, states):
        step, _ = toy_language_model()
        eager = strategy(step, states[0], bos=BOS, eos=EOS, pad=PAD, key=jax.random.key(0))
        assert_trees_close(eager, self.run(strategy, states[0], jax.random.key(0)), atol=1e-4)

    def test_batch_size_invariance(self, strategy, states):
        keys = jax.random.split(jax.random.key(2), states.shape[0])
        batched = _decode_batch(strategy, states, keys)
        pair = _decode_batch(strategy, states[:2], keys[:2])
        for row in range(states.shape[0]):
            single = self.run(strategy, states[row], keys[row])
            assert_trees_close(jax.tree.map(lambda a, r=row: a[r], batched), single, atol=1e-4)
            if row < 2:
                assert_trees_close(jax.tree.map(lambda a, r=row: a[r], pair), single, atol=1e-4)

    def test_same_key_same_result(self, strategy, states):
        key = jax.random.key(5)
        assert_trees_close(self.run(strategy, states[2], key), self.run(strategy, states[2], key), exact=True)
