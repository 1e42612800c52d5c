"""Word vectors: `KeyedVectors` (similarity, analogies, evaluation) and word2vec files."""

from zoo.vectors.formats import detect_binary, read_word2vec, write_word2vec
from zoo.vectors.keyed import KeyedVectors, OOVFunction

__all__ = ["KeyedVectors", "OOVFunction", "detect_binary", "read_word2vec", "write_word2vec"]
