"""Word vectors: `KeyedVectors` (similarity, analogies, evaluation) and the files they travel in:
word2vec text and binary, GloVe text, fastText ``.bin`` models; gensim's `Word2Vec` and `FastText`
training API (`zoo.vectors.training`)."""

from zoo.vectors.fasttext_bin import read_fasttext_bin, write_fasttext_bin
from zoo.vectors.fasttext_model import FastTextArgs, FastTextModel, fasttext_from_zoo
from zoo.vectors.formats import detect_binary, read_word2vec, write_word2vec
from zoo.vectors.keyed import KeyedVectors, OOVFunction, load_facebook_vectors
from zoo.vectors.training import CallbackAny2Vec, FastText, Word2Vec

__all__ = [
    "CallbackAny2Vec",
    "FastText",
    "FastTextArgs",
    "FastTextModel",
    "KeyedVectors",
    "OOVFunction",
    "Word2Vec",
    "detect_binary",
    "fasttext_from_zoo",
    "load_facebook_vectors",
    "read_fasttext_bin",
    "read_word2vec",
    "write_fasttext_bin",
    "write_word2vec",
]
