"""A trainable lookup table: the plain token embedder."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.typing import DTypeLike
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray

from zoo.plugin_api import Embedder
from zoo.plugin_api import dropout as apply_dropout

__all__ = ["TokenEmbedding"]


class TokenEmbedding(Embedder):
    """``E[ids]``: one trainable vector per token id, with optional dropout.

    **Arguments:**

    - `num_embeddings`: vocabulary size V (wired by the architecture).
    - `embedding_size`: vector size D.
    - `dropout`: rate applied to the output when a key is given.
    - `init_scale`: None draws N(0, 1); a number s draws U(-s, s).
    - `key`: parameter key.
    - `dtype`: the table's dtype (float32 unless given, as `eqx.nn.Embedding` takes one; no
      hyperparameter: a saved table records its own dtype).
    """

    weight: Float[Array, "vocab dim"]
    num_embeddings: int = eqx.field(static=True)
    embedding_size: int = eqx.field(static=True)
    dropout: float = eqx.field(static=True)

    def __init__(
        self,
        num_embeddings: int,
        *,
        embedding_size: int = 128,
        dropout: float = 0.0,
        init_scale: float | None = None,
        key: PRNGKeyArray,
        dtype: DTypeLike = jnp.float32,
    ) -> None:
        shape = (num_embeddings, embedding_size)
        if init_scale is None:
            self.weight = jax.random.normal(key, shape, dtype)
        else:
            self.weight = jax.random.uniform(key, shape, dtype, minval=-init_scale, maxval=init_scale)
        self.num_embeddings = num_embeddings
        self.embedding_size = embedding_size
        self.dropout = dropout

    @jax.named_scope("token-embedding")
    def __call__(
        self,
        ids: Int[Array, " seq"],
        mask: Bool[Array, " seq"] | None = None,
        *,
        key: PRNGKeyArray | None = None,
    ) -> Float[Array, "seq dim"]:
        return apply_dropout(jnp.take(self.weight, ids, axis=0), self.dropout, key)

    def vectors(self) -> Float[Array, "vocab dim"]:
        return self.weight
