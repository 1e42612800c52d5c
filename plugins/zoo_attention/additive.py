"""Additive attention: Bahdanau et al. (2015) and Luong et al.'s (2015) concat score.

Both score ``e_i = vᵀ tanh(W_q q + W_k h_i)``; they differ in the query:
Bahdanau reads the previous decoder state s_{t-1}, Luong's concat the current s_t.
"""

from __future__ import annotations

import math
from typing import ClassVar

import equinox as eqx
import jax
from jaxtyping import Array, Float, PRNGKeyArray

from zoo.plugin_api import LinearInValues, Memory, masked_softmax

__all__ = ["AdditiveAttention", "BahdanauAttention", "LuongConcatAttention"]


def _uniform(key: PRNGKeyArray, shape: tuple[int, ...], fan_in: int) -> Array:
    bound = 1.0 / math.sqrt(fan_in)
    return jax.random.uniform(key, shape, minval=-bound, maxval=bound)


def _additive_weights(query_size: int, key_size: int, attention_size: int, key: PRNGKeyArray):
    kq, kk, kv = jax.random.split(key, 3)
    return (
        _uniform(kq, (query_size, attention_size), query_size),
        _uniform(kk, (key_size, attention_size), key_size),
        _uniform(kv, (attention_size,), attention_size),
    )


class AdditiveAttention(LinearInValues):
    """``e_i = vᵀ tanh(W_q q + W_k h_i)``, ``α = softmax(e)``, ``c = Σ α_i h_i``: the shared
    module of Bahdanau's and Luong's concat attention, abstract in which decoder state the
    query is (`reads_previous_state`), as equinox writes ``Conv1d(Conv)``.

    **Arguments:** `query_size`, `key_size` (wired); `attention_size`; `key`.
    """

    query_weight: Float[Array, "query attn"]
    key_weight: Float[Array, "key attn"]
    vector: Float[Array, " attn"]
    query_size: int = eqx.field(static=True)
    key_size: int = eqx.field(static=True)
    scope: ClassVar[str] = "additive"

    def __init__(self, query_size: int, key_size: int, *, attention_size: int = 128, key: PRNGKeyArray) -> None:
        self.query_weight, self.key_weight, self.vector = _additive_weights(query_size, key_size, attention_size, key)
        self.query_size, self.key_size = query_size, key_size

    def precompute(self, values: Float[Array, "src key"]) -> Float[Array, "src attn"]:
        return values @ self.key_weight

    def __call__(self, query: Float[Array, " query"], memory: Memory) -> tuple[Array, Array]:
        with jax.named_scope(self.scope):
            scores = jax.numpy.tanh(memory.keys + query @ self.query_weight) @ self.vector
            weights = masked_softmax(scores, memory.mask)
            return weights @ memory.values, weights


class BahdanauAttention(AdditiveAttention):
    """``e_ti = vᵀ tanh(W_s s_{t-1} + W_h h_i)``: the query is the previous decoder state.

    ??? cite
        Bahdanau, Cho, Bengio. Neural Machine Translation by Jointly Learning to
        Align and Translate. ICLR 2015.
    """

    reads_previous_state: ClassVar[bool] = True
    scope: ClassVar[str] = "bahdanau"


class LuongConcatAttention(AdditiveAttention):
    """Luong's concat score ``e_ti = vᵀ tanh(W_a [s_t; h_i])`` from the current state s_t
    (``W_a [s_t; h_i]`` splits into ``W_1 s_t + W_2 h_i``; ``W_2 h_i`` is precomputed).

    ??? cite
        Luong, Pham, Manning. Effective Approaches to Attention-based Neural
        Machine Translation. EMNLP 2015.
    """

    reads_previous_state: ClassVar[bool] = False
    scope: ClassVar[str] = "luong-concat"
