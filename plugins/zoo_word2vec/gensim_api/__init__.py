"""gensim 4's training API on zoo's word-vector family: `Word2Vec`, `FastText`, `CallbackAny2Vec`.

Users import them from `zoo.vectors` (``from zoo.vectors import Word2Vec``), which serves this
package's exports (the ``[exports.*]`` tables of registry.toml)."""

from zoo_word2vec.gensim_api.callbacks import CallbackAny2Vec
from zoo_word2vec.gensim_api.fasttext import FastText
from zoo_word2vec.gensim_api.word2vec import GENSIM_NAMES, Word2Vec

__all__ = ["GENSIM_NAMES", "CallbackAny2Vec", "FastText", "Word2Vec"]
