"""The PPMI-SVD architecture: word vectors from a factorised shifted PPMI matrix."""

from __future__ import annotations

from collections.abc import Mapping

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray

from zoo.plugin_api import DataError, Embedder, Model, ModelSpec, Vocabularies

__all__ = ["PPMISVD"]


class PPMISVD(Model, Embedder):
    """Explicit word vectors: ``M = max(PMI(w, c) − log k, 0) ≈ U_d Σ_d V_dᵀ``.

    The matrix M is the shifted positive PMI of windowed co-occurrence counts,
    with the context distribution raised to ``cds`` (0.75 smooths it as
    word2vec's noise distribution does); its truncated SVD gives
    ``word = U_d Σ_d^eig`` and ``context = V_d Σ_d^(1−eig)``, so that
    ``word · context`` reconstructs M for any ``eig`` (0.5: the symmetric split
    Levy, Goldberg & Dagan recommend). `vectors` is ``word`` (plus ``context``
    with ``add_context``). The factorisation is computed in closed form by
    `zoo_ppmi.svd.fit_ppmi_svd`; `loss`, the mean squared reconstruction error
    ``(w_i · c_j − M_ij)²`` over a batch of entries, is the objective that the
    SVD minimises over all entries (Eckart–Young), kept for checks and fine-tuning.

    Hyperparameters: ``vocab_size``, ``embedding_size``, ``window``,
    ``weighting`` (see `zoo.data.cooccurrence`), ``shift`` (k), ``cds``,
    ``eig``, ``add_context``. Batches hold ``rows [B]``, ``cols [B]`` (int32)
    and ``values [B]`` (M entries, float32).

    ??? cite

        Levy & Goldberg 2014, Neural Word Embedding as Implicit Matrix
        Factorization (NeurIPS). Levy, Goldberg & Dagan 2015, Improving
        Distributional Similarity with Lessons Learned from Word Embeddings (TACL).
    """

    word: Float[Array, "vocab dim"]
    context: Float[Array, "vocab dim"]
    num_embeddings: int = eqx.field(static=True)
    embedding_size: int = eqx.field(static=True)
    spec: ModelSpec = eqx.field(static=True)
    vocabs: Vocabularies = eqx.field(static=True)

    def __init__(self, spec: ModelSpec, *, key: PRNGKeyArray, vocabs: Vocabularies) -> None:
        p = spec.params
        size, dim = p["vocab_size"], p["embedding_size"]
        if dim > size:
            raise DataError(f"embedding_size={dim} exceeds vocab_size={size}: the SVD has at most {size} dimensions")
        if p["shift"] < 1 or p["cds"] <= 0:
            raise DataError(f"shift must be at least 1 and cds positive, got shift={p['shift']}, cds={p['cds']}")
        k_w, k_c = jax.random.split(key)
        scale = 1.0 / dim**0.5  # until fitted: small random factors
        self.word = scale * jax.random.normal(k_w, (size, dim))
        self.context = scale * jax.random.normal(k_c, (size, dim))
        self.num_embeddings, self.embedding_size = size, dim
        self.spec, self.vocabs = spec, vocabs

    @jax.named_scope("ppmi-svd")
    def __call__(
        self,
        ids: Int[Array, " seq"],
        mask: Bool[Array, " seq"] | None = None,
        *,
        key: PRNGKeyArray | None = None,
    ) -> Float[Array, "seq dim"]:
        """The word vectors of `ids` ``[seq]``."""
        return jnp.take(self.vectors(), ids, axis=0)

    def vectors(self) -> Float[Array, "vocab dim"]:
        """``U Σ^eig`` per word, plus ``V Σ^(1−eig)`` with ``add_context``: ``[vocab, dim]``."""
        return self.word + self.context if self.spec["add_context"] else self.word

    @jax.named_scope("ppmi-svd.loss")
    def loss(self, batch: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, ""]:
        """Mean ``(w_i · c_j − M_ij)²`` over the batch's entries."""
        rows, cols, values = batch["rows"], batch["cols"], batch["values"]
        fitted = jnp.sum(self.word[rows] * self.context[cols], axis=-1)
        return jnp.mean((fitted - values) ** 2)

    def example_batch(self, *, key: PRNGKeyArray, batch_size: int = 3, length: int = 8) -> dict[str, Array]:
        """Random entries (``batch_size × 4``); entries have no padding, so `length` is unused."""
        k_r, k_c, k_v = jax.random.split(key, 3)
        n = batch_size * 4
        return {
            "rows": jax.random.randint(k_r, (n,), 0, self.num_embeddings, dtype=jnp.int32),
            "cols": jax.random.randint(k_c, (n,), 0, self.num_embeddings, dtype=jnp.int32),
            "values": jax.random.uniform(k_v, (n,), minval=0.0, maxval=5.0),
        }
