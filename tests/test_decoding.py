"""Beam search and sampling: exactness, stopping, pads, batching, switching at decode time."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zoo.building.builder import build
from zoo.testing.search import A, B, exhaustive_search, prefix_language_model, random_language_model
from zoo.testing.strategies import BOS, EOS, PAD, toy_language_model
from zoo_decoding.beam import BeamSearch, length_normalise
from zoo_decoding.greedy import GreedySearch
from zoo_decoding.sample import Sampling, truncate_logits


@eqx.filter_jit
def _search(strategy, step, state, key=None):
    return strategy(step, state, bos=BOS, eos=EOS, pad=PAD, key=key)


def _seq(hyps, row=0):
    return [int(t) for t in np.asarray(hyps.tokens[row][: int(hyps.lengths[row])])]


# -- beam search on constructed step functions ------------------------------------------


def test_beam_width_one_equals_greedy_on_every_toy_state():
    step, states = toy_language_model(seed=3)
    greedy, beam = GreedySearch(max_length=8), BeamSearch(beam_size=1, alpha=0.0, max_length=8)
    for row in range(states.shape[0]):
        g, b = _search(greedy, step, states[row]), _search(beam, step, states[row])
        np.testing.assert_array_equal(np.asarray(g.tokens), np.asarray(b.tokens))
        np.testing.assert_allclose(np.asarray(g.scores), np.asarray(b.scores), rtol=1e-6)
        assert int(g.lengths[0]) == int(b.lengths[0])


def test_beam_finds_the_sequence_greedy_misses():
    step, state = prefix_language_model(
        {(): {A: 0.6, B: 0.4}, (A,): {EOS: 0.34, A: 0.33, B: 0.33}, (B,): {EOS: 0.99, A: 0.01}},
        default={EOS: 0.5, A: 0.25, B: 0.25},
    )
    greedy = _search(GreedySearch(max_length=5), step, state)
    beam = _search(BeamSearch(beam_size=2, alpha=0.0, max_length=5), step, state)
    assert _seq(greedy) == [A, EOS]
    assert _seq(beam) == [B, EOS]
    assert float(beam.scores[0]) > float(greedy.scores[0])


def test_longer_hypothesis_wins_under_length_normalisation():
    # eos first is the single likeliest step (0.55) but 'a a a eos' has more probability per token
    step, state = prefix_language_model(
        {(): {EOS: 0.55, A: 0.45}, (A,): {A: 0.999, EOS: 0.001}, (A, A): {A: 0.999, EOS: 0.001}},
        default={EOS: 0.999, A: 0.001},
    )
    normalised = _search(BeamSearch(beam_size=2, alpha=1.0, n_best=2, max_length=8), step, state)
    assert _seq(normalised, 0) == [A, A, A, EOS]
    assert _seq(normalised, 1) == [EOS]
    np.testing.assert_allclose(float(normalised.scores[0]), np.log(0.45 * 0.999**3) / 4, rtol=1e-5)
    plain = _search(BeamSearch(beam_size=2, alpha=0.0, max_length=8), step, state)
    assert _seq(plain) == [EOS]


def test_stopping_bound_uses_the_longest_allowed_length():
    search = BeamSearch(beam_size=2, alpha=0.5, max_length=16)
    bound = search.best_reachable(jnp.asarray([-2.0, -8.0]), jnp.int32(3))
    np.testing.assert_allclose(np.asarray(bound), [-2.0 / 4.0, -8.0 / 4.0])
    shorter = BeamSearch(beam_size=2, alpha=-0.5, max_length=16, min_length=6)
    np.testing.assert_allclose(np.asarray(shorter.best_reachable(jnp.asarray([-2.0]), jnp.int32(1))), [-2.0 * 6**0.5])
    np.testing.assert_allclose(float(length_normalise(jnp.float32(-3.0), jnp.int32(9), 0.5)), -1.0)


@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_wide_beam_is_exact_and_n_best_matches_exhaustive_search(alpha):
    step, state = random_language_model(seed=7)
    hyps = _search(BeamSearch(beam_size=24, alpha=alpha, n_best=6, max_length=4), step, state)
    best = exhaustive_search(step, state, 4, alpha)[:6]
    assert [_seq(hyps, r) for r in range(6)] == [seq for _, seq in best]
    np.testing.assert_allclose(np.asarray(hyps.scores), [s for s, _ in best], rtol=1e-5)


def test_pads_after_eos_and_empty_slots():
    step, state = prefix_language_model({(): {EOS: 0.7, A: 0.3}}, default={EOS: 1.0})
    hyps = _search(BeamSearch(beam_size=4, alpha=0.0, n_best=4, max_length=5), step, state)
    tokens = np.asarray(hyps.tokens)
    assert _seq(hyps, 0) == [EOS] and _seq(hyps, 1) == [A, EOS]
    np.testing.assert_array_equal(tokens[0, 1:], PAD)
    np.testing.assert_array_equal(tokens[1, 2:], PAD)
    # only two sequences have any probability: the other slots are empty
    assert np.all(np.isneginf(np.asarray(hyps.scores[2:]))) and np.all(np.asarray(hyps.lengths[2:]) == 0)
    np.testing.assert_array_equal(tokens[2:], PAD)


def test_max_and_min_length():
    step, states = toy_language_model(seed=1, eos_bias=-20.0)  # eos never wins: cut at max_length
    hyps = _search(BeamSearch(beam_size=3, n_best=3, max_length=5), step, states[0])
    assert np.all(np.asarray(hyps.lengths) == 5) and not np.any(np.asarray(hyps.tokens) == EOS)
    step, states = toy_language_model(seed=1, eos_bias=20.0)  # eos always wins: held off by min_length
    hyps = _search(BeamSearch(beam_size=3, n_best=3, max_length=8, min_length=4), step, states[0])
    assert np.all(np.asarray(hyps.lengths) == 4)


def test_invalid_beam_settings_are_rejected():
    with pytest.raises(ValueError, match="n_best"):
        BeamSearch(beam_size=2, n_best=3)
    with pytest.raises(ValueError, match="beam_size"):
        BeamSearch(beam_size=0)
    with pytest.raises(ValueError, match="min_length"):
        BeamSearch(max_length=4, min_length=5)


# -- sampling -----------------------------------------------------------------------------


def test_sampling_is_reproducible_and_tends_to_greedy():
    step, states = toy_language_model(seed=2)
    sampler = Sampling(temperature=1.0, num_samples=4, max_length=8)
    a, b = _search(sampler, step, states[0], jax.random.key(9)), _search(sampler, step, states[0], jax.random.key(9))
    np.testing.assert_array_equal(np.asarray(a.tokens), np.asarray(b.tokens))
    assert np.all(np.diff(np.asarray(a.scores)) <= 0)
    greedy = _search(GreedySearch(max_length=8), step, states[0])
    for temperature in (0.0, 1e-5):
        cold = _search(Sampling(temperature=temperature, max_length=8), step, states[0], jax.random.key(1))
        np.testing.assert_array_equal(np.asarray(cold.tokens), np.asarray(greedy.tokens))
        np.testing.assert_allclose(np.asarray(cold.scores), np.asarray(greedy.scores), rtol=1e-5)


def test_sampling_needs_a_key():
    step, states = toy_language_model()
    with pytest.raises(ValueError, match="needs a key"):
        Sampling()(step, states[0], bos=BOS, eos=EOS, pad=PAD)


def test_truncation_of_logits_masks_with_the_finite_minimum():
    logits = jnp.log(jnp.asarray([0.05, 0.5, 0.1, 0.3, 0.05]))
    floor = np.finfo(np.float32).min

    def kept(top_k, top_p):
        out = np.asarray(truncate_logits(logits, top_k, top_p))
        assert np.all(np.isfinite(out)) and set(out[out != floor]) <= set(np.asarray(logits)), out
        return (out != floor).tolist()

    assert kept(2, 1.0) == [False, True, False, True, False]
    assert kept(0, 0.85) == [False, True, True, True, False]
    assert kept(0, 0.8) == [False, True, False, True, False]  # 0.5 + 0.3 reaches 0.8, float error aside
    assert kept(0, 0.01) == [False, True, False, False, False]  # the best token always stays
    assert kept(3, 0.7) == [False, True, False, True, False]
    assert kept(0, 1.0) == [True] * 5


# -- on a real model ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def model():
    return build(
        "seq2seq+luong-general+beam",
        key=jax.random.key(0),
        src_vocab_size=12,
        tgt_vocab_size=9,
        embedding_size=8,
        hidden_size=16,
        **{"strategy.max_length": 7, "strategy.beam_size": 3},
    )


@pytest.fixture(scope="module")
def sources():
    ids = jax.random.randint(jax.random.key(5), (5, 6), 4, 12)
    lengths = jnp.asarray([6, 3, 5, 1, 4])
    return jnp.where(jnp.arange(6) < lengths[:, None], ids, 0)


def test_name_composes_and_strategy_switches_at_decode_time(model, sources):
    assert model.spec.slot("strategy").component == "beam"
    assert isinstance(model.strategy, BeamSearch) and model.strategy.beam_size == 3
    greedy = model.decode(sources, strategy="greedy", max_length=7)
    width_one = model.decode(sources, strategy="beam", beam_size=1, alpha=0.0)
    np.testing.assert_array_equal(np.asarray(greedy.tokens), np.asarray(width_one.tokens))
    np.testing.assert_allclose(np.asarray(greedy.scores), np.asarray(width_one.scores), rtol=1e-5)
    five = model.decode(sources, strategy="beam", beam_size=5, n_best=5)
    assert five.tokens.shape == (5, 5, 7)
    assert np.all(np.diff(np.asarray(five.scores), axis=1) <= 1e-6)


def test_batch_size_does_not_change_results(model, sources):
    whole = jax.device_get(model.decode(sources, strategy="beam", beam_size=4, n_best=4))
    pair = jax.device_get(model.decode(sources[1:3], strategy="beam", beam_size=4, n_best=4))
    for row in range(sources.shape[0]):
        one = jax.device_get(model.decode(sources[row : row + 1], strategy="beam", beam_size=4, n_best=4))
        np.testing.assert_array_equal(whole.tokens[row], one.tokens[0])
        np.testing.assert_allclose(whole.scores[row], one.scores[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(whole.tokens[1:3], pair.tokens)


def test_sampling_from_a_model(model, sources):
    a = model.decode(sources, strategy="sample", num_samples=2, key=jax.random.key(4))
    b = model.decode(sources, strategy="sample", num_samples=2, key=jax.random.key(4))
    np.testing.assert_array_equal(np.asarray(a.tokens), np.asarray(b.tokens))
    c = model.decode(sources, strategy="sample", num_samples=2, key=jax.random.key(5))
    assert not np.array_equal(np.asarray(a.tokens), np.asarray(c.tokens))


def _dot_count(fn, *args) -> int:
    return str(jax.make_jaxpr(fn)(*args)).count("dot_general")


@pytest.mark.parametrize("attention", ["luong-general", "bahdanau"])
def test_search_step_gives_the_step_s_logits_with_a_vocabulary_table_where_it_pays(attention, sources):
    model = build(
        f"seq2seq+{attention}",
        key=jax.random.key(1),
        src_vocab_size=12,
        tgt_vocab_size=9,
        embedding_size=8,
        hidden_size=16,
        **{"decoder.num_layers": 2},
    )
    decoder = model.decoder
    enc, memory = model.encode(sources[0], sources[0] != 0)
    state = decoder.init_state(enc)
    token = jnp.int32(5)
    expected = decoder.step(token, state, memory)
    tabled = decoder.search_step(lookups=9)  # as many tokens fed as the vocabulary holds: a table pays
    plain = decoder.search_step(lookups=8)
    search_memory = decoder.search_memory(enc, sources[0] != 0)
    for step in (tabled, plain):
        logits, new_state = step(token, state, search_memory)
        np.testing.assert_allclose(np.asarray(logits), np.asarray(expected[0]), rtol=1e-5, atol=1e-6)
        for a, b in zip(jax.tree.leaves(new_state), jax.tree.leaves(expected[1]), strict=True):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    # Luong's first layer reads the embedding alone, so its input product leaves the step;
    # Bahdanau's also reads the context, which no table can hold.
    saved = _dot_count(lambda t: plain(t, state, search_memory), token) - _dot_count(
        lambda t: tabled(t, state, search_memory), token
    )
    assert saved == (1 if attention == "luong-general" else 0)


@pytest.mark.parametrize("attention", ["luong-general", "bahdanau", None])
def test_step_by_step_decoding_gives_the_teacher_forced_logits(attention, sources):
    name = "seq2seq" if attention is None else f"seq2seq+{attention}"
    model = build(
        name,
        key=jax.random.key(2),
        src_vocab_size=12,
        tgt_vocab_size=9,
        embedding_size=8,
        hidden_size=16,
        **{"decoder.num_layers": 2},
    )
    src, mask = sources[1], sources[1] != 0
    tgt_in = jnp.asarray([2, 5, 7, 4, 8], jnp.int32)  # bos first
    forced = model(src, mask, tgt_in).logits
    enc, memory = model.encode(src, mask)
    state = model.decoder.init_state(enc)
    for t, token in enumerate(tgt_in):
        logits, state = model.decoder.step(token, state, memory)
        np.testing.assert_allclose(np.asarray(logits), np.asarray(forced[t]), rtol=1e-4, atol=1e-5)
