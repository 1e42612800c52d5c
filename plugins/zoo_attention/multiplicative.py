"""Luong et al.'s (2015) multiplicative scores from the current decoder state s_t.

- dot: ``e_ti = s_tᵀ h_i`` (query and key sizes must agree)
- general: ``e_ti = s_tᵀ W h_i``; ``W h_i`` is precomputed once per source.

??? cite
    Luong, Pham, Manning. Effective Approaches to Attention-based Neural
    Machine Translation. EMNLP 2015.
"""

from __future__ import annotations

import math
from typing import ClassVar

import equinox as eqx
import jax
from jaxtyping import Array, Float, PRNGKeyArray

from zoo.plugin_api import LinearInValues, Memory, masked_softmax

__all__ = ["LuongDotAttention", "LuongGeneralAttention"]


def _attend(query: Array, memory: Memory) -> tuple[Array, Array]:
    weights = masked_softmax(memory.keys @ query, memory.mask)
    return weights @ memory.values, weights


class LuongDotAttention(LinearInValues):
    """``e_ti = s_tᵀ h_i``; no parameters.

    **Arguments:** `query_size`, `key_size` (wired; must be equal); `key` (unused).
    """

    query_size: int = eqx.field(static=True)
    key_size: int = eqx.field(static=True)
    reads_previous_state: ClassVar[bool] = False

    def __init__(self, query_size: int, key_size: int, *, key: PRNGKeyArray | None = None) -> None:
        if query_size != key_size:
            raise ValueError(
                f"luong-dot needs equal decoder and encoder sizes, got query {query_size} and key "
                f"{key_size}; use luong-general, or set the decoder's hidden_size to {key_size}"
            )
        self.query_size, self.key_size = query_size, key_size

    def precompute(self, values: Float[Array, "src key"]) -> Float[Array, "src key"]:
        return values

    def __call__(self, query: Float[Array, " query"], memory: Memory) -> tuple[Array, Array]:
        with jax.named_scope("luong-dot"):
            return _attend(query, memory)


class LuongGeneralAttention(LinearInValues):
    """``e_ti = s_tᵀ W h_i``.

    **Arguments:** `query_size`, `key_size` (wired); `key`.
    """

    weight: Float[Array, "query key"]
    query_size: int = eqx.field(static=True)
    key_size: int = eqx.field(static=True)
    reads_previous_state: ClassVar[bool] = False

    def __init__(self, query_size: int, key_size: int, *, key: PRNGKeyArray) -> None:
        bound = 1.0 / math.sqrt(key_size)
        self.weight = jax.random.uniform(key, (query_size, key_size), minval=-bound, maxval=bound)
        self.query_size, self.key_size = query_size, key_size

    def precompute(self, values: Float[Array, "src key"]) -> Float[Array, "src query"]:
        return values @ self.weight.T

    def __call__(self, query: Float[Array, " query"], memory: Memory) -> tuple[Array, Array]:
        with jax.named_scope("luong-general"):
            return _attend(query, memory)
