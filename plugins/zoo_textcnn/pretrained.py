"""Initialise a model's word vectors from pretrained ones (CNN-static / CNN-non-static).

A source is any of: a zoo model that is an `Embedder` (word2vec, GloVe, ...,
with its vocabulary), gensim-style keyed vectors (``index_to_key`` and
``vectors``), a ``(words, matrix)`` pair, or a path to a zoo weights file or a
word2vec text file.
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from zoo.data.vocab import Vocab
from zoo.errors import DataError
from zoo.interfaces import Embedder

__all__ = ["Coverage", "initialise_embeddings", "read_word2vec_text", "vectors_of"]


@dataclass(frozen=True)
class Coverage:
    """How many of a vocabulary's words found a pretrained vector."""

    found: int
    total: int

    @property
    def fraction(self) -> float:
        return self.found / max(self.total, 1)

    def __str__(self) -> str:
        return f"{self.found:,} of {self.total:,} words ({self.fraction:.1%}) have pretrained vectors"


def read_word2vec_text(path: str | Path) -> tuple[list[str], np.ndarray]:
    """The word2vec text format: a ``count dim`` header, then ``word v_1 ... v_dim`` lines."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        header = lines.readline().split()
        if len(header) != 2 or not all(h.isdigit() for h in header):
            raise DataError(f"{path}: the first line should be 'count dim', got {' '.join(header)!r}")
        count, dim = int(header[0]), int(header[1])
        words, matrix = [], np.zeros((count, dim), dtype=np.float32)
        for row, line in enumerate(lines):
            parts = line.rstrip("\n").rstrip(" ").split(" ")
            if row >= count or len(parts) != dim + 1:
                raise DataError(f"{path}:{row + 2}: expected a word and {dim} numbers (and {count} rows in all)")
            words.append(parts[0])
            matrix[row] = np.asarray(parts[1:], dtype=np.float32)
    if len(words) != count:
        raise DataError(f"{path}: the header promises {count} vectors, the file holds {len(words)}")
    return words, matrix


def _vocab_of(model: Any) -> Vocab:
    vocabs = getattr(model, "vocabs", None) or {}
    if "words" in vocabs:
        return vocabs["words"]
    if len(vocabs) == 1:
        return next(iter(vocabs.values()))
    raise DataError(f"{type(model).__name__} has vocabularies {sorted(vocabs)}; expected one, or a 'words' one")


def vectors_of(source: Any) -> tuple[list[str], np.ndarray]:
    """``(words, matrix [n, dim])`` from any supported source (see the module docstring)."""
    if isinstance(source, str | Path):
        path = Path(source)
        if path.suffix == ".safetensors":
            from zoo.weights import load

            return vectors_of(load(path))
        return read_word2vec_text(path)
    if isinstance(source, tuple) and len(source) == 2:
        words, matrix = list(source[0]), np.asarray(source[1], dtype=np.float32)
    elif isinstance(source, Embedder):
        words, matrix = list(_vocab_of(source).tokens), np.asarray(source.vectors(), dtype=np.float32)
    elif hasattr(source, "index_to_key") and hasattr(source, "vectors"):
        words, matrix = list(source.index_to_key), np.asarray(source.vectors, dtype=np.float32)
    else:
        raise DataError(
            f"cannot read word vectors from a {type(source).__name__}; pass a zoo Embedder model, keyed vectors, "
            "a (words, matrix) pair, a .safetensors file or a word2vec text file"
        )
    if matrix.ndim != 2 or matrix.shape[0] != len(words):
        raise DataError(f"{len(words)} words but a vector matrix of shape {matrix.shape}")
    return words, matrix


def initialise_embeddings(
    model: Any, source: Any, *, key: jax.Array, vocab: Vocab | None = None, skip: Sequence[str] = ()
) -> tuple[Any, Coverage]:
    """Copy pretrained vectors into ``model.embedder`` for every word of its vocabulary they cover.

    A word is looked up as written, then lowercased. Words without a pretrained
    vector are drawn from U[-a, a] with a chosen so their variance matches the
    pretrained vectors' (Kim 2014); reserved tokens (padding, unknown) too.

    **Arguments:**

    - `model`: a model whose ``embedder`` holds a ``weight [vocab, dim]`` table.
    - `source`: pretrained vectors (see `vectors_of`); their dimension must equal the embedder's.
    - `key`: draws the vectors of uncovered words.
    - `vocab`: the model's word vocabulary (default ``model.vocabs["words"]``).
    - `skip`: words never copied (e.g. reserved tokens that mean something else in the source).

    **Returns:** ``(model with the new table, Coverage)``.
    """
    vocab = vocab if vocab is not None else model.vocabs["words"]
    table = getattr(model.embedder, "weight", None)
    if table is None or table.shape[0] != len(vocab):
        raise DataError("the model's embedder has no [vocab, dim] weight table for this vocabulary to fill")
    words, matrix = vectors_of(source)
    if matrix.shape[1] != table.shape[1]:
        raise DataError(
            f"pretrained vectors have {matrix.shape[1]} dimensions but the model embeds in {table.shape[1]}; "
            f"build it with embedding_size={matrix.shape[1]}"
        )
    index = {w: i for i, w in enumerate(words)}
    scale = float(np.sqrt(3.0 * np.var(matrix))) if matrix.size else 0.25
    new = np.asarray(jax.random.uniform(key, table.shape, minval=-scale, maxval=scale), dtype=np.float32)
    reserved, skipped = set(vocab.specials.values()), set(skip)
    found = 0
    for row, word in enumerate(vocab.tokens):
        if word in reserved or word in skipped:
            continue
        hit = index.get(word, index.get(word.lower()))
        if hit is not None:
            new[row] = matrix[hit]
            found += 1
    total = len(vocab) - len(reserved)
    updated = eqx.tree_at(lambda m: m.embedder.weight, model, jnp.asarray(new, dtype=table.dtype))
    return updated, Coverage(found, total)
