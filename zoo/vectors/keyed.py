"""`KeyedVectors`: query trained word vectors as gensim users expect, and move them between tools."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from zoo.building.files import is_safetensors
from zoo.data.vocab import Vocab
from zoo.errors import DataError, WeightsError, close_matches
from zoo.eval.analogy import AnalogyResult, evaluate_analogies
from zoo.eval.similarity import WordPairsResult, evaluate_word_pairs
from zoo.vectors.fasttext_bin import is_fasttext_bin, read_fasttext_bin, write_fasttext_bin
from zoo.vectors.fasttext_model import FastTextModel, fasttext_from_zoo
from zoo.vectors.formats import read_word2vec, write_word2vec

__all__ = ["KeyedVectors", "OOVFunction"]

OOVFunction = Callable[[str], Any]
"""``oov(word) -> vector [dim]`` for a word outside the vocabulary (FastText's n-gram sum)."""

Term = str | np.ndarray | tuple[str | np.ndarray, float]


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


def _terms(value: Term | Iterable[Term] | None) -> list[Term]:
    if value is None:
        return []
    if isinstance(value, str | np.ndarray) or (isinstance(value, tuple) and len(value) == 2 and _is_weight(value[1])):
        return [value]  # one term, not a list of them
    return list(value)


def _is_weight(x: Any) -> bool:
    return isinstance(x, int | float | np.floating) and not isinstance(x, bool)


class KeyedVectors:
    """Word vectors with lookup, similarity, analogies, evaluation and word2vec files.

    Rows are in vocabulary order (most frequent first for zoo and word2vec
    files), which is what `restrict_vocab` counts on. The vectors are read-only:
    no query or evaluation modifies them.

    **Arguments:**

    - `words`: the words in row order (a sequence of str, or a `zoo.data.Vocab`).
    - `vectors`: ``[V, D]`` array-like, stored as float32.
    - `counts`: optional ``[V]`` corpus frequencies.
    - `oov`: optional ``oov(word) -> [D]`` giving vectors to words outside the
      vocabulary (FastText); without it such words raise `KeyError`.
    """

    def __init__(
        self,
        words: Sequence[str] | Vocab,
        vectors: Any,
        *,
        counts: Sequence[int] | np.ndarray | None = None,
        oov: OOVFunction | None = None,
    ) -> None:
        self.index_to_key: list[str] = list(words)
        self.key_to_index: dict[str, int] = {w: i for i, w in enumerate(self.index_to_key)}
        if len(self.key_to_index) != len(self.index_to_key):
            raise DataError("KeyedVectors needs distinct words; the list repeats some")
        array = np.array(vectors, dtype=np.float32)
        if array.ndim != 2 or array.shape[0] != len(self.index_to_key):
            raise DataError(f"{len(self.index_to_key)} words but vectors of shape {array.shape}")
        array.flags.writeable = False
        self.vectors = array
        self.counts = None if counts is None else np.asarray(counts, dtype=np.int64)
        self.oov = oov
        self._unit: np.ndarray | None = None

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def from_model(cls, model: Any, *, role: str = "words", oov: OOVFunction | None = None) -> KeyedVectors:
        """The static vectors of a zoo embedder model (``model.vectors()``) keyed by its
        `role` vocabulary; reserved tokens (``<pad>``, ...) are left out.

        `oov` defaults to the model's ``oov_vector(word)`` method when it has one.
        """
        from zoo.interfaces import SubwordVectors, WordVectors

        vocabs = getattr(model, "vocabs", None) or {}
        if role not in vocabs:
            raise DataError(
                f"{type(model).__name__} has no {role!r} vocabulary (it has {sorted(vocabs)}); "
                "build it with vocab={'words': build_word_vocab(...)}"
            )
        if not isinstance(model, WordVectors):
            raise DataError(f"{type(model).__name__} is not an embedder: it has no vectors() method")
        vocab: Vocab = vocabs[role]
        matrix = np.asarray(model.vectors(), dtype=np.float32)
        if matrix.shape[0] != len(vocab):
            raise DataError(f"the model has {matrix.shape[0]} vectors for a vocabulary of {len(vocab)}")
        reserved = {vocab.index[t] for t in vocab.specials.values()}
        keep = [i for i in range(len(vocab)) if i not in reserved]
        counts = None if vocab.counts is None else vocab.counts[keep]
        if oov is None and isinstance(model, SubwordVectors):
            oov = model.oov_vector
        return cls([vocab.tokens[i] for i in keep], matrix[keep], counts=counts, oov=oov)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike,
        *,
        binary: bool | None = None,
        limit: int | None = None,
        no_header: bool | None = None,
    ) -> KeyedVectors:
        """From a zoo model file (``zoo.save`` of an embedder), a fastText ``.bin`` model, or a
        word2vec text/binary or GloVe text file (each told apart by its first bytes)."""
        path = Path(path)
        if not path.is_file():
            raise DataError(f"no vectors file at {path}")
        if is_safetensors(path):
            from zoo.building.weights import load

            keyed = cls.from_model(load(path))
            return keyed if limit is None else keyed.restrict(limit)
        if is_fasttext_bin(path):
            return cls.load_fasttext_bin(path, limit=limit)
        return cls.load_word2vec_format(path, binary=binary, limit=limit, no_header=no_header)

    @classmethod
    def load_word2vec_format(
        cls,
        path: str | os.PathLike,
        *,
        binary: bool | None = None,
        limit: int | None = None,
        encoding: str = "utf-8",
        unicode_errors: str = "strict",
        no_header: bool | None = None,
    ) -> KeyedVectors:
        """Read a word2vec text or binary file, or a GloVe text file (``no_header=True``, or
        None to detect it; the format is detected when `binary` is None)."""
        words, vectors = read_word2vec(
            path, binary=binary, limit=limit, encoding=encoding, unicode_errors=unicode_errors, no_header=no_header
        )
        return cls(words, vectors)

    @classmethod
    def load_fasttext_bin(
        cls,
        path: str | os.PathLike,
        *,
        limit: int | None = None,
        encoding: str = "utf-8",
        unicode_errors: str = "strict",
    ) -> KeyedVectors:
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
        """Write a fastText ``.bin`` (fastText and gensim load it, with the same vectors for every word).

        Only vectors with fastText's subwords can: those of `load_fasttext_bin` or of a zoo
        fasttext model (`from_model`); a model restricted with `restrict` is written restricted.
        """
        model, owner = self.oov, getattr(self.oov, "__self__", None)
        if not isinstance(model, FastTextModel):
            if owner is None:
                raise DataError(
                    "these vectors have no fastText subwords (they come from neither a fastText .bin nor a zoo "
                    "fasttext model): write them with save_word2vec_format (a .vec file)"
                )
            model = fasttext_from_zoo(owner)
        if model.words[: len(self)] != self.index_to_key:
            raise DataError("these vectors' words are not their fastText model's first words; cannot write a .bin")
        return write_fasttext_bin(path, model.restrict(len(self)) if len(self) < model.nwords else model)

    def save_word2vec_format(
        self, path: str | os.PathLike, *, binary: bool = False, write_header: bool = True, prefix: str = ""
    ) -> Path:
        """Write the word2vec text (or binary) format, byte-identical to gensim's writer."""
        return write_word2vec(
            path, self.index_to_key, self.vectors, binary=binary, write_header=write_header, prefix=prefix
        )

    def restrict(self, limit: int) -> KeyedVectors:
        """A new `KeyedVectors` with the first `limit` words only."""
        counts = None if self.counts is None else self.counts[:limit]
        return KeyedVectors(self.index_to_key[:limit], self.vectors[:limit], counts=counts, oov=self.oov)

    # -- lookup ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.index_to_key)

    def __contains__(self, word: object) -> bool:
        """True for vocabulary words (words only the `oov` function knows are not "in")."""
        return word in self.key_to_index

    def __getitem__(self, word: str) -> np.ndarray:
        return self.get_vector(word)

    def __repr__(self) -> str:
        return f"KeyedVectors({len(self)} words, dim {self.vector_size})"

    @property
    def vector_size(self) -> int:
        return int(self.vectors.shape[1])

    @property
    def unit_vectors(self) -> np.ndarray:
        """``[V, D]`` rows scaled to unit length (zero rows stay zero); computed once."""
        if self._unit is None:
            unit = _unit_rows(self.vectors)
            unit.flags.writeable = False
            self._unit = unit
        return self._unit

    def get_vector(self, word: str, *, norm: bool = False) -> np.ndarray:
        """The vector ``[D]`` of `word` (unit length with `norm`).

        Words outside the vocabulary go to the `oov` function if there is one,
        else raise `KeyError` naming close vocabulary words.
        """
        index = self.key_to_index.get(word)
        if index is not None:
            return self.unit_vectors[index] if norm else self.vectors[index]
        if self.oov is None:
            raise KeyError(
                f"{word!r} is not in the vocabulary of {len(self)} words." + close_matches(word, self._near(word))
            )
        vector = np.asarray(self.oov(word), dtype=np.float32)
        if vector.shape != (self.vector_size,):
            raise WeightsError(
                f"the oov function returned shape {vector.shape} for {word!r}, expected ({self.vector_size},)"
            )
        return _unit_rows(vector) if norm else vector

    def _near(self, word: str) -> list[str]:
        head = self.index_to_key[:50000]
        return [w for w in head if w[:1].lower() == word[:1].lower()]

    def _term_vector(self, term: str | np.ndarray) -> np.ndarray:
        return (
            _unit_rows(np.asarray(term, np.float32))
            if isinstance(term, np.ndarray)
            else self.get_vector(term, norm=True)
        )

    def _weighted(self, positive: Any, negative: Any) -> tuple[list[tuple[np.ndarray, float]], set[int]]:
        terms = [(t, 1.0) for t in _terms(positive)] + [(t, -1.0) for t in _terms(negative)]
        if not terms:
            raise DataError("give at least one positive or negative word")
        weighted, used = [], set()
        for term, sign in terms:
            weight = 1.0
            if isinstance(term, tuple):
                term, weight = term
            weighted.append((self._term_vector(term), sign * float(weight)))
            if isinstance(term, str) and term in self.key_to_index:
                used.add(self.key_to_index[term])
        return weighted, used

    def _top(self, scores: np.ndarray, topn: int | None, exclude: set[int]) -> Any:
        if topn is None:
            return scores
        if topn < 0:
            raise DataError(f"topn must be at least 0 or None, got {topn}")
        wanted = min(topn + len(exclude), len(scores))
        best = np.argpartition(-scores, wanted - 1)[:wanted] if wanted else np.array([], dtype=np.int64)
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(self.index_to_key[i], float(scores[i])) for i in best if i not in exclude][:topn]

    def _candidates(self, restrict_vocab: int | None) -> np.ndarray:
        return self.unit_vectors if restrict_vocab is None else self.unit_vectors[:restrict_vocab]

    # -- similarity -----------------------------------------------------------------------

    def most_similar(
        self,
        positive: Term | Iterable[Term] | None = None,
        negative: Term | Iterable[Term] | None = None,
        topn: int | None = 10,
        restrict_vocab: int | None = None,
    ) -> Any:
        """The `topn` words closest (cosine) to the mean of the unit vectors of
        `positive` minus those of `negative` (3CosAdd); input words are excluded.

        Terms are words, vectors, or ``(word, weight)`` pairs. `restrict_vocab`
        searches only the first (most frequent) words. `topn=None` returns the
        similarity to every candidate word as an array.
        """
        weighted, used = self._weighted(positive, negative)
        mean = _unit_rows(np.mean([v * w for v, w in weighted], axis=0))
        scores = self._candidates(restrict_vocab) @ mean
        return self._top(scores, topn, used)

    def most_similar_cosmul(
        self,
        positive: Term | Iterable[Term] | None = None,
        negative: Term | Iterable[Term] | None = None,
        topn: int | None = 10,
        restrict_vocab: int | None = None,
        epsilon: float = 1e-3,
    ) -> Any:
        """3CosMul (Levy & Goldberg 2014): maximise ``∏ cos'(x, p) / (∏ cos'(x, n) + ε)``
        with ``cos' = (1 + cos) / 2`` over positive words p and negative words n."""
        terms_pos, terms_neg = _terms(positive), _terms(negative)
        _, used = self._weighted(terms_pos, terms_neg)
        candidates = self._candidates(restrict_vocab)
        shifted = lambda term: (1.0 + candidates @ self._term_vector(term)) / 2.0
        numerator = np.prod([shifted(t) for t in terms_pos], axis=0) if terms_pos else 1.0
        denominator = np.prod([shifted(t) for t in terms_neg], axis=0) if terms_neg else 1.0
        scores = np.broadcast_to(numerator / (denominator + epsilon), (len(candidates),))
        return self._top(np.asarray(scores), topn, used)

    def similar_by_vector(self, vector: Any, topn: int | None = 10, restrict_vocab: int | None = None) -> Any:
        """The `topn` words closest to `vector` (nothing excluded)."""
        return self.most_similar(positive=[np.asarray(vector, np.float32)], topn=topn, restrict_vocab=restrict_vocab)

    def similarity(self, first: str, second: str) -> float:
        """Cosine similarity of two words."""
        return float(np.dot(self.get_vector(first, norm=True), self.get_vector(second, norm=True)))

    def doesnt_match(self, words: Iterable[str]) -> str:
        """The word farthest (cosine) from the mean of the unit vectors of `words`.

        Words without a vector are ignored; at least one must have one.
        """
        kept = [w for w in words if w in self.key_to_index or self.oov is not None]
        if not kept:
            raise DataError("none of the words has a vector")
        unit = np.stack([self.get_vector(w, norm=True) for w in kept])
        mean = _unit_rows(unit.mean(axis=0))
        return kept[int(np.argmin(unit @ mean))]

    # -- evaluation -----------------------------------------------------------------------

    def evaluate_word_analogies(
        self,
        path: str | os.PathLike = "google",
        restrict_vocab: int | None = 30000,
        case_insensitive: bool = True,
        dummy4unknown: bool = False,
        method: str = "3cosadd",
    ) -> AnalogyResult:
        """Accuracy on a Google-format analogy file (``"google"``: the shipped set).

        Returns ``(score, sections)``; see `zoo.eval.AnalogyResult` for the
        per-section results, questions covered and skipped. Never modifies the vectors.
        """
        return evaluate_analogies(
            self.vectors,
            self.index_to_key,
            path,
            restrict_vocab=restrict_vocab,
            case_insensitive=case_insensitive,
            dummy4unknown=dummy4unknown,
            method=method,
        )

    def evaluate_word_pairs(
        self,
        path: str | os.PathLike = "wordsim353",
        restrict_vocab: int | None = 300000,
        case_insensitive: bool = True,
        delimiter: str = "\t",
        dummy4unknown: bool = False,
    ) -> WordPairsResult:
        """Spearman and Pearson correlation with human scores, and the oov fraction
        (``"wordsim353"``, ``"simlex999"``: the shipped sets). Never modifies the vectors."""
        return evaluate_word_pairs(
            self.vectors,
            self.index_to_key,
            path,
            restrict_vocab=restrict_vocab,
            case_insensitive=case_insensitive,
            delimiter=delimiter,
            dummy4unknown=dummy4unknown,
        )


def load_facebook_vectors(path: str | os.PathLike, encoding: str = "utf-8") -> KeyedVectors:
    """gensim's spelling of `KeyedVectors.load_fasttext_bin`: a ``.bin`` model's vectors,
    with fastText's vectors for words outside the vocabulary."""
    return KeyedVectors.load_fasttext_bin(path, encoding=encoding)
