"""The classifier's losses over labels, in JAX and in NumPy: softmax, one-vs-all, hierarchical
softmax (`zoo_word2vec.huffman`) and negative sampling.

`line_losses` is what `FastTextClassifier.loss` averages: per line, the expectation of the
loss fastText's training step takes (one target drawn from the line's labels for softmax,
hs and ns; every label for ova). For negative sampling, the noise labels are taken in
expectation too: ``neg`` times the mean over the noise distribution (label counts to the
power 0.5, the target left out) of their logistic losses, so the objective needs no key.
`label_probabilities` gives each label's probability in NumPy (``[n, classes]``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from zoo_word2vec.huffman import HuffmanTree, huffman_tree

__all__ = ["label_probabilities", "line_losses", "noise_weights", "path_matrices"]


def noise_weights(counts: np.ndarray) -> np.ndarray:
    """fastText's noise distribution over labels ``[classes]``: counts to the power 0.5, normalised."""
    weights = np.sqrt(np.maximum(np.asarray(counts, dtype=np.float64), 1.0))
    return weights / weights.sum()


def path_matrices(tree: HuffmanTree, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """``(right [classes - 1, classes], left [...])`` float32: how often label c's path takes node i
    to the right (code 1) and to the left, so that ``log p = log_sigmoid(f) @ right + log_sigmoid(-f) @ left``."""
    right = np.zeros((max(classes - 1, 0), classes), dtype=np.float32)
    left = np.zeros_like(right)
    for c in range(classes):
        for i in range(tree.offsets[c], tree.offsets[c + 1]):
            (right if tree.codes[i] else left)[tree.nodes[i], c] += 1.0
    return right, left


def line_losses(
    logits: Float[Array, "batch classes"],
    labels: Float[Array, "batch classes"],
    loss: str,
    counts: np.ndarray,
    neg: int,
) -> Float[Array, " batch"]:
    """Each line's loss (see the module's docstring); `labels` 0/1 per class, `counts` the labels' counts."""
    share = labels / jnp.maximum(labels.sum(-1, keepdims=True), 1.0)  # the drawn target's distribution
    if loss == "ova":
        return -jnp.sum(labels * jax.nn.log_sigmoid(logits) + (1 - labels) * jax.nn.log_sigmoid(-logits), -1)
    if loss == "softmax":
        return -jnp.sum(share * jax.nn.log_softmax(logits, -1), -1)
    if loss == "hs":
        right, left = path_matrices(huffman_tree(counts), logits.shape[-1])
        nodes = logits[:, : right.shape[0]]
        log_p = jax.nn.log_sigmoid(nodes) @ right + jax.nn.log_sigmoid(-nodes) @ left
        return -jnp.sum(share * log_p, -1)
    if loss == "ns":
        q = jnp.asarray(noise_weights(counts), jnp.float32)
        positive = -jnp.sum(share * jax.nn.log_sigmoid(logits), -1)
        negative = -jax.nn.log_sigmoid(-logits)  # [B, C]: each label as noise
        others = q[None, :] * (1.0 - jnp.eye(logits.shape[-1]))  # row t: the noise without t
        others = others / jnp.maximum(others.sum(-1, keepdims=True), 1e-30)
        expected = share @ others  # [B, C]: the noise weights, over the drawn target
        return positive + neg * jnp.sum(expected * negative, -1)
    raise ValueError(f"loss must be 'softmax', 'ova', 'hs' or 'ns', got {loss!r}")


def label_probabilities(logits: np.ndarray, loss: str, counts: np.ndarray) -> np.ndarray:
    """Each label's probability ``[n, classes]`` float32 from the output scores `logits` ``[n, classes]``:
    a softmax; one sigmoid per label (ova, ns); the product along the label's path (hs)."""
    logits = np.asarray(logits, dtype=np.float32)
    if loss in ("ova", "ns"):
        return (1.0 / (1.0 + np.exp(-np.clip(logits, -60.0, 60.0)))).astype(np.float32)
    if loss == "hs":
        right, left = path_matrices(huffman_tree(counts), logits.shape[-1])
        nodes = logits[:, : right.shape[0]].astype(np.float64)
        log_p = -np.logaddexp(0.0, -nodes) @ right - np.logaddexp(0.0, nodes) @ left
        return np.exp(log_p).astype(np.float32)
    shifted = np.exp(logits - logits.max(-1, keepdims=True))
    return (shifted / shifted.sum(-1, keepdims=True)).astype(np.float32)
