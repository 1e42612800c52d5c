"""Train a `FastTextClassifier` as fastText's ``supervised`` does: SGD over the lines, Hogwild threads."""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import zoo
from zoo.plugin_api import DataError
from zoo_fasttext_sup.data import LabelledLines, label_vocab, word_vocab
from zoo_fasttext_sup.kernels import train_thread

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


def _csr(parts: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in parts], out=offsets[1:])
    return offsets, np.fromiter((x for p in parts for x in p), dtype=np.int64, count=int(offsets[-1]))


def train_lines(
    model: Any, data: LabelledLines, *, epochs: int, lr: float, threads: int = 1, seed: int = 0
) -> tuple[Any, FitStats]:
    """Train `model` on `data` for `epochs`, the rate decaying linearly from `lr` to 0 over all of them.

    Labels unknown to the model are dropped from their lines (as fastText drops labels it has not
    counted); lines left without a label or an input are skipped but still count their tokens.
    **Returns:** ``(trained model, FitStats)``.
    """
    start = time.perf_counter()
    labels = model.vocabs["labels"].index
    offsets, rows = model.featurizer().rows(data.texts)
    label_offsets, label_ids = _csr([[labels[y] for y in ys if y in labels] for ys in data.labels])
    tokens = np.asarray([len(t) + len(ys) + 1 for t, ys in zip(data.texts, data.labels, strict=True)], np.int64)
    per_epoch = int(tokens.sum())
    inputs, output = np.array(model.input, dtype=np.float32), np.array(model.output, dtype=np.float32)
    threads = max(1, min(int(threads), len(data)))
    counts = np.zeros(threads, dtype=np.int64)
    ova = model.spec["loss"] == "ova"

    def run(t: int) -> tuple[float, int]:
        first = t * len(data) // threads
        return train_thread(
            inputs, output, offsets, rows, label_offsets, label_ids, tokens, first,
            ova, float(lr), epochs * per_epoch, counts, t, LR_UPDATE_RATE, (seed << 8) + t + 1,
        )  # fmt: skip

    if threads == 1:
        results = [run(0)]
    else:
        with ThreadPoolExecutor(threads) as pool:
            results = list(pool.map(run, range(threads)))
    loss, trained = sum(r[0] for r in results), sum(r[1] for r in results)
    model = eqx.tree_at(lambda m: (m.input, m.output), model, (jnp.asarray(inputs), jnp.asarray(output)))
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
    `data`, then `train_lines`. fastText's defaults: 5 epochs, lr 0.1."""
    if not any(data.labels):
        raise DataError("no line has a label: nothing to learn (fastText's labels start with __label__)")
    vocab = {"words": word_vocab(data.texts, min_count=min_count), "labels": label_vocab(data.labels)}
    model = zoo.build(name, key=jax.random.key(seed), vocab=vocab, **dict(overrides or {}))
    return train_lines(model, data, epochs=epochs, lr=lr, threads=threads, seed=seed)
