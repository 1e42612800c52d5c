"""fastText's supervised models (``.bin``, and ``.ftz`` from ``fasttext quantize``) as ``fasttext-classifier``.

`classifier_from_fasttext` gives the zoo model whose `FastTextClassifier.predict` is the
fastText package's ``predict`` on the same texts: the same words, labels and their counts
(hs builds its tree on them, in the file's order), word n-grams, character n-grams and
buckets, the same loss, text split as fastText splits it (the ``fasttext`` tokenizer).

The bucket rows are kept as the file has them, with three savings that change no prediction:
rows of a model without n-grams are left out (nothing reads them); a plain model's bucket
rows that are exactly zero are not stored (fastText draws only a tenth of the matrix per
training thread, the rest stays zero) and count as zero rows; a pruned dictionary's buckets
(``quantize -cutoff``) are stored by bucket number, an n-gram of any other bucket dropped as
fastText drops it. A ``.ftz`` keeps its codes (`QuantizedRows`); its output matrix is decoded.

`FastTextClassifierFiles` is the ``model_codec`` of ``[formats.fasttext]``
(`zoo.building.foreign`): ``zoo.load("model.bin")``, ``zoo import model.ftz --as lid.176``,
``zoo classify model.bin ...`` read supervised files through it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import zoo
from zoo.plugin_api import DataError, ModelFormat, Vocab
from zoo_word2vec.classifier.model import hashed_rows
from zoo_word2vec.classifier.quantized_rows import QuantizedRows
from zoo_word2vec.fasttext_files.bin import read_args, read_fasttext_bin
from zoo_word2vec.fasttext_files.model import SUPERVISED, FastTextModel
from zoo_word2vec.fasttext_files.quantized import QuantizedMatrix

__all__ = ["FastTextClassifierFiles", "classifier_from_fasttext"]


def _select(matrix: np.ndarray | QuantizedMatrix, rows: np.ndarray) -> np.ndarray | QuantizedMatrix:
    if isinstance(matrix, np.ndarray):
        return np.ascontiguousarray(matrix[rows])
    norms = None if matrix.norm_codes is None else matrix.norm_codes[rows]
    return QuantizedMatrix(matrix.codes[rows], matrix.quantizer, norms, matrix.norm_quantizer)


def _bucket_rows(model: FastTextModel, params: dict[str, Any]) -> tuple[np.ndarray, np.ndarray | None, str]:
    """``(rows of the file's input matrix to keep, their bucket numbers or None for all, unstored_buckets)``."""
    nwords, matrix = model.nwords, model.input
    words = np.arange(nwords)
    if hashed_rows(params) == 0:
        return words, np.zeros(0, np.int64), "zero"
    if model.pruned is not None:
        order = np.argsort(model.pruned[:, 0], kind="stable")
        return np.concatenate([words, nwords + model.pruned[order, 1]]), model.pruned[order, 0], "drop"
    if isinstance(matrix, np.ndarray):
        used = np.flatnonzero(np.any(matrix[nwords:] != 0, axis=1))
        if used.size < model.args.bucket:
            return np.concatenate([words, nwords + used]), used, "zero"
    return np.arange(matrix.shape[0]), None, "zero"


def classifier_from_fasttext(model: FastTextModel) -> Any:
    """The ``fasttext-classifier`` model of a fastText supervised model (see the module's docstring)."""
    a = model.args
    if a.model != SUPERVISED or not model.labels:
        raise DataError(
            f"a fastText {a.model_name} model holds word vectors, not a classifier: read it with "
            "zoo.vectors.KeyedVectors.load (or zoo import, which stores its vectors)"
        )
    if model.output is None:
        raise DataError("the fastText model was read without its output matrix, which a classifier needs")
    params = {"dim": a.dim, "bucket": a.bucket, "word_ngrams": a.word_ngrams, "minn": a.minn, "maxn": a.maxn}
    params |= {"loss": a.loss_name, "neg": max(a.neg, 1), "tokenizer": "fasttext", "lowercase": False}
    keep, buckets, unstored = _bucket_rows(model, params)
    table = _select(model.input, keep)
    if isinstance(table, QuantizedMatrix):
        params |= {"quantize_dsub": table.quantizer.dsub, "quantize_norm": table.norm_codes is not None}
    stored = -1 if buckets is None else int(buckets.size)
    params |= {"stored_buckets": stored if hashed_rows(params) else -1, "unstored_buckets": unstored}
    vocab = {"words": Vocab(model.words, model.counts, {}), "labels": Vocab(model.labels, model.label_counts, {})}
    build = lambda key: zoo.build("fasttext-classifier", key=key, vocab=vocab, **params)
    skeleton = eqx.filter_eval_shape(build, jax.random.key(0))
    rows = QuantizedRows.from_matrix(table) if isinstance(table, QuantizedMatrix) else jnp.asarray(table)
    ids = None if params["stored_buckets"] < 0 else jnp.asarray(buckets.astype(np.int32))
    arrays = (rows, jnp.asarray(model.output, jnp.float32), ids)
    built = eqx.tree_at(lambda m: (m.input, m.output, m.bucket_ids), skeleton, arrays, is_leaf=lambda x: x is None)
    shapes = lambda tree: [(x.shape, np.dtype(x.dtype)) for x in jax.tree_util.tree_leaves(tree)]
    if shapes(built) != shapes(skeleton):  # the file's arrays are what the model's hyperparameters build
        raise DataError(f"the fastText model's matrices do not fit a fasttext-classifier with {params}")
    return built


class FastTextClassifierFiles(ModelFormat):
    """fastText's supervised ``.bin`` and ``.ftz`` files, read as ``fasttext-classifier`` models."""

    def holds_model(self, path: Path) -> bool:
        return read_args(path).model == SUPERVISED

    def read_model(self, path: Path) -> Any:
        return classifier_from_fasttext(read_fasttext_bin(path, quantized=True))
