"""Generation from a language model through the registry's decoding strategies, and the one sampler."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import zoo
from zoo.errors import InvalidParameterError
from zoo.generation import NO_EOS, generate, generate_text, text_strategy

PROBS = jnp.asarray([0.05, 0.5, 0.15, 0.3])
LOGITS = jnp.log(PROBS)


def draws(n=4000, **settings):
    """First tokens of `n` draws of the registry's `sample` from a model whose next-token
    distribution is always `PROBS`."""
    sampler = zoo.build_component("sample", max_length=1, **settings)
    step = lambda token, state: (LOGITS, state)
    first = eqx.filter_jit(jax.vmap(lambda k: sampler(step, (), bos=0, eos=NO_EOS, pad=0, key=k).tokens[0, 0]))
    return np.asarray(first(jax.random.split(jax.random.key(0), n)))


def test_top_p_keeps_the_smallest_set_reaching_the_mass_float_error_aside():
    first = draws(top_p=0.8)  # 0.5 + 0.3 reaches 0.8 (their float32 sum is just below it)
    assert set(first.tolist()) == {1, 3}
    np.testing.assert_allclose(np.bincount(first, minlength=4)[[1, 3]] / 4000, [0.5 / 0.8, 0.3 / 0.8], atol=0.03)


def test_a_high_temperature_flattens_the_distribution():
    hot = np.bincount(draws(temperature=3.0), minlength=4) / 4000
    flat = PROBS ** (1 / 3) / jnp.sum(PROBS ** (1 / 3))  # softmax(log p / 3)
    np.testing.assert_allclose(hot, flat, atol=0.03)


@pytest.fixture(scope="module")
def model():
    """A random model with sharp next-token distributions (no near-ties for greedy to break)."""
    built = zoo.build("lm", key=jax.random.key(1), vocab_size=13, hidden_size=16, embedding_size=8, num_layers=1)
    return eqx.tree_at(lambda m: m.output_weight, built, built.output_weight * 300.0)


@eqx.filter_jit
def _read(model, prompt):
    return model(prompt, jnp.ones(prompt.shape[0], bool), model.init_state())


_step = eqx.filter_jit(lambda model, token, state: model.step(token, state))


def greedy_by_hand(model, prompt, length):
    logits, state = _read(model, jnp.asarray(prompt))
    logits, out = logits[-1], []
    for _ in range(length):
        token = jnp.argmax(logits)
        out.append(int(token))
        logits, state = _step(model, token, state)
    return out


def test_generation_is_reproducible_by_key_and_never_ends_early(model):
    prompt = [3, 7, 2]
    sampler = text_strategy(length=12, samples=3)
    first = generate(model, prompt, sampler, key=jax.random.key(4))
    again = generate(model, prompt, sampler, key=jax.random.key(4))
    np.testing.assert_array_equal(first.tokens, again.tokens)
    assert first.tokens.shape == (3, 12) and np.all(np.asarray(first.lengths) == 12)  # nothing ends a text
    assert np.all(np.diff(np.asarray(first.scores)) <= 0)
    assert len({tuple(row) for row in np.asarray(first.tokens)}) > 1, "independent samples should differ"
    other = generate(model, prompt, sampler, key=jax.random.key(5))
    assert not np.array_equal(first.tokens, other.tokens), "the key decides the draw"


@pytest.mark.parametrize("prompt", [[5], [5, 6], [5, 6, 7, 8]])
def test_prompt_padding_does_not_change_the_continuation(model, prompt):
    # The prompt but its last token is read padded to a power of two: nothing in 1, 1 in 1, 3 in 4.
    out = generate(model, prompt, text_strategy(length=8, temperature=0.0))
    assert np.asarray(out.tokens[0]).tolist() == greedy_by_hand(model, prompt, 8)


def test_any_strategy_decodes_a_language_model(model):
    prompt = [3, 7, 2]
    beam = generate(model, prompt, zoo.build_component("beam", beam_size=3, n_best=3, alpha=0.0, max_length=6))
    assert beam.tokens.shape == (3, 6) and np.all(np.diff(np.asarray(beam.scores)) <= 1e-6)
    greedy = generate(model, prompt, zoo.build_component("greedy", max_length=6))
    assert float(beam.scores[0]) >= float(greedy.scores[0]) - 1e-4  # a wider search finds at least greedy's


def test_text_generation_builds_the_registrys_strategies_and_checks_them(model):
    assert text_strategy(length=5, temperature=0.0) == zoo.build_component("greedy", max_length=5)
    assert text_strategy(length=5, top_p=0.9, samples=2) == zoo.build_component(
        "sample", top_p=0.9, num_samples=2, max_length=5
    )
    with pytest.raises(InvalidParameterError, match="top_p"):
        text_strategy(length=5, top_p=1.5)
    with pytest.raises(ValueError, match="at least one token"):
        generate(model, [], text_strategy(length=3))
    with pytest.raises(TypeError, match="DecoderStrategy"):
        generate(model, [1], "greedy")


def test_generate_text_gives_each_sample_as_text():
    from zoo.data import Vocab

    vocab = Vocab.build([["the", "cat", "sat", "on", "mat"]])
    built = zoo.build("lm", key=jax.random.key(2), vocab={"tokens": vocab}, hidden_size=16, embedding_size=8)
    texts = generate_text(built, "the cat", length=6, key=jax.random.key(0), samples=3)
    assert len(texts) == 3 and all(isinstance(t, str) for t in texts)
    assert all(len(t.split()) <= 6 for t in texts) and texts == generate_text(
        built, "the cat", length=6, key=jax.random.key(0), samples=3
    )
    greedy = generate_text(built, "the cat", length=6, key=jax.random.key(1), temperature=0.0, samples=2)
    assert len(greedy) == 2 and greedy[0] == greedy[1]
