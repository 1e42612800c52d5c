"""Word vectors: `KeyedVectors` (similarity, analogies, evaluation) and the files they travel in.

The core reads and writes word2vec text and binary and GloVe text files (`zoo.vectors.formats`)
and zoo's own (`zoo.vectors.zoo_file`); plugins add formats, subword models and names served
from here (`zoo.vectors.extensions`): ``from zoo.vectors import Word2Vec`` imports the word-vector
family's gensim-style API, ``FastTextKeyedVectors`` its fastText vectors, and so on (``dir()``
lists what the installed plugins export).
"""

from pathlib import Path
from typing import Any

from zoo.vectors.formats import detect_binary, read_word2vec, write_word2vec
from zoo.vectors.keyed import REAL, KeyedVectors, OOVFunction, pseudorandom_weak_vector
from zoo.vectors.keyed import _load_word2vec_format as _load_word2vec_format  # gensim's, which code calls

__all__ = [
    "REAL",
    "KeyedVectors",
    "OOVFunction",
    "detect_binary",
    "pseudorandom_weak_vector",
    "read_word2vec",
    "write_word2vec",
]


def __getattr__(name: str) -> Any:
    """A name a plugin exports under ``zoo.vectors`` (its ``[exports.NAME]`` table)."""
    from zoo.vectors.extensions import exported

    if name.startswith("_") or (Path(__file__).parent / f"{name}.py").exists():  # a submodule not yet imported
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = exported(__name__, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    from zoo.vectors.extensions import exported_names

    return sorted({*globals(), *exported_names(__name__)})
