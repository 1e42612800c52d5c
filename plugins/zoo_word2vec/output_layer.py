"""The output layer of the family's models: negative sampling, hierarchical softmax, or both.

A model scores a hidden vector ``h`` against *output rows* with a label each: the
negative-sampling rows (``output``, one per word: the target word, label 1, and K noise
words, label 0) and the hierarchical-softmax rows (``tree_output``, one per inner node of
the Huffman tree over the word counts, `zoo_word2vec.huffman.word_paths`: the nodes on the
target's path, labelled with its code there). Either objective alone, or both summed, as
word2vec.c and gensim allow (``-hs 1 -negative 0``, ``hs=1, negative=5``). Each row adds

    -log σ(h · u)  (label 1)   or   -log σ(-h · u)  (label 0)

to the loss. The path of a word is data of the model (``tree_nodes``, ``tree_codes``), built
from the vocabulary's counts when the model is built, so a saved model or checkpoint holds
the tree it was trained with, and rebuilding from the same counts gives the same tree.

??? cite "Morin & Bengio 2005, Hierarchical Probabilistic Neural Network Language Model"
??? cite "Mikolov et al. 2013, Distributed Representations of Words and Phrases and their Compositionality"
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int

from zoo.plugin_api import Vocabularies
from zoo_word2vec.huffman import word_paths
from zoo_word2vec.settings import check_objective

__all__ = [
    "OutputLayer",
    "Targets",
    "joined",
    "logistic_terms",
    "model_targets",
    "noise_targets",
    "output_layer",
    "tree_targets",
]


class OutputLayer(NamedTuple):
    """A model's output rows: `output` ``[V, D]`` (None without negative sampling), `tree_output`
    ``[V, D]`` (row i: inner node i; the last row is unused, as in word2vec.c and fastText; None
    without hs), the paths `tree_nodes`, `tree_codes` ``[V, depth]`` (None without hs)."""

    output: Any
    tree_output: Any
    tree_nodes: Any
    tree_codes: Any


def output_layer(params: Mapping[str, Any], vocabs: Vocabularies, draw: Any) -> OutputLayer:
    """The output layer `params` ask for; `draw(salt)` gives a fresh ``[V, D]`` output matrix
    (the model's initialisation), the tree comes from the ``words`` vocabulary's counts (equal
    counts, a balanced tree, for a model built without counts)."""
    check_objective(params)
    size = params["vocab_size"]
    output = draw(0) if params["negative"] > 0 else None
    if not params.get("hs", False):
        return OutputLayer(output, None, None, None)
    vocab = vocabs.get("words")
    counts = vocab.counts if vocab is not None and vocab.counts is not None else None
    counts = np.ones(size, dtype=np.int64) if counts is None else np.asarray(counts)[:size]
    nodes, codes = word_paths(counts)
    return OutputLayer(output, draw(1), jnp.asarray(nodes), jnp.asarray(codes))


class Targets(NamedTuple):
    """The output rows one example is scored against, in one matrix: row `ids` ``[..., out]``,
    `labels` ``[..., out]`` (bool), `weights` ``[..., out]`` (1 on a row that counts, 0 on padding
    and on noise equal to the target)."""

    ids: Int[Array, "... out"]
    labels: Bool[Array, "... out"]
    weights: Float[Array, "... out"]


def noise_targets(outputs: Int[Array, "... out"]) -> Targets:
    """Negative sampling's rows: the target ``outputs[..., 0]`` (label 1), the noise words after it."""
    first = jnp.arange(outputs.shape[-1]) == 0
    weights = (first | (outputs != outputs[..., :1])).astype(jnp.float32)
    return Targets(outputs, jnp.broadcast_to(first, outputs.shape), weights)


def tree_targets(
    tree_nodes: Int[Array, "V depth"], tree_codes: Int[Array, "V depth"], words: Int[Array, "..."]
) -> Targets:
    """Hierarchical softmax's rows: the inner nodes on each word's path, labelled with its codes."""
    nodes = tree_nodes[words]
    return Targets(jnp.maximum(nodes, 0), tree_codes[words] == 1, (nodes >= 0).astype(jnp.float32))


def joined(rows: list[Float[Array, "... out dim"]], parts: list[Targets]) -> tuple[Array, Array, Array]:
    """The rows gathered for each of `parts`, with their labels and weights, side by side:
    ``(rows [..., out, D], labels [..., out], weights [..., out])``."""
    return (
        jnp.concatenate(rows, axis=-2),
        jnp.concatenate([p.labels for p in parts], axis=-1),
        jnp.concatenate([p.weights for p in parts], axis=-1),
    )


def model_targets(model: Any, outputs: Int[Array, "... out"]) -> tuple[list[Any], list[Targets]]:
    """The matrices of `model`'s output layer in use and their `Targets` for examples whose target
    words are ``outputs[..., 0]`` and noise words the rest."""
    matrices, parts = [], []
    if model.output is not None:
        matrices.append(model.output)
        parts.append(noise_targets(outputs))
    if model.tree_output is not None:
        matrices.append(model.tree_output)
        parts.append(tree_targets(model.tree_nodes, model.tree_codes, outputs[..., 0]))
    return matrices, parts


def logistic_terms(
    scores: Float[Array, "... out"], labels: Bool[Array, "... out"], weights: Float[Array, "... out"]
) -> Float[Array, "..."]:
    """``-Σ weight · log σ(±score)`` over the last axis (+ where the label is 1)."""
    return -jnp.sum(weights * jax.nn.log_sigmoid(jnp.where(labels, scores, -scores)), axis=-1)
