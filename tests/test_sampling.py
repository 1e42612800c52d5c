"""Sampling: temperature, top-k, top-p, and compiled generation from a language model."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import zoo
from zoo.sampling import filter_logits, generate, sample_token

PROBS = jnp.asarray([0.05, 0.5, 0.15, 0.3])
LOGITS = jnp.log(PROBS)


def draws(n=4000, **settings):
    keys = jax.random.split(jax.random.key(0), n)
    return np.asarray(jax.jit(jax.vmap(lambda k: sample_token(LOGITS, k, **settings)))(keys))


def test_plain_sampling_follows_the_distribution():
    freq = np.bincount(draws(), minlength=4) / 4000
    np.testing.assert_allclose(freq, PROBS, atol=0.03)


def test_top_k_keeps_the_k_most_probable():
    assert set(draws(top_k=2).tolist()) == {1, 3}
    assert set(draws(top_k=1).tolist()) == {1}
    kept = filter_logits(LOGITS, top_k=3)
    assert bool(kept[0] == jnp.finfo(jnp.float32).min) and bool(jnp.all(kept[1:] == LOGITS[1:]))


def test_top_p_keeps_the_smallest_set_reaching_the_mass():
    assert set(draws(top_p=0.8).tolist()) == {1, 3}  # 0.5 + 0.3 reaches 0.8
    assert set(draws(top_p=0.81).tolist()) == {1, 2, 3}
    assert set(draws(top_p=0.2).tolist()) == {1}  # the best token always stays
    freq = np.bincount(draws(top_p=0.8), minlength=4) / 4000
    np.testing.assert_allclose(freq[[1, 3]], [0.5 / 0.8, 0.3 / 0.8], atol=0.03)


def test_low_temperature_sharpens_and_zero_is_greedy():
    assert set(draws(temperature=0.0).tolist()) == {1}
    assert set(draws(temperature=1e-3).tolist()) == {1}
    hot = np.bincount(draws(temperature=3.0), minlength=4) / 4000
    assert hot[0] > 0.12, "a high temperature flattens the distribution"


@pytest.fixture(scope="module")
def model():
    """A random model with sharp next-token distributions (no near-ties for greedy to break)."""
    built = zoo.build("lm", key=jax.random.key(1), vocab_size=13, hidden_size=16, embedding_size=8)
    return eqx.tree_at(lambda m: m.output_weight, built, built.output_weight * 300.0)


def greedy_by_hand(model, prompt, length):
    logits, state = model(jnp.asarray(prompt), jnp.ones(len(prompt), bool), model.init_state())
    logits, out = logits[-1], []
    for _ in range(length):
        token = jnp.argmax(logits)
        out.append(int(token))
        logits, state = model.step(token, state)
    return out


def test_generation_is_reproducible_and_zero_temperature_is_greedy(model):
    prompt = [3, 7, 2]
    first = generate(model, prompt, length=12, key=jax.random.key(4), samples=3)
    again = generate(model, prompt, length=12, key=jax.random.key(4), samples=3)
    np.testing.assert_array_equal(first, again)
    assert first.shape == (3, 12)
    assert len({tuple(row) for row in np.asarray(first)}) > 1, "independent samples should differ"
    greedy = greedy_by_hand(model, prompt, 12)
    for settings in ({"temperature": 0.0}, {"temperature": 1e-4}, {"top_k": 1}):
        out = generate(model, prompt, length=12, key=jax.random.key(9), **settings)
        assert np.asarray(out[0]).tolist() == greedy, settings


def test_prompt_padding_does_not_change_the_continuation(model):
    # Prompts of 3 and 4 tokens pad to the same width: the padding must be invisible.
    short = generate(model, [5, 6, 7], length=6, key=jax.random.key(2), temperature=0.0)
    assert np.asarray(short[0]).tolist() == greedy_by_hand(model, [5, 6, 7], 6)
    with pytest.raises(ValueError, match="at least one token"):
        generate(model, [], length=3, key=jax.random.key(0))
