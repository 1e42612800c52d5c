"""The GloVe architecture: word and context vectors fit to log co-occurrence counts."""

from __future__ import annotations

from collections.abc import Mapping

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray

from zoo.plugin_api import DataError, Embedder, Model, ModelSpec, Vocabularies

__all__ = ["GloVe", "glove_weight"]


def glove_weight(counts: Float[Array, " n"], x_max: float, alpha: float) -> Float[Array, " n"]:
    """``f(x) = min(1, (x / x_max)^alpha)``: GloVe's weight of a co-occurrence count."""
    return jnp.minimum(1.0, (counts / x_max) ** alpha)


class GloVe(Model, Embedder):
    """Global vectors: ``w_i · w̃_j + b_i + b̃_j ≈ log X_ij`` for every non-zero count.

    The loss over entries (i, j, X_ij) of the co-occurrence matrix is

    ``J = ½ Σ f(X_ij) (w_i · w̃_j + b_i + b̃_j − log X_ij)²``,  ``f(x) = min(1, (x/x_max)^α)``,

    averaged over a batch. The word vectors are ``w + w̃`` (`vectors`).
    Hyperparameters (``spec.params``): ``vocab_size``, ``embedding_size``,
    ``x_max``, ``alpha``, and how counts are made: ``window``, ``weighting``,
    ``symmetric`` (see `zoo.data.cooccurrence`). Batches hold ``rows [B]``,
    ``cols [B]`` (int32 ids) and ``counts [B]`` (X_ij > 0, float32).
    Parameters start uniform in ``[-0.5, 0.5] / embedding_size``, as in the reference code.

    ??? cite

        Pennington, Socher & Manning 2014, GloVe: Global Vectors for Word
        Representation (EMNLP).
    """

    word: Float[Array, "vocab dim"]
    context: Float[Array, "vocab dim"]
    word_bias: Float[Array, " vocab"]
    context_bias: Float[Array, " vocab"]
    num_embeddings: int = eqx.field(static=True)
    embedding_size: int = eqx.field(static=True)
    spec: ModelSpec = eqx.field(static=True)
    vocabs: Vocabularies = eqx.field(static=True)

    def __init__(self, spec: ModelSpec, *, key: PRNGKeyArray, vocabs: Vocabularies) -> None:
        p = spec.params
        size, dim = p["vocab_size"], p["embedding_size"]
        if p["x_max"] <= 0 or p["alpha"] <= 0:
            raise DataError(f"x_max and alpha must be positive, got {p['x_max']} and {p['alpha']}")
        k_w, k_c, k_bw, k_bc = jax.random.split(key, 4)
        scale = 0.5 / dim
        uniform = lambda k, shape: jax.random.uniform(k, shape, minval=-scale, maxval=scale)
        self.word, self.context = uniform(k_w, (size, dim)), uniform(k_c, (size, dim))
        self.word_bias, self.context_bias = uniform(k_bw, (size,)), uniform(k_bc, (size,))
        self.num_embeddings, self.embedding_size = size, dim
        self.spec, self.vocabs = spec, vocabs

    def __call__(
        self,
        ids: Int[Array, " seq"],
        mask: Bool[Array, " seq"] | None = None,
        *,
        key: PRNGKeyArray | None = None,
    ) -> Float[Array, "seq dim"]:
        """The word vectors ``w + w̃`` of `ids` ``[seq]``."""
        with jax.named_scope("glove"):
            return jnp.take(self.word, ids, axis=0) + jnp.take(self.context, ids, axis=0)

    def vectors(self) -> Float[Array, "vocab dim"]:
        """``w + w̃`` for every word, ``[vocab, dim]`` (the paper's final vectors)."""
        return self.word + self.context

    def residuals(
        self, rows: Int[Array, " n"], cols: Int[Array, " n"], counts: Float[Array, " n"]
    ) -> Float[Array, " n"]:
        """``w_i · w̃_j + b_i + b̃_j − log X_ij`` per entry."""
        dots = jnp.sum(self.word[rows] * self.context[cols], axis=-1)
        return dots + self.word_bias[rows] + self.context_bias[cols] - jnp.log(counts)

    def loss(self, batch: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, ""]:
        """``½ mean f(X) (w·w̃ + b + b̃ − log X)²`` over the batch's entries."""
        rows, cols, counts = batch["rows"], batch["cols"], batch["counts"]
        weights = glove_weight(counts, self.spec["x_max"], self.spec["alpha"])
        return 0.5 * jnp.mean(weights * self.residuals(rows, cols, counts) ** 2)

    def example_batch(self, *, key: PRNGKeyArray, batch_size: int = 3, length: int = 8) -> dict[str, Array]:
        """Random entries (``batch_size × 4`` of them); entries have no padding, so `length` is unused."""
        k_r, k_c, k_x = jax.random.split(key, 3)
        n = batch_size * 4
        return {
            "rows": jax.random.randint(k_r, (n,), 0, self.num_embeddings, dtype=jnp.int32),
            "cols": jax.random.randint(k_c, (n,), 0, self.num_embeddings, dtype=jnp.int32),
            "counts": jax.random.uniform(k_x, (n,), minval=0.5, maxval=300.0),
        }
