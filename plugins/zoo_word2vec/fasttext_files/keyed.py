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

import numpy as np

from zoo.plugin_api import DataError, KeyedVectors, UnknownKeyError, check_finite_vectors
from zoo_word2vec.fasttext_files.bin import read_fasttext_bin, write_fasttext_bin
from zoo_word2vec.fasttext_files.model import FastTextModel, fasttext_from_zoo
from zoo_word2vec.fasttext_model import FastText

__all__ = ["FastTextKeyedVectors", "fasttext_behind", "is_fasttext_oov", "load_facebook_vectors", "write_keyed_bin"]


def _is_size(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool) and value >= 0


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
    """`KeyedVectors` whose `oov` is fastText's subword model: any word gets a vector.

    gensim's attributes of the subword model: `vectors_vocab` (``[V, D]`` the words' own
    rows), `vectors_ngrams` (``[bucket, D]`` the n-gram rows), `bucket`, `min_n`, `max_n`.
    As gensim's ``FastTextKeyedVectors(vector_size, min_n, max_n, bucket)`` it is an empty table
    to fill (`add_vectors`) with those settings and no n-gram rows trained (all zero).
    """

    compatible_hash = True
    """n-grams hashed as fastText hashes them (gensim 4's only hash)."""

    def __init__(
        self,
        words: Any = None,
        vectors: Any = None,
        min_n: int | None = None,
        max_n: int | None = None,
        bucket: int | None = None,
        **options: Any,
    ) -> None:
        if _is_size(words) and _is_size(vectors) and options.get("vector_size") is None:
            words, min_n, max_n, bucket, vectors = words, vectors, min_n, max_n, None  # gensim's positions
        super().__init__(words, vectors, **options)
        given = (min_n, max_n, bucket)
        if any(v is not None for v in given) and not all(_is_size(v) for v in given):
            raise DataError(f"FastTextKeyedVectors needs min_n, max_n and bucket as integers >= 0; got {given}")
        self._own = None if min_n is None else (int(bucket), int(min_n), int(max_n))

    def adjust_vectors(self) -> None:
        """gensim's recomputation of the word vectors from their rows: here they are composed when
        the vectors are made, so there is nothing to redo."""

    def _settings(self) -> tuple[int, int, int, int]:
        """``(words, bucket, min_n, max_n)`` of the subword model behind `oov` (or of the
        settings this empty table was made with)."""
        own = getattr(self, "_own", None)
        if own is not None and self.oov is None:
            return (len(self), *own)
        zoo_model = _zoo_fasttext(self.oov)
        if zoo_model is not None:
            p = zoo_model.spec.params
            return zoo_model.num_embeddings, int(p["buckets"]), int(p["min_n"]), int(p["max_n"])
        if isinstance(self.oov, FastTextModel):
            args = self.oov.args
            return self.oov.nwords, args.bucket, args.minn, args.maxn
        raise DataError("these vectors have no fastText subword model behind them")

    def _rows(self) -> np.ndarray:
        """``[words + bucket, D]`` the input rows of the subword model behind `oov` (a table made
        empty: its rows, then zero n-gram rows)."""
        if self.oov is None:
            bucket = self._settings()[1]
            return np.concatenate([self.vectors, np.zeros((bucket, self.vector_size), self.vectors.dtype)])
        zoo_model = _zoo_fasttext(self.oov)
        return np.asarray(zoo_model.input) if zoo_model is not None else self.oov.input

    @property
    def vectors_vocab(self) -> np.ndarray:
        """``[V, D]`` the vocabulary words' own input rows (before their n-grams are added)."""
        return self._rows()[: min(self._settings()[0], len(self))]

    @property
    def vectors_ngrams(self) -> np.ndarray:
        """``[bucket, D]`` the n-gram bucket rows."""
        return self._rows()[self._settings()[0] :]

    @property
    def bucket(self) -> int:
        """Hash buckets of the n-grams (0: no n-grams)."""
        return self._settings()[1]

    @property
    def min_n(self) -> int:
        return self._settings()[2]

    @property
    def max_n(self) -> int:
        return self._settings()[3]

    def __contains__(self, key: object) -> bool:
        """As gensim's: any word when there are n-gram buckets (each gets a vector), else the
        vocabulary's words (`has_index_for` is the vocabulary alone)."""
        if isinstance(key, str) and self.bucket > 0:
            return True
        return self.has_index_for(key)

    def _has_vector(self, key: object) -> bool:
        return self.has_index_for(key) or (isinstance(key, str) and self.bucket > 0)

    def get_vector(self, key: Any, norm: bool = False) -> np.ndarray:
        """As `KeyedVectors.get_vector`; a word outside the vocabulary composed of its n-grams
        (without buckets: `UnknownKeyError`, a `KeyError`, as gensim's)."""
        if isinstance(key, str) and self.bucket == 0 and not self.has_index_for(key):
            raise UnknownKeyError(f"cannot calculate vector for OOV word {key!r} without ngrams (bucket=0)")
        return super().get_vector(key, norm)

    @classmethod
    def load_fasttext_bin(
        cls,
        path: str | os.PathLike,
        *,
        limit: int | None = None,
        encoding: str = "utf-8",
        unicode_errors: str = "strict",
        allow_nonfinite: bool = False,
    ) -> FastTextKeyedVectors:
        """A fastText ``.bin`` model's word vectors, as fastText composes them (the mean of a word's
        row and its n-gram rows); any other word gets fastText's vector from its n-grams (`oov`).

        `limit` keeps the first words as the vocabulary searched; the others still get their
        fastText vectors on lookup. The output matrix is not read. A word or n-gram row holding
        NaN or infinity is refused (`DataError` naming it) unless `allow_nonfinite`.
        """
        model = read_fasttext_bin(path, output=False, encoding=encoding, unicode_errors=unicode_errors)
        vectors = model.word_vectors(limit)
        words, seen, keep = model.words[: len(vectors)], set(), []
        for i, word in enumerate(words):  # a word spelled twice (after decoding) keeps its first row
            if word not in seen:
                seen.add(word)
                keep.append(i)
        keyed = cls([words[i] for i in keep], vectors[keep], counts=model.counts[keep], oov=model)
        if not allow_nonfinite:
            check_finite_vectors(keyed, Path(path))
        return keyed

    def save_fasttext_bin(self, path: str | os.PathLike) -> Path:
        """Write a fastText ``.bin`` (fastText and gensim load it, with the same vectors for every word)."""
        return write_keyed_bin(self, path)


def load_facebook_vectors(
    path: str | os.PathLike, encoding: str = "utf-8", *, allow_nonfinite: bool = False
) -> FastTextKeyedVectors:
    """gensim's spelling of `FastTextKeyedVectors.load_fasttext_bin`: a ``.bin`` model's vectors,
    with fastText's vectors for words outside its vocabulary."""
    return FastTextKeyedVectors.load_fasttext_bin(path, encoding=encoding, allow_nonfinite=allow_nonfinite)
