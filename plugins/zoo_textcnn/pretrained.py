"""Initialise a model's word vectors from pretrained ones (CNN-static / CNN-non-static).

A source is any of: `zoo.vectors.KeyedVectors`, a zoo model that is an
`Embedder` (word2vec, GloVe, ..., with its ``words`` vocabulary), a ``(words,
matrix)`` pair, or a path to a zoo weights file or a word2vec text/binary file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from zoo.plugin_api import DataError, Embedder, KeyedVectors, Vocab

__all__ = ["Coverage", "initialise_embeddings", "vectors_of"]


@dataclass(frozen=True)
class Coverage:
    """How many of a vocabulary's words found a pretrained vector."""

    found: int
    total: int
    from_subwords: int = 0  # of `found`: words outside the pretrained vocabulary, given vectors by its `oov`

    @property
    def fraction(self) -> float:
        return self.found / max(self.total, 1)

    def __str__(self) -> str:
        text = f"{self.found:,} of {self.total:,} words ({self.fraction:.1%}) have pretrained vectors"
        return text + (f", {self.from_subwords:,} of them from subwords" if self.from_subwords else "")


def vectors_of(source: Any) -> KeyedVectors:
    """`KeyedVectors` from any supported source (see the module docstring)."""
    if isinstance(source, KeyedVectors):
        return source
    if isinstance(source, str | Path):
        return KeyedVectors.load(source)
    if isinstance(source, tuple) and len(source) == 2:
        return KeyedVectors(list(source[0]), source[1])
    if isinstance(source, Embedder):
        return KeyedVectors.from_model(source)
    raise DataError(
        f"cannot read word vectors from a {type(source).__name__}; pass KeyedVectors, a zoo Embedder model, "
        "a (words, matrix) pair, or a zoo weights file or word2vec file"
    )


def initialise_embeddings(
    model: Any, source: Any, *, key: jax.Array, vocab: Vocab | None = None, skip: Sequence[str] = ()
) -> tuple[Any, Coverage]:
    """Copy pretrained vectors into ``model.embedder`` for every word of its vocabulary they cover.

    A word is looked up as written, then lowercased. Words outside the pretrained
    vocabulary get the source's ``oov`` vector where it has one (FastText's sum of
    character n-gram vectors, Bojanowski et al. 2017). The rest are drawn from
    U[-a, a] with a chosen so their variance matches the pretrained vectors' (Kim
    2014); reserved tokens (padding, unknown) too.

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
    keyed = vectors_of(source)
    matrix = np.asarray(keyed.vectors, dtype=np.float32)
    if matrix.shape[1] != table.shape[1]:
        raise DataError(
            f"pretrained vectors have {matrix.shape[1]} dimensions but the model embeds in {table.shape[1]}; "
            f"build it with embedding_size={matrix.shape[1]}"
        )
    index = keyed.key_to_index
    scale = float(np.sqrt(3.0 * np.var(matrix))) if matrix.size else 0.25
    new = np.array(jax.random.uniform(key, table.shape, minval=-scale, maxval=scale), dtype=np.float32)
    reserved, skipped = set(vocab.specials.values()), set(skip)
    found = from_subwords = 0
    for row, word in enumerate(vocab.tokens):
        if word in reserved or word in skipped:
            continue
        hit = index.get(word, index.get(word.lower()))
        if hit is not None:
            new[row] = matrix[hit]
            found += 1
        elif keyed.oov is not None:
            new[row] = keyed.get_vector(word.lower())
            found, from_subwords = found + 1, from_subwords + 1
    total = len(vocab) - len(reserved)
    updated = eqx.tree_at(lambda m: m.embedder.weight, model, jnp.asarray(new, dtype=table.dtype))
    return updated, Coverage(found, total, from_subwords)
