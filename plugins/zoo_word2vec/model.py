"""Word2vec architectures: skip-gram and CBOW with negative sampling (Mikolov et al. 2013).

Both keep two matrices, the input vectors ``W`` (the embeddings users query) and
the output vectors ``W'`` (word2vec.c's ``syn0`` and ``syn1neg``), and train on
*window blocks*: the context words around one center word, against the center
(the positive) and `negative` noise words. A batch is

- ``inputs`` ``[B, L]``: context word ids (``L`` = 2 × window slots, padded);
- ``input_mask`` ``[B, L]``: True on real context words;
- ``outputs`` ``[B, 1 + K]``: the center word, then K noise words.

Skip-gram scores every context word against every output word (each context
predicts the center; the K noise words are shared by the window, Ji et al. 2016);
CBOW scores the mean of the context vectors against the outputs. A noise word
equal to the center is ignored. The loss is the negative-sampling objective

    -log σ(u_c · v) - Σ_k log σ(-u_k · v),

averaged over positive pairs (skip-gram) or windows (CBOW).

??? cite "Mikolov et al. 2013, Distributed Representations of Words and Phrases and their Compositionality"
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray

from zoo.plugin_api import Embedder, Model, ModelSpec, Vocabularies

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


def _log_sigmoid_terms(scores: Float[Array, "... out"], outputs: Int[Array, "... out"]) -> Float[Array, "..."]:
    """``-log σ(s_0) - Σ_{k≥1} log σ(-s_k)`` over the last axis, skipping noise equal to the positive."""
    positive = -jax.nn.log_sigmoid(scores[..., 0])
    noise_ok = outputs[..., 1:] != outputs[..., :1]
    negative = -jnp.sum(jnp.where(noise_ok, jax.nn.log_sigmoid(-scores[..., 1:]), 0.0), axis=-1)
    return positive + negative


def skipgram_block_loss(
    context: Float[Array, "ctx dim"],
    mask: Bool[Array, " ctx"],
    output: Float[Array, "out dim"],
    outputs: Int[Array, " out"],
) -> Float[Array, ""]:
    """Summed loss of one window block: every context row against every output row."""
    scores = context @ output.T  # ctx x out
    per_context = _log_sigmoid_terms(scores, jnp.broadcast_to(outputs, scores.shape))
    return jnp.sum(jnp.where(mask, per_context, 0.0))


def cbow_block_loss(
    context: Float[Array, "ctx dim"],
    mask: Bool[Array, " ctx"],
    output: Float[Array, "out dim"],
    outputs: Int[Array, " out"],
) -> Float[Array, ""]:
    """Loss of one window block: the mean context vector against the output rows (0 if no context)."""
    count = jnp.sum(mask)
    hidden = jnp.sum(jnp.where(mask[:, None], context, 0.0), axis=0) / jnp.maximum(count, 1)
    return jnp.where(count > 0, _log_sigmoid_terms(output @ hidden, outputs), 0.0)


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
    """What skip-gram and CBOW share: the two matrices, their construction, the
    embedding, the window-block batches. A subclass says only how a batch is scored
    (`loss`), as equinox's ``Conv1d`` only fixes what ``Conv`` leaves open.

    **Hyperparameters** (``spec.params``): `vocab_size`, `embedding_size`; training settings
    kept with the model: `window` (maximal; each center draws 1..window),
    `negative`, `sample` (subsampling threshold), `ns_exponent` (noise ∝
    count^exponent), `alpha` → `min_alpha` (linear decay), `epochs`;
    `output_init` (0: outputs start at zero, as word2vec.c).
    """

    input: Float[Array, "vocab dim"]
    output: Float[Array, "vocab dim"]
    num_embeddings: int = eqx.field(static=True)
    embedding_size: int = eqx.field(static=True)
    spec: ModelSpec = eqx.field(static=True)
    vocabs: Vocabularies = eqx.field(static=True)

    scope: ClassVar[str]
    """The name of the subclass's ops in a profile (`jax.named_scope`)."""

    def __init__(self, spec: ModelSpec, *, key: PRNGKeyArray, vocabs: Vocabularies) -> None:
        p = spec.params
        self.input, self.output = init_matrices(p["vocab_size"], p["embedding_size"], p["output_init"], key=key)
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
    output = jnp.take(model.output, batch["outputs"], axis=0)
    mask = batch["input_mask"]
    total = jnp.sum(jax.vmap(block_loss)(context, mask, output, batch["outputs"]))
    count = jnp.sum(mask) if per_pair else jnp.sum(jnp.any(mask, axis=-1))
    return total / jnp.maximum(count, 1)


class SkipGram(AbstractWord2Vec):
    """Skip-gram with negative sampling: each word predicts the words around it.
    Hyperparameters as `AbstractWord2Vec`."""

    scope = "word2vec-skipgram"

    def loss(self, batch: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, ""]:
        """Mean negative-sampling loss per (context, center) pair of the batch's window blocks."""
        return window_loss(self, batch, skipgram_block_loss, per_pair=True)


class CBOW(AbstractWord2Vec):
    """Continuous bag of words with negative sampling: the mean of the context
    vectors predicts the center word. Hyperparameters as `AbstractWord2Vec`."""

    scope = "word2vec-cbow"

    def loss(self, batch: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, ""]:
        """Mean negative-sampling loss per window with at least one context word."""
        return window_loss(self, batch, cbow_block_loss, per_pair=False)
