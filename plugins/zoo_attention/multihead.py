"""Multi-head scaled dot-product attention (Vaswani et al. 2017), from the current decoder state.

With ``h`` heads of width ``d = key_size / h``, query ``s_t`` and encoder states ``H [src, key]``::

    Q = s_t W_q          K = H W_k          V = H W_v          (each split into h slices of width d)
    α_j = softmax(Q_j K_jᵀ / sqrt(d))                          (one distribution per head, [h, src])
    c_t = concat_j(α_j V_j) W_o                                ([key_size])

The key and value projections are query-independent: `precompute` computes both once per source,
side by side in the memory's keys. The context reads per-head slices of the projected values and
the output projection, so it is not ``weights @ values``: this attention does not declare
`LinearInValues`, and a decoder hands it the real memory. The weights it returns are per head,
``[heads, src]``.

Unlike a `LinearInValues` attention, whose context is a convex combination of the (bounded)
encoder states, this context is a linear map of them through ``W_v W_o`` with no bound: in the
recurrent decoder, Adam at a learning rate of 2e-3 or more grew it until the attentional layer's
tanh saturated and training stalled (bench/README.md); 1e-3 trains.

??? cite
    Vaswani, Shazeer, Parmar, Uszkoreit, Jones, Gomez, Kaiser, Polosukhin. Attention Is All You
    Need. NeurIPS 2017 (section 3.2.2).
"""

from __future__ import annotations

import math
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, PRNGKeyArray

from zoo.plugin_api import Attention, Memory, masked_softmax

__all__ = ["MultiHeadAttention"]


def _uniform(key: PRNGKeyArray, fan_in: int, fan_out: int) -> Array:
    bound = 1.0 / math.sqrt(fan_in)
    return jax.random.uniform(key, (fan_in, fan_out), minval=-bound, maxval=bound)


def _divisors(n: int, most: int) -> list[int]:
    return [d for d in range(1, min(n, most) + 1) if n % d == 0]


class MultiHeadAttention(Attention):
    """Scaled dot-product attention over `num_heads` heads, each with its own slice of the
    projected queries, keys and values, and an output projection of their joined contexts.

    **Arguments:** `query_size`, `key_size` (wired); `num_heads`, which must divide `key_size`
    (the queries, keys and values are projected to `key_size` features, `key_size / num_heads` a
    head); `key`.

    **Returns** (``__call__``): the context ``[key_size]`` and the weights ``[num_heads, src]``.
    """

    query_weight: Float[Array, "query key"]
    key_weight: Float[Array, "key key"]
    value_weight: Float[Array, "key key"]
    output_weight: Float[Array, "key key"]
    query_size: int = eqx.field(static=True)
    key_size: int = eqx.field(static=True)
    num_heads: int = eqx.field(static=True)
    reads_previous_state: ClassVar[bool] = False

    def __init__(self, query_size: int, key_size: int, *, num_heads: int = 8, key: PRNGKeyArray) -> None:
        if key_size % num_heads:
            raise ValueError(
                f"multihead splits the key_size={key_size} features of the encoder states into "
                f"num_heads={num_heads} heads of equal width, and {key_size} is not divisible by {num_heads}; "
                f"set num_heads to one of {_divisors(key_size, 64)}, or change the encoder's output size"
            )
        kq, kk, kv, ko = jax.random.split(key, 4)
        self.query_weight = _uniform(kq, query_size, key_size)
        self.key_weight = _uniform(kk, key_size, key_size)
        self.value_weight = _uniform(kv, key_size, key_size)
        self.output_weight = _uniform(ko, key_size, key_size)
        self.query_size, self.key_size, self.num_heads = query_size, key_size, num_heads

    def precompute(self, values: Float[Array, "src key"]) -> Float[Array, "src two_key"]:
        """The projected keys and values side by side, ``[src, 2 * key_size]``."""
        return jnp.concatenate([values @ self.key_weight, values @ self.value_weight], axis=-1)

    def __call__(
        self, query: Float[Array, " query"], memory: Memory
    ) -> tuple[Float[Array, " key"], Float[Array, "heads src"]]:
        with jax.named_scope("multihead"):
            heads, width = self.num_heads, self.key_size // self.num_heads
            src = memory.keys.shape[0]
            keys = memory.keys[:, : self.key_size].reshape(src, heads, width)
            values = memory.keys[:, self.key_size :].reshape(src, heads, width)
            queries = (query @ self.query_weight).reshape(heads, width)
            scores = jnp.einsum("hd,shd->hs", queries, keys) / math.sqrt(width)
            weights = masked_softmax(scores, memory.mask)
            joined = jnp.einsum("hs,shd->hd", weights, values).reshape(self.key_size)
            return joined @ self.output_weight, weights
