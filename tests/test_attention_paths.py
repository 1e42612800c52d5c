"""The decoder's pre-multiplied values are a capability an attention declares, not a rule.

`RecurrentDecoder.search_memory` hands pre-projected values only to a `LinearInValues` attention;
any other attention is called on the real memory and the decoder applies ``W_c`` itself. The same
weights through either path give the same logits, and a multi-head attention's per-head weights
are reported as their mean over heads.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import zoo
from zoo.interfaces import Attention, LinearInValues, Memory

SOURCE = jnp.asarray([5, 7, 4, 9, 6, 3, 0, 0], jnp.int32)  # six real tokens, two pads
TARGET_IN = jnp.asarray([2, 5, 7, 4, 8, 6], jnp.int32)  # bos first


class Undeclared(Attention):
    """Another attention's computation with its `LinearInValues` declaration hidden, so a decoder
    must take the general path (real memory, ``W_c`` applied by the decoder)."""

    inner: Attention
    query_size: int = eqx.field(static=True)
    key_size: int = eqx.field(static=True)
    reads_previous_state: ClassVar[bool] = False

    def __init__(self, inner: Attention) -> None:
        self.inner, self.query_size, self.key_size = inner, inner.query_size, inner.key_size

    def precompute(self, values):
        return self.inner.precompute(values)

    def __call__(self, query, memory: Memory):
        return self.inner(query, memory)


def small(name: str, **overrides):
    return zoo.build(
        name,
        key=jax.random.key(1),
        src_vocab_size=12,
        tgt_vocab_size=9,
        embedding_size=8,
        hidden_size=16,
        **{"decoder.num_layers": 2, "encoder.bidirectional": True, "strategy.max_length": 7},
        **overrides,
    )


def stepped(decoder, step, enc, memory):
    """Logits ``[tgt, vocab]`` of `step` fed `TARGET_IN` from the decoder's initial state."""

    def body(state, token):
        logits, state = step(token, state, memory)
        return state, logits

    return jax.jit(lambda: jax.lax.scan(body, decoder.init_state(enc), TARGET_IN)[1])()


def test_a_linear_in_values_attention_gives_the_same_logits_through_the_general_path():
    fast = small("seq2seq+luong-general")
    general = eqx.tree_at(lambda m: m.decoder.attention, fast, Undeclared(fast.decoder.attention))
    assert isinstance(fast.decoder.attention, LinearInValues)
    assert not isinstance(general.decoder.attention, LinearInValues)
    mask = SOURCE != 0
    enc, _ = fast.encode(SOURCE, mask)
    fast_memory = fast.decoder.search_memory(enc, mask)
    general_memory = general.decoder.search_memory(enc, mask)
    # the fast path's values went through W_c's context half ([src, 32] -> [src, 16]); the general path's are the states
    assert fast_memory.values.shape == (8, 16) and enc.states.shape == (8, 32)
    np.testing.assert_array_equal(np.asarray(general_memory.values), np.asarray(enc.states))
    forced = eqx.filter_jit(fast)(SOURCE, mask, TARGET_IN).logits
    np.testing.assert_allclose(
        np.asarray(eqx.filter_jit(general)(SOURCE, mask, TARGET_IN).logits), np.asarray(forced), rtol=1e-6
    )
    fast_logits = stepped(fast.decoder, fast.decoder.search_step(9), enc, fast_memory)
    general_logits = stepped(general.decoder, general.decoder.search_step(9), enc, general_memory)
    np.testing.assert_allclose(np.asarray(general_logits), np.asarray(fast_logits), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(fast_logits), np.asarray(forced), rtol=1e-4, atol=1e-5)
    sources = jnp.stack([SOURCE, jnp.asarray([4, 4, 8, 0, 0, 0, 0, 0], jnp.int32)])
    a, b = (m.decode(sources, strategy="beam", beam_size=3) for m in (fast, general))
    np.testing.assert_array_equal(np.asarray(a.tokens), np.asarray(b.tokens))
    np.testing.assert_allclose(np.asarray(a.scores), np.asarray(b.scores), rtol=1e-5, atol=1e-6)


@pytest.fixture(scope="module")
def multihead():
    return small("seq2seq+multihead", **{"attention.num_heads": 4})


def test_multihead_is_called_on_the_real_memory_and_reports_the_mean_over_heads(multihead):
    decoder, mask = multihead.decoder, SOURCE != 0
    enc, memory = multihead.encode(SOURCE, mask)
    search_memory = decoder.search_memory(enc, mask)
    np.testing.assert_array_equal(np.asarray(search_memory.values), np.asarray(enc.states))
    out = eqx.filter_jit(multihead)(SOURCE, mask, TARGET_IN)
    assert out.attention.shape == (6, 8)

    @eqx.filter_jit
    def heads(decoder, enc, memory):  # what Luong's placement reads: the top layer's states after the recurrence
        hidden = decoder._run_layers(decoder.embedder(TARGET_IN), decoder.init_state(enc), None)
        return jax.vmap(decoder.attention, in_axes=(0, None))(hidden, memory)[1]

    per_head = heads(decoder, enc, memory)
    assert per_head.shape == (6, 4, 8)
    np.testing.assert_allclose(np.asarray(out.attention), np.asarray(per_head.mean(axis=1)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out.attention.sum(axis=1)), 1.0, rtol=1e-5)
    assert np.all(np.asarray(out.attention[:, 6:]) == 0.0)
    np.testing.assert_allclose(
        np.asarray(eqx.filter_jit(multihead.attention_weights)(SOURCE, TARGET_IN[1:])),
        np.asarray(out.attention[:5]),
        rtol=1e-6,
    )


def test_multihead_step_and_search_step_give_the_teacher_forced_logits(multihead):
    decoder, mask = multihead.decoder, SOURCE != 0
    enc, memory = multihead.encode(SOURCE, mask)
    forced = eqx.filter_jit(multihead)(SOURCE, mask, TARGET_IN).logits
    by_step = stepped(decoder, lambda t, s, m: decoder.step(t, s, m), enc, memory)
    np.testing.assert_allclose(np.asarray(by_step), np.asarray(forced), rtol=1e-4, atol=1e-5)
    searched = stepped(decoder, decoder.search_step(9), enc, decoder.search_memory(enc, mask))
    np.testing.assert_allclose(np.asarray(searched), np.asarray(forced), rtol=1e-4, atol=1e-5)


def test_multihead_heads_must_divide_the_key_size():
    with pytest.raises(zoo.InvalidParameterError, match=r"num_heads=3.*key_size=32|key_size=32.*num_heads=3") as info:
        small("seq2seq+multihead", **{"attention.num_heads": 3})
    assert "[1, 2, 4, 8, 16, 32]" in str(info.value)
    with pytest.raises(zoo.InvalidParameterError, match="num_heads"):
        small("seq2seq+multihead", **{"attention.num_heads": 65})
