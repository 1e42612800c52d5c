"""Checks for strategies by the parameters they declare, on constructed step functions.

A strategy's table says which hyperparameter plays which role (``roles = { top_p = "p" }``,
`zoo.naming.tables.ROLES`); a class whose role it does not declare skips, saying so. The
checks, in the order they run:

- ``beam_size`` (a width-limited search; with ``n_best`` hypotheses returned and
  ``alpha``, the length-normalisation exponent of ``score = log P(y) / |y|^alpha``):
  `test_width_one_without_length_penalty_equals_greedy` (width 1 with alpha 0 returns
  greedy's row exactly, tokens, pads, length and score, also where eos comes early and where
  a second finishing candidate would beat greedy); `test_n_best_sorted_and_distinct`;
  `test_wider_search_finds_what_greedy_misses`; `test_length_penalty_stopping_case` (no stop
  when the best hypothesis ends while a longer one can still win after normalisation);
  `test_width_covering_every_prefix_is_exact` (the n best sequences of exhaustive search).
- ``temperature`` (a sampler; ``top_k``/``top_p`` truncation):
  `test_temperature_to_zero_equals_greedy` (temperature 0 and -> 0: greedy's rows and
  scores); `test_draws_follow_the_distribution`;
  `test_truncation_keeps_only_the_head`.

Rows are compared whole, pads included, and each check asserts that some hypothesis
ended before `max_length`. The reference greedy decoder and the exhaustive search here
are plain Python.
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

from zoo.building.builder import component_spec
from zoo.interfaces import Hypotheses
from zoo.testing.base import ConformanceTests
from zoo.testing.strategies import (
    BOS,
    EOS,
    PAD,
    assert_hypotheses_equal,
    decode,
    ending_language_model,
    reference_greedy,
)

__all__ = [
    "SamplerTests",
    "WidthSearchTests",
    "exhaustive_search",
    "prefix_language_model",
    "reference_greedy",
    "reference_hypotheses",
]

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


def _random_step(token, state):
    table, h = state
    logits = table[token] + jnp.where(jnp.arange(5) >= EOS, h, 0.0)
    return logits, (table, 0.6 * h + jax.nn.one_hot(token, 5))


def random_language_model(seed: int):
    """Random prefix-dependent logits over pad, bos, eos, a, b; pad and bos impossible.

    The table travels in the state, so every seed shares one step function (one compile)."""
    table = jax.random.normal(jax.random.key(seed), (5, 5)) * 1.5
    table = table.at[:, PAD].set(-jnp.inf).at[:, BOS].set(-jnp.inf)
    return _random_step, (table, 0.5 * jax.random.normal(jax.random.key(seed + 1), (5,)))


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


def reference_hypotheses(ranked: list[tuple[float, list[int]]], max_length: int) -> Hypotheses:
    """`Hypotheses` (NumPy) of ``(score, tokens)`` pairs, best first: each row padded to `max_length`."""
    tokens = np.full((len(ranked), max_length), PAD, np.int32)
    for row, (_, seq) in enumerate(ranked):
        tokens[row, : len(seq)] = seq
    scores = np.asarray([score for score, _ in ranked], np.float32)
    return Hypotheses(tokens=tokens, scores=scores, lengths=np.asarray([len(s) for _, s in ranked], np.int32))


def greedy_hypotheses(step_fn: Callable, state: Any, max_length: int) -> Hypotheses:
    """`reference_greedy`'s one hypothesis as a padded row."""
    tokens, total = reference_greedy(step_fn, state, max_length)
    return reference_hypotheses([(total, tokens)], max_length)


def runner_up_language_model():
    """Greedy reads a a eos (0.5 * 0.6 * 0.5 = 0.15), while eos is the runner-up of the first
    step (0.3) and beats it: a width-1 search that let two candidates finish would return [eos]."""
    return prefix_language_model(
        {(): {A: 0.5, EOS: 0.3, B: 0.2}, (A,): {A: 0.6, EOS: 0.25, B: 0.15}},
        default={EOS: 0.5, B: 0.3, A: 0.2},
    )


def _at(contract: str, name: str, *where: str) -> str:
    return ", ".join([f"{contract}: strategy {name!r}", *where])


def _assert_ended_early(wants: list[Hypotheses], max_length: int, contract: str, name: str) -> None:
    ended = sum(int(np.sum((w.lengths < max_length) & (w.scores > -np.inf))) for w in wants)
    assert ended, _at(contract, name, f"no expected hypothesis ends before max_length={max_length}: vacuous")


class _DeclaredStrategy(ConformanceTests):
    """Strategies whose table gives some hyperparameter the role `declares` (``roles = { ... }``,
    `zoo.naming.tables.ROLES`); others skip, saying so. `make(**values)` takes role names (and
    ``max_length``/``min_length``) and passes each value to the parameter playing that role;
    a role the strategy does not declare is left at its default."""

    zoo_kind: ClassVar[str] = "strategy"
    declares: ClassVar[str] = ""

    @pytest.fixture(scope="class")
    @classmethod
    def entry(cls, registry, zoo_component):
        entry = registry.component(zoo_component)
        if cls.declares not in entry.roles:
            pytest.skip(
                f"{zoo_component!r} declares no {cls.declares!r} role: if one of its hyperparameters is that, say "
                f'so in its table (roles = {{ {cls.declares} = "PARAM" }}) and these checks test it'
            )
        return entry

    @pytest.fixture(scope="class")
    @classmethod
    def make(cls, registry, entry):
        def make(**values):
            params = {entry.roles[k]: v for k, v in values.items() if k in entry.roles}
            params |= {k: v for k, v in values.items() if k in ("max_length", "min_length") and k in entry.params}
            return component_spec(entry.name, kind="strategy", registry=registry, **params).build()

        return make


class WidthSearchTests(_DeclaredStrategy):
    """For strategies declaring `beam_size` (see the module docstring)."""

    declares: ClassVar[str] = "beam_size"

    def test_width_one_without_length_penalty_equals_greedy(self, make, entry):
        strategy = make(beam_size=1, n_best=1, alpha=0.0, max_length=7)
        step, states = ending_language_model()
        cases = [(f"input {row} of the ending model", step, states[row]) for row in range(states.shape[0])]
        cases.append(("the runner-up-eos model", *runner_up_language_model()))
        contract = "width 1 equals greedy (beam_size=1, alpha=0)"
        wants = []
        for label, step_fn, state in cases:
            wants.append(greedy_hypotheses(step_fn, state, 7))
            assert_hypotheses_equal(decode(strategy, step_fn, state), wants[-1], _at(contract, entry.name, label))
        _assert_ended_early(wants, 7, contract, entry.name)

    def test_n_best_sorted_and_distinct(self, make, entry):
        if "n_best" not in entry.roles:
            pytest.skip("this search declares no n_best role (it returns one hypothesis)")
        step, states = ending_language_model()
        strategy, contract = make(beam_size=4, n_best=4, max_length=6), "n-best sorted and distinct"
        compared = early = 0
        for row in range(states.shape[0]):
            hyps = decode(strategy, step, states[row])
            at = _at(contract, entry.name, f"input {row}")
            assert hyps.tokens.shape[0] == 4, f"{at}: n_best=4 but {hyps.tokens.shape[0]} hypotheses"
            for j, (a, b) in enumerate(itertools.pairwise(hyps.scores)):
                assert a >= b, f"{at}, hypothesis {j + 1}: score {b} above hypothesis {j}'s {a}"
            real = np.flatnonzero(hyps.scores > -np.inf)
            compared += int(real.size >= 2)
            early += int(np.sum(hyps.lengths[real] < 6))
            for i, j in itertools.combinations(real, 2):
                same = np.array_equal(hyps.tokens[i], hyps.tokens[j]) and hyps.lengths[i] == hyps.lengths[j]
                assert not same, f"{at}: hypotheses {i} and {j} are the same row {hyps.tokens[i].tolist()}"
        assert compared and early, _at(contract, entry.name, "no two real hypotheses, or none ended early: vacuous")

    def test_wider_search_finds_what_greedy_misses(self, make, entry):
        # greedy takes a (0.6) but every continuation of a is poor; b (0.4) then eos (0.99) wins
        step, state = prefix_language_model(
            {(): {A: 0.6, B: 0.4}, (A,): {EOS: 0.34, A: 0.33, B: 0.33}, (B,): {EOS: 0.99, A: 0.01}},
            default={EOS: 0.5, A: 0.25, B: 0.25},
        )
        assert reference_greedy(step, state, 5)[0][0] == A
        hyps = decode(make(beam_size=2, n_best=1, alpha=0.0, max_length=5), step, state)
        want = reference_hypotheses([(np.log(0.4) + np.log(0.99), [B, EOS])], 5)
        assert_hypotheses_equal(hyps, want, _at("a width-2 search finds [b, eos], which greedy misses", entry.name))

    def test_length_penalty_stopping_case(self, make, entry):
        # the best beam ends at once (eos 0.55), but a a a eos (0.45 * 0.999^3) wins per token
        if "alpha" not in entry.roles:
            pytest.skip("this search declares no alpha role (no length normalisation)")
        step, state = prefix_language_model(
            {(): {EOS: 0.55, A: 0.45}, (A,): {A: 0.999, EOS: 0.001}, (A, A): {A: 0.999, EOS: 0.001}},
            default={EOS: 0.999, A: 0.001},
        )
        contract = "no early stop under length normalisation"
        short = decode(make(beam_size=2, n_best=1, alpha=0.0, max_length=8), step, state)
        want_short = reference_hypotheses([(np.log(0.55), [EOS])], 8)
        assert_hypotheses_equal(
            short, want_short, _at(contract, entry.name, "alpha=0 (the short one wins)"), scores=False
        )
        long = decode(make(beam_size=2, n_best=1, alpha=1.0, max_length=8), step, state)
        want = reference_hypotheses([((np.log(0.45) + 3 * np.log(0.999)) / 4, [A, A, A, EOS])], 8)
        what = _at(contract, entry.name, "alpha=1: stopped when the best hypothesis ended, though a longer one wins")
        assert_hypotheses_equal(long, want, what, scores=False)  # the scores: test_width_covering_every_prefix_is_exact

    @pytest.mark.parametrize("alpha", [0.0, 0.7, 1.0])
    def test_width_covering_every_prefix_is_exact(self, make, entry, alpha):
        if alpha and "alpha" not in entry.roles:
            pytest.skip("this search declares no alpha role (no length normalisation)")
        max_length, n = 4, 5
        strategy = make(beam_size=3 * 2 ** (max_length - 1), n_best=n, alpha=alpha, max_length=max_length)
        contract, wants = f"exact search at full width (alpha={alpha})", []
        for seed in (0, 1):
            step, state = random_language_model(seed)
            wants.append(reference_hypotheses(exhaustive_search(step, state, max_length, alpha)[:n], max_length))
            what = _at(contract, entry.name, f"random model {seed}, against exhaustive search")
            assert_hypotheses_equal(decode(strategy, step, state), wants[-1], what)
        _assert_ended_early(wants, max_length, contract, entry.name)


class SamplerTests(_DeclaredStrategy):
    """For strategies declaring `temperature` (see the module docstring)."""

    declares: ClassVar[str] = "temperature"

    @pytest.mark.parametrize("temperature", [0.0, 1e-4])
    def test_temperature_to_zero_equals_greedy(self, make, entry, temperature):
        step, states = ending_language_model()
        strategy = make(temperature=temperature, num_samples=1, top_k=0, top_p=1.0, max_length=7)
        contract, wants = f"temperature {temperature:g} equals greedy", []
        for row in range(states.shape[0]):
            wants.append(greedy_hypotheses(step, states[row], 7))
            hyps = decode(strategy, step, states[row], jax.random.key(row))
            assert_hypotheses_equal(hyps, wants[-1], _at(contract, entry.name, f"input {row}, key {row}"))
        _assert_ended_early(wants, 7, contract, entry.name)

    def test_draws_follow_the_distribution(self, make, entry):
        step, state = prefix_language_model({(): {EOS: 0.5, A: 0.3, B: 0.2}}, default={EOS: 1.0})
        strategy = make(temperature=1.0, top_k=0, top_p=1.0, num_samples=1, max_length=2)
        draw = eqx.filter_jit(jax.vmap(lambda k: strategy(step, state, bos=BOS, eos=EOS, pad=PAD, key=k).tokens[0, 0]))
        first = np.asarray(draw(jax.random.split(jax.random.key(0), 4000)))
        freq = [float(np.mean(first == t)) for t in (EOS, A, B)]
        what = _at("draws follow the distribution", entry.name, "first token (eos, a, b)")
        assert np.allclose(freq, [0.5, 0.3, 0.2], atol=0.03), (
            f"{what}: frequencies {freq} over 4000 draws, want 0.5, 0.3, 0.2"
        )

    def test_truncation_keeps_only_the_head(self, make, entry):
        roles = [role for role in ("top_k", "top_p") if role in entry.roles]
        if not roles:
            pytest.skip(
                f"{entry.name!r} declares no truncation role (top_k, top_p): if one of its hyperparameters "
                'truncates, say so in its table, e.g. roles = { top_p = "p" }'
            )
        step, state = prefix_language_model({(): {EOS: 0.5, A: 0.3, B: 0.2}}, default={EOS: 1.0})
        for role, value in (("top_k", 2), ("top_p", 0.75)):
            if role not in roles:
                continue
            strategy = make(temperature=1.0, num_samples=1, max_length=2, **{"top_k": 0, "top_p": 1.0, role: value})
            draw = eqx.filter_jit(
                jax.vmap(lambda k, s=strategy: s(step, state, bos=BOS, eos=EOS, pad=PAD, key=k).tokens[0, 0])
            )
            first = np.asarray(draw(jax.random.split(jax.random.key(1), 2000)))
            where = f"{entry.roles[role]}={value} (its {role}), first token"
            at = _at("truncation keeps only the head", entry.name, where)
            assert not np.any(first == B), f"{at}: drew b, outside the head (eos 0.5, a 0.3)"
            eos = float(np.mean(first == EOS))
            assert abs(eos - 0.5 / 0.8) <= 0.04, f"{at}: eos drawn {eos:.3f} of the time, want 0.625 (0.5 / 0.8)"
