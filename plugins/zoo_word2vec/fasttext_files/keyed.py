"""Word vectors with fastText's subwords: `FastTextKeyedVectors`, read from and written to ``.bin`` files.

Every word, in the vocabulary or not, gets fastText's vector: the mean of its own row
and its n-gram rows (`zoo_word2vec.fasttext_files.model.FastTextModel`), the `oov` of
the vectors. They come from a fastText ``.bin`` model (`load_fasttext_bin`) or a zoo
``fasttext`` model (``KeyedVectors.from_model``) and go back to a ``.bin`` that the
fastText package and gensim load with the same vectors (`save_fasttext_bin`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from zoo.plugin_api import DataError, KeyedVectors
from zoo_word2vec.fasttext_files.bin import read_fasttext_bin, write_fasttext_bin
from zoo_word2vec.fasttext_files.model import FastTextModel, fasttext_from_zoo
from zoo_word2vec.fasttext_model import FastText

__all__ = ["FastTextKeyedVectors", "fasttext_behind", "is_fasttext_oov", "load_facebook_vectors", "write_keyed_bin"]


def _zoo_fasttext(oov: Any) -> FastText | None:
    """The zoo fasttext model whose ``oov_vector`` method `oov` is, if it is one."""
    owner = getattr(oov, "__self__", None)  # a bound method (equinox binds its modules' methods its own way)
    return owner if isinstance(owner, FastText) else None


def is_fasttext_oov(oov: Any) -> bool:
    """Whether `oov` gives fastText's vectors: a `FastTextModel`, or a zoo fasttext model's ``oov_vector``."""
    return isinstance(oov, FastTextModel) or _zoo_fasttext(oov) is not None


def fasttext_behind(oov: Any) -> FastTextModel | None:
    """The fastText model that gives `oov`'s vectors (a `FastTextModel`, or a zoo fasttext model
    converted exactly), or None when `oov` is something else."""
    if isinstance(oov, FastTextModel):
        return oov
    model = _zoo_fasttext(oov)
    return None if model is None else fasttext_from_zoo(model)


def write_keyed_bin(keyed: KeyedVectors, path: str | os.PathLike) -> Path:
    """Write `keyed` as a fastText ``.bin``: vectors whose `oov` is fastText's (those of a ``.bin``
    or a zoo fasttext model); restricted vectors are written restricted."""
    model = fasttext_behind(keyed.oov)
    if model is None:
        raise DataError(
            "these vectors have no fastText subwords (they come from neither a fastText .bin nor a zoo "
            "fasttext model): write them with save_word2vec_format (a .vec file)"
        )
    if model.words[: len(keyed)] != keyed.index_to_key:
        raise DataError("these vectors' words are not their fastText model's first words; cannot write a .bin")
    return write_fasttext_bin(path, model.restrict(len(keyed)) if len(keyed) < model.nwords else model)


class FastTextKeyedVectors(KeyedVectors):
    """`KeyedVectors` whose `oov` is fastText's subword model: any word gets a vector."""

    @classmethod
    def load_fasttext_bin(
        cls,
        path: str | os.PathLike,
        *,
        limit: int | None = None,
        encoding: str = "utf-8",
        unicode_errors: str = "strict",
    ) -> FastTextKeyedVectors:
        """A fastText ``.bin`` model's word vectors, as fastText composes them (the mean of a word's
        row and its n-gram rows); any other word gets fastText's vector from its n-grams (`oov`).

        `limit` keeps the first words as the vocabulary searched; the others still get their
        fastText vectors on lookup. The output matrix is not read.
        """
        model = read_fasttext_bin(path, output=False, encoding=encoding, unicode_errors=unicode_errors)
        vectors = model.word_vectors(limit)
        words, seen, keep = model.words[: len(vectors)], set(), []
        for i, word in enumerate(words):  # a word spelled twice (after decoding) keeps its first row
            if word not in seen:
                seen.add(word)
                keep.append(i)
        return cls([words[i] for i in keep], vectors[keep], counts=model.counts[keep], oov=model)

    def save_fasttext_bin(self, path: str | os.PathLike) -> Path:
        """Write a fastText ``.bin`` (fastText and gensim load it, with the same vectors for every word)."""
        return write_keyed_bin(self, path)


def load_facebook_vectors(path: str | os.PathLike, encoding: str = "utf-8") -> FastTextKeyedVectors:
    """gensim's spelling of `FastTextKeyedVectors.load_fasttext_bin`: a ``.bin`` model's vectors,
    with fastText's vectors for words outside its vocabulary."""
    return FastTextKeyedVectors.load_fasttext_bin(path, encoding=encoding)
