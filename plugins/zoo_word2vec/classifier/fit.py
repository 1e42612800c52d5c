"""Train a `FastTextClassifier` as fastText's ``supervised`` does: SGD over the lines, Hogwild threads.

The lines are featurised once (`Featurizer.encoded_rows`), so each epoch walks arrays of row
numbers. Of the `bucket` hashed rows only those the lines use are allocated and trained
(`zoo_word2vec.classifier.start`); the model keeps them (``stored_buckets``), the others
would never have moved from their start.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import equinox as eqx
import jax
import numpy as np

import zoo
from zoo.plugin_api import DataError
from zoo_word2vec.classifier.data import LabelledLines, label_vocab, word_vocab
from zoo_word2vec.classifier.kernels import LOSSES, train_thread
from zoo_word2vec.classifier.objectives import noise_weights
from zoo_word2vec.classifier.start import starting_point
from zoo_word2vec.huffman import huffman_tree

__all__ = ["FitStats", "fit", "train_lines"]

LR_UPDATE_RATE = 100
"""fastText's ``-lrUpdateRate``: a thread reports its tokens (and so the rate decays) this often."""


@dataclass(frozen=True)
class FitStats:
    """What a run did: mean loss per trained line, lines trained, tokens per epoch, seconds."""

    loss: float
    lines: int
    tokens: int
    seconds: float


def _label_rows(model: Any, data: LabelledLines) -> tuple[np.ndarray, np.ndarray]:
    """Each line's labels as the model's label ids, those it does not know left out: ``(offsets, ids)``."""
    encoded = data.encoded()
    index = model.vocabs["labels"].index
    known = np.asarray([index.get(label, -1) for label in encoded.labels] + [-1], dtype=np.int64)
    ids = known[encoded.label_ids] if encoded.label_ids.size else np.zeros(0, np.int64)
    line_of = np.repeat(np.arange(len(encoded)), np.diff(encoded.label_offsets))
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.bincount(line_of[ids >= 0], minlength=len(encoded)), out=offsets[1:])
    return offsets, ids[ids >= 0]


def _loss_tables(model: Any) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """The labels' tree (hs) and the running sums of the noise distribution (ns)."""
    counts = model.label_counts()
    tree = huffman_tree(counts) if model.spec["loss"] == "hs" else huffman_tree(counts[:1])
    return (tree.offsets, tree.nodes, tree.codes), np.cumsum(noise_weights(counts))


def train_lines(
    model: Any, data: LabelledLines, *, epochs: int, lr: float, threads: int = 1, seed: int = 0
) -> tuple[Any, FitStats]:
    """Train `model` on `data` for `epochs`, the rate decaying linearly from `lr` to 0 over all of them.

    `model` is a built model, or its skeleton (``eqx.filter_eval_shape`` of the build), which
    starts from fastText's initialisation drawn here (`starting_point`), without JAX drawing
    the big input matrix. A model that stores some buckets gains those `data` uses.

    Labels unknown to the model are dropped from their lines (as fastText drops labels it has not
    counted); lines left without a label or an input are skipped but still count their tokens.
    **Returns:** ``(trained model, FitStats)``.
    """
    start = time.perf_counter()
    offsets, rows = model.featurizer().encoded_rows(data.encoded())
    model, inputs, output, rows = starting_point(model, rows, seed)
    label_offsets, label_ids = _label_rows(model, data)
    tokens = data.encoded().tokens_per_line()
    per_epoch = int(tokens.sum())
    threads = max(1, min(int(threads), len(data)))
    counts = np.zeros(threads, dtype=np.int64)
    tree, noise = _loss_tables(model)
    kind, neg = LOSSES[model.spec["loss"]], int(model.spec["neg"])

    def run(t: int) -> tuple[float, int]:
        first = t * len(data) // threads
        return train_thread(
            inputs, output, offsets, rows, label_offsets, label_ids, tokens, first, kind, tree, noise, neg,
            float(lr), epochs * per_epoch, counts, t, LR_UPDATE_RATE, (seed << 8) + t + 1,
        )  # fmt: skip

    if threads == 1:
        results = [run(0)]
    else:
        with ThreadPoolExecutor(threads) as pool:
            results = list(pool.map(run, range(threads)))
    loss, trained = sum(r[0] for r in results), sum(r[1] for r in results)
    # the trained arrays become the model's without a copy (JAX on CPU aliases aligned NumPy memory)
    arrays = (jax.device_put(inputs, may_alias=True), jax.device_put(output, may_alias=True))
    model = eqx.tree_at(lambda m: (m.input, m.output), model, arrays)
    return model, FitStats(loss / max(trained, 1), trained, per_epoch, time.perf_counter() - start)


def fit(
    name: str,
    data: LabelledLines,
    *,
    epochs: int = 5,
    lr: float = 0.1,
    threads: int = 1,
    min_count: int = 1,
    seed: int = 0,
    overrides: Mapping[str, Any] | None = None,
) -> tuple[Any, FitStats]:
    """Build `name` (``fasttext-classifier``) over the words (seen `min_count` times) and labels of
    `data`, then `train_lines` from fastText's initialisation. fastText's defaults: 5 epochs, lr 0.1."""
    if not any(np.diff(data.encoded().label_offsets)):
        raise DataError("no line has a label: nothing to learn (fastText's labels start with __label__)")
    vocab = {"words": word_vocab(data, min_count=min_count), "labels": label_vocab(data)}
    build = lambda key: zoo.build(name, key=key, vocab=vocab, **dict(overrides or {}))
    model = eqx.filter_eval_shape(build, jax.random.key(seed))  # the skeleton: train_lines draws the start
    return train_lines(model, data, epochs=epochs, lr=lr, threads=threads, seed=seed)
