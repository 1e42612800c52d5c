"""fastText's model in memory: its Args, words, counts and matrices, and its word vectors.

A word's vector is the mean of its own input row and its n-gram rows
(`zoo_word2vec.subwords`: ``nwords + hash % bucket`` for each character n-gram),
a word outside the vocabulary the mean of its n-gram rows (zero without any),
exactly as fastText's ``getWordVector``; the sums are float32 in fastText's
order, so the vectors are the package's to the bit. `fasttext_from_zoo` turns
a zoo ``fasttext`` model into one; `zoo_word2vec.fasttext_files.bin` reads and writes
them as ``.bin`` files.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zoo.plugin_api import DataError
from zoo_word2vec.fasttext_files.quantized import QuantizedMatrix
from zoo_word2vec.subwords import EOS, count_ngrams, ngram_hashes

__all__ = ["SUPERVISED", "FastTextArgs", "FastTextModel", "fasttext_from_zoo"]

SUPERVISED = 3
"""fastText's `model` number of a classifier (``fasttext supervised``)."""

_LOSSES = {1: "hs", 2: "ns", 3: "softmax", 4: "ova"}
_MODELS = {1: "cbow", 2: "sg", SUPERVISED: "supervised"}
_WORDS_AT_ONCE = 1 << 16  # words whose n-grams are counted at a time
_GATHER = 1 << 24  # floats gathered at a time when composing word vectors
_SLOTS_AT_ONCE = 256  # rows summed slot by slot over all words; a longer word's rest is summed on its own


@dataclass(frozen=True)
class FastTextArgs:
    """The Args block of a fastText model, with fastText's names and meanings (`loss` and
    `model` are fastText's enum numbers: see `loss_name` and `model_name`)."""

    dim: int
    ws: int = 5
    epoch: int = 5
    min_count: int = 5
    neg: int = 5
    word_ngrams: int = 1
    loss: int = 2
    model: int = 2
    bucket: int = 2000000
    minn: int = 3
    maxn: int = 6
    lr_update_rate: int = 100
    t: float = 1e-4

    @property
    def loss_name(self) -> str:
        """``"hs"``, ``"ns"``, ``"softmax"`` or ``"ova"``."""
        return _LOSSES[self.loss]

    @property
    def model_name(self) -> str:
        """``"cbow"``, ``"sg"`` or ``"supervised"``."""
        return _MODELS[self.model]

    def check(self, where: str) -> None:
        """Raise `DataError` unless these values make a model fastText could have written."""
        if self.dim < 1:
            raise DataError(f"{where}: dim is {self.dim}; expected at least 1")
        if self.loss not in _LOSSES or self.model not in _MODELS:
            raise DataError(
                f"{where}: loss {self.loss} / model {self.model} are not fastText's "
                f"(loss 1-4, model 1-3): not a fastText model, or a damaged one"
            )
        if self.bucket < 0 or self.minn < 0 or self.maxn < 0:
            raise DataError(
                f"{where}: bucket {self.bucket}, minn {self.minn}, maxn {self.maxn}; expected each to be at least 0"
            )
        if self.has_ngrams and self.bucket == 0:
            raise DataError(
                f"{where}: minn={self.minn}, maxn={self.maxn} ask for n-grams but bucket=0 gives them no rows "
                "(fastText itself cannot use such a model)"
            )

    @property
    def has_ngrams(self) -> bool:
        """Whether words have character n-grams (``maxn >= max(minn, 1)``)."""
        return self.maxn >= max(self.minn, 1)


@dataclass(eq=False)
class FastTextModel:
    """A fastText model: its words, their counts, its input (and output) matrix and its Args.

    Calling it, ``model(word) -> [dim]``, gives fastText's vector of any word, so
    it serves as the `oov` function of a `zoo.vectors.KeyedVectors`.

    **Arguments:**

    - `args`: the Args block (`FastTextArgs`).
    - `words`: the ``nwords`` vocabulary words, in file order (most frequent first).
    - `counts`: ``[nwords]`` corpus counts.
    - `input`: ``[nwords + bucket, dim]`` float32: word rows, then n-gram buckets.
    - `output`: ``[nwords, dim]`` (``[nlabels, dim]`` for a supervised model), or None
      when not read; written as zeros.
    - `labels`, `label_counts`: a supervised model's labels (``__label__...``).
    - `ntokens`: tokens in the training corpus (None: the sum of the counts).
    - `spellings`: the bytes of the words then the labels as the file holds them (None:
      the words encoded with `encoding`); the n-grams are taken from these bytes.
    - `encoding`: how words outside the vocabulary are turned into bytes (a character the
      encoding lacks becomes ``?``; the fastText package always uses UTF-8).
    - `pruned`: a pruned dictionary's ``(bucket, row)`` pairs ``[k, 2]`` (``fasttext quantize
      -cutoff``): the input matrix then holds the words and these k buckets' rows, and an
      n-gram of any other bucket has none (None: not pruned, all `bucket` rows there).

    A quantized classifier (``.ftz``) has a `QuantizedMatrix` as its `input`; its word
    vectors are not composed here (a classifier's rows serve its labels).
    """

    args: FastTextArgs
    words: list[str]
    counts: np.ndarray
    input: np.ndarray
    output: np.ndarray | None = None
    labels: list[str] = dataclasses.field(default_factory=list)
    label_counts: np.ndarray | None = None
    ntokens: int | None = None
    spellings: list[bytes] | None = None
    encoding: str = "utf-8"
    pruned: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.args.check("fastText model")
        self.words, self.labels = list(self.words), list(self.labels)
        self.counts = np.asarray(self.counts, dtype=np.int64)
        if not isinstance(self.input, QuantizedMatrix):
            self.input = np.asarray(self.input, dtype=np.float32)
        self._check_pruned()
        self.label_counts = np.zeros(len(self.labels), np.int64) if self.label_counts is None else self.label_counts
        self.label_counts = np.asarray(self.label_counts, dtype=np.int64)
        rows = (self.nwords + (self.args.bucket if self.pruned is None else len(self.pruned)), self.args.dim)
        if tuple(self.input.shape) != rows or self.counts.shape != (self.nwords,):
            raise DataError(
                f"{self.nwords} words and {self.args.bucket} buckets of dim {self.args.dim} need an input matrix "
                f"of shape {rows} and {self.nwords} counts; got {self.input.shape} and {self.counts.shape[0]}"
            )
        if self.output is not None:
            self.output = np.asarray(self.output, dtype=np.float32)
            if self.output.shape != (self.output_rows, self.args.dim):
                raise DataError(f"the output matrix has shape {self.output.shape}, expected {self.output_shape}")
        if self.spellings is None:
            self.spellings = [w.encode(self.encoding) for w in self.words + self.labels]
        if len(self.spellings) != self.nwords + len(self.labels):
            raise DataError(f"{len(self.spellings)} spellings for {self.nwords} words and {len(self.labels)} labels")
        self._index: dict[bytes, int] | None = None
        self._ngram_counts: np.ndarray | None = None

    def _check_pruned(self) -> None:
        if self.pruned is None:
            return
        pairs = self.pruned = np.asarray(self.pruned, dtype=np.int64).reshape(-1, 2)
        buckets, rows = pairs[:, 0], pairs[:, 1]
        if (
            np.unique(buckets).size != len(pairs)
            or (len(pairs) and (buckets.min() < 0 or buckets.max() >= self.args.bucket))
            or not np.array_equal(np.sort(rows), np.arange(len(pairs)))
        ):
            raise DataError(
                f"the pruned dictionary's {len(pairs)} (bucket, row) pairs must map distinct buckets below "
                f"{self.args.bucket} onto the rows 0..{len(pairs) - 1}: a damaged or crafted file"
            )

    # -- sizes ----------------------------------------------------------------------------

    @property
    def nwords(self) -> int:
        return len(self.words)

    @property
    def dim(self) -> int:
        return self.args.dim

    @property
    def output_rows(self) -> int:
        """Rows of the output matrix: one per label for a supervised model, else one per word."""
        return len(self.labels) if self.args.model == SUPERVISED else self.nwords

    @property
    def output_shape(self) -> tuple[int, int]:
        return self.output_rows, self.args.dim

    def __repr__(self) -> str:
        a = self.args
        return (
            f"FastTextModel({self.nwords} words, {len(self.labels)} labels, {a.bucket} buckets, dim {a.dim}, "
            f"minn {a.minn}, maxn {a.maxn}, {a.model_name}/{a.loss_name})"
        )

    # -- vectors --------------------------------------------------------------------------

    def ngram_counts(self) -> np.ndarray:
        """How many n-grams each word has ``[nwords]`` (``</s>`` has none); computed once."""
        if self._ngram_counts is None:
            counts = np.zeros(self.nwords, dtype=np.int64)
            if self.args.has_ngrams:
                for start in range(0, self.nwords, _WORDS_AT_ONCE):
                    chunk = self.spellings[start : min(start + _WORDS_AT_ONCE, self.nwords)]  # words, not labels
                    counts[start : start + len(chunk)] = count_ngrams(chunk, self.args.minn, self.args.maxn)
                counts[[i for i, w in enumerate(self.spellings[: self.nwords]) if w == EOS]] = 0
            self._ngram_counts = counts
        return self._ngram_counts

    def _ngram_rows(self, spellings: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """``(offsets [n + 1], rows [N])``: the input rows of the n-grams of each spelling."""
        offsets = np.zeros(len(spellings) + 1, dtype=np.int64)
        if not self.args.has_ngrams:
            return offsets, np.zeros(0, dtype=np.int64)
        real = [i for i, s in enumerate(spellings) if s != EOS]  # '</s>' has no n-grams
        found, hashes = ngram_hashes([spellings[i] for i in real], self.args.minn, self.args.maxn)
        counts = np.zeros(len(spellings), dtype=np.int64)
        counts[real] = np.diff(found)
        offsets[1:] = np.cumsum(counts)
        return offsets, self.nwords + hashes.astype(np.int64) % self.args.bucket

    def subword_rows(self, word: str | bytes) -> np.ndarray:
        """The input rows fastText averages for `word` (its own row first if it has one) ``[k]`` int64."""
        spelling = word if isinstance(word, bytes) else word.encode(self.encoding, errors="replace")
        if self._index is None:
            self._index = {s: i for i, s in enumerate(self.spellings)}  # a repeated spelling: the last, as fastText
        own = self._index.get(spelling)
        grams = self._ngram_rows([spelling])[1]
        return grams if own is None else np.concatenate([[own], grams])

    def word_vector(self, word: str | bytes) -> np.ndarray:
        """fastText's vector of any word ``[dim]`` float32 (zeros for a word without rows)."""
        rows = self.subword_rows(word)
        if not rows.size:
            return np.zeros(self.dim, dtype=np.float32)
        return np.add.reduce(self.input[rows], axis=0) * np.float32(1.0 / rows.size)

    __call__ = word_vector

    def word_vectors(self, stop: int | None = None) -> np.ndarray:
        """The vectors of the first `stop` (default: all) vocabulary words ``[stop, dim]`` float32,
        composed as fastText composes them (float32 sums in fastText's order, then the mean)."""
        stop = self.nwords if stop is None else min(stop, self.nwords)
        rows_before = np.concatenate([[0], np.cumsum(1 + self.ngram_counts()[:stop])])
        vectors = np.empty((stop, self.dim), dtype=np.float32)
        budget = max(1, _GATHER // self.dim)  # rows gathered at a time
        start = 0
        while start < stop:
            end = int(np.searchsorted(rows_before, rows_before[start] + budget, side="right")) - 1
            end = min(stop, max(end, start + 1))
            vectors[start:end] = self._compose(start, end)
            start = end
        return vectors

    def _compose(self, start: int, end: int) -> np.ndarray:
        """Vectors of words `start` to `end`: their rows summed one slot at a time, in fastText's order
        (own row, then n-grams), so each float32 sum is the one fastText computes."""
        offsets, grams = self._ngram_rows(self.spellings[start:end])
        sizes = 1 + np.diff(offsets)
        order = np.argsort(-sizes, kind="stable")  # longest first: slot s is used by a prefix
        by_size, first_gram = sizes[order], offsets[:-1][order]
        sums = self.input[start + order]
        for slot in range(1, min(int(by_size[0]) if by_size.size else 0, _SLOTS_AT_ONCE)):
            users = int(np.searchsorted(-by_size, -slot, side="left"))  # words with more than `slot` rows
            sums[:users] += self.input[grams[first_gram[:users] + slot - 1]]
        for i in range(int(np.searchsorted(-by_size, -_SLOTS_AT_ONCE, side="left"))):  # the few longer words:
            rest = self.input[grams[first_gram[i] + _SLOTS_AT_ONCE - 1 : first_gram[i] + by_size[i] - 1]]
            sums[i] = np.add.accumulate(np.concatenate([sums[i : i + 1], rest]), axis=0)[-1]  # the same order
        vectors = np.empty_like(sums)
        vectors[order] = sums * (1.0 / by_size).astype(np.float32)[:, None]
        return vectors

    def restrict(self, limit: int) -> FastTextModel:
        """The first `limit` words with every bucket (the others become words outside the vocabulary)."""
        keep = min(limit, self.nwords)
        rows = np.concatenate([self.input[:keep], self.input[self.nwords :]])
        output = self.output
        if output is not None and self.args.model != SUPERVISED:
            output = output[:keep]
        spellings = self.spellings[:keep] + self.spellings[self.nwords :]
        return dataclasses.replace(
            self, words=self.words[:keep], counts=self.counts[:keep], input=rows, output=output, spellings=spellings
        )


_LOSS_NUMBERS = {name: number for number, name in _LOSSES.items()}
_MODEL_NUMBERS = {name: number for number, name in _MODELS.items()}


def _output_layer(model: Any, keep: np.ndarray, size: int, counts: np.ndarray) -> np.ndarray:
    """The output matrix fastText reads for `model`'s one loss: its negative-sampling rows (of the
    words kept), or with hs alone its tree's node rows (fastText builds the same tree over the
    same counts, so the words must all be kept, most frequent first)."""
    if model.output is not None and model.tree_output is not None:
        raise DataError(
            "this fasttext model trains hierarchical softmax and negative sampling together; a fastText .bin "
            "holds one loss: export its vectors with save_word2vec_format"
        )
    if model.output is not None:
        return np.asarray(model.output, dtype=np.float32)[keep]
    if keep.size != size or np.any(np.diff(counts) > 0):
        raise DataError(
            "an hs fasttext model converts to a fastText .bin only with every word kept, most frequent first "
            "(fastText rebuilds its tree from the counts in file order): export its vectors with save_word2vec_format"
        )
    return np.asarray(model.tree_output, dtype=np.float32)


def fasttext_from_zoo(model: Any) -> FastTextModel:
    """A zoo ``fasttext`` model as a `FastTextModel`: the same words, rows and n-gram buckets.

    zoo's fasttext hashes n-grams as fastText does (same n-grams, same FNV-1a, same
    buckets, rows laid out words then buckets), so the conversion is exact: every
    vocabulary word's vector, and every other word's, is the one zoo computes. This is
    checked on the vocabulary before returning. Reserved tokens (``<pad>``, ...) are left
    out; a word spelled ``</s>`` (fastText's end of line, which gets no n-grams there) has
    its composed vector stored as its own row so that it keeps its vector.
    """
    params = getattr(getattr(model, "spec", None), "params", {})
    vocab = (getattr(model, "vocabs", None) or {}).get("words")
    if vocab is None or not {"min_n", "max_n", "buckets"} <= set(params) or not hasattr(model, "input"):
        raise DataError(
            f"{type(model).__name__} has no character n-gram buckets: only a zoo fasttext model (with its words "
            "vocabulary) converts to a fastText .bin; write other vectors with save_word2vec_format"
        )
    size, buckets = len(vocab), int(params["buckets"])
    matrix = np.asarray(model.input, dtype=np.float32)
    if matrix.shape[0] != size + buckets:
        raise DataError(f"the model's input matrix has {matrix.shape[0]} rows, expected {size} words + {buckets}")
    reserved = {vocab.index[t] for t in vocab.specials.values()}
    keep = np.array([i for i in range(size) if i not in reserved], dtype=np.int64)
    words = [vocab.tokens[i] for i in keep]
    counts = np.ones(len(keep), np.int64) if vocab.counts is None else vocab.counts[keep]
    args = FastTextArgs(
        dim=matrix.shape[1],
        ws=int(params.get("window", 5)),
        epoch=int(params.get("epochs", 5)),
        min_count=max(1, int(counts.min())) if counts.size else 1,
        neg=int(params.get("negative", 5)),
        bucket=buckets,
        minn=int(params["min_n"]),
        maxn=int(params["max_n"]),
        t=float(params.get("sample", 1e-4)),
        loss=_LOSS_NUMBERS["hs" if params.get("hs", False) else "ns"],
        model=_MODEL_NUMBERS["cbow" if "cbow_mean" in params else "sg"],
    )
    composed = np.asarray(model.vectors(), dtype=np.float32)[keep]
    rows = np.concatenate([matrix[keep], matrix[size:]])
    if EOS.decode() in words:
        rows[words.index(EOS.decode())] = composed[words.index(EOS.decode())]
    output = _output_layer(model, keep, size, counts)
    converted = FastTextModel(args, words, counts, rows, output)
    if not np.allclose(converted.word_vectors(), composed, rtol=1e-4, atol=1e-6):
        raise DataError(
            f"{type(model).__name__} composes its word vectors differently from fastText (mean of the word's "
            "row and its n-gram rows): a .bin would change them; export its vectors with save_word2vec_format"
        )
    return converted
