"""gensim's ``Word2Vec`` on zoo: skip-gram or CBOW, called and saved as gensim's is.

Code written for gensim 4 runs with its import changed:

    from zoo.vectors import Word2Vec, FastText, CallbackAny2Vec

    model = Word2Vec(sentences, vector_size=100, window=5, min_count=5, sg=1, epochs=5, workers=2)
    model.wv.most_similar("king", topn=5)            # a zoo.vectors.KeyedVectors
    model.build_vocab(more_sentences, update=True)    # new words appended, trained rows kept
    model.train(more_sentences, total_examples=len(more_sentences), epochs=model.epochs)
    model.save("w2v.safetensors"); model = Word2Vec.load("w2v.safetensors")

gensim's argument names map to the hyperparameters of the registry's
``word2vec-skipgram`` (``sg=1``), ``word2vec-cbow`` (``sg=0``) and ``fasttext``
(`GENSIM_NAMES`). An option zoo does not implement (``hs=1``, ``cbow_mean=0``,
``null_word=1``, ``trim_rule``, FastText ``sg=0``, ...) is refused with an error naming it.
A saved model is a zoo model file (``zoo.load``, ``KeyedVectors.load`` and
``zoo vectors`` read it) with the gensim settings in its metadata.
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import jax
import numpy as np
from safetensors import safe_open

import zoo
from zoo.plugin_api import (
    DataError,
    InvalidParameterError,
    KeyedVectors,
    Vocab,
    WeightsError,
    build_word_vocab,
    check_hyperparameter,
    iter_sentences,
)
from zoo_word2vec.fit import fit
from zoo_word2vec.gensim_api.callbacks import call_hook, once
from zoo_word2vec.gensim_api.vocabulary import check_corpus, count_words, effective_min_count, refuse
from zoo_word2vec.vocab_update import grow_vocab

__all__ = ["GENSIM_NAMES", "Word2Vec"]

logger = logging.getLogger(__name__)

GENSIM_NAMES = {
    "vector_size": "embedding_size",
    "window": "window",
    "negative": "negative",
    "sample": "sample",
    "ns_exponent": "ns_exponent",
    "alpha": "alpha",
    "min_alpha": "min_alpha",
    "epochs": "epochs",
    "min_n": "min_n",
    "max_n": "max_n",
    "bucket": "buckets",
}
"""gensim's argument -> the zoo hyperparameter it sets (``min_n``, ``max_n``, ``bucket``: FastText only)."""

_METADATA = "zoo.gensim"
"""The metadata entry of a saved model holding the gensim settings that are not hyperparameters."""

_KEPT = ("min_count", "max_vocab_size", "max_final_vocab", "workers", "seed", "batch_words", "comment")
"""Settings saved besides the spec (the spec holds the hyperparameters)."""


class Word2Vec:
    """Skip-gram or CBOW with negative sampling, trained as gensim's ``Word2Vec`` is called.

    **Arguments** (gensim 4's names and defaults): `sentences` (token lists, a
    restartable iterable) or `corpus_file` (a text file, one sentence a line, words
    split on whitespace; also a folder or a glob pattern, their files in name order);
    given either, the vocabulary is built and the model trained at once. `vector_size`,
    `window` (maximal; each word draws 1..window),
    `negative`, `ns_exponent`, `sample`, `alpha` -> `min_alpha` (linear decay),
    `epochs`: the model's hyperparameters (`GENSIM_NAMES`). `sg`: 1 skip-gram
    (``word2vec-skipgram``), 0 CBOW (``word2vec-cbow``, the mean of the context).
    `min_count`, `max_vocab_size`, `max_final_vocab`: the vocabulary, by gensim's
    rules. `workers`: CPU threads (more than one races as in gensim, and a run repeats
    only statistically). `seed`: initial vectors and sampling. `batch_words`: words
    per job. `callbacks`: `CallbackAny2Vec` objects for the training this call runs.
    `compute_loss`, `comment`: accepted (zoo always computes the loss).

    Refused with `InvalidParameterError` unless left at gensim's default: `hs`
    (hierarchical softmax), `cbow_mean=0` (summed context), `null_word`,
    `trim_rule`, `sorted_vocab=0`, `hashfxn`, `shrink_windows=False`.

    **Attributes:** `wv` (`zoo.vectors.KeyedVectors`), `syn1neg` (the output
    vectors), `corpus_count`, `corpus_total_words`, `history` (one record per
    epoch trained: ``epoch``, ``loss``, ``words_per_s``, ``alpha``), `zoo_model`
    (the zoo model; None before `build_vocab`), and every argument above.
    """

    _architectures: ClassVar[tuple[str, str]] = ("word2vec-cbow", "word2vec-skipgram")
    """The registry names for ``sg=0`` and ``sg=1``."""

    def __init__(
        self,
        sentences: Iterable[Sequence[str]] | None = None,
        corpus_file: str | os.PathLike | None = None,
        vector_size: int = 100,
        alpha: float = 0.025,
        window: int = 5,
        min_count: int = 5,
        max_vocab_size: int | None = None,
        sample: float = 1e-3,
        seed: int = 1,
        workers: int = 3,
        min_alpha: float = 0.0001,
        sg: int = 0,
        hs: int = 0,
        negative: int = 5,
        ns_exponent: float = 0.75,
        cbow_mean: int = 1,
        hashfxn: Any = hash,
        epochs: int = 5,
        null_word: int = 0,
        trim_rule: Any = None,
        sorted_vocab: int = 1,
        batch_words: int = 10_000,
        compute_loss: bool = False,
        callbacks: Sequence[Any] = (),
        comment: str | None = None,
        max_final_vocab: int | None = None,
        shrink_windows: bool = True,
    ) -> None:
        refuse("hs", hs, 0, "zoo trains with negative sampling only (no hierarchical softmax)")
        refuse("cbow_mean", cbow_mean, 1, "zoo's CBOW averages the context vectors")
        refuse("null_word", null_word, 0, "zoo adds no padding word")
        refuse("trim_rule", trim_rule, None, "the vocabulary follows min_count, max_vocab_size and max_final_vocab")
        refuse("sorted_vocab", sorted_vocab, 1, "zoo's vocabularies are always most frequent first")
        refuse("hashfxn", hashfxn, hash, "zoo draws the initial vectors from seed, not from a hash of each word")
        refuse("shrink_windows", shrink_windows, True, "zoo's windows always shrink (each word draws 1..window)")
        self._check_sg(sg)
        if negative == 0:
            raise InvalidParameterError(
                "negative=0 trains nothing in zoo, which has no hierarchical softmax (hs=1): give negative >= 1"
            )
        self.sg = sg
        self.vector_size, self.window, self.negative = vector_size, window, negative
        self.sample, self.ns_exponent, self.epochs = sample, ns_exponent, epochs
        self.alpha, self.min_alpha = alpha, min_alpha
        self._check_hyperparameters()
        for option, value, least in (
            ("min_count", min_count, 0),
            ("workers", workers, 1),
            ("batch_words", batch_words, 2),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise InvalidParameterError(f"{option} must be an integer >= {least}, got {value!r}")
        for option, value in (("max_vocab_size", max_vocab_size), ("max_final_vocab", max_final_vocab)):
            if value is not None and (not isinstance(value, int) or value < 1):
                raise InvalidParameterError(f"{option} must be a positive integer or None, got {value!r}")
        self.min_count, self.max_vocab_size, self.max_final_vocab = min_count, max_vocab_size, max_final_vocab
        self.seed, self.workers, self.batch_words = seed, workers, batch_words
        self.compute_loss, self.comment = compute_loss, comment
        self.hs, self.cbow_mean = 0, 1
        self.corpus_count = self.corpus_total_words = 0
        self.history: list[dict[str, float]] = []
        self.raw_vocab: Counter[str] | None = None
        self._model: Any = None
        self._keyed: KeyedVectors | None = None
        self._current: Any = None  # during an epoch-end callback: () -> the model trained so far
        self._latest_loss = 0.0
        self._updates = 0
        if sentences is not None or corpus_file is not None:
            self.build_vocab(sentences, corpus_file=corpus_file)
            self.train(sentences, corpus_file=corpus_file, epochs=self.epochs, callbacks=callbacks)
        elif callbacks:
            warnings.warn(
                "callbacks given without sentences are not kept (as in gensim): pass them to train()", stacklevel=2
            )

    # -- the zoo side -------------------------------------------------------------------------

    @staticmethod
    def _check_sg(sg: int) -> None:
        if sg not in (0, 1):
            raise InvalidParameterError(f"sg must be 0 (CBOW) or 1 (skip-gram), got {sg!r}")

    @property
    def name(self) -> str:
        """The registry name this model trains as."""
        return self._architectures[self.sg]

    def _hyperparameters(self) -> dict[str, Any]:
        """The zoo hyperparameters the gensim attributes set."""
        return {zoo: getattr(self, gensim) for gensim, zoo in GENSIM_NAMES.items() if hasattr(self, gensim)}

    def _check_hyperparameters(self) -> None:
        """Each hyperparameter against its registry domain, named as gensim names it."""
        for gensim, param in GENSIM_NAMES.items():
            if hasattr(self, gensim):
                setattr(self, gensim, check_hyperparameter(self.name, param, getattr(self, gensim), label=gensim))

    @property
    def zoo_model(self) -> Any:
        """The zoo model (``zoo.save``, ``KeyedVectors.from_model`` take it); during an epoch-end
        callback, the model trained so far."""
        if self._current is not None:
            return self._current()
        return self._model

    @property
    def wv(self) -> KeyedVectors:
        """The word vectors as `zoo.vectors.KeyedVectors` (FastText: any word gets a vector)."""
        if self._model is None:
            raise DataError("the model has no vocabulary yet: call build_vocab(sentences) first")
        if self._keyed is None:
            self._keyed = KeyedVectors.from_model(self.zoo_model)
        return self._keyed

    @property
    def syn1neg(self) -> Any:
        """The output (context) vectors ``[V, dim]``, word2vec.c's and gensim's ``syn1neg``."""
        return np.asarray(self.zoo_model.output)

    def get_latest_training_loss(self) -> float:
        """The loss of the latest epoch trained: the mean negative-sampling loss per (word, context)
        pair (gensim sums it over the training call instead; 0.0 before training)."""
        return self._latest_loss

    # -- vocabulary ---------------------------------------------------------------------------

    def build_vocab(
        self,
        corpus_iterable: Iterable[Sequence[str]] | None = None,
        corpus_file: str | os.PathLike | None = None,
        update: bool = False,
        progress_per: int = 10000,
        keep_raw_vocab: bool = False,
        trim_rule: Any = None,
    ) -> None:
        """Count the words of the corpus and keep the vocabulary gensim would keep.

        Without `update`, a new model is built (fresh vectors drawn from `seed`). With
        ``update=True`` the vocabulary grows: words seen `min_count` times (after
        `max_final_vocab`'s rule) in the new corpus that the model lacks are appended in
        order of first appearance, every known word's count grows by its new count, every
        trained row is kept exactly, and the new words' rows are drawn as the model draws
        rows (their output rows start at zero). `progress_per` only paced gensim's log.
        """
        refuse("trim_rule", trim_rule, None, "the vocabulary follows min_count, max_vocab_size and max_final_vocab")
        corpus, tokenizer = check_corpus(corpus_iterable, corpus_file, "build_vocab")
        if tokenizer is not None:
            sentences: Any = iter_sentences(corpus, tokenizer)
        else:
            sentences = corpus
        counts, self.corpus_count, self.corpus_total_words = count_words(sentences, self.max_vocab_size)
        self.raw_vocab = counts if keep_raw_vocab else None
        least = effective_min_count(counts, self.min_count, self.max_final_vocab)
        if update:
            self._grow(counts, least)
            return
        vocab = build_word_vocab(counts, min_count=least)
        self._model = zoo.build(self.name, vocab=vocab, key=jax.random.key(self.seed), **self._hyperparameters())
        self._keyed, self._updates, self.history = None, 0, []
        logger.info("%s: %d words kept of %d distinct (min_count %d)", self.name, len(vocab), len(counts), least)

    def _grow(self, counts: Counter[str], least: int) -> None:
        """The vocabulary update of ``build_vocab(update=True)``."""
        if self._model is None:
            raise DataError(
                "build_vocab(update=True) needs a model with a vocabulary: build one first with "
                "build_vocab(sentences), or load a trained model"
            )
        old = self._model.vocabs["words"]
        new_words = [w for w, c in counts.items() if c >= least and w not in old.index]
        old_counts = np.asarray(old.counts) + np.array([counts.get(w, 0) for w in old.tokens], dtype=np.int64)
        vocab = Vocab([*old.tokens, *new_words], [*old_counts, *(counts[w] for w in new_words)], old.specials)
        self._updates += 1
        key = jax.random.fold_in(jax.random.key(self.seed), self._updates)
        self._model = grow_vocab(self._model, vocab, key=key)
        self._keyed = None
        logger.info("%s: vocabulary update added %d words (%d in all)", self.name, len(new_words), len(vocab))

    # -- training -----------------------------------------------------------------------------

    def train(
        self,
        corpus_iterable: Iterable[Sequence[str]] | None = None,
        corpus_file: str | os.PathLike | None = None,
        total_examples: int | None = None,
        total_words: int | None = None,
        epochs: int | None = None,
        start_alpha: float | None = None,
        end_alpha: float | None = None,
        word_count: int = 0,
        queue_factor: int = 2,
        report_delay: float = 1.0,
        compute_loss: bool = False,
        callbacks: Sequence[Any] = (),
    ) -> tuple[int, int]:
        """Train for `epochs` passes (default: the model's) over the corpus, the learning rate
        falling from `start_alpha` to `end_alpha` (which, as in gensim, become the model's
        `alpha` and `min_alpha`; default: those). `total_examples` / `total_words` need not be
        given (zoo counts the corpus); given, they are checked against it, with a warning
        when they differ. `callbacks` (`CallbackAny2Vec`) are called for this call's
        training. `queue_factor` and `report_delay` paced gensim's threads and log.

        **Returns:** ``(words, words)``: the in-vocabulary words trained over all epochs
        (zoo counts before subsampling, so gensim's two counts coincide).
        """
        refuse("word_count", word_count, 0, "training always starts from the corpus's first word")
        if self._model is None:
            raise DataError("you must first build the vocabulary before training: call build_vocab(sentences)")
        corpus, tokenizer = check_corpus(corpus_iterable, corpus_file, "train")
        callbacks = tuple(callbacks)
        self.alpha = start_alpha or self.alpha
        self.min_alpha = end_alpha if end_alpha is not None else self.min_alpha
        self.epochs = self.epochs if epochs is None else epochs
        self.compute_loss = compute_loss or self.compute_loss
        self._check_hyperparameters()
        self._check_totals(corpus, tokenizer, total_examples, total_words)

        def begin(epoch: int) -> None:
            for callback in callbacks:
                call_hook(callback, "on_epoch_begin", self)

        def end(record: dict[str, float], current: Any) -> None:
            self._latest_loss = float(record["loss"])
            self.history.append(record)
            logger.info(
                "%s: epoch %d, loss %.4f, %.0f words/s",
                self.name,
                record["epoch"],
                record["loss"],
                record["words_per_s"],
            )
            if not callbacks:
                return
            self._current, self._keyed = once(current), None
            try:
                for callback in callbacks:
                    call_hook(callback, "on_epoch_end", self)
            finally:
                self._current, self._keyed = None, None

        for callback in callbacks:
            call_hook(callback, "on_train_begin", self)
        self._model, stats = fit(
            self._model,
            corpus,
            seed=self.seed + len(self.history),
            threads=self.workers,
            job_words=self.batch_words,
            # gensim reads an iterable in order and a corpus_file as one share per worker
            streams=1 if corpus_file is None else self.workers,
            progress=False,
            tokenizer=tokenizer,
            epochs=self.epochs,
            alpha=self.alpha,
            min_alpha=self.min_alpha,
            on_epoch_begin=begin,
            on_epoch_end=end,
        )
        self._keyed = None
        for callback in callbacks:
            call_hook(callback, "on_train_end", self)
        return stats.words, stats.words

    def _check_totals(self, corpus: Any, tokenizer: Any, total_examples: int | None, total_words: int | None) -> None:
        """Warn, as gensim does, when the counts given are not the corpus's."""
        if total_examples is None and total_words is None:
            return
        if tokenizer is not None:
            corpus = iter_sentences(corpus, tokenizer)
        sentences = words = 0
        for sentence in corpus:
            sentences += 1
            words += len(sentence)
        for what, given, found in (("total_examples", total_examples, sentences), ("total_words", total_words, words)):
            if given is not None and given != found:
                warnings.warn(
                    f"{what}={given} but the corpus has {found}: zoo schedules the learning rate by the corpus's "
                    "own count",
                    stacklevel=3,
                )

    # -- files --------------------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> Path:
        """Write the model to one zoo safetensors file (``zoo.load`` and ``KeyedVectors.load`` read it
        too); `load` goes on from it, training or updating its vocabulary."""
        if self._model is None:
            raise DataError("nothing to save yet: build the vocabulary (and train) first")
        settings = {k: getattr(self, k) for k in _KEPT}
        settings.update(
            corpus_count=self.corpus_count,
            corpus_total_words=self.corpus_total_words,
            latest_loss=self._latest_loss,
            updates=self._updates,
            history=self.history,
        )
        return zoo.save(self._model, path, metadata={_METADATA: json.dumps(settings)})

    @classmethod
    def load(cls, path: str | os.PathLike) -> Word2Vec:
        """A model saved by `save`, or any zoo file of this family (``zoo train word2vec-skipgram``'s:
        the settings not in its spec then take gensim's defaults)."""
        model = zoo.load(path)
        name = model.spec.name
        if name not in cls._architectures:
            raise WeightsError(
                f"{path} holds a {name!r} model, not one of {cls.__name__}'s ({', '.join(cls._architectures)})"
            )
        with safe_open(str(path), "np") as handle:
            settings = json.loads((handle.metadata() or {}).get(_METADATA, "{}"))
        params = model.spec.params
        arguments = {gensim: params[zoo_name] for gensim, zoo_name in GENSIM_NAMES.items() if zoo_name in params}
        arguments.update({k: settings[k] for k in _KEPT if k in settings})
        if len(cls._architectures) > 1:
            arguments["sg"] = cls._architectures.index(name)
        loaded = cls(**arguments)
        loaded._model = model
        loaded.corpus_count = settings.get("corpus_count", 0)
        loaded.corpus_total_words = settings.get("corpus_total_words", 0)
        loaded._latest_loss = settings.get("latest_loss", 0.0)
        loaded._updates = settings.get("updates", 0)
        loaded.history = list(settings.get("history", []))
        return loaded

    def __repr__(self) -> str:
        size = len(self._model.vocabs["words"]) if self._model is not None else 0
        return f"{type(self).__name__}<{self.name}, vocab={size}, vector_size={self.vector_size}, alpha={self.alpha}>"
