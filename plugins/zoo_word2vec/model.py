"""Word2vec architectures: skip-gram and CBOW with negative sampling and/or hierarchical softmax (Mikolov et al. 2013).

Both keep the input vectors ``W`` (the embeddings users query) and an output layer
(`zoo_word2vec.output_layer`): the negative-sampling vectors ``W'`` (word2vec.c's ``syn0``
and ``syn1neg``), the tree's node vectors (``syn1``) with ``hs``, or both; they train on
*window blocks*: the context words around one center word, against the center
(the positive) and `negative` noise words. A batch is

- ``inputs`` ``[B, L]``: context word ids (``L`` = 2 × window slots, padded);
- ``input_mask`` ``[B, L]``: True on real context words;
- ``outputs`` ``[B, 1 + K]``: the center word, then K noise words.

Skip-gram scores every context word against every output word (each context
predicts the center; the K noise words are shared by the window, Ji et al. 2016);
CBOW scores the mean (``cbow_mean=1``) or the sum (0) of the context vectors against the
outputs. A noise word equal to the center is ignored. The loss is the negative-sampling
objective

    -log σ(u_c · v) - Σ_k log σ(-u_k · v),

plus, with ``hs``, ``-Σ log σ(±u_n · v)`` over the nodes ``n`` on the center's path in the
tree, averaged over positive pairs (skip-gram) or windows (CBOW).

??? cite "Mikolov et al. 2013, Distributed Representations of Words and Phrases and their Compositionality"
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray

from zoo.plugin_api import Embedder, Model, ModelSpec, Vocabularies
from zoo_word2vec.output_layer import joined, logistic_terms, model_targets, output_layer

__all__ = [
    "CBOW",
    "AbstractWord2Vec",
    "SkipGram",
    "cbow_block_loss",
    "init_matrices",
    "skipgram_block_loss",
    "window_example_batch",
    "window_loss",
]


def init_matrices(
    vocab_size: int, dim: int, output_init: float, *, key: PRNGKeyArray
) -> tuple[Float[Array, "vocab dim"], Float[Array, "vocab dim"]]:
    """word2vec.c's initialisation: inputs ``U(-0.5/D, 0.5/D)``, outputs zero.

    A positive `output_init` draws the outputs from ``U(-s/D, s/D)`` instead.
    """
    k_in, k_out = jax.random.split(key)
    inputs = (jax.random.uniform(k_in, (vocab_size, dim)) - 0.5) / dim
    if output_init > 0:
        outputs = (jax.random.uniform(k_out, (vocab_size, dim)) * 2.0 - 1.0) * (output_init / dim)
    else:
        outputs = jnp.zeros((vocab_size, dim))
    return inputs, outputs


def skipgram_block_loss(
    context: Float[Array, "ctx dim"],
    mask: Bool[Array, " ctx"],
    rows: Float[Array, "out dim"],
    labels: Bool[Array, " out"],
    weights: Float[Array, " out"],
) -> Float[Array, ""]:
    """Summed loss of one window block: every context row against every output row
    (`zoo_word2vec.output_layer.Targets`)."""
    per_context = logistic_terms(context @ rows.T, labels[None, :], weights[None, :])
    return jnp.sum(jnp.where(mask, per_context, 0.0))


def cbow_block_loss(
    context: Float[Array, "ctx dim"],
    mask: Bool[Array, " ctx"],
    rows: Float[Array, "out dim"],
    labels: Bool[Array, " out"],
    weights: Float[Array, " out"],
    *,
    mean: bool = True,
) -> Float[Array, ""]:
    """Loss of one window block: the mean (or, without `mean`, the sum) of the context vectors
    against the output rows (0 if there is no context)."""
    count = jnp.sum(mask)
    hidden = jnp.sum(jnp.where(mask[:, None], context, 0.0), axis=0)
    if mean:
        hidden = hidden / jnp.maximum(count, 1)
    return jnp.where(count > 0, logistic_terms(rows @ hidden, labels, weights), 0.0)


def window_example_batch(
    vocab_size: int, window: int, negative: int, *, key: PRNGKeyArray, batch_size: int, length: int
) -> dict[str, Array]:
    """Random window blocks: 1 to ``min(length - 2, 2 * window)`` context words, padded to `length`."""
    k_len, k_ctx, k_out = jax.random.split(key, 3)
    longest = max(1, min(length - 2, 2 * window))
    lengths = jax.random.randint(k_len, (batch_size,), 1, longest + 1)
    context = jax.random.randint(k_ctx, (batch_size, longest), 0, vocab_size)
    mask = jnp.arange(longest) < lengths[:, None]
    pad = length - longest
    return {
        "inputs": jnp.pad(jnp.where(mask, context, 0), ((0, 0), (0, pad))).astype(jnp.int32),
        "input_mask": jnp.pad(mask, ((0, 0), (0, pad))),
        "outputs": jax.random.randint(k_out, (batch_size, 1 + negative), 0, vocab_size).astype(jnp.int32),
    }


class AbstractWord2Vec(Model, Embedder):
    """What skip-gram and CBOW share: the matrices, their construction, the
    embedding, the window-block batches. A subclass says only how a batch is scored
    (`loss`), as equinox's ``Conv1d`` only fixes what ``Conv`` leaves open.

    **Hyperparameters** (``spec.params``): `vocab_size`, `embedding_size`; training settings
    kept with the model: `window` (maximal; each center draws 1..window unless
    `shrink_windows` is false), `negative` (noise words; 0: none), `hs` (hierarchical
    softmax; one of the two must be on), `sample` (subsampling threshold), `ns_exponent`
    (noise ∝ count^exponent), `alpha` → `min_alpha` (linear decay), `epochs`;
    `output_init` (0: outputs start at zero, as word2vec.c); CBOW's `cbow_mean`.

    **Parameters:** `input` ``[V, D]``; `output` ``[V, D]`` (None when ``negative = 0``);
    `tree_output` ``[V, D]`` and the paths `tree_nodes`, `tree_codes` ``[V, depth]`` (None
    without ``hs``; see `zoo_word2vec.output_layer`).
    """

    input: Float[Array, "vocab dim"]
    output: Float[Array, "vocab dim"] | None
    tree_output: Float[Array, "vocab dim"] | None
    tree_nodes: Int[Array, "vocab depth"] | None
    tree_codes: Int[Array, "vocab depth"] | None
    num_embeddings: int = eqx.field(static=True)
    embedding_size: int = eqx.field(static=True)
    spec: ModelSpec = eqx.field(static=True)
    vocabs: Vocabularies = eqx.field(static=True)

    scope: ClassVar[str]
    """The name of the subclass's ops in a profile (`jax.named_scope`)."""

    def __init__(self, spec: ModelSpec, *, key: PRNGKeyArray, vocabs: Vocabularies) -> None:
        p = spec.params
        size, dim = p["vocab_size"], p["embedding_size"]
        self.input = init_matrices(size, dim, 0.0, key=key)[0]

        def draw(salt: int) -> Array:  # salt 0: the outputs of a model without hs, as they always were
            return init_matrices(size, dim, p["output_init"], key=key if salt == 0 else jax.random.fold_in(key, salt))[
                1
            ]

        layer = output_layer(p, vocabs, draw)
        self.output, self.tree_output, self.tree_nodes, self.tree_codes = layer
        self.num_embeddings, self.embedding_size = p["vocab_size"], p["embedding_size"]
        self.spec, self.vocabs = spec, vocabs

    def __call__(
        self, ids: Int[Array, " seq"], mask: Bool[Array, " seq"] | None = None, *, key: PRNGKeyArray | None = None
    ) -> Float[Array, "seq dim"]:
        """The input vectors of `ids` ``[seq]`` -> ``[seq, dim]``."""
        with jax.named_scope(self.scope):
            return jnp.take(self.input, ids, axis=0)

    def vectors(self) -> Float[Array, "vocab dim"]:
        """The input matrix ``[vocab, dim]``: the word vectors."""
        return self.input

    def example_batch(self, *, key: PRNGKeyArray, batch_size: int = 3, length: int = 8) -> dict[str, Array]:
        """Random window blocks with this model's vocabulary, window and negatives (see `window_example_batch`)."""
        window, negative = self.spec["window"], self.spec["negative"]
        size = self.num_embeddings
        return window_example_batch(size, window, negative, key=key, batch_size=batch_size, length=length)


def window_loss(model: AbstractWord2Vec, batch: Mapping[str, Array], block_loss, *, per_pair: bool) -> Float[Array, ""]:
    """`block_loss` summed over the batch's window blocks, divided by the positive pairs
    (`per_pair`) or by the windows with at least one context word."""
    context = jnp.take(model.input, batch["inputs"], axis=0)
    matrices, parts = model_targets(model, batch["outputs"])
    rows, labels, weights = joined([jnp.take(m, p.ids, axis=0) for m, p in zip(matrices, parts, strict=True)], parts)
    mask = batch["input_mask"]
    total = jnp.sum(jax.vmap(block_loss)(context, mask, rows, labels, weights))
    count = jnp.sum(mask) if per_pair else jnp.sum(jnp.any(mask, axis=-1))
    return total / jnp.maximum(count, 1)


class SkipGram(AbstractWord2Vec):
    """Skip-gram: each word predicts the words around it.
    Hyperparameters as `AbstractWord2Vec`."""

    scope = "word2vec-skipgram"

    def loss(self, batch: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, ""]:
        """Mean loss per (context, center) pair of the batch's window blocks."""
        return window_loss(self, batch, skipgram_block_loss, per_pair=True)


class CBOW(AbstractWord2Vec):
    """Continuous bag of words: the mean (or sum, ``cbow_mean=0``) of the context vectors predicts
    the center word. Hyperparameters as `AbstractWord2Vec`."""

    scope = "word2vec-cbow"

    def loss(self, batch: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, ""]:
        """Mean loss per window with at least one context word."""
        block = partial(cbow_block_loss, mean=bool(self.spec["cbow_mean"]))
        return window_loss(self, batch, block, per_pair=False)
