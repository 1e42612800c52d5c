"""gensim's ``FastText`` on zoo: CBOW or skip-gram over character n-grams, called as gensim's is."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

import numpy as np

from zoo.plugin_api import KeyedVectors
from zoo_word2vec.gensim_api.vocabulary import refuse
from zoo_word2vec.gensim_api.word2vec import Word2Vec, output_layer_bytes
from zoo_word2vec.ngrams import ngram_buckets

__all__ = ["FastText"]


class FastText(Word2Vec):
    """FastText (CBOW or skip-gram over character n-grams), trained as gensim's ``FastText`` is
    called; ``model.wv`` gives every word a vector, seen or not.

    Arguments as `Word2Vec`, plus `min_n`, `max_n` (n-gram lengths; ``max_n < min_n``
    turns n-grams off, as in gensim) and `bucket` (hash rows). `sg`: 0 CBOW
    (``fasttext-cbow``, gensim's default), 1 skip-gram (``fasttext``); `word_ngrams` must
    stay 1 (as gensim requires).
    """

    _architectures: ClassVar[tuple[str, ...]] = ("fasttext-cbow", "fasttext")
    _LOCKS: ClassVar[tuple[str, ...]] = ("vectors_lockf", "vectors_vocab_lockf", "vectors_ngrams_lockf")

    def __init__(
        self,
        sentences: Iterable[Sequence[str]] | None = None,
        corpus_file: str | os.PathLike | None = None,
        sg: int = 0,
        hs: int = 0,
        vector_size: int = 100,
        alpha: float = 0.025,
        window: int = 5,
        min_count: int = 5,
        max_vocab_size: int | None = None,
        word_ngrams: int = 1,
        sample: float = 1e-3,
        seed: int = 1,
        workers: int = 3,
        min_alpha: float = 0.0001,
        negative: int = 5,
        ns_exponent: float = 0.75,
        cbow_mean: int = 1,
        hashfxn: Any = hash,
        epochs: int = 5,
        null_word: int = 0,
        min_n: int = 3,
        max_n: int = 6,
        sorted_vocab: int = 1,
        bucket: int = 2_000_000,
        trim_rule: Any = None,
        batch_words: int = 10_000,
        callbacks: Sequence[Any] = (),
        max_final_vocab: int | None = None,
        shrink_windows: bool = True,
        compute_loss: bool = False,
        comment: str | None = None,
    ) -> None:
        refuse("word_ngrams", word_ngrams, 1, "as in gensim, only single words are trained (word_ngrams=1)")
        self.min_n, self.max_n, self.bucket = min_n, 0 if max_n < min_n else max_n, bucket
        super().__init__(
            sentences,
            corpus_file,
            vector_size=vector_size,
            alpha=alpha,
            window=window,
            min_count=min_count,
            max_vocab_size=max_vocab_size,
            sample=sample,
            seed=seed,
            workers=workers,
            min_alpha=min_alpha,
            sg=sg,
            hs=hs,
            negative=negative,
            ns_exponent=ns_exponent,
            cbow_mean=cbow_mean,
            hashfxn=hashfxn,
            epochs=epochs,
            null_word=null_word,
            trim_rule=trim_rule,
            sorted_vocab=sorted_vocab,
            batch_words=batch_words,
            compute_loss=compute_loss,
            callbacks=callbacks,
            comment=comment,
            max_final_vocab=max_final_vocab,
            shrink_windows=shrink_windows,
        )

    def _row_lock(self) -> np.ndarray | None:
        """The factor of each input row's updates, as gensim's FastText reads them: the word rows
        from ``wv.vectors_vocab_lockf``, the n-gram rows from ``wv.vectors_ngrams_lockf`` (None:
        all 1). ``wv.vectors_lockf`` is there as in gensim, whose FastText does not read it either."""
        if self._lock_factors("vectors_lockf") is not None:
            warnings.warn(
                "FastText trains by wv.vectors_vocab_lockf (word rows) and wv.vectors_ngrams_lockf (n-gram rows); "
                "wv.vectors_lockf is not read, as in gensim",
                stacklevel=3,
            )
        vocab, ngrams = self._lock_factors("vectors_vocab_lockf"), self._lock_factors("vectors_ngrams_lockf")
        if vocab is None and ngrams is None:
            return None
        words, rows = self._model.num_embeddings, self._model.input.shape[0]
        lock = np.ones(rows, dtype=np.float32)
        if vocab is not None:
            lock[:words] = self._spread(vocab, words)
        if ngrams is not None:
            lock[words:] = self._spread(ngrams, rows - words)
        return lock

    def _with_word_vectors(self, model: Any, vectors: np.ndarray) -> Any:
        """`model` kept when `vectors` are its own words' vectors (a FastText word vector is composed
        from its n-grams, so others cannot become its rows); else None."""
        own = np.asarray(KeyedVectors.from_model(model).vectors)
        return model if np.allclose(own, vectors, atol=1e-6) else None

    def estimate_memory(self, vocab_size: int | None = None, report: dict[str, int] | None = None) -> dict[str, int]:
        """gensim's estimate of the bytes the model takes: ``vocab``, ``syn0_vocab``, ``syn1`` (with
        hs) and ``syn1neg`` (with negative; ``V x D`` float32), ``syn0_ngrams`` (``bucket x D``),
        ``buckets_word`` and the ``total``."""
        words = len(self.wv) if self._model is not None else (vocab_size or 0)
        row = self.vector_size * 4
        report = dict(report or {})
        report.update(vocab=words * (700 if self.hs else 500), syn0_vocab=words * row)
        report.update(output_layer_bytes(words, self.vector_size, self.hs, self.negative))
        if self.bucket:
            report["syn0_ngrams"] = self.bucket * row
            ngrams = 0
            if self._model is not None:
                ngrams = sum(len(ngram_buckets(w, self.min_n, self.max_n, self.bucket)) for w in self.wv.index_to_key)
            report["buckets_word"] = 64 + 100 * words + 4 * ngrams
        report["total"] = sum(v for k, v in report.items() if k != "total")
        return report
