"""Checks for every decoding strategy, on synthetic step functions where hypotheses end early.

The contracts (`zoo.interfaces.DecoderStrategy`, `zoo.interfaces.Hypotheses`) and the checks
that enforce them, in the order they run:

- `test_shapes`: ``tokens [n, max_length]`` (integers), ``scores [n]``, ``lengths [n]``.
- `test_pad_after_eos_and_lengths`: each whole row, pads included: ``length`` counts the tokens
  up to and including the first eos (``max_length`` when there is none), every later position
  holds `pad`; an empty slot (score -inf) has length 0 and only pad.
- `test_scores_sorted_best_first`: scores never increase down the n-best list.
- `test_min_length_is_respected`: no eos before `min_length` tokens.
- `test_same_inputs_same_outputs`: two calls on the same inputs and key return the same rows.
- `test_eager_matches_jit`, `test_batch_size_invariance`: ``jit`` and ``vmap`` change nothing.
- `test_the_key_decides_the_draw`, `test_draws_at_different_steps_are_independent`: on
  `coin_language_model` (a fair coin at every step), different keys draw different rows, and a
  row's steps (and the hypotheses of one call) are independent draws; a strategy that draws
  nothing skips them, unless its table declares a sampler's role.

Each runs on `ending_language_model`, where eos becomes likely after a different number of
steps for each input and each prefix, and asserts that some hypothesis did end before
`max_length` (a check on sequences that never end would pass vacuously).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zoo.building.builder import component_spec
from zoo.interfaces import DecoderStrategy, Hypotheses
from zoo.testing.base import ConformanceTests, assert_trees_close

__all__ = [
    "StrategyTests",
    "assert_hypotheses_equal",
    "assert_rows_well_formed",
    "decode",
    "decode_batch",
    "ending_language_model",
    "reference_greedy",
    "toy_language_model",
]

PAD, BOS, EOS, VOCAB = 0, 1, 2, 9


@functools.cache
def toy_language_model(seed: int = 0, eos_bias: float = 0.0):
    """A small stateful step function: ``logits = T[token] + h``, ``h' = 0.5 h + onehot(token)``.

    `eos_bias` is added to every eos logit. The same arguments return the same functions
    (so compiled searches over them are reused).

    **Returns:** ``(step_fn, initial states [4, VOCAB])``.
    """
    with jax.ensure_compile_time_eval():
        table = 2.0 * jax.random.normal(jax.random.key(seed), (VOCAB, VOCAB))
        table = table.at[:, EOS].add(eos_bias).at[:, PAD].set(-1e4).at[:, BOS].set(-1e4)
        states = 0.5 * jax.random.normal(jax.random.key(seed + 1), (4, VOCAB))

    def step(token, state):
        return table[token] + state, 0.5 * state + jax.nn.one_hot(token, VOCAB)

    return step, states


@functools.cache
def ending_language_model(rate: float = 2.0, delays: tuple[int, ...] = (0, 1, 2, 20)):
    """`toy_language_model` with an eos logit that rises by `rate` per step after a delay.

    The state is ``[h (VOCAB), c]`` with a step counter ``c`` starting at ``-delay``; the eos
    logit gains ``rate * c``. With the defaults greedy decoding ends after 3, 5 and 5 tokens on
    the first three inputs and runs past 7 on the last (no near-ties on its path: the best
    token leads the next by at least 0.29 in log-probability), and the hypotheses of beam
    search and sampling end at different steps.

    **Returns:** ``(step_fn, initial states [len(delays), VOCAB + 1])``.
    """
    toy, h0 = toy_language_model()
    with jax.ensure_compile_time_eval():
        eos = jax.nn.one_hot(EOS, VOCAB)
        counters = -jnp.asarray(delays, jnp.float32)[:, None]
        states = jnp.concatenate([h0[np.arange(len(delays)) % h0.shape[0]], counters], axis=1)

    def step(token, state):
        logits, h = toy(token, state[:-1])
        return logits + rate * state[-1] * eos, jnp.concatenate([h, state[-1:] + 1.0])

    return step, states


COIN_STEPS = 6


@functools.cache
def coin_language_model():
    """A step function whose every step is a fair coin between the two tokens 3 and 4 (eos, pad and
    bos impossible), whatever the prefix: a sampler's row is ``COIN_STEPS`` independent coin flips.

    **Returns:** ``(step_fn, initial state)``.
    """
    with jax.ensure_compile_time_eval():
        logits = jnp.full((VOCAB,), -1e4).at[3].set(0.0).at[4].set(0.0)

    def step(token, state):
        return logits, state

    return step, jnp.zeros(())


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


@eqx.filter_jit
def _jit_decode(strategy, step_fn, state, key):
    return strategy(step_fn, state, bos=BOS, eos=EOS, pad=PAD, key=key)


@eqx.filter_jit
def _jit_decode_batch(strategy, step_fn, states, keys):
    return jax.vmap(lambda s, k: strategy(step_fn, s, bos=BOS, eos=EOS, pad=PAD, key=k))(states, keys)


def decode(strategy: DecoderStrategy, step_fn, state, key=None) -> Hypotheses:
    """Decode one input under ``jit`` (compiled once per strategy and step function), on the host."""
    return jax.device_get(_jit_decode(strategy, step_fn, state, key))


def decode_batch(strategy: DecoderStrategy, step_fn, states, keys) -> Hypotheses:
    """Decode a batch of inputs (leading axis) with one key each, under ``jit`` and ``vmap``."""
    return jax.device_get(_jit_decode_batch(strategy, step_fn, states, keys))


def _at(contract: str, name: str, *where: str) -> str:
    """The head of a failure message: the contract, the strategy, the place."""
    return ", ".join([f"{contract}: strategy {name!r}", *where])


def assert_rows_well_formed(hyps: Hypotheses, max_length: int, what: str) -> int:
    """Every whole row of `hyps` keeps the `Hypotheses` contract (see the module docstring).

    `what` starts each message (contract, strategy, input). **Returns:** how many
    hypotheses ended in eos before `max_length`.
    """
    tokens, scores, lengths = (np.asarray(x) for x in (hyps.tokens, hyps.scores, hyps.lengths))
    early = 0
    for j, (row, score, length) in enumerate(zip(tokens, scores, lengths, strict=True)):
        at, listed = f"{what}, hypothesis {j}", f"row {row.tolist()}, length {int(length)}"
        if score == -np.inf:  # an empty n-best slot: no sequence left to fill it
            filled = np.flatnonzero(row != PAD)
            assert length == 0, f"{at}: an empty slot (score -inf) must have length 0; {listed}"
            assert not filled.size, f"{at}, position {filled[0]}: an empty slot holds only pad ({PAD}); {listed}"
            continue
        assert 1 <= length <= max_length, f"{at}: length outside [1, max_length={max_length}]; {listed}"
        ends = np.flatnonzero(row == EOS)
        end = int(ends[0]) + 1 if ends.size else max_length
        assert length == end, (
            f"{at}: the length must count the tokens up to and including the first eos ({EOS}), "
            f"or be max_length without one: {end}, not {int(length)}; {listed}"
        )
        tail = np.flatnonzero(row[length:] != PAD)
        assert not tail.size, (
            f"{at}, position {int(length) + tail[0]}: token {row[length + tail[0]]} after the end; "
            f"every position after eos must hold pad ({PAD}); {listed}"
        )
        early += int(length < max_length)
    return early


def assert_hypotheses_equal(got: Hypotheses, want: Hypotheses, what: str, *, scores: bool = True) -> None:
    """Whole rows equal: tokens (pads included) and lengths exactly; scores within 1e-5 unless `scores` is False."""
    assert_trees_close(got._replace(scores=None), want._replace(scores=None), exact=True, what=what)
    if scores:
        only = lambda h: h._replace(tokens=None, lengths=None)
        assert_trees_close(only(got), only(want), atol=1e-5, rtol=1e-5, what=what)


class StrategyTests(ConformanceTests):
    """Shapes, pads after eos, sorted scores, min_length, determinism, jit, batching (module docstring)."""

    zoo_kind: ClassVar[str] = "strategy"

    @pytest.fixture(scope="class")
    @classmethod
    def entry(cls, registry, zoo_component):
        return registry.component(zoo_component)

    @pytest.fixture(scope="class")
    @classmethod
    def strategy(cls, registry, entry):
        return component_spec(entry.name, kind="strategy", registry=registry, **entry.test).build()

    @pytest.fixture(scope="class")
    @classmethod
    def model(cls) -> tuple[Any, Any]:
        return ending_language_model()

    def test_is_a_strategy(self, strategy, entry):
        assert isinstance(strategy, DecoderStrategy), f"{entry.name!r} builds a {type(strategy).__name__}"
        assert strategy.max_length >= 1, _at("max_length", entry.name, f"max_length={strategy.max_length}")

    def test_shapes(self, strategy, entry, model):
        step, states = model
        hyps = decode(strategy, step, states[0], jax.random.key(0))
        n, at = hyps.tokens.shape[0], _at("shapes", entry.name, "input 0")
        assert hyps.tokens.shape == (n, strategy.max_length), f"{at}: tokens {hyps.tokens.shape}, want (n, max_length)"
        assert hyps.scores.shape == (n,) and hyps.lengths.shape == (n,), (
            f"{at}: scores {hyps.scores.shape} and lengths {hyps.lengths.shape}, want ({n},) each"
        )
        assert jnp.issubdtype(hyps.tokens.dtype, jnp.integer), f"{at}: tokens are {hyps.tokens.dtype}, not integers"

    def test_pad_after_eos_and_lengths(self, strategy, entry, model):
        step, states = model
        early = 0
        for row in range(states.shape[0]):
            hyps = decode(strategy, step, states[row], jax.random.key(row))
            what = _at("pad after eos", entry.name, f"input {row}")
            early += assert_rows_well_formed(hyps, strategy.max_length, what)
        assert early, _at(
            "pad after eos",
            entry.name,
            f"no hypothesis ended before max_length={strategy.max_length}, so no tail "
            "was checked (on this model eos is the likeliest token within a few steps)",
        )

    def test_scores_sorted_best_first(self, strategy, entry, model):
        step, states = model
        compared = 0
        for row in range(states.shape[0]):
            scores = np.asarray(decode(strategy, step, states[row], jax.random.key(row)).scores)
            if scores.shape[0] < 2:
                pytest.skip(f"{entry.name!r} returns one hypothesis per input: no order to check")
            compared += int(np.sum(scores > -np.inf) >= 2)
            for j in range(scores.shape[0] - 1):
                assert scores[j] >= scores[j + 1] - 1e-6, _at(
                    "scores sorted best first",
                    entry.name,
                    f"input {row}, hypothesis {j + 1}",
                    f"score {scores[j + 1]} above hypothesis {j}'s {scores[j]}; scores {scores.tolist()}",
                )
        assert compared, _at("scores sorted best first", entry.name, "no input gave two hypotheses to compare")

    def test_min_length_is_respected(self, registry, entry):
        if "min_length" not in entry.params:
            pytest.skip("this strategy declares no min_length")
        step, states = toy_language_model(eos_bias=6.0)  # eos is by far the likeliest token
        free = [len(reference_greedy(step, states[row], 6)[0]) for row in range(states.shape[0])]
        assert max(free) < 4, _at(
            "min_length",
            entry.name,
            f"greedy should end before 4 tokens here without min_length (lengths {free}), "
            "else min_length=4 changes nothing",
        )
        params = {**entry.test, "min_length": 4, "max_length": max(6, entry.test.get("max_length", 6))}
        strategy = component_spec(entry.name, kind="strategy", registry=registry, **params).build()
        hyps = decode_batch(strategy, step, states, jax.random.split(jax.random.key(3), states.shape[0]))
        for row, (tokens, scores, lengths) in enumerate(zip(hyps.tokens, hyps.scores, hyps.lengths, strict=True)):
            for j in np.flatnonzero(scores > -np.inf):
                early = np.flatnonzero(tokens[j, :3] == EOS)
                assert not early.size and lengths[j] >= 4, _at(
                    "min_length",
                    entry.name,
                    f"min_length=4, input {row}, hypothesis {j}",
                    f"eos at position {early[0] if early.size else lengths[j] - 1} (length {lengths[j]}); "
                    f"eos may come at position 3 at the earliest: row {tokens[j].tolist()}",
                )

    @pytest.fixture(scope="class")
    @classmethod
    def eager(cls, strategy, model) -> Hypotheses:
        """One call outside ``jit`` (input 1, key 0), shared by the determinism and jit checks."""
        step, states = model
        return strategy(step, states[1], bos=BOS, eos=EOS, pad=PAD, key=jax.random.key(0))

    def test_same_inputs_same_outputs(self, strategy, entry, model, eager):
        step, states = model
        again = strategy(step, states[1], bos=BOS, eos=EOS, pad=PAD, key=jax.random.key(0))
        what = _at("determinism (same inputs and key, same hypotheses)", entry.name, "input 1, key 0, two calls")
        assert_trees_close(again, eager, exact=True, what=what)

    def test_eager_matches_jit(self, strategy, entry, model, eager):
        step, states = model
        jitted = decode(strategy, step, states[1], jax.random.key(0))
        assert_trees_close(jitted, eager, atol=1e-4, what=_at("jit equals eager", entry.name, "input 1, key 0"))

    @pytest.fixture(scope="class")
    @classmethod
    def draws(cls, registry, entry) -> np.ndarray:
        """Rows drawn on `coin_language_model` with 64 keys ``[key, hypothesis, position]``: the strategy
        with its `test` values, any temperature it declares at 1 and any truncation it declares off."""
        neutral = {"temperature": 1.0, "top_k": 0, "top_p": 1.0}
        params = {**entry.test, **{entry.roles[r]: v for r, v in neutral.items() if r in entry.roles}}
        params |= {k: v for k, v in (("max_length", COIN_STEPS), ("min_length", 0)) if k in entry.params}
        strategy = component_spec(entry.name, kind="strategy", registry=registry, **params).build()
        step, state = coin_language_model()
        keys = jax.random.split(jax.random.key(5), 64)
        return np.asarray(decode_batch(strategy, step, jnp.stack([state] * 64), keys).tokens)

    def test_the_key_decides_the_draw(self, entry, draws):
        """Different keys draw different rows; a strategy that draws nothing (a search) skips, unless
        its table declares a sampler's role (``temperature``, ``num_samples``): then it ignores its key."""
        distinct = {call.tobytes() for call in draws}  # what each key drew
        sampler = [r for r in ("temperature", "num_samples") if r in entry.roles]
        if len(distinct) == 1 and not sampler:
            pytest.skip(f"{entry.name!r} draws nothing: 64 keys give the same hypotheses (a search)")
        assert len(distinct) > 1, _at(
            "the key decides the draw",
            entry.name,
            f"it declares {sampler} (a sampler), but 64 keys all drew {draws[0].tolist()} on a fair coin "
            "between two tokens: draw from the key given (split it), not from a key of your own",
        )

    def test_draws_at_different_steps_are_independent(self, entry, draws):
        """On a fair coin between two tokens, a row's tokens are independent draws: a row of one token
        repeated (probability 1/32 over 6 steps) must be rare, and so must two hypotheses of one call
        alike (1/64): a key reused at each step, or for each hypothesis, draws the same token again."""
        rows = draws.reshape(-1, draws.shape[-1])
        if len({call.tobytes() for call in draws}) == 1:
            pytest.skip(f"{entry.name!r} draws nothing: 64 keys give the same hypotheses (a search)")
        what = _at("independent draws at every step", entry.name, "a fair coin between a and b")
        constant = float(np.mean(np.all(rows == rows[:, :1], axis=1)))
        assert constant < 0.25, (
            f"{what}: {constant:.0%} of {rows.shape[0]} rows repeat one token at all {rows.shape[1]} steps "
            f"(independent draws: 1/32), e.g. {rows[0].tolist()}; split the key at each step "
            "(key, draw = jax.random.split(key)) and draw with the new one"
        )
        if draws.shape[1] > 1:
            alike = float(np.mean([np.array_equal(d[0], d[1]) for d in draws]))
            assert alike < 0.25, (
                f"{what}: hypotheses 0 and 1 of one call are the same row for {alike:.0%} of 64 keys "
                "(independent draws: 1/64); give each hypothesis its own key (jax.random.split(key, n))"
            )

    def test_batch_size_invariance(self, strategy, entry, model):
        step, states = model
        keys = jax.random.split(jax.random.key(2), states.shape[0])
        batched = decode_batch(strategy, step, states, keys)
        for row in range(states.shape[0]):
            single = decode(strategy, step, states[row], keys[row])
            what = _at("batch-size invariance", entry.name, f"input {row} in a batch of {states.shape[0]} vs alone")
            assert_trees_close(jax.tree.map(lambda a, r=row: a[r], batched), single, atol=1e-4, what=what)
