"""Train a `FastTextClassifier` as fastText's ``supervised`` does: SGD over the lines, Hogwild threads."""

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
from zoo_word2vec.classifier.kernels import train_thread, uniform_rows

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


def _aligned(shape: tuple[int, ...]) -> np.ndarray:
    """An uninitialised float32 array on a 64-byte boundary, which JAX on CPU takes without a copy."""
    size = int(np.prod(shape)) * 4
    raw = np.empty(size + 64, dtype=np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start : start + size].view(np.float32).reshape(shape)


def _arrays(model: Any, threads: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Writable float32 copies of the model's matrices; for a skeleton (`jax.ShapeDtypeStruct`
    leaves, see `fit`), fastText's start: input uniform in ``±1/dim`` (drawn by `uniform_rows` from
    `seed`, over `threads`), output zero (or uniform too with ``output_init = "uniform"``)."""
    if not isinstance(model.input, jax.ShapeDtypeStruct):
        inputs, output = _aligned(model.input.shape), _aligned(model.output.shape)
        inputs[:], output[:] = np.asarray(model.input), np.asarray(model.output)
        return inputs, output
    dim = model.spec["dim"]
    inputs, output = _aligned(model.input.shape), _aligned(model.output.shape)
    output[:] = 0.0
    bounds = np.linspace(0, inputs.shape[0], threads + 1).astype(np.int64)
    fill = lambda t: uniform_rows(inputs, bounds[t], bounds[t + 1], 1.0 / dim, 2 * seed + 1)
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(fill, range(threads)))
    if model.spec["output_init"] == "uniform":
        uniform_rows(output, 0, output.shape[0], 1.0 / dim, 2 * seed + 2)
    return inputs, output


def train_lines(
    model: Any, data: LabelledLines, *, epochs: int, lr: float, threads: int = 1, seed: int = 0
) -> tuple[Any, FitStats]:
    """Train `model` on `data` for `epochs`, the rate decaying linearly from `lr` to 0 over all of them.

    `model` is a built model, or its skeleton (``eqx.filter_eval_shape`` of the build), which
    starts from fastText's initialisation drawn here, without JAX drawing the big input matrix.

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
    threads = max(1, min(int(threads), len(data)))
    inputs, output = _arrays(model, threads, seed)
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
    if not any(data.labels):
        raise DataError("no line has a label: nothing to learn (fastText's labels start with __label__)")
    vocab = {"words": word_vocab(data.texts, min_count=min_count), "labels": label_vocab(data.labels)}
    build = lambda key: zoo.build(name, key=key, vocab=vocab, **dict(overrides or {}))
    model = eqx.filter_eval_shape(build, jax.random.key(seed))  # the skeleton: train_lines draws the start
    return train_lines(model, data, epochs=epochs, lr=lr, threads=threads, seed=seed)
