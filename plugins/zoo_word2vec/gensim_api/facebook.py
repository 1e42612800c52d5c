"""gensim's ``load_facebook_model`` and ``save_facebook_model``: whole fastText models in and out.

A fastText ``.bin`` (unsupervised: ``fasttext skipgram``) becomes a `FastText` that trains on:
its words and counts, its word and n-gram bucket rows, its output layer and its training
settings (dim, ws, epoch, neg, minCount, t, minn, maxn, bucket). `save_facebook_model` writes a
`FastText` back as a ``.bin`` that the fastText package loads, with every word's vector (in the
vocabulary or not) the one zoo computes.

One word differs, as in gensim: fastText's end of line ``</s>`` has no n-grams in fastText, so
its vector there is its own row; zoo (and gensim) compose it from its n-grams like any word
(the row `save_facebook_model` writes for it is zoo's whole vector, so fastText reads that).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp

import zoo
from zoo.plugin_api import DataError, Vocab
from zoo_word2vec.fasttext_files.bin import read_args, read_fasttext_bin, write_fasttext_bin
from zoo_word2vec.fasttext_files.model import SUPERVISED, fasttext_from_zoo
from zoo_word2vec.gensim_api.fasttext import FastText

logger = logging.getLogger(__name__)

__all__ = ["SupervisedModelError", "TwoLossesError", "load_facebook_model", "save_facebook_model"]


class SupervisedModelError(DataError, NotImplementedError):
    """`load_facebook_model` of a fastText classifier (``fasttext supervised``): gensim's
    `NotImplementedError`; zoo reads classifiers with ``zoo.load``."""


class TwoLossesError(DataError):
    """`save_facebook_model` of a model trained with hierarchical softmax and negative sampling
    together: a fastText ``.bin`` holds one loss and one output layer."""


def _header_model(path: str | os.PathLike) -> int | None:
    """The model kind of the ``.bin`` at `path` from its header; None for a file whose header
    `read_args` does not take (fastText's oldest files have no signature: the whole read tells)."""
    try:
        return read_args(path).model
    except DataError:
        return None


def load_facebook_model(path: str | os.PathLike, encoding: str = "utf-8") -> FastText:
    """The fastText model in the ``.bin`` at `path` as a `FastText` whose `train` goes on from it.

    The settings come from the file (gensim's mapping: ``vector_size=dim``, ``window=ws``,
    ``epochs=epoch``, ``negative=neg`` (0 for an hs file: its output rows are the nodes of the
    tree over the counts, zoo's `tree_output`), ``min_count=minCount``, ``sample=t``, ``min_n=minn``,
    ``max_n=maxn``, ``bucket``, ``sg`` from the model, ``hs`` from the loss); the learning rate,
    which fastText does not store, is gensim's default. A word that is not valid `encoding` is
    read with backslash escapes and logged, as gensim reads it. An option zoo does not train (a
    loss or model it lacks) is refused naming it; a classifier (``fasttext supervised``) is
    refused too (`SupervisedModelError`, also gensim's `NotImplementedError`): read it with ``zoo.load``.
    """
    if _header_model(path) == SUPERVISED:  # before the words, which a classifier may spell in any encoding
        raise SupervisedModelError(
            f"{path} is a fastText classifier (supervised), not word vectors: gensim does not load it either; "
            "read it with zoo.load(path)"
        )
    # as gensim: a word that is not valid `encoding` (fastText cuts words inside UTF-8 characters)
    # is read with backslash escapes, and logged
    stored = read_fasttext_bin(path, output=True, encoding=encoding, unicode_errors="backslashreplace")
    escaped = [w for w, b in zip(stored.words, stored.spellings, strict=False) if w.encode(encoding, "replace") != b]
    if escaped:
        logger.error(
            "%s: %d words are not valid %s and are read with backslash escapes (the first: %r)",
            path,
            len(escaped),
            encoding,
            escaped[0],
        )
    args = stored.args
    if stored.output is None or stored.output.shape[0] != stored.nwords:
        raise DataError(f"{path}: the output layer has {stored.output_rows} rows, expected one per word")
    model = FastText(
        vector_size=args.dim,
        window=args.ws,
        epochs=args.epoch,
        negative=0 if args.loss == 1 else args.neg,  # a .bin holds one loss: its output layer is hs's or ns's
        hs=int(args.loss == 1),
        sg=int(args.model == 2),
        bucket=args.bucket,
        min_count=args.min_count,
        sample=args.t,
        min_n=args.minn,
        max_n=args.maxn,
    )
    vocab = Vocab(stored.words, stored.counts)
    fresh = zoo.build(model.name, vocab=vocab, key=jax.random.key(model.seed), **model._hyperparameters())
    if tuple(fresh.input.shape) != stored.input.shape:
        raise DataError(f"{path}: an input matrix of shape {stored.input.shape}, expected {tuple(fresh.input.shape)}")
    # hs: the output rows are the nodes of the tree fastText builds over the counts, as zoo builds it
    layer = (lambda m: (m.input, m.tree_output)) if args.loss == 1 else (lambda m: (m.input, m.output))
    model._model = eqx.tree_at(layer, fresh, (jnp.asarray(stored.input), jnp.asarray(stored.output)))
    model.corpus_total_words = int(stored.ntokens or stored.counts.sum())
    return model


def save_facebook_model(
    model: FastText,
    path: str | os.PathLike,
    encoding: str = "utf-8",
    lr_update_rate: int = 100,
    word_ngrams: int = 1,
) -> Path:
    """Write `model` (a trained `FastText`) as a fastText ``.bin`` (version 12) that the fastText
    package loads and gensim's ``load_facebook_model`` reads; `lr_update_rate` is stored in its
    settings. Words are written in `encoding` (fastText reads UTF-8). `word_ngrams` must be 1, as
    in gensim. A model with both ``hs=1`` and ``negative > 0`` raises `TwoLossesError`: fastText
    trains one loss."""
    if not isinstance(model, FastText) or model.zoo_model is None:
        raise DataError("save_facebook_model writes a FastText model with a vocabulary (build_vocab and train first)")
    if word_ngrams != 1:
        raise DataError(f"word_ngrams={word_ngrams}: fastText's word vectors use single words only (word_ngrams=1)")
    if model.hs and model.negative:
        raise TwoLossesError(
            f"save_facebook_model: this model trains hierarchical softmax and negative sampling together "
            f"(hs=1, negative={model.negative}), but fastText trains one loss (-loss hs or -loss ns) and a .bin "
            "holds one output layer, so fastText could not go on training it (gensim writes the "
            "negative-sampling layer under the hs label, which fastText misreads as tree nodes). Train with "
            "hs=1, negative=0 or with hs=0 for a .bin; the word vectors of this one go out with "
            "model.wv.save_word2vec_format"
        )
    stored = fasttext_from_zoo(model.zoo_model)
    args = dataclasses.replace(
        stored.args,
        model=2 if model.sg else 1,
        loss=1 if getattr(model, "hs", 0) else 2,
        lr_update_rate=lr_update_rate,
        min_count=model.min_count,
    )
    spellings = [w.encode(encoding) for w in stored.words]
    stored = dataclasses.replace(stored, args=args, spellings=spellings, ntokens=model.corpus_total_words or None)
    return write_fasttext_bin(path, stored)
