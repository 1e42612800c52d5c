"""`KeyedVectors`: query trained word vectors as gensim users expect, and move them between tools."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from zoo.building.files import is_safetensors
from zoo.data.inputs import check_regular
from zoo.data.vocab import Vocab
from zoo.errors import DataError, UnknownKeyError, WeightsError, close_matches
from zoo.eval.analogy import AnalogyResult, evaluate_analogies
from zoo.eval.similarity import WordPairsResult, evaluate_word_pairs, gensim_word_pairs, score_word_pairs
from zoo.vectors.formats import check_finite_vectors, check_limit, read_word2vec, write_word2vec

__all__ = ["REAL", "Key", "KeyedVectors", "OOVFunction", "Term", "pseudorandom_weak_vector"]

OOVFunction = Callable[[str], Any]
"""``oov(word) -> vector [dim]`` for a word outside the vocabulary (a subword model's, say)."""

Key = str | int
"""A word, or a row number (as in gensim)."""

Term = Key | np.ndarray | tuple[Key | np.ndarray, float]
"""A query term: a key, a raw ``[D]`` vector, or a ``(key or vector, weight)`` pair."""

REAL = np.float32
"""The vectors' float type (gensim.models.keyedvectors' name for it)."""


def pseudorandom_weak_vector(size: int, seed_string: str | None = None, hashfxn: Callable[[str], int] = hash) -> Any:
    """gensim's small random vector ``[size]`` float32, uniform in ``[-0.5, 0.5) / size``: drawn from
    ``hashfxn(seed_string)`` when `seed_string` is given (Python's `hash` of a str varies between
    processes unless PYTHONHASHSEED is set, as in gensim), else from fresh entropy."""
    seed = hashfxn(seed_string) & 0xFFFFFFFF if seed_string else None
    return ((np.random.default_rng(seed).random(size) - 0.5) / size).astype(REAL)


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


def _is_int(x: Any) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool)


def _is_key(x: Any) -> bool:
    return isinstance(x, str) or _is_int(x)


def _ensure_list(value: Any) -> list:
    """gensim's reading of `positive` / `negative`: None is no term; one key, one ``[D]``
    vector or one ``(key, float weight)`` pair is one term; a ``[n, D]`` array is n vectors."""
    if value is None:
        return []
    if _is_key(value) or (isinstance(value, np.ndarray) and value.ndim == 1):
        return [value]
    if isinstance(value, np.ndarray) and value.ndim == 2:
        return list(value)
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], float | np.floating):
        return [value]
    return list(value)


def _weighted_term(item: Any, default: float) -> tuple[Key | np.ndarray, float]:
    if _is_key(item) or isinstance(item, np.ndarray):
        return item, default
    if isinstance(item, tuple | list) and len(item) == 2:
        return item[0], float(item[1])
    raise DataError(f"a query term is a word, a row number, a vector or a (term, weight) pair; got {item!r}")


def _read_fvocab(path: str | os.PathLike, words: Sequence[str], encoding: str, unicode_errors: str) -> np.ndarray:
    """``[V]`` the counts of `words` in a ``word count`` file (word2vec.c's ``-save-vocab``); 0 if absent.
    Read as every text input is (`zoo.data.textfile`: regular files only, bounded lines, strict
    decoding); a line that is not a word and a count of at most 2^63 - 1 is a `DataError`."""
    from zoo.data.textfile import read_lines

    counts: dict[str, int] = {}
    for number, line in read_lines(path, encoding=encoding, errors=unicode_errors, what="word counts file (fvocab)"):
        fields = line.split()
        if not fields:
            continue
        count = fields[1] if len(fields) == 2 else ""
        if not (count.isascii() and count.isdigit() and int(count) < 1 << 63):
            raise DataError(
                f"{path}: line {number} should be 'word count' (a count from 0 to 2^63 - 1); got {line[:60]!r}"
            )
        counts[fields[0]] = int(count)
    return np.array([counts.get(w, 0) for w in words], dtype=np.int64)


def _removed(name: str, instead: str) -> property:
    """A gensim 3 attribute gone from gensim 4: reading it raises gensim's `AttributeError`."""

    def gone(self: Any) -> Any:
        raise AttributeError(f"the {name} attribute is gone from KeyedVectors since version 4.0.0: use {instead}")

    return property(gone)


class KeyedVectors:
    """Word vectors with lookup, similarity, analogies, evaluation and word2vec files.

    Rows are in vocabulary order (most frequent first for zoo and word2vec
    files), which is what `restrict_vocab` counts on. The `vectors` array is read-only:
    no query or evaluation modifies it, and the filling methods (`add_vectors`,
    `add_vector`, ``kv[key] = vector``, ...) replace it.

    **Arguments:**

    - `words`: the words in row order (a sequence of str, or a `zoo.data.Vocab`); or, as
      gensim's ``KeyedVectors(vector_size, count=0, dtype)``, a vector size (also
      ``vector_size=``): a table of `count` empty rows to fill.
    - `vectors`: ``[V, D]`` array-like, stored as `dtype` (float32).
    - `counts`: optional ``[V]`` corpus frequencies (``expandos["count"]``).
    - `oov`: optional ``oov(word) -> [D]`` giving vectors to words outside the
      vocabulary (a subword model, `zoo.vectors.extensions`); without it such words raise
      `KeyError`.
    """

    def __init__(
        self,
        words: Sequence[str] | Vocab | int | None = None,
        vectors: Any = None,
        *,
        counts: Sequence[int] | np.ndarray | None = None,
        oov: OOVFunction | None = None,
        vector_size: int | None = None,
        count: int = 0,
        dtype: Any = np.float32,
        mapfile_path: Any = None,
    ) -> None:
        if words is None and vector_size is not None:  # gensim's KeyedVectors(vector_size=100)
            words = vector_size
        if _is_int(words):  # gensim's KeyedVectors(vector_size, count=0, dtype=REAL): a table to fill
            count = int(vectors) if _is_int(vectors) else count
            if words < 1 or count < 0:
                raise DataError(f"KeyedVectors(vector_size, count) needs vector_size >= 1 and count >= 0; got {words}")
            words, vectors = [None] * count, np.zeros((count, int(words)))
        elif vectors is None:
            raise DataError("KeyedVectors takes words and their vectors, or a vector size (an empty table to fill)")
        dtype = np.dtype(dtype)
        if not np.issubdtype(dtype, np.floating):
            raise DataError(f"KeyedVectors holds floating-point vectors; got dtype {dtype}")
        self.index_to_key: list[Any] = list(words)
        self.key_to_index: dict[Any, int] = {w: i for i, w in enumerate(self.index_to_key) if w is not None}
        if len(self.key_to_index) != len(self.index_to_key) - self.index_to_key.count(None):
            raise DataError("KeyedVectors needs distinct words; the list repeats some")
        array = np.array(vectors, dtype=dtype)
        if array.ndim != 2 or array.shape[0] != len(self.index_to_key):
            raise DataError(f"{len(self.index_to_key)} words but vectors of shape {array.shape}")
        array.flags.writeable = False
        self.vectors = array
        self.expandos: dict[str, np.ndarray] = {}
        """gensim's per-word attributes: name -> ``[V]`` array (`get_vecattr`, `set_vecattr`); ``"count"``
        holds the corpus frequencies when they are known."""
        if counts is not None:
            self.counts = counts
        self.oov = oov
        self.next_index = self.index_to_key.index(None) if None in self.index_to_key else len(self)
        self.mapfile_path = mapfile_path
        self._norms: np.ndarray | None = None
        self._unit: np.ndarray | None = None

    @property
    def counts(self) -> np.ndarray | None:
        """``[V]`` int64 corpus frequencies (gensim's ``"count"`` attribute), or None when unknown."""
        return self.expandos.get("count")

    @counts.setter
    def counts(self, counts: Any) -> None:
        if counts is None:
            self.expandos.pop("count", None)
            return
        counts = np.asarray(counts, dtype=np.int64)
        if counts.shape != (len(self),):
            raise DataError(f"{len(self)} words but counts of shape {counts.shape}")
        self.expandos["count"] = counts

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
        return cls.with_subwords(oov)([vocab.tokens[i] for i in keep], matrix[keep], counts=counts, oov=oov)

    @classmethod
    def with_subwords(cls, oov: OOVFunction | None) -> type[KeyedVectors]:
        """The class of vectors of `cls` whose `oov` is `oov`: the subclass an installed subword model
        declares for it (`zoo.vectors.extensions.SubwordModel.keyed_class`) when it is one of `cls`'s."""
        from zoo.vectors.extensions import subword_owner

        owner = subword_owner(oov)
        chosen = owner[1].keyed_class() if owner is not None else None
        return chosen if chosen is not None and issubclass(chosen, cls) else cls

    @classmethod
    def load(
        cls,
        path: str | os.PathLike,
        mmap: str | None = None,
        *,
        binary: bool | None = None,
        limit: int | None = None,
        no_header: bool | None = None,
        encoding: str = "utf-8",
        unicode_errors: str = "strict",
        allow_nonfinite: bool = False,
    ) -> KeyedVectors:
        """From a zoo model file (``zoo.save`` of an embedder), a zoo vectors file
        (`zoo.vectors.zoo_file`, which `save` writes), a file in a format an installed plugin
        reads (a fastText ``.bin`` model, say: `zoo.vectors.extensions`), or a word2vec
        text/binary or GloVe text file (each told apart by its first bytes); or the name
        ``NAME.TAG`` of one in the model store (``zoo import``) when no file has that path.
        `mmap` (gensim's memory-mapping) is accepted; the vectors are read into memory. `encoding`
        and `unicode_errors` decode the words of word2vec and GloVe files."""
        from zoo.building.locate import locate
        from zoo.vectors.extensions import read_format, sniff

        path = locate(path)
        check_regular(path, "vectors file")  # missing, a FIFO, a device: a DataError saying which
        check_limit(limit)
        if is_safetensors(path):
            from zoo.building.weights import load
            from zoo.vectors.zoo_file import read_if_vectors

            parts = read_if_vectors(path)
            keyed = cls.with_subwords(parts["oov"])(**parts) if parts is not None else cls.from_model(load(path))
            if not allow_nonfinite:
                check_finite_vectors(keyed, path)
            return keyed if limit is None else keyed.restrict(limit)
        plugged = sniff(path)
        if plugged is not None:
            keyed = read_format(path, plugged.name, limit=limit)
            if not allow_nonfinite:
                check_finite_vectors(keyed, path)
            return keyed
        return cls.load_word2vec_format(
            path, None, binary, encoding, unicode_errors, limit=limit, no_header=no_header,
            allow_nonfinite=allow_nonfinite,
        )  # fmt: skip

    def save(self, fname: str | os.PathLike, *args: Any, **kwargs: Any) -> Path:
        """Write a zoo vectors file (safetensors: words, vectors, counts and subwords; data, never
        a pickle) that `load` reads back. gensim's pickling options (`separately`, `sep_limit`,
        `ignore`, `pickle_protocol`) are accepted and have nothing to do."""
        from zoo.vectors.zoo_file import write_vectors

        return write_vectors(self, fname)

    @classmethod
    def load_word2vec_format(
        cls,
        fname: str | os.PathLike,
        fvocab: str | os.PathLike | None = None,
        binary: bool | None = None,
        encoding: str = "utf-8",
        unicode_errors: str = "strict",
        limit: int | None = None,
        datatype: Any = np.float32,
        no_header: bool | None = None,
        allow_nonfinite: bool = False,
    ) -> KeyedVectors:
        """Read a word2vec text or binary file, or a GloVe text file, in gensim's argument order.

        `binary` None detects the format and `no_header` None tells a file without the
        ``<count> <dim>`` line (GloVe's) from the first lines. `fvocab`: word counts from a
        ``word count`` file (word2vec.c's ``-save-vocab``); a word it lacks counts 0. Without
        it, ``get_vecattr(word, "count")`` answers as gensim: the number of words from that word's
        row to the end. `datatype` is the vectors' float type. A truncated file raises
        `zoo.errors.TruncatedFileError`, which is also an `EOFError`. A vector holding NaN or
        infinity is refused unless `allow_nonfinite`.
        """
        words, vectors = read_word2vec(
            fname, binary=binary, limit=limit, encoding=encoding, unicode_errors=unicode_errors, no_header=no_header,
            allow_nonfinite=allow_nonfinite,
        )  # fmt: skip
        counts = None if fvocab is None else _read_fvocab(fvocab, words, encoding, unicode_errors)
        return cls(words, vectors, counts=counts, dtype=datatype)

    def save_word2vec_format(
        self,
        fname: str | os.PathLike,
        fvocab: str | os.PathLike | None = None,
        binary: bool = False,
        total_vec: int | None = None,
        write_header: bool = True,
        prefix: str = "",
        append: bool = False,
        sort_attr: str = "count",
    ) -> Path:
        """Write the word2vec text (or binary) format, byte-identical to gensim's writer, in gensim's
        argument order: rows in descending order of the `sort_attr` attribute (ties and vectors
        without counts: row order), `fvocab` a ``word count`` file beside (word2vec.c's
        ``-save-vocab``), `total_vec` the header's count, `append` to add to `fname`."""
        if sort_attr in self.expandos:
            values = self.expandos[sort_attr]
            order = sorted(self.key_to_index.values(), key=lambda i: -values[i])
        elif sort_attr == "count" or fvocab is None:
            order = list(self.key_to_index.values())
        else:
            raise DataError(f"cannot write a vocabulary by {sort_attr!r}: the vectors have no such attribute")
        if len(order) != len(self):
            raise DataError(f"{len(self) - len(order)} rows have no key yet: fill them (add_vector) before saving")
        words = [self.index_to_key[i] for i in order]
        if fvocab is not None:
            with open(fvocab, "ab" if append else "wb") as out:
                for i, word in zip(order, words, strict=True):
                    out.write(f"{prefix}{word} {self.get_vecattr(i, sort_attr)}\n".encode())
        return write_word2vec(
            fname,
            [str(w) for w in words],
            self.vectors[order],
            binary=binary,
            write_header=write_header,
            prefix=prefix,
            total_vec=total_vec,
            append=append,
        )

    def intersect_word2vec_format(
        self,
        fname: str | os.PathLike,
        lockf: float = 0.0,
        binary: bool | None = None,
        encoding: str = "utf-8",
        unicode_errors: str = "strict",
    ) -> None:
        """Take the vectors of a word2vec file for the words both hold (no word is added); the
        file's dimension must be this table's. `lockf` (gensim's training lock): on a model's `wv`
        whose ``vectors_lockf`` holds one factor per word, the words taken get `lockf` (0: the
        model's training leaves them as read); elsewhere it has nothing to lock."""
        other = KeyedVectors.load(fname, binary=binary, encoding=encoding, unicode_errors=unicode_errors)
        if other.vector_size != self.vector_size:
            raise DataError(f"{fname} holds vectors of dimension {other.vector_size}, these {self.vector_size}")
        rows = [(self.key_to_index[w], i) for i, w in enumerate(other.index_to_key) if w in self.key_to_index]
        if rows:
            merged = self.vectors.copy()
            merged[[mine for mine, _ in rows]] = other.vectors[[theirs for _, theirs in rows]]
            self._set_vectors(merged)
            lock = getattr(self, "vectors_lockf", None)
            if isinstance(lock, np.ndarray) and lock.shape == (len(self),):
                lock[[mine for mine, _ in rows]] = lockf

    def restrict(self, limit: int) -> KeyedVectors:
        """A new `KeyedVectors` with the first `limit` words only."""
        keyed = type(self)(self.index_to_key[:limit], self.vectors[:limit], oov=self.oov, dtype=self.vectors.dtype)
        keyed.expandos = {attr: values[:limit].copy() for attr, values in self.expandos.items()}
        return keyed

    def vectors_for_all(
        self, keys: Iterable[Key], allow_inference: bool = True, copy_vecattrs: bool = False
    ) -> KeyedVectors:
        """A new `KeyedVectors` of the distinct `keys` that have a vector (in their order): with
        `allow_inference`, words the `oov` function gives vectors to as well. `copy_vecattrs` copies
        the per-word attributes of the words that have them."""
        chosen: list[Key] = []
        for key in dict.fromkeys(keys):
            if self.has_index_for(key) or (allow_inference and self._has_vector(key)):
                chosen.append(key)
        vectors = np.stack([self.get_vector(k) for k in chosen]) if chosen else np.zeros((0, self.vector_size))
        keyed = KeyedVectors(chosen, vectors, dtype=self.vectors.dtype)
        known = [k for k in chosen if self.has_index_for(k)]
        if copy_vecattrs and known:
            for attr in {"count", *self.expandos}:  # "count" as get_vecattr answers it, stand-in or not
                values = self._vecattr_all(attr)
                keyed.allocate_vecattrs([attr], [values.dtype])
                for key in known:
                    keyed.set_vecattr(key, attr, values[self.get_index(key)])
        return keyed

    # -- filling and per-word attributes (gensim's) ----------------------------------------

    def _set_vectors(self, vectors: np.ndarray) -> None:
        vectors.flags.writeable = False
        self.vectors = vectors
        self._norms = self._unit = None

    def add_vectors(self, keys: Key | Sequence[Key], weights: Any, extras: Any = None, replace: bool = False) -> None:
        """Append `keys` with their vectors (`weights` ``[n, D]``, or ``[D]`` for one key); a key
        already held keeps its vector unless `replace`. `extras`: ``{attr: [n] values}``."""
        if _is_key(keys):
            keys, weights = [keys], np.asarray(weights).reshape(1, -1)
        keys = list(keys)
        weights = np.asarray(weights, dtype=self.vectors.dtype)
        if weights.ndim != 2 or weights.shape != (len(keys), self.vector_size):
            expected = (len(keys), self.vector_size)
            raise DataError(f"{len(keys)} keys but vectors of shape {weights.shape}; expected {expected}")
        extras = {attr: np.asarray(values) for attr, values in (extras or {}).items()}
        held = np.array([key in self.key_to_index for key in keys], dtype=bool)
        fresh: list[int] = []
        for i in np.flatnonzero(~held):
            if keys[i] not in self.key_to_index:  # a key given twice: its first vector
                fresh.append(int(i))
                self.key_to_index[keys[i]] = len(self.index_to_key)
                self.index_to_key.append(keys[i])
        vectors = np.concatenate([self.vectors, weights[fresh]])
        if replace and held.any():
            vectors[[self.key_to_index[keys[i]] for i in np.flatnonzero(held)]] = weights[held]
        self._set_vectors(vectors)
        self.allocate_vecattrs()
        for attr, values in extras.items():
            self.allocate_vecattrs([attr], [values.dtype])
            for i in range(len(keys)):
                if i in fresh or (replace and held[i]):
                    self.expandos[attr][self.key_to_index[keys[i]]] = values[i]

    def add_vector(self, key: Key, vector: Any) -> int:
        """Put one key and its vector ``[D]`` in the next free row of a preallocated table
        (``KeyedVectors(vector_size, count)``), else append it; returns its row."""
        index = self.next_index
        if index >= len(self) or self.index_to_key[index] is not None:
            index = len(self)
            self.add_vectors([key], np.asarray(vector).reshape(1, -1))
        else:
            vectors = self.vectors.copy()
            vectors[index] = vector
            self.index_to_key[index] = key
            self.key_to_index[key] = index
            self._set_vectors(vectors)
        self.next_index = index + 1
        return index

    def __setitem__(self, keys: Key | list[Key], weights: Any) -> None:
        """``kv[key] = vector`` or ``kv[[k1, k2]] = [2, D]``: add, or replace what is held."""
        if not isinstance(keys, list):
            keys, weights = [keys], np.asarray(weights).reshape(1, -1)
        self.add_vectors(keys, weights, replace=True)

    def allocate_vecattrs(self, attrs: Sequence[str] | None = None, types: Sequence[Any] | None = None) -> None:
        """Make each attribute's array as long as the table (new rows 0), creating those named."""
        if attrs is None:
            attrs, types = list(self.expandos), [values.dtype for values in self.expandos.values()]
        for attr, kind in zip(attrs, types or [], strict=True):
            kind = np.int64 if kind is int else object if kind is str else kind
            values = self.expandos.get(attr)
            if values is None:
                self.expandos[attr] = np.zeros(len(self), dtype=kind)
                continue
            if not np.issubdtype(np.dtype(kind), values.dtype):
                raise DataError(f"attribute {attr!r} holds {values.dtype}; cannot store {np.dtype(kind)} in it")
            if len(values) != len(self):
                grown = np.zeros(len(self), dtype=values.dtype)
                grown[: min(len(values), len(self))] = values[: len(self)]
                self.expandos[attr] = grown

    def set_vecattr(self, key: Key, attr: str, val: Any) -> None:
        """Set `key`'s attribute `attr` (its array is created, of `val`'s type, on first use)."""
        self.allocate_vecattrs([attr], [type(val)])
        self.expandos[attr][self.get_index(key)] = val

    def get_vecattr(self, key: Key, attr: str) -> Any:
        """`key`'s attribute `attr` (``"count"``: its corpus frequency). Vectors read without counts
        (a word2vec or GloVe file) answer ``"count"`` as gensim: the rows from the key's to the
        end. An attribute never set raises `UnknownKeyError` (a `KeyError`, as gensim's)."""
        index = self.get_index(key)
        if attr in self.expandos:
            return self.expandos[attr][index]
        if attr == "count":
            return len(self) - index
        raise UnknownKeyError(f"the vectors keep no attribute {attr!r} (they keep {sorted(self.expandos) or 'none'})")

    def sort_by_descending_frequency(self) -> None:
        """Reorder the rows by descending ``"count"`` (ties: the later row first, as gensim)."""
        if not len(self):
            return
        counts = np.asarray(self._vecattr_all("count"), dtype=np.int64)
        order = np.lexsort((-np.arange(len(counts)), -counts))
        self.index_to_key = [self.index_to_key[i] for i in order]
        self.key_to_index = {w: i for i, w in enumerate(self.index_to_key)}
        self.expandos = {attr: values[order] for attr, values in self.expandos.items()}
        self._set_vectors(self.vectors[order])

    def _vecattr_all(self, attr: str) -> np.ndarray:
        """``[V]`` attribute `attr` of every row (``"count"`` as `get_vecattr` answers it)."""
        if attr in self.expandos:
            return self.expandos[attr]
        return np.array([self.get_vecattr(i, attr) for i in range(len(self))])

    def resize_vectors(self, seed: int = 0) -> None:
        """Make the vectors as many as the keys: rows added are drawn uniform in ``±1/D`` from
        `seed` (gensim's range), rows kept stay."""
        extra = len(self) - len(self.vectors)
        rows = self.vectors[: len(self)]
        if extra > 0:
            drawn = np.random.default_rng(seed).uniform(-1, 1, (extra, self.vector_size)) / self.vector_size
            rows = np.concatenate([rows, drawn.astype(self.vectors.dtype)])
        self._set_vectors(np.array(rows))
        self.allocate_vecattrs()

    def unit_normalize_all(self) -> None:
        """Scale every row to unit length, for good (zero rows stay zero)."""
        self._set_vectors(np.array(self.unit_vectors))

    def init_sims(self, replace: bool = False) -> None:
        """gensim's older `fill_norms`; `replace` scales the rows to unit length for good."""
        self.fill_norms()
        if replace:
            self.unit_normalize_all()

    def word_vec(self, *args: Any, **kwargs: Any) -> np.ndarray:
        """gensim 3's name for `get_vector`."""
        return self.get_vector(*args, **kwargs)

    def words_closer_than(self, word1: Key, word2: Key) -> list[str]:
        """gensim 3's name for `closer_than`."""
        return self.closer_than(word1, word2)

    vocab = _removed("vocab", "key_to_index, index_to_key and get_vecattr(key, 'count')")
    index2word = index2entity = _removed("index2word", "index_to_key")
    vectors_norm = _removed("vectors_norm", "get_normed_vectors()")

    # -- lookup ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.index_to_key)

    def __contains__(self, key: object) -> bool:
        """gensim's `has_index_for`: a vocabulary word or a row number (words only the
        `oov` function knows are not "in")."""
        return self.has_index_for(key)

    def __getitem__(self, key_or_keys: Key | Iterable[Key]) -> np.ndarray:
        """The vector ``[D]`` of one key, or ``[n, D]`` of a list of keys (as gensim)."""
        if _is_key(key_or_keys):
            return self.get_vector(key_or_keys)
        return np.stack([self.get_vector(key) for key in key_or_keys])

    def __repr__(self) -> str:
        return f"KeyedVectors({len(self)} words, dim {self.vector_size})"

    @property
    def vector_size(self) -> int:
        return int(self.vectors.shape[1])

    @property
    def norms(self) -> np.ndarray:
        """``[V]`` the length of each row (float32); computed once."""
        if self._norms is None:
            norms = np.linalg.norm(self.vectors, axis=1)
            norms.flags.writeable = False
            self._norms = norms
        return self._norms

    @property
    def unit_vectors(self) -> np.ndarray:
        """``[V, D]`` rows scaled to unit length (zero rows stay zero); computed once."""
        if self._unit is None:
            norms = self.norms[:, None]
            with np.errstate(invalid="ignore"):  # a non-finite row (allow_nonfinite) stays non-finite
                unit = self.vectors / np.where(norms > 0, norms, 1.0)
            unit.flags.writeable = False
            self._unit = unit
        return self._unit

    def fill_norms(self, force: bool = False) -> None:
        """gensim's way to compute the norms ahead; here they are computed on first use."""
        if force:
            self._norms = self._unit = None
        self.norms  # noqa: B018 (computes and keeps them)

    def get_normed_vectors(self) -> np.ndarray:
        """gensim's name for `unit_vectors` (``[V, D]``, read-only)."""
        return self.unit_vectors

    def get_index(self, key: Key, default: int | None = None) -> int:
        """The row of `key`: a vocabulary word's row, or a row number ``0 <= key < len`` itself.

        A key that is neither returns `default` when it is not None, else raises `KeyError`.
        """
        if isinstance(key, str):
            index = self.key_to_index.get(key)
            if index is not None:
                return index
        elif _is_int(key) and 0 <= key < len(self):
            return int(key)
        if default is not None:
            return default
        raise self._missing(key)

    def has_index_for(self, key: object) -> bool:
        """True for a vocabulary word or a row number in range."""
        return _is_key(key) and self.get_index(key, -1) >= 0

    def get_vector(self, key: Key, norm: bool = False) -> np.ndarray:
        """The vector ``[D]`` of `key` (a word or a row number; unit length with `norm`).

        Words outside the vocabulary go to the `oov` function if there is one,
        else raise `KeyError` naming close vocabulary words.
        """
        index = self.get_index(key, -1)
        if index >= 0:
            return self.unit_vectors[index] if norm else self.vectors[index]
        if self.oov is None or not isinstance(key, str):
            raise self._missing(key)
        vector = np.asarray(self.oov(key), dtype=np.float32)
        if vector.shape != (self.vector_size,):
            raise WeightsError(
                f"the oov function returned shape {vector.shape} for {key!r}, expected ({self.vector_size},)"
            )
        return _unit_rows(vector) if norm else vector

    def get_mean_vector(
        self,
        keys: Iterable[Key | np.ndarray],
        weights: Sequence[float] | np.ndarray | None = None,
        pre_normalize: bool = True,
        post_normalize: bool = False,
        ignore_missing: bool = True,
    ) -> np.ndarray:
        """``[D]`` the weighted mean of the vectors of `keys` (words, row numbers or raw ``[D]``
        vectors), divided by the sum of the absolute weights of the keys used.

        `pre_normalize` scales each word's vector (not a raw vector) to unit length first,
        `post_normalize` the mean after. A key without a vector is skipped, or raises
        `KeyError` when `ignore_missing` is False.
        """
        keys = list(keys)
        if not keys:
            raise DataError("cannot compute a mean of no keys: give at least one word or vector")
        weights = np.ones(len(keys)) if weights is None else np.asarray(weights, dtype=np.float64)
        if weights.shape != (len(keys),):
            raise DataError(f"{len(keys)} keys but weights of shape {weights.shape}: give one weight per key")
        total, mean = 0.0, np.zeros(self.vector_size, dtype=np.float64)
        for key, weight in zip(keys, weights, strict=True):
            if isinstance(key, np.ndarray):
                vector = key
                if vector.shape != (self.vector_size,):
                    raise DataError(f"a vector of shape {vector.shape} among the keys; expected ({self.vector_size},)")
            elif self._has_vector(key):
                vector = self.get_vector(key, norm=pre_normalize)
            elif not ignore_missing:
                raise self._missing(key)
            else:
                continue
            mean += weight * vector
            total += abs(weight)
        if total > 0:
            mean /= total
        mean = mean.astype(np.float32)
        return _unit_rows(mean) if post_normalize else mean

    def _has_vector(self, key: object) -> bool:
        """A vocabulary word or row, or any word when an `oov` function supplies vectors."""
        return self.has_index_for(key) or (isinstance(key, str) and self.oov is not None)

    def _missing(self, key: object) -> UnknownKeyError:
        hint = close_matches(key, self._near(key)) if isinstance(key, str) else ""
        if _is_int(key):
            hint = f" (rows are numbered 0 to {len(self) - 1})"
        return UnknownKeyError(f"Key '{key}' not present: not in the vocabulary of {len(self)} words.{hint}")

    def _near(self, word: str) -> list[str]:
        head = self.index_to_key[:50000]
        return [w for w in head if w[:1].lower() == word[:1].lower()]

    # -- similarity -----------------------------------------------------------------------

    def _row_dots(self, vector: np.ndarray, end: int | None = None, start: int = 0) -> np.ndarray:
        """``[end - start]`` each row's dot product with `vector` over the row's norm (the cosine
        when `vector` has unit length); 0 for a zero row, NaN for a non-finite one."""
        with np.errstate(invalid="ignore", over="ignore"):  # non-finite rows score NaN, below
            dots = self.vectors[start:end] @ np.asarray(vector, dtype=np.float32)
            norms = self.norms[start:end]
            scores = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
        scores[~np.isfinite(norms)] = np.nan  # a non-finite row scores NaN, which `_best` never ranks
        return scores

    def _best(self, scores: np.ndarray, topn: int, exclude: set[int], offset: int = 0) -> list[tuple[str, float]]:
        """The `topn` highest scores as ``(word, score)``, rows in `exclude` left out (row = offset + position)."""
        if not np.isfinite(scores).all():  # a non-finite row (loaded with allow_nonfinite) is never ranked
            exclude = exclude | {offset + int(i) for i in np.flatnonzero(~np.isfinite(scores))}
            scores = np.where(np.isfinite(scores), scores, -np.inf)
        wanted = min(topn + len(exclude), len(scores))
        best = np.argpartition(-scores, wanted - 1)[:wanted] if wanted else np.zeros(0, dtype=np.int64)
        best = best[np.argsort(-scores[best], kind="stable")]
        rows = [offset + int(i) for i in best if offset + int(i) not in exclude]
        return [(self.index_to_key[row], float(scores[row - offset])) for row in rows[:topn]]

    def most_similar(
        self,
        positive: Term | Iterable[Term] | None = None,
        negative: Term | Iterable[Term] | None = None,
        topn: int | None = 10,
        clip_start: int = 0,
        clip_end: int | None = None,
        restrict_vocab: int | None = None,
        indexer: Any = None,
    ) -> Any:
        """The `topn` words closest (cosine) to the weighted mean of `positive` minus
        `negative` (3CosAdd); the input words are left out.

        Terms are words, row numbers, raw ``[D]`` vectors (used as they are, not scaled) or
        ``(term, weight)`` pairs; a word's unit vector has weight 1 when positive, -1 when
        negative, and a pair's weight is used as given (give ``("man", -1.0)`` among the
        negatives). `restrict_vocab` searches only the first (most frequent) words, else
        rows ``clip_start:clip_end``. `topn=None` returns the similarity to every candidate
        row as a ``[n]`` array; `topn < 1` returns ``[]``. An `indexer` (gensim's approximate
        neighbour indexes) answers instead with ``indexer.most_similar(mean, topn)``.
        """
        if _is_int(topn) and topn < 1:
            return []
        keys, weights = [], []
        for default, items in ((1.0, _ensure_list(positive)), (-1.0, _ensure_list(negative))):
            for item in items:
                key, weight = _weighted_term(item, default)
                keys.append(key)
                weights.append(weight)
        if not keys:
            raise DataError("give at least one positive or negative word or vector")
        mean = self.get_mean_vector(keys, weights, pre_normalize=True, post_normalize=True, ignore_missing=False)
        inputs = {self.get_index(key) for key in keys if self.has_index_for(key)}
        if indexer is not None and _is_int(topn):
            return indexer.most_similar(mean, topn)
        start, end = (0, restrict_vocab) if restrict_vocab else (clip_start, clip_end or len(self))
        scores = self._row_dots(mean, end, start)
        if not topn:
            return scores
        return self._best(scores, topn, inputs, offset=start)

    def most_similar_cosmul(
        self,
        positive: Key | np.ndarray | Iterable[Key | np.ndarray] | None = None,
        negative: Key | np.ndarray | Iterable[Key | np.ndarray] | None = None,
        topn: int | None = 10,
        restrict_vocab: int | None = None,
        *,
        epsilon: float = 1e-6,
    ) -> Any:
        """3CosMul (Levy & Goldberg 2014): maximise ``∏ cos'(x, p) / (∏ cos'(x, n) + ε)``
        with ``cos' = (1 + cos) / 2`` over positive terms p and negative terms n.

        Words enter as unit vectors, raw vectors as they are (as gensim); at least one
        positive term is needed. ε is gensim's 1e-6 (Levy & Goldberg used 1e-3).
        `restrict_vocab` is accepted and, as in gensim 4, ignored: every row is searched, and
        `topn=None` returns the ``[V]`` scores of all of them.
        """
        if _is_int(topn) and topn < 1:
            return []
        positive, negative = _ensure_list(positive), _ensure_list(negative)
        if any(isinstance(t, tuple | list) for t in positive + negative):
            raise DataError("most_similar_cosmul takes words or vectors, not (word, weight) pairs")
        if not positive:
            raise DataError("most_similar_cosmul needs at least one positive word or vector")
        inputs = {self.get_index(t) for t in positive + negative if self.has_index_for(t)}

        def shifted(term: Key | np.ndarray) -> np.ndarray:
            vector = term if isinstance(term, np.ndarray) else self.get_vector(term, norm=True)
            return (1.0 + self._row_dots(vector)) / 2.0

        numerator = np.prod([shifted(t) for t in positive], axis=0)
        denominator = np.prod([shifted(t) for t in negative], axis=0)  # no negatives: float64 1.0, as gensim
        scores = numerator / (denominator + epsilon)
        if not topn:
            return scores
        return self._best(scores, topn, inputs)

    def similar_by_word(self, word: Key, topn: int | None = 10, restrict_vocab: int | None = None) -> Any:
        """``most_similar(positive=[word], ...)``."""
        return self.most_similar(positive=[word], topn=topn, restrict_vocab=restrict_vocab)

    similar_by_key = similar_by_word

    def similar_by_vector(self, vector: Any, topn: int | None = 10, restrict_vocab: int | None = None) -> Any:
        """The `topn` words closest to `vector` ``[D]`` (nothing excluded)."""
        return self.most_similar(positive=[np.asarray(vector, np.float32)], topn=topn, restrict_vocab=restrict_vocab)

    def similarity(self, w1: Key, w2: Key) -> float:
        """Cosine similarity of two words (exactly 1.0 for a word and itself)."""
        first, second = self.get_vector(w1, norm=True), self.get_vector(w2, norm=True)
        if np.array_equal(first, second) and first.any():
            return 1.0
        return float(np.dot(first, second))

    def n_similarity(self, ws1: Sequence[Key], ws2: Sequence[Key]) -> float:
        """Cosine similarity of the means of two sets of words (raw vectors averaged, then
        compared); words without a vector are skipped (0.0 when a side has none left).

        Raises `ZeroDivisionError` (as gensim) when a list is empty.
        """
        if not (len(ws1) and len(ws2)):
            raise ZeroDivisionError(
                f"n_similarity compares two non-empty lists of words; got {len(ws1)} and {len(ws2)} words"
            )
        first = _unit_rows(self.get_mean_vector(ws1, pre_normalize=False))
        second = _unit_rows(self.get_mean_vector(ws2, pre_normalize=False))
        return float(np.dot(first, second))

    def distance(self, w1: Key, w2: Key) -> float:
        """Cosine distance ``1 - similarity(w1, w2)``."""
        return 1.0 - self.similarity(w1, w2)

    @staticmethod
    def cosine_similarities(vector_1: np.ndarray, vectors_all: np.ndarray) -> np.ndarray:
        """``[n]`` cosine of `vector_1` ``[D]`` with each row of `vectors_all` ``[n, D]`` (0 where
        a vector is zero)."""
        vectors_all = np.asarray(vectors_all)
        denominator = np.linalg.norm(vector_1) * np.linalg.norm(vectors_all, axis=1)
        dots = vectors_all @ np.asarray(vector_1)
        return np.divide(dots, denominator, out=np.zeros_like(dots), where=denominator > 0)

    def distances(self, word_or_vector: Key | np.ndarray, other_words: Iterable[Key] = ()) -> np.ndarray:
        """``[n]`` cosine distances from a word or ``[D]`` vector to each of `other_words`, or to
        every vocabulary word in row order (itself included) when `other_words` is empty.

        Raises `KeyError` for a word of `other_words` outside the vocabulary.
        """
        is_key = _is_key(word_or_vector)
        vector = self.get_vector(word_or_vector) if is_key else np.asarray(word_or_vector, np.float32)
        others = list(other_words)
        rows = self.vectors[[self.get_index(w) for w in others]] if others else self.vectors
        return 1 - self.cosine_similarities(vector, rows)

    def closer_than(self, key1: Key, key2: Key) -> list[str]:
        """The vocabulary words (row order) strictly closer to `key1` than `key2` is, `key1`
        left out; both must be in the vocabulary."""
        distances = self.distances(key1)
        first, second = self.get_index(key1), self.get_index(key2)
        return [self.index_to_key[i] for i in np.flatnonzero(distances < distances[second]) if i != first]

    def rank(self, key1: Key, key2: Key) -> int:
        """1 + the number of words closer to `key1` than `key2` is (1: its nearest neighbour)."""
        return len(self.closer_than(key1, key2)) + 1

    def most_similar_to_given(self, key1: Key, keys_list: Sequence[Key]) -> Key:
        """The key of `keys_list` most similar to `key1` (the first of equals)."""
        if not len(keys_list):
            raise DataError("most_similar_to_given needs at least one key to choose from")
        return keys_list[int(np.argmax([self.similarity(key1, key) for key in keys_list]))]

    def rank_by_centrality(self, words: Iterable[Key], use_norm: bool = True) -> list[tuple[float, Key]]:
        """``(similarity, word)`` to the normalised mean of the words' vectors (unit vectors with
        `use_norm`), most central first (equal similarities: the later word first); words
        without a vector are ignored, but one at least must have one."""
        words = list(words)
        used = [w for w in words if self._has_vector(w)]
        if not used:
            raise DataError(f"none of the {len(words)} words has a vector: cannot rank them")
        vectors = np.stack([self.get_vector(w, norm=use_norm) for w in used]).astype(np.float32)
        mean = self.get_mean_vector(vectors, post_normalize=True)
        return [(float(s), w) for s, w in sorted(zip(vectors @ mean, used, strict=True), reverse=True)]

    def doesnt_match(self, words: Iterable[Key]) -> Key:
        """The word farthest (cosine) from the mean of the unit vectors of `words` (the last of
        `rank_by_centrality`). Words without a vector are ignored; at least one must have one."""
        return self.rank_by_centrality(words)[-1][1]

    def relative_cosine_similarity(self, wa: Key, wb: Key, topn: int = 10) -> float:
        """``similarity(wa, wb)`` over the sum of the similarities of `wa`'s `topn` nearest words
        (Leeuwenberg et al. 2016)."""
        near = self.similar_by_word(wa, topn)
        if not near:
            raise DataError("relative_cosine_similarity needs topn >= 1 neighbours of the first word")
        return self.similarity(wa, wb) / sum(score for _, score in near)

    def wmdistance(self, document1: Sequence[str], document2: Sequence[str], norm: bool = True) -> float:
        """Word Mover's Distance between two token lists (Kusner et al. 2015; `zoo.vectors.wmd`).

        Tokens without a vector are dropped first; ``inf`` when a document has none left,
        0.0 when both are one and the same word. `norm` uses unit vectors. Needs POT:
        ``pip install 'zoo[wmd]'``.
        """
        from zoo.vectors.wmd import _emd2, word_movers_distance

        _emd2()  # fail on a missing extra before looking at the words
        first = [t for t in document1 if self._has_vector(t)]
        second = [t for t in document2 if self._has_vector(t)]
        if not first or not second:
            return float("inf")
        if len(set(first) | set(second)) == 1:
            return 0.0

        def bag(tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
            counts = Counter(tokens)
            vectors = np.stack([self.get_vector(t, norm=norm) for t in counts])
            return vectors, np.asarray(list(counts.values()), np.float64) / len(tokens)

        return word_movers_distance(*bag(first), *bag(second))

    # -- evaluation -----------------------------------------------------------------------

    def evaluate_word_analogies(
        self,
        analogies: str | os.PathLike = "google",
        restrict_vocab: int | None = 300000,
        case_insensitive: bool = True,
        dummy4unknown: bool = False,
        similarity_function: str = "most_similar",
    ) -> tuple[float, list[dict[str, Any]]]:
        """gensim's analogy accuracy: ``(score, sections)`` on a Google-format file (``"google"``:
        the shipped set).

        `sections` is a list of ``{"section": name, "correct": [(a, b, c, expected), ...],
        "incorrect": [...]}``, one per file section and a last ``"Total accuracy"``; words are
        uppercased when `case_insensitive`. `score` is correct over covered questions (0.0 when
        none is covered). `similarity_function` is ``"most_similar"`` (3CosAdd) or
        ``"most_similar_cosmul"`` (3CosMul, ε 1e-6). `analogy_report` gives zoo's fuller result.
        """
        methods = {"most_similar": ("3cosadd", 1e-3), "most_similar_cosmul": ("3cosmul", 1e-6)}
        if similarity_function not in methods:
            raise DataError(f"similarity_function is one of {sorted(methods)}, got {similarity_function!r}")
        method, epsilon = methods[similarity_function]
        report = self.analogy_report(
            analogies, restrict_vocab, case_insensitive, dummy4unknown, method=method, epsilon=epsilon
        )
        return report.as_gensim()

    def analogy_report(
        self,
        analogies: str | os.PathLike = "google",
        restrict_vocab: int | None = 300000,
        case_insensitive: bool = True,
        dummy4unknown: bool = False,
        *,
        method: str = "3cosadd",
        epsilon: float = 1e-3,
    ) -> AnalogyResult:
        """Zoo's analogy result: `zoo.eval.AnalogyResult` (``(score, sections)`` with per-section
        `AnalogySection`, questions covered and skipped, semantic and syntactic accuracy).

        `method` is ``"3cosadd"`` or ``"3cosmul"`` (with `epsilon`). Never modifies the vectors.
        """
        return evaluate_analogies(
            self.vectors,
            self.index_to_key,
            analogies,
            restrict_vocab=restrict_vocab,
            case_insensitive=case_insensitive,
            dummy4unknown=dummy4unknown,
            method=method,
            epsilon=epsilon,
        )

    def evaluate_word_pairs(
        self,
        pairs: str | os.PathLike = "wordsim353",
        delimiter: str = "\t",
        encoding: str = "utf8",
        restrict_vocab: int | None = 300000,
        case_insensitive: bool = True,
        dummy4unknown: bool = False,
    ) -> tuple[Any, Any, float]:
        """gensim's word-pair evaluation: ``(pearson, spearman, oov_ratio)``.

        `pearson` and `spearman` are scipy's results (``(statistic, pvalue)`` tuples with
        those attributes) over the scored pairs; `oov_ratio` is the percentage of pairs with
        a word outside the first `restrict_vocab` words. ``"wordsim353"`` and ``"simlex999"``
        are the shipped sets. Raises `DataError` when fewer than two pairs can be scored.
        `word_pairs_report` gives zoo's fuller result.
        """
        scores = score_word_pairs(
            self.vectors,
            self.index_to_key,
            pairs,
            delimiter=delimiter,
            encoding=encoding,
            restrict_vocab=restrict_vocab,
            case_insensitive=case_insensitive,
            dummy4unknown=dummy4unknown,
        )
        return gensim_word_pairs(scores, pairs)

    def word_pairs_report(
        self,
        pairs: str | os.PathLike = "wordsim353",
        delimiter: str = "\t",
        encoding: str = "utf8",
        restrict_vocab: int | None = 300000,
        case_insensitive: bool = True,
        dummy4unknown: bool = False,
    ) -> WordPairsResult:
        """Zoo's word-pair result: `zoo.eval.WordPairsResult` (Spearman, Pearson, the oov
        fraction in [0, 1], pairs and pairs scored; NaN, not an error, where undefined).
        Never modifies the vectors."""
        return evaluate_word_pairs(
            self.vectors,
            self.index_to_key,
            pairs,
            delimiter=delimiter,
            encoding=encoding,
            restrict_vocab=restrict_vocab,
            case_insensitive=case_insensitive,
            dummy4unknown=dummy4unknown,
        )


def _load_word2vec_format(
    cls: type[KeyedVectors] = KeyedVectors,
    fname: str | os.PathLike | None = None,
    fvocab: str | os.PathLike | None = None,
    binary: bool | None = False,
    encoding: str = "utf8",
    unicode_errors: str = "strict",
    limit: int | None = None,
    datatype: Any = REAL,
    no_header: bool | None = False,
    binary_chunk_size: int = 100 * 1024,
) -> KeyedVectors:
    """gensim.models.keyedvectors' function behind ``cls.load_word2vec_format``, with gensim's
    arguments (`binary_chunk_size` paced gensim's reads; zoo reads the file whole)."""
    if fname is None:
        raise DataError("fname (the file to read) is missing")
    return cls.load_word2vec_format(
        fname, fvocab=fvocab, binary=binary, encoding=encoding, unicode_errors=unicode_errors, limit=limit,
        datatype=datatype, no_header=no_header,
    )  # fmt: skip
