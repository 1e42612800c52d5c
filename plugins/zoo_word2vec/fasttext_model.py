"""FastText: skip-gram (and CBOW) where a word's input vector is composed from its character n-grams.

The input matrix has one row per vocabulary word and one per hash bucket; a
word's vector is the mean of its own row and its n-gram rows (`zoo_word2vec.ngrams`).
The paper writes the sum; the fastText package (and gensim) average, which is
the sum scaled by 1/|subwords|: the same direction, better conditioned across
word lengths. A word outside the vocabulary is the mean of its n-gram rows, so
every word, seen or not, gets a vector (`oov_vector`, which
`zoo.vectors.KeyedVectors.from_model` picks up).

Training blocks are one center word each: its composed vector against, per
context word in its window, that context (positive) and K noise words. A batch:

- ``centers`` ``[B]``: center word ids;
- ``outputs`` ``[B, L, 1 + K]``: per context slot, the context word then K noise words;
- ``output_mask`` ``[B, L]``: True on real context slots.

The output layer is the family's (`zoo_word2vec.output_layer`): negative sampling, with
``hs`` the Huffman tree over the word counts (fastText's ``-loss hs``), or both.

`FastTextCBOW` (fastText's ``cbow``) turns the prediction around: the mean of every
word and n-gram row of the context words (all of them in one mean, as fastText and
gensim take it; their sum with ``cbow_mean=0``) predicts the center word, with
word2vec CBOW's batches (`zoo_word2vec.model.window_example_batch`).

??? cite "Bojanowski, Grave, Joulin & Mikolov 2017, Enriching Word Vectors with Subword Information"
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray

from zoo.plugin_api import Embedder, Model, ModelSpec, Vocabularies, uniform_rows
from zoo_word2vec.model import cbow_block_loss, window_example_batch
from zoo_word2vec.ngrams import ngram_buckets, subword_table
from zoo_word2vec.output_layer import joined, logistic_terms, model_targets, output_layer

__all__ = ["FastText", "FastTextCBOW", "block_loss", "padded_subwords"]


def padded_subwords(offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR subword rows as a padded ``[V, S]`` int32 matrix (S = the most subwords of a word)
    and the count of real entries per word ``[V]``."""
    counts = np.diff(offsets).astype(np.int32)
    width = int(counts.max(initial=1))
    mask = np.arange(width)[None, :] < counts[:, None]
    padded = np.zeros((len(counts), width), dtype=np.int32)
    padded[mask] = rows
    return padded, counts


def block_loss(
    subword_rows: Float[Array, "sub dim"],
    subword_mask: Bool[Array, " sub"],
    rows: Float[Array, "ctx out dim"],
    labels: Bool[Array, "ctx out"],
    weights: Float[Array, "ctx out"],
    output_mask: Bool[Array, " ctx"],
) -> Float[Array, ""]:
    """Summed loss of one center: its mean subword vector against each context's output rows
    (`zoo_word2vec.output_layer.Targets`: the context word and noise words, its path in the tree)."""
    hidden = jnp.sum(jnp.where(subword_mask[:, None], subword_rows, 0.0), axis=0) / jnp.maximum(
        jnp.sum(subword_mask), 1
    )
    per_context = logistic_terms(rows @ hidden, labels, weights)  # ctx
    return jnp.sum(jnp.where(output_mask, per_context, 0.0))


@eqx.filter_jit
def _all_vectors(model: FastText) -> Float[Array, "vocab dim"]:
    one = lambda i: model.compose(i[None])[0]
    return jax.lax.map(one, jnp.arange(model.num_embeddings), batch_size=256)


@eqx.filter_jit
def _compose(model: FastText, ids: Int[Array, " n"]) -> Float[Array, "n dim"]:
    return model.compose(ids)


class FastText(Model, Embedder):
    """Skip-gram with subword (character n-gram) input vectors; negative sampling and/or
    hierarchical softmax.

    **Hyperparameters** (``spec.params``): `vocab_size`, `embedding_size`, `min_n`, `max_n`
    (n-gram lengths; ``max_n = 0`` turns subwords off), `buckets` (hash table rows),
    and the training settings of `zoo_word2vec.model.SkipGram` (`window`, `shrink_windows`,
    `negative`, `hs`, `sample`, `ns_exponent`, `alpha`, `min_alpha`, `epochs`, `output_init`).

    **Parameters:** `input` ``[V + buckets, D]``, the output layer as
    `zoo_word2vec.model.AbstractWord2Vec`'s (`output`, `tree_output`, `tree_nodes`,
    `tree_codes`), and each word's rows `subwords` ``[V, S]``, `subword_counts` ``[V]``.

    Without a ``words`` vocabulary only word rows are composed (a model for shape
    checks); the n-grams need the words.
    """

    input: Float[Array, "rows dim"]
    output: Float[Array, "vocab dim"] | None
    tree_output: Float[Array, "vocab dim"] | None
    tree_nodes: Int[Array, "vocab depth"] | None
    tree_codes: Int[Array, "vocab depth"] | None
    subwords: Int[Array, "vocab sub"]
    subword_counts: Int[Array, " vocab"]
    num_embeddings: int = eqx.field(static=True)
    embedding_size: int = eqx.field(static=True)
    spec: ModelSpec = eqx.field(static=True)
    vocabs: Vocabularies = eqx.field(static=True)

    def __init__(self, spec: ModelSpec, *, key: PRNGKeyArray, vocabs: Vocabularies) -> None:
        p = spec.params
        size, dim = p["vocab_size"], p["embedding_size"]
        words = vocabs["words"].tokens if "words" in vocabs else [""] * size
        offsets, rows = subword_table(words, p["min_n"], p["max_n"], p["buckets"] if "words" in vocabs else 0)
        k_in, k_out = jax.random.split(key)
        self.input = uniform_rows(k_in, (size + p["buckets"], dim), -1.0 / dim, 1.0 / dim)
        scale = p["output_init"] / dim

        def draw(salt: int) -> Array:  # salt 0: the outputs of a model without hs, as they always were
            k = k_out if salt == 0 else jax.random.fold_in(k_out, salt)
            return jax.random.uniform(k, (size, dim), minval=-scale, maxval=scale)

        self.output, self.tree_output, self.tree_nodes, self.tree_codes = output_layer(p, vocabs, draw)
        padded, counts = padded_subwords(offsets, rows)
        self.subwords, self.subword_counts = jnp.asarray(padded), jnp.asarray(counts)
        self.num_embeddings, self.embedding_size = size, dim
        self.spec, self.vocabs = spec, vocabs

    def compose(self, ids: Int[Array, " n"]) -> Float[Array, "n dim"]:
        """The vectors of vocabulary ids ``[n]``: mean of each word's own and n-gram rows."""
        rows = jnp.take(self.input, self.subwords[ids], axis=0)  # n x sub x dim
        mask = jnp.arange(self.subwords.shape[1]) < self.subword_counts[ids][:, None]
        total = jnp.sum(jnp.where(mask[..., None], rows, 0.0), axis=1)
        return total / jnp.maximum(self.subword_counts[ids], 1)[:, None].astype(total.dtype)

    def vectors(self) -> Float[Array, "vocab dim"]:
        """Each vocabulary word's vector ``[vocab, dim]`` (composed 256 words at a time)."""
        return _all_vectors(self)

    def __call__(
        self, ids: Int[Array, " seq"], mask: Bool[Array, " seq"] | None = None, *, key: PRNGKeyArray | None = None
    ) -> Float[Array, "seq dim"]:
        """The composed vectors of `ids` ``[seq]`` -> ``[seq, dim]``."""
        with jax.named_scope("fasttext"):
            return _compose(self, ids)

    def oov_vector(self, word: str) -> np.ndarray:
        """A vector for any word: its vocabulary vector if known, else the mean of its n-gram rows
        (zeros when it has no n-grams, e.g. with ``max_n = 0``)."""
        vocab = self.vocabs.get("words")
        if vocab is not None and word in vocab.index:
            return np.asarray(_compose(self, jnp.asarray([vocab.index[word]]))[0])
        p = self.spec.params
        buckets = ngram_buckets(word, p["min_n"], p["max_n"], p["buckets"])
        if not buckets:
            return np.zeros(self.embedding_size, dtype=np.float32)
        rows = np.asarray(self.input)[self.num_embeddings + np.asarray(buckets)]
        return rows.mean(axis=0)

    def loss(self, batch: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, ""]:
        """Mean loss per (center, context) pair."""
        centers = batch["centers"]
        sub_rows = jnp.take(self.input, self.subwords[centers], axis=0)
        sub_mask = jnp.arange(self.subwords.shape[1]) < self.subword_counts[centers][:, None]
        matrices, parts = model_targets(self, batch["outputs"])
        rows, labels, weights = joined(
            [jnp.take(m, q.ids, axis=0) for m, q in zip(matrices, parts, strict=True)], parts
        )
        losses = jax.vmap(block_loss)(sub_rows, sub_mask, rows, labels, weights, batch["output_mask"])
        total = jnp.sum(losses)
        return total / jnp.maximum(jnp.sum(batch["output_mask"]), 1)

    def example_batch(self, *, key: PRNGKeyArray, batch_size: int = 3, length: int = 8) -> dict[str, Array]:
        p = self.spec.params
        k_center, k_len, k_out = jax.random.split(key, 3)
        longest = max(1, min(length - 2, 2 * p["window"]))
        lengths = jax.random.randint(k_len, (batch_size,), 1, longest + 1)
        outputs = jax.random.randint(k_out, (batch_size, longest, 1 + p["negative"]), 0, self.num_embeddings)
        mask = jnp.arange(longest) < lengths[:, None]
        pad = length - longest
        return {
            "centers": jax.random.randint(k_center, (batch_size,), 0, self.num_embeddings).astype(jnp.int32),
            "outputs": jnp.pad(outputs, ((0, 0), (0, pad), (0, 0))).astype(jnp.int32),
            "output_mask": jnp.pad(mask, ((0, 0), (0, pad))),
        }


class FastTextCBOW(FastText):
    """CBOW over subword input vectors (fastText's ``cbow``): the mean of all word and n-gram rows
    of the context words (their sum with ``cbow_mean=0``) predicts the center word.

    **Hyperparameters** as `FastText`, plus `cbow_mean`. Batches are word2vec CBOW's
    (``inputs``, ``input_mask``, ``outputs``; `zoo_word2vec.model.window_example_batch`).
    """

    def loss(self, batch: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, ""]:
        """Mean loss per window with at least one context word."""
        inputs, mask = batch["inputs"], batch["input_mask"]
        ids = self.subwords[inputs]  # B x L x S
        sub_mask = mask[..., None] & (jnp.arange(ids.shape[-1]) < self.subword_counts[inputs][..., None])
        context = jnp.take(self.input, ids, axis=0).reshape(*inputs.shape[:1], -1, self.embedding_size)
        matrices, parts = model_targets(self, batch["outputs"])
        rows, labels, weights = joined(
            [jnp.take(m, q.ids, axis=0) for m, q in zip(matrices, parts, strict=True)], parts
        )
        block = partial(cbow_block_loss, mean=bool(self.spec["cbow_mean"]))
        flat_mask = sub_mask.reshape(inputs.shape[0], -1)
        total = jnp.sum(jax.vmap(block)(context, flat_mask, rows, labels, weights))
        return total / jnp.maximum(jnp.sum(jnp.any(mask, axis=-1)), 1)

    def example_batch(self, *, key: PRNGKeyArray, batch_size: int = 3, length: int = 8) -> dict[str, Array]:
        """Random window blocks, as word2vec CBOW's (`zoo_word2vec.model.window_example_batch`)."""
        p = self.spec.params
        size = self.num_embeddings
        return window_example_batch(size, p["window"], p["negative"], key=key, batch_size=batch_size, length=length)
