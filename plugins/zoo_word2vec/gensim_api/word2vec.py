"""gensim's ``Word2Vec`` on zoo: skip-gram or CBOW, called and saved as gensim's is.

Code written for gensim 4 runs with its import changed:

    from zoo.vectors import Word2Vec, FastText, CallbackAny2Vec

    model = Word2Vec(sentences, vector_size=100, window=5, min_count=5, sg=1, epochs=5, workers=2)
    model.wv.most_similar("king", topn=5)            # a zoo.vectors.KeyedVectors
    model.build_vocab(more_sentences, update=True)    # new words appended, trained rows kept
    model.train(more_sentences, total_examples=len(more_sentences), epochs=model.epochs)
    model.save("w2v.safetensors"); model = Word2Vec.load("w2v.safetensors")

gensim's argument names map to the hyperparameters of the registry's
``word2vec-skipgram`` (``sg=1``), ``word2vec-cbow`` (``sg=0``), ``fasttext`` and
``fasttext-cbow`` (`GENSIM_NAMES`); ``hs=1`` trains hierarchical softmax (alone with
``negative=0``). An option zoo does not implement (``null_word=1``, ``hashfxn``, ...) is
refused with an error naming it.
A saved model is a zoo model file (``zoo.load``, ``KeyedVectors.load`` and
``zoo vectors`` read it) with the gensim settings in its metadata.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from safetensors import safe_open

import zoo
from zoo.plugin_api import (
    DataError,
    InvalidParameterError,
    KeyedVectors,
    Vocab,
    WeightsError,
    check_hyperparameter,
    iter_sentences,
    open_input,
)
from zoo_word2vec.fit import fit
from zoo_word2vec.gensim_api.callbacks import call_hook, once
from zoo_word2vec.gensim_api.vocabulary import (
    check_corpus,
    count_words,
    effective_min_count,
    gensim_order,
    keep_vocab_item,
    refuse,
    sample_ints,
)
from zoo_word2vec.vocab_update import grow_vocab

__all__ = ["GENSIM_NAMES", "GensimPickleError", "NoNegativeSampling", "Word2Vec", "output_layer_bytes"]

logger = logging.getLogger(__name__)


class NoVocabularyError(DataError, RuntimeError):
    """Training a model without a vocabulary (none built, or none of its words kept): a
    `RuntimeError`, as gensim's."""


class NotAModelError(WeightsError, AttributeError):
    """`Word2Vec.load` of a file that holds word vectors, not a model: an `AttributeError`, as gensim's."""


def gensim_paths(nodes: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """gensim's per-word ``code`` and ``point`` from the padded leaf-to-root paths ``[V, depth]``
    (-1 past a path's end): object arrays ``[V]`` of root-to-leaf uint8 codes and uint32 nodes.
    gensim's code 0 is the branch whose probability is ``sigmoid(syn1[point] . h)``, zoo's 1, so
    the bits flip: gensim's formula on zoo's `syn1` gives zoo's probabilities."""
    code, point = np.empty(len(nodes), dtype=object), np.empty(len(nodes), dtype=object)
    for i, (row, bits) in enumerate(zip(nodes, codes, strict=True)):
        keep = row >= 0
        code[i], point[i] = (1 - bits[keep][::-1]).astype(np.uint8), row[keep][::-1].astype(np.uint32)
    return code, point


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
    "hs": "hs",
    "shrink_windows": "shrink_windows",
    "cbow_mean": "cbow_mean",
}
"""gensim's argument -> the zoo hyperparameter it sets (``min_n``, ``max_n``, ``bucket``: FastText only;
``cbow_mean``: CBOW only)."""

_METADATA = "zoo.gensim"
"""The metadata entry of a saved model holding the gensim settings that are not hyperparameters."""

_KEPT = (
    "min_count",
    "max_vocab_size",
    "max_final_vocab",
    "sorted_vocab",
    "workers",
    "seed",
    "batch_words",
    "comment",
)
"""Settings saved besides the spec (the spec holds the hyperparameters)."""


class GensimPickleError(WeightsError):
    """`Word2Vec.load` (or `FastText.load`) of a model gensim pickled with its ``save``: zoo never
    unpickles (unpickling runs code), so gensim's own model files are refused, named as such."""


def _refuse_pickle(path: str | os.PathLike, cls: type) -> None:
    """`GensimPickleError` if the file at `path` is a Python pickle (gensim's ``.model`` files)."""
    with open_input(path, "model file") as handle:  # missing, a FIFO, a device: a DataError saying which
        head = handle.read(2)
    if len(head) == 2 and head[0] == 0x80 and 2 <= head[1] <= 5:
        export = (
            "gensim.models.fasttext.save_facebook_model(model, 'model.bin') and load it with "
            "zoo.vectors.load_facebook_model"
            if cls.__name__ == "FastText"
            else "model.wv.save_word2vec_format('vectors.bin', binary=True) and read it with "
            "zoo.vectors.KeyedVectors.load_word2vec_format"
        )
        raise GensimPickleError(
            f"{path} is a Python pickle (a model saved by gensim's {cls.__name__}.save), which zoo never loads: "
            f"unpickling runs code. In gensim, write it with {export}; {cls.__name__}.load reads the files "
            f"zoo's {cls.__name__}.save writes"
        )


class NoNegativeSampling(DataError, RuntimeError):
    """`Word2Vec.predict_output_word` on a model without negative sampling (gensim's RuntimeError)."""


class _class_only:
    """A class method that, looked up on an instance, raises `AttributeError` (as gensim's `load`:
    ``model.load(path)`` would not load into `model`)."""

    def __init__(self, function: Any) -> None:
        self.function = function
        functools.update_wrapper(self, function)

    def __get__(self, instance: Any, owner: type) -> Any:
        if instance is not None:
            name = f"{owner.__name__}.{self.function.__name__}"
            raise AttributeError(f"{name} is a class method that returns a new model: call {name}(path)")
        return self.function.__get__(owner, owner)


def output_layer_bytes(words: int, dim: int, hs: int, negative: int) -> dict[str, int]:
    """gensim's `estimate_memory` entries of the output layer: ``syn1`` with hs, ``syn1neg`` with negative."""
    report = {}
    if hs:
        report["syn1"] = words * dim * 4
    if negative:
        report["syn1neg"] = words * dim * 4
    return report


class Word2Vec:
    """Skip-gram or CBOW with negative sampling, trained as gensim's ``Word2Vec`` is called.

    **Arguments** (gensim 4's names and defaults): `sentences` (token lists, a
    restartable iterable) or `corpus_file` (a text file, one sentence a line, words
    split on whitespace; also a folder or a glob pattern, their files in name order);
    given either, the vocabulary is built and the model trained at once. `vector_size`,
    `window` (maximal; each word draws 1..window),
    `negative`, `ns_exponent`, `sample`, `alpha` -> `min_alpha` (linear decay),
    `epochs`, `hs` (1: hierarchical softmax; with ``negative=0`` alone), `cbow_mean` (CBOW:
    1 the mean of the context vectors, 0 their sum), `shrink_windows` (False: every word
    gets the whole window): the model's hyperparameters (`GENSIM_NAMES`). `sg`: 1 skip-gram
    (``word2vec-skipgram``), 0 CBOW (``word2vec-cbow``).
    `min_count`, `max_vocab_size`, `max_final_vocab`: the vocabulary, by gensim's
    rules. `workers`: CPU threads (more than one races as in gensim, and a run repeats
    only statistically). `seed`: initial vectors and sampling. `batch_words`: words
    per job. `callbacks`: `CallbackAny2Vec` objects for the training this call runs.
    `compute_loss`, `comment`: accepted (zoo always computes the loss).

    `trim_rule`: ``rule(word, count, min_count)`` answering `RULE_KEEP`, `RULE_DISCARD` or
    `RULE_DEFAULT` (``from zoo.vectors import RULE_KEEP``, gensim.utils' constants).
    `sorted_vocab`: 1 most frequent first (ties: the later word first, as gensim), 0 in
    order of first appearance.

    Refused with `InvalidParameterError` unless left at gensim's default: `null_word`,
    `hashfxn`; ``hs=0, negative=0`` (nothing to train).

    **Attributes:** `wv` (`zoo.vectors.KeyedVectors`), `syn1neg` (the negative-sampling
    output vectors), `syn1` (hierarchical softmax's node vectors), `corpus_count`,
    `corpus_total_words`, `history` (one record per epoch trained: ``epoch``, ``loss``,
    ``words_per_s``, ``alpha``), `zoo_model` (the zoo model; None before `build_vocab`), and
    every argument above.
    """

    _architectures: ClassVar[tuple[str, str]] = ("word2vec-cbow", "word2vec-skipgram")
    """The registry names for ``sg=0`` and ``sg=1``."""
    _LOCKS: ClassVar[tuple[str, ...]] = ("vectors_lockf",)
    """gensim's per-row learning-rate factors on ``wv`` (all 1: every row trains)."""

    @property
    def _keyed(self) -> KeyedVectors | None:
        """The `wv` built from the model (None: built again when next asked for)."""
        return self.__dict__.get("_keyed_vectors")

    @_keyed.setter
    def _keyed(self, keyed: KeyedVectors | None) -> None:
        # the lock factors a caller set on the old wv outlive it, as gensim's wv keeps them
        old = self.__dict__.get("_keyed_vectors")
        if old is not None and old is not keyed:
            locks = self.__dict__.setdefault("_locks", {})
            locks.update({name: getattr(old, name) for name in self._LOCKS if hasattr(old, name)})
        self.__dict__["_keyed_vectors"] = keyed

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
        refuse("null_word", null_word, 0, "zoo adds no padding word")
        refuse("hashfxn", hashfxn, hash, "zoo draws the initial vectors from seed, not from a hash of each word")
        self._check_sg(sg)
        for option, value in (("hs", hs), ("cbow_mean", cbow_mean), ("shrink_windows", shrink_windows)):
            if value not in (0, 1):  # True and False included
                raise InvalidParameterError(f"{option} must be 0 or 1 (or a bool), got {value!r}")
        if not hs and negative == 0:
            raise InvalidParameterError(
                "hs=0 with negative=0 trains nothing: use hierarchical softmax (hs=1) or negative sampling "
                "(negative > 0)"
            )
        self.sg = sg
        self.hs, self.cbow_mean, self.shrink_windows = int(hs), int(cbow_mean), bool(shrink_windows)
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
        self.sorted_vocab, self.effective_min_count = sorted_vocab, min_count
        self.null_word = null_word  # 0: refused otherwise
        self.seed, self.workers, self.batch_words = seed, workers, batch_words
        self.compute_loss, self.comment = compute_loss, comment
        self.corpus_count = self.corpus_total_words = 0
        self.history: list[dict[str, float]] = []
        self.raw_vocab: Counter[str] | None = None
        self._model: Any = None
        self._keyed = None  # the property: wv built again when next asked for
        self._current: Any = None  # during an epoch-end callback: () -> the model trained so far
        self._latest_loss = 0.0
        self._updates = 0
        self.min_alpha_yet_reached = float(self.alpha)  # gensim's: the learning rate where training last ended
        if sentences is not None or corpus_file is not None:
            self.build_vocab(sentences, corpus_file=corpus_file, trim_rule=trim_rule)
            self.train(
                sentences,
                corpus_file=corpus_file,
                total_examples=self.corpus_count,
                total_words=self.corpus_total_words,
                epochs=self.epochs,
                callbacks=callbacks,
            )
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
        """The zoo hyperparameters the gensim attributes set (``hs`` as the registry's bool)."""
        values = {zoo: getattr(self, gensim) for gensim, zoo in GENSIM_NAMES.items() if self._sets(gensim)}
        values["hs"] = bool(values["hs"])
        return values

    def _sets(self, gensim: str) -> bool:
        """Whether the gensim attribute `gensim` sets a hyperparameter of this model's architecture."""
        return hasattr(self, gensim) and (gensim != "cbow_mean" or self.sg == 0)

    def _check_hyperparameters(self) -> None:
        """Each hyperparameter against its registry domain, named as gensim names it."""
        for gensim, param in GENSIM_NAMES.items():
            if self._sets(gensim) and gensim != "hs":
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
        """The word vectors as `zoo.vectors.KeyedVectors` (FastText: any word gets a vector), with
        gensim's per-word attributes ``count`` and ``sample_int`` (`KeyedVectors.expandos`), and
        with ``hs=1`` each word's Huffman ``code`` (uint8) and ``point`` (its inner nodes, the rows of
        `syn1`; uint32), root first as gensim keeps them."""
        if self._model is None:
            if self._keyed is not None:
                return self._keyed
            raise DataError("the model has no vocabulary yet: call build_vocab(sentences) first")
        if self._keyed is None:
            keyed = KeyedVectors.from_model(self.zoo_model)
            keyed.expandos["sample_int"] = sample_ints(keyed.counts, self.sample)
            nodes = getattr(self.zoo_model, "tree_nodes", None)
            if nodes is not None:
                keyed.expandos["code"], keyed.expandos["point"] = gensim_paths(
                    np.asarray(nodes), np.asarray(self.zoo_model.tree_codes)
                )
            locks = self.__dict__.setdefault("_locks", {})
            for name in self._LOCKS:  # gensim's default, ones(1): every row trains
                setattr(keyed, name, locks.setdefault(name, np.ones(1, dtype=np.float32)))
            self._keyed, self._built_vectors = keyed, keyed.vectors
        return self._keyed

    @wv.setter
    def wv(self, keyed: KeyedVectors) -> None:
        """``model.wv = kv``: vectors with the model's words in its order (and its dimension) become
        its input vectors, and training goes on from them; other vectors replace the model, which
        then only answers queries (it has no output layer to train: `train` raises `DataError`)."""
        if not isinstance(keyed, KeyedVectors):
            raise DataError(f"model.wv takes a zoo.vectors.KeyedVectors, got {type(keyed).__name__}")
        if keyed is self._keyed:
            return
        model = self._model
        words = None if model is None else model.vocabs["words"].tokens
        if words is not None and tuple(keyed.index_to_key) == words and keyed.vector_size == self.vector_size:
            self._model = self._with_word_vectors(model, np.asarray(keyed.vectors, np.float32))
        else:
            self._model = None
        self._keyed = keyed

    def _with_word_vectors(self, model: Any, vectors: np.ndarray) -> Any:
        """`model` with `vectors` ``[V, D]`` as its words' input rows."""
        return eqx.tree_at(lambda m: m.input, model, jnp.asarray(vectors, dtype=model.input.dtype))

    @property
    def syn1neg(self) -> Any:
        """The negative-sampling output vectors ``[V, dim]``, word2vec.c's and gensim's ``syn1neg``
        (None with ``negative=0``)."""
        output = self.zoo_model.output
        return None if output is None else np.asarray(output)

    @property
    def syn1(self) -> Any:
        """Hierarchical softmax's node vectors ``[V, dim]`` (row i: the tree's inner node i),
        word2vec.c's and gensim's ``syn1`` (None with ``hs=0``)."""
        output = self.zoo_model.tree_output
        return None if output is None else np.asarray(output)

    def score(
        self,
        sentences: Iterable[Sequence[str]],
        total_sentences: int = int(1e6),
        chunksize: int = 100,
        queue_factor: int = 2,
        report_delay: float = 1,
    ) -> np.ndarray:
        """gensim's ``score``: each sentence's log probability under the hierarchical softmax model
        (Taddy 2015), float32 ``[n]`` for the first ``n <= total_sentences`` sentences. Words
        outside the vocabulary are dropped first; skip-gram sums ``log p(word | context word)``
        over every pair within `window`, CBOW ``log p(word | its window's summed or mean vectors)``.
        `chunksize`, `queue_factor` and `report_delay` paced gensim's threads."""
        if not self.hs or self._model is None:
            raise RuntimeError(
                "score is implemented only for hierarchical softmax, as in gensim: train with hs=1 "
                "(and negative=0) first"
            )
        keyed = self.wv
        vectors = np.asarray(keyed.vectors, dtype=np.float64)
        rows = np.asarray(self.zoo_model.tree_output, dtype=np.float64)
        nodes = np.asarray(self.zoo_model.tree_nodes)
        signs = np.where(np.asarray(self.zoo_model.tree_codes) == 1, 1.0, -1.0) * (nodes >= 0)

        def log_prob(word: int, hidden: np.ndarray) -> float:
            # sum over the word's path of log sigmoid(+-row . hidden); padded slots weigh nothing
            dots = rows[np.maximum(nodes[word], 0)] @ hidden
            return float(-np.sum(np.logaddexp(0.0, -signs[word] * dots) * (nodes[word] >= 0)))

        scores = []
        for sentence in sentences:
            if len(scores) >= total_sentences:
                break
            words = [keyed.key_to_index[w] for w in sentence if w in keyed.key_to_index]
            total = 0.0
            for pos, word in enumerate(words):
                context = [
                    w
                    for p, w in enumerate(
                        words[max(0, pos - self.window) : pos + self.window + 1], max(0, pos - self.window)
                    )
                    if p != pos
                ]
                if self.sg:
                    total += sum(log_prob(word, vectors[c]) for c in context)
                else:
                    hidden = vectors[context].sum(axis=0) if context else np.zeros(vectors.shape[1])
                    if context and self.cbow_mean:
                        hidden /= len(context)
                    total += log_prob(word, hidden)
            scores.append(total)
        return np.asarray(scores, dtype=np.float32)

    def get_latest_training_loss(self) -> float:
        """The loss summed over every (word, context) pair the latest `train` call trained, as
        gensim's (negative sampling's and hierarchical softmax's terms; 0.0 before training). Zoo
        computes it whatever `compute_loss` says; each epoch's mean per pair is in `history`."""
        return self._latest_loss

    def predict_output_word(self, context_words_list: Sequence[str], topn: int = 10) -> list[tuple[str, Any]] | None:
        """The `topn` words most probable at the centre of `context_words_list`: the softmax over
        the output vectors of the context's input vectors summed (averaged with ``cbow_mean``),
        as gensim computes it. Words outside the vocabulary are ignored; None (with a warning)
        when none is left. Returns ``[(word, probability)]``, most probable first."""
        if self._model is None:
            raise NoNegativeSampling(
                "predict_output_word needs the model's output layer: vectors set with model.wv = kv have none "
                "(as in gensim); build_vocab and train, or load a saved model"
            )
        if self.syn1neg is None:
            raise NoNegativeSampling(
                "predict_output_word scores with the negative-sampling output vectors, which a model "
                "trained with negative=0 has not (as in gensim): train with negative > 0"
            )
        keyed = self.wv
        rows = [keyed.get_index(w) for w in context_words_list if keyed.has_index_for(w)]
        if not rows:
            warnings.warn("all the context words are outside the model's vocabulary", stacklevel=2)
            return None
        hidden = np.sum(keyed.vectors[rows], axis=0, dtype=np.float32)
        if self.cbow_mean:
            hidden /= len(rows)
        scores = self.syn1neg @ hidden
        probabilities = np.exp(scores - scores.max())
        probabilities /= probabilities.sum()
        best = np.argsort(-probabilities, kind="stable")[: max(topn, 0)]
        return [(keyed.index_to_key[i], probabilities[i]) for i in best]

    @property
    def cum_table(self) -> np.ndarray:
        """``[V]`` uint32 gensim's noise table: the running sum of ``count ** ns_exponent`` over the
        words, scaled to end at ``2**31 - 1`` (`make_cum_table`)."""
        return self.make_cum_table()

    def make_cum_table(self, domain: int = 2**31 - 1) -> np.ndarray:
        """``[V]`` uint32 the cumulative noise distribution gensim draws negatives from, scaled to `domain`."""
        counts = np.asarray(self.wv.counts, dtype=np.float64) ** self.ns_exponent
        if not counts.size:
            return np.zeros(0, dtype=np.uint32)
        return np.round(np.cumsum(counts) / counts.sum() * domain).astype(np.uint32)

    def reset_from(self, other_model: Word2Vec) -> None:
        """Take `other_model`'s vocabulary (words, counts) and corpus counts, with fresh vectors
        drawn from this model's `seed` and settings (gensim: to train several models on one corpus)."""
        if other_model._model is None:
            raise DataError("reset_from needs a model with a vocabulary: build the other model's vocabulary first")
        vocab = other_model._model.vocabs["words"]
        self._model = zoo.build(self.name, vocab=vocab, key=jax.random.key(self.seed), **self._hyperparameters())
        self._keyed, self._updates, self.history = None, 0, []
        self.corpus_count, self.corpus_total_words = other_model.corpus_count, other_model.corpus_total_words

    def estimate_memory(self, vocab_size: int | None = None, report: dict[str, int] | None = None) -> dict[str, int]:
        """gensim's estimate of the bytes the model takes: ``vocab`` (500 a word, 700 with hs), ``vectors``,
        ``syn1`` (with ``hs``) and ``syn1neg`` (with ``negative``; ``V x D`` float32 each) and their
        ``total``."""
        words = vocab_size or (len(self.wv) if self._model is not None else 0)
        report = dict(report or {})
        report["vocab"] = words * (700 if self.hs else 500)  # gensim counts a word's code and path
        report["vectors"] = words * self.vector_size * 4
        report.update(output_layer_bytes(words, self.vector_size, self.hs, self.negative))
        report["total"] = sum(v for k, v in report.items() if k != "total")
        return report

    # -- vocabulary ---------------------------------------------------------------------------

    def scan_vocab(
        self,
        corpus_iterable: Iterable[Sequence[str]] | None = None,
        corpus_file: str | os.PathLike | None = None,
        progress_per: int = 10000,
        workers: int | None = None,
        trim_rule: Any = None,
    ) -> tuple[int, int]:
        """Count the corpus's words into `raw_vocab` (word -> count, in order of first appearance;
        `max_vocab_size` and `trim_rule` prune it as it grows, as gensim's scan does). Returns
        ``(total_words, corpus_count)`` (`build_vocab` keeps them as `corpus_total_words` and
        `corpus_count`)."""
        corpus, tokenizer = check_corpus(corpus_iterable, corpus_file, "scan_vocab")
        sentences = iter_sentences(corpus, tokenizer) if tokenizer is not None else corpus
        self.raw_vocab, sentences_read, words_read = count_words(sentences, self.max_vocab_size, trim_rule)
        return words_read, sentences_read

    def prepare_vocab(
        self,
        update: bool = False,
        keep_raw_vocab: bool = False,
        trim_rule: Any = None,
        min_count: int | None = None,
        sample: float | None = None,
        dry_run: bool = False,
    ) -> dict[str, int]:
        """Keep the words of `raw_vocab` gensim keeps (`min_count`, raised by `max_final_vocab`;
        `trim_rule`), sorted as gensim sorts them with `sorted_vocab`, and build the model on
        them (fresh vectors from `seed`), or with `update` append the new ones to the model's.
        `min_count` and `sample` given here become the model's. `dry_run` changes nothing.

        **Returns:** gensim's report: ``drop_unique`` (words dropped), ``retain_total`` (their
        occurrences kept), ``downsample_unique``, ``downsample_total`` (occurrences expected
        after subsampling) and ``num_retained_words``.
        """
        if self.raw_vocab is None:
            raise DataError("prepare_vocab needs counted words: call scan_vocab(sentences) or build_vocab first")
        min_count = min_count or self.min_count
        sample = self.sample if sample is None else sample
        least = effective_min_count(self.raw_vocab, min_count, self.max_final_vocab)
        if not dry_run:
            self.effective_min_count = least
        kept = [w for w, c in self.raw_vocab.items() if keep_vocab_item(w, c, least, trim_rule)]
        if update and self._model is not None:
            old = self._model.vocabs["words"].index
            kept = [w for w in kept if w not in old]
        counts = np.array([self.raw_vocab[w] for w in kept], dtype=np.int64)
        probabilities = sample_ints(counts, sample).astype(np.float64) / (2**32 - 1)
        report = {
            "drop_unique": len(self.raw_vocab) - len(kept),
            "retain_total": int(counts.sum()),
            "downsample_unique": int(np.count_nonzero(probabilities < 1.0)),
            "downsample_total": int((probabilities * counts).sum()),
            "num_retained_words": len(kept),
        }
        if dry_run:
            return report
        if not kept and not update:
            # gensim builds an empty vocabulary and lets train() refuse it; code written for it expects that
            most = max(self.raw_vocab.values(), default=0)
            logger.warning(
                "no word is kept: none occurs min_count=%d times (the most frequent occurs %d times) or trim_rule "
                "dropped them; lower min_count or use a larger corpus",
                least,
                most,
            )
            self.min_count, self.sample = min_count, sample
            self._model, self._keyed = None, None
            return report
        self.min_count, self.sample = min_count, sample
        self._check_hyperparameters()
        if update:
            self._grow(kept)
        else:
            if self.sorted_vocab:
                order = gensim_order(counts)
                kept, counts = [kept[i] for i in order], counts[order]
            vocab = Vocab(kept, counts)
            self._model = zoo.build(self.name, vocab=vocab, key=jax.random.key(self.seed), **self._hyperparameters())
            self._keyed, self._updates, self.history = None, 0, []
            logger.info(
                "%s: %d words kept of %d distinct (min_count %d)", self.name, len(vocab), len(self.raw_vocab), least
            )
        if not keep_raw_vocab:
            self.raw_vocab = None
        return report

    def build_vocab(
        self,
        corpus_iterable: Iterable[Sequence[str]] | None = None,
        corpus_file: str | os.PathLike | None = None,
        update: bool = False,
        progress_per: int = 10000,
        keep_raw_vocab: bool = False,
        trim_rule: Any = None,
        **kwargs: Any,
    ) -> None:
        """Count the words of the corpus and keep the vocabulary gensim would keep (`scan_vocab`,
        then `prepare_vocab`, which takes `kwargs`: ``min_count``, ``sample``, ``dry_run``).

        Without `update`, a new model is built (fresh vectors drawn from `seed`). With
        ``update=True`` the vocabulary grows: words the new corpus keeps (by `min_count`,
        `max_final_vocab` and `trim_rule`) that the model lacks are appended in order of first
        appearance, every known word's count grows by its new count, every trained row is kept
        exactly, and the new words' rows are drawn as the model draws rows (their output rows
        start at zero). `trim_rule` (``rule(word, count, min_count)`` answering `RULE_KEEP`,
        `RULE_DISCARD` or `RULE_DEFAULT`) is not kept with the model, as in gensim.
        `progress_per` only paced gensim's log.
        """
        self.corpus_total_words, self.corpus_count = self.scan_vocab(
            corpus_iterable, corpus_file, progress_per=progress_per, trim_rule=trim_rule
        )
        self.prepare_vocab(update=update, keep_raw_vocab=keep_raw_vocab, trim_rule=trim_rule, **kwargs)

    def build_vocab_from_freq(
        self,
        word_freq: Mapping[str, int],
        keep_raw_vocab: bool = False,
        corpus_count: int | None = None,
        trim_rule: Any = None,
        update: bool = False,
    ) -> None:
        """The vocabulary of a ``{word: count}`` mapping instead of a corpus (its order stands for
        first appearance); `corpus_count` is the number of sentences, for the training schedule."""
        bad = next(((w, c) for w, c in word_freq.items() if not isinstance(w, str) or int(c) < 0), None)
        if bad is not None:
            raise DataError(f"word_freq maps words (str) to counts >= 0; got {bad!r}")
        self.raw_vocab = Counter({w: int(c) for w, c in word_freq.items()})
        self.corpus_count = corpus_count or 0  # corpus_total_words stays as it was, as in gensim
        self.prepare_vocab(update=update, keep_raw_vocab=keep_raw_vocab, trim_rule=trim_rule)

    def _grow(self, new_words: list[str]) -> None:
        """The vocabulary update of ``build_vocab(update=True)``: `new_words` appended, every count
        grown by its count in `raw_vocab` (the latest scan's)."""
        if self._model is None:
            raise DataError(
                "build_vocab(update=True) needs a model with a vocabulary: build one first with "
                "build_vocab(sentences), or load a trained model"
            )
        counts = self.raw_vocab
        old = self._model.vocabs["words"]
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
        """Train for `epochs` passes over the corpus, the learning rate
        falling from `start_alpha` to `end_alpha` (which, as in gensim, become the model's
        `alpha` and `min_alpha`; default: those). As in gensim, `epochs` and one of
        `total_examples` / `total_words` must be given (a `ValueError` otherwise); zoo
        counts the corpus itself and warns when they differ from it. `callbacks`
        (`CallbackAny2Vec`) are called for this call's training. `queue_factor` and
        `report_delay` paced gensim's threads and log.

        ``wv.vectors_lockf`` (gensim's lock factors, ``ones(1)`` by default): each word's input
        row moves by its factor times its update (0 leaves it as it is; an array of one factor
        scales every row, as gensim indexes ``i % len``); the output layer always trains.

        **Returns:** gensim's ``(trained_word_count, raw_word_count)`` over all epochs: the
        words trained (in the vocabulary and kept by subsampling, gensim's effective words) and
        every word of the corpus (out-of-vocabulary ones included).
        """
        refuse("word_count", word_count, 0, "training always starts from the corpus's first word")
        if self._model is None:
            raise NoVocabularyError(
                "you must first build the vocabulary before training: call build_vocab(sentences) (vectors set "
                "with model.wv = kv that are not the model's own words have no output layer to train)"
            )
        corpus, tokenizer = check_corpus(corpus_iterable, corpus_file, "train")
        self._adopt_wv_edits()
        lock = self._row_lock()
        if total_examples is None and total_words is None:
            raise InvalidParameterError(
                "train() needs total_examples or total_words, as gensim's does (for the learning-rate schedule): "
                "after build_vocab on the same corpus, pass total_examples=model.corpus_count"
            )
        if epochs is None or epochs <= 0:
            raise InvalidParameterError(
                f"train() needs an explicit epochs count > 0, as gensim's does (got {epochs!r}): "
                "the usual value is epochs=model.epochs"
            )
        callbacks = tuple(callbacks)
        self.alpha = start_alpha or self.alpha
        self.min_alpha = end_alpha if end_alpha is not None else self.min_alpha
        self.epochs = epochs
        self.compute_loss = compute_loss or self.compute_loss
        self._check_hyperparameters()
        self._warn_as_gensim()
        raw_words = self._check_totals(corpus, tokenizer, total_examples, total_words)

        def begin(epoch: int) -> None:
            for callback in callbacks:
                call_hook(callback, "on_epoch_begin", self)

        def end(record: dict[str, float], current: Any) -> None:
            self._latest_loss += float(record["loss"]) * record["pairs"]
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

        def batch(hook: str) -> Any:
            wanted = [c for c in callbacks if hasattr(c, hook)]
            if not wanted:
                return None
            return lambda position: [call_hook(c, hook, self) for c in wanted]

        self._latest_loss = 0.0  # gensim's running_training_loss: summed over this call
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
            on_job_begin=batch("on_batch_begin"),
            on_job=batch("on_batch_end"),
            lock=lock,
        )
        self._keyed = None
        self.min_alpha_yet_reached = float(self.min_alpha)
        for callback in callbacks:
            call_hook(callback, "on_train_end", self)
        return stats.kept_words, raw_words * self.epochs

    def _adopt_wv_edits(self) -> None:
        """Vectors set on `wv` since it was built (``wv.intersect_word2vec_format``) become the
        model's input rows, so training goes on from them, as gensim's shared ``wv.vectors`` do."""
        keyed = self._keyed
        if keyed is None or keyed.vectors is self.__dict__.get("_built_vectors"):
            return
        model = self._with_word_vectors(self._model, np.asarray(keyed.vectors, np.float32))
        if model is not None:
            self._model, self._built_vectors = model, keyed.vectors

    def _lock_factors(self, name: str) -> np.ndarray | None:
        """``wv.<name>`` as float32 ``[n]`` (n >= 1; row ``i`` takes factor ``i % n``, as gensim
        indexes it), or None when every factor is 1."""
        keyed = self._keyed
        lock = getattr(keyed, name, None) if keyed is not None else None
        if lock is None:
            lock = self.__dict__.get("_locks", {}).get(name)
        if lock is None:
            return None
        lock = np.asarray(lock, dtype=np.float32)
        if lock.ndim != 1 or lock.size == 0:
            raise InvalidParameterError(
                f"wv.{name} must be a 1-D array of at least one factor (one per word, or one for all), "
                f"got shape {lock.shape}"
            )
        return None if np.all(lock == 1) else lock

    @staticmethod
    def _spread(lock: np.ndarray, rows: int) -> np.ndarray:
        """`lock` ``[n]`` as one factor per row ``[rows]``: row ``i`` takes ``lock[i % n]`` (gensim's
        indexing: one factor scales every row, a shorter array repeats)."""
        return lock[np.arange(rows) % lock.size]

    def _row_lock(self) -> np.ndarray | None:
        """The factor of each input row's updates from ``wv.vectors_lockf`` (None: all 1)."""
        lock = self._lock_factors("vectors_lockf")
        return None if lock is None else self._spread(lock, self._model.input.shape[0])

    def _warn_as_gensim(self) -> None:
        """gensim's logged warnings before training (code written for gensim checks their text)."""
        if self.hs and self.negative:
            logger.warning(
                "Both hierarchical softmax and negative sampling are activated. This is probably a mistake. "
                "You should set either 'hs=0' or 'negative=0' to disable one of them. "
            )
        if self.alpha > getattr(self, "min_alpha_yet_reached", self.alpha):
            logger.warning("Effective 'alpha' higher than previous training cycles")

    def _check_totals(self, corpus: Any, tokenizer: Any, total_examples: int | None, total_words: int | None) -> int:
        """Warn, as gensim does, when the counts given are not the corpus's; return its words
        (every token, in the vocabulary or not)."""
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
        return words

    # -- files --------------------------------------------------------------------------------

    def save(
        self,
        fname: str | os.PathLike,
        separately: Any = None,
        sep_limit: int = 10 * 1024**2,
        ignore: Any = frozenset(),
        pickle_protocol: int = 4,
    ) -> Path:
        """Write the model to one zoo safetensors file (``zoo.load`` and ``KeyedVectors.load`` read it
        too); `load` goes on from it, training or updating its vocabulary. The file is data, never a
        pickle: gensim's pickling options (`separately`, `sep_limit`, `ignore`, `pickle_protocol`)
        are accepted and have nothing to do."""
        path = fname
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

    @_class_only
    def load(cls, path: str | os.PathLike, mmap: str | None = None) -> Word2Vec:
        """A model saved by `save`, or any zoo file of this family (``zoo train word2vec-skipgram``'s:
        the settings not in its spec then take gensim's defaults). `mmap` (gensim's memory-mapping)
        is accepted; the arrays are read into memory. A file of word vectors alone raises
        `NotAModelError` (a `WeightsError` and an `AttributeError`, as gensim's); a model gensim
        pickled, `GensimPickleError` (zoo never unpickles)."""
        _refuse_pickle(path, cls)
        try:
            with safe_open(str(path), "np") as handle:
                kind = (handle.metadata() or {}).get("zoo.kind", "model")
        except Exception:  # not safetensors at all: zoo.load names what is wrong
            kind = "model"
        if kind != "model":
            raise NotAModelError(
                f"{path} holds {kind!r}, not a model: read word vectors with zoo.vectors.KeyedVectors.load"
            )
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
        arguments["hs"] = int(arguments.get("hs", False))
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
