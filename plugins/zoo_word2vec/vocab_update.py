"""Online vocabulary updates: a trained model grown to a larger vocabulary, its rows kept.

`grow_vocab(model, vocab, key=)` is gensim's ``build_vocab(sentences, update=True)``
for the word-vector family: `vocab` must start with the model's words, in their
order (new words come after them). Every trained row is kept exactly; a new
word's input row is drawn as a fresh model draws it (word2vec.c's ``U(-0.5/D,
0.5/D)``, fastText's ``U(-1/D, 1/D)``) and its output row likewise (zero
unless ``output_init`` says otherwise, as word2vec.c and gensim). With hierarchical
softmax the tree is rebuilt over the new counts, as gensim rebuilds it, and the node rows
trained so far are kept (new node rows start as a fresh model's). FastText keeps
its n-gram bucket rows too: they follow the word rows, so they move down by the
number of new words, and the new words' n-gram lists are computed from the new
vocabulary.

The new rows come from a model built with the new vocabulary (its initial
matrices are dropped once the rows are taken): growing holds the old, that
model's and the new matrices at once.
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax.numpy as jnp

import zoo
from zoo.plugin_api import DataError, Vocab
from zoo_word2vec.fasttext_model import FastText
from zoo_word2vec.model import AbstractWord2Vec

__all__ = ["grow_vocab"]


def grow_vocab(model: Any, vocab: Vocab, *, key: Any) -> Any:
    """`model` (skip-gram, CBOW or FastText) with the vocabulary `vocab` (which extends the model's);
    the old rows are kept bit for bit, the new ones drawn from `key`. Returns a new model."""
    if not isinstance(model, AbstractWord2Vec | FastText):
        raise DataError(f"grow_vocab grows skip-gram, CBOW and FastText models, not a {type(model).__name__}")
    old = model.vocabs["words"]
    size = len(old)
    if len(vocab) < size or vocab.tokens[:size] != old.tokens:
        first = next((i for i, (a, b) in enumerate(zip(old.tokens, vocab.tokens, strict=False)) if a != b), None)
        where = f"word {first} is {vocab.tokens[first]!r}, not {old.tokens[first]!r}" if first is not None else ""
        raise DataError(
            f"the new vocabulary must start with the model's {size} words in their order, then add words "
            f"({where or f'it has only {len(vocab)} words'})"
        )
    params = {k: v for k, v in model.spec.params.items() if k != "vocab_size"}
    fresh = zoo.build(model.spec.name, vocab=vocab, key=key, **params)
    if isinstance(model, FastText):
        inputs = jnp.concatenate([model.input[:size], fresh.input[size : len(vocab)], model.input[size:]])
    else:
        inputs = jnp.concatenate([model.input, fresh.input[size:]])
    matrices = lambda m: (m.input, m.output, m.tree_output)
    # the tree is rebuilt from the new counts (as gensim rebuilds it); the node rows trained so far are kept
    outputs = tuple(
        jnp.concatenate([old, new[size:]]) if old is not None else None
        for old, new in zip(matrices(model)[1:], matrices(fresh)[1:], strict=True)
    )
    return eqx.tree_at(matrices, fresh, (inputs, *outputs), is_leaf=lambda x: x is None)
